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
    pub(super) ep: &'a Prepared<'a>,
    /// [`y_linear`] of the plain `f32` output, if any (worked out once).
    pub(super) ylin: Option<(usize, usize, usize)>,
    /// All of B packed on an earlier run (constant filters), if kept.
    pub(super) packed: Option<&'a gemm::PackedB>,
    /// The epilogue in the form the pair kernels apply in registers, if it has one.
    pub(super) fused: Option<gemm::FusedOut>,
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
        // The tile's pixels once (rows past `mr` repeat the last), then per segment
        // only the tap's offset and the bounds.
        let pixels: [Pix; MR] = self.pix.run(i0);
        let last_row = mr.max(1) - 1;
        let base: [isize; MR] = std::array::from_fn(|i| {
            let px = &pixels[i.min(last_row)];
            (px.n * xs[0] + cbase) as isize
                + px.i0[0] * xs[2] as isize
                + px.i0[1] * xs[3] as isize
                + px.i0[2] * xs[4] as isize
        });
        let span = self.x_span as isize - ((seg_len - 1) * ks) as isize;
        if self.inside {
            for s in 0..nseg {
                let tap = self.taps[tap0 + s];
                let tap_off =
                    tap[0] * xs[2] as isize + tap[1] * xs[3] as isize + tap[2] * xs[4] as isize;
                for b in base {
                    let off = b + tap_off;
                    assert!(off >= 0 && off < span, "indirect row out of bounds");
                    ptrs.push(self.x.0.wrapping_add(off as usize));
                }
            }
            return (nseg, seg_len, ks);
        }
        for s in 0..nseg {
            let tap = self.taps[tap0 + s];
            let tap_off =
                tap[0] * xs[2] as isize + tap[1] * xs[3] as isize + tap[2] * xs[4] as isize;
            for i in 0..MR {
                let px = &pixels[i.min(last_row)];
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
