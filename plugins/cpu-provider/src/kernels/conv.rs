//! Convolution forward: geometry, algorithm choice, and three implementations.
//!
//! * [`FpropImpl::ImplicitGemm`]: `Y[Cout × pixels] = W[Cout × K] · im2col[K × pixels]`
//!   on the [`gemm`] engine. Weight rows are A (packed by the engine, once per run when
//!   there are many pixels); im2col columns are packed per K block straight from the
//!   input (B): whole pixel rows for 1×1 stride-1 convolutions (no im2col at all),
//!   else AVX2 masked gathers over per-column tables, with plain loads for in-image
//!   runs of 8 (stride 1 and 2). The epilogue runs on each finished tile. Works for
//!   every layout and element type.
//! * [`FpropImpl::Indirect`]: channels-last `f32` inputs, and 1×1 `f32` convolutions
//!   with fewer pixels than output channels in any layout.
//!   `Y[pixels × Cout] = X̃[pixels × K] · Wᵀ[K × Cout]`, where the rows of X̃ are
//!   never formed: the engine packs each filter tap's input pixel through a pointer
//!   (an indirection buffer, zero row for padding); weights stored as (tap, channel)
//!   rows are packed per K block straight from the tensor (else once per execution).
//! * [`FpropImpl::Direct`]: a straightforward loop for what GEMMs do badly (depthwise
//!   and other thin grouped convolutions) and as the always-available fallback.
//!
//! Weights are never cached across executions (their values arrive with each
//! execute); all packing happens inside `run`, in the workspace.
//!
//! Problems of 1 to 3 spatial dimensions are handled as 3-D with size-1 dimensions.
//! Convolution mode (flipped filter) is handled by reading filter taps in reverse.

use super::elementwise::{CHUNK, Epilogue, Prepared};
use super::exec::{Exec, split};
use super::gemm::{self, Blocking, GemmProblem, MR, NR, TILE};
use crate::tensor::{DType, Elem, RawIn, Shape};
use half::{bf16, f16};

/// Whether the filter is applied flipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConvMode {
    /// The deep-learning convolution (no flip).
    CrossCorrelation,
    /// True convolution (filter flipped in every spatial dimension).
    Convolution,
}

/// Padding, stride, dilation and mode, one entry per spatial dimension.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConvParams {
    /// Padding before each spatial dimension.
    pub pre_padding: Vec<usize>,
    /// Padding after each spatial dimension.
    pub post_padding: Vec<usize>,
    /// Stride.
    pub stride: Vec<usize>,
    /// Dilation.
    pub dilation: Vec<usize>,
    /// Mode.
    pub mode: ConvMode,
}

impl ConvParams {
    /// Symmetric padding `pad`, stride `stride`, dilation 1, cross-correlation, over
    /// `spatial` dimensions.
    pub fn simple(spatial: usize, pad: usize, stride: usize) -> Self {
        Self {
            pre_padding: vec![pad; spatial],
            post_padding: vec![pad; spatial],
            stride: vec![stride; spatial],
            dilation: vec![1; spatial],
            mode: ConvMode::CrossCorrelation,
        }
    }
}

/// How to run a convolution (the `cpu.conv_algo` knob).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ConvAlgo {
    /// Choose per shape.
    #[default]
    Auto,
    /// A GEMM-based implementation.
    Gemm,
    /// The direct loop.
    Direct,
}

impl ConvAlgo {
    /// The algorithm a `cpu.conv_algo` value names (`auto`, `gemm`, `direct`).
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "auto" => Self::Auto,
            "gemm" => Self::Gemm,
            "direct" => Self::Direct,
            _ => return None,
        })
    }
}

/// A normalized convolution problem: batch `n`, `c` input and `k` output channels in
/// `g` groups, 3 spatial dims (missing leading ones have extent 1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConvGeometry {
    /// Batch.
    pub n: usize,
    /// Input channels.
    pub c: usize,
    /// Output channels.
    pub k: usize,
    /// Groups.
    pub g: usize,
    /// Input spatial extents (D, H, W).
    pub inp: [usize; 3],
    /// Filter extents.
    pub filt: [usize; 3],
    /// Output extents.
    pub out: [usize; 3],
    /// Padding before.
    pub pad: [usize; 3],
    /// Stride.
    pub stride: [usize; 3],
    /// Dilation.
    pub dil: [usize; 3],
    /// Convolution mode: taps are read flipped.
    pub flip: bool,
    /// Number of spatial dimensions of the tensors (1..=3).
    pub spatial: usize,
}

impl ConvGeometry {
    /// Checks `x` `[N, C, spatial...]`, `w` `[K, C/G, filter...]` and `y`
    /// `[N, K, out...]` against `p` and normalizes.
    ///
    /// # Errors
    /// A message saying which extent or parameter does not fit.
    pub fn new(x: &[usize], w: &[usize], y: &[usize], p: &ConvParams) -> Result<Self, String> {
        let rank = x.len();
        if !(3..=5).contains(&rank) || w.len() != rank || y.len() != rank {
            return Err(format!(
                "convolution needs x, w and y of one rank in 3..=5, got {}, {} and {}",
                x.len(),
                w.len(),
                y.len()
            ));
        }
        let spatial = rank - 2;
        for (name, v) in [
            ("pre_padding", &p.pre_padding),
            ("post_padding", &p.post_padding),
            ("stride", &p.stride),
            ("dilation", &p.dilation),
        ] {
            if v.len() != spatial {
                return Err(format!(
                    "{name} has {} entries for {spatial} spatial dimensions",
                    v.len()
                ));
            }
        }
        if p.stride.contains(&0) || p.dilation.contains(&0) {
            return Err("stride and dilation must be positive".into());
        }
        let (n, c, k, cg) = (x[0], x[1], w[0], w[1]);
        if y[0] != n || y[1] != k {
            return Err(format!(
                "y dims {y:?} do not match batch {n} and {k} output channels"
            ));
        }
        if c % cg != 0 {
            return Err(format!(
                "{c} input channels are not a multiple of the filter's {cg}"
            ));
        }
        let g = c / cg;
        if k % g != 0 {
            return Err(format!(
                "{k} output channels are not divisible into {g} groups"
            ));
        }
        let lead = 3 - spatial;
        let mut geo = Self {
            n,
            c,
            k,
            g,
            inp: [1; 3],
            filt: [1; 3],
            out: [1; 3],
            pad: [0; 3],
            stride: [1; 3],
            dil: [1; 3],
            flip: p.mode == ConvMode::Convolution,
            spatial,
        };
        for s in 0..spatial {
            let d = lead + s;
            geo.inp[d] = x[2 + s];
            geo.filt[d] = w[2 + s];
            geo.out[d] = y[2 + s];
            geo.pad[d] = p.pre_padding[s];
            geo.stride[d] = p.stride[s];
            geo.dil[d] = p.dilation[s];
            let span = p.dilation[s] * (w[2 + s] - 1) + 1;
            let padded = x[2 + s] + p.pre_padding[s] + p.post_padding[s];
            if padded < span {
                return Err(format!(
                    "spatial dim {s}: padded input {padded} is smaller than the dilated filter {span}"
                ));
            }
            let expect = (padded - span) / p.stride[s] + 1;
            if expect != y[2 + s] {
                return Err(format!(
                    "spatial dim {s}: output extent {} but the geometry gives {expect}",
                    y[2 + s]
                ));
            }
        }
        Ok(geo)
    }

    /// Input channels per group.
    pub fn cg(&self) -> usize {
        self.c / self.g
    }

    /// Output channels per group.
    pub fn kg(&self) -> usize {
        self.k / self.g
    }

    /// Whether every filter tap of every output pixel lands inside the input.
    pub fn reads_no_padding(&self) -> bool {
        (0..3).all(|d| {
            self.pad[d] == 0
                && (self.out[d] - 1) * self.stride[d] + (self.filt[d] - 1) * self.dil[d]
                    < self.inp[d]
        })
    }

    /// Filter taps.
    pub fn taps(&self) -> usize {
        self.filt.iter().product()
    }

    /// Output pixels over the whole batch.
    pub fn npix(&self) -> usize {
        self.n * self.out.iter().product::<usize>()
    }

    /// Multiply-adds times two.
    pub fn flops(&self) -> f64 {
        2.0 * self.npix() as f64 * self.k as f64 * (self.cg() * self.taps()) as f64
    }

    /// Strides of a `[N|K, C, spatial...]` tensor as 5 entries (missing spatial: 0).
    pub(crate) fn strides5(&self, s: &Shape) -> [usize; 5] {
        let mut out = [0; 5];
        out[0] = s.strides[0];
        out[1] = s.strides[1];
        let lead = 3 - self.spatial;
        for i in 0..self.spatial {
            out[2 + lead + i] = s.strides[2 + i];
        }
        out
    }

    /// Offset (dilated, flipped in convolution mode) of filter tap `t` along dim `d`.
    fn tap_offset(&self, d: usize, t: usize) -> isize {
        let t = if self.flip { self.filt[d] - 1 - t } else { t };
        (t * self.dil[d]) as isize
    }

    /// The logical index `[n, ch, spatial...]` of output pixel `(n, od, oh, ow)`.
    fn out_index(&self, n: usize, ch: usize, o: [usize; 3], idx: &mut [usize; 5]) -> usize {
        idx[0] = n;
        idx[1] = ch;
        let lead = 3 - self.spatial;
        idx[2..2 + self.spatial].copy_from_slice(&o[lead..]);
        2 + self.spatial
    }
}

/// An output pixel: batch offset into x, first input coordinate per dim, and its
/// coordinates.
#[derive(Debug, Clone, Copy)]
struct Pix {
    n: usize,
    o: [usize; 3],
    i0: [isize; 3],
}

/// Output pixel `j` (batch-major, then d, h, w) computed on demand: no per-pixel
/// table to allocate on every execution.
#[derive(Debug, Clone, Copy)]
struct Pixels {
    out: [usize; 3],
    stride: [usize; 3],
    pad: [usize; 3],
    len: usize,
}

impl Pixels {
    fn new(geo: &ConvGeometry) -> Self {
        Self {
            out: geo.out,
            stride: geo.stride,
            pad: geo.pad,
            len: geo.npix(),
        }
    }

    fn len(&self) -> usize {
        self.len
    }

    #[inline]
    fn get(&self, j: usize) -> Pix {
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
}

/// The AVX2 gather im2col packer (see [`Implicit::pack_gather`]).
mod gather {
    #[cfg(target_arch = "x86_64")]
    use std::arch::x86_64::*;

    use super::NR;

    /// Whether [`pack`] can run here.
    pub(super) fn available() -> bool {
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
    pub(super) unsafe fn pack(
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
    pub(super) unsafe fn pack(
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
fn y_linear(geo: &ConvGeometry, s: &Shape) -> Option<(usize, usize, usize)> {
    let st = geo.strides5(s);
    let o = geo.out;
    if o[2] < 2 {
        return None;
    }
    let ps = st[4];
    let ok = (o[1] == 1 || st[3] == o[2] * ps) && (o[0] == 1 || st[2] == o[1] * o[2] * ps);
    ok.then_some((st[0], ps, st[1]))
}

/// Copies `src` to `dst[q * stride]`.
///
/// # Safety
/// `dst` is valid for writes at `q * stride`, `q < src.len()`, that no other thread
/// touches meanwhile.
#[inline(always)]
unsafe fn store_strided(dst: *mut f32, stride: usize, src: &[f32]) {
    // SAFETY: per the function's contract.
    unsafe {
        if stride == 1 {
            gemm::copy_short(std::slice::from_raw_parts_mut(dst, src.len()), src);
        } else {
            for (q, &v) in src.iter().enumerate() {
                *dst.add(q * stride) = v;
            }
        }
    }
}

/// `ceil(a / s)` for `a >= 0`, `s >= 1`, without a division for strides 1 and 2.
#[inline(always)]
fn ceil_div(a: isize, s: isize) -> isize {
    match s {
        1 => a,
        2 => (a + 1) >> 1,
        _ => (a + s - 1) / s,
    }
}

/// Maximal runs of consecutive pixels in `j0..j0 + n` along the innermost output
/// dim: `(first column, length)`.
fn runs(pix: &Pixels, j0: usize, n: usize, out: &mut Vec<(usize, usize)>) {
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

/// The implementation a convolution forward will use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FpropImpl {
    /// Weights-as-A implicit GEMM, any layout and type.
    ImplicitGemm,
    /// Channels-last indirect GEMM (`f32` input with unit channel stride).
    Indirect,
    /// Direct loop.
    Direct,
}

/// Whether `w`'s K elements (`Cg × taps`) can be read in place as `f32` rows with unit
/// stride, and in which order: `Some(true)` for (tap, channel), `Some(false)` for
/// (channel, tap).
fn weight_rows_in_place(geo: &ConvGeometry, w: &Shape, dtype: DType) -> Option<bool> {
    if dtype != DType::F32 {
        return None;
    }
    let s = geo.strides5(w);
    let f = geo.filt;
    let cg = geo.cg();
    // Missing spatial dims have stride 0 and extent 1: treat them as fitting.
    let fits = |d: usize, want: usize| f[d - 2] == 1 || s[d] == want;
    let channel_major = s[1] == f[0] * f[1] * f[2] || cg == 1;
    if fits(4, 1) && fits(3, f[2]) && fits(2, f[1] * f[2]) && channel_major {
        return Some(false);
    }
    if (s[1] == 1 || cg == 1) && fits(4, cg) && fits(3, f[2] * cg) && fits(2, f[1] * f[2] * cg) {
        return Some(true);
    }
    None
}

/// A planned convolution forward: the implementation, and the workspace it needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FpropPlan {
    /// The geometry.
    pub geo: ConvGeometry,
    /// The implementation.
    pub imp: FpropImpl,
    blocking: Blocking,
    weights_in_place: Option<bool>,
    threads: usize,
}

impl FpropPlan {
    /// Chooses an implementation for `x` and `w` (shapes and types) under `algo`.
    pub fn new(
        geo: ConvGeometry,
        x: (&Shape, DType),
        w: (&Shape, DType),
        algo: ConvAlgo,
        threads: usize,
    ) -> Self {
        let xs = geo.strides5(x.0);
        let thin = geo.cg() * geo.taps() < 8 || geo.kg() < 4;
        let channels_last = x.1 == DType::F32 && (xs[1] == 1 || geo.cg() == 1);
        let imp = match algo {
            ConvAlgo::Direct => FpropImpl::Direct,
            ConvAlgo::Auto if thin => FpropImpl::Direct,
            // Channels-last: pixels are rows of A read through the indirection buffer,
            // weights are packed as B per K block (no im2col, no transposed pixels).
            _ if channels_last && geo.cg() >= 8 => FpropImpl::Indirect,
            // 1×1 with fewer pixels than output channels: pixels as rows (their
            // channels strided) and the weights as B avoid narrow column panels and
            // packing im2col twice; needs every pixel inside the input (no padding).
            _ if x.1 == DType::F32
                && geo.taps() == 1
                && geo.cg() >= 8
                && geo.npix() < geo.kg()
                && geo.reads_no_padding() =>
            {
                FpropImpl::Indirect
            }
            _ => FpropImpl::ImplicitGemm,
        };
        let blocking = Blocking::default();
        Self {
            weights_in_place: weight_rows_in_place(&geo, w.0, w.1),
            geo,
            imp,
            blocking,
            threads: threads.max(1),
        }
    }

    /// Whether the weights are `f32` rows in (tap, channel) order, readable in place
    /// (with one tap, both orders are the same).
    fn weight_rows_tap_major(&self) -> bool {
        match self.weights_in_place {
            Some(tap_major) => tap_major || self.geo.taps() == 1,
            None => false,
        }
    }

    /// The same plan with another implementation (tests, benchmarks).
    pub fn with_impl(mut self, imp: FpropImpl) -> Self {
        self.imp = imp;
        self
    }

    /// Workspace in `f32` elements.
    pub fn workspace_len(&self) -> usize {
        let g = &self.geo;
        let kred = g.cg() * g.taps();
        match self.imp {
            FpropImpl::Direct => 0,
            FpropImpl::ImplicitGemm => {
                let wpack = if self.weights_in_place.is_some() {
                    0
                } else {
                    g.k * kred
                };
                let kb = kred.div_ceil(self.blocking.kc).max(1);
                wpack + gemm::scratch_len(g.kg(), g.npix(), kred, kb, self.blocking, self.threads)
            }
            FpropImpl::Indirect => {
                let wpack = if self.weight_rows_tap_major() {
                    0
                } else {
                    g.g * g.kg().div_ceil(NR) * NR * kred
                };
                let kb = indirect_blocks(g, self.blocking.kc).len();
                wpack
                    + g.cg()
                    + gemm::scratch_len(g.npix(), g.kg(), kred, kb, self.blocking, self.threads)
            }
        }
    }

    /// Runs `y = conv(x, w)` into the epilogue (whose index space is y's dims).
    ///
    /// # Panics
    /// When `ws` is shorter than [`FpropPlan::workspace_len`] or the tensors do not
    /// match the geometry (internal contracts).
    pub fn run(&self, x: &RawIn, w: &RawIn, ep: &Epilogue, exec: &Exec, ws: &mut [f32]) {
        assert!(ws.len() >= self.workspace_len(), "conv workspace too small");
        let prepared = Prepared::new(ep);
        match self.imp {
            FpropImpl::Direct => direct(&self.geo, x, w, &prepared, exec),
            FpropImpl::ImplicitGemm => self.run_implicit(x, w, &prepared, exec, ws),
            FpropImpl::Indirect => self.run_indirect(x, w, &prepared, exec, ws),
        }
    }

    fn run_implicit(&self, x: &RawIn, w: &RawIn, ep: &Prepared<'_>, exec: &Exec, ws: &mut [f32]) {
        let g = &self.geo;
        let kred = g.cg() * g.taps();
        let ws_w = geo_ws(g, w);
        let (tap_major, a_base, row_stride, rest): (bool, *const f32, usize, &mut [f32]) =
            match self.weights_in_place {
                Some(tap_major) => (tap_major, w.ptr_as::<f32>(), ws_w[0], ws),
                None => {
                    let (pack, rest) = ws.split_at_mut(g.k * kred);
                    pack_weights_rows(g, w, pack, exec);
                    (false, pack.as_ptr(), kred, rest)
                }
            };
        let xs = g.strides5(x.shape());
        let mut k_coff = Vec::with_capacity(kred);
        let mut k_tap = Vec::with_capacity(kred);
        let taps = tap_list(g);
        if tap_major {
            for t in &taps {
                for ci in 0..g.cg() {
                    k_coff.push(ci * xs[1]);
                    k_tap.push(*t);
                }
            }
        } else {
            for ci in 0..g.cg() {
                for t in &taps {
                    k_coff.push(ci * xs[1]);
                    k_tap.push(*t);
                }
            }
        }
        let pix = Pixels::new(g);
        for grp in 0..g.g {
            let prob = Implicit {
                geo: g,
                grp,
                x,
                xs,
                a_base: SendPtr(a_base),
                row_stride,
                k_coff: &k_coff,
                k_tap: &k_tap,
                pix: &pix,
                ep,
                ylin: ep.plain_f32_out().and_then(|o| y_linear(g, o.shape())),
            };
            gemm::run(&prob, exec, self.blocking, rest);
        }
    }

    fn run_indirect(&self, x: &RawIn, w: &RawIn, ep: &Prepared<'_>, exec: &Exec, ws: &mut [f32]) {
        let g = &self.geo;
        let kred = g.cg() * g.taps();
        let panels = g.kg().div_ceil(NR);
        let direct_w = self.weight_rows_tap_major();
        let wlen = if direct_w {
            0
        } else {
            g.g * panels * NR * kred
        };
        let (wpack, rest) = ws.split_at_mut(wlen);
        let (zeros, rest) = rest.split_at_mut(g.cg());
        zeros.fill(0.0);
        if !direct_w {
            pack_weights_panels(g, w, wpack, exec);
        }
        let pix = Pixels::new(g);
        let taps = tap_list(g);
        let blocks = indirect_blocks(g, self.blocking.kc);
        for grp in 0..g.g {
            let prob = Indirect {
                geo: g,
                grp,
                x: SendPtr(x.ptr_as::<f32>()),
                x_span: x.shape().span(),
                xs: g.strides5(x.shape()),
                zeros: SendPtr(zeros.as_ptr()),
                wpack: if direct_w {
                    &[]
                } else {
                    &wpack[grp * panels * NR * kred..(grp + 1) * panels * NR * kred]
                },
                w_rows: direct_w.then(|| {
                    (
                        SendPtr(w.ptr_as::<f32>()),
                        geo_ws(g, w)[0],
                        w.shape().span(),
                    )
                }),
                taps: &taps,
                blocks: &blocks,
                pix: &pix,
                ep,
                ylin: ep.plain_f32_out().and_then(|o| y_linear(g, o.shape())),
            };
            gemm::run(&prob, exec, self.blocking, rest);
        }
    }
}

/// Weight strides as 5 entries.
fn geo_ws(g: &ConvGeometry, w: &RawIn) -> [usize; 5] {
    g.strides5(w.shape())
}

/// Filter taps in (d, h, w) order as dilated (flipped) offsets.
fn tap_list(g: &ConvGeometry) -> Vec<[isize; 3]> {
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
fn indirect_blocks(g: &ConvGeometry, kc: usize) -> Vec<(usize, usize)> {
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

/// A pointer that may be shared between threads (read-only data that outlives them).
#[derive(Debug, Clone, Copy)]
struct SendPtr<T>(*const T);
// SAFETY: only used for read-only buffers that outlive the parallel section.
unsafe impl<T> Send for SendPtr<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for SendPtr<T> {}

/// Packs weights as dense `f32` rows `[K][Cg × taps]` in (channel, tap) order.
fn pack_weights_rows(g: &ConvGeometry, w: &RawIn, dst: &mut [f32], exec: &Exec) {
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
fn pack_weights_panels(g: &ConvGeometry, w: &RawIn, dst: &mut [f32], exec: &Exec) {
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

/// Weights-as-A implicit GEMM for one group.
struct Implicit<'a> {
    geo: &'a ConvGeometry,
    grp: usize,
    x: &'a RawIn,
    xs: [usize; 5],
    a_base: SendPtr<f32>,
    row_stride: usize,
    k_coff: &'a [usize],
    k_tap: &'a [[isize; 3]],
    pix: &'a Pixels,
    ep: &'a Prepared<'a>,
    /// [`y_linear`] of the plain `f32` output, if any (worked out once).
    ylin: Option<(usize, usize, usize)>,
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
                    unsafe { store_strided(y.add(base + i * cs), ps, src) };
                }
                j += len;
            }
            return;
        }
        let mut rs = Vec::with_capacity(4);
        runs(self.pix, j0, nr, &mut rs);
        let mut idx = [0usize; 5];
        if let Some(out) = self.ep.plain_f32_out() {
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
                    unsafe {
                        let dst = y.add(base + i * cs);
                        if ws == 1 {
                            gemm::copy_short(std::slice::from_raw_parts_mut(dst, len), src);
                        } else {
                            for (q, &v) in src.iter().enumerate() {
                                *dst.add(q * ws) = v;
                            }
                        }
                    }
                }
            }
            return;
        }
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
const PREFETCH_ROWS: usize = 3;

impl Implicit<'_> {
    /// Whether B is just x's `[C][pixels]` rows per image: 1×1 filter, stride 1, no
    /// padding, pixels contiguous with unit stride (NCHW).
    fn pointwise_rows(&self) -> bool {
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
    fn pack_pointwise(&self, k0: usize, kc: usize, j0: usize, nc: usize, dst: &mut [f32]) {
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
    fn gather_ok(&self) -> bool {
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
    fn pack_gather(&self, k0: usize, kc: usize, j0: usize, nc: usize, dst: &mut [f32]) {
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
    fn pack_f32(&self, k0: usize, kc: usize, j0: usize, nc: usize, dst: &mut [f32]) {
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

    fn pack<T: Elem>(&self, k0: usize, kc: usize, j0: usize, nc: usize, dst: &mut [f32]) {
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

/// Channels-last indirect GEMM for one group.
struct Indirect<'a> {
    geo: &'a ConvGeometry,
    grp: usize,
    x: SendPtr<f32>,
    x_span: usize,
    xs: [usize; 5],
    zeros: SendPtr<f32>,
    wpack: &'a [f32],
    /// Weights read in place as (tap, channel) rows: base, row stride, span.
    w_rows: Option<(SendPtr<f32>, usize, usize)>,
    taps: &'a [[isize; 3]],
    blocks: &'a [(usize, usize)],
    pix: &'a Pixels,
    ep: &'a Prepared<'a>,
    /// [`y_linear`] of the plain `f32` output, if any (worked out once).
    ylin: Option<(usize, usize, usize)>,
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
        for s in 0..nseg {
            let tap = self.taps[tap0 + s];
            for i in 0..MR {
                let px = &self.pix.get(i0 + i.min(mr - 1));
                let c = [px.i0[0] + tap[0], px.i0[1] + tap[1], px.i0[2] + tap[2]];
                let inside = (0..3).all(|d| c[d] >= 0 && c[d] < g.inp[d] as isize);
                let ptr = if inside {
                    let off = px.n * self.xs[0]
                        + cbase
                        + c[0] as usize * self.xs[2]
                        + c[1] as usize * self.xs[3]
                        + c[2] as usize * self.xs[4];
                    assert!(
                        off + (seg_len - 1) * ks < self.x_span,
                        "indirect row out of bounds"
                    );
                    self.x.0.wrapping_add(off)
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
                unsafe { store_strided(y.add(base), cs, &tile[i * NR..i * NR + nr]) };
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
                unsafe {
                    let dst = y.add(base);
                    if cs == 1 {
                        gemm::copy_short(std::slice::from_raw_parts_mut(dst, nr), src);
                    } else {
                        for (q, &v) in src.iter().enumerate() {
                            *dst.add(q * cs) = v;
                        }
                    }
                }
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

/// The direct loop: one task per (image, output channel) range, one output row at a
/// time through the epilogue.
fn direct(g: &ConvGeometry, x: &RawIn, w: &RawIn, ep: &Prepared<'_>, exec: &Exec) {
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
