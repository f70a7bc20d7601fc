//! Channels-last indirect GEMM: input pixels packed through an indirection buffer.

use super::*;

/// Channels-last indirect GEMM for one group.
pub(super) struct Indirect<'a> {
    pub(super) geo: &'a ConvGeometry,
    pub(super) grp: usize,
    pub(super) x: SendPtr<f32>,
    pub(super) x_span: usize,
    pub(super) xs: [usize; 5],
    pub(super) zeros: SendPtr<f32>,
    pub(super) wpack: &'a [f32],
    /// Weights read in place as (tap, channel) rows: base, row stride, span.
    pub(super) w_rows: Option<(SendPtr<f32>, usize, usize)>,
    pub(super) taps: &'a [[isize; 3]],
    pub(super) blocks: &'a [(usize, usize)],
    pub(super) pix: &'a Pixels,
    /// [`ConvGeometry::windows_inside`]: no row needs the padding check.
    pub(super) inside: bool,
    /// [`x_linear`]: consecutive output pixels read x this many floats apart.
    pub(super) x_lin: Option<usize>,
    pub(super) ep: &'a Prepared<'a>,
    /// [`y_linear`] of the plain `f32` output, if any (worked out once).
    pub(super) ylin: Option<(usize, usize, usize)>,
    /// All of B packed on an earlier run (constant filters), if kept.
    pub(super) packed: Option<&'a gemm::PackedB>,
    /// The epilogue in the form the pair kernels apply in registers, if it has one.
    pub(super) fused: Option<gemm::FusedOut>,
}

/// When output pixel `j`'s window starts `j * ps` floats after pixel 0's, for every
/// pixel of the batch: `Some(ps)`. Holds when no padding is read and each output dim
/// of more than one pixel (w, then h, d and the batch) steps the window by the
/// extents inside it times `ps`: 1×1 stride-1 convolutions over densely laid out
/// inputs (NHWC, NCHW), and any convolution with one output pixel per image laid out
/// so.
pub(super) fn x_linear(g: &ConvGeometry, xs: &[usize; 5]) -> Option<usize> {
    if !g.windows_inside() {
        return None;
    }
    // (extent, window step) from the innermost output dim out; extents of 1 never
    // step.
    let dims = [
        (g.out[2], g.stride[2] * xs[4]),
        (g.out[1], g.stride[1] * xs[3]),
        (g.out[0], g.stride[0] * xs[2]),
        (g.n, xs[0]),
    ];
    let mut ps = None;
    let mut inner = 1;
    for (extent, step) in dims.into_iter().filter(|d| d.0 > 1) {
        match ps {
            None => ps = Some(step),
            Some(p) if step == inner * p => {}
            Some(_) => return None,
        }
        inner *= extent;
    }
    Some(ps.unwrap_or(0))
}

impl Indirect<'_> {
    /// The offset in x of spatial coordinates (d, h, w).
    #[inline(always)]
    fn spatial(&self, c: [isize; 3]) -> isize {
        let xs = &self.xs;
        c[0] * xs[2] as isize + c[1] * xs[3] as isize + c[2] * xs[4] as isize
    }

    /// Row pointers of a tile whose `rows` windows lie `step` floats apart from the
    /// first one's (at `first`), one segment per tap of `taps`: per segment only the
    /// tap's offset and the bounds (`span`: floats readable from a row's start; rows
    /// past `rows` repeat the last).
    #[inline(always)]
    fn linear_rows(
        &self,
        taps: &[[isize; 3]],
        first: isize,
        (step, rows): (usize, usize),
        span: isize,
        ptrs: &mut Vec<*const f32>,
    ) {
        let reach = ((rows - 1) * step) as isize;
        ptrs.reserve(taps.len() * MR);
        for &tap in taps {
            let at = first + self.spatial(tap);
            assert!(at >= 0 && at + reach < span, "indirect row out of bounds");
            let row0 = self.x.0.wrapping_add(at as usize);
            ptrs.extend((0..MR).map(|i| row0.wrapping_add(i.min(rows - 1) * step)));
        }
    }
}

impl GemmProblem for Indirect<'_> {
    fn dims(&self) -> (usize, usize, usize) {
        (
            self.pix.len(),
            self.geo.kg(),
            self.geo.cg() * self.taps.len(),
        )
    }

    fn k_blocks(&self, _kc: usize) -> Vec<(usize, usize)> {
        self.blocks.to_vec()
    }

    fn a_rows(
        &self,
        i0: usize,
        mr: usize,
        k0: usize,
        kc: usize,
        ptrs: &mut Vec<*const f32>,
    ) -> (usize, usize, usize) {
        let g = self.geo;
        let cg = g.cg();
        let tap0 = k0 / cg;
        let ci0 = k0 % cg;
        let (nseg, seg_len) = if ci0 + kc <= cg {
            (1, kc)
        } else {
            (kc / cg, cg)
        };
        debug_assert!(nseg == 1 || (ci0 == 0 && kc.is_multiple_of(cg)));
        let cbase = (self.grp * cg + ci0) * self.xs[1];
        // Channels are contiguous when channels-last; else (1×1 NCHW) strided.
        let ks = if seg_len > 1 { self.xs[1] } else { 1 };
        let xs = &self.xs;
        let span = self.x_span as isize - ((seg_len - 1) * ks) as isize;
        let window = |px: &Pix| (px.n * xs[0] + cbase) as isize + self.spatial(px.i0);
        let rows = mr.max(1);
        let taps = &self.taps[tap0..tap0 + nseg];
        if let Some(ps) = self.x_lin {
            // Rows `ps` apart from the tile's first pixel: no pixel arithmetic.
            self.linear_rows(taps, (i0 * ps + cbase) as isize, (ps, rows), span, ptrs);
            return (nseg, seg_len, ks);
        }
        if self.inside {
            // A tile within one output row (107 of every 112 of the stem's, whose
            // rows are 112 pixels): windows a stride apart from the first pixel's, so
            // one pixel's coordinates.
            let first = self.pix.get(i0);
            if first.o[2] + rows <= g.out[2] {
                let step = g.stride[2] * xs[4];
                self.linear_rows(taps, window(&first), (step, rows), span, ptrs);
                return (nseg, seg_len, ks);
            }
        }
        // The tile's pixels once (rows past `mr` repeat the last), then per segment
        // only the tap's offset and the bounds.
        let pixels: [Pix; MR] = self.pix.run(i0);
        let base: [isize; MR] = std::array::from_fn(|i| window(&pixels[i.min(rows - 1)]));
        if self.inside {
            // Every row of a segment is in bounds when the lowest and the highest are.
            let (lo, hi) = (base.iter().min(), base.iter().max());
            let (lo, hi) = (lo.copied().unwrap_or(0), hi.copied().unwrap_or(0));
            ptrs.reserve(nseg * MR);
            for &tap in taps {
                let tap_off = self.spatial(tap);
                assert!(
                    lo + tap_off >= 0 && hi + tap_off < span,
                    "indirect row out of bounds"
                );
                ptrs.extend(
                    base.iter()
                        .map(|&b| self.x.0.wrapping_add((b + tap_off) as usize)),
                );
            }
            return (nseg, seg_len, ks);
        }
        for &tap in taps {
            let tap_off = self.spatial(tap);
            for i in 0..MR {
                let px = &pixels[i.min(rows - 1)];
                let c = [px.i0[0] + tap[0], px.i0[1] + tap[1], px.i0[2] + tap[2]];
                let inside = (0..3).all(|d| c[d] >= 0 && c[d] < g.inp[d] as isize);
                let ptr = if inside {
                    let off = base[i] + tap_off;
                    assert!(off >= 0 && off < span, "indirect row out of bounds");
                    self.x.0.wrapping_add(off as usize)
                } else {
                    // The plan only lets strided rows through when no pixel reads
                    // padding (the zero row has unit stride).
                    assert!(ks == 1, "padding with strided indirect rows");
                    self.zeros.0
                };
                ptrs.push(ptr);
            }
        }
        (nseg, seg_len, ks)
    }

    fn a_in_place(&self) -> bool {
        // The input and the zero row outlive the GEMM.
        true
    }

    fn packed_b(&self) -> Option<&gemm::PackedB> {
        self.packed
    }

    fn fused_out(&self) -> Option<&gemm::FusedOut> {
        self.fused.as_ref()
    }

    fn pack_b(&self, k0: usize, kc: usize, j0: usize, nc: usize, dst: &mut [f32]) {
        let kred = self.geo.cg() * self.taps.len();
        if let Some((w, rs, span)) = self.w_rows {
            let row0 = self.grp * self.geo.kg() + j0;
            for p in 0..nc.div_ceil(NR) {
                let n = NR.min(nc - p * NR);
                let last = (row0 + p * NR + n - 1) * rs + k0 + kc;
                assert!(last <= span, "weight rows out of bounds");
                let rows: [*const f32; NR] = std::array::from_fn(|j| {
                    w.0.wrapping_add((row0 + p * NR + j.min(n - 1)) * rs + k0)
                });
                if (p + 1) * NR < nc {
                    for j in 0..NR.min(nc - (p + 1) * NR) {
                        let r = (row0 + (p + 1) * NR + j) * rs + k0;
                        gemm::prefetch_run(w.0.wrapping_add(r), kc);
                    }
                }
                let at = p * gemm::panel_stride(kc);
                // SAFETY: every row holds `kc` floats inside w (checked above).
                unsafe { gemm::pack_b_rows(&rows[..n], kc, &mut dst[at..at + kc * NR]) };
            }
            return;
        }
        let p0 = j0 / NR;
        for p in 0..nc.div_ceil(NR) {
            let src =
                &self.wpack[(p0 + p) * NR * kred + k0 * NR..(p0 + p) * NR * kred + (k0 + kc) * NR];
            let at = p * gemm::panel_stride(kc);
            dst[at..at + kc * NR].copy_from_slice(src);
        }
    }

    fn write_tile(&self, i0: usize, mr: usize, j0: usize, nr: usize, tile: &[f32; TILE]) {
        let ch0 = self.grp * self.geo.kg() + j0;
        if let Some(out) = self.ep.plain_f32_out()
            && let Some((ns, ps, cs)) = self.ylin
        {
            let hw: usize = self.geo.out.iter().product();
            let y = out.ptr_as::<f32>();
            let span = out.shape().span();
            let (mut n, mut p) = (i0 / hw, i0 % hw);
            for i in 0..mr {
                let base = n * ns + p * ps + ch0 * cs;
                assert!(base + (nr - 1) * cs < span, "tile out of bounds");
                // SAFETY: in bounds (checked above); tiles are disjoint across threads.
                unsafe { gemm::store_strided(y.add(base), cs, &tile[i * NR..i * NR + nr]) };
                p += 1;
                if p == hw {
                    p = 0;
                    n += 1;
                }
            }
            return;
        }
        let mut idx = [0usize; 5];
        if let Some(out) = self.ep.plain_f32_out() {
            let s = out.shape();
            let y = out.ptr_as::<f32>();
            let cs = s.strides[1];
            for i in 0..mr {
                let p = &self.pix.get(i0 + i);
                let rank = self.geo.out_index(p.n, ch0, p.o, &mut idx);
                let base = s.offset(&idx[..rank]);
                assert!(base + (nr - 1) * cs < s.span(), "tile out of bounds");
                let src = &tile[i * NR..i * NR + nr];
                // SAFETY: in bounds (checked above); tiles are disjoint across threads.
                unsafe { gemm::store_strided(y.add(base), cs, src) };
            }
            return;
        }
        if self.ep.blockwise() {
            // Rows are consecutive pixels: one block per image they cover.
            let hw: usize = self.geo.out.iter().product();
            let mut vals = *tile;
            let mut i = 0;
            while i < mr {
                let (n, p) = ((i0 + i) / hw, (i0 + i) % hw);
                let rows = (hw - p).min(mr - i);
                self.ep
                    .apply_block(&mut vals[i * NR..], NR, rows, nr, |l| BlockAt {
                        base: n * l.ns + p * l.ps + ch0 * l.cs,
                        rs: l.ps,
                        cs: l.cs,
                    });
                i += rows;
            }
            return;
        }
        let mut vals = [0f32; NR];
        for i in 0..mr {
            let p = &self.pix.get(i0 + i);
            let rank = self.geo.out_index(p.n, ch0, p.o, &mut idx);
            let v = &mut vals[..nr];
            v.copy_from_slice(&tile[i * NR..i * NR + nr]);
            self.ep.apply_along(&idx[..rank], 1, v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::conv::{ConvMode, ConvParams};

    fn geo(x: [usize; 4], k: usize, f: usize, stride: usize, pad: usize) -> ConvGeometry {
        let p = ConvParams {
            pre_padding: vec![pad; 2],
            post_padding: vec![pad; 2],
            stride: vec![stride; 2],
            dilation: vec![1; 2],
            mode: ConvMode::CrossCorrelation,
        };
        let o = |i: usize| (i + 2 * pad - f) / stride + 1;
        ConvGeometry::new(&x, &[k, x[1], f, f], &[x[0], k, o(x[2]), o(x[3])], &p).unwrap()
    }

    /// Strides of a dense `[n, c, h, w]` tensor as [`ConvGeometry::strides5`] gives
    /// them (the missing depth dim has stride 0): channels-last or channels-first.
    fn dense(x: [usize; 4], channels_last: bool) -> [usize; 5] {
        let [_, c, h, w] = x;
        if channels_last {
            [h * w * c, 1, 0, w * c, c]
        } else {
            [c * h * w, h * w, 0, w, 1]
        }
    }

    #[test]
    fn linear_rows_only_where_pixels_step_evenly() {
        let x = [2, 64, 56, 56];
        // 1×1 stride 1: consecutive pixels one pixel apart, across rows and images
        // (channels-first images have their other channels between them).
        assert_eq!(x_linear(&geo(x, 256, 1, 1, 0), &dense(x, true)), Some(64));
        assert_eq!(x_linear(&geo(x, 256, 1, 1, 0), &dense(x, false)), None);
        let x1 = [1, 64, 56, 56];
        assert_eq!(x_linear(&geo(x1, 256, 1, 1, 0), &dense(x1, false)), Some(1));
        // Stride 2 skips every other row at a row's end; padding reads outside x;
        // a 3×3 window's rows are not one pixel apart at a row's end.
        assert_eq!(x_linear(&geo(x, 256, 1, 2, 0), &dense(x, true)), None);
        assert_eq!(x_linear(&geo(x, 64, 3, 1, 1), &dense(x, true)), None);
        assert_eq!(x_linear(&geo(x, 64, 3, 1, 0), &dense(x, true)), None);
        // Images that are not back to back.
        let mut gapped = dense(x, true);
        gapped[0] += 16;
        assert_eq!(x_linear(&geo(x, 256, 1, 1, 0), &gapped), None);
        // One pixel per image (a fully connected layer as a convolution): the batch
        // stride; one pixel in all: no step needed.
        let fc = [8, 2048, 1, 1];
        assert_eq!(
            x_linear(&geo(fc, 1000, 1, 1, 0), &dense(fc, true)),
            Some(2048)
        );
        let one = [1, 2048, 1, 1];
        assert_eq!(
            x_linear(&geo(one, 1000, 1, 1, 0), &dense(one, true)),
            Some(0)
        );
    }
}
