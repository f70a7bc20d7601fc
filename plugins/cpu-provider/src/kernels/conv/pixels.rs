//! Output pixels computed on demand, the AVX2 gather packer, and pixel-run helpers.

use super::*;

/// An output pixel: batch offset into x, first input coordinate per dim, and its
/// coordinates.
#[derive(Debug, Clone, Copy)]
pub(super) struct Pix {
    pub(super) n: usize,
    pub(super) o: [usize; 3],
    pub(super) i0: [isize; 3],
}

/// Output pixel `j` (batch-major, then d, h, w) computed on demand: no per-pixel
/// table to allocate on every execution.
#[derive(Debug, Clone, Copy)]
pub(super) struct Pixels {
    pub(super) out: [usize; 3],
    pub(super) stride: [usize; 3],
    pub(super) pad: [usize; 3],
    pub(super) len: usize,
}

impl Pixels {
    pub(super) fn new(geo: &ConvGeometry) -> Self {
        Self {
            out: geo.out,
            stride: geo.stride,
            pad: geo.pad,
            len: geo.npix(),
        }
    }

    pub(super) fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub(super) fn get(&self, j: usize) -> Pix {
        let ow = j % self.out[2];
        let r = j / self.out[2];
        let oh = r % self.out[1];
        let r = r / self.out[1];
        let od = r % self.out[0];
        let n = r / self.out[0];
        let o = [od, oh, ow];
        let i0 = std::array::from_fn(|d| (o[d] * self.stride[d]) as isize - self.pad[d] as isize);
        Pix { n, o, i0 }
    }

    /// Pixels `j..j + M` (the last repeated past the end), one division chain for the
    /// first and carries for the rest.
    #[inline]
    pub(super) fn run<const M: usize>(&self, j: usize) -> [Pix; M] {
        let mut p = self.get(j);
        let last = self.len.saturating_sub(1);
        std::array::from_fn(|i| {
            let this = p;
            if j + i < last {
                p.o[2] += 1;
                p.i0[2] += self.stride[2] as isize;
                for d in (1..3).rev() {
                    if p.o[d] == self.out[d] {
                        p.o[d] = 0;
                        p.i0[d] = -(self.pad[d] as isize);
                        p.o[d - 1] += 1;
                        p.i0[d - 1] += self.stride[d - 1] as isize;
                    }
                }
                if p.o[0] == self.out[0] {
                    p.o[0] = 0;
                    p.i0[0] = -(self.pad[0] as isize);
                    p.n += 1;
                }
            }
            this
        })
    }
}

/// The AVX2 gather im2col packer (see [`Implicit::pack_gather`]).
pub(super) mod gather {
    #[cfg(target_arch = "x86_64")]
    use std::arch::x86_64::*;

    use super::NR;

    /// Whether [`pack`] can run here.
    pub(in crate::kernels::conv) fn available() -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            std::arch::is_x86_feature_detected!("avx2")
        }
        #[cfg(not(target_arch = "x86_64"))]
        false
    }

    /// For each K row `k` (`taps[k]` = offset, row and column of its tap) and column
    /// `j`: `dst[(j / 16) * ps + k * 16 + j % 16] = x[base[j] + off]` when
    /// `0 <= ih[j] + row < h` and `0 <= iw[j] + col < w`, else 0. `kinds[q]` says
    /// whether columns `8q..8q + 8` read consecutive inputs (1), inputs 2 apart (2) or
    /// neither (0); `span` is x's length.
    ///
    /// # Safety
    /// AVX2 available; the tables have a multiple of 16 entries; every in-image read
    /// is inside x; `dst` holds `(cols / 16 - 1) * ps + taps.len() * 16` floats.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    pub(in crate::kernels::conv) unsafe fn pack(
        x: *const f32,
        (ih, iw, base, kinds): (&[i32], &[i32], &[i32], &[u8]),
        taps: &[[i32; 3]],
        (h, w, span): (i32, i32, usize),
        dst: *mut f32,
        ps: usize,
    ) {
        let cols = ih.len();
        // SAFETY: (whole body) table reads stay below `cols`; gathers read only
        // unmasked, in-image lanes; stores per the contract.
        unsafe {
            let hv = _mm256_set1_epi32(h);
            let wv = _mm256_set1_epi32(w);
            let m1 = _mm256_set1_epi32(-1);
            for (k, t) in taps.iter().enumerate() {
                let off = _mm256_set1_epi32(t[0]);
                let tr = _mm256_set1_epi32(t[1]);
                let tc = _mm256_set1_epi32(t[2]);
                let mut j = 0;
                while j < cols {
                    let r = _mm256_add_epi32(_mm256_loadu_si256(ih.as_ptr().add(j).cast()), tr);
                    let c = _mm256_add_epi32(_mm256_loadu_si256(iw.as_ptr().add(j).cast()), tc);
                    let ok = _mm256_and_si256(
                        _mm256_and_si256(_mm256_cmpgt_epi32(r, m1), _mm256_cmpgt_epi32(hv, r)),
                        _mm256_and_si256(_mm256_cmpgt_epi32(c, m1), _mm256_cmpgt_epi32(wv, c)),
                    );
                    let idx =
                        _mm256_add_epi32(_mm256_loadu_si256(base.as_ptr().add(j).cast()), off);
                    let all_in = _mm256_movemask_ps(_mm256_castsi256_ps(ok)) == 0xFF;
                    let first = (*base.get_unchecked(j) + t[0]) as usize;
                    let v = match kinds[j / 8] {
                        1 if all_in => _mm256_loadu_ps(x.add(first)),
                        2 if all_in && first + 16 <= span => {
                            let a = _mm256_loadu_ps(x.add(first));
                            let b = _mm256_loadu_ps(x.add(first + 8));
                            let e = _mm256_shuffle_ps::<0x88>(a, b);
                            _mm256_castpd_ps(_mm256_permute4x64_pd::<0xD8>(_mm256_castps_pd(e)))
                        }
                        _ => _mm256_mask_i32gather_ps::<4>(
                            _mm256_setzero_ps(),
                            x,
                            idx,
                            _mm256_castsi256_ps(ok),
                        ),
                    };
                    _mm256_storeu_ps(dst.add((j / NR) * ps + k * NR + j % NR), v);
                    j += 8;
                }
            }
        }
    }

    /// Never called: [`available`] is false off x86_64.
    ///
    /// # Safety
    /// None needed.
    #[cfg(not(target_arch = "x86_64"))]
    pub(in crate::kernels::conv) unsafe fn pack(
        _x: *const f32,
        _t: (&[i32], &[i32], &[i32], &[u8]),
        _taps: &[[i32; 3]],
        _hw: (i32, i32, usize),
        _dst: *mut f32,
        _ps: usize,
    ) {
        unreachable!("gather packer without AVX2")
    }
}

/// When y's output pixels sit at one stride within an image: `(batch stride, pixel
/// stride, channel stride)` (NCHW, NHWC and the like), so a tile's offsets need no
/// per-pixel index arithmetic.
pub(super) fn y_linear(geo: &ConvGeometry, s: &Shape) -> Option<(usize, usize, usize)> {
    let st = geo.strides5(s);
    let o = geo.out;
    if o[2] < 2 {
        return None;
    }
    let ps = st[4];
    let ok = (o[1] == 1 || st[3] == o[2] * ps) && (o[0] == 1 || st[2] == o[1] * o[2] * ps);
    ok.then_some((st[0], ps, st[1]))
}

/// `ceil(a / s)` for `a >= 0`, `s >= 1`, without a division for strides 1 and 2.
#[inline(always)]
pub(super) fn ceil_div(a: isize, s: isize) -> isize {
    match s {
        1 => a,
        2 => (a + 1) >> 1,
        _ => (a + s - 1) / s,
    }
}

/// Maximal runs of consecutive pixels in `j0..j0 + n` along the innermost output
/// dim: `(first column, length)`.
pub(super) fn runs(pix: &Pixels, j0: usize, n: usize, out: &mut Vec<(usize, usize)>) {
    out.clear();
    // Pixels j0.. stay in one output row for `w - ow` columns.
    let mut j = j0;
    while j < j0 + n {
        let ow = j % pix.out[2];
        let len = (pix.out[2] - ow).min(j0 + n - j);
        out.push((j, len));
        j += len;
    }
}
