//! The direct loop, for thin grouped convolutions and as the fallback.

use super::*;

/// The direct loop: one task per (image, output channel) range, one output row at a
/// time through the epilogue.
pub(super) fn direct(g: &ConvGeometry, x: &RawIn, w: &RawIn, ep: &Prepared<'_>, exec: &Exec) {
    let xs = g.strides5(x.shape());
    let ws = g.strides5(w.shape());
    let (cg, kg) = (g.cg(), g.kg());
    let jobs = g.n * g.k;
    let parts = (exec.threads() * 4).min(jobs).max(1);
    let taps = tap_list(g);
    exec.for_each(parts, |part| {
        let mut idx = [0usize; 5];
        let mut row = vec![0f32; g.out[2]];
        for job in split(jobs, parts, part) {
            let (n, k) = (job / g.k, job % g.k);
            let grp = k / kg;
            for od in 0..g.out[0] {
                for oh in 0..g.out[1] {
                    for (ow, r) in row.iter_mut().enumerate() {
                        let o = [od, oh, ow];
                        let mut acc = 0f32;
                        for ci in 0..cg {
                            let xc = n * xs[0] + (grp * cg + ci) * xs[1];
                            let wc = k * ws[0] + ci * ws[1];
                            let mut t = 0;
                            for a in 0..g.filt[0] {
                                for b in 0..g.filt[1] {
                                    for c in 0..g.filt[2] {
                                        let tap = taps[t];
                                        t += 1;
                                        let i = [
                                            (o[0] * g.stride[0]) as isize - g.pad[0] as isize
                                                + tap[0],
                                            (o[1] * g.stride[1]) as isize - g.pad[1] as isize
                                                + tap[1],
                                            (o[2] * g.stride[2]) as isize - g.pad[2] as isize
                                                + tap[2],
                                        ];
                                        if (0..3).any(|d| i[d] < 0 || i[d] >= g.inp[d] as isize) {
                                            continue;
                                        }
                                        let xo = xc
                                            + i[0] as usize * xs[2]
                                            + i[1] as usize * xs[3]
                                            + i[2] as usize * xs[4];
                                        let wo = wc + a * ws[2] + b * ws[3] + c * ws[4];
                                        // SAFETY: both offsets are inside their shapes.
                                        acc += unsafe { x.load(xo) * w.load(wo) };
                                    }
                                }
                            }
                        }
                        *r = acc;
                    }
                    let mut ow0 = 0;
                    while ow0 < g.out[2] {
                        let len = CHUNK.min(g.out[2] - ow0);
                        let rank = g.out_index(n, k, [od, oh, ow0], &mut idx);
                        ep.apply_along(&idx[..rank], rank - 1, &mut row[ow0..ow0 + len]);
                        ow0 += len;
                    }
                }
            }
        }
    });
}
