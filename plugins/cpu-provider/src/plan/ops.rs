//! The operations CPU_ENGINE runs, checked node by node: what each reads and writes and
//! the parameters its kernels need, in the form the stages run them (a chain head's
//! operation; a pointwise step as an epilogue step with its operands). Each check is the
//! engine's whole verdict on a node; errors name the node and say what is unsupported.

use hipdnn_flatbuffers_sdk::model::{
    BatchnormAttributes, BatchnormBackwardAttributes, NodeAttributes, PointwiseAttributes,
};
use hipdnn_flatbuffers_sdk::wire::{NormFwdPhase, PaddingMode, PointwiseMode, ResampleMode};
use hipdnn_plugin_sdk::graph::{ChainStep, StepRole};

use super::analysis::Analysis;
use super::workspace::Placement;
use crate::kernels::conv::{ConvGeometry, ConvParams};
use crate::kernels::matmul::MatmulPlan;
use crate::kernels::norm::ReduceOp;
use crate::kernels::pointwise::{PwOp, PwParams};
use crate::kernels::pool::{PoolGeometry, PoolMode};
use crate::tensor::Shape;

/// Returns the verdict `node "<node>": <why>` from the enclosing check.
macro_rules! refuse {
    ($node:expr, $($why:tt)+) => {
        return Err(format!("node \"{}\": {}", $node, format_args!($($why)+)))
    };
}

/// Where an operand's value comes from at execution.
#[derive(Debug, Clone)]
pub(super) enum ValueSource {
    /// A tensor (host buffer or workspace).
    Tensor(i64),
    /// A value known when the plan is built (a pass-by-value scalar).
    Constant(f32),
    /// An `f32` array in the stage's scratch at this byte offset, with this shape.
    Scratch { offset: usize, shape: Shape },
}

/// The operation that heads a chain.
#[derive(Debug, Clone)]
pub(super) enum HeadOp {
    /// A convolution pass over the forward roles: `x` input, `w` filter, `y` output.
    /// The forward pass writes `y`, the data gradient `x` (reading `y` = dy), the
    /// filter gradient `w`.
    Convolution {
        pass: ConvPass,
        x: i64,
        w: i64,
        y: i64,
        geometry: ConvGeometry,
    },
    Matmul {
        a: i64,
        b: i64,
    },
    GenIndex {
        axis: usize,
    },
    /// A pointwise or batch-norm-inference head: `init`'s values through the epilogue,
    /// whose first operation is the head's own.
    Elementwise {
        init: ValueSource,
        first: EpilogueOp,
    },
    BatchNormTraining(Box<BatchNormTraining>),
    /// From the saved statistics (both given: checked).
    BatchNormBackward(Box<BatchnormBackwardAttributes>),
    Normalization(Box<Normalization>),
    Reduction {
        x: i64,
        op: ReduceOp,
    },
    /// Max or average pooling of `x` (resample forward).
    Pool {
        x: i64,
        geometry: Box<PoolGeometry>,
    },
}

/// Which pass of a convolution a node runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ConvPass {
    Forward,
    DataGradient,
    FilterGradient,
}

/// An operation applied to a chain's running value.
#[derive(Debug, Clone)]
pub(super) enum EpilogueOp {
    Pointwise(EpilogueStep),
    /// Batch-norm inference, folded into a per-channel scale and shift.
    BatchNormInference(BatchNormInference),
}

/// One pointwise step of a stage's epilogue.
#[derive(Debug, Clone)]
pub(super) struct EpilogueStep {
    pub op: PwOp,
    /// Which input slot reads the running value.
    pub chain_input: usize,
    /// The other inputs the function uses (`None` at `chain_input` and past its arity).
    pub others: [Option<ValueSource>; 3],
    /// The tensor to store the step's result to, if any.
    pub store: Option<i64>,
}

/// Batch-norm inference: `y = (x − mean)·inv_std·scale + bias` per channel.
#[derive(Debug, Clone)]
pub(super) struct BatchNormInference {
    pub x: i64,
    pub y: i64,
    pub channels: usize,
    pub mean: i64,
    /// The inverse standard deviation, given directly ...
    pub inv_variance: Option<i64>,
    /// ... or as a variance and an epsilon.
    pub variance_epsilon: Option<(i64, ValueSource)>,
    pub scale: i64,
    pub bias: i64,
}

/// Batch-norm training: batch statistics, optionally running statistics.
#[derive(Debug, Clone)]
pub(super) struct BatchNormTraining {
    pub node: BatchnormAttributes,
    pub channels: usize,
    pub epsilon: ValueSource,
    pub momentum: Option<ValueSource>,
}

/// Layer norm or RMS norm over the dims `keep` marks `false`.
#[derive(Debug, Clone)]
pub(super) struct Normalization {
    pub rms: bool,
    pub x: i64,
    pub y: i64,
    /// Per dim of `x`: whether it indexes the statistics (rows) rather than being
    /// normalized over.
    pub keep: Vec<bool>,
    pub epsilon: ValueSource,
    pub mean_out: Option<i64>,
    pub inv_out: Option<i64>,
    pub scale: Option<i64>,
    pub bias: Option<i64>,
}

impl Normalization {
    /// Dims of the statistics: `x`'s with the normalized dims set to 1.
    pub fn stats_dims(&self, x_dims: &[usize]) -> Vec<usize> {
        x_dims
            .iter()
            .zip(&self.keep)
            .map(|(d, k)| if *k { *d } else { 1 })
            .collect()
    }
}

/// Checks the node heading a chain.
pub(super) fn check_head(graph: &Analysis<'_>, node: usize) -> Result<HeadOp, String> {
    let name = graph.node_name(node);
    let attributes = &graph.index.node(node).attributes;
    match attributes {
        NodeAttributes::ConvolutionFwdAttributes(_)
        | NodeAttributes::ConvolutionBwdAttributes(_)
        | NodeAttributes::ConvolutionWrwAttributes(_) => convolution(graph, name, attributes),
        NodeAttributes::MatmulAttributes(a) => {
            let (x, y, c) = (a.a_tensor_uid, a.b_tensor_uid, a.c_tensor_uid);
            // Outputs are never pass-by-value (validation refuses that): inputs only.
            for (u, r) in [(x, "a"), (y, "b")] {
                in_memory(graph, name, u, r)?;
            }
            let dtype = graph.tensor(x).dtype;
            MatmulPlan::new(graph.dims(x), graph.dims(y), graph.dims(c), dtype, 1)
                .map_err(|e| format!("node \"{name}\": {e}"))?;
            Ok(HeadOp::Matmul { a: x, b: y })
        }
        NodeAttributes::PointwiseAttributes(p) if p.operation == PointwiseMode::GEN_INDEX => {
            gen_index(graph, name, p)
        }
        // The node's function is the first epilogue step, on its (first) input.
        NodeAttributes::PointwiseAttributes(p) => Ok(HeadOp::Elementwise {
            init: graph.source(p.in_0_tensor_uid),
            first: EpilogueOp::Pointwise(pointwise(graph, node, 0)?),
        }),
        NodeAttributes::BatchnormInferenceAttributes(_)
        | NodeAttributes::BatchnormInferenceAttributesVarianceExt(_) => {
            let bn = batch_norm_inference(graph, node)?;
            Ok(HeadOp::Elementwise {
                init: ValueSource::Tensor(bn.x),
                first: EpilogueOp::BatchNormInference(bn),
            })
        }
        NodeAttributes::BatchnormAttributes(a) => batch_norm_training(graph, name, a),
        NodeAttributes::BatchnormBackwardAttributes(a) => batch_norm_backward(graph, name, a),
        NodeAttributes::LayernormAttributes(_) | NodeAttributes::RMSNormAttributes(_) => {
            normalization(graph, name, attributes)
        }
        NodeAttributes::ReductionAttributes(a) => {
            let (x, y) = (a.in_tensor_uid, a.out_tensor_uid);
            in_memory(graph, name, x, "in")?;
            let (xd, yd) = (graph.dims(x), graph.dims(y));
            if xd.len() != yd.len() || xd.iter().zip(yd).any(|(a, b)| a != b && *b != 1) {
                refuse!(name, "output dims {yd:?} are not a reduction of {xd:?}");
            }
            let Some(op) = ReduceOp::from_mode(a.mode) else {
                refuse!(name, "reduction mode {} is not supported", a.mode.0);
            };
            Ok(HeadOp::Reduction { x, op })
        }
        NodeAttributes::ResampleFwdAttributes(a) => {
            if a.generate_index || a.index_tensor_uid.is_some() {
                refuse!(
                    name,
                    "resample index outputs (generate_index) are not supported"
                );
            }
            let mode = match a.resample_mode {
                ResampleMode::MAXPOOL => PoolMode::Max,
                ResampleMode::AVGPOOL_EXCLUDE_PADDING => PoolMode::AvgExcludePadding,
                ResampleMode::AVGPOOL_INCLUDE_PADDING => PoolMode::AvgIncludePadding,
                other => refuse!(name, "resample mode {} is not supported", other.0),
            };
            let (x, y) = (a.x_tensor_uid, a.y_tensor_uid);
            in_memory(graph, name, x, "x")?;
            let usizes = |v: &Vec<i64>| v.iter().map(|&e| usize::try_from(e).ok()).collect();
            let fields: Option<Vec<Vec<usize>>> =
                [&a.window, &a.stride, &a.pre_padding, &a.post_padding]
                    .into_iter()
                    .map(usizes)
                    .collect();
            let Some([window, stride, pre, post]) = fields.and_then(|f| <[_; 4]>::try_from(f).ok())
            else {
                refuse!(name, "negative window, stride or padding");
            };
            let zero_pad = a.padding_mode == PaddingMode::ZERO_PAD;
            let geometry = PoolGeometry::new(
                mode,
                zero_pad,
                graph.dims(x),
                graph.dims(y),
                [&window, &stride, &pre, &post],
            )
            .map_err(|e| format!("node \"{name}\": {e}"))?;
            Ok(HeadOp::Pool {
                x,
                geometry: Box::new(geometry),
            })
        }
        other => Err(format!(
            "node \"{name}\" is a {}, which CPU_ENGINE does not run",
            other.type_name()
        )),
    }
}

/// Checks a node extending a chain (the fusion policy's verdict, and what the epilogue
/// runs).
pub(super) fn check_step(graph: &Analysis<'_>, step: &ChainStep) -> Result<EpilogueOp, String> {
    if step.role == StepRole::BatchNormInference {
        return batch_norm_inference(graph, step.node).map(EpilogueOp::BatchNormInference);
    }
    pointwise(graph, step.node, step.slot).map(EpilogueOp::Pointwise)
}

fn in_memory(graph: &Analysis<'_>, node: &str, uid: i64, role: &str) -> Result<(), String> {
    if matches!(graph.tensor(uid).placement, Placement::Constant(_)) {
        refuse!(node, "{role} tensor uid {uid} is a pass-by-value scalar");
    }
    Ok(())
}

/// A one-value operand: a pass-by-value scalar or a one-element tensor.
fn scalar(graph: &Analysis<'_>, node: &str, uid: i64, role: &str) -> Result<ValueSource, String> {
    let t = graph.tensor(uid);
    match t.placement {
        Placement::Constant(v) => Ok(ValueSource::Constant(v)),
        _ if t.shape.numel() == 1 => Ok(ValueSource::Tensor(uid)),
        _ => refuse!(
            node,
            "{role} tensor uid {uid} must hold one value, has dims {:?}",
            t.shape.dims
        ),
    }
}

/// Tensors of `c` values, one per channel (`[1, C, 1, ...]` or `[C]`), by role; `None`s
/// (absent optional tensors) are skipped.
fn per_channel(
    graph: &Analysis<'_>,
    node: &str,
    c: usize,
    tensors: &[(Option<i64>, &str)],
) -> Result<(), String> {
    for &(uid, role) in tensors {
        let Some(uid) = uid else { continue };
        let t = graph.tensor(uid);
        let d = &t.shape.dims;
        if t.shape.numel() != c || (d.len() >= 2 && d[1] != c && c != 1) {
            refuse!(
                node,
                "{role} tensor uid {uid} has dims {d:?}, expected [1, {c}, 1, ...]"
            );
        }
        in_memory(graph, node, uid, role)?;
    }
    Ok(())
}

/// Forward convolution and its two gradients.
fn convolution(graph: &Analysis<'_>, name: &str, node: &NodeAttributes) -> Result<HeadOp, String> {
    let err = |e: String| format!("node \"{name}\": {e}");
    // The pass, (input, filter, output) of the forward convolution, and the two the node
    // reads with their roles, in the order the node lists them.
    let (pass, geometry, (x, w, y), reads) = match node {
        NodeAttributes::ConvolutionFwdAttributes(a) => (
            ConvPass::Forward,
            a.geometry(),
            (a.x_tensor_uid, a.w_tensor_uid, a.y_tensor_uid),
            [(a.x_tensor_uid, "x"), (a.w_tensor_uid, "w")],
        ),
        NodeAttributes::ConvolutionBwdAttributes(a) => (
            ConvPass::DataGradient,
            a.geometry(),
            (a.dx_tensor_uid, a.w_tensor_uid, a.dy_tensor_uid),
            [(a.dy_tensor_uid, "dy"), (a.w_tensor_uid, "w")],
        ),
        NodeAttributes::ConvolutionWrwAttributes(a) => (
            ConvPass::FilterGradient,
            a.geometry(),
            (a.x_tensor_uid, a.dw_tensor_uid, a.dy_tensor_uid),
            [(a.x_tensor_uid, "x"), (a.dy_tensor_uid, "dy")],
        ),
        _ => unreachable!("called for convolution nodes"),
    };
    for (uid, role) in reads {
        in_memory(graph, name, uid, role)?;
    }
    let params = ConvParams::from_wire(geometry).map_err(err)?;
    let geometry =
        ConvGeometry::new(graph.dims(x), graph.dims(w), graph.dims(y), &params).map_err(err)?;
    Ok(HeadOp::Convolution {
        pass,
        x,
        w,
        y,
        geometry,
    })
}

fn gen_index(graph: &Analysis<'_>, name: &str, p: &PointwiseAttributes) -> Result<HeadOp, String> {
    let d = graph.dims(p.out_0_tensor_uid);
    let rank = d.len() as i64;
    let axis = p.axis_tensor_uid.map(|a| if a < 0 { a + rank } else { a });
    let Some(axis) = axis.filter(|a| (0..rank).contains(a)) else {
        refuse!(
            name,
            "GEN_INDEX needs an axis in -{rank}..{rank}, got {:?}",
            p.axis_tensor_uid
        );
    };
    let input = &graph.tensor(p.in_0_tensor_uid).shape;
    if input.broadcast_strides(d).is_none() {
        refuse!(name, "input does not broadcast to the output dims {d:?}");
    }
    Ok(HeadOp::GenIndex {
        axis: axis as usize,
    })
}

/// Pointwise node `node` as an epilogue step whose input slot `chain_input` reads the
/// running value, checked.
fn pointwise(
    graph: &Analysis<'_>,
    node: usize,
    chain_input: usize,
) -> Result<EpilogueStep, String> {
    let NodeAttributes::PointwiseAttributes(p) = &graph.index.node(node).attributes else {
        unreachable!("called for pointwise nodes")
    };
    let name = graph.node_name(node);
    let params = PwParams {
        relu_lower_clip: p.relu_lower_clip,
        relu_upper_clip: p.relu_upper_clip,
        relu_lower_clip_slope: p.relu_lower_clip_slope,
        swish_beta: p.swish_beta,
        elu_alpha: p.elu_alpha,
        softplus_beta: p.softplus_beta,
    };
    let Some(op) = PwOp::from_mode(p.operation, &params) else {
        refuse!(name, "pointwise mode {:?} is not supported", p.operation);
    };
    let inputs = [
        Some(p.in_0_tensor_uid),
        p.in_1_tensor_uid,
        p.in_2_tensor_uid,
    ];
    let arity = op.arity();
    if let Some(k) = (0..arity).find(|&k| inputs[k].is_none()) {
        refuse!(name, "{op:?} needs input {k}");
    }
    if chain_input >= arity {
        refuse!(name, "{op:?} does not read input {chain_input}");
    }
    let od = graph.dims(p.out_0_tensor_uid);
    let mut others = [None, None, None];
    for (k, u) in inputs.into_iter().take(arity).flatten().enumerate() {
        let shape = &graph.tensor(u).shape;
        if shape.broadcast_strides(od).is_none() {
            refuse!(
                name,
                "input tensor uid {u} with dims {:?} does not broadcast to the output dims {od:?}",
                shape.dims
            );
        }
        if k != chain_input {
            others[k] = Some(graph.source(u));
        }
    }
    Ok(EpilogueStep {
        op,
        chain_input,
        others,
        store: None,
    })
}

/// x and y of a batch norm share dims of rank ≥ 2; the channel count.
fn batch_norm_dims(graph: &Analysis<'_>, name: &str, x: i64, y: i64) -> Result<usize, String> {
    let xd = graph.dims(x);
    if xd.len() < 2 || graph.dims(y) != xd {
        refuse!(name, "x and y must share dims of rank >= 2");
    }
    Ok(xd[1])
}

fn batch_norm_inference(graph: &Analysis<'_>, node: usize) -> Result<BatchNormInference, String> {
    let name = graph.node_name(node);
    let bn = match &graph.index.node(node).attributes {
        NodeAttributes::BatchnormInferenceAttributes(a) => BatchNormInference {
            x: a.x_tensor_uid,
            y: a.y_tensor_uid,
            channels: 0,
            mean: a.mean_tensor_uid,
            inv_variance: Some(a.inv_variance_tensor_uid),
            variance_epsilon: None,
            scale: a.scale_tensor_uid,
            bias: a.bias_tensor_uid,
        },
        NodeAttributes::BatchnormInferenceAttributesVarianceExt(a) => {
            let epsilon = scalar(graph, name, a.epsilon_tensor_uid, "epsilon")?;
            BatchNormInference {
                x: a.x_tensor_uid,
                y: a.y_tensor_uid,
                channels: 0,
                mean: a.mean_tensor_uid,
                inv_variance: None,
                variance_epsilon: Some((a.variance_tensor_uid, epsilon)),
                scale: a.scale_tensor_uid,
                bias: a.bias_tensor_uid,
            }
        }
        _ => unreachable!("called for batch-norm inference nodes"),
    };
    let c = batch_norm_dims(graph, name, bn.x, bn.y)?;
    let variance = bn.variance_epsilon.as_ref().map(|(u, _)| *u);
    per_channel(
        graph,
        name,
        c,
        &[
            (Some(bn.mean), "mean"),
            (Some(bn.scale), "scale"),
            (Some(bn.bias), "bias"),
            (bn.inv_variance, "inv_variance"),
            (variance, "variance"),
        ],
    )?;
    Ok(BatchNormInference { channels: c, ..bn })
}

fn batch_norm_training(
    graph: &Analysis<'_>,
    name: &str,
    a: &BatchnormAttributes,
) -> Result<HeadOp, String> {
    if !a.peer_stats_tensor_uid.is_empty() {
        refuse!(
            name,
            "peer statistics (multi-device batch norm) are not supported"
        );
    }
    in_memory(graph, name, a.x_tensor_uid, "x")?;
    let c = batch_norm_dims(graph, name, a.x_tensor_uid, a.y_tensor_uid)?;
    per_channel(
        graph,
        name,
        c,
        &[
            (Some(a.scale_tensor_uid), "scale"),
            (Some(a.bias_tensor_uid), "bias"),
            (a.prev_running_mean_tensor_uid, "prev_running_mean"),
            (a.prev_running_variance_tensor_uid, "prev_running_variance"),
            (a.mean_tensor_uid, "mean"),
            (a.inv_variance_tensor_uid, "inv_variance"),
            (a.next_running_mean_tensor_uid, "next_running_mean"),
            (a.next_running_variance_tensor_uid, "next_running_variance"),
        ],
    )?;
    let running = [
        a.prev_running_mean_tensor_uid,
        a.prev_running_variance_tensor_uid,
        a.next_running_mean_tensor_uid,
        a.next_running_variance_tensor_uid,
    ];
    let any = running.iter().any(Option::is_some);
    if any && (running.iter().any(Option::is_none) || a.momentum_tensor_uid.is_none()) {
        refuse!(
            name,
            "running statistics need prev/next mean and variance and a momentum"
        );
    }
    let epsilon = scalar(graph, name, a.epsilon_tensor_uid, "epsilon")?;
    let momentum = a
        .momentum_tensor_uid
        .map(|m| scalar(graph, name, m, "momentum"))
        .transpose()?;
    Ok(HeadOp::BatchNormTraining(Box::new(BatchNormTraining {
        node: a.clone(),
        channels: c,
        epsilon,
        momentum,
    })))
}

fn batch_norm_backward(
    graph: &Analysis<'_>,
    name: &str,
    a: &BatchnormBackwardAttributes,
) -> Result<HeadOp, String> {
    if !a.peer_stats_tensor_uid.is_empty() {
        refuse!(
            name,
            "peer statistics (multi-device batch norm) are not supported"
        );
    }
    let (x, dy, dx) = (a.x_tensor_uid, a.dy_tensor_uid, a.dx_tensor_uid);
    let xd = graph.dims(x);
    if xd.len() < 2 || graph.dims(dy) != xd || graph.dims(dx) != xd {
        refuse!(name, "x, dy and dx must share dims of rank >= 2");
    }
    for (u, r) in [(x, "x"), (dy, "dy")] {
        in_memory(graph, name, u, r)?;
    }
    per_channel(
        graph,
        name,
        xd[1],
        &[
            (Some(a.scale_tensor_uid), "scale"),
            (a.mean_tensor_uid, "mean"),
            (a.inv_variance_tensor_uid, "inv_variance"),
            (Some(a.dscale_tensor_uid), "dscale"),
            (Some(a.dbias_tensor_uid), "dbias"),
        ],
    )?;
    if a.mean_tensor_uid.is_some() != a.inv_variance_tensor_uid.is_some() {
        refuse!(name, "mean and inv_variance must be given together");
    }
    if a.mean_tensor_uid.is_none() {
        refuse!(
            name,
            "batch-norm backward needs the saved mean and inv_variance"
        );
    }
    Ok(HeadOp::BatchNormBackward(Box::new(a.clone())))
}

/// Layer norm and RMS norm.
fn normalization(
    graph: &Analysis<'_>,
    name: &str,
    node: &NodeAttributes,
) -> Result<HeadOp, String> {
    // The fields, the normalized dim count (RMS norm: all but the batch dim), the
    // epsilon uid and the phase.
    let (norm, count, epsilon, phase) = match node {
        NodeAttributes::LayernormAttributes(a) => (
            Normalization {
                rms: false,
                x: a.x_tensor_uid,
                y: a.y_tensor_uid,
                keep: Vec::new(),
                epsilon: ValueSource::Constant(0.0),
                mean_out: a.mean_tensor_uid,
                inv_out: a.inv_variance_tensor_uid,
                scale: Some(a.scale_tensor_uid),
                bias: Some(a.bias_tensor_uid),
            },
            Some(a.normalized_dim_count),
            a.epsilon_tensor_uid,
            a.forward_phase,
        ),
        NodeAttributes::RMSNormAttributes(a) => (
            Normalization {
                rms: true,
                x: a.x_tensor_uid,
                y: a.y_tensor_uid,
                keep: Vec::new(),
                epsilon: ValueSource::Constant(0.0),
                mean_out: None,
                inv_out: a.inv_rms_tensor_uid,
                scale: Some(a.scale_tensor_uid),
                bias: a.bias_tensor_uid,
            },
            None,
            a.epsilon_tensor_uid,
            a.forward_phase,
        ),
        _ => unreachable!("called for normalization nodes"),
    };
    in_memory(graph, name, norm.x, "x")?;
    let xd = graph.dims(norm.x);
    let r = xd.len();
    if graph.dims(norm.y) != xd {
        refuse!(name, "x and y must share dims");
    }
    if norm.rms && r < 2 {
        refuse!(name, "RMS norm needs rank >= 2");
    }
    // A layer norm over no dims (count 0) is refused, as the reference refuses it.
    let count = match count {
        Some(n) => usize::try_from(n).unwrap_or(usize::MAX),
        None => r.saturating_sub(1),
    };
    if count == 0 || count > r {
        refuse!(name, "cannot normalize {count} of {r} dims");
    }
    let keep = (0..r).map(|d| d < r - count).collect();
    if phase == NormFwdPhase::INFERENCE && (norm.mean_out.is_some() || norm.inv_out.is_some()) {
        tracing::debug!(node = %name, "inference-phase norm with statistics outputs: writing them anyway");
    }
    let norm = Normalization { keep, ..norm };
    let stats_dims = norm.stats_dims(xd);
    for (u, r) in [(norm.mean_out, "mean"), (norm.inv_out, "inv_variance")] {
        if let Some(u) = u {
            let t = graph.tensor(u);
            if t.shape.broadcast_strides(&stats_dims).is_none()
                || t.shape.numel() != stats_dims.iter().product::<usize>()
            {
                refuse!(
                    name,
                    "{r} tensor uid {u} has dims {:?}, expected {stats_dims:?}",
                    t.shape.dims
                );
            }
        }
    }
    let norm = Normalization {
        epsilon: scalar(graph, name, epsilon, "epsilon")?,
        ..norm
    };
    for (u, r) in [(norm.scale, "scale"), (norm.bias, "bias")] {
        let Some(u) = u else { continue };
        let dims = &graph.tensor(u).shape.dims;
        if graph.tensor(u).shape.broadcast_strides(xd).is_none() {
            refuse!(
                name,
                "{r} tensor uid {u} does not broadcast to x dims {xd:?}"
            );
        }
        // The affine parameters vary over the normalized dims only, as in the
        // reference: one that varies over a statistics dim is not a normalization's.
        let lead = dims.len().saturating_sub(count);
        if dims[..lead].iter().any(|&d| d != 1) {
            refuse!(
                name,
                "{r} tensor uid {u} has dims {dims:?}, varying over the leading dims of x {xd:?} that are not normalized"
            );
        }
    }
    Ok(HeadOp::Normalization(Box::new(norm)))
}
