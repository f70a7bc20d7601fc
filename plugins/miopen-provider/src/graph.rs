//! hipDNN graphs as MIOpen patterns, decided without a device.
//!
//! MIOpen runs operations, not graphs: a plan is one of a fixed set of patterns, each
//! one MIOpen call (or fusion plan). [`Pattern::match_graph`] recognises the whole graph
//! as one of them and checks every tensor against what MIOpen runs; anything else is
//! refused with the reason, naming the node or tensor at fault. No MIOpen call is
//! needed, so this part of the applicability decision (and its unit tests) works on any
//! machine; where MIOpen decides per device, the engine then asks it (a convolution
//! needs a listed solution, a fusion must compile: see the crate docs).
//!
//! # What is claimed, exactly
//! Data types are FLOAT, HALF or BFLOAT16; layouts are packed NCL, NLC, NCHW, NHWC,
//! NCDHW or NDHWC (rank-3 tensors go to MIOpen as 4-D with a unit height); a node's
//! compute type is FLOAT.
//! * **Convolution** forward, data gradient, weight gradient: one node; x, w and y of
//!   one type and one layout family (channels-first or channels-last); 1 to 3 spatial
//!   dims; symmetric padding (MIOpen takes one pad per dim); any stride, dilation and
//!   group count the shapes imply; cross-correlation only.
//! * **Convolution forward + (bias) + activation** through a fusion plan: conv → an ADD
//!   of a per-channel `[1, K, 1, …]` bias (either operand order) → ReLU (plain, upper
//!   clip, or lower and upper clip); the intermediates are virtual and FLOAT or the
//!   input type. MIOpen compiles the fused kernel when applicability is checked; where
//!   it has none (`miopenStatusUnsupportedOp`), the graph is not claimed.
//! * **Batch-norm inference** from an inverse variance or from a variance and an
//!   epsilon, optionally followed by a ReLU (plain, clipped, clamp) on its output;
//!   **training** with batch statistics (saved mean and inverse variance optional) and
//!   optional running statistics updated by momentum, optionally followed by a ReLU;
//!   **backward** from saved statistics, optionally preceded by the pattern
//!   "batch-norm inference → RELU_BWD", which MIOpen fuses as one call. Spatial mode
//!   only: x, y, dy, dx of one type and layout, rank 3 to 5; scale, bias, mean and
//!   variances FLOAT `[1, C, 1, …]`; training needs more than one value per channel.
//! * **Standalone activations**: RELU_FWD (plain, clipped, clamp, leaky), SIGMOID_FWD,
//!   TANH_FWD on FLOAT or HALF, x and y with the same packed layout.
//! * **Standalone binary** ADD, SUB (as ADD with `in_1` scaled by −1), MUL, MAX_OP,
//!   MIN_OP on FLOAT or HALF, rank 3 to 5, packed channels-first; `in_0` has the output's
//!   dims, `in_1` may broadcast (each dim 1 or equal).

use hipdnn_data_sdk::DataType;
use hipdnn_flatbuffers_sdk::model::{
    BatchnormAttributes, BatchnormBackwardAttributes, Graph, NodeAttributes, PointwiseAttributes,
};
use hipdnn_flatbuffers_sdk::wire::{ConvMode, PointwiseMode};
use hipdnn_plugin_sdk::graph::GraphIndex;

use crate::miopen::safe::{Activation, ConvDirection, ConvGeometry};
use crate::miopen::sys::{miopenActivationMode_t as Mode, miopenDataType_t, miopenTensorOp_t};

/// A tensor as MIOpen sees it (rank 3 already lifted to 4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tensor {
    /// The hipDNN uid.
    pub uid: i64,
    /// MIOpen's type.
    pub dtype: miopenDataType_t,
    /// Extents.
    pub dims: Vec<i64>,
    /// Element strides.
    pub strides: Vec<i64>,
}

impl Tensor {
    /// Bytes from the first to one past the last element.
    pub fn byte_extent(&self) -> usize {
        let last: i64 = self
            .dims
            .iter()
            .zip(&self.strides)
            .map(|(d, s)| (d - 1) * s)
            .sum();
        (last as usize + 1) * element_size(self.dtype)
    }
}

/// Bytes per element of a type the engine takes.
pub fn element_size(dtype: miopenDataType_t) -> usize {
    if dtype == miopenDataType_t::miopenFloat {
        4
    } else {
        2
    }
}

/// What a plan runs: one MIOpen call or fusion plan.
#[derive(Debug, Clone, PartialEq)]
pub enum Pattern {
    /// A convolution in one direction. `a`, `b`, `out` follow MIOpen's immediate-mode
    /// argument order ([`crate::miopen::safe::ConvProblem`]).
    Conv {
        /// Direction.
        direction: ConvDirection,
        /// Forward: w; data gradient: dy; weight gradient: dy.
        a: Tensor,
        /// Forward: x; data gradient: w; weight gradient: x.
        b: Tensor,
        /// The output.
        out: Tensor,
        /// Geometry (2-D for a lifted 1-D convolution).
        geometry: ConvGeometry,
    },
    /// Convolution forward + optional bias + activation, fused.
    ConvBiasActivation {
        /// Input.
        x: Tensor,
        /// Filter.
        w: Tensor,
        /// Per-channel bias.
        bias: Option<Tensor>,
        /// Output.
        y: Tensor,
        /// Geometry.
        geometry: ConvGeometry,
        /// The activation.
        activation: Activation,
    },
    /// Batch-norm inference.
    BnInference {
        /// Input.
        x: Tensor,
        /// Output.
        y: Tensor,
        /// Scale, bias, mean and (inverse) variance, in that order.
        params: [Tensor; 4],
        /// `Some(epsilon)`: the fourth parameter is a variance; `None`: an inverse
        /// variance.
        epsilon: Option<f64>,
        /// A fused activation.
        activation: Option<Activation>,
    },
    /// Batch-norm training forward.
    BnTraining {
        /// Input.
        x: Tensor,
        /// Output.
        y: Tensor,
        /// Scale and bias.
        scale: Tensor,
        /// Bias.
        bias: Tensor,
        /// Saved mean and inverse variance outputs, when the graph has them.
        saved: (Option<i64>, Option<i64>),
        /// Running statistics: `(prev mean, prev variance, next mean, next variance,
        /// momentum)`.
        running: Option<(i64, i64, i64, i64, f64)>,
        /// Epsilon.
        epsilon: f64,
        /// A fused activation.
        activation: Option<Activation>,
    },
    /// Batch-norm backward from saved statistics.
    BnBackward {
        /// Forward input.
        x: Tensor,
        /// Output gradient (the graph's `dy`; for the fused form, the `RELU_BWD`'s
        /// incoming gradient).
        dy: Tensor,
        /// Input gradient.
        dx: Tensor,
        /// Scale (and its descriptor for bias, mean, variance: all `[1, C, 1, …]`).
        scale: Tensor,
        /// Saved mean and inverse variance.
        saved: (i64, i64),
        /// Parameter gradients.
        dscale: i64,
        /// Bias gradient.
        dbias: i64,
        /// The fused form: the forward bias and the activation whose gradient MIOpen
        /// applies first.
        activation: Option<(i64, Activation)>,
    },
    /// A standalone activation.
    Activation {
        /// Input.
        x: Tensor,
        /// Output.
        y: Tensor,
        /// The activation.
        activation: Activation,
    },
    /// A standalone binary operation `y = op(a, alpha2 · b)`.
    Binary {
        /// The operation.
        op: miopenTensorOp_t,
        /// `in_0`.
        a: Tensor,
        /// `in_1` (may broadcast).
        b: Tensor,
        /// `-1` for SUB, else `1`.
        alpha2: f32,
        /// Output.
        y: Tensor,
    },
}

type Result<T> = std::result::Result<T, String>;

/// The memory order of a tensor, by its strides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Order {
    /// Row-major (NCL, NCHW, NCDHW).
    ChannelsFirst,
    /// Channels innermost (NLC, NHWC, NDHWC).
    ChannelsLast,
}

fn packed(dims: &[usize], order: &[usize]) -> Vec<usize> {
    let mut strides = vec![0; dims.len()];
    let mut step = 1;
    for &d in order.iter().rev() {
        strides[d] = step;
        step *= dims[d];
    }
    strides
}

/// Whether `strides` equal the packed strides of `order` (unit dims may have any
/// stride).
fn matches_order(dims: &[usize], strides: &[usize], order: &[usize]) -> bool {
    let expected = packed(dims, order);
    dims.iter()
        .zip(strides.iter().zip(&expected))
        .all(|(&d, (s, e))| d == 1 || s == e)
}

/// The orders `strides` are packed in (both for tensors whose unit dims make them
/// ambiguous, e.g. a depthwise filter `[K, 1, R, S]`); empty when not packed.
fn orders_of(dims: &[usize], strides: &[usize]) -> Vec<Order> {
    let rank = dims.len();
    let mut found = Vec::new();
    let first: Vec<usize> = (0..rank).collect();
    if matches_order(dims, strides, &first) {
        found.push(Order::ChannelsFirst);
    }
    if rank >= 3 {
        let last: Vec<usize> = std::iter::once(0).chain(2..rank).chain([1]).collect();
        if matches_order(dims, strides, &last) {
            found.push(Order::ChannelsLast);
        }
    }
    found
}

/// The graph and its index, with the checks patterns share.
struct Ctx<'g> {
    index: GraphIndex<'g>,
}

impl<'g> Ctx<'g> {
    fn name(&self, uid: i64) -> String {
        let t = self.index.tensor(uid);
        if t.name.is_empty() {
            format!("tensor {uid}")
        } else {
            format!("tensor {uid} (\"{}\")", t.name)
        }
    }

    fn dtype(&self, uid: i64) -> Result<miopenDataType_t> {
        match self.index.data_type(uid) {
            DataType::Float => Ok(miopenDataType_t::miopenFloat),
            DataType::Half => Ok(miopenDataType_t::miopenHalf),
            DataType::Bfloat16 => Ok(miopenDataType_t::miopenBFloat16),
            other => Err(format!(
                "{} is {}: MIOPEN_ENGINE takes FLOAT, HALF and BFLOAT16",
                self.name(uid),
                other.name()
            )),
        }
    }

    fn orders(&self, uid: i64) -> Result<Vec<Order>> {
        let found = orders_of(self.index.dims(uid), self.index.strides(uid));
        if found.is_empty() {
            return Err(format!(
                "{} is not densely packed channels-first or channels-last (dims {:?}, strides {:?})",
                self.name(uid),
                self.index.dims(uid),
                self.index.strides(uid)
            ));
        }
        Ok(found)
    }

    /// The tensor as MIOpen sees it, rank 3 lifted to 4 (a unit dim before the last).
    fn tensor(&self, uid: i64) -> Result<Tensor> {
        let dtype = self.dtype(uid)?;
        let t = self.index.tensor(uid);
        if t.value.is_some() {
            return Err(format!("{} is a pass-by-value scalar here", self.name(uid)));
        }
        let mut dims = t.dims.clone();
        let mut strides = t.strides.clone();
        if dims.len() == 3 {
            let inner = dims[2] * strides[2];
            dims.insert(2, 1);
            strides.insert(2, inner);
        }
        Ok(Tensor {
            uid,
            dtype,
            dims,
            strides,
        })
    }

    fn scalar(&self, uid: i64, what: &str) -> Result<f64> {
        self.index
            .scalar(uid)
            .ok_or_else(|| format!("{what} ({}) must be a pass-by-value scalar", self.name(uid)))
    }

    fn compute_is_float(&self, node: usize) -> Result<()> {
        match self.index.compute_data_type(node) {
            DataType::Float => Ok(()),
            other => Err(format!(
                "node \"{}\" computes in {}: MIOPEN_ENGINE computes in FLOAT",
                self.index.node(node).name,
                other.name()
            )),
        }
    }

    fn virtual_intermediate(&self, uid: i64, allowed: &[DataType]) -> Result<()> {
        if !self.index.is_virtual(uid) {
            return Err(format!(
                "{} is a fused intermediate but not virtual: MIOpen does not write it",
                self.name(uid)
            ));
        }
        let dt = self.index.data_type(uid);
        if !allowed.contains(&dt) {
            return Err(format!(
                "{} is {}: MIOpen's fused intermediates are FLOAT (or the input type after a bias)",
                self.name(uid),
                dt.name()
            ));
        }
        Ok(())
    }
}

/// Whether `t` is `[1, C, 1, …]` of rank `rank` (before lifting).
fn is_per_channel(dims: &[usize], rank: usize, c: usize) -> bool {
    dims.len() == rank && dims[1] == c && dims.iter().enumerate().all(|(i, &d)| i == 1 || d == 1)
}

/// The ReLU family as a MIOpen activation (`leaky`: whether a lower-clip slope is
/// acceptable).
fn relu(p: &PointwiseAttributes, leaky: bool, node: &str) -> Result<Activation> {
    let lower = p.relu_lower_clip.map(f64::from);
    let upper = p.relu_upper_clip.map(f64::from);
    if let Some(slope) = p.relu_lower_clip_slope {
        if !leaky || lower.is_some_and(|l| l != 0.0) || upper.is_some() {
            return Err(format!(
                "node \"{node}\": leaky ReLU (slope {slope}) with clips is not supported by MIOPEN_ENGINE"
            ));
        }
        return Ok(Activation::new(
            Mode::miopenActivationLEAKYRELU,
            f64::from(slope),
            0.0,
        ));
    }
    Ok(match (lower, upper) {
        (None | Some(0.0), None) => Activation::new(Mode::miopenActivationRELU, 0.0, 0.0),
        (None | Some(0.0), Some(u)) => Activation::new(Mode::miopenActivationCLIPPEDRELU, u, 0.0),
        (Some(l), Some(u)) => Activation::new(Mode::miopenActivationCLAMP, l, u),
        (Some(l), None) => Activation::new(Mode::miopenActivationCLAMP, l, f64::from(f32::MAX)),
    })
}

/// An activation MIOpen fuses (ReLU, clipped ReLU, clamp; no leaky slope).
fn fused_relu(p: &PointwiseAttributes, node: &str) -> Result<Activation> {
    if p.operation != PointwiseMode::RELU_FWD {
        return Err(format!(
            "node \"{node}\": {} cannot be fused by MIOPEN_ENGINE (ReLU, clipped ReLU and clamp can)",
            mode_name(p.operation)
        ));
    }
    relu(p, false, node)
}

fn mode_name(m: PointwiseMode) -> String {
    m.variant_name()
        .map_or_else(|| format!("mode {}", m.0), str::to_owned)
}

fn unary_extra_operands(p: &PointwiseAttributes, node: &str) -> Result<()> {
    if p.in_1_tensor_uid.is_some() || p.in_2_tensor_uid.is_some() {
        return Err(format!(
            "node \"{node}\": {} takes one input",
            mode_name(p.operation)
        ));
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn geometry(
    ctx: &Ctx<'_>,
    node: usize,
    pre: &[i64],
    post: &[i64],
    stride: &[i64],
    dilation: &[i64],
    mode: ConvMode,
    x: i64,
    w: i64,
) -> Result<ConvGeometry> {
    let name = &ctx.index.node(node).name;
    if mode != ConvMode::CROSS_CORRELATION {
        return Err(format!(
            "node \"{name}\": convolution mode {} is not supported by MIOPEN_ENGINE (cross-correlation only)",
            mode.variant_name().unwrap_or("UNSET")
        ));
    }
    if pre != post {
        return Err(format!(
            "node \"{name}\": asymmetric padding {pre:?}/{post:?} is not supported by MIOPEN_ENGINE"
        ));
    }
    let xd = ctx.index.dims(x);
    let wd = ctx.index.dims(w);
    if !(3..=5).contains(&xd.len()) {
        return Err(format!(
            "node \"{name}\": a rank-{} convolution is not supported by MIOPEN_ENGINE",
            xd.len()
        ));
    }
    let groups = xd[1] / wd[1].max(1);
    let mut g = ConvGeometry {
        padding: pre.to_vec(),
        stride: stride.to_vec(),
        dilation: dilation.to_vec(),
        groups: groups as i64,
    };
    if xd.len() == 3 {
        g.padding.insert(0, 0);
        g.stride.insert(0, 1);
        g.dilation.insert(0, 1);
    }
    ctx.compute_is_float(node)?;
    Ok(g)
}

fn same_family(ctx: &Ctx<'_>, uids: &[i64], what: &str) -> Result<()> {
    let mut common = ctx.orders(uids[0])?;
    let dtype = ctx.dtype(uids[0])?;
    for &u in &uids[1..] {
        let orders = ctx.orders(u)?;
        common.retain(|o| orders.contains(o));
        if common.is_empty() {
            return Err(format!(
                "{what}: {} and {} have different layouts",
                ctx.name(uids[0]),
                ctx.name(u)
            ));
        }
        if ctx.dtype(u)? != dtype {
            return Err(format!(
                "{what}: {} and {} have different data types",
                ctx.name(uids[0]),
                ctx.name(u)
            ));
        }
    }
    Ok(())
}

impl Pattern {
    /// The pattern `graph` is, or why MIOPEN_ENGINE does not run it.
    ///
    /// # Errors
    /// The reason, naming the node or tensor at fault.
    pub fn match_graph(graph: &Graph) -> Result<Self> {
        let ctx = Ctx {
            index: GraphIndex::new(graph).map_err(|e| e.to_string())?,
        };
        let nodes: Vec<&NodeAttributes> = graph.nodes.iter().map(|n| &n.attributes).collect();
        match nodes.as_slice() {
            [
                NodeAttributes::ConvolutionFwdAttributes(_)
                | NodeAttributes::ConvolutionBwdAttributes(_)
                | NodeAttributes::ConvolutionWrwAttributes(_),
            ] => conv(&ctx, 0),
            [
                NodeAttributes::ConvolutionFwdAttributes(_),
                NodeAttributes::PointwiseAttributes(_),
                ..,
            ] => conv_bias_activation(&ctx),
            [
                NodeAttributes::BatchnormInferenceAttributes(_)
                | NodeAttributes::BatchnormInferenceAttributesVarianceExt(_),
            ] => bn_inference(&ctx, None),
            [
                NodeAttributes::BatchnormInferenceAttributes(_)
                | NodeAttributes::BatchnormInferenceAttributesVarianceExt(_),
                NodeAttributes::PointwiseAttributes(p),
            ] if p.operation == PointwiseMode::RELU_FWD => bn_inference(&ctx, Some(1)),
            [NodeAttributes::BatchnormAttributes(bn)] => bn_training(&ctx, bn, None),
            [
                NodeAttributes::BatchnormAttributes(bn),
                NodeAttributes::PointwiseAttributes(_),
            ] => bn_training(&ctx, bn, Some(1)),
            [NodeAttributes::BatchnormBackwardAttributes(bn)] => bn_backward(&ctx, bn, None),
            [
                NodeAttributes::BatchnormInferenceAttributes(_),
                NodeAttributes::PointwiseAttributes(_),
                NodeAttributes::BatchnormBackwardAttributes(bn),
            ] => bn_backward(&ctx, bn, Some((0, 1))),
            [NodeAttributes::PointwiseAttributes(p)] => pointwise(&ctx, p),
            _ => Err(format!(
                "graph \"{}\" ({}) is not a pattern MIOPEN_ENGINE runs (see its crate docs)",
                graph.name,
                graph
                    .nodes
                    .iter()
                    .map(|n| n.attributes.type_name())
                    .collect::<Vec<_>>()
                    .join(" → ")
            )),
        }
    }

    /// The label of the pattern, for logs.
    pub fn label(&self) -> &'static str {
        match self {
            Self::Conv {
                direction: ConvDirection::Forward,
                ..
            } => "conv_fprop",
            Self::Conv {
                direction: ConvDirection::BackwardData,
                ..
            } => "conv_dgrad",
            Self::Conv {
                direction: ConvDirection::BackwardWeights,
                ..
            } => "conv_wgrad",
            Self::ConvBiasActivation { .. } => "conv_bias_activation",
            Self::BnInference { .. } => "batchnorm_inference",
            Self::BnTraining { .. } => "batchnorm_training",
            Self::BnBackward { .. } => "batchnorm_backward",
            Self::Activation { .. } => "activation",
            Self::Binary { .. } => "binary",
        }
    }

    /// Whether the pattern is a convolution (the deterministic engine's builders).
    pub fn is_convolution(&self) -> bool {
        matches!(self, Self::Conv { .. } | Self::ConvBiasActivation { .. })
    }
}

fn conv(ctx: &Ctx<'_>, node: usize) -> Result<Pattern> {
    let (direction, x, w, y, g) = match &ctx.index.node(node).attributes {
        NodeAttributes::ConvolutionFwdAttributes(a) => {
            let g = geometry(
                ctx,
                node,
                &a.pre_padding,
                &a.post_padding,
                &a.stride,
                &a.dilation,
                a.conv_mode,
                a.x_tensor_uid,
                a.w_tensor_uid,
            )?;
            (
                ConvDirection::Forward,
                a.x_tensor_uid,
                a.w_tensor_uid,
                a.y_tensor_uid,
                g,
            )
        }
        NodeAttributes::ConvolutionBwdAttributes(a) => {
            let g = geometry(
                ctx,
                node,
                &a.pre_padding,
                &a.post_padding,
                &a.stride,
                &a.dilation,
                a.conv_mode,
                a.dx_tensor_uid,
                a.w_tensor_uid,
            )?;
            (
                ConvDirection::BackwardData,
                a.dx_tensor_uid,
                a.w_tensor_uid,
                a.dy_tensor_uid,
                g,
            )
        }
        NodeAttributes::ConvolutionWrwAttributes(a) => {
            let g = geometry(
                ctx,
                node,
                &a.pre_padding,
                &a.post_padding,
                &a.stride,
                &a.dilation,
                a.conv_mode,
                a.x_tensor_uid,
                a.dw_tensor_uid,
            )?;
            (
                ConvDirection::BackwardWeights,
                a.x_tensor_uid,
                a.dw_tensor_uid,
                a.dy_tensor_uid,
                g,
            )
        }
        _ => unreachable!("matched as a convolution"),
    };
    let what = format!("node \"{}\"", ctx.index.node(node).name);
    same_family(ctx, &[x, w, y], &what)?;
    let (x, w, y) = (ctx.tensor(x)?, ctx.tensor(w)?, ctx.tensor(y)?);
    let (a, b, out) = match direction {
        ConvDirection::Forward => (w, x, y),
        ConvDirection::BackwardData => (y, w, x),
        ConvDirection::BackwardWeights => (y, x, w),
    };
    Ok(Pattern::Conv {
        direction,
        a,
        b,
        out,
        geometry: g,
    })
}

fn conv_bias_activation(ctx: &Ctx<'_>) -> Result<Pattern> {
    let graph = ctx.index.graph();
    let NodeAttributes::ConvolutionFwdAttributes(c) = &graph.nodes[0].attributes else {
        unreachable!("matched");
    };
    let g = geometry(
        ctx,
        0,
        &c.pre_padding,
        &c.post_padding,
        &c.stride,
        &c.dilation,
        c.conv_mode,
        c.x_tensor_uid,
        c.w_tensor_uid,
    )?;
    let pw = |i: usize| match &graph.nodes[i].attributes {
        NodeAttributes::PointwiseAttributes(p) => Ok(p),
        other => Err(format!(
            "node \"{}\" ({}) cannot follow a fused convolution in MIOPEN_ENGINE",
            graph.nodes[i].name,
            other.type_name()
        )),
    };
    let (bias, act_node) = match graph.nodes.len() {
        2 => (None, 1),
        3 => (Some(pw(1)?), 2),
        _ => return Err("a convolution fused with more than a bias and an activation is not supported by MIOPEN_ENGINE".into()),
    };
    let act = pw(act_node)?;
    let act_name = &graph.nodes[act_node].name;
    let activation = fused_relu(act, act_name)?;
    unary_extra_operands(act, act_name)?;
    let mut into_act = c.y_tensor_uid;
    let conv_out = c.y_tensor_uid;
    let mut bias_tensor = None;
    let xdt = ctx.index.data_type(c.x_tensor_uid);
    if let Some(b) = bias {
        let name = &graph.nodes[1].name;
        if b.operation != PointwiseMode::ADD {
            return Err(format!(
                "node \"{name}\": {} between a convolution and its activation is not fused by MIOPEN_ENGINE (a bias ADD is)",
                mode_name(b.operation)
            ));
        }
        let other = match (b.in_0_tensor_uid, b.in_1_tensor_uid) {
            (a, Some(o)) if a == conv_out => o,
            (o, Some(a)) if a == conv_out => o,
            _ => {
                return Err(format!(
                    "node \"{name}\": the bias ADD must take the convolution's output"
                ));
            }
        };
        if b.in_2_tensor_uid.is_some() {
            return Err(format!("node \"{name}\": ADD takes two inputs"));
        }
        let yd = ctx.index.dims(conv_out);
        if !is_per_channel(ctx.index.dims(other), yd.len(), yd[1]) {
            return Err(format!(
                "node \"{name}\": {} is not a per-channel bias [1, {}, 1, …]",
                ctx.name(other),
                yd[1]
            ));
        }
        ctx.virtual_intermediate(conv_out, &[DataType::Float, xdt])?;
        into_act = b.out_0_tensor_uid;
        ctx.virtual_intermediate(into_act, &[DataType::Float, xdt])?;
        let mut t = ctx.tensor(other)?;
        if t.dtype != ctx.dtype(c.x_tensor_uid)? {
            return Err(format!(
                "{}: the bias must have the input's type",
                ctx.name(other)
            ));
        }
        // The bias goes to MIOpen as [1, K, 1, 1] (or [1, K, 1, 1, 1]) packed.
        t.strides = packed(
            &t.dims.iter().map(|&d| d as usize).collect::<Vec<_>>(),
            &(0..t.dims.len()).collect::<Vec<_>>(),
        )
        .into_iter()
        .map(|s| s as i64)
        .collect();
        bias_tensor = Some(t);
    } else {
        ctx.virtual_intermediate(conv_out, &[DataType::Float])?;
    }
    if act.in_0_tensor_uid != into_act {
        return Err(format!(
            "node \"{act_name}\": the activation must take the fused chain's value"
        ));
    }
    let y = act.out_0_tensor_uid;
    same_family(
        ctx,
        &[c.x_tensor_uid, c.w_tensor_uid, y],
        "the fused convolution",
    )?;
    for node in 1..graph.nodes.len() {
        ctx.compute_is_float(node)?;
    }
    Ok(Pattern::ConvBiasActivation {
        x: ctx.tensor(c.x_tensor_uid)?,
        w: ctx.tensor(c.w_tensor_uid)?,
        bias: bias_tensor,
        y: ctx.tensor(y)?,
        geometry: g,
        activation,
    })
}

/// Checks the batch-norm tensors: io of one type and layout, rank 3–5; parameters
/// FLOAT `[1, C, 1, …]`.
fn bn_tensors(ctx: &Ctx<'_>, io: &[i64], params: &[i64], what: &str) -> Result<()> {
    let x = io[0];
    let xd = ctx.index.dims(x);
    if !(3..=5).contains(&xd.len()) {
        return Err(format!(
            "{what}: rank-{} batch norm is not supported by MIOPEN_ENGINE (rank 3 to 5)",
            xd.len()
        ));
    }
    same_family(ctx, io, what)?;
    for &u in &io[1..] {
        if ctx.index.dims(u) != xd {
            return Err(format!(
                "{what}: {} must have {}'s dims",
                ctx.name(u),
                ctx.name(x)
            ));
        }
    }
    for &p in params {
        if ctx.index.data_type(p) != DataType::Float {
            return Err(format!(
                "{what}: {} must be FLOAT (MIOpen's batch-norm parameters and statistics are)",
                ctx.name(p)
            ));
        }
        if !is_per_channel(ctx.index.dims(p), xd.len(), xd[1]) {
            return Err(format!(
                "{what}: {} is not [1, {}, 1, …]: MIOPEN_ENGINE runs spatial batch norm only",
                ctx.name(p),
                xd[1]
            ));
        }
    }
    Ok(())
}

/// A per-channel tensor as MIOpen's batch-norm descriptors take it: packed.
fn param_tensor(ctx: &Ctx<'_>, uid: i64) -> Result<Tensor> {
    let mut t = ctx.tensor(uid)?;
    let rank = t.dims.len();
    t.strides = vec![1; rank];
    t.strides[0] = t.dims[1];
    Ok(t)
}

/// The activation fused onto a normalization's output `y` (node `act_node`, if any) and
/// the pattern's output: the activation's, or `y` itself.
fn fused_output_activation(
    ctx: &Ctx<'_>,
    act_node: Option<usize>,
    x: i64,
    y: i64,
    what: &str,
) -> Result<(Option<Activation>, i64)> {
    let Some(i) = act_node else {
        return Ok((None, y));
    };
    let node = &ctx.index.node(i);
    let NodeAttributes::PointwiseAttributes(p) = &node.attributes else {
        unreachable!("matched as a pointwise node");
    };
    unary_extra_operands(p, &node.name)?;
    if p.in_0_tensor_uid != y {
        return Err(format!("node \"{}\" must take {what}'s output", node.name));
    }
    ctx.virtual_intermediate(y, &[DataType::Float, ctx.index.data_type(x)])?;
    ctx.compute_is_float(i)?;
    Ok((Some(fused_relu(p, &node.name)?), p.out_0_tensor_uid))
}

fn bn_inference(ctx: &Ctx<'_>, act_node: Option<usize>) -> Result<Pattern> {
    let graph = ctx.index.graph();
    let name = &graph.nodes[0].name;
    let what = format!("node \"{name}\"");
    let (x, y, scale, bias, mean, var, epsilon) = match &graph.nodes[0].attributes {
        NodeAttributes::BatchnormInferenceAttributes(a) => (
            a.x_tensor_uid,
            a.y_tensor_uid,
            a.scale_tensor_uid,
            a.bias_tensor_uid,
            a.mean_tensor_uid,
            a.inv_variance_tensor_uid,
            None,
        ),
        NodeAttributes::BatchnormInferenceAttributesVarianceExt(a) => (
            a.x_tensor_uid,
            a.y_tensor_uid,
            a.scale_tensor_uid,
            a.bias_tensor_uid,
            a.mean_tensor_uid,
            a.variance_tensor_uid,
            Some(ctx.scalar(a.epsilon_tensor_uid, "epsilon")?),
        ),
        _ => unreachable!("matched"),
    };
    ctx.compute_is_float(0)?;
    let (activation, out) = fused_output_activation(ctx, act_node, x, y, &what)?;
    bn_tensors(ctx, &[x, out], &[scale, bias, mean, var], &what)?;
    Ok(Pattern::BnInference {
        x: ctx.tensor(x)?,
        y: ctx.tensor(out)?,
        params: [
            param_tensor(ctx, scale)?,
            param_tensor(ctx, bias)?,
            param_tensor(ctx, mean)?,
            param_tensor(ctx, var)?,
        ],
        epsilon,
        activation,
    })
}

fn bn_training(
    ctx: &Ctx<'_>,
    bn: &BatchnormAttributes,
    act_node: Option<usize>,
) -> Result<Pattern> {
    let graph = ctx.index.graph();
    let what = format!("node \"{}\"", graph.nodes[0].name);
    ctx.compute_is_float(0)?;
    if !bn.peer_stats_tensor_uid.is_empty() {
        return Err(format!(
            "{what}: peer statistics are not supported by MIOPEN_ENGINE"
        ));
    }
    let epsilon = ctx.scalar(bn.epsilon_tensor_uid, "epsilon")?;
    let running = match (
        bn.prev_running_mean_tensor_uid,
        bn.prev_running_variance_tensor_uid,
        bn.next_running_mean_tensor_uid,
        bn.next_running_variance_tensor_uid,
        bn.momentum_tensor_uid,
    ) {
        (None, None, None, None, _) => None,
        (Some(pm), Some(pv), Some(nm), Some(nv), Some(m)) => {
            Some((pm, pv, nm, nv, ctx.scalar(m, "momentum")?))
        }
        _ => {
            return Err(format!(
                "{what}: running statistics need the previous and next mean and variance and a momentum"
            ));
        }
    };
    let (activation, out) =
        fused_output_activation(ctx, act_node, bn.x_tensor_uid, bn.y_tensor_uid, &what)?;
    let mut params = vec![bn.scale_tensor_uid, bn.bias_tensor_uid];
    params.extend(bn.mean_tensor_uid);
    params.extend(bn.inv_variance_tensor_uid);
    if let Some((pm, pv, nm, nv, _)) = running {
        params.extend([pm, pv, nm, nv]);
    }
    bn_tensors(ctx, &[bn.x_tensor_uid, out], &params, &what)?;
    let xd = ctx.index.dims(bn.x_tensor_uid);
    if xd.iter().product::<usize>() / xd[1] <= 1 {
        return Err(format!(
            "{what}: training needs more than one value per channel (batch × spatial > 1)"
        ));
    }
    Ok(Pattern::BnTraining {
        x: ctx.tensor(bn.x_tensor_uid)?,
        y: ctx.tensor(out)?,
        scale: param_tensor(ctx, bn.scale_tensor_uid)?,
        bias: param_tensor(ctx, bn.bias_tensor_uid)?,
        saved: (bn.mean_tensor_uid, bn.inv_variance_tensor_uid),
        running,
        epsilon,
        activation,
    })
}

fn bn_backward(
    ctx: &Ctx<'_>,
    bn: &BatchnormBackwardAttributes,
    fused: Option<(usize, usize)>,
) -> Result<Pattern> {
    let graph = ctx.index.graph();
    let node = fused.map_or(0, |_| 2);
    let what = format!("node \"{}\"", graph.nodes[node].name);
    ctx.compute_is_float(node)?;
    if !bn.peer_stats_tensor_uid.is_empty() {
        return Err(format!(
            "{what}: peer statistics are not supported by MIOPEN_ENGINE"
        ));
    }
    let (Some(mean), Some(inv)) = (bn.mean_tensor_uid, bn.inv_variance_tensor_uid) else {
        return Err(format!(
            "{what}: MIOPEN_ENGINE runs batch-norm backward from the saved mean and inverse variance"
        ));
    };
    let mut dy = bn.dy_tensor_uid;
    let mut activation = None;
    if let Some((inf, act)) = fused {
        let NodeAttributes::BatchnormInferenceAttributes(f) = &graph.nodes[inf].attributes else {
            unreachable!("matched");
        };
        let NodeAttributes::PointwiseAttributes(p) = &graph.nodes[act].attributes else {
            unreachable!("matched");
        };
        let pname = &graph.nodes[act].name;
        if p.operation != PointwiseMode::RELU_BWD {
            return Err(format!(
                "node \"{pname}\": {} between batch-norm inference and backward is not fused by MIOPEN_ENGINE (RELU_BWD is)",
                mode_name(p.operation)
            ));
        }
        if f.x_tensor_uid != bn.x_tensor_uid
            || f.mean_tensor_uid != mean
            || f.inv_variance_tensor_uid != inv
            || f.scale_tensor_uid != bn.scale_tensor_uid
        {
            return Err(format!(
                "{what}: the recomputed forward must use the backward's x, mean, inverse variance and scale"
            ));
        }
        // RELU_BWD: in_0 is the forward value, in_1 the incoming gradient.
        let Some(grad) = p.in_1_tensor_uid else {
            return Err(format!(
                "node \"{pname}\": RELU_BWD needs the incoming gradient as in_1"
            ));
        };
        if p.in_0_tensor_uid != f.y_tensor_uid
            || p.out_0_tensor_uid != bn.dy_tensor_uid
            || p.in_2_tensor_uid.is_some()
        {
            return Err(format!(
                "node \"{pname}\" must take the recomputed forward value and feed {what}'s dy"
            ));
        }
        let xdt = ctx.index.data_type(bn.x_tensor_uid);
        ctx.virtual_intermediate(f.y_tensor_uid, &[DataType::Float, xdt])?;
        ctx.virtual_intermediate(bn.dy_tensor_uid, &[DataType::Float, xdt])?;
        ctx.compute_is_float(inf)?;
        ctx.compute_is_float(act)?;
        bn_tensors(ctx, &[bn.x_tensor_uid], &[f.bias_tensor_uid], &what)?;
        dy = grad;
        let a = relu(p, false, pname)?;
        activation = Some((f.bias_tensor_uid, a));
    }
    bn_tensors(
        ctx,
        &[bn.x_tensor_uid, dy, bn.dx_tensor_uid],
        &[
            bn.scale_tensor_uid,
            mean,
            inv,
            bn.dscale_tensor_uid,
            bn.dbias_tensor_uid,
        ],
        &what,
    )?;
    Ok(Pattern::BnBackward {
        x: ctx.tensor(bn.x_tensor_uid)?,
        dy: ctx.tensor(dy)?,
        dx: ctx.tensor(bn.dx_tensor_uid)?,
        scale: param_tensor(ctx, bn.scale_tensor_uid)?,
        saved: (mean, inv),
        dscale: bn.dscale_tensor_uid,
        dbias: bn.dbias_tensor_uid,
        activation,
    })
}

fn pointwise(ctx: &Ctx<'_>, p: &PointwiseAttributes) -> Result<Pattern> {
    let name = ctx.index.node(0).name.clone();
    ctx.compute_is_float(0)?;
    let float_or_half = |uid: i64| match ctx.index.data_type(uid) {
        DataType::Float | DataType::Half => Ok(()),
        other => Err(format!(
            "{} is {}: MIOPEN_ENGINE's standalone pointwise operations take FLOAT and HALF",
            ctx.name(uid),
            other.name()
        )),
    };
    let (x, y) = (p.in_0_tensor_uid, p.out_0_tensor_uid);
    let unary = match p.operation {
        PointwiseMode::RELU_FWD => Some(relu(p, true, &name)?),
        PointwiseMode::SIGMOID_FWD => {
            Some(Activation::new(Mode::miopenActivationLOGISTIC, 0.0, 0.0))
        }
        PointwiseMode::TANH_FWD => Some(Activation::new(Mode::miopenActivationTANH, 1.0, 1.0)),
        _ => None,
    };
    if let Some(activation) = unary {
        unary_extra_operands(p, &name)?;
        float_or_half(x)?;
        float_or_half(y)?;
        same_family(ctx, &[x, y], &format!("node \"{name}\""))?;
        if ctx.index.dims(x) != ctx.index.dims(y) {
            return Err(format!("node \"{name}\": in_0 must have the output's dims"));
        }
        return Ok(Pattern::Activation {
            x: ctx.tensor(x)?,
            y: ctx.tensor(y)?,
            activation,
        });
    }
    let (op, alpha2) = match p.operation {
        PointwiseMode::ADD => (miopenTensorOp_t::miopenTensorOpAdd, 1.0),
        PointwiseMode::SUB => (miopenTensorOp_t::miopenTensorOpAdd, -1.0),
        PointwiseMode::MUL => (miopenTensorOp_t::miopenTensorOpMul, 1.0),
        PointwiseMode::MAX_OP => (miopenTensorOp_t::miopenTensorOpMax, 1.0),
        PointwiseMode::MIN_OP => (miopenTensorOp_t::miopenTensorOpMin, 1.0),
        other => {
            return Err(format!(
                "node \"{name}\": {} is not supported by MIOPEN_ENGINE",
                mode_name(other)
            ));
        }
    };
    let Some(b) = p.in_1_tensor_uid else {
        return Err(format!(
            "node \"{name}\": {} needs in_1",
            mode_name(p.operation)
        ));
    };
    if p.in_2_tensor_uid.is_some() {
        return Err(format!(
            "node \"{name}\": {} takes two inputs",
            mode_name(p.operation)
        ));
    }
    for uid in [x, b, y] {
        float_or_half(uid)?;
        let (dims, strides) = (ctx.index.dims(uid), ctx.index.strides(uid));
        if !(3..=5).contains(&dims.len()) {
            return Err(format!(
                "{}: rank-{} binary operations are not supported by MIOPEN_ENGINE (rank 3 to 5)",
                ctx.name(uid),
                dims.len()
            ));
        }
        if !orders_of(dims, strides).contains(&Order::ChannelsFirst) {
            return Err(format!(
                "{} is not in packed channels-first order: MIOPEN_ENGINE's binary operations take packed NCHW-order tensors",
                ctx.name(uid)
            ));
        }
    }
    if ctx.dtype(x)? != ctx.dtype(y)? || ctx.dtype(b)? != ctx.dtype(y)? {
        return Err(format!(
            "node \"{name}\": in_0, in_1 and the output must have one data type"
        ));
    }
    let (xd, bd, yd) = (ctx.index.dims(x), ctx.index.dims(b), ctx.index.dims(y));
    if xd != yd {
        return Err(format!(
            "node \"{name}\": in_0 {xd:?} must have the output's dims {yd:?} (only in_1 broadcasts in MIOpen)"
        ));
    }
    if bd.len() != yd.len() || bd.iter().zip(yd).any(|(&b, &y)| b != 1 && b != y) {
        return Err(format!(
            "node \"{name}\": in_1 {bd:?} does not broadcast to {yd:?}"
        ));
    }
    Ok(Pattern::Binary {
        op,
        a: ctx.tensor(x)?,
        b: ctx.tensor(b)?,
        alpha2,
        y: ctx.tensor(y)?,
    })
}

#[cfg(test)]
mod tests;
