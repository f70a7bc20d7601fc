//! Nodes as the builder holds them: operations over tensor indices, turned into schema
//! attribute tables (over uids) at build.

use hipdnn_data_sdk::DataType;
use hipdnn_flatbuffers_sdk::model::{
    BatchnormAttributes, BatchnormBackwardAttributes, BatchnormInferenceAttributes,
    BatchnormInferenceAttributesVarianceExt, ConvolutionBwdAttributes, ConvolutionFwdAttributes,
    ConvolutionWrwAttributes, LayernormAttributes, MatmulAttributes, NodeAttributes,
    PointwiseAttributes, RMSNormAttributes, ReductionAttributes, ResampleFwdAttributes,
};
use hipdnn_flatbuffers_sdk::wire::{
    ConvMode, NormFwdPhase, PaddingMode, PointwiseMode, ReductionMode, ResampleMode,
};

use super::shape::ConvGeometry;

/// One node: its name, compute type and operation.
#[derive(Debug, Clone)]
pub(crate) struct NodeEntry {
    pub name: String,
    pub compute_data_type: DataType,
    pub op: Op,
}

/// Pointwise mode and parameters, as the schema carries them.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PointwiseParams {
    pub mode: PointwiseMode,
    pub relu_lower_clip: Option<f32>,
    pub relu_upper_clip: Option<f32>,
    pub relu_lower_clip_slope: Option<f32>,
    pub axis: Option<i64>,
    pub swish_beta: Option<f32>,
    pub elu_alpha: Option<f32>,
    pub softplus_beta: Option<f32>,
}

/// An operation; every `usize` is an index into the builder's tensors.
#[derive(Debug, Clone)]
pub(crate) enum Op {
    ConvFprop {
        x: usize,
        w: usize,
        y: usize,
        geometry: ConvGeometry,
        mode: ConvMode,
    },
    ConvDgrad {
        dy: usize,
        w: usize,
        dx: usize,
        geometry: ConvGeometry,
        mode: ConvMode,
    },
    ConvWgrad {
        x: usize,
        dy: usize,
        dw: usize,
        geometry: ConvGeometry,
        mode: ConvMode,
    },
    BatchnormInference {
        x: usize,
        mean: usize,
        inv_variance: usize,
        scale: usize,
        bias: usize,
        y: usize,
    },
    BatchnormInferenceVariance {
        x: usize,
        mean: usize,
        variance: usize,
        scale: usize,
        bias: usize,
        epsilon: usize,
        y: usize,
    },
    Batchnorm {
        x: usize,
        scale: usize,
        bias: usize,
        epsilon: usize,
        peer_stats: Vec<usize>,
        /// Previous running mean, variance, and the momentum scalar.
        running: Option<(usize, usize, usize)>,
        y: usize,
        mean: usize,
        inv_variance: usize,
        /// Next running mean and variance.
        next_running: Option<(usize, usize)>,
    },
    BatchnormBackward {
        dy: usize,
        x: usize,
        saved: Option<(usize, usize)>,
        scale: usize,
        peer_stats: Vec<usize>,
        dx: usize,
        dscale: usize,
        dbias: usize,
    },
    Pointwise {
        params: PointwiseParams,
        inputs: Vec<usize>,
        out: usize,
    },
    Matmul {
        a: usize,
        b: usize,
        c: usize,
    },
    Reduction {
        mode: ReductionMode,
        deterministic: bool,
        x: usize,
        y: usize,
    },
    ResampleFwd {
        mode: ResampleMode,
        padding_mode: PaddingMode,
        /// Window, stride, pre- and post-padding, one entry per spatial dim.
        geometry: [Vec<i64>; 4],
        x: usize,
        y: usize,
    },
    Layernorm {
        x: usize,
        scale: usize,
        bias: usize,
        epsilon: usize,
        y: usize,
        normalized_dim_count: i64,
        stats: Option<(usize, usize)>,
        phase: NormFwdPhase,
    },
    Rmsnorm {
        x: usize,
        scale: usize,
        epsilon: usize,
        y: usize,
        bias: Option<usize>,
        inv_rms: Option<usize>,
        phase: NormFwdPhase,
    },
}

impl Op {
    /// The schema attribute table, with `uid` giving each tensor's uid and `keep` saying
    /// whether an optional statistics output stays in the graph.
    pub fn to_model(
        &self,
        uid: &dyn Fn(usize) -> i64,
        keep: &dyn Fn(usize) -> bool,
    ) -> NodeAttributes {
        let opt = |i: usize| keep(i).then(|| uid(i));
        let uids = |v: &[usize]| v.iter().map(|&i| uid(i)).collect::<Vec<_>>();
        match self {
            Op::ConvFprop {
                x,
                w,
                y,
                geometry: g,
                mode,
            } => ConvolutionFwdAttributes {
                x_tensor_uid: uid(*x),
                w_tensor_uid: uid(*w),
                y_tensor_uid: uid(*y),
                pre_padding: g.pre_padding.clone(),
                post_padding: g.post_padding.clone(),
                stride: g.stride.clone(),
                dilation: g.dilation.clone(),
                conv_mode: *mode,
                ..Default::default()
            }
            .into(),
            Op::ConvDgrad {
                dy,
                w,
                dx,
                geometry: g,
                mode,
            } => ConvolutionBwdAttributes {
                dy_tensor_uid: uid(*dy),
                w_tensor_uid: uid(*w),
                dx_tensor_uid: uid(*dx),
                pre_padding: g.pre_padding.clone(),
                post_padding: g.post_padding.clone(),
                stride: g.stride.clone(),
                dilation: g.dilation.clone(),
                conv_mode: *mode,
                ..Default::default()
            }
            .into(),
            Op::ConvWgrad {
                x,
                dy,
                dw,
                geometry: g,
                mode,
            } => ConvolutionWrwAttributes {
                x_tensor_uid: uid(*x),
                dy_tensor_uid: uid(*dy),
                dw_tensor_uid: uid(*dw),
                pre_padding: g.pre_padding.clone(),
                post_padding: g.post_padding.clone(),
                stride: g.stride.clone(),
                dilation: g.dilation.clone(),
                conv_mode: *mode,
                ..Default::default()
            }
            .into(),
            Op::BatchnormInference {
                x,
                mean,
                inv_variance,
                scale,
                bias,
                y,
            } => BatchnormInferenceAttributes {
                x_tensor_uid: uid(*x),
                mean_tensor_uid: uid(*mean),
                inv_variance_tensor_uid: uid(*inv_variance),
                scale_tensor_uid: uid(*scale),
                bias_tensor_uid: uid(*bias),
                y_tensor_uid: uid(*y),
            }
            .into(),
            Op::BatchnormInferenceVariance {
                x,
                mean,
                variance,
                scale,
                bias,
                epsilon,
                y,
            } => BatchnormInferenceAttributesVarianceExt {
                x_tensor_uid: uid(*x),
                mean_tensor_uid: uid(*mean),
                variance_tensor_uid: uid(*variance),
                scale_tensor_uid: uid(*scale),
                bias_tensor_uid: uid(*bias),
                y_tensor_uid: uid(*y),
                epsilon_tensor_uid: uid(*epsilon),
            }
            .into(),
            Op::Batchnorm {
                x,
                scale,
                bias,
                epsilon,
                peer_stats,
                running,
                y,
                mean,
                inv_variance,
                next_running,
            } => BatchnormAttributes {
                x_tensor_uid: uid(*x),
                scale_tensor_uid: uid(*scale),
                bias_tensor_uid: uid(*bias),
                epsilon_tensor_uid: uid(*epsilon),
                peer_stats_tensor_uid: uids(peer_stats),
                prev_running_mean_tensor_uid: running.map(|r| uid(r.0)),
                prev_running_variance_tensor_uid: running.map(|r| uid(r.1)),
                momentum_tensor_uid: running.map(|r| uid(r.2)),
                y_tensor_uid: uid(*y),
                mean_tensor_uid: opt(*mean),
                inv_variance_tensor_uid: opt(*inv_variance),
                next_running_mean_tensor_uid: next_running.map(|n| uid(n.0)),
                next_running_variance_tensor_uid: next_running.map(|n| uid(n.1)),
            }
            .into(),
            Op::BatchnormBackward {
                dy,
                x,
                saved,
                scale,
                peer_stats,
                dx,
                dscale,
                dbias,
            } => BatchnormBackwardAttributes {
                dy_tensor_uid: uid(*dy),
                x_tensor_uid: uid(*x),
                mean_tensor_uid: saved.map(|s| uid(s.0)),
                inv_variance_tensor_uid: saved.map(|s| uid(s.1)),
                scale_tensor_uid: uid(*scale),
                peer_stats_tensor_uid: uids(peer_stats),
                dx_tensor_uid: uid(*dx),
                dscale_tensor_uid: uid(*dscale),
                dbias_tensor_uid: uid(*dbias),
            }
            .into(),
            Op::Pointwise {
                params,
                inputs,
                out,
            } => PointwiseAttributes {
                operation: params.mode,
                relu_lower_clip: params.relu_lower_clip,
                relu_upper_clip: params.relu_upper_clip,
                relu_lower_clip_slope: params.relu_lower_clip_slope,
                axis_tensor_uid: params.axis,
                in_0_tensor_uid: uid(inputs[0]),
                in_1_tensor_uid: inputs.get(1).map(|&i| uid(i)),
                in_2_tensor_uid: inputs.get(2).map(|&i| uid(i)),
                out_0_tensor_uid: uid(*out),
                swish_beta: params.swish_beta,
                elu_alpha: params.elu_alpha,
                softplus_beta: params.softplus_beta,
            }
            .into(),
            Op::Matmul { a, b, c } => MatmulAttributes {
                a_tensor_uid: uid(*a),
                b_tensor_uid: uid(*b),
                c_tensor_uid: uid(*c),
                ..Default::default()
            }
            .into(),
            Op::Reduction {
                mode,
                deterministic,
                x,
                y,
            } => ReductionAttributes {
                mode: *mode,
                in_tensor_uid: uid(*x),
                out_tensor_uid: uid(*y),
                is_deterministic: *deterministic,
            }
            .into(),
            Op::ResampleFwd {
                mode,
                padding_mode,
                geometry: [window, stride, pre, post],
                x,
                y,
            } => ResampleFwdAttributes {
                x_tensor_uid: uid(*x),
                y_tensor_uid: uid(*y),
                index_tensor_uid: None,
                pre_padding: pre.clone(),
                post_padding: post.clone(),
                stride: stride.clone(),
                window: window.clone(),
                resample_mode: *mode,
                padding_mode: *padding_mode,
                generate_index: false,
            }
            .into(),
            Op::Layernorm {
                x,
                scale,
                bias,
                epsilon,
                y,
                normalized_dim_count,
                stats,
                phase,
            } => LayernormAttributes {
                x_tensor_uid: uid(*x),
                scale_tensor_uid: uid(*scale),
                bias_tensor_uid: uid(*bias),
                epsilon_tensor_uid: uid(*epsilon),
                y_tensor_uid: uid(*y),
                normalized_dim_count: *normalized_dim_count,
                mean_tensor_uid: stats.and_then(|s| opt(s.0)),
                inv_variance_tensor_uid: stats.and_then(|s| opt(s.1)),
                forward_phase: *phase,
            }
            .into(),
            Op::Rmsnorm {
                x,
                scale,
                epsilon,
                y,
                bias,
                inv_rms,
                phase,
            } => RMSNormAttributes {
                x_tensor_uid: uid(*x),
                scale_tensor_uid: uid(*scale),
                epsilon_tensor_uid: uid(*epsilon),
                y_tensor_uid: uid(*y),
                bias_tensor_uid: bias.map(uid),
                inv_rms_tensor_uid: inv_rms.and_then(opt),
                forward_phase: *phase,
            }
            .into(),
        }
    }
}

/// The modes each optional pointwise parameter applies to.
pub(crate) fn pointwise_parameter_modes(
    params: &PointwiseParams,
) -> [(&'static str, bool, &'static [PointwiseMode]); 7] {
    use PointwiseMode as M;
    const RELU: &[PointwiseMode] = &[M::RELU_FWD, M::RELU_BWD];
    [
        ("relu_lower_clip", params.relu_lower_clip.is_some(), RELU),
        ("relu_upper_clip", params.relu_upper_clip.is_some(), RELU),
        (
            "relu_lower_clip_slope",
            params.relu_lower_clip_slope.is_some(),
            RELU,
        ),
        ("axis", params.axis.is_some(), &[M::GEN_INDEX]),
        (
            "swish_beta",
            params.swish_beta.is_some(),
            &[M::SWISH_FWD, M::SWISH_BWD],
        ),
        (
            "elu_alpha",
            params.elu_alpha.is_some(),
            &[M::ELU_FWD, M::ELU_BWD],
        ),
        (
            "softplus_beta",
            params.softplus_beta.is_some(),
            &[M::SOFTPLUS_FWD, M::SOFTPLUS_BWD],
        ),
    ]
}
