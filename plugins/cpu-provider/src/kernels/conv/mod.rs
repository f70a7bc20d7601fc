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
//!   An input with fewer than 8 channels (a network's first layer) goes the same way
//!   over filter rows: it is copied zero-padded into the workspace, and the `filt_w × C`
//!   consecutive floats under a filter row are one segment of A. A channels-first
//!   `f32` input under more than one tap (one group) is copied zero-padded and
//!   channels-last into the workspace too, and the indirect GEMM runs on the copy
//!   ([`FpropPlan::copies_input`]): one pass over the input, where im2col packs each
//!   pixel once per tap that reads it.
//! * [`FpropImpl::Winograd`]: F(2×2, 3×3) for `f32` 3×3 stride-1 convolutions
//!   (channels-last, or run on a channels-last copy; 16 to 512 input channels, where
//!   the CPU has AVX-512 or AVX2 + FMA): 2.25× fewer
//!   multiply-adds, as sixteen cache-sized products per chunk of output tiles (or, for
//!   filters over 4 MiB transformed, in phases that stream them once); F(4×4, 3×3) (4×
//!   fewer, 36 products) for larger images with `C · K ≤ 16384` or, in phases, with
//!   filters over 4 MiB and at least 16 tiles, 2 per thread; at stride 2, 2×2 output
//!   tiles from 5×5 patches (25 products against 36: the filter's even taps as F(2, 2)
//!   over the even inputs, its middle tap over the odd ones) where that saves at least
//!   a quarter of the multiply-adds (see `winograd.rs`).
//!   `auto` takes it up to 512 × 512 channels (`C · K ≤ 262144`);
//!   `cpu.conv_algo=winograd` wherever it applies.
//! * [`FpropImpl::Direct`]: a straightforward loop for what GEMMs do badly (depthwise
//!   and other thin grouped convolutions) and as the always-available fallback.
//!
//! Weights are packed inside `run`, in the workspace, on every execution (their
//! values arrive with each execute), unless the caller declares them constant:
//! [`FpropPlan::run_cached`] keeps the indirect implementation's packed filters in a
//! [`WeightCache`] for later runs with the same filter address.
//!
//! Problems of 1 to 3 spatial dimensions are handled as 3-D with size-1 dimensions.
//! Convolution mode (flipped filter) is handled by reading filter taps in reverse.

use super::elementwise::{BlockAt, CHUNK, Epilogue, Prepared};
use super::exec::{Exec, SendPtr, split};
use super::gemm::{self, Blocking, GemmProblem, MR, NR, TILE};
use super::kept::KeptBuf;
use crate::tensor::{DType, Elem, RawIn, Shape};
use half::{bf16, f16};

mod direct;
mod geometry;
mod implicit;
mod indirect;
mod pixels;
mod plan;
mod weights;
mod winograd;

pub use geometry::{ConvAlgo, ConvGeometry, ConvMode, ConvParams};
pub use plan::{FpropImpl, FpropPlan, WeightCache};
pub use winograd::{
    own_tiles_pay as winograd_own_tiles_pay, streaming_pays as winograd_streaming_pays,
};

use direct::*;
use implicit::*;
use indirect::*;
use pixels::*;
use weights::*;
