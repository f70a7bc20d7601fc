//! Filter taps, K blocks, and weight packing.

use super::*;

/// Weight strides as 5 entries.
pub(super) fn geo_ws(g: &ConvGeometry, w: &RawIn) -> [usize; 5] {
    g.strides5(w.shape())
}

/// Filter taps in (d, h, w) order as dilated (flipped) offsets.
pub(super) fn tap_list(g: &ConvGeometry) -> Vec<[isize; 3]> {
    let mut v = Vec::with_capacity(g.taps());
    for a in 0..g.filt[0] {
        for b in 0..g.filt[1] {
            for c in 0..g.filt[2] {
                v.push([g.tap_offset(0, a), g.tap_offset(1, b), g.tap_offset(2, c)]);
            }
        }
    }
    v
}

/// K blocks of the indirect GEMM: whole taps grouped up to `kc`, or a tap's channels
/// split in near-equal parts when one tap exceeds `kc`.
pub(super) fn indirect_blocks(g: &ConvGeometry, kc: usize) -> Vec<(usize, usize)> {
    let cg = g.cg();
    let taps = g.taps();
    let mut v = Vec::new();
    if cg >= kc {
        let parts = cg.div_ceil(kc);
        for t in 0..taps {
            for p in 0..parts {
                let r = split(cg, parts, p);
                v.push((t * cg + r.start, r.len()));
            }
        }
    } else {
        let per = (kc / cg).max(1);
        let blocks = taps.div_ceil(per);
        for b in 0..blocks {
            let r = split(taps, blocks, b);
            v.push((r.start * cg, r.len() * cg));
        }
    }
    v
}

/// Packs weights as dense `f32` rows `[K][Cg × taps]` in (channel, tap) order.
pub(super) fn pack_weights_rows(g: &ConvGeometry, w: &RawIn, dst: &mut [f32], exec: &Exec) {
    let s = g.strides5(w.shape());
    let (cg, f) = (g.cg(), g.filt);
    let kred = cg * g.taps();
    let rows: Vec<std::sync::Mutex<&mut [f32]>> = dst[..g.k * kred]
        .chunks_mut(kred)
        .map(std::sync::Mutex::new)
        .collect();
    let parts = exec.threads().min(g.k).max(1);
    exec.for_each(parts, |p| {
        for k in split(g.k, parts, p) {
            let mut row = rows[k].lock().unwrap_or_else(|e| e.into_inner());
            let mut q = 0;
            for ci in 0..cg {
                for a in 0..f[0] {
                    for b in 0..f[1] {
                        for c in 0..f[2] {
                            let off = k * s[0] + ci * s[1] + a * s[2] + b * s[3] + c * s[4];
                            // SAFETY: the offset is inside w's shape.
                            row[q] = unsafe { w.load(off) };
                            q += 1;
                        }
                    }
                }
            }
        }
    });
}

/// Packs weights as 16-wide output-channel panels per group: panel `p` of group `g` is
/// `Kred × 16` with K in (tap, channel) order; channels past `Kg` are zero.
pub(super) fn pack_weights_panels(g: &ConvGeometry, w: &RawIn, dst: &mut [f32], exec: &Exec) {
    let s = g.strides5(w.shape());
    let (cg, kg, f) = (g.cg(), g.kg(), g.filt);
    let kred = cg * g.taps();
    let panels = kg.div_ceil(NR);
    let chunks: Vec<std::sync::Mutex<&mut [f32]>> = dst[..g.g * panels * NR * kred]
        .chunks_mut(NR * kred)
        .map(std::sync::Mutex::new)
        .collect();
    let total = g.g * panels;
    let parts = exec.threads().min(total).max(1);
    exec.for_each(parts, |part| {
        for gp in split(total, parts, part) {
            let (grp, p) = (gp / panels, gp % panels);
            let mut panel = chunks[gp].lock().unwrap_or_else(|e| e.into_inner());
            for j in 0..NR {
                let kk = p * NR + j;
                if kk >= kg {
                    for r in 0..kred {
                        panel[r * NR + j] = 0.0;
                    }
                    continue;
                }
                let k = grp * kg + kk;
                let mut r = 0;
                for a in 0..f[0] {
                    for b in 0..f[1] {
                        for c in 0..f[2] {
                            for ci in 0..cg {
                                let off = k * s[0] + ci * s[1] + a * s[2] + b * s[3] + c * s[4];
                                // SAFETY: the offset is inside w's shape.
                                panel[r * NR + j] = unsafe { w.load(off) };
                                r += 1;
                            }
                        }
                    }
                }
            }
        }
    });
}
