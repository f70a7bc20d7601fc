//! Choosing an implementation and running it: [`FpropPlan`].

use std::sync::{Arc, Mutex};

use super::*;

/// The implementation a convolution forward will use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FpropImpl {
    /// Weights-as-A implicit GEMM, any layout and type.
    ImplicitGemm,
    /// Channels-last indirect GEMM (`f32` input with unit channel stride).
    Indirect,
    /// Direct loop.
    Direct,
    /// Winograd F(2×2, 3×3) or F(4×4, 3×3), channels-last `f32` 3×3 stride 1, or
    /// F(2×2, 3×3) at stride 2 (see `winograd.rs`).
    Winograd,
}

/// Whether `w`'s K elements (`Cg × taps`) can be read in place as `f32` rows with unit
/// stride, and in which order: `Some(true)` for (tap, channel), `Some(false)` for
/// (channel, tap).
pub(super) fn weight_rows_in_place(geo: &ConvGeometry, w: &Shape, dtype: DType) -> Option<bool> {
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
    pub(super) weights_in_place: Option<bool>,
    pub(super) threads: usize,
    /// Indirect over filter rows: the input is copied zero-padded and each filter row
    /// (`filt[2] × C` consecutive floats of a channels-last input) is one segment.
    pub(super) rows: bool,
    /// The input is `f32` with unit channel stride (or one channel a group): Winograd
    /// and the indirect GEMM read it in place. Winograd over any other `f32` input runs
    /// on a zero-padded channels-last copy ([`FpropPlan::copies_input`]).
    x_channels_last: bool,
    /// `auto` would take Winograd if the filters' transform were kept between runs.
    wino_fits: bool,
    /// The filters are declared constant ([`FpropPlan::for_constant_weights`]): their
    /// packed or transformed form is kept between runs.
    kept: bool,
}

/// Whether a convolution with few input channels (a network's first layer: 3
/// channels, 7×7) runs [`FpropImpl::Indirect`] over filter rows: an `f32` input in any
/// layout (the zero-padded copy it runs on is channels-last: a channels-first image is
/// transposed on the way), one group, cross-correlation, undilated rows of at least 8
/// floats. Filters stored (tap, channel) are read in place as rows; others are packed
/// in that order, as the indirect GEMM packs them (once, where they are constant).
fn by_filter_rows(geo: &ConvGeometry, x_f32: bool) -> bool {
    x_f32
        && geo.g == 1
        && geo.cg() < 8
        && !geo.flip
        && geo.dil[2] == 1
        && geo.filt[2] > 1
        && geo.cg() * geo.filt[2] >= 8
}

/// Whether an `f32` input whose channels are strided runs the indirect GEMM over a
/// channels-last copy: one group of at least 8 channels, more than one tap.
fn copy_pays(geo: &ConvGeometry, x: DType) -> bool {
    x == DType::F32 && geo.g == 1 && geo.cg() >= 8 && geo.taps() > 1
}

/// Extents of the zero-padded input copy: the padding before, and enough after for
/// every tap of every output pixel.
fn padded_extents(g: &ConvGeometry) -> [usize; 3] {
    std::array::from_fn(|d| {
        (g.pad[d] + g.inp[d]).max((g.out[d] - 1) * g.stride[d] + (g.filt[d] - 1) * g.dil[d] + 1)
    })
}

/// The geometry of a convolution over its zero-padded input copy: the copy's
/// extents, no padding.
fn padded_geometry(g: &ConvGeometry) -> ConvGeometry {
    let mut v = g.clone();
    v.inp = padded_extents(g);
    v.pad = [0; 3];
    v
}

/// The geometry of a filter-row convolution over the padded copy: no padding, each
/// filter row one tap of `filt[2] × C` channels.
fn row_geometry(g: &ConvGeometry) -> ConvGeometry {
    let mut v = padded_geometry(g);
    v.c = g.c * g.filt[2];
    v.filt[2] = 1;
    v
}

/// The padded copy `dst` (geometry `geo` from [`padded_geometry`], strides as
/// [`pad_channels_last`] returned them) as an input tensor of the geometry's rank.
fn padded_view(geo: &ConvGeometry, dst: &[f32], s: [usize; 5]) -> RawIn {
    let lead = 3 - geo.spatial;
    let mut dims = vec![geo.n, geo.c];
    dims.extend_from_slice(&geo.inp[lead..]);
    let mut strides = vec![s[0], s[1]];
    strides.extend_from_slice(&s[2 + lead..]);
    let shape = Shape::new(&dims, &strides);
    assert!(shape.span() <= dst.len(), "padded copy too small");
    // SAFETY: `dst` holds the shape's span (checked above) and is not written while
    // the view is read (the caller holds it borrowed for the kernel's run).
    unsafe { RawIn::from_parts(dst.as_ptr().cast(), DType::F32, shape) }
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
        let w_in_place = weight_rows_in_place(&geo, w.0, w.1);
        let rows = algo != ConvAlgo::Direct && by_filter_rows(&geo, x.1 == DType::F32);
        // A channels-first input runs Winograd on a channels-last copy: the copy costs
        // a pass over the input, the implicit GEMM it replaces 2.25–4× the products.
        let wino = w.1 == DType::F32 && winograd::applies(&geo, x.1 == DType::F32);
        // Where the sixteen transformed filters (16 · C · K floats) stay in cache, or
        // are streamed once per round of phases (`winograd::phased`: above 256 × 256
        // channels, up to 512 × 512).
        let wino_fits = wino && geo.c * geo.k <= 1 << 18 && winograd::pays(&geo);
        let imp = match algo {
            ConvAlgo::Direct => FpropImpl::Direct,
            ConvAlgo::Winograd if wino => FpropImpl::Winograd,
            // Transforming the filters (every execution, unless they are declared
            // constant: `FpropPlan::for_constant_weights`) costs about what 128 output
            // pixels gain.
            ConvAlgo::Auto if wino_fits && geo.npix() >= 128 => FpropImpl::Winograd,
            _ if rows => FpropImpl::Indirect,
            ConvAlgo::Auto if thin => FpropImpl::Direct,
            // Channels-last: pixels are rows of A read through the indirection buffer,
            // weights are packed as B per K block (no im2col, no transposed pixels).
            _ if channels_last && geo.cg() >= 8 => FpropImpl::Indirect,
            // Channels-first with several taps: the same over a channels-last copy,
            // one pass over the input where the implicit GEMM's im2col packs each
            // input pixel once per tap that reads it.
            _ if copy_pays(&geo, x.1) => FpropImpl::Indirect,
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
        Self {
            wino_fits: wino_fits && algo == ConvAlgo::Auto,
            x_channels_last: channels_last,
            weights_in_place: w_in_place,
            geo,
            imp,
            threads: threads.max(1),
            rows,
            kept: false,
        }
    }

    /// The GEMM's blocking: K blocks of up to 512 for the indirect GEMM with the
    /// AVX-512 kernels over at least 16 row tiles of pixels, else
    /// [`Blocking::default`] (256). There the last K block runs as a sweep of the quad
    /// kernel (`gemm::run`), which beats the middle blocks' pair kernel; with 512 more
    /// of the work is in it. ResNet-50 on two threads of a Xeon: its 512- and
    /// 1024-channel 1×1 convolutions and strided 3×3 ones 3–5% faster at batch 1 and
    /// 4–6% at batch 8 (0.25 and 1.2 ms over the network); the 7² ones at batch 1 (9
    /// row tiles, filters from memory) 3–5% slower, hence the row tiles; with AVX2
    /// nothing gained.
    fn blocking(&self) -> Blocking {
        let quad = gemm::pair_isa() == Some(gemm::PairIsa::Avx512);
        // The indirect GEMM's rows are the output pixels.
        let pixel_rows = self.imp == FpropImpl::Indirect;
        if pixel_rows && quad && self.geo.npix() >= 16 * MR {
            Blocking {
                kc: 512,
                pixel_rows,
                ..Blocking::default()
            }
        } else {
            Blocking {
                pixel_rows,
                ..Blocking::default()
            }
        }
    }

    /// Whether the weights are `f32` rows in (tap, channel) order, readable in place
    /// (with one tap, both orders are the same).
    pub(super) fn weight_rows_tap_major(&self) -> bool {
        match self.weights_in_place {
            Some(tap_major) => tap_major || self.geo.taps() == 1,
            None => false,
        }
    }

    /// The plan for filters declared constant (`cpu.constant_weights`), whose packed
    /// or transformed form is kept between runs ([`FpropPlan::run_cached`]): under
    /// `auto`, Winograd also for the small images where transforming the filters on
    /// every run would cost what it saves, unless the direct GEMM is faster there
    /// (with the AVX-512 kernels, where the direct GEMM has at least 48 output tiles
    /// per thread).
    pub fn for_constant_weights(mut self) -> Self {
        self.kept = true;
        if self.wino_fits && self.imp != FpropImpl::Winograd && !self.direct_beats_winograd() {
            return self.with_impl(FpropImpl::Winograd);
        }
        self
    }

    /// Whether a small image's direct GEMM beats Winograd: with the AVX-512 kernels,
    /// where it has at least 48 output tiles (`MR × NR`) per thread. Winograd reads
    /// more filter bytes (F(2×2, 3×3): 16 transformed taps for 9) for 1.7× fewer
    /// multiply-adds, and splits over many threads where the direct GEMM's few row
    /// tiles do not: ResNet-50's 7² × 512-channel 3×3 at batch 1 (9 row tiles × 32
    /// panels) on the 16-core Xeon took 800 / 420 / 359 / 235 µs direct against
    /// 1000 / 560 / 353 / 175 µs Winograd at 2 / 4 / 8 / 16 threads. With AVX2's
    /// half-width multiply-adds, Winograd won at 2 threads too (1450 against 1530 µs).
    /// Where the filters stream ([`winograd::streamed`]: they are read as taps, 9 per
    /// channel pair as the direct GEMM reads them) Winograd wins on every thread count:
    /// those layers on 2 threads of a Zen 4 (AVX-512), 0.78–0.83 ms against 1.12–1.16.
    fn direct_beats_winograd(&self) -> bool {
        let tiles = self.geo.npix().div_ceil(MR) * self.geo.kg().div_ceil(NR);
        gemm::pair_isa() == Some(gemm::PairIsa::Avx512)
            && tiles >= 48 * self.threads
            && !winograd::streams(&self.geo, self.threads)
    }

    /// The output tile edge of the Winograd variant the plan runs: `Some(2)` for
    /// F(2×2, 3×3), `Some(4)` for F(4×4, 3×3) (chosen by the tiles, the filters' size and
    /// the threads);
    /// `None` for the other implementations.
    pub fn winograd_tile(&self) -> Option<usize> {
        (self.imp == FpropImpl::Winograd)
            .then(|| winograd::variant(&self.winograd_geometry(), self.threads, self.kept).m())
    }

    /// Whether the plan runs Winograd with its filters streamed from their taps
    /// (constant filters of 256 × 256 channels or more on a small image, see `winograd.rs`).
    pub fn winograd_streamed(&self) -> bool {
        self.imp == FpropImpl::Winograd
            && self.kept
            && winograd::streams(&self.winograd_geometry(), self.threads)
    }

    /// The plan for a channels-last input whose output is stored channels-first (a
    /// caller's NCHW tensor): the weights-as-A implicit GEMM instead of the indirect
    /// one, whose tiles (output channels × consecutive pixels) are rows of such an
    /// output; the indirect GEMM's (pixels × channels) would scatter every tile over as
    /// many planes as it has channels. Filter-row, Winograd and direct plans are kept.
    pub fn for_channels_first_output(self) -> Self {
        if self.imp == FpropImpl::Indirect && !self.rows {
            return self.with_impl(FpropImpl::ImplicitGemm);
        }
        self
    }

    /// The same plan with another implementation (tests, benchmarks).
    pub fn with_impl(mut self, imp: FpropImpl) -> Self {
        self.imp = imp;
        self.rows &= imp == FpropImpl::Indirect;
        self
    }

    /// Whether the plan runs Winograd or the indirect GEMM on a zero-padded
    /// channels-last copy of its input (an `f32` input whose channels are strided, as
    /// a caller's NCHW image is). The indirect GEMM over filter rows copies its own
    /// way; a 1×1 indirect one reads strided channels in place.
    pub fn copies_input(&self) -> bool {
        match self.imp {
            FpropImpl::Winograd => !self.x_channels_last,
            FpropImpl::Indirect => !self.x_channels_last && !self.rows && self.geo.taps() > 1,
            _ => false,
        }
    }

    /// The geometry the indirect GEMM runs on: over filter rows, over the padded copy,
    /// or the plan's.
    fn indirect_geometry(&self) -> std::borrow::Cow<'_, ConvGeometry> {
        if self.rows {
            std::borrow::Cow::Owned(row_geometry(&self.geo))
        } else {
            self.winograd_geometry()
        }
    }

    /// The geometry Winograd runs on: the plan's, or over the padded copy
    /// ([`FpropPlan::copies_input`]) the copy's extents without padding.
    fn winograd_geometry(&self) -> std::borrow::Cow<'_, ConvGeometry> {
        if self.copies_input() {
            std::borrow::Cow::Owned(padded_geometry(&self.geo))
        } else {
            std::borrow::Cow::Borrowed(&self.geo)
        }
    }

    /// Floats of the zero-padded input copy a filter-row convolution, or Winograd over
    /// a channels-first input, makes.
    fn padded_len(&self) -> usize {
        if !self.rows && !self.copies_input() {
            return 0;
        }
        let p = padded_extents(&self.geo);
        self.geo.n * p.iter().product::<usize>() * self.geo.c
    }

    /// Workspace in `f32` elements.
    pub fn workspace_len(&self) -> usize {
        let g = &self.geo;
        let kred = g.cg() * g.taps();
        match self.imp {
            FpropImpl::Direct => 0,
            FpropImpl::Winograd => {
                self.padded_len()
                    + winograd::workspace_len(&self.winograd_geometry(), self.threads, self.kept)
            }
            FpropImpl::ImplicitGemm => {
                let wpack = if self.weights_in_place.is_some() {
                    0
                } else {
                    g.k * kred
                };
                let kb = gemm::even_k_blocks(kred, self.blocking().kc);
                wpack
                    + gemm::scratch_len(g.kg(), g.npix(), &kb, self.blocking(), self.threads, false)
            }
            FpropImpl::Indirect => {
                let wpack = if self.weight_rows_tap_major() {
                    0
                } else {
                    g.g * g.kg().div_ceil(NR) * NR * kred
                };
                // The K blocks and the zero row of the geometry the GEMM runs on.
                let ig = self.indirect_geometry();
                let kb = indirect_blocks(&ig, self.blocking().kc);
                self.padded_len()
                    + wpack
                    + ig.cg()
                    + gemm::scratch_len(
                        g.npix(),
                        g.kg(),
                        &kb,
                        self.blocking(),
                        self.threads,
                        self.kept,
                    )
            }
        }
    }

    /// Runs `y = conv(x, w)` into the epilogue (whose index space is y's dims).
    ///
    /// # Panics
    /// When `ws` is shorter than [`FpropPlan::workspace_len`] or the tensors do not
    /// match the geometry (internal contracts).
    pub fn run(&self, x: &RawIn, w: &RawIn, ep: &Epilogue, exec: &Exec, ws: &mut [f32]) {
        self.run_cached(x, w, ep, exec, ws, None);
    }

    /// [`FpropPlan::run`], keeping the packed filters in `cache` (when given) for the
    /// next run with the same filter address: the caller promises that the filter
    /// values at that address do not change between the runs. Only the indirect
    /// implementation packs filters that can be kept; the others ignore `cache`.
    ///
    /// # Panics
    /// As [`FpropPlan::run`].
    pub fn run_cached(
        &self,
        x: &RawIn,
        w: &RawIn,
        ep: &Epilogue,
        exec: &Exec,
        ws: &mut [f32],
        cache: Option<&WeightCache>,
    ) {
        assert!(ws.len() >= self.workspace_len(), "conv workspace too small");
        let prepared = Prepared::new(ep);
        match self.imp {
            FpropImpl::Direct => direct(&self.geo, x, w, &prepared, exec),
            FpropImpl::ImplicitGemm => self.run_implicit(x, w, &prepared, exec, ws),
            FpropImpl::Indirect => self.run_indirect(x, w, &prepared, exec, ws, cache),
            FpropImpl::Winograd if self.copies_input() => {
                let (padded, rest) = ws.split_at_mut(self.padded_len());
                let strides = pad_channels_last(&self.geo, x, padded, exec);
                let geo = self.winograd_geometry();
                let copy = padded_view(&geo, padded, strides);
                winograd::run(&geo, &copy, w, &prepared, exec, rest, cache, self.kept)
            }
            FpropImpl::Winograd => {
                winograd::run(&self.geo, x, w, &prepared, exec, ws, cache, self.kept)
            }
        }
    }

    pub(super) fn run_implicit(
        &self,
        x: &RawIn,
        w: &RawIn,
        ep: &Prepared<'_>,
        exec: &Exec,
        ws: &mut [f32],
    ) {
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
            gemm::run(&prob, exec, self.blocking(), rest);
        }
    }

    pub(super) fn run_indirect(
        &self,
        x: &RawIn,
        w: &RawIn,
        ep: &Prepared<'_>,
        exec: &Exec,
        ws: &mut [f32],
        cache: Option<&WeightCache>,
    ) {
        let rows_geo;
        let copied = self.rows || self.copies_input();
        let (g, ws, x_src): (&ConvGeometry, &mut [f32], XSource) = if copied {
            let (padded, rest) = ws.split_at_mut(self.padded_len());
            let strides = pad_channels_last(&self.geo, x, padded, exec);
            rows_geo = self.indirect_geometry().into_owned();
            let src = (SendPtr(padded.as_ptr()), padded.len(), strides);
            (&rows_geo, rest, src)
        } else {
            let src = (
                SendPtr(x.ptr_as::<f32>()),
                x.shape().span(),
                self.geo.strides5(x.shape()),
            );
            (&self.geo, ws, src)
        };
        let kred = g.cg() * g.taps();
        let panels = g.kg().div_ceil(NR);
        let w_addr = w.ptr_as::<f32>() as usize;
        let cached = cache.and_then(|c| c.get(w_addr));
        let direct_w = self.weight_rows_tap_major();
        let wlen = if direct_w {
            0
        } else {
            g.g * panels * NR * kred
        };
        let (wpack, rest) = ws.split_at_mut(wlen);
        let (zeros, rest) = rest.split_at_mut(g.cg());
        zeros.fill(0.0);
        if !direct_w && cached.is_none() {
            // Over filter rows, K is (tap, channel) of the row geometry: the original
            // geometry's (tap, channel) order read through the filters' own strides.
            pack_weights_panels(&self.geo, w, wpack, exec);
        }
        let mut fresh = Vec::new();
        let pix = Pixels::new(g);
        let taps = tap_list(g);
        let blocks = indirect_blocks(g, self.blocking().kc);
        let hw: usize = g.out.iter().product();
        for grp in 0..g.g {
            let mut prob = Indirect {
                geo: g,
                grp,
                x: x_src.0,
                x_span: x_src.1,
                xs: x_src.2,
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
                inside: g.windows_inside(),
                x_lin: x_linear(g, &x_src.2),
                ep,
                ylin: ep.plain_f32_out().and_then(|o| y_linear(g, o.shape())),
                packed: cached.as_ref().map(|c| &c[grp]),
                fused: ep.fused_rows(hw, pix.len(), grp * g.kg(), g.kg()),
            };
            // A kept plan always runs with all of B packed (its workspace has no room
            // to pack it): for the cache, or, without one, for this run only.
            if cached.is_none() && (cache.is_some() || self.kept) {
                let packed = gemm::PackedB::new(&prob, exec, self.blocking());
                prob.packed = Some(&packed);
                gemm::run(&prob, exec, self.blocking(), rest);
                fresh.push(packed);
            } else {
                gemm::run(&prob, exec, self.blocking(), rest);
            }
        }
        if let Some(c) = cache
            && cached.is_none()
        {
            c.put(w_addr, fresh);
        }
    }
}

/// Where the indirect GEMM reads its input: base, span in floats, strides (5 entries).
type XSource = (SendPtr<f32>, usize, [usize; 5]);

/// Channels [`pad_channels_last`] gathers at a time from a channels-first input (the
/// eight rows `gemm::transpose_8_rows` takes).
const CHANNEL_BLOCK: usize = 8;

/// Copies `x` (one group, any layout) into `dst` as a dense zero-padded channels-last
/// `[N][D'][H'][W'][C]` (extents [`padded_extents`]), the threads of `exec` taking
/// rows; returns its strides as 5 entries. A channels-first input's rows go through
/// 8 × 8 transposes.
fn pad_channels_last(g: &ConvGeometry, x: &RawIn, dst: &mut [f32], exec: &Exec) -> [usize; 5] {
    let p = padded_extents(g);
    let c = g.c;
    let strides = [p[0] * p[1] * p[2] * c, 1, p[1] * p[2] * c, p[2] * c, c];
    let xs = g.strides5(x.shape());
    let span = x.shape().span();
    let src = SendPtr(x.ptr_as::<f32>());
    let rows: Vec<std::sync::Mutex<&mut [f32]>> = dst
        .chunks_mut(strides[3])
        .map(std::sync::Mutex::new)
        .collect();
    let parts = exec.threads().min(rows.len()).max(1);
    exec.for_each(parts, |part| {
        for r in split(rows.len(), parts, part) {
            let mut row = rows[r].lock().unwrap_or_else(|e| e.into_inner());
            let (n, dh) = (r / (p[0] * p[1]), r % (p[0] * p[1]));
            let (d, h) = (dh / p[1], dh % p[1]);
            let (Some(id), Some(ih)) = (d.checked_sub(g.pad[0]), h.checked_sub(g.pad[1])) else {
                row.fill(0.0);
                continue;
            };
            if id >= g.inp[0] || ih >= g.inp[1] {
                row.fill(0.0);
                continue;
            }
            // The padding around the row's pixels, then the pixels.
            let (to, len) = (g.pad[2] * c, g.inp[2] * c);
            row[..to].fill(0.0);
            row[to + len..].fill(0.0);
            let at = n * xs[0] + id * xs[2] + ih * xs[3];
            if xs[1] == 1 && xs[4] == c {
                // Dense channels-last pixels: one contiguous run.
                assert!(at + len <= span, "padded copy out of bounds");
                // SAFETY: inside x (checked above); x is only read.
                let run = unsafe { std::slice::from_raw_parts(src.get().add(at), len) };
                row[to..to + len].copy_from_slice(run);
                continue;
            }
            let last = at + (g.inp[2] - 1) * xs[4] + (c - 1) * xs[1];
            assert!(last < span, "padded copy out of bounds");
            let pixels = &mut row[g.pad[2] * c..];
            if c < CHANNEL_BLOCK {
                for iw in 0..g.inp[2] {
                    let at = at + iw * xs[4];
                    for ch in 0..c {
                        // SAFETY: inside x (checked above); x is only read.
                        pixels[iw * c + ch] = unsafe { *src.get().add(at + ch * xs[1]) };
                    }
                }
                continue;
            }
            // Channels-first: blocks of channels, each pixel's block written as one
            // contiguous run while the block's rows are read in order (a pixel at a
            // time across the block, each channel's row once).
            for ch0 in (0..c).step_by(CHANNEL_BLOCK) {
                // The last block overlaps the one before it rather than running short.
                let ch0 = ch0.min(c - CHANNEL_BLOCK);
                let base = at + ch0 * xs[1];
                if xs[4] == 1 {
                    let to = &mut pixels[ch0..];
                    assert!((g.inp[2] - 1) * c + CHANNEL_BLOCK <= to.len());
                    // SAFETY: rows `k < 8` of `inp[2]` floats from `base` end at
                    // `last` at most, inside x (checked above), which is only read;
                    // pixel `iw`'s 8 channels lie inside this thread's row (checked).
                    unsafe {
                        gemm::transpose_8_rows(
                            src.get().add(base),
                            xs[1],
                            g.inp[2],
                            to.as_mut_ptr(),
                            c,
                        );
                    }
                    continue;
                }
                for iw in 0..g.inp[2] {
                    let p = base + iw * xs[4];
                    let block: [f32; CHANNEL_BLOCK] = std::array::from_fn(|k| {
                        // SAFETY: inside x (checked above); x is only read.
                        unsafe { *src.get().add(p + k * xs[1]) }
                    });
                    pixels[iw * c + ch0..iw * c + ch0 + CHANNEL_BLOCK].copy_from_slice(&block);
                }
            }
        }
    });
    strides
}

/// Packed filters kept between runs of one convolution whose filters do not change
/// (the CPU engine's `cpu.constant_weights` knob): one [`gemm::PackedB`] per group
/// (or, for Winograd, the transformed filters), tagged with the filter address they
/// were made from. A run with the same address
/// reuses them; another address packs again and replaces them. Safe to share between
/// threads running the same plan (a run that finds nothing packs for itself).
#[derive(Debug, Default)]
pub struct WeightCache {
    entry: Mutex<Option<(usize, Arc<Vec<gemm::PackedB>>)>>,
    /// Winograd's transformed filters in their packed panels, by filter address.
    transformed: Mutex<Option<(usize, Arc<KeptBuf>)>>,
}

impl WeightCache {
    /// The packed filters for filter address `addr`, if kept.
    fn get(&self, addr: usize) -> Option<Arc<Vec<gemm::PackedB>>> {
        let entry = self.entry.lock().unwrap_or_else(|e| e.into_inner());
        entry
            .as_ref()
            .filter(|(a, _)| *a == addr)
            .map(|(_, p)| Arc::clone(p))
    }

    fn put(&self, addr: usize, packed: Vec<gemm::PackedB>) {
        let mut entry = self.entry.lock().unwrap_or_else(|e| e.into_inner());
        *entry = Some((addr, Arc::new(packed)));
    }

    /// The Winograd-transformed filters for filter address `addr`, if kept.
    pub(super) fn transformed(&self, addr: usize) -> Option<Arc<KeptBuf>> {
        let entry = self.transformed.lock().unwrap_or_else(|e| e.into_inner());
        entry
            .as_ref()
            .filter(|(a, _)| *a == addr)
            .map(|(_, p)| Arc::clone(p))
    }

    pub(super) fn put_transformed(&self, addr: usize, u: Arc<KeptBuf>) {
        let mut entry = self.transformed.lock().unwrap_or_else(|e| e.into_inner());
        *entry = Some((addr, u));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Constant filters of a small image (7² × 512 channels, ResNet-50's last 3×3 at
    /// batch 1: 9 row tiles × 32 panels of direct GEMM) go to Winograd F(4×4) with
    /// the filters streamed on every thread count (where the CPU has the pair kernels
    /// it needs); 192 × 192 channels (not streamed) stay on the direct GEMM with the
    /// AVX-512 kernels where it has at least 48 output tiles per thread.
    #[test]
    fn constant_filters_of_small_images_take_winograd_where_it_wins() {
        // A 7² 3 × 3 convolution of `c` channels under `auto`.
        let plan = |c: usize, threads: usize| {
            let geo = ConvGeometry::new(
                &[1, c, 7, 7],
                &[c, c, 3, 3],
                &[1, c, 7, 7],
                &ConvParams::simple(2, 1, 1),
            )
            .unwrap();
            let x = Shape::channels_last(&[1, c, 7, 7]);
            let w = Shape::packed(&[c, c, 3, 3]);
            FpropPlan::new(
                geo,
                (&x, DType::F32),
                (&w, DType::F32),
                ConvAlgo::Auto,
                threads,
            )
        };
        for threads in [2, 4, 8, 16] {
            let plan = plan(512, threads);
            // 49 pixels: Auto alone keeps the direct GEMM.
            assert_eq!(plan.imp, FpropImpl::Indirect, "{threads} threads");
            let kept = plan.for_constant_weights();
            let avx512 = gemm::pair_isa() == Some(gemm::PairIsa::Avx512);
            if gemm::pair_isa().is_some() && winograd::streaming_pays() {
                assert_eq!(kept.imp, FpropImpl::Winograd, "{threads} threads");
                assert!(kept.winograd_streamed(), "{threads} threads");
                assert_eq!(kept.winograd_tile(), Some(4), "{threads} threads");
            } else if gemm::pair_isa().is_some() && !(avx512 && threads < 8) {
                // Kept transformed: F(2×2), from 8 threads (288 output tiles) with
                // AVX-512.
                assert_eq!(kept.imp, FpropImpl::Winograd, "{threads} threads");
                assert!(!kept.winograd_streamed(), "{threads} threads");
                assert_eq!(kept.winograd_tile(), Some(2), "{threads} threads");
            } else {
                assert_eq!(kept.imp, FpropImpl::Indirect, "{threads} threads");
            }
        }
        // 192 channels: the direct GEMM has 9 row tiles × 12 panels.
        for threads in [2, 3] {
            let plan = plan(192, threads).for_constant_weights();
            let want = match gemm::pair_isa() {
                Some(gemm::PairIsa::Avx512) if threads < 3 => FpropImpl::Indirect,
                Some(_) => FpropImpl::Winograd,
                None => FpropImpl::Indirect,
            };
            assert_eq!(plan.imp, want, "{threads} threads");
            assert!(!plan.winograd_streamed(), "{threads} threads");
        }
    }

    /// The indirect GEMM takes K blocks of 512 with the AVX-512 kernels over at least
    /// 16 row tiles (1024 → 256 at 14²: 33), 256 over fewer (at 7²: 9) and elsewhere.
    #[test]
    fn k_blocks_of_512_where_the_quad_sweep_meets_enough_row_tiles() {
        for (hw, want512) in [(14, true), (7, false)] {
            let geo = ConvGeometry::new(
                &[1, 1024, hw, hw],
                &[256, 1024, 1, 1],
                &[1, 256, hw, hw],
                &ConvParams::simple(2, 0, 1),
            )
            .unwrap();
            let x = Shape::channels_last(&[1, 1024, hw, hw]);
            let w = Shape::packed(&[256, 1024, 1, 1]);
            let plan = FpropPlan::new(geo, (&x, DType::F32), (&w, DType::F32), ConvAlgo::Auto, 2);
            assert_eq!(plan.imp, FpropImpl::Indirect);
            let avx512 = gemm::pair_isa() == Some(gemm::PairIsa::Avx512);
            let kc = if want512 && avx512 { 512 } else { 256 };
            assert_eq!(plan.blocking().kc, kc, "{hw}²");
            // Four K blocks of 256 or two of 512.
            let blocks = indirect_blocks(&plan.geo, plan.blocking().kc);
            assert_eq!(blocks.len(), 1024 / kc, "{hw}²");
        }
    }
}
