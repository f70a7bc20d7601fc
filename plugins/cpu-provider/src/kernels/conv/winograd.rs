//! Winograd F(2×2, 3×3) for channels-last 3×3 stride-1 convolutions.
//!
//! Each 2×2 block of output pixels (a *tile*) comes from a 4×4 patch of the input:
//! `Y = Aᵀ [ (G g Gᵀ) ⊙ (Bᵀ d B) ] A` per channel pair, summed over input channels.
//! With the sixteen transformed positions `ξ` that sum is sixteen independent
//! products `M_ξ[tiles × K] = V_ξ[tiles × C] · U_ξ[C × K]`: 16 multiply-adds per tile
//! and channel pair instead of the direct form's 36, 2.25× fewer.
//!
//! * The filters are transformed once per execution straight into the packed panel
//!   layout of the GEMM engine's B (`U_ξ`, zero-padded to whole panels).
//! * The threads take contiguous ranges of tiles and work through them in chunks that
//!   keep a chunk's `V` and `M` (`16 × chunk × (C + K)` floats) in L2: the input
//!   transform writes `V_ξ` (rows of `C` floats), the sixteen products run on the
//!   AVX-512 pair kernels with `V_ξ`'s rows read in place ([`gemm::rows_times_panels`]),
//!   and the output transform turns each tile's sixteen `M` rows into its four output
//!   pixels and runs the epilogue on them: in the in-register form's steps
//!   ([`Prepared::fused_rows`]) where it has one, else through the general epilogue.
//!   No synchronisation between the phases: a chunk is one thread's.
//!
//! Only planned where the CPU has the AVX-512 pair kernels. The transforms add and
//! subtract (and halve, for the filters) in `f32`: results differ from the direct
//! sum in the last bits (within the convolution tolerances), and are the same from run to
//! run and for every thread count (each tile's arithmetic is fixed).

use std::sync::{Arc, Mutex};

use super::*;
use crate::kernels::gemm::{FusedStep, panel_stride};

/// Transformed positions per tile.
const XI: usize = 16;

/// Whether Winograd F(2×2, 3×3) can run `geo` with a channels-last `f32` input: one
/// group, 2-D, a 3×3 undilated cross-correlation with stride 1 and padding of at
/// most 2, 16 to 256 input channels (one K block), at least 16 output channels, and
/// the AVX-512 pair kernels on this CPU.
pub(super) fn applies(geo: &ConvGeometry, channels_last: bool) -> bool {
    channels_last
        && geo.g == 1
        && !geo.flip
        && geo.inp[0] == 1
        && geo.filt == [1, 3, 3]
        && geo.stride[1..] == [1, 1]
        && geo.dil[1..] == [1, 1]
        && geo.pad[0] == 0
        && geo.pad[1] <= 2
        && geo.pad[2] <= 2
        && (16..=256).contains(&geo.c)
        && geo.k >= 16
        && gemm::pair_rows_available()
}

/// Tiles along (H, W).
fn tiles(geo: &ConvGeometry) -> (usize, usize) {
    (geo.out[1].div_ceil(2), geo.out[2].div_ceil(2))
}

/// Tiles per chunk: `V` and `M` of a chunk in about 768 KiB, a whole number of row
/// tiles of the micro-kernel.
fn chunk(geo: &ConvGeometry) -> usize {
    let per_tile = XI * (geo.c + geo.k) * 4;
    ((768 << 10) / per_tile / MR * MR).max(MR)
}

/// Floats of the packed transformed filters.
fn packed_len(geo: &ConvGeometry) -> usize {
    XI * geo.k.div_ceil(NR) * panel_stride(geo.c)
}

/// Floats each thread's chunk buffers take (`V`, `M`, and a cache line of slack).
fn per_thread_len(geo: &ConvGeometry) -> usize {
    XI * chunk(geo) * (geo.c + geo.k) + 16
}

/// Tiles of the whole convolution.
fn total_tiles(geo: &ConvGeometry) -> usize {
    let (th, tw) = tiles(geo);
    geo.n * th * tw
}

/// Whether the threads work in phases over shared `V` and `M` (input transform, the
/// products split by position and output-channel panels, output transform) rather than
/// each through its own tiles: when a thread would have under two chunks of tiles, so
/// that each would stream all sixteen transformed filters for a few rows (small images
/// on many threads).
fn phased(geo: &ConvGeometry, threads: usize) -> bool {
    threads > 1 && total_tiles(geo) < 2 * chunk(geo) * threads
}

/// Tiles per phase round: `V` and `M` in about 16 MiB.
fn phase_tiles(geo: &ConvGeometry) -> usize {
    let per_tile = XI * (geo.c + geo.k) * 4;
    ((16 << 20) / per_tile).max(MR).min(total_tiles(geo))
}

/// Workspace in `f32` elements for `threads` threads.
pub(super) fn workspace_len(geo: &ConvGeometry, threads: usize) -> usize {
    let work = if phased(geo, threads) {
        XI * phase_tiles(geo) * (geo.c + geo.k) + 16
    } else {
        threads * per_thread_len(geo)
    };
    packed_len(geo) + geo.c + work
}

/// Runs the convolution into `ep`.
///
/// # Panics
/// When `ws` is shorter than [`workspace_len`] or the tensors do not match `geo`.
pub(super) fn run(
    geo: &ConvGeometry,
    x: &RawIn,
    w: &RawIn,
    ep: &Prepared<'_>,
    exec: &Exec,
    ws: &mut [f32],
    cache: Option<&WeightCache>,
) {
    let threads = exec.threads();
    assert!(
        ws.len() >= workspace_len(geo, threads),
        "winograd workspace"
    );
    assert!(x.dtype() == DType::F32 && geo.strides5(x.shape())[1] == 1);
    let (in_ws, rest) = ws.split_at_mut(packed_len(geo));
    let (zeros, rest) = rest.split_at_mut(geo.c);
    zeros.fill(0.0);
    // The transformed filters: kept from an earlier run with these (constant)
    // filters, made now and kept, or made in the workspace.
    let addr = w.ptr_as::<f32>() as usize;
    let kept: Option<Arc<Vec<f32>>> = cache.map(|c| {
        c.transformed(addr).unwrap_or_else(|| {
            let mut u = vec![0f32; packed_len(geo)];
            transform_filters(geo, w, &mut u, exec);
            let u = Arc::new(u);
            c.put_transformed(addr, Arc::clone(&u));
            u
        })
    });
    let packed: &[f32] = match &kept {
        Some(u) => u,
        None => {
            transform_filters(geo, w, in_ws, exec);
            in_ws
        }
    };
    let (th, tw) = tiles(geo);
    let total = total_tiles(geo);
    let hw = geo.out[1] * geo.out[2];
    let fused = ep.fused_rows(hw, geo.npix(), 0, geo.k);
    let ctx = Ctx {
        geo,
        x: SendPtr(x.ptr_as::<f32>()),
        x_span: x.shape().span(),
        xs: geo.strides5(x.shape()),
        zeros: SendPtr(zeros.as_ptr()),
        packed,
        ep,
        fused: fused.as_ref(),
        tw,
        th,
    };
    if phased(geo, threads) {
        run_phased(&ctx, total, exec, rest);
        return;
    }
    let parts: Vec<Mutex<&mut [f32]>> = rest
        .chunks_mut(per_thread_len(geo))
        .take(threads)
        .map(Mutex::new)
        .collect();
    exec.for_each(threads, |t| {
        let mut guard = parts[t].lock().unwrap_or_else(|e| e.into_inner());
        let buf: &mut [f32] = &mut guard;
        // The thread's tiles in chunks of equal size (no short last one that would
        // stream all of the filters for a few rows).
        let range = split(total, threads, t);
        let chunks = range.len().div_ceil(chunk(geo));
        for i in 0..chunks {
            let r = split(range.len(), chunks, i);
            ctx.chunk(range.start + r.start, r.len(), buf);
        }
    });
}

/// [`run`] in phases over `V` and `M` in `buf`, [`phase_tiles`] tiles at a time.
fn run_phased(ctx: &Ctx<'_>, total: usize, exec: &Exec, buf: &mut [f32]) {
    let g = ctx.geo;
    let (c, k) = (g.c, g.k);
    let threads = exec.threads();
    let cap = phase_tiles(g);
    let off = buf.as_ptr().align_offset(64).min(16);
    let (v, m) = buf[off..].split_at_mut(XI * cap * c);
    assert!(m.len() >= XI * cap * k, "winograd phase buffers");
    let (v, m) = (
        SendPtr(v.as_mut_ptr().cast_const()),
        SendPtr(m.as_mut_ptr().cast_const()),
    );
    let pairs = k.div_ceil(2 * NR);
    let pstride = panel_stride(c);
    let ps = k.div_ceil(NR) * pstride;
    for t0 in (0..total).step_by(cap) {
        let n = cap.min(total - t0);
        exec.for_each(threads, |t| {
            for i in split(n, threads, t) {
                // SAFETY: tile `i`'s sixteen rows of `V` (`c` floats, `n · c` apart)
                // lie inside `v` (`XI · cap · c` floats) and are this part's alone.
                unsafe { ctx.input_tile(t0 + i, v.get().cast_mut().add(i * c), n * c) };
            }
        });
        // The products, split by position and pairs of output-channel panels, so
        // that each transformed filter panel is read by one thread only.
        exec.for_each(threads, |t| {
            let items = split(XI * pairs, threads, t);
            let b_at = |item: usize| (item / pairs) * ps + 2 * (item % pairs) * pstride;
            for item in items.clone() {
                let (xi, pair) = (item / pairs, item % pairs);
                let j0 = pair * 2 * NR;
                let b = &ctx.packed[b_at(item)..(xi + 1) * ps];
                // The next item's panels (this thread's items are consecutive).
                let ahead = if item + 1 < items.end {
                    let at = b_at(item + 1);
                    &ctx.packed[at..(at + 2 * pstride).min(ctx.packed.len())]
                } else {
                    &[]
                };
                let vx = v.get().wrapping_add(xi * n * c);
                // SAFETY: rows `i < n` of `V_ξ` hold `c` floats (written in the phase
                // before); `M_ξ`'s rows `i < n`, columns `j0..j0 + cols` are inside `m`
                // and this item's alone; the pair kernels exist (`applies`).
                unsafe {
                    gemm::rows_times_panels(
                        (n, (k - j0).min(2 * NR), c),
                        |i| vx.wrapping_add(i * c),
                        b,
                        m.get().cast_mut().add(xi * n * k + j0),
                        k,
                        ahead,
                    );
                }
            }
        });
        exec.for_each(threads, |t| {
            // SAFETY: `M` (the first `XI · n · k` floats of `m`) is only read now.
            let ms = unsafe { std::slice::from_raw_parts(m.get(), XI * n * k) };
            let mut out = vec![0f32; 4 * k];
            for i in split(n, threads, t) {
                ctx.output_tile(t0 + i, &ms[i * k..], n * k, &mut out);
            }
        });
    }
}

/// What every chunk reads.
struct Ctx<'a> {
    geo: &'a ConvGeometry,
    x: SendPtr<f32>,
    x_span: usize,
    xs: [usize; 5],
    zeros: SendPtr<f32>,
    packed: &'a [f32],
    ep: &'a Prepared<'a>,
    fused: Option<&'a gemm::FusedOut>,
    th: usize,
    tw: usize,
}

impl Ctx<'_> {
    /// Tile `t`'s image, tile row and tile column.
    fn tile_at(&self, t: usize) -> (usize, usize, usize) {
        (
            t / (self.th * self.tw),
            (t / self.tw) % self.th,
            t % self.tw,
        )
    }

    /// Tiles `t0..t0 + n` (flat `(image, tile row, tile column)` order), with `buf`
    /// for their `V` and `M`.
    fn chunk(&self, t0: usize, n: usize, buf: &mut [f32]) {
        let g = self.geo;
        let (c, k) = (g.c, g.k);
        let off = buf.as_ptr().align_offset(64).min(16);
        let (v, m) = buf[off..].split_at_mut(XI * n * c);
        let m = &mut m[..XI * n * k];
        for i in 0..n {
            // SAFETY: tile `i`'s sixteen rows (`c` floats, `n · c` apart) are inside `v`.
            unsafe { self.input_tile(t0 + i, v[i * c..].as_mut_ptr(), n * c) };
        }
        let ps = self.geo.k.div_ceil(NR) * panel_stride(c);
        for xi in 0..XI {
            let vx = &v[xi * n * c..(xi + 1) * n * c];
            let b = &self.packed[xi * ps..(xi + 1) * ps];
            let ahead = self.packed.get((xi + 1) * ps..(xi + 2) * ps).unwrap_or(&[]);
            let mx = &mut m[xi * n * k..(xi + 1) * n * k];
            // SAFETY: row `i < n` of `vx` holds `c` floats; `mx` holds `n` rows of
            // `k` floats, this thread's; the pair kernels exist (`applies`).
            unsafe {
                gemm::rows_times_panels(
                    (n, k, c),
                    |i| vx.as_ptr().wrapping_add(i * c),
                    b,
                    mx.as_mut_ptr(),
                    k,
                    ahead,
                );
            }
        }
        let mut out = vec![0f32; 4 * k];
        for i in 0..n {
            self.output_tile(t0 + i, &m[i * k..], n * k, &mut out);
        }
    }

    /// The input transform of tile `t`: `V_ξ`'s row at `v + ξ · vs` (`C` floats each).
    ///
    /// # Safety
    /// The sixteen rows are writable and nobody else accesses them meanwhile.
    unsafe fn input_tile(&self, t: usize, v: *mut f32, vs: usize) {
        let g = self.geo;
        let (img, ty, tx) = self.tile_at(t);
        let xs = &self.xs;
        let c = g.c;
        let y0 = (2 * ty) as isize - g.pad[1] as isize;
        let x0 = (2 * tx) as isize - g.pad[2] as isize;
        let d: [*const f32; XI] = std::array::from_fn(|i| {
            let (iy, ix) = (y0 + (i / 4) as isize, x0 + (i % 4) as isize);
            if iy < 0 || ix < 0 || iy >= g.inp[1] as isize || ix >= g.inp[2] as isize {
                self.zeros.0
            } else {
                let at = img * xs[0] + iy as usize * xs[3] + ix as usize * xs[4];
                assert!(at + c <= self.x_span, "winograd input out of bounds");
                self.x.0.wrapping_add(at)
            }
        });
        // SAFETY: every `d[i]` addresses `c` floats (the input, checked above, or the
        // zero row); the sixteen rows at `v` are ours (contract); AVX-512F is present.
        unsafe { input_tile_avx512(&d, c, v, vs) };
    }

    /// The output transform of tile `t` (`M_ξ` row at `m[ξ · ms..]`, `K` floats each)
    /// and the epilogue of its in-image pixels; `out` holds `4 · K` floats.
    fn output_tile(&self, t: usize, m: &[f32], ms: usize, out: &mut [f32]) {
        let g = self.geo;
        let k = g.k;
        assert!(m.len() >= (XI - 1) * ms + k && out.len() >= 4 * k);
        // SAFETY: sixteen rows of `k` floats in `m`, four in `out` (checked above);
        // AVX-512F is present.
        unsafe { output_tile_avx512(m.as_ptr(), ms, k, out.as_mut_ptr()) };
        let (img, ty, tx) = self.tile_at(t);
        for (q, vals) in out.chunks_exact_mut(k).enumerate() {
            let (oy, ox) = (2 * ty + q / 2, 2 * tx + q % 2);
            if oy >= g.out[1] || ox >= g.out[2] {
                continue;
            }
            let p = (img * g.out[1] + oy) * g.out[2] + ox;
            match self.fused {
                // SAFETY: pixel `p < npix` and channels `< k` lie inside every tensor
                // of the chain (`fused_rows` checked the whole index space); this
                // thread owns the tile's pixels; AVX-512F is present.
                Some(f) => unsafe { fused_pixel_avx512(f, p, vals) },
                None => self.general_pixel(img, [0, oy, ox], p % (g.out[1] * g.out[2]), vals),
            }
        }
    }

    /// The general epilogue for one pixel's `K` values.
    fn general_pixel(&self, img: usize, o: [usize; 3], p: usize, vals: &mut [f32]) {
        let mut idx = [0usize; 5];
        for (b, v) in vals.chunks_mut(NR).enumerate() {
            let ch0 = b * NR;
            if self.ep.blockwise() {
                self.ep.apply_block(v, NR, 1, v.len(), |l| BlockAt {
                    base: img * l.ns + p * l.ps + ch0 * l.cs,
                    rs: l.ps,
                    cs: l.cs,
                });
            } else {
                let rank = self.geo.out_index(img, ch0, o, &mut idx);
                self.ep.apply_along(&idx[..rank], 1, v);
            }
        }
    }
}

/// `V = Bᵀ d B` over `c` channels: `d[4r + s]` is input position `(r, s)`, the result
/// for position `ξ` goes to `v[ξ · vs..]`. Sixteen channels per vector, the last
/// ones masked.
///
/// # Safety
/// AVX-512F is available; each `d[i]` addresses `c` readable floats; `v + ξ · vs`
/// `c` writable ones for every `ξ`, disjoint from the inputs.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn input_tile_avx512(d: &[*const f32; XI], c: usize, v: *mut f32, vs: usize) {
    use std::arch::x86_64::*;
    let mut ch = 0;
    while ch < c {
        let n = (c - ch).min(16);
        let mask = gemm::lane_mask(n);
        // SAFETY: (whole loop) masked lanes are neither read nor written; the others
        // are inside the rows per the function's contract.
        unsafe {
            let x: [__m512; XI] =
                std::array::from_fn(|i| _mm512_maskz_loadu_ps(mask, d[i].add(ch)));
            let mut t = [_mm512_setzero_ps(); XI];
            for s in 0..4 {
                t[s] = _mm512_sub_ps(x[s], x[8 + s]);
                t[4 + s] = _mm512_add_ps(x[4 + s], x[8 + s]);
                t[8 + s] = _mm512_sub_ps(x[8 + s], x[4 + s]);
                t[12 + s] = _mm512_sub_ps(x[4 + s], x[12 + s]);
            }
            for r in 0..4 {
                let (a, b, cc, dd) = (t[4 * r], t[4 * r + 1], t[4 * r + 2], t[4 * r + 3]);
                let o = [
                    _mm512_sub_ps(a, cc),
                    _mm512_add_ps(b, cc),
                    _mm512_sub_ps(cc, b),
                    _mm512_sub_ps(b, dd),
                ];
                for (s, val) in o.into_iter().enumerate() {
                    _mm512_mask_storeu_ps(v.add((4 * r + s) * vs + ch), mask, val);
                }
            }
        }
        ch += 16;
    }
}

/// `Y = Aᵀ M A` over `k` channels: `M_ξ` at `m + ξ · ms`, output pixel `q` (row-major
/// in the 2×2 tile) to `out + q · k`.
///
/// # Safety
/// AVX-512F is available; the sixteen rows of `k` floats are readable, the four
/// writable and disjoint from them.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn output_tile_avx512(m: *const f32, ms: usize, k: usize, out: *mut f32) {
    use std::arch::x86_64::*;
    let mut j = 0;
    while j < k {
        let n = (k - j).min(16);
        let mask = gemm::lane_mask(n);
        // SAFETY: (whole loop) as in `input_tile_avx512`.
        unsafe {
            let x: [__m512; XI] =
                std::array::from_fn(|i| _mm512_maskz_loadu_ps(mask, m.add(i * ms + j)));
            let mut t = [_mm512_setzero_ps(); 8];
            for s in 0..4 {
                t[s] = _mm512_add_ps(_mm512_add_ps(x[s], x[4 + s]), x[8 + s]);
                t[4 + s] = _mm512_sub_ps(_mm512_sub_ps(x[4 + s], x[8 + s]), x[12 + s]);
            }
            for r in 0..2 {
                let (a, b, c, d) = (t[4 * r], t[4 * r + 1], t[4 * r + 2], t[4 * r + 3]);
                let y0 = _mm512_add_ps(_mm512_add_ps(a, b), c);
                let y1 = _mm512_sub_ps(_mm512_sub_ps(b, c), d);
                _mm512_mask_storeu_ps(out.add(2 * r * k + j), mask, y0);
                _mm512_mask_storeu_ps(out.add((2 * r + 1) * k + j), mask, y1);
            }
        }
        j += 16;
    }
}

#[cfg(not(target_arch = "x86_64"))]
unsafe fn input_tile_avx512(_: &[*const f32; XI], _: usize, _: *mut f32, _: usize) {
    unreachable!("Winograd is only planned with the AVX-512 kernels")
}

#[cfg(not(target_arch = "x86_64"))]
unsafe fn output_tile_avx512(_: *const f32, _: usize, _: usize, _: *mut f32) {
    unreachable!("Winograd is only planned with the AVX-512 kernels")
}

/// The chain's steps on pixel `p`'s values (channel `j` at `vals[j]`), then the store.
///
/// # Safety
/// AVX-512F is available; pixel `p` and channels `< vals.len()` lie inside every
/// tensor of `f` (per its construction) and nobody else touches that output pixel.
#[target_feature(enable = "avx512f")]
unsafe fn fused_pixel_avx512(f: &gemm::FusedOut, p: usize, vals: &mut [f32]) {
    let n = vals.len();
    // SAFETY: (whole body) in bounds per the function's contract.
    unsafe {
        let at = |t: *const f32, rs: usize| std::slice::from_raw_parts(t.add(p * rs), n);
        for st in f.steps() {
            match *st {
                FusedStep::ScaleShift(a, b) => {
                    let (a, b) = (at(a, 0), at(b, 0));
                    for j in 0..n {
                        vals[j] = vals[j] * a[j] + b[j];
                    }
                }
                FusedStep::AddCols(t) => vals.iter_mut().zip(at(t, 0)).for_each(|(v, t)| *v += t),
                FusedStep::MulCols(t) => vals.iter_mut().zip(at(t, 0)).for_each(|(v, t)| *v *= t),
                FusedStep::AddRows(t, rs) => {
                    vals.iter_mut().zip(at(t, rs)).for_each(|(v, t)| *v += t);
                }
                FusedStep::MulRows(t, rs) => {
                    vals.iter_mut().zip(at(t, rs)).for_each(|(v, t)| *v *= t);
                }
                FusedStep::AddScalar(s) => vals.iter_mut().for_each(|v| *v += s),
                FusedStep::MulScalar(s) => vals.iter_mut().for_each(|v| *v *= s),
                FusedStep::Relu => vals.iter_mut().for_each(|v| *v = v.max(0.0)),
            }
        }
        let (y, ys) = f.target();
        std::ptr::copy_nonoverlapping(vals.as_ptr(), y.add(p * ys), n);
    }
}

/// `U = G g Gᵀ` for every (output, input) channel pair, into the packed panels of the
/// sixteen products: `U_ξ`'s element `(c, k)` at
/// `packed[ξ · ps + (k / NR) · panel_stride(C) + c · NR + k % NR]`, columns past `K`
/// zero. The threads take panels.
fn transform_filters(g: &ConvGeometry, w: &RawIn, packed: &mut [f32], exec: &Exec) {
    let ws = geo_ws(g, w);
    let (c, k) = (g.c, g.k);
    let panels = k.div_ceil(NR);
    let pstride = panel_stride(c);
    let ps = panels * pstride;
    assert!(packed.len() >= XI * ps);
    let dst = SendPtr(packed.as_mut_ptr().cast_const());
    assert!(w.dtype() == DType::F32 && ws[0] * NR < i32::MAX as usize);
    // The last filter element the panels read, for the bounds check.
    let last = (k - 1) * ws[0] + (c - 1) * ws[1] + 2 * ws[3] + 2 * ws[4];
    assert!(last < w.shape().span(), "winograd filters out of bounds");
    let src = SendPtr(w.ptr_as::<f32>());
    let parts = exec.threads().min(panels);
    exec.for_each(parts, |part| {
        for p in split(panels, parts, part) {
            for ci in 0..c {
                let base = src.get().wrapping_add(p * NR * ws[0] + ci * ws[1]);
                let at = p * pstride + ci * NR;
                // SAFETY: the panel's output channels `< k` of input channel `ci` are
                // inside w (checked above); rows `ξ · ps + at` of `packed` hold NR
                // floats (its length, checked above) and are this part's alone;
                // AVX-512F is present (`applies`).
                unsafe {
                    filter_panel_avx512(
                        base,
                        ws,
                        NR.min(k - p * NR),
                        dst.get().cast_mut().add(at),
                        ps,
                    );
                }
            }
        }
    });
}

/// [`filter_tile`] for one input channel and the (up to) sixteen output channels of
/// a panel at once: output channel `j`'s filter at `w + j · ws[0]` (taps at
/// `fy · ws[3] + fx · ws[4]`), position `ξ`'s row of sixteen to `dst + ξ · ps`
/// (channels past `n` zero).
///
/// # Safety
/// AVX-512F is available; the filters of channels `j < n` are readable; the sixteen
/// rows of `NR` floats writable.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn filter_panel_avx512(w: *const f32, ws: [usize; 5], n: usize, dst: *mut f32, ps: usize) {
    use std::arch::x86_64::*;
    let mask = gemm::lane_mask(n);
    let idx: [i32; 16] = std::array::from_fn(|j| (j * ws[0]) as i32);
    // SAFETY: (whole body) per the function's contract; masked lanes are not read.
    unsafe {
        let idx = _mm512_loadu_si512(idx.as_ptr().cast());
        let g: [__m512; 9] = std::array::from_fn(|i| {
            let p = w.add((i / 3) * ws[3] + (i % 3) * ws[4]);
            _mm512_mask_i32gather_ps::<4>(_mm512_setzero_ps(), mask, idx, p.cast())
        });
        let half = _mm512_set1_ps(0.5);
        let (add, sub, mul) = (_mm512_add_ps, _mm512_sub_ps, _mm512_mul_ps);
        let mut t = [_mm512_setzero_ps(); 12];
        for s in 0..3 {
            let (g0, g1, g2) = (g[s], g[3 + s], g[6 + s]);
            t[s] = g0;
            t[3 + s] = mul(half, add(add(g0, g1), g2));
            t[6 + s] = mul(half, add(sub(g0, g1), g2));
            t[9 + s] = g2;
        }
        for r in 0..4 {
            let (a, b, c) = (t[3 * r], t[3 * r + 1], t[3 * r + 2]);
            let u = [
                a,
                mul(half, add(add(a, b), c)),
                mul(half, add(sub(a, b), c)),
                c,
            ];
            for (s, v) in u.into_iter().enumerate() {
                _mm512_storeu_ps(dst.add((4 * r + s) * ps), v);
            }
        }
    }
}

#[cfg(not(target_arch = "x86_64"))]
unsafe fn filter_panel_avx512(_: *const f32, _: [usize; 5], _: usize, _: *mut f32, _: usize) {
    unreachable!("Winograd is only planned with the AVX-512 kernels")
}

/// `G g Gᵀ` of one 3×3 filter (the reference for [`filter_panel_avx512`]) (`g[3r + s]`), `G = [1 0 0; ½ ½ ½; ½ −½ ½; 0 0 1]`.
#[cfg(test)]
fn filter_tile(g: [f32; 9]) -> [f32; XI] {
    let mut t = [0f32; 12];
    for s in 0..3 {
        let (g0, g1, g2) = (g[s], g[3 + s], g[6 + s]);
        t[s] = g0;
        t[3 + s] = 0.5 * (g0 + g1 + g2);
        t[6 + s] = 0.5 * (g0 - g1 + g2);
        t[9 + s] = g2;
    }
    let mut u = [0f32; XI];
    for r in 0..4 {
        let (a, b, c) = (t[3 * r], t[3 * r + 1], t[3 * r + 2]);
        u[4 * r] = a;
        u[4 * r + 1] = 0.5 * (a + b + c);
        u[4 * r + 2] = 0.5 * (a - b + c);
        u[4 * r + 3] = c;
    }
    u
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The vector filter transform gives the scalar one's values bit for bit, for a
    /// full and a partial panel of output channels.
    #[test]
    fn filter_panel_matches_the_scalar_transform() {
        if !gemm::pair_rows_available() {
            return; // no AVX-512 here: Winograd is never planned
        }
        let (c, k) = (3usize, 16usize);
        // Filters [K][3][3][C] (channels-last): strides k 9C, c 1, fy 3C, fx C.
        let ws = [9 * c, 1, 0, 3 * c, c];
        let w: Vec<f32> = (0..k * 9 * c)
            .map(|i| ((i * 37) % 101) as f32 / 7.0 - 6.0)
            .collect();
        for n in [16, 5] {
            let ps = 48;
            let mut dst = vec![f32::NAN; XI * ps];
            for ci in 0..c {
                // SAFETY: AVX-512F present; the filters of `n <= k` channels are inside
                // `w`; the rows `ξ · ps + ci * NR` hold NR floats inside `dst`.
                unsafe {
                    filter_panel_avx512(
                        w.as_ptr().add(ci),
                        ws,
                        n,
                        dst.as_mut_ptr().add(ci * NR),
                        ps,
                    );
                }
                for j in 0..NR {
                    let want = if j < n {
                        filter_tile(std::array::from_fn(|i| {
                            w[j * ws[0] + ci + (i / 3) * ws[3] + (i % 3) * ws[4]]
                        }))
                    } else {
                        [0.0; XI]
                    };
                    for xi in 0..XI {
                        let got = dst[xi * ps + ci * NR + j];
                        assert_eq!(
                            got.to_bits(),
                            want[xi].to_bits(),
                            "n {n} ci {ci} j {j} xi {xi}"
                        );
                    }
                }
            }
        }
    }
}
