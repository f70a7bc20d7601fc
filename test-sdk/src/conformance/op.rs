//! What a case runs: an [`Op`] with its shapes and attributes, the graph it becomes and
//! the tolerance table its outputs are checked with.

use hipdnn_data_sdk::DataType;
use hipdnn_flatbuffers_sdk::model::Graph;
use hipdnn_flatbuffers_sdk::wire::{ReductionMode, ResampleMode};

use crate::graphs::{self, ConvSpec, Layout};
use crate::reference::PointwiseParams;
use crate::tolerance::OpFamily;

/// An operation under test, with its shapes and attributes.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    /// Convolution forward.
    ConvFprop(ConvSpec),
    /// Convolution → bias → ReLU.
    ConvBiasRelu(ConvSpec),
    /// Convolution → ReLU (no bias).
    ConvRelu(ConvSpec),
    /// Convolution data gradient.
    ConvDgrad(ConvSpec),
    /// Convolution weight gradient.
    ConvWgrad(ConvSpec),
    /// Batch norm inference from `inv_variance`, optionally fused with a ReLU.
    BatchnormInference {
        /// Activation dims.
        x_dims: Vec<i64>,
        /// Follow with a ReLU.
        relu: bool,
    },
    /// Batch norm inference from a variance and epsilon.
    BatchnormInferenceVariance {
        /// Activation dims.
        x_dims: Vec<i64>,
        /// Added to the variance.
        epsilon: f32,
    },
    /// Batch norm training forward.
    BatchnormTraining {
        /// Activation dims.
        x_dims: Vec<i64>,
        /// Added to the variance.
        epsilon: f32,
        /// With running statistics updated by this momentum.
        momentum: Option<f32>,
    },
    /// Batch norm training forward followed by an activation on its output.
    BatchnormTrainingActivation {
        /// Activation dims.
        x_dims: Vec<i64>,
        /// Added to the variance.
        epsilon: f32,
        /// With running statistics updated by this momentum.
        momentum: Option<f32>,
        /// The activation (a pointwise mode with its attributes).
        activation: PointwiseParams,
    },
    /// Batch norm backward from saved statistics.
    BatchnormBackward {
        /// Activation dims.
        x_dims: Vec<i64>,
    },
    /// Batch norm backward through a ReLU whose input is recomputed by batch-norm
    /// inference from the saved statistics.
    BatchnormBackwardRelu {
        /// Activation dims.
        x_dims: Vec<i64>,
    },
    /// Batched matrix multiplication.
    Matmul {
        /// `a` dims.
        a_dims: Vec<i64>,
        /// `b` dims.
        b_dims: Vec<i64>,
    },
    /// Matmul → bias → GELU.
    MatmulBiasGelu {
        /// `a` dims.
        a_dims: Vec<i64>,
        /// `b` dims.
        b_dims: Vec<i64>,
    },
    /// One pointwise node.
    Pointwise {
        /// Mode and attributes.
        params: PointwiseParams,
        /// Dims of `in_0`, `in_1`, `in_2` (as many as the mode takes).
        input_dims: Vec<Vec<i64>>,
        /// Output dims.
        out_dims: Vec<i64>,
    },
    /// One reduction.
    Reduction {
        /// Reduction operator.
        mode: ReductionMode,
        /// Input dims.
        in_dims: Vec<i64>,
        /// Output dims (1 on reduced dims).
        out_dims: Vec<i64>,
    },
    /// Pooling (resample forward).
    ResampleFwd {
        /// Max or average (excluding or including the padding).
        mode: ResampleMode,
        /// Input dims.
        x_dims: Vec<i64>,
        /// Window extents.
        window: Vec<i64>,
        /// Strides.
        stride: Vec<i64>,
        /// Padding before each spatial dim.
        pre_padding: Vec<i64>,
        /// Padding after each spatial dim.
        post_padding: Vec<i64>,
    },
    /// Layer norm forward.
    Layernorm {
        /// Activation dims.
        x_dims: Vec<i64>,
        /// Trailing dims normalized over.
        normalized_dims: usize,
        /// Added to the variance.
        epsilon: f32,
        /// Also output the mean and inverse variance.
        training: bool,
    },
    /// RMS norm forward (over every dim but the batch).
    Rmsnorm {
        /// Activation dims.
        x_dims: Vec<i64>,
        /// Added to the mean square.
        epsilon: f32,
        /// With a bias.
        bias: bool,
        /// Also output `inv_rms`.
        training: bool,
    },
}

impl Op {
    /// The op's name as used in case names (e.g. `"conv_fprop"`).
    pub fn kind(&self) -> &'static str {
        match self {
            Op::ConvFprop(_) => "conv_fprop",
            Op::ConvBiasRelu(_) => "conv_bias_relu",
            Op::ConvRelu(_) => "conv_relu",
            Op::ConvDgrad(_) => "conv_dgrad",
            Op::ConvWgrad(_) => "conv_wgrad",
            Op::BatchnormInference { relu: false, .. } => "batchnorm_inference",
            Op::BatchnormInference { relu: true, .. } => "batchnorm_inference_relu",
            Op::BatchnormInferenceVariance { .. } => "batchnorm_inference_variance",
            Op::BatchnormTraining { .. } => "batchnorm_training",
            Op::BatchnormTrainingActivation { .. } => "batchnorm_training_activation",
            Op::BatchnormBackward { .. } => "batchnorm_backward",
            Op::BatchnormBackwardRelu { .. } => "batchnorm_backward_relu",
            Op::Matmul { .. } => "matmul",
            Op::MatmulBiasGelu { .. } => "matmul_bias_gelu",
            Op::Pointwise { .. } => "pointwise",
            Op::Reduction { .. } => "reduction",
            Op::ResampleFwd { .. } => "resample_fwd",
            Op::Layernorm { .. } => "layernorm",
            Op::Rmsnorm { .. } => "rmsnorm",
        }
    }

    /// The tolerance table the op's outputs are checked with.
    pub fn family(&self) -> OpFamily {
        match self {
            Op::ConvFprop(_) | Op::ConvBiasRelu(_) | Op::ConvRelu(_) => OpFamily::ConvFprop,
            Op::ConvDgrad(_) => OpFamily::ConvDgrad,
            Op::ConvWgrad(_) => OpFamily::ConvWgrad,
            Op::BatchnormInference { .. } => OpFamily::BatchnormInference,
            Op::BatchnormInferenceVariance { .. } => OpFamily::BatchnormInferenceVariance,
            Op::BatchnormTraining { .. } | Op::BatchnormTrainingActivation { .. } => {
                OpFamily::BatchnormTraining
            }
            Op::BatchnormBackward { .. } | Op::BatchnormBackwardRelu { .. } => {
                OpFamily::BatchnormBackward
            }
            Op::Matmul { .. } | Op::MatmulBiasGelu { .. } => OpFamily::Matmul,
            Op::Pointwise { .. } => OpFamily::Pointwise,
            Op::Reduction { .. } => OpFamily::Reduction,
            Op::ResampleFwd { mode, .. } if *mode == ResampleMode::MAXPOOL => OpFamily::MaxPool,
            Op::ResampleFwd { .. } => OpFamily::AvgPool,
            Op::Layernorm { .. } => OpFamily::Layernorm,
            Op::Rmsnorm { .. } => OpFamily::Rmsnorm,
        }
    }

    /// The graph of this op.
    pub fn graph(&self, layout: &Layout, dtype: DataType) -> Graph {
        match self {
            Op::ConvFprop(s) => graphs::conv_fprop(s, layout, dtype),
            Op::ConvBiasRelu(s) => graphs::conv_bias_relu(s, layout, dtype),
            Op::ConvRelu(s) => graphs::conv_relu(s, layout, dtype),
            Op::ConvDgrad(s) => graphs::conv_dgrad(s, layout, dtype),
            Op::ConvWgrad(s) => graphs::conv_wgrad(s, layout, dtype),
            Op::BatchnormInference { x_dims, relu } => {
                graphs::batchnorm_inference(x_dims, *relu, layout, dtype)
            }
            Op::BatchnormInferenceVariance { x_dims, epsilon } => {
                graphs::batchnorm_inference_variance(x_dims, *epsilon, layout, dtype)
            }
            Op::BatchnormTraining {
                x_dims,
                epsilon,
                momentum,
            } => graphs::batchnorm_training(x_dims, *epsilon, *momentum, layout, dtype),
            Op::BatchnormTrainingActivation {
                x_dims,
                epsilon,
                momentum,
                activation,
            } => graphs::batchnorm_training_activation(
                x_dims, *epsilon, *momentum, activation, layout, dtype,
            ),
            Op::BatchnormBackward { x_dims } => graphs::batchnorm_backward(x_dims, layout, dtype),
            Op::BatchnormBackwardRelu { x_dims } => {
                graphs::batchnorm_backward_relu(x_dims, layout, dtype)
            }
            Op::Matmul { a_dims, b_dims } => graphs::matmul(a_dims, b_dims, layout, dtype),
            Op::MatmulBiasGelu { a_dims, b_dims } => {
                graphs::matmul_bias_gelu(a_dims, b_dims, layout, dtype)
            }
            Op::Pointwise {
                params,
                input_dims,
                out_dims,
            } => graphs::pointwise(params, input_dims, out_dims, layout, dtype),
            Op::Reduction {
                mode,
                in_dims,
                out_dims,
            } => graphs::reduction(*mode, in_dims, out_dims, layout, dtype),
            Op::ResampleFwd {
                mode,
                x_dims,
                window,
                stride,
                pre_padding,
                post_padding,
            } => graphs::resample_fwd(
                *mode,
                x_dims,
                [window, stride, pre_padding, post_padding],
                layout,
                dtype,
            ),
            Op::Layernorm {
                x_dims,
                normalized_dims,
                epsilon,
                training,
            } => graphs::layernorm(x_dims, *normalized_dims, *epsilon, *training, layout, dtype),
            Op::Rmsnorm {
                x_dims,
                epsilon,
                bias,
                training,
            } => graphs::rmsnorm(x_dims, *epsilon, *bias, *training, layout, dtype),
        }
    }
}
