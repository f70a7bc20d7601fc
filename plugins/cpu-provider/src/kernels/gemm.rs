//! The blocked GEMM engine behind convolutions and matmuls.
//!
//! `C[M×N] = A[M×K] · B[K×N]` with a 6×16 register-tile micro-kernel (AVX2 + FMA,
//! with a portable fallback). What makes it a convolution engine rather than a plain
//! GEMM is that both operands and the output are supplied by a [`GemmProblem`]:
//!
//! * **A is never packed.** The micro-kernel broadcasts A's elements straight from
//!   memory through one pointer per row and *segment*: a row of weights (one segment
//!   covering the K block), or, for channels-last convolutions, the input pixels under
//!   each filter tap (one segment per tap: an indirection buffer, so there is no im2col).
//! * **B is packed** per K block into 16-wide panels by the problem: im2col of a few
//!   output pixels (implicit GEMM; never the whole im2col matrix), or the weights.
//! * **C is written through the problem** one finished 6×16 tile at a time, so bias,
//!   activations and type conversion are fused into the tile store (the epilogue).
//!
//! Loops (per thread): column chunks of `nc`, K blocks of about `kc` (so a B panel stays
//! in L1 while a row tile of A streams through it), row tiles of 6, panels of 16. Work is
//! split statically: by column panels when there are enough, else by row tiles.

use std::sync::OnceLock;

use super::exec::{Exec, split};

/// Rows of the register tile.
pub const MR: usize = 6;
/// Columns of the register tile.
pub const NR: usize = 16;
/// Elements of one register tile.
pub const TILE: usize = MR * NR;
/// Row tiles per L2 block of A.
const MC_TILES: usize = 16;

/// Where a row tile's A elements are, for one K block: `nseg` segments of `seg_len`
/// steps; row `i` of segment `s` reads `ptrs[s * MR + i].add(k * ks)`.
#[derive(Debug)]
pub struct ARows<'a> {
    /// `nseg * MR` pointers (rows past the tile's height are not read).
    pub ptrs: &'a [*const f32],
    /// Number of segments.
    pub nseg: usize,
    /// K steps per segment.
    pub seg_len: usize,
    /// Element stride between K steps.
    pub ks: usize,
}

/// A GEMM whose operands and output are supplied piecewise.
///
/// Implementations must be safe to call from several threads at once for disjoint
/// tiles: `write_tile` is called exactly once per tile.
pub trait GemmProblem: Sync {
    /// `(M, N, K)`.
    fn dims(&self) -> (usize, usize, usize);

    /// K split into blocks `(start, len)` of about `kc` (override when A's segments
    /// must not be cut).
    fn k_blocks(&self, kc: usize) -> Vec<(usize, usize)> {
        let k = self.dims().2;
        let n = k.div_ceil(kc).max(1);
        (0..n)
            .map(|b| {
                let r = split(k, n, b);
                (r.start, r.len())
            })
            .collect()
    }

    /// Fills `ptrs` (cleared by the caller) for rows `i0..i0 + mr` over the K block
    /// `k0..k0 + kc` and returns `(nseg, seg_len, ks)` with `nseg * seg_len == kc`.
    ///
    /// Every pointer must address `seg_len` readable `f32`s at stride `ks`.
    fn a_rows(
        &self,
        i0: usize,
        mr: usize,
        k0: usize,
        kc: usize,
        ptrs: &mut Vec<*const f32>,
    ) -> (usize, usize, usize);

    /// Packs `B[k0..k0 + kc, j0..j0 + nc]` into `nc.div_ceil(NR)` panels: element
    /// `(k, j)` of panel `p` goes to `dst[p * kc * NR + k * NR + j % NR]`; columns
    /// past `nc` in the last panel must be zero.
    fn pack_b(&self, k0: usize, kc: usize, j0: usize, nc: usize, dst: &mut [f32]);

    /// Takes the finished tile `tile[i * NR + j]` for `C[i0 + i, j0 + j]`, `i < mr`,
    /// `j < nr`.
    fn write_tile(&self, i0: usize, mr: usize, j0: usize, nr: usize, tile: &[f32; TILE]);

    /// Whether threads should split the rows (each packs all of B) rather than the
    /// columns; right when packing B is cheap and M is large.
    fn prefer_row_split(&self) -> bool {
        false
    }
}

/// Cache blocking of the engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Blocking {
    /// Target K block.
    pub kc: usize,
    /// Columns per chunk (a multiple of [`NR`]).
    pub nc: usize,
}

impl Default for Blocking {
    fn default() -> Self {
        Self { kc: 256, nc: 96 }
    }
}

/// How the engine splits `(M, N)` over `threads`.
#[derive(Debug, Clone, Copy)]
enum Split {
    Columns,
    Rows,
}

fn choose_split(m: usize, n: usize, threads: usize, prefer_rows: bool) -> Split {
    let panels = n.div_ceil(NR);
    let tiles = m.div_ceil(MR);
    if prefer_rows && tiles >= 4 * threads {
        return Split::Rows;
    }
    if threads <= 1 || panels >= 2 * threads || tiles < threads {
        Split::Columns
    } else {
        Split::Rows
    }
}

/// Scratch `f32`s [`run`] needs for a problem of this size.
pub fn scratch_len(
    m: usize,
    n: usize,
    k: usize,
    kblocks: usize,
    b: Blocking,
    threads: usize,
) -> usize {
    let nc = b.nc.min(n.div_ceil(NR) * NR);
    let kc_max = k.div_ceil(kblocks.max(1)) + MR * NR; // generous: blocks may be uneven
    let pack = kc_max.min(k) * nc;
    let acc = if kblocks > 1 {
        m.div_ceil(MR) * nc.div_ceil(NR) * TILE
    } else {
        0
    };
    threads * (pack + acc + 16)
}

/// Runs the GEMM with `scratch` of at least [`scratch_len`] elements.
///
/// # Panics
/// When `scratch` is too short.
pub fn run<P: GemmProblem>(p: &P, exec: &Exec, blocking: Blocking, scratch: &mut [f32]) {
    let (m, n, k) = p.dims();
    if m == 0 || n == 0 {
        return;
    }
    let threads = exec.threads();
    let kblocks = if k == 0 {
        vec![(0, 0)]
    } else {
        p.k_blocks(blocking.kc)
    };
    let need = scratch_len(m, n, k, kblocks.len(), blocking, threads);
    assert!(
        scratch.len() >= need,
        "gemm scratch {} < {need}",
        scratch.len()
    );
    let per_thread = need / threads;
    let nc = blocking.nc.min(n.div_ceil(NR) * NR);
    let split_kind = choose_split(m, n, threads, p.prefer_row_split());
    let chunks: Vec<&mut [f32]> = scratch[..need].chunks_mut(per_thread).collect();
    let chunks: Vec<std::sync::Mutex<&mut [f32]>> =
        chunks.into_iter().map(std::sync::Mutex::new).collect();
    let kernel = select_kernel();
    let tiles = m.div_ceil(MR);
    let panels = n.div_ceil(NR);
    exec.for_each(threads, |t| {
        let mut guard = chunks[t].lock().unwrap_or_else(|e| e.into_inner());
        let scratch: &mut [f32] = &mut guard;
        let (tile_range, panel_range) = match split_kind {
            Split::Columns => (0..tiles, split(panels, threads, t)),
            Split::Rows => (split(tiles, threads, t), 0..panels),
        };
        if tile_range.is_empty() || panel_range.is_empty() {
            return;
        }
        let kc_max = kblocks.iter().map(|b| b.1).max().unwrap_or(0);
        let (bpack, rest) = scratch.split_at_mut(kc_max * nc);
        let acc_all = &mut rest[..if kblocks.len() > 1 {
            tiles * nc.div_ceil(NR) * TILE
        } else {
            0
        }];
        let mut ptrs: Vec<*const f32> = Vec::with_capacity(MR * 64);
        let mut jp = panel_range.start;
        while jp < panel_range.end {
            let np = (nc / NR).min(panel_range.end - jp);
            let j0 = jp * NR;
            let ncols = (np * NR).min(n - j0);
            for (bi, &(k0, kc)) in kblocks.iter().enumerate() {
                let last = bi + 1 == kblocks.len();
                if kc > 0 {
                    p.pack_b(k0, kc, j0, ncols, &mut bpack[..np * kc * NR]);
                }
                // Row tiles in groups of `MC_TILES`: the group's A rows stay in L2 while
                // each B panel (in L1) meets every tile of the group.
                let tiles_v: Vec<usize> = tile_range.clone().collect();
                for group in tiles_v.chunks(MC_TILES) {
                    ptrs.clear();
                    let mut segs = [(0usize, 0usize, 1usize); MC_TILES];
                    for (g, &it) in group.iter().enumerate() {
                        let i0 = it * MR;
                        let mr = MR.min(m - i0);
                        segs[g] = if kc > 0 {
                            let before = ptrs.len();
                            let r = p.a_rows(i0, mr, k0, kc, &mut ptrs);
                            debug_assert_eq!(r.0 * r.1, kc);
                            debug_assert!(ptrs.len() - before >= r.0 * MR);
                            (before, r.0, r.2)
                        } else {
                            (ptrs.len(), 0, 1)
                        };
                    }
                    for q in 0..np {
                        let nr = NR.min(n - (j0 + q * NR));
                        let b = &bpack[q * kc * NR..(q + 1) * kc * NR];
                        for (g, &it) in group.iter().enumerate() {
                            let i0 = it * MR;
                            let mr = MR.min(m - i0);
                            let (at, nseg, ks) = segs[g];
                            let a = ARows {
                                ptrs: &ptrs[at..],
                                nseg,
                                seg_len: kc.checked_div(nseg).unwrap_or(0),
                                ks,
                            };
                            let mut local = [0f32; TILE];
                            let tile: &mut [f32; TILE] = if kblocks.len() > 1 {
                                let at = ((it - tile_range.start) * np + q) * TILE;
                                let t: &mut [f32; TILE] = (&mut acc_all[at..at + TILE])
                                    .try_into()
                                    .expect("tile-sized");
                                if bi == 0 {
                                    t.fill(0.0);
                                }
                                t
                            } else {
                                &mut local
                            };
                            if kc > 0 {
                                kernel(mr, &a, b, tile);
                            }
                            if last {
                                p.write_tile(i0, mr, j0 + q * NR, nr, tile);
                            }
                        }
                    }
                }
            }
            jp += np;
        }
    });
}

type KernelFn = fn(usize, &ARows<'_>, &[f32], &mut [f32; TILE]);

fn select_kernel() -> KernelFn {
    static KERNEL: OnceLock<KernelFn> = OnceLock::new();
    *KERNEL.get_or_init(|| {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            return avx2::kernel;
        }
        portable_kernel
    })
}

/// Checks the pointer contract of [`ARows`] as far as it can be checked cheaply.
#[inline]
fn check_rows(mr: usize, a: &ARows<'_>, b: &[f32]) {
    assert!((1..=MR).contains(&mr));
    assert!(a.nseg == 0 || a.ptrs.len() >= (a.nseg - 1) * MR + mr);
    assert!(b.len() >= a.nseg * a.seg_len * NR);
}

/// The micro-kernel in plain Rust (vectorized by the compiler as far as it goes).
fn portable_kernel(mr: usize, a: &ARows<'_>, b: &[f32], tile: &mut [f32; TILE]) {
    check_rows(mr, a, b);
    let mut kk = 0;
    for s in 0..a.nseg {
        for k in 0..a.seg_len {
            let brow = &b[(kk + k) * NR..(kk + k + 1) * NR];
            for i in 0..mr {
                // SAFETY: `a_rows` guarantees each pointer addresses `seg_len` elements at
                // stride `ks` (GemmProblem contract).
                let av = unsafe { *a.ptrs[s * MR + i].add(k * a.ks) };
                let row = &mut tile[i * NR..(i + 1) * NR];
                for j in 0..NR {
                    row[j] += av * brow[j];
                }
            }
        }
        kk += a.seg_len;
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    use super::{ARows, MR, NR, TILE, check_rows};

    /// Dispatches on the tile height.
    pub(super) fn kernel(mr: usize, a: &ARows<'_>, b: &[f32], tile: &mut [f32; TILE]) {
        check_rows(mr, a, b);
        // SAFETY: the CPU supports AVX2 and FMA (checked before this function is
        // selected); pointers follow the `ARows` contract and `b` holds
        // `nseg * seg_len` rows of `NR` (checked above).
        unsafe {
            match mr {
                6 => tile_kernel::<6>(a, b.as_ptr(), tile),
                5 => tile_kernel::<5>(a, b.as_ptr(), tile),
                4 => tile_kernel::<4>(a, b.as_ptr(), tile),
                3 => tile_kernel::<3>(a, b.as_ptr(), tile),
                2 => tile_kernel::<2>(a, b.as_ptr(), tile),
                _ => tile_kernel::<1>(a, b.as_ptr(), tile),
            }
        }
    }

    /// # Safety
    /// AVX2 and FMA available; `a` and `b` per [`kernel`].
    #[target_feature(enable = "avx2,fma")]
    unsafe fn tile_kernel<const M: usize>(a: &ARows<'_>, b: *const f32, tile: &mut [f32; TILE]) {
        let t = tile.as_mut_ptr();
        let mut c0 = [_mm256_setzero_ps(); M];
        let mut c1 = [_mm256_setzero_ps(); M];
        // SAFETY: (whole body) `t` addresses TILE floats, rows below M <= MR; `b` holds
        // `nseg * seg_len * NR` floats; every A pointer addresses `seg_len` floats at
        // stride `ks` (caller contract).
        unsafe {
            for i in 0..M {
                c0[i] = _mm256_loadu_ps(t.add(i * NR));
                c1[i] = _mm256_loadu_ps(t.add(i * NR + 8));
            }
            let mut bp = b;
            for s in 0..a.nseg {
                let mut rows = [std::ptr::null::<f32>(); M];
                for (i, r) in rows.iter_mut().enumerate() {
                    *r = a.ptrs[s * MR + i];
                }
                if a.ks == 1 {
                    let mut k = 0;
                    while k + 2 <= a.seg_len {
                        let b0 = _mm256_loadu_ps(bp);
                        let b1 = _mm256_loadu_ps(bp.add(8));
                        let b2 = _mm256_loadu_ps(bp.add(NR));
                        let b3 = _mm256_loadu_ps(bp.add(NR + 8));
                        for i in 0..M {
                            let av = _mm256_broadcast_ss(&*rows[i].add(k));
                            c0[i] = _mm256_fmadd_ps(av, b0, c0[i]);
                            c1[i] = _mm256_fmadd_ps(av, b1, c1[i]);
                        }
                        for i in 0..M {
                            let av = _mm256_broadcast_ss(&*rows[i].add(k + 1));
                            c0[i] = _mm256_fmadd_ps(av, b2, c0[i]);
                            c1[i] = _mm256_fmadd_ps(av, b3, c1[i]);
                        }
                        bp = bp.add(2 * NR);
                        k += 2;
                    }
                    if k < a.seg_len {
                        let b0 = _mm256_loadu_ps(bp);
                        let b1 = _mm256_loadu_ps(bp.add(8));
                        for i in 0..M {
                            let av = _mm256_broadcast_ss(&*rows[i].add(k));
                            c0[i] = _mm256_fmadd_ps(av, b0, c0[i]);
                            c1[i] = _mm256_fmadd_ps(av, b1, c1[i]);
                        }
                        bp = bp.add(NR);
                    }
                } else {
                    let ks = a.ks;
                    for k in 0..a.seg_len {
                        let b0 = _mm256_loadu_ps(bp);
                        let b1 = _mm256_loadu_ps(bp.add(8));
                        for i in 0..M {
                            let av = _mm256_broadcast_ss(&*rows[i].add(k * ks));
                            c0[i] = _mm256_fmadd_ps(av, b0, c0[i]);
                            c1[i] = _mm256_fmadd_ps(av, b1, c1[i]);
                        }
                        bp = bp.add(NR);
                    }
                }
            }
            for i in 0..M {
                _mm256_storeu_ps(t.add(i * NR), c0[i]);
                _mm256_storeu_ps(t.add(i * NR + 8), c1[i]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A plain dense row-major GEMM through the engine.
    struct Dense<'a> {
        m: usize,
        n: usize,
        k: usize,
        a: &'a [f32],
        b: &'a [f32],
        c: std::sync::Mutex<&'a mut [f32]>,
    }

    impl GemmProblem for Dense<'_> {
        fn dims(&self) -> (usize, usize, usize) {
            (self.m, self.n, self.k)
        }
        fn a_rows(
            &self,
            i0: usize,
            mr: usize,
            k0: usize,
            _kc: usize,
            ptrs: &mut Vec<*const f32>,
        ) -> (usize, usize, usize) {
            for i in 0..MR {
                let row = (i0 + i.min(mr - 1)) * self.k + k0;
                ptrs.push(self.a[row..].as_ptr());
            }
            (1, _kc, 1)
        }
        fn pack_b(&self, k0: usize, kc: usize, j0: usize, nc: usize, dst: &mut [f32]) {
            for p in 0..nc.div_ceil(NR) {
                for k in 0..kc {
                    for j in 0..NR {
                        let col = j0 + p * NR + j;
                        dst[p * kc * NR + k * NR + j] = if col < j0 + nc {
                            self.b[(k0 + k) * self.n + col]
                        } else {
                            0.0
                        };
                    }
                }
            }
        }
        fn write_tile(&self, i0: usize, mr: usize, j0: usize, nr: usize, tile: &[f32; TILE]) {
            let mut c = self.c.lock().unwrap();
            for i in 0..mr {
                for j in 0..nr {
                    c[(i0 + i) * self.n + j0 + j] = tile[i * NR + j];
                }
            }
        }
    }

    #[test]
    fn engine_matches_naive_gemm() {
        for &(m, n, k, threads) in &[
            (1, 1, 1, 1),
            (7, 33, 5, 2),
            (13, 17, 600, 2),
            (64, 5, 300, 2),
            (3, 100, 0, 1),
        ] {
            let a: Vec<f32> = (0..m * k).map(|i| ((i * 7) % 11) as f32 - 5.0).collect();
            let b: Vec<f32> = (0..k * n).map(|i| ((i * 3) % 13) as f32 - 6.0).collect();
            let mut c = vec![f32::NAN; m * n];
            let exec = Exec::new(threads);
            let blocking = Blocking { kc: 128, nc: 32 };
            let kb = k.div_ceil(128).max(1);
            let mut scratch = vec![0f32; scratch_len(m, n, k, kb, blocking, threads)];
            let p = Dense {
                m,
                n,
                k,
                a: &a,
                b: &b,
                c: std::sync::Mutex::new(&mut c),
            };
            run(&p, &exec, blocking, &mut scratch);
            for i in 0..m {
                for j in 0..n {
                    let e: f32 = (0..k).map(|q| a[i * k + q] * b[q * n + j]).sum();
                    assert_eq!(c[i * n + j], e, "({m},{n},{k}) at ({i},{j})");
                }
            }
        }
    }
}
