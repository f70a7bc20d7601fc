//! Batched matmul `C[..., M, N] = A[..., M, K] · B[..., K, N]` with broadcast batch
//! dimensions, on the [`gemm`] engine with the epilogue fused into the
//! tile stores.

use super::elementwise::{Epilogue, Prepared};
use super::exec::{Exec, SendPtr};
use super::gemm::{self, Blocking, GemmProblem, MR, NR, TILE};
use super::skinny;
use crate::tensor::{DType, Elem, RawIn, Shape};
use half::{bf16, f16};

/// A planned matmul: shapes checked, workspace known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatmulPlan {
    /// Output dims `[..., M, N]`.
    pub c_dims: Vec<usize>,
    m: usize,
    n: usize,
    k: usize,
    batch: usize,
    a_f32: bool,
    blocking: Blocking,
    threads: usize,
}

/// The longest K that a matmul takes in one K block where the AVX-512 kernels run.
const ONE_K_BLOCK: usize = 1024;

/// The matmul's cache blocking: with the AVX-512 kernels, all of a K up to
/// [`ONE_K_BLOCK`] in one block, so that every step runs in the last block's quad sweep
/// (6×64 tiles over A in place, the result stored through the epilogue) rather than
/// in pair kernels that keep partial sums between blocks of 256. On two threads of a
/// Xeon VM: 1024³ 7.1 → 6.8 ms, 4096 × 256 × 1024 2.6% faster (sums of minimums);
/// blocks of 512 gained about half as much; a longer K keeps blocks of 256
/// (64 × 2048 × 2048 in two blocks of 1024 was 5–10% slower). AVX2 keeps 256.
fn blocking_for(k: usize) -> Blocking {
    let quad = gemm::pair_isa() == Some(gemm::PairIsa::Avx512);
    if quad && (1..=ONE_K_BLOCK).contains(&k) {
        Blocking {
            kc: k,
            ..Blocking::default()
        }
    } else {
        Blocking::default()
    }
}

impl MatmulPlan {
    /// Checks `a`, `b`, `c` dims (same rank ≥ 2, batch dims of `a`/`b` equal to `c`'s or 1).
    ///
    /// # Errors
    /// A message naming the mismatch.
    pub fn new(
        a: &[usize],
        b: &[usize],
        c: &[usize],
        a_dtype: DType,
        threads: usize,
    ) -> Result<Self, String> {
        let r = c.len();
        if r < 2 || a.len() < 2 || b.len() < 2 || a.len() > r || b.len() > r {
            return Err(format!(
                "matmul needs a and b of rank 2..=rank(c), c of rank >= 2, got {a:?}, {b:?}, {c:?}"
            ));
        }
        let pad = |t: &[usize]| -> Vec<usize> {
            let mut v = vec![1; r - t.len()];
            v.extend_from_slice(t);
            v
        };
        let (a, b) = (&pad(a)[..], &pad(b)[..]);
        let (m, k, n) = (a[r - 2], a[r - 1], b[r - 1]);
        if b[r - 2] != k || c[r - 2] != m || c[r - 1] != n {
            return Err(format!(
                "matmul shapes do not chain: {a:?} x {b:?} -> {c:?}"
            ));
        }
        for d in 0..r - 2 {
            for (name, t) in [("a", a), ("b", b)] {
                if t[d] != c[d] && t[d] != 1 {
                    return Err(format!(
                        "matmul batch dim {d} of {name} is {} but c has {}",
                        t[d], c[d]
                    ));
                }
            }
        }
        Ok(Self {
            c_dims: c.to_vec(),
            m,
            n,
            k,
            batch: c[..r - 2].iter().product(),
            a_f32: a_dtype == DType::F32,
            blocking: blocking_for(k),
            threads: threads.max(1),
        })
    }

    /// Flops (2·M·N·K per batch).
    pub fn flops(&self) -> f64 {
        2.0 * (self.batch * self.m * self.n * self.k) as f64
    }

    /// Workspace in `f32` elements.
    pub fn workspace_len(&self) -> usize {
        let kb = gemm::even_k_blocks(self.k, self.blocking.kc);
        let convert = if self.a_f32 { 0 } else { self.m * self.k };
        let gemm = gemm::scratch_len(self.m, self.n, &kb, self.blocking, self.threads, false);
        let skinny = if self.skinny() {
            skinny::workspace_len(self.m, self.k, self.n)
        } else {
            0
        };
        convert + gemm.max(skinny)
    }

    /// Whether products of this shape read B in place ([`skinny`]) when B is `f32` with
    /// contiguous rows: at most [`skinny::SKINNY_M`] rows, where packing B (a pass to
    /// read it, one to write it packed, one to read that) costs more than the rows'
    /// multiply-adds. On two threads of a Zen 4 VM (medians of 7 rounds): 1 × 4096 ·
    /// 4096 × 4096 in 1.85 against 6.0 ms packed (numpy 1.84), 1 × 2048 · 2048 × 1000
    /// in 0.054 against 0.169 ms (numpy 0.062), 8 × 4096 · 4096 × 4096 in 4.1 against
    /// 7.6 ms (numpy 5.7); 12 rows in 4.4–6.4 against 8.0–11.1 ms.
    fn skinny(&self) -> bool {
        (1..=skinny::SKINNY_M).contains(&self.m) && self.n > 0
    }

    /// Runs the matmul into `ep` (index space: c's dims).
    ///
    /// # Panics
    /// When `ws` is shorter than [`MatmulPlan::workspace_len`].
    pub fn run(&self, a: &RawIn, b: &RawIn, ep: &Epilogue, exec: &Exec, ws: &mut [f32]) {
        assert!(
            ws.len() >= self.workspace_len(),
            "matmul workspace too small"
        );
        let r = self.c_dims.len();
        let a_s = a
            .shape()
            .broadcast_strides(&batch_dims(&self.c_dims, a.shape()))
            .expect("checked in new");
        let b_s = b
            .shape()
            .broadcast_strides(&batch_dims(&self.c_dims, b.shape()))
            .expect("checked in new");
        let prepared = Prepared::new(ep);
        let (conv, rest) = ws.split_at_mut(if self.a_f32 { 0 } else { self.m * self.k });
        let mut idx = vec![0usize; r];
        for bi in 0..self.batch {
            // Batch index -> per-tensor offsets.
            let mut rem = bi;
            for d in (0..r - 2).rev() {
                idx[d] = rem % self.c_dims[d];
                rem /= self.c_dims[d];
            }
            let a_off: usize = (0..r - 2).map(|d| idx[d] * a_s[d]).sum();
            let b_off: usize = (0..r - 2).map(|d| idx[d] * b_s[d]).sum();
            let (a_ptr, a_rs, a_ks) = if self.a_f32 {
                (
                    a.ptr_as::<f32>().wrapping_add(a_off),
                    a_s[r - 2],
                    a_s[r - 1],
                )
            } else {
                for i in 0..self.m {
                    for q in 0..self.k {
                        // SAFETY: inside a's shape.
                        conv[i * self.k + q] =
                            unsafe { a.load(a_off + i * a_s[r - 2] + q * a_s[r - 1]) };
                    }
                }
                (conv.as_ptr(), self.k, 1)
            };
            let in_place = self.skinny() && b.dtype() == DType::F32 && b_s[r - 1] == 1;
            let prob = Problem {
                plan: self,
                a: SendPtr(a_ptr),
                a_rs,
                a_ks,
                b,
                b_off,
                b_ks: b_s[r - 2],
                b_ns: b_s[r - 1],
                batch_idx: &idx[..r - 2],
                ep: &prepared,
                // The skinny path stores through `write_tile`.
                fused: if in_place {
                    None
                } else {
                    prepared.fused_matrix(&idx[..r - 2], self.m, self.n)
                },
            };
            if in_place {
                let a_span = if self.a_f32 {
                    a.shape().span() - a_off
                } else {
                    self.m * self.k
                };
                let a = skinny::Operand {
                    ptr: SendPtr(a_ptr),
                    rs: a_rs,
                    cs: a_ks,
                    span: a_span,
                };
                let b = skinny::Operand {
                    ptr: SendPtr(b.ptr_as::<f32>().wrapping_add(b_off)),
                    rs: b_s[r - 2],
                    cs: 1,
                    span: b.shape().span() - b_off,
                };
                skinny::run(&prob, a, b, exec, rest);
            } else {
                gemm::run(&prob, exec, self.blocking, rest);
            }
        }
    }
}

/// `t`'s dims with the batch part taken from `c` where `t` has 1 (so broadcast strides
/// come out 0) and its own matrix dims.
fn batch_dims(c: &[usize], t: &Shape) -> Vec<usize> {
    let (r, tr) = (c.len(), t.rank());
    let mut d = c.to_vec();
    d[r - 2] = t.dims[tr - 2];
    d[r - 1] = t.dims[tr - 1];
    d
}

struct Problem<'a> {
    plan: &'a MatmulPlan,
    a: SendPtr<f32>,
    a_rs: usize,
    a_ks: usize,
    b: &'a RawIn,
    b_off: usize,
    b_ks: usize,
    b_ns: usize,
    batch_idx: &'a [usize],
    ep: &'a Prepared<'a>,
    /// The epilogue as the pair kernels' chain, where it is one (the tiles are then
    /// stored by the kernels, not [`GemmProblem::write_tile`]).
    fused: Option<gemm::FusedOut>,
}

impl GemmProblem for Problem<'_> {
    fn dims(&self) -> (usize, usize, usize) {
        (self.plan.m, self.plan.n, self.plan.k)
    }

    fn a_rows(
        &self,
        i0: usize,
        mr: usize,
        k0: usize,
        kc: usize,
        ptrs: &mut Vec<*const f32>,
    ) -> (usize, usize, usize) {
        for i in 0..MR {
            let row = i0 + i.min(mr - 1);
            ptrs.push(self.a.0.wrapping_add(row * self.a_rs + k0 * self.a_ks));
        }
        (1, kc, self.a_ks)
    }

    fn pack_b(&self, k0: usize, kc: usize, j0: usize, nc: usize, dst: &mut [f32]) {
        match self.b.dtype() {
            DType::F32 => self.pack::<f32>(k0, kc, j0, nc, dst),
            DType::F16 => self.pack::<f16>(k0, kc, j0, nc, dst),
            DType::BF16 => self.pack::<bf16>(k0, kc, j0, nc, dst),
        }
    }

    fn a_in_place(&self) -> bool {
        // A (the input, or its fp32 copy in the workspace) outlives the GEMM.
        true
    }

    fn fused_out(&self) -> Option<&gemm::FusedOut> {
        self.fused.as_ref()
    }

    fn write_tile(&self, i0: usize, mr: usize, j0: usize, nr: usize, tile: &[f32; TILE]) {
        let r = self.plan.c_dims.len();
        let mut idx = [0usize; 8];
        let idx = &mut idx[..r];
        idx[..r - 2].copy_from_slice(self.batch_idx);
        idx[r - 1] = j0;
        if let Some(out) = self.ep.plain_f32_out() {
            let s = out.shape();
            idx[r - 2] = i0;
            let base = s.offset(idx);
            let (rs, cs) = (s.strides[r - 2], s.strides[r - 1]);
            assert!(
                base + (mr - 1) * rs + (nr - 1) * cs < s.span(),
                "tile out of bounds"
            );
            let y = out.ptr_as::<f32>();
            for i in 0..mr {
                let src = &tile[i * NR..i * NR + nr];
                // SAFETY: in bounds (checked above); tiles are disjoint across threads.
                unsafe { gemm::store_strided(y.add(base + i * rs), cs, src) };
            }
            return;
        }
        let mut vals = [0f32; NR];
        for i in 0..mr {
            idx[r - 2] = i0 + i;
            let v = &mut vals[..nr];
            v.copy_from_slice(&tile[i * NR..i * NR + nr]);
            self.ep.apply_along(idx, r - 1, v);
        }
    }
}

impl Problem<'_> {
    fn pack<T: Elem>(&self, k0: usize, kc: usize, j0: usize, nc: usize, dst: &mut [f32]) {
        let b = self.b.ptr_as::<T>();
        let span = self.b.shape().span();
        let panels = nc.div_ceil(NR);
        let ps = gemm::panel_stride(kc);
        let last = self.b_off + (k0 + kc - 1) * self.b_ks + (j0 + nc - 1) * self.b_ns;
        assert!(last < span, "matmul B read out of bounds");
        if self.b_ns == 1 && T::DTYPE == DType::F32 {
            // Row by row (B's rows are read in order), each row's panels in turn.
            let full = nc / NR;
            for k in 0..kc {
                let base = self.b_off + (k0 + k) * self.b_ks + j0;
                // SAFETY: `base + nc - 1 <= last`, inside b's span (checked above).
                let src = unsafe { std::slice::from_raw_parts(b.add(base).cast::<f32>(), nc) };
                for p in 0..full {
                    let at = p * ps + k * NR;
                    let d: &mut [f32; NR] = (&mut dst[at..at + NR]).try_into().expect("NR");
                    d.copy_from_slice(&src[p * NR..(p + 1) * NR]);
                }
                if full < panels {
                    let w = nc - full * NR;
                    let at = full * ps + k * NR;
                    dst[at..at + w].copy_from_slice(&src[full * NR..]);
                    dst[at + w..at + NR].fill(0.0);
                }
            }
            return;
        }
        for p in 0..panels {
            let c0 = j0 + p * NR;
            let w = NR.min(j0 + nc - c0);
            let panel = &mut dst[p * ps..p * ps + kc * NR];
            for k in 0..kc {
                let row = &mut panel[k * NR..(k + 1) * NR];
                let base = self.b_off + (k0 + k) * self.b_ks + c0 * self.b_ns;
                for (q, o) in row[..w].iter_mut().enumerate() {
                    // SAFETY: every offset is at most `last`, inside b's span (checked
                    // above).
                    *o = unsafe { *b.add(base + q * self.b_ns) }.to_f32();
                }
                row[w..].fill(0.0);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One K block up to 1024 with the AVX-512 kernels, blocks of 256 beyond that and
    /// without them.
    #[test]
    fn k_in_one_block_where_the_quad_sweep_runs() {
        let avx512 = gemm::pair_isa() == Some(gemm::PairIsa::Avx512);
        for (k, one) in [(1, true), (1024, true), (1025, false), (4096, false)] {
            let plan = MatmulPlan::new(&[64, k], &[k, 256], &[64, 256], DType::F32, 2).unwrap();
            let kc = if one && avx512 { k } else { 256 };
            assert_eq!(plan.blocking.kc, kc, "K = {k}");
            let blocks = gemm::even_k_blocks(k, plan.blocking.kc);
            assert_eq!(blocks.len(), k.div_ceil(kc), "K = {k}");
        }
    }
}
