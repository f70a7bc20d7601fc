//! Matmuls with few rows (`M ≤ SKINNY_M`: a batch-1 linear layer, a matrix-vector
//! product) with B read in place.
//!
//! The GEMM engine packs B into panels on every run, so that each packed value serves
//! a whole tile of rows; with up to twelve rows nothing repays that: B (the weights,
//! megabytes) is read, written packed and read again, three passes over memory for
//! `M` multiply-adds per value. Here B's rows are read once, in memory order: K is cut
//! into chunks of [`K_CHUNK`] rows (at most [`MAX_CHUNKS`] of them) and N into blocks
//! of [`n_block`] columns, each
//! (chunk, block) part sums its rows of B into partial sums of its own (`M` rows of
//! the block, in L1), and a second section adds each column's partials in chunk order
//! and runs the result through the epilogue. The parts depend on the shapes only, and
//! every value is a fixed chain of fused multiply-adds in K order, so results are the
//! same bits on any thread count and with either vector width (a fused multiply-add
//! rounds once however wide the register).

use std::sync::Mutex;

use super::exec::{Exec, SendPtr, split};
use super::gemm::{self, GemmProblem, MR, NR, TILE};

/// Rows of A at most that take this path. On two threads of the Zen 4 VM, 12 ×
/// 4096 · 4096 × 4096 took 4.4–6.4 ms here against 8.0–11.1 ms packed (1024² even),
/// 16 rows 7–15 against 8–11 (and 1024² at 16 rows slower here): the cost here grows
/// with the rows, the GEMM engine's hardly.
pub const SKINNY_M: usize = 12;

/// Rows of B (K) a part sums, at least.
const K_CHUNK: usize = 256;

/// Chunks of K at most: a longer K takes longer chunks, so that the partial sums
/// (chunks · M · N floats) stay within 64 times the output.
const MAX_CHUNKS: usize = 64;

/// Rows of B per chunk for a K of `k`.
fn k_chunk(k: usize) -> usize {
    K_CHUNK.max(k.div_ceil(MAX_CHUNKS))
}

/// Chunks of K for a K of `k` (one when `k` is 0).
fn chunks(k: usize) -> usize {
    k.div_ceil(k_chunk(k)).max(1)
}

/// Partial sums a part keeps (16 KiB: half of L1, the rest for the four rows of B it
/// reads at a time): `BLOCK_FLOATS / M` columns, a multiple of 16. With 1024 columns
/// at any `M` (32 KiB of sums at eight rows), 8 × 4096 · 4096 × 4096 took 4.6–5.3 ms
/// against 3.4–3.6 on two threads of the Zen 4 VM.
const BLOCK_FLOATS: usize = 4096;

/// Columns of B (N) a part covers for `m` rows.
fn n_block(m: usize) -> usize {
    (BLOCK_FLOATS / m.max(1)) / 16 * 16
}

/// `f32`s of workspace [`run`] needs for an `m × k × n` product.
pub fn workspace_len(m: usize, k: usize, n: usize) -> usize {
    chunks(k) * m * n
}

/// A row-major `f32` operand read in place: element `(i, j)` at `ptr[i * rs + j * cs]`,
/// `span` elements from `ptr` readable.
#[derive(Clone, Copy)]
pub struct Operand {
    pub ptr: SendPtr<f32>,
    pub rs: usize,
    pub cs: usize,
    pub span: usize,
}

/// `C = A · B` for `m ≤ SKINNY_M` rows, B's rows contiguous (`b.cs == 1`), each
/// finished tile handed to `out`'s [`GemmProblem::write_tile`] (which applies the
/// epilogue). `ws` holds [`workspace_len`] floats.
///
/// # Panics
/// When `m` is 0 or above [`SKINNY_M`], B's columns are not contiguous, an operand's
/// extent exceeds its span, or `ws` is too short.
pub fn run<P: GemmProblem>(out: &P, a: Operand, b: Operand, exec: &Exec, ws: &mut [f32]) {
    let (m, n, k) = out.dims();
    assert!(
        (1..=SKINNY_M).contains(&m) && b.cs == 1,
        "skinny matmul shape"
    );
    assert!(n > 0, "skinny matmul without columns");
    if k > 0 {
        assert!(
            (m - 1) * a.rs + (k - 1) * a.cs < a.span && (k - 1) * b.rs + n <= b.span,
            "skinny matmul operand out of bounds"
        );
    }
    let (chunk, chunks) = (k_chunk(k), chunks(k));
    let nb_cols = n_block(m);
    let blocks = n.div_ceil(nb_cols);
    // Columns of block `nb` (the last may be narrower).
    let width = |nb: usize| nb_cols.min(n - nb * nb_cols);
    let partials = &mut ws[..chunks * m * n];
    // Part (chunk q, block nb) owns `m × width` floats, the block's rows one after
    // another, in part order.
    let slabs: Vec<Mutex<&mut [f32]>> = {
        let mut rest: &mut [f32] = partials;
        let mut v = Vec::with_capacity(chunks * blocks);
        for _ in 0..chunks {
            for nb in 0..blocks {
                let (slab, tail) = rest.split_at_mut(m * width(nb));
                v.push(Mutex::new(slab));
                rest = tail;
            }
        }
        v
    };
    let kernel = select();
    exec.for_each(chunks * blocks, |p| {
        let (q, nb) = (p / blocks, p % blocks);
        let rows = (q * chunk).min(k)..((q + 1) * chunk).min(k);
        let mut slab = slabs[p].lock().unwrap_or_else(|e| e.into_inner());
        let part = Part {
            a,
            b,
            m,
            rows,
            j0: nb * nb_cols,
            width: width(nb),
        };
        kernel(&part, &mut slab);
    });
    let slabs: Vec<&[f32]> = slabs
        .into_iter()
        .map(|s| {
            let slab: &[f32] = s.into_inner().unwrap_or_else(|e| e.into_inner());
            slab
        })
        .collect();
    // Each column's partials summed in chunk order, then through the epilogue, a tile
    // (at most MR rows, NR columns) at a time; the threads take runs of panels.
    let panels = n.div_ceil(NR);
    let parts = exec.threads().min(panels);
    exec.for_each(parts, |t| {
        let mut tile = [0f32; TILE];
        for panel in split(panels, parts, t) {
            let j0 = panel * NR;
            let nr = NR.min(n - j0);
            let (nb, off) = (j0 / nb_cols, j0 % nb_cols);
            let cols = width(nb);
            for i0 in (0..m).step_by(MR) {
                let mr = MR.min(m - i0);
                for i in 0..mr {
                    let row = &mut tile[i * NR..i * NR + nr];
                    let at = (i0 + i) * cols + off;
                    row.copy_from_slice(&slabs[nb][at..at + nr]);
                    for q in 1..chunks {
                        let partial = &slabs[q * blocks + nb][at..at + nr];
                        row.iter_mut().zip(partial).for_each(|(r, p)| *r += p);
                    }
                }
                out.write_tile(i0, mr, j0, nr, &tile);
            }
        }
    });
}

/// One part's work: rows `rows` of B, columns `j0..j0 + width`, all `m` rows of A.
struct Part {
    a: Operand,
    b: Operand,
    m: usize,
    rows: std::ops::Range<usize>,
    j0: usize,
    width: usize,
}

type PartFn = fn(&Part, &mut [f32]);

/// The widest build of the part kernel this CPU runs (under `HIPDNN_CPU_ISA`).
fn select() -> PartFn {
    match gemm::pair_isa() {
        #[cfg(target_arch = "x86_64")]
        Some(gemm::PairIsa::Avx512) => |p, s| {
            // SAFETY: `pair_isa` found AVX-512F.
            unsafe { x86::part_avx512(p, s) }
        },
        #[cfg(target_arch = "x86_64")]
        Some(gemm::PairIsa::Avx2) => |p, s| {
            // SAFETY: `pair_isa` found AVX2 and FMA.
            unsafe { x86::part_avx2(p, s) }
        },
        _ => part,
    }
}

impl Part {
    /// A's `(i, k)`.
    #[inline(always)]
    fn a(&self, i: usize, k: usize) -> f32 {
        // SAFETY: `i < m` and `k < K`: inside A (checked by `run`).
        unsafe { *self.a.ptr.get().add(i * self.a.rs + k * self.a.cs) }
    }

    /// B's row `k` from column `j0`.
    #[inline(always)]
    fn b_row(&self, k: usize) -> *const f32 {
        self.b.ptr.get().wrapping_add(k * self.b.rs + self.j0)
    }

    /// A's four columns `k..k + 4` of each of its `M` rows.
    #[inline(always)]
    fn a4<const M: usize>(&self, k: usize) -> [[f32; 4]; M] {
        std::array::from_fn(|i| std::array::from_fn(|q| self.a(i, k + q)))
    }
}

/// Sums rows `p.rows` of B times A's matching columns into `slab` (`m` rows of
/// `p.width`), four rows of B at a time: each partial sum is the chain
/// `fma(a[i][k], b[k][j], ·)` over `k` in order, from zero. The portable build (and
/// the vector kernels' model: they compute the same chains).
fn part(p: &Part, slab: &mut [f32]) {
    let (m, w) = (p.m, p.width);
    slab[..m * w].fill(0.0);
    let row = |k: usize| {
        // SAFETY: row `k < K`, columns `j0..j0 + w <= n`: inside B (checked by `run`).
        unsafe { std::slice::from_raw_parts(p.b_row(k), w) }
    };
    let mut k = p.rows.start;
    while k + 4 <= p.rows.end {
        let (b0, b1, b2, b3) = (row(k), row(k + 1), row(k + 2), row(k + 3));
        for i in 0..m {
            let (a0, a1, a2, a3) = (p.a(i, k), p.a(i, k + 1), p.a(i, k + 2), p.a(i, k + 3));
            let c = &mut slab[i * w..(i + 1) * w];
            for ((((c, &x0), &x1), &x2), &x3) in c.iter_mut().zip(b0).zip(b1).zip(b2).zip(b3) {
                *c = x3.mul_add(a3, x2.mul_add(a2, x1.mul_add(a1, x0.mul_add(a0, *c))));
            }
        }
        k += 4;
    }
    while k < p.rows.end {
        let b0 = row(k);
        for i in 0..m {
            let a0 = p.a(i, k);
            let c = &mut slab[i * w..(i + 1) * w];
            for (c, &x0) in c.iter_mut().zip(b0) {
                *c = x0.mul_add(a0, *c);
            }
        }
        k += 1;
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use super::{Part, SKINNY_M};

    // `by_rows!` has an arm for every row count up to SKINNY_M.
    const _: () = assert!(SKINNY_M == 12);

    /// `$kernel::<M>(p, slab)` for the part's row count `M` (1 to [`SKINNY_M`]).
    macro_rules! by_rows {
        ($kernel:ident, $p:expr, $slab:expr) => {
            match $p.m {
                1 => $kernel::<1>($p, $slab),
                2 => $kernel::<2>($p, $slab),
                3 => $kernel::<3>($p, $slab),
                4 => $kernel::<4>($p, $slab),
                5 => $kernel::<5>($p, $slab),
                6 => $kernel::<6>($p, $slab),
                7 => $kernel::<7>($p, $slab),
                8 => $kernel::<8>($p, $slab),
                9 => $kernel::<9>($p, $slab),
                10 => $kernel::<10>($p, $slab),
                11 => $kernel::<11>($p, $slab),
                _ => $kernel::<12>($p, $slab),
            }
        };
    }

    /// [`super::part`] with AVX-512: sixteen columns of four rows of B loaded once for
    /// every row of A; the last columns masked.
    ///
    /// # Safety
    /// AVX-512F available; `p` as `run` checked it; `slab` holds `m · width` floats.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn part_avx512(p: &Part, slab: &mut [f32]) {
        by_rows!(avx512, p, slab)
    }

    #[target_feature(enable = "avx512f")]
    fn avx512<const M: usize>(p: &Part, slab: &mut [f32]) {
        const V: usize = 16;
        let w = p.width;
        assert!(M <= SKINNY_M && p.m == M && slab.len() >= M * w);
        slab[..M * w].fill(0.0);
        let c = slab.as_mut_ptr();
        let whole = w / V * V;
        let tail = super::gemm::lane_mask(w - whole);
        // SAFETY: (whole body) B's rows `k < K` hold columns `j0..j0 + w` (checked by
        // `run`); `c` addresses `M · w` floats; masked lanes are neither read nor
        // written.
        unsafe {
            let mut k = p.rows.start;
            while k + 4 <= p.rows.end {
                let b = [p.b_row(k), p.b_row(k + 1), p.b_row(k + 2), p.b_row(k + 3)];
                let a = p.a4::<M>(k);
                let step = |j: usize, mask: u16| {
                    let x = b.map(|r| _mm512_maskz_loadu_ps(mask, r.add(j)));
                    for (i, a) in a.iter().enumerate() {
                        let at = c.add(i * w + j);
                        let mut v = _mm512_maskz_loadu_ps(mask, at);
                        for q in 0..4 {
                            v = _mm512_fmadd_ps(x[q], _mm512_set1_ps(a[q]), v);
                        }
                        _mm512_mask_storeu_ps(at, mask, v);
                    }
                };
                for j in (0..whole).step_by(V) {
                    step(j, u16::MAX);
                }
                if tail != 0 {
                    step(whole, tail);
                }
                k += 4;
            }
            while k < p.rows.end {
                let r = p.b_row(k);
                for i in 0..M {
                    let a = _mm512_set1_ps(p.a(i, k));
                    let step = |j: usize, mask: u16| {
                        let at = c.add(i * w + j);
                        let x = _mm512_maskz_loadu_ps(mask, r.add(j));
                        let v = _mm512_fmadd_ps(x, a, _mm512_maskz_loadu_ps(mask, at));
                        _mm512_mask_storeu_ps(at, mask, v);
                    };
                    for j in (0..whole).step_by(V) {
                        step(j, u16::MAX);
                    }
                    if tail != 0 {
                        step(whole, tail);
                    }
                }
                k += 1;
            }
        }
    }

    /// [`super::part`] with AVX2 and FMA: eight columns at a time, the last ones as
    /// scalars (the same fused chains).
    ///
    /// # Safety
    /// AVX2 and FMA available; `p` as `run` checked it; `slab` holds `m · width`
    /// floats.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn part_avx2(p: &Part, slab: &mut [f32]) {
        by_rows!(avx2, p, slab)
    }

    #[target_feature(enable = "avx2,fma")]
    fn avx2<const M: usize>(p: &Part, slab: &mut [f32]) {
        const V: usize = 8;
        let w = p.width;
        assert!(M <= SKINNY_M && p.m == M && slab.len() >= M * w);
        slab[..M * w].fill(0.0);
        let c = slab.as_mut_ptr();
        let whole = w / V * V;
        // SAFETY: (whole body) as in `avx512`; the scalar tail stays below `w`.
        unsafe {
            let mut k = p.rows.start;
            while k + 4 <= p.rows.end {
                let b = [p.b_row(k), p.b_row(k + 1), p.b_row(k + 2), p.b_row(k + 3)];
                let a = p.a4::<M>(k);
                for j in (0..whole).step_by(V) {
                    let x = b.map(|r| _mm256_loadu_ps(r.add(j)));
                    for (i, a) in a.iter().enumerate() {
                        let at = c.add(i * w + j);
                        let mut v = _mm256_loadu_ps(at);
                        for q in 0..4 {
                            v = _mm256_fmadd_ps(x[q], _mm256_set1_ps(a[q]), v);
                        }
                        _mm256_storeu_ps(at, v);
                    }
                }
                for j in whole..w {
                    for (i, a) in a.iter().enumerate() {
                        let at = c.add(i * w + j);
                        let mut v = *at;
                        for q in 0..4 {
                            v = (*b[q].add(j)).mul_add(a[q], v);
                        }
                        *at = v;
                    }
                }
                k += 4;
            }
            while k < p.rows.end {
                let r = p.b_row(k);
                for i in 0..M {
                    let a = p.a(i, k);
                    let av = _mm256_set1_ps(a);
                    for j in (0..whole).step_by(V) {
                        let at = c.add(i * w + j);
                        let v = _mm256_fmadd_ps(_mm256_loadu_ps(r.add(j)), av, _mm256_loadu_ps(at));
                        _mm256_storeu_ps(at, v);
                    }
                    for j in whole..w {
                        let at = c.add(i * w + j);
                        *at = (*r.add(j)).mul_add(a, *at);
                    }
                }
                k += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::elementwise::Epilogue;
    use crate::kernels::matmul::MatmulPlan;
    use crate::tensor::{DType, RawIn, RawOut, Shape};

    /// A value in [-2, 2) for index `i` of the operand `salt`.
    fn value(i: usize, salt: usize) -> f32 {
        let h = (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ ((salt as u64) << 32);
        let h = h.wrapping_mul(0xBF58_476D_1CE4_E5B9) >> 40;
        (h as f32 / (1u64 << 24) as f32) * 4.0 - 2.0
    }

    /// `A · B` through [`MatmulPlan::run`] on `threads` threads, plain row-major
    /// operands; B's columns `cs` floats apart (1: the skinny path; else the GEMM
    /// engine, which packs B).
    fn matmul(m: usize, k: usize, n: usize, cs: usize, threads: usize) -> Vec<f32> {
        let a: Vec<f32> = (0..m * k).map(|i| value(i, 1)).collect();
        let b_shape = Shape::new(&[k, n], &[if cs == 1 { n } else { 1 }, cs]);
        let b: Vec<f32> = (0..b_shape.span()).map(|i| value(i, 2)).collect();
        let mut c = vec![f32::NAN; m * n];
        let plan = MatmulPlan::new(&[m, k], &[k, n], &[m, n], DType::F32, threads).unwrap();
        let mut ws = vec![0f32; plan.workspace_len()];
        // SAFETY: the vectors outlive the run and hold each shape's span.
        let (a_in, b_in, c_out) = unsafe {
            (
                RawIn::from_parts(a.as_ptr().cast(), DType::F32, Shape::packed(&[m, k])),
                RawIn::from_parts(b.as_ptr().cast(), DType::F32, b_shape),
                RawOut::from_parts(c.as_mut_ptr().cast(), DType::F32, Shape::packed(&[m, n])),
            )
        };
        plan.run(
            &a_in,
            &b_in,
            &Epilogue::store(c_out),
            &Exec::new(threads),
            &mut ws,
        );
        c
    }

    /// Skinny products agree with a sum in `f64`, over shapes that end K and N on and
    /// off the chunk, block and vector boundaries; and with the packed GEMM (B's
    /// columns strided) to the same tolerance.
    #[test]
    fn skinny_products_match_a_reference_sum() {
        for (m, k, n) in [
            (1, 1, 1),
            (1, 3, 17),
            (2, 4, 16),
            (3, 255, 33),
            (5, 256, 1100),
            (8, 257, 513),
            (1, 700, 4100),
            (4, 1030, 1000),
            (8, 64, 15),
            (9, 300, 47),
            (12, 513, 340),
            (2, 20_000, 40),
        ] {
            let c = matmul(m, k, n, 1, 2);
            let packed = matmul(m, k, n, k, 2);
            for i in 0..m {
                for j in 0..n {
                    let exact: f64 = (0..k)
                        .map(|q| f64::from(value(i * k + q, 1)) * f64::from(value(q * n + j, 2)))
                        .sum();
                    let tol = 1e-5 * (k as f64).sqrt() * 4.0 + 1e-6;
                    let got = f64::from(c[i * n + j]);
                    assert!(
                        (got - exact).abs() <= tol,
                        "{m}×{k}×{n} at ({i}, {j}): {got} against {exact}"
                    );
                    // The strided B's values at (q, j) sit at q + j·k.
                    let exact_t: f64 = (0..k)
                        .map(|q| f64::from(value(i * k + q, 1)) * f64::from(value(q + j * k, 2)))
                        .sum();
                    let got_t = f64::from(packed[i * n + j]);
                    assert!(
                        (got_t - exact_t).abs() <= tol,
                        "packed {m}×{k}×{n} at ({i}, {j}): {got_t} against {exact_t}"
                    );
                }
            }
        }
    }

    /// The epilogue runs on the summed values: a bias broadcast over the rows, then
    /// ReLU, stored; in place and through the GEMM engine alike.
    #[test]
    fn skinny_products_run_their_epilogue() {
        use crate::kernels::elementwise::{Operand as EpOperand, Step};
        use crate::kernels::pointwise::PwOp;
        let (m, k, n) = (3, 300, 70);
        let a: Vec<f32> = (0..m * k).map(|i| value(i, 5)).collect();
        let b: Vec<f32> = (0..k * n).map(|i| value(i, 6)).collect();
        let bias: Vec<f32> = (0..n).map(|j| value(j, 7) * 8.0).collect();
        // B's values again, columns contiguous: the GEMM engine's case.
        let b_t: Vec<f32> = (0..k * n).map(|i| b[(i % k) * n + i / k]).collect();
        let run = |in_place: bool| {
            let mut c = vec![f32::NAN; m * n];
            let plan = MatmulPlan::new(&[m, k], &[k, n], &[m, n], DType::F32, 2).unwrap();
            let mut ws = vec![0f32; plan.workspace_len()];
            let (b_data, b_shape) = if in_place {
                (&b, Shape::packed(&[k, n]))
            } else {
                (&b_t, Shape::new(&[k, n], &[1, k]))
            };
            // SAFETY: the vectors outlive the run and hold each shape's span.
            let (a_in, b_in, bias_in, c_out) = unsafe {
                (
                    RawIn::from_parts(a.as_ptr().cast(), DType::F32, Shape::packed(&[m, k])),
                    RawIn::from_parts(b_data.as_ptr().cast(), DType::F32, b_shape),
                    RawIn::from_parts(
                        bias.as_ptr().cast(),
                        DType::F32,
                        Shape::new(&[m, n], &[0, 1]),
                    ),
                    RawOut::from_parts(c.as_mut_ptr().cast(), DType::F32, Shape::packed(&[m, n])),
                )
            };
            let ep = Epilogue {
                store: None,
                steps: vec![
                    Step::binary(PwOp::Add, EpOperand::Tensor(bias_in)),
                    Step::binary(PwOp::Max, EpOperand::Scalar(0.0)).store_to(c_out),
                ],
            };
            plan.run(&a_in, &b_in, &ep, &Exec::new(2), &mut ws);
            c
        };
        let (skinny, packed) = (run(true), run(false));
        let mut clipped = 0;
        for i in 0..m {
            for j in 0..n {
                let exact: f64 = (0..k)
                    .map(|q| f64::from(a[i * k + q]) * f64::from(b[q * n + j]))
                    .sum::<f64>()
                    + f64::from(bias[j]);
                let want = exact.max(0.0);
                clipped += usize::from(exact < 0.0);
                for (name, c) in [("in place", &skinny), ("packed", &packed)] {
                    let got = f64::from(c[i * n + j]);
                    assert!(
                        (got - want).abs() <= 1e-3,
                        "{name} ({i}, {j}): {got} against {want}"
                    );
                }
            }
        }
        assert!(
            clipped > 0 && clipped < m * n,
            "the ReLU both clips and passes values"
        );
    }

    /// K in chunks of 256 rows, or in 64 longer ones: the partial sums stay within 64
    /// outputs' worth of workspace however long K is.
    #[test]
    fn partial_sums_stay_within_sixty_four_outputs() {
        assert_eq!(workspace_len(3, 0, 10), 30);
        assert_eq!(workspace_len(3, 256, 10), 30);
        assert_eq!(workspace_len(3, 257, 10), 60);
        assert_eq!(workspace_len(1, 64 * 256, 10), 640);
        assert_eq!(workspace_len(1, 1 << 20, 4096), 64 * 4096);
        assert_eq!(k_chunk(1 << 20), (1 << 20) / 64);
    }

    /// The parts depend on the shape only: the same bits on any thread count.
    #[test]
    fn skinny_products_are_the_same_bits_on_any_thread_count() {
        for (m, k, n) in [(1, 2049, 1000), (6, 700, 3000)] {
            let one = matmul(m, k, n, 1, 1);
            for threads in [2, 3, 7] {
                let c = matmul(m, k, n, 1, threads);
                assert!(
                    one.iter().zip(&c).all(|(x, y)| x.to_bits() == y.to_bits()),
                    "{m}×{k}×{n}: {threads} threads differ from one"
                );
            }
        }
    }

    /// Each vector kernel this CPU has computes the portable part's fused chains bit
    /// for bit, the masked or scalar last columns included.
    #[test]
    fn the_vector_kernels_compute_the_portable_chains() {
        let (k, n) = (37, 53);
        for m in 1..=SKINNY_M {
            let a: Vec<f32> = (0..m * k).map(|i| value(i, 3)).collect();
            let b: Vec<f32> = (0..k * n).map(|i| value(i, 4)).collect();
            let part = Part {
                a: Operand {
                    ptr: SendPtr(a.as_ptr()),
                    rs: k,
                    cs: 1,
                    span: a.len(),
                },
                b: Operand {
                    ptr: SendPtr(b.as_ptr()),
                    rs: n,
                    cs: 1,
                    span: b.len(),
                },
                m,
                rows: 2..k,
                j0: 3,
                width: n - 3,
            };
            let mut want = vec![0f32; m * part.width];
            super::part(&part, &mut want);
            let mut kernels: Vec<(&str, PartFn)> = Vec::new();
            #[cfg(target_arch = "x86_64")]
            {
                if std::arch::is_x86_feature_detected!("avx512f") {
                    // SAFETY: AVX-512F detected.
                    kernels.push(("avx512", |p, s| unsafe { x86::part_avx512(p, s) }));
                }
                if std::arch::is_x86_feature_detected!("avx2")
                    && std::arch::is_x86_feature_detected!("fma")
                {
                    // SAFETY: AVX2 and FMA detected.
                    kernels.push(("avx2", |p, s| unsafe { x86::part_avx2(p, s) }));
                }
            }
            for (name, kernel) in kernels {
                let mut got = vec![f32::NAN; m * part.width];
                kernel(&part, &mut got);
                assert!(
                    want.iter()
                        .zip(&got)
                        .all(|(x, y)| x.to_bits() == y.to_bits()),
                    "{name}, {m} rows: differs from the portable chains"
                );
            }
        }
    }
}
