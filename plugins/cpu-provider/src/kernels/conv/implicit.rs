//! Weights-as-A implicit GEMM: im2col columns packed per K block straight from x.

use super::*;

/// Weights-as-A implicit GEMM for one group.
pub(super) struct Implicit<'a> {
    pub(super) geo: &'a ConvGeometry,
    pub(super) grp: usize,
    pub(super) x: &'a RawIn,
    pub(super) xs: [usize; 5],
    pub(super) a_base: SendPtr<f32>,
    pub(super) row_stride: usize,
    pub(super) k_coff: &'a [usize],
    pub(super) k_tap: &'a [[isize; 3]],
    pub(super) pix: &'a Pixels,
    pub(super) ep: &'a Prepared<'a>,
    /// [`y_linear`] of the plain `f32` output, if any (worked out once).
    pub(super) ylin: Option<(usize, usize, usize)>,
}

impl GemmProblem for Implicit<'_> {
    fn dims(&self) -> (usize, usize, usize) {
        (self.geo.kg(), self.pix.len(), self.k_coff.len())
    }

    fn a_rows(
        &self,
        i0: usize,
        mr: usize,
        k0: usize,
        kc: usize,
        ptrs: &mut Vec<*const f32>,
    ) -> (usize, usize, usize) {
        let row0 = self.grp * self.geo.kg() + i0;
        for i in 0..MR {
            let row = row0 + i.min(mr - 1);
            // Stays inside the weights: row < K and k0 + kc <= Kred.
            ptrs.push(self.a_base.0.wrapping_add(row * self.row_stride + k0));
        }
        (1, kc, 1)
    }

    fn pack_b(&self, k0: usize, kc: usize, j0: usize, nc: usize, dst: &mut [f32]) {
        match self.x.dtype() {
            DType::F32 if self.pointwise_rows() => self.pack_pointwise(k0, kc, j0, nc, dst),
            DType::F32 if self.gather_ok() => self.pack_gather(k0, kc, j0, nc, dst),
            DType::F32 => self.pack_f32(k0, kc, j0, nc, dst),
            DType::F16 => self.pack::<f16>(k0, kc, j0, nc, dst),
            DType::BF16 => self.pack::<bf16>(k0, kc, j0, nc, dst),
        }
    }

    fn write_tile(&self, i0: usize, mr: usize, j0: usize, nr: usize, tile: &[f32; TILE]) {
        let ch0 = self.grp * self.geo.kg() + i0;
        if let Some(out) = self.ep.plain_f32_out()
            && let Some((ns, ps, cs)) = self.ylin
        {
            let hw: usize = self.geo.out.iter().product();
            let y = out.ptr_as::<f32>();
            let span = out.shape().span();
            let mut j = j0;
            while j < j0 + nr {
                let (n, p) = (j / hw, j % hw);
                let len = (hw - p).min(j0 + nr - j);
                let base = n * ns + ch0 * cs + p * ps;
                assert!(
                    base + (mr - 1) * cs + (len - 1) * ps < span,
                    "tile out of bounds"
                );
                for i in 0..mr {
                    let src = &tile[i * NR + j - j0..i * NR + j - j0 + len];
                    // SAFETY: in bounds (checked above); tiles are disjoint across
                    // threads.
                    unsafe { gemm::store_strided(y.add(base + i * cs), ps, src) };
                }
                j += len;
            }
            return;
        }
        // The tile's columns as runs of pixels within one output row (the paths that
        // address pixels one by one need them).
        let mut rs = Vec::new();
        let mut idx = [0usize; 5];
        if let Some(out) = self.ep.plain_f32_out() {
            runs(self.pix, j0, nr, &mut rs);
            let s = out.shape();
            let y = out.ptr_as::<f32>();
            let axis = 1 + self.geo.spatial;
            for &(start, len) in &rs {
                let p = &self.pix.get(start);
                let q0 = start - j0;
                let rank = self.geo.out_index(p.n, ch0, p.o, &mut idx);
                let base = s.offset(&idx[..rank]);
                let (cs, ws) = (s.strides[1], s.strides[axis.min(rank - 1)]);
                assert!(
                    base + (mr - 1) * cs + (len - 1) * ws < s.span(),
                    "tile out of bounds"
                );
                for i in 0..mr {
                    let src = &tile[i * NR + q0..i * NR + q0 + len];
                    // SAFETY: in bounds (checked above); tiles are disjoint across
                    // threads, so these elements are written by this thread only.
                    unsafe { gemm::store_strided(y.add(base + i * cs), ws, src) };
                }
            }
            return;
        }
        if self.ep.blockwise() {
            // Columns are consecutive pixels: one block per image they cover.
            let hw: usize = self.geo.out.iter().product();
            let mut vals = *tile;
            let mut j = j0;
            while j < j0 + nr {
                let (n, p) = (j / hw, j % hw);
                let len = (hw - p).min(j0 + nr - j);
                self.ep
                    .apply_block(&mut vals[j - j0..], NR, mr, len, |l| BlockAt {
                        base: n * l.ns + ch0 * l.cs + p * l.ps,
                        rs: l.cs,
                        cs: l.ps,
                    });
                j += len;
            }
            return;
        }
        runs(self.pix, j0, nr, &mut rs);
        let mut vals = [0f32; NR];
        for i in 0..mr {
            for &(start, len) in &rs {
                let p = &self.pix.get(start);
                let q0 = start - j0;
                let rank = self.geo.out_index(p.n, ch0 + i, p.o, &mut idx);
                let v = &mut vals[..len];
                v.copy_from_slice(&tile[i * NR + q0..i * NR + q0 + len]);
                self.ep.apply_along(&idx[..rank], rank - 1, v);
            }
        }
    }
}

/// K rows ahead that [`Implicit::pack_pointwise`] prefetches.
pub(super) const PREFETCH_ROWS: usize = 3;

impl Implicit<'_> {
    /// Whether B is just x's `[C][pixels]` rows per image: 1×1 filter, stride 1, no
    /// padding, pixels contiguous with unit stride (NCHW).
    pub(super) fn pointwise_rows(&self) -> bool {
        let g = self.geo;
        let xs = self.xs;
        g.taps() == 1
            && g.stride == [1; 3]
            && g.pad == [0; 3]
            && g.inp == g.out
            && xs[4] == 1
            && (g.inp[1] == 1 || xs[3] == g.inp[2])
            && (g.inp[0] == 1 || xs[2] == g.inp[1] * g.inp[2])
    }

    /// [`GemmProblem::pack_b`] for [`Implicit::pointwise_rows`]: per K row, contiguous
    /// runs of pixels (split only at image boundaries) scattered into the panels.
    pub(super) fn pack_pointwise(
        &self,
        k0: usize,
        kc: usize,
        j0: usize,
        nc: usize,
        dst: &mut [f32],
    ) {
        let g = self.geo;
        let xs = self.xs;
        let hw: usize = g.out.iter().product();
        let x = self.x.ptr_as::<f32>();
        let span = self.x.shape().span();
        let cbase = self.grp * g.cg() * xs[1];
        let np = nc.div_ceil(NR);
        let ps = gemm::panel_stride(kc);
        if nc < np * NR {
            let p = np - 1;
            for k in 0..kc {
                dst[p * ps + k * NR + nc % NR..p * ps + (k + 1) * NR].fill(0.0);
            }
        }
        let mut j = j0;
        while j < j0 + nc {
            let (n, p0) = (j / hw, j % hw);
            let len = (hw - p0).min(j0 + nc - j);
            for k in 0..kc {
                let first = n * xs[0] + cbase + self.k_coff[k0 + k] + p0;
                assert!(first + len <= span, "im2col read out of bounds");
                if k + PREFETCH_ROWS < kc {
                    let ahead = n * xs[0] + cbase + self.k_coff[k0 + k + PREFETCH_ROWS] + p0;
                    gemm::prefetch_run(x.wrapping_add(ahead), len);
                }
                // SAFETY: `first..first + len` is inside x's span (checked above).
                let src = unsafe { std::slice::from_raw_parts(x.add(first), len) };
                let mut q = j - j0;
                let mut s = 0;
                while s < len {
                    let (p, jj) = (q / NR, q % NR);
                    let take = (NR - jj).min(len - s);
                    let at = p * ps + k * NR + jj;
                    gemm::copy_short(&mut dst[at..at + take], &src[s..s + take]);
                    s += take;
                    q += take;
                }
            }
            j += len;
        }
    }

    /// Whether [`Implicit::pack_gather`] applies: AVX2, a 2-D problem, offsets that
    /// fit `i32`.
    pub(super) fn gather_ok(&self) -> bool {
        let g = self.geo;
        gather::available()
            && g.inp[0] == 1
            && g.filt[0] == 1
            && g.pad[0] == 0
            && self.x.shape().span() < i32::MAX as usize / 2
            && g.inp[1].max(g.inp[2]) < (1 << 20)
    }

    /// `f32` im2col with AVX2 gathers: per column (output pixel) its first input row,
    /// column and offset are tabulated once, then each K row is 8 masked gathers at
    /// a time (masked-off lanes are padding and read nothing).
    pub(super) fn pack_gather(&self, k0: usize, kc: usize, j0: usize, nc: usize, dst: &mut [f32]) {
        let g = self.geo;
        let xs = self.xs;
        let cols = nc.div_ceil(NR) * NR;
        let mut ih = vec![i32::MIN / 2; cols];
        let mut iw = vec![i32::MIN / 2; cols];
        let mut base = vec![0i32; cols];
        let cbase = self.grp * g.cg() * xs[1];
        let mut p = self.pix.get(j0);
        for j in 0..nc {
            ih[j] = p.i0[1] as i32;
            iw[j] = p.i0[2] as i32;
            base[j] = (p.n * xs[0] + cbase) as i32
                + p.i0[1] as i32 * xs[3] as i32
                + p.i0[2] as i32 * xs[4] as i32;
            // Next pixel without divisions.
            p.o[2] += 1;
            p.i0[2] += g.stride[2] as isize;
            if p.o[2] == g.out[2] {
                p.o[2] = 0;
                p.i0[2] = -(g.pad[2] as isize);
                p.o[1] += 1;
                p.i0[1] += g.stride[1] as isize;
                if p.o[1] == g.out[1] {
                    p.o[1] = 0;
                    p.i0[1] = -(g.pad[1] as isize);
                    p.n += 1;
                }
            }
        }
        let taps: Vec<[i32; 3]> = (k0..k0 + kc)
            .map(|kk| {
                let t = self.k_tap[kk];
                [
                    (self.k_coff[kk] as isize + t[1] * xs[3] as isize + t[2] * xs[4] as isize)
                        as i32,
                    t[1] as i32,
                    t[2] as i32,
                ]
            })
            .collect();
        // Per 8 columns: 1 when their inputs are consecutive, 2 when 2 apart, else 0
        // (then, when all 8 are inside the image, plain loads replace the gather).
        let kinds: Vec<u8> = (0..cols / 8)
            .map(|q| {
                let b = &base[q * 8..q * 8 + 8];
                let run = (1..8).all(|i| ih[q * 8 + i] == ih[q * 8]);
                match b[1] - b[0] {
                    1 if run && (1..8).all(|i| b[i] - b[0] == i as i32) => 1,
                    2 if run && (1..8).all(|i| b[i] - b[0] == 2 * i as i32) => 2,
                    _ => 0,
                }
            })
            .collect();
        let ps = gemm::panel_stride(kc);
        assert!(dst.len() >= (cols / NR - 1) * ps + kc * NR);
        // SAFETY: AVX2 is present (`gather_ok`); every unmasked lane reads input
        // (row, column) inside the image at a channel of this group, so inside x's span
        // (offsets fit i32: `gather_ok`); writes stay inside `dst` (checked above).
        unsafe {
            gather::pack(
                self.x.ptr_as::<f32>(),
                (&ih, &iw, &base, &kinds),
                &taps,
                (g.inp[1] as i32, g.inp[2] as i32, self.x.shape().span()),
                dst.as_mut_ptr(),
                ps,
            );
        }
    }

    /// `f32` im2col, K row by K row over whole runs of output pixels (one output row
    /// each): bounds are worked out once per (row, run), the run is gathered into a
    /// buffer and copied into the panels it spans.
    pub(super) fn pack_f32(&self, k0: usize, kc: usize, j0: usize, nc: usize, dst: &mut [f32]) {
        const RUN: usize = 256;
        let g = self.geo;
        let xs = self.xs;
        let x = self.x.ptr_as::<f32>();
        let span = self.x.shape().span();
        let cbase = self.grp * g.cg() * xs[1];
        let ps = gemm::panel_stride(kc);
        let np = nc.div_ceil(NR);
        if nc < np * NR {
            let p = np - 1;
            for k in 0..kc {
                dst[p * ps + k * NR + nc % NR..p * ps + (k + 1) * NR].fill(0.0);
            }
        }
        let mut rs = Vec::with_capacity(8);
        runs(self.pix, j0, nc, &mut rs);
        let mut buf = [0f32; RUN];
        let sw = g.stride[2] as isize;
        let wmax = g.inp[2] as isize;
        let step = g.stride[2] * xs[4];
        for &(rstart, rlen) in &rs {
            let mut s0 = rstart;
            while s0 < rstart + rlen {
                let len = RUN.min(rstart + rlen - s0);
                let px = &self.pix.get(s0);
                let c0 = s0 - j0;
                let nbase = px.n * xs[0] + cbase;
                for k in 0..kc {
                    let kk = k0 + k;
                    let tap = self.k_tap[kk];
                    let id = px.i0[0] + tap[0];
                    let ih = px.i0[1] + tap[1];
                    let iw0 = px.i0[2] + tap[2];
                    let row = &mut buf[..len];
                    // Columns q with 0 <= iw0 + q * sw < W.
                    let (qa, qb) = if iw0 >= wmax {
                        (0, 0)
                    } else {
                        (
                            if iw0 >= 0 { 0 } else { ceil_div(-iw0, sw) },
                            ceil_div(wmax - iw0, sw).min(len as isize),
                        )
                    };
                    let (qa, qb) = (qa.min(len as isize) as usize, qb.max(0) as usize);
                    if id < 0
                        || id >= g.inp[0] as isize
                        || ih < 0
                        || ih >= g.inp[1] as isize
                        || qa >= qb
                    {
                        row.fill(0.0);
                    } else {
                        row[..qa].fill(0.0);
                        row[qb..].fill(0.0);
                        let first = nbase
                            + self.k_coff[kk]
                            + id as usize * xs[2]
                            + ih as usize * xs[3]
                            + (iw0 + qa as isize * sw) as usize * xs[4];
                        let n = qb - qa;
                        assert!(first + (n - 1) * step < span, "im2col read out of bounds");
                        // SAFETY: the reads `first + q * step`, `q < n`, are inside x's
                        // span (checked just above).
                        let src =
                            unsafe { std::slice::from_raw_parts(x.add(first), (n - 1) * step + 1) };
                        let out = &mut row[qa..qb];
                        match step {
                            1 => gemm::copy_short(out, &src[..n]),
                            2 => gemm::gather_stride2(out, src),
                            _ => {
                                for (q, o) in out.iter_mut().enumerate() {
                                    *o = src[q * step];
                                }
                            }
                        }
                    }
                    // Scatter the run into the panels it spans.
                    let mut c = c0;
                    let mut i = 0;
                    while i < len {
                        let (p, jj) = (c / NR, c % NR);
                        let take = (NR - jj).min(len - i);
                        let at = p * ps + k * NR + jj;
                        gemm::copy_short(&mut dst[at..at + take], &row[i..i + take]);
                        i += take;
                        c += take;
                    }
                }
                s0 += len;
            }
        }
    }

    pub(super) fn pack<T: Elem>(
        &self,
        k0: usize,
        kc: usize,
        j0: usize,
        nc: usize,
        dst: &mut [f32],
    ) {
        let g = self.geo;
        let xs = self.xs;
        let x = self.x.ptr_as::<T>();
        let span = self.x.shape().span();
        let cbase = self.grp * g.cg() * xs[1];
        let mut rs = Vec::with_capacity(4);
        for p in 0..nc.div_ceil(NR) {
            let at = p * gemm::panel_stride(kc);
            let panel = &mut dst[at..at + kc * NR];
            let pj0 = j0 + p * NR;
            let pn = NR.min(j0 + nc - pj0);
            if pn < NR {
                for k in 0..kc {
                    panel[k * NR + pn..(k + 1) * NR].fill(0.0);
                }
            }
            runs(self.pix, pj0, pn, &mut rs);
            for &(start, len) in &rs {
                let px = &self.pix.get(start);
                let q0 = start - pj0;
                let nbase = px.n * xs[0] + cbase;
                for k in 0..kc {
                    let kk = k0 + k;
                    let tap = self.k_tap[kk];
                    let out = &mut panel[k * NR + q0..k * NR + q0 + len];
                    let id = px.i0[0] + tap[0];
                    let ih = px.i0[1] + tap[1];
                    if id < 0 || id >= g.inp[0] as isize || ih < 0 || ih >= g.inp[1] as isize {
                        out.fill(0.0);
                        continue;
                    }
                    let base = nbase + self.k_coff[kk] + id as usize * xs[2] + ih as usize * xs[3];
                    let iw0 = px.i0[2] + tap[2];
                    let sw = g.stride[2] as isize;
                    let wmax = g.inp[2] as isize;
                    // Columns q with 0 <= iw0 + q * sw < W.
                    let (qa, qb) = if sw == 1 {
                        ((-iw0).max(0), (wmax - iw0).min(len as isize))
                    } else {
                        (
                            if iw0 >= 0 { 0 } else { ((-iw0) + sw - 1) / sw },
                            if iw0 >= wmax {
                                0
                            } else {
                                ((wmax - iw0 + sw - 1) / sw).min(len as isize)
                            },
                        )
                    };
                    let (qa, qb) = (qa.min(len as isize) as usize, qb.max(0) as usize);
                    if qa >= qb {
                        out.fill(0.0);
                        continue;
                    }
                    out[..qa].fill(0.0);
                    out[qb..].fill(0.0);
                    let first = base + (iw0 + qa as isize * sw) as usize * xs[4];
                    let step = g.stride[2] * xs[4];
                    assert!(
                        first + (qb - qa - 1) * step < span,
                        "im2col read out of bounds"
                    );
                    // SAFETY: every read is inside x's span (checked just above: the
                    // offsets grow monotonically with q).
                    unsafe {
                        if step == 1 && T::DTYPE == DType::F32 {
                            let src =
                                std::slice::from_raw_parts(x.add(first).cast::<f32>(), qb - qa);
                            gemm::copy_short(&mut out[qa..qb], src);
                        } else {
                            for (q, o) in out[qa..qb].iter_mut().enumerate() {
                                *o = (*x.add(first + q * step)).to_f32();
                            }
                        }
                    }
                }
            }
        }
    }
}
