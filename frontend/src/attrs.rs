//! Operation attributes (what each op builder takes besides its main inputs) and the
//! handles of multi-output operations.

use hipdnn_data_sdk::DataType;
use hipdnn_flatbuffers_sdk::wire::{
    ConvMode, NormFwdPhase, PaddingMode, PointwiseMode, ReductionMode, ResampleMode,
};

use super::tensor::Tensor;

/// Adds the setters every attributes struct has: the node name and its compute type.
macro_rules! common_setters {
    ($($t:ty),* $(,)?) => {$(
        impl $t {
            /// Names the node (error messages use it). Left empty, the builder names it
            /// after the operation and its position, e.g. `conv_fprop_0`.
            pub fn name(mut self, name: impl Into<String>) -> Self {
                self.name = name.into();
                self
            }

            /// Sets the node's compute (accumulation) type; left `UNSET`, the graph's
            /// compute data type applies.
            pub fn compute_data_type(mut self, data_type: DataType) -> Self {
                self.compute_data_type = data_type;
                self
            }
        }
    )*};
}

common_setters!(
    ConvAttrs,
    BatchnormInferenceAttrs,
    BatchnormInferenceVarianceAttrs,
    BatchnormAttrs,
    BatchnormBackwardAttrs,
    PointwiseAttrs,
    MatmulAttrs,
    ReductionAttrs,
    ResampleAttrs,
    LayernormAttrs,
    RmsnormAttrs,
);

/// Attributes of a convolution (fprop, dgrad or wgrad).
///
/// Fields left empty take their defaults for the operands' spatial rank: no padding,
/// stride 1, dilation 1. The mode defaults to cross-correlation (the deep-learning
/// "convolution").
///
/// Data and weight gradients need [`output_dims`](Self::output_dims): with a stride above
/// 1, several input sizes give the same output size, so `dx` (or `dw`) cannot be
/// inferred. For fprop, `output_dims` is optional and checked against the inferred dims.
#[derive(Debug, Clone, PartialEq)]
pub struct ConvAttrs {
    pub(crate) name: String,
    pub(crate) compute_data_type: DataType,
    pub(crate) pre_padding: Vec<i64>,
    pub(crate) post_padding: Vec<i64>,
    pub(crate) stride: Vec<i64>,
    pub(crate) dilation: Vec<i64>,
    pub(crate) mode: ConvMode,
    pub(crate) output_dims: Option<Vec<i64>>,
}

impl Default for ConvAttrs {
    fn default() -> Self {
        Self {
            name: String::new(),
            compute_data_type: DataType::Unset,
            pre_padding: Vec::new(),
            post_padding: Vec::new(),
            stride: Vec::new(),
            dilation: Vec::new(),
            mode: ConvMode::CROSS_CORRELATION,
            output_dims: None,
        }
    }
}

impl ConvAttrs {
    /// Defaults: no padding, unit stride and dilation, cross-correlation.
    pub fn new() -> Self {
        Self::default()
    }

    /// Symmetric padding: sets both pre- and post-padding, one entry per spatial dim.
    pub fn padding(self, padding: impl Into<Vec<i64>>) -> Self {
        let padding = padding.into();
        self.pre_padding(padding.clone()).post_padding(padding)
    }

    /// Padding before each spatial dim.
    pub fn pre_padding(mut self, padding: impl Into<Vec<i64>>) -> Self {
        self.pre_padding = padding.into();
        self
    }

    /// Padding after each spatial dim.
    pub fn post_padding(mut self, padding: impl Into<Vec<i64>>) -> Self {
        self.post_padding = padding.into();
        self
    }

    /// Stride per spatial dim.
    pub fn stride(mut self, stride: impl Into<Vec<i64>>) -> Self {
        self.stride = stride.into();
        self
    }

    /// Dilation per spatial dim.
    pub fn dilation(mut self, dilation: impl Into<Vec<i64>>) -> Self {
        self.dilation = dilation.into();
        self
    }

    /// Convolution or cross-correlation.
    pub fn mode(mut self, mode: ConvMode) -> Self {
        self.mode = mode;
        self
    }

    /// Dims of the output: required for dgrad (`dx`) and wgrad (`dw`), checked for fprop.
    pub fn output_dims(mut self, dims: impl Into<Vec<i64>>) -> Self {
        self.output_dims = Some(dims.into());
        self
    }
}

/// Attributes of a batch norm for inference (only the node name and compute type).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BatchnormInferenceAttrs {
    pub(crate) name: String,
    pub(crate) compute_data_type: DataType,
}

impl BatchnormInferenceAttrs {
    /// No name, graph compute type.
    pub fn new() -> Self {
        Self::default()
    }
}

/// Attributes of a batch norm for inference from a variance
/// (`BatchnormInferenceAttributesVarianceExt`): the epsilon scalar.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchnormInferenceVarianceAttrs {
    pub(crate) name: String,
    pub(crate) compute_data_type: DataType,
    pub(crate) epsilon: Tensor,
}

impl BatchnormInferenceVarianceAttrs {
    /// `epsilon` is a scalar tensor (dims `[1]`, usually pass-by-value), added to the
    /// variance before its inverse square root.
    pub fn new(epsilon: Tensor) -> Self {
        Self {
            name: String::new(),
            compute_data_type: DataType::Unset,
            epsilon,
        }
    }
}

/// Attributes of a training batch norm: the epsilon scalar, and the running statistics
/// to update if any.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchnormAttrs {
    pub(crate) name: String,
    pub(crate) compute_data_type: DataType,
    pub(crate) epsilon: Tensor,
    pub(crate) running: Option<(Tensor, Tensor, Tensor)>,
    pub(crate) peer_stats: Vec<Tensor>,
}

impl BatchnormAttrs {
    /// `epsilon` is a scalar tensor (usually pass-by-value).
    pub fn new(epsilon: Tensor) -> Self {
        Self {
            name: String::new(),
            compute_data_type: DataType::Unset,
            epsilon,
            running: None,
            peer_stats: Vec::new(),
        }
    }

    /// Updates running statistics: reads `prev_mean` and `prev_variance` (per channel)
    /// and the scalar `momentum`, and writes the next running mean and variance
    /// (returned in [`BatchnormOutputs`]).
    pub fn running_stats(
        mut self,
        prev_mean: Tensor,
        prev_variance: Tensor,
        momentum: Tensor,
    ) -> Self {
        self.running = Some((prev_mean, prev_variance, momentum));
        self
    }

    /// Statistics buffers of peer devices (multi-device batch norm).
    pub fn peer_stats(mut self, peers: impl Into<Vec<Tensor>>) -> Self {
        self.peer_stats = peers.into();
        self
    }
}

/// The outputs of a training batch norm.
///
/// `mean` and `inv_variance` are the saved batch statistics: they stay in the graph only
/// when marked as outputs or read by another node, and are left out otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchnormOutputs {
    /// The normalized tensor, dims of `x`.
    pub y: Tensor,
    /// Batch mean, `[1, C, 1, …]`.
    pub mean: Tensor,
    /// Batch inverse variance, `[1, C, 1, …]`.
    pub inv_variance: Tensor,
    /// Updated running mean, when running stats were given.
    pub next_running_mean: Option<Tensor>,
    /// Updated running variance, when running stats were given.
    pub next_running_variance: Option<Tensor>,
}

/// Attributes of a batch norm backward: the saved statistics, if any.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BatchnormBackwardAttrs {
    pub(crate) name: String,
    pub(crate) compute_data_type: DataType,
    pub(crate) saved: Option<(Tensor, Tensor)>,
    pub(crate) peer_stats: Vec<Tensor>,
}

impl BatchnormBackwardAttrs {
    /// No saved statistics (the engine recomputes them).
    pub fn new() -> Self {
        Self::default()
    }

    /// The forward pass's saved mean and inverse variance (`[1, C, 1, …]`).
    pub fn saved_stats(mut self, mean: Tensor, inv_variance: Tensor) -> Self {
        self.saved = Some((mean, inv_variance));
        self
    }

    /// Statistics buffers of peer devices.
    pub fn peer_stats(mut self, peers: impl Into<Vec<Tensor>>) -> Self {
        self.peer_stats = peers.into();
        self
    }
}

/// The outputs of a batch norm backward.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchnormBackwardOutputs {
    /// Input gradient, dims of `x`.
    pub dx: Tensor,
    /// Scale gradient, `[1, C, 1, …]`.
    pub dscale: Tensor,
    /// Bias gradient, `[1, C, 1, …]`.
    pub dbias: Tensor,
}

/// Attributes of a pointwise node: the mode and the parameters some modes take.
///
/// Parameters are checked against the mode: ReLU clips and slope go with `RELU_FWD` and
/// `RELU_BWD`, `swish_beta` with `SWISH_*`, `elu_alpha` with `ELU_*`, `softplus_beta`
/// with `SOFTPLUS_*`, and `axis` (required) with `GEN_INDEX`.
#[derive(Debug, Clone, PartialEq)]
pub struct PointwiseAttrs {
    pub(crate) name: String,
    pub(crate) compute_data_type: DataType,
    pub(crate) mode: PointwiseMode,
    pub(crate) relu_lower_clip: Option<f32>,
    pub(crate) relu_upper_clip: Option<f32>,
    pub(crate) relu_lower_clip_slope: Option<f32>,
    pub(crate) axis: Option<i64>,
    pub(crate) swish_beta: Option<f32>,
    pub(crate) elu_alpha: Option<f32>,
    pub(crate) softplus_beta: Option<f32>,
}

impl PointwiseAttrs {
    /// A node applying `mode`.
    pub fn new(mode: PointwiseMode) -> Self {
        Self {
            name: String::new(),
            compute_data_type: DataType::Unset,
            mode,
            relu_lower_clip: None,
            relu_upper_clip: None,
            relu_lower_clip_slope: None,
            axis: None,
            swish_beta: None,
            elu_alpha: None,
            softplus_beta: None,
        }
    }

    /// ReLU: values below this are clipped (or scaled by the slope) instead of zeroed.
    pub fn relu_lower_clip(mut self, v: f32) -> Self {
        self.relu_lower_clip = Some(v);
        self
    }

    /// ReLU: values above this are clipped.
    pub fn relu_upper_clip(mut self, v: f32) -> Self {
        self.relu_upper_clip = Some(v);
        self
    }

    /// ReLU: slope below the lower clip (leaky ReLU).
    pub fn relu_lower_clip_slope(mut self, v: f32) -> Self {
        self.relu_lower_clip_slope = Some(v);
        self
    }

    /// `GEN_INDEX`: the dimension whose index is generated.
    pub fn axis(mut self, axis: i64) -> Self {
        self.axis = Some(axis);
        self
    }

    /// Swish: `x · sigmoid(beta · x)`.
    pub fn swish_beta(mut self, v: f32) -> Self {
        self.swish_beta = Some(v);
        self
    }

    /// ELU: the negative-side scale.
    pub fn elu_alpha(mut self, v: f32) -> Self {
        self.elu_alpha = Some(v);
        self
    }

    /// Softplus: `log(1 + exp(beta · x)) / beta`.
    pub fn softplus_beta(mut self, v: f32) -> Self {
        self.softplus_beta = Some(v);
        self
    }
}

/// Attributes of a matmul (only the node name and compute type).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MatmulAttrs {
    pub(crate) name: String,
    pub(crate) compute_data_type: DataType,
}

impl MatmulAttrs {
    /// No name, graph compute type.
    pub fn new() -> Self {
        Self::default()
    }
}

/// Attributes of a reduction: the operator and the output dims (each input extent kept
/// or reduced to 1).
#[derive(Debug, Clone, PartialEq)]
pub struct ReductionAttrs {
    pub(crate) name: String,
    pub(crate) compute_data_type: DataType,
    pub(crate) mode: ReductionMode,
    pub(crate) output_dims: Option<Vec<i64>>,
    pub(crate) deterministic: bool,
}

impl ReductionAttrs {
    /// A reduction with operator `mode`; set [`output_dims`](Self::output_dims) too.
    pub fn new(mode: ReductionMode) -> Self {
        Self {
            name: String::new(),
            compute_data_type: DataType::Unset,
            mode,
            output_dims: None,
            deterministic: false,
        }
    }

    /// The output dims: same rank as the input, 1 where the input is reduced (required).
    pub fn output_dims(mut self, dims: impl Into<Vec<i64>>) -> Self {
        self.output_dims = Some(dims.into());
        self
    }

    /// Asks for a bit-reproducible result.
    pub fn deterministic(mut self, deterministic: bool) -> Self {
        self.deterministic = deterministic;
        self
    }
}

/// Attributes of a pooling (resample forward): the window function, the window, and
/// stride and padding (defaults: the window as stride, no padding).
///
/// Max pools pad with `NEG_INF_PAD` (padded positions never win), average pools with
/// `ZERO_PAD`; [`padding_mode`](Self::padding_mode) overrides. Padding must stay below
/// the window, so every window holds at least one input element.
#[derive(Debug, Clone, PartialEq)]
pub struct ResampleAttrs {
    pub(crate) name: String,
    pub(crate) compute_data_type: DataType,
    pub(crate) mode: ResampleMode,
    pub(crate) padding_mode: PaddingMode,
    pub(crate) window: Vec<i64>,
    pub(crate) stride: Vec<i64>,
    pub(crate) pre_padding: Vec<i64>,
    pub(crate) post_padding: Vec<i64>,
}

impl ResampleAttrs {
    /// A `mode` pool over windows of `window` (one entry per spatial dim).
    pub fn new(mode: ResampleMode, window: impl Into<Vec<i64>>) -> Self {
        let padding_mode = if mode == ResampleMode::MAXPOOL {
            PaddingMode::NEG_INF_PAD
        } else {
            PaddingMode::ZERO_PAD
        };
        Self {
            name: String::new(),
            compute_data_type: DataType::Unset,
            mode,
            padding_mode,
            window: window.into(),
            stride: Vec::new(),
            pre_padding: Vec::new(),
            post_padding: Vec::new(),
        }
    }

    /// Max pooling over `window`.
    pub fn max_pool(window: impl Into<Vec<i64>>) -> Self {
        Self::new(ResampleMode::MAXPOOL, window)
    }

    /// Average pooling over `window`, dividing by the in-bounds count
    /// (`AVGPOOL_EXCLUDE_PADDING`) or by the window size (`AVGPOOL_INCLUDE_PADDING`).
    pub fn avg_pool(window: impl Into<Vec<i64>>, include_padding: bool) -> Self {
        let mode = if include_padding {
            ResampleMode::AVGPOOL_INCLUDE_PADDING
        } else {
            ResampleMode::AVGPOOL_EXCLUDE_PADDING
        };
        Self::new(mode, window)
    }

    /// Stride per spatial dim (default: the window).
    pub fn stride(mut self, stride: impl Into<Vec<i64>>) -> Self {
        self.stride = stride.into();
        self
    }

    /// Symmetric padding: sets both pre- and post-padding, one entry per spatial dim.
    pub fn padding(self, padding: impl Into<Vec<i64>>) -> Self {
        let padding = padding.into();
        self.pre_padding(padding.clone()).post_padding(padding)
    }

    /// Padding before each spatial dim.
    pub fn pre_padding(mut self, padding: impl Into<Vec<i64>>) -> Self {
        self.pre_padding = padding.into();
        self
    }

    /// Padding after each spatial dim.
    pub fn post_padding(mut self, padding: impl Into<Vec<i64>>) -> Self {
        self.post_padding = padding.into();
        self
    }

    /// What padded positions hold.
    pub fn padding_mode(mut self, mode: PaddingMode) -> Self {
        self.padding_mode = mode;
        self
    }
}

/// Attributes of a layer norm: epsilon, how many trailing dims are normalized together
/// (default: all but the batch dim), and the phase (default inference).
#[derive(Debug, Clone, PartialEq)]
pub struct LayernormAttrs {
    pub(crate) name: String,
    pub(crate) compute_data_type: DataType,
    pub(crate) epsilon: Tensor,
    pub(crate) normalized_dims: Option<i64>,
    pub(crate) phase: NormFwdPhase,
}

impl LayernormAttrs {
    /// `epsilon` is a scalar tensor.
    pub fn new(epsilon: Tensor) -> Self {
        Self {
            name: String::new(),
            compute_data_type: DataType::Unset,
            epsilon,
            normalized_dims: None,
            phase: NormFwdPhase::INFERENCE,
        }
    }

    /// Normalizes the trailing `count` dims together (1 ≤ count ≤ rank).
    pub fn normalized_dims(mut self, count: i64) -> Self {
        self.normalized_dims = Some(count);
        self
    }

    /// Inference, or training (which also outputs the mean and inverse variance).
    pub fn phase(mut self, phase: NormFwdPhase) -> Self {
        self.phase = phase;
        self
    }
}

/// The outputs of a layer norm.
///
/// The statistics exist in the training phase; they stay in the graph only when marked
/// as outputs or read by another node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LayernormOutputs {
    /// The normalized tensor, dims of `x`.
    pub y: Tensor,
    /// Mean over the normalized dims (`[leading…, 1, …]`), training only.
    pub mean: Option<Tensor>,
    /// Inverse standard deviation, same dims as `mean`, training only.
    pub inv_variance: Option<Tensor>,
}

/// Attributes of an RMS norm: epsilon, an optional bias, and the phase (default
/// inference).
///
/// The normalized dims are those where `scale` has the extent of `x`; the others are
/// kept (scale extent 1).
#[derive(Debug, Clone, PartialEq)]
pub struct RmsnormAttrs {
    pub(crate) name: String,
    pub(crate) compute_data_type: DataType,
    pub(crate) epsilon: Tensor,
    pub(crate) bias: Option<Tensor>,
    pub(crate) phase: NormFwdPhase,
}

impl RmsnormAttrs {
    /// `epsilon` is a scalar tensor.
    pub fn new(epsilon: Tensor) -> Self {
        Self {
            name: String::new(),
            compute_data_type: DataType::Unset,
            epsilon,
            bias: None,
            phase: NormFwdPhase::INFERENCE,
        }
    }

    /// Adds a bias after scaling (dims of `scale`).
    pub fn bias(mut self, bias: Tensor) -> Self {
        self.bias = Some(bias);
        self
    }

    /// Inference, or training (which also outputs the inverse RMS).
    pub fn phase(mut self, phase: NormFwdPhase) -> Self {
        self.phase = phase;
        self
    }
}

/// The outputs of an RMS norm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RmsnormOutputs {
    /// The normalized tensor, dims of `x`.
    pub y: Tensor,
    /// `1 / rms` per kept position (dims of `x` with the normalized dims set to 1),
    /// training only; left out of the graph when virtual and unread.
    pub inv_rms: Option<Tensor>,
}
