//! The convolution problem: parameters, algorithm choice and normalized geometry.

use hipdnn_flatbuffers_sdk::model::ConvGeometryRef;
use hipdnn_flatbuffers_sdk::wire::ConvMode as WireConvMode;

use super::*;

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
    /// The parameters of a graph node's convolution geometry.
    ///
    /// # Errors
    /// A negative padding, stride or dilation; an unknown mode.
    pub fn from_wire(g: ConvGeometryRef<'_>) -> Result<Self, String> {
        let u = |v: &[i64], what: &str| -> Result<Vec<usize>, String> {
            v.iter()
                .map(|&x| usize::try_from(x).map_err(|_| format!("negative {what} {x}")))
                .collect()
        };
        let mode = match g.conv_mode {
            WireConvMode::CONVOLUTION => ConvMode::Convolution,
            WireConvMode::CROSS_CORRELATION | WireConvMode::UNSET => ConvMode::CrossCorrelation,
            m => return Err(format!("unknown convolution mode {}", m.0)),
        };
        Ok(Self {
            pre_padding: u(g.pre_padding, "padding")?,
            post_padding: u(g.post_padding, "padding")?,
            stride: u(g.stride, "stride")?,
            dilation: u(g.dilation, "dilation")?,
            mode,
        })
    }

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
    /// Winograd F(2×2, 3×3) or F(4×4, 3×3) (per shape) wherever it applies
    /// (channels-last 3×3 `f32`, stride 1 or 2), the rest as `Auto`.
    Winograd,
}

impl ConvAlgo {
    /// The algorithm a `cpu.conv_algo` value names (`auto`, `gemm`, `direct`,
    /// `winograd`).
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "auto" => Self::Auto,
            "gemm" => Self::Gemm,
            "direct" => Self::Direct,
            "winograd" => Self::Winograd,
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
    /// Whether every output pixel's window lies inside the input (no padding is read).
    pub fn windows_inside(&self) -> bool {
        (0..3).all(|d| {
            self.pad[d] == 0
                && self.out[d] > 0
                && (self.out[d] - 1) * self.stride[d] + (self.filt[d] - 1) * self.dil[d]
                    < self.inp[d]
        })
    }

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
    pub(super) fn tap_offset(&self, d: usize, t: usize) -> isize {
        let t = if self.flip { self.filt[d] - 1 - t } else { t };
        (t * self.dil[d]) as isize
    }

    /// The logical index `[n, ch, spatial...]` of output pixel `(n, od, oh, ow)`.
    pub(super) fn out_index(
        &self,
        n: usize,
        ch: usize,
        o: [usize; 3],
        idx: &mut [usize; 5],
    ) -> usize {
        idx[0] = n;
        idx[1] = ch;
        let lead = 3 - self.spatial;
        idx[2..2 + self.spatial].copy_from_slice(&o[lead..]);
        2 + self.spatial
    }
}
