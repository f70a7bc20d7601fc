//! hipDNN graphs in cuDNN's terms, decided without a device.
//!
//! [`Translation::new`] checks every tensor and node of a (validated) hipDNN graph
//! against what this engine runs through cuDNN and turns each node into cuDNN
//! operations ([`OpSpec`]). Everything here is plain data: which graphs the engine
//! claims is decided from it alone (no cuDNN call), and the unit tests check it on
//! machines without a GPU. [`Stage`]s then group nodes into the cuDNN operation graphs
//! a plan finalizes ([`crate::plan`]).
//!
//! What is claimed, exactly:
//! * tensors of FLOAT, HALF or BFLOAT16 in fully packed layouts (any dimension order,
//!   so NCHW and NHWC alike; NHWC is the fast one for convolutions), pass-by-value
//!   scalars of any float type, nodes computing in FLOAT;
//! * convolution forward, data gradient and weight gradient over 1, 2 or 3 spatial
//!   dimensions (cross-correlation or convolution, any padding, stride, dilation and
//!   grouping that the tensor shapes imply; 1-D runs as 2-D with a unit height), with x,
//!   w and y of one type;
//! * matmul of HALF or BFLOAT16 operands of rank 2 or 3 with equal batch dimensions
//!   (cuDNN computes FLOAT matmuls in TF32, so they are not claimed);
//! * pointwise arithmetic (ADD, ADD_SQUARE, SUB, MUL, DIV, MAX_OP, MIN_OP) and unary
//!   functions and activations (ABS, CEIL, EXP, FLOOR, LOG, NEG, RSQRT, SIN, SQRT, TAN
//!   but not on FLOAT, ERF, IDENTITY, RECIPROCAL, RELU_FWD with its clips and slope,
//!   TANH_FWD, SIGMOID_FWD, ELU_FWD, GELU_FWD, GELU_APPROX_TANH_FWD, SOFTPLUS_FWD,
//!   SWISH_FWD), where `in_0` has the output's dims and `in_1` broadcasts to them; a
//!   pointwise node that does not fuse into a convolution's or matmul's epilogue may
//!   broadcast only along a channels-last layout's outer dimensions (a per-channel
//!   operand in NHWC, not in NCHW);
//! * batch-norm inference with precomputed inverse variance, as the four pointwise
//!   operations it is (so it fuses into a convolution's epilogue);
//! * batch-norm training (saved mean and inverse variance written; running statistics
//!   with momentum optional) and backward from the saved statistics, channels-last
//!   (NHWC, NDHWC) with the channels a multiple of 16 bytes, tensors in memory, no peer
//!   statistics;
//! * layer norm over the trailing dims and RMS norm over all but the batch dim (training
//!   or inference), when the normalized dims are innermost in memory in one order for x,
//!   y and the parameters (any rank; epsilon a pass-by-value scalar).

use std::collections::{BTreeSet, HashMap};

use hipdnn_data_sdk::DataType;
use hipdnn_flatbuffers_sdk::TensorValue;
use hipdnn_flatbuffers_sdk::model::{Graph, NodeAttributes, PointwiseAttributes};
use hipdnn_flatbuffers_sdk::wire::{ConvMode, NormFwdPhase, PointwiseMode};
use hipdnn_plugin_sdk::graph::{AnyEpilogue, Chain, GraphIndex, HeadKind, partition};

use crate::cudnn::sys::{
    cudnnBackendNormFwdPhase_t, cudnnBackendNormMode_t, cudnnConvolutionMode_t, cudnnDataType_t,
    cudnnPointwiseMode_t,
};

/// A tensor as cuDNN sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct TensorSpec {
    /// The hipDNN uid (synthesized uids for the intermediates of composed nodes).
    pub uid: i64,
    /// The element type.
    pub data_type: cudnnDataType_t,
    /// Extents (at least rank 3 for matmuls: leading ones added).
    pub dims: Vec<i64>,
    /// Element strides.
    pub strides: Vec<i64>,
    /// An intermediate cuDNN keeps to itself (set per stage).
    pub is_virtual: bool,
    /// A pass-by-value scalar: its value, passed as an `f32` on the host.
    pub value: Option<f32>,
}

/// Padding, strides and dilation of a convolution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConvSpec {
    /// Cross-correlation or convolution.
    pub mode: cudnnConvolutionMode_t,
    /// Accumulation type.
    pub compute: cudnnDataType_t,
    /// Padding before each spatial dimension.
    pub pre_padding: Vec<i64>,
    /// Padding after each spatial dimension.
    pub post_padding: Vec<i64>,
    /// Filter strides.
    pub stride: Vec<i64>,
    /// Dilations.
    pub dilation: Vec<i64>,
    /// A 1-D convolution run as 2-D: a unit dimension goes in front of the length in
    /// every rank-3 tensor of its stage (and a zero/one entry in front of each of the
    /// geometry lists above, which are already 2-D).
    pub lifted_1d: bool,
}

/// Parameters of a pointwise function (cuDNN's defaults when absent).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PointwiseParams {
    /// RELU lower clip.
    pub relu_lower_clip: Option<f64>,
    /// RELU upper clip.
    pub relu_upper_clip: Option<f64>,
    /// RELU slope below the lower clip.
    pub relu_lower_clip_slope: Option<f64>,
    /// ELU alpha.
    pub elu_alpha: Option<f64>,
    /// Softplus beta.
    pub softplus_beta: Option<f64>,
    /// Swish beta.
    pub swish_beta: Option<f64>,
}

/// One cuDNN operation.
#[derive(Debug, Clone, PartialEq)]
pub enum OpSpec {
    /// `y = conv(x, w)`.
    ConvForward {
        /// Input.
        x: i64,
        /// Filter.
        w: i64,
        /// Output.
        y: i64,
        /// Geometry.
        conv: ConvSpec,
    },
    /// `dx` from `dy` and `w`.
    ConvBackwardData {
        /// Output gradient.
        dy: i64,
        /// Filter.
        w: i64,
        /// Input gradient.
        dx: i64,
        /// Geometry.
        conv: ConvSpec,
    },
    /// `dw` from `x` and `dy`.
    ConvBackwardFilter {
        /// Input.
        x: i64,
        /// Output gradient.
        dy: i64,
        /// Filter gradient.
        dw: i64,
        /// Geometry.
        conv: ConvSpec,
    },
    /// `c = a · b`.
    Matmul {
        /// Left operand.
        a: i64,
        /// Right operand.
        b: i64,
        /// Result.
        c: i64,
        /// Accumulation type.
        compute: cudnnDataType_t,
    },
    /// Layer norm, RMS norm or batch norm (training) forward.
    NormForward(NormSpec),
    /// Batch norm backward.
    NormBackward(NormBackwardSpec),
    /// `y = f(x[, b])`.
    Pointwise {
        /// The function.
        mode: cudnnPointwiseMode_t,
        /// First input (the output's dims).
        x: i64,
        /// Second input (broadcasts), for binary functions.
        b: Option<i64>,
        /// Output.
        y: i64,
        /// Math precision.
        compute: cudnnDataType_t,
        /// Function parameters.
        params: PointwiseParams,
    },
}

/// A normalization's tensors, with the 4-dimensional views cuDNN's norm engines take.
#[derive(Debug, Clone, PartialEq)]
pub struct NormSpec {
    /// Layer norm or RMS norm.
    pub mode: cudnnBackendNormMode_t,
    /// Training (statistics written) or inference.
    pub phase: cudnnBackendNormFwdPhase_t,
    /// Input.
    pub x: i64,
    /// Per-element scale.
    pub scale: i64,
    /// Per-element bias.
    pub bias: Option<i64>,
    /// The epsilon scalar.
    pub epsilon: i64,
    /// Output.
    pub y: i64,
    /// Mean (training, layer norm).
    pub mean: Option<i64>,
    /// Inverse standard deviation (inverse RMS for RMS norm), training.
    pub inv_variance: Option<i64>,
    /// Batch norm's running statistics: momentum, previous mean and variance, next
    /// mean and variance.
    pub running: Option<[i64; 5]>,
    /// The operation's tensors as `[outer, inner, 1, 1]` views (statistics
    /// `[outer, 1, 1, 1]`), replacing the graph's dims in the norm's stage (none for
    /// batch norm, whose tensors cuDNN takes as they are).
    pub views: Vec<TensorSpec>,
}

/// Batch-norm backward from the saved statistics.
#[derive(Debug, Clone, PartialEq)]
pub struct NormBackwardSpec {
    /// Output gradient.
    pub dy: i64,
    /// Forward input.
    pub x: i64,
    /// Saved mean.
    pub mean: i64,
    /// Saved inverse standard deviation.
    pub inv_variance: i64,
    /// Scale.
    pub scale: i64,
    /// Input gradient.
    pub dx: i64,
    /// Scale gradient.
    pub dscale: i64,
    /// Bias gradient.
    pub dbias: i64,
}

impl OpSpec {
    /// Every uid the operation writes (the primary output first).
    pub fn outputs(&self) -> Vec<i64> {
        match self {
            Self::NormForward(n) => std::iter::once(n.y)
                .chain(n.mean)
                .chain(n.inv_variance)
                .chain(n.running.into_iter().flat_map(|r| [r[3], r[4]]))
                .collect(),
            Self::NormBackward(n) => vec![n.dx, n.dscale, n.dbias],
            other => vec![other.uids().1],
        }
    }

    /// The uids the operation reads, then the (primary) one it writes.
    pub fn uids(&self) -> (Vec<i64>, i64) {
        match self {
            Self::NormForward(n) => (
                [Some(n.x), Some(n.scale), n.bias, Some(n.epsilon)]
                    .into_iter()
                    .flatten()
                    .chain(n.running.into_iter().flat_map(|r| [r[0], r[1], r[2]]))
                    .collect(),
                n.y,
            ),
            Self::NormBackward(n) => (vec![n.dy, n.x, n.mean, n.inv_variance, n.scale], n.dx),
            Self::ConvForward { x, w, y, .. } => (vec![*x, *w], *y),
            Self::ConvBackwardData { dy, w, dx, .. } => (vec![*dy, *w], *dx),
            Self::ConvBackwardFilter { x, dy, dw, .. } => (vec![*x, *dy], *dw),
            Self::Matmul { a, b, c, .. } => (vec![*a, *b], *c),
            Self::Pointwise { x, b, y, .. } => (std::iter::once(*x).chain(*b).collect(), *y),
        }
    }
}

/// A hipDNN graph as cuDNN operations, one list per node.
#[derive(Debug, Clone)]
pub struct Translation {
    /// Every tensor (graph tensors and synthesized intermediates), by uid.
    pub tensors: HashMap<i64, TensorSpec>,
    /// Per hipDNN node, in topological order: its name and its cuDNN operations.
    pub nodes: Vec<(String, Vec<OpSpec>)>,
    /// Tensors the host binds (non-virtual graph tensors that are not by value).
    pub bound: BTreeSet<i64>,
    /// Virtual graph tensors (and synthesized ones) that may stay inside cuDNN.
    pub virtuals: BTreeSet<i64>,
    /// The type a virtual tensor is stored in when it must cross stages: the type of
    /// the memory its producer reads (HALF between HALF convolutions, so the next one
    /// stays on HALF tensor cores).
    pub storage_types: HashMap<i64, cudnnDataType_t>,
    /// The graph cut into fusable chains (node positions), the fallback a plan builds
    /// from when cuDNN does not run the whole graph at once.
    pub chains: Vec<Vec<usize>>,
}

/// A cuDNN data type for a hipDNN one the engine claims.
pub fn data_type(t: DataType) -> Option<cudnnDataType_t> {
    Some(match t {
        DataType::Float => cudnnDataType_t::CUDNN_DATA_FLOAT,
        DataType::Half => cudnnDataType_t::CUDNN_DATA_HALF,
        DataType::Bfloat16 => cudnnDataType_t::CUDNN_DATA_BFLOAT16,
        _ => return None,
    })
}

/// Bytes per element of a claimed type.
pub fn element_size(t: cudnnDataType_t) -> usize {
    match t {
        cudnnDataType_t::CUDNN_DATA_HALF | cudnnDataType_t::CUDNN_DATA_BFLOAT16 => 2,
        _ => 4,
    }
}

/// cuDNN's pointwise mode for a hipDNN one, and how many inputs it takes.
pub fn pointwise_mode(mode: PointwiseMode) -> Option<(cudnnPointwiseMode_t, usize)> {
    use cudnnPointwiseMode_t as C;
    Some(match mode {
        PointwiseMode::ADD => (C::CUDNN_POINTWISE_ADD, 2),
        PointwiseMode::ADD_SQUARE => (C::CUDNN_POINTWISE_ADD_SQUARE, 2),
        PointwiseMode::SUB => (C::CUDNN_POINTWISE_SUB, 2),
        PointwiseMode::MUL => (C::CUDNN_POINTWISE_MUL, 2),
        PointwiseMode::DIV => (C::CUDNN_POINTWISE_DIV, 2),
        PointwiseMode::MAX_OP => (C::CUDNN_POINTWISE_MAX, 2),
        PointwiseMode::MIN_OP => (C::CUDNN_POINTWISE_MIN, 2),
        PointwiseMode::ABS => (C::CUDNN_POINTWISE_ABS, 1),
        PointwiseMode::CEIL => (C::CUDNN_POINTWISE_CEIL, 1),
        PointwiseMode::EXP => (C::CUDNN_POINTWISE_EXP, 1),
        PointwiseMode::FLOOR => (C::CUDNN_POINTWISE_FLOOR, 1),
        PointwiseMode::LOG => (C::CUDNN_POINTWISE_LOG, 1),
        PointwiseMode::NEG => (C::CUDNN_POINTWISE_NEG, 1),
        PointwiseMode::RSQRT => (C::CUDNN_POINTWISE_RSQRT, 1),
        PointwiseMode::SIN => (C::CUDNN_POINTWISE_SIN, 1),
        PointwiseMode::SQRT => (C::CUDNN_POINTWISE_SQRT, 1),
        PointwiseMode::TAN => (C::CUDNN_POINTWISE_TAN, 1),
        PointwiseMode::ERF => (C::CUDNN_POINTWISE_ERF, 1),
        PointwiseMode::IDENTITY => (C::CUDNN_POINTWISE_IDENTITY, 1),
        PointwiseMode::RECIPROCAL => (C::CUDNN_POINTWISE_RECIPROCAL, 1),
        PointwiseMode::RELU_FWD => (C::CUDNN_POINTWISE_RELU_FWD, 1),
        PointwiseMode::TANH_FWD => (C::CUDNN_POINTWISE_TANH_FWD, 1),
        PointwiseMode::SIGMOID_FWD => (C::CUDNN_POINTWISE_SIGMOID_FWD, 1),
        PointwiseMode::ELU_FWD => (C::CUDNN_POINTWISE_ELU_FWD, 1),
        PointwiseMode::GELU_FWD => (C::CUDNN_POINTWISE_GELU_FWD, 1),
        PointwiseMode::GELU_APPROX_TANH_FWD => (C::CUDNN_POINTWISE_GELU_APPROX_TANH_FWD, 1),
        PointwiseMode::SOFTPLUS_FWD => (C::CUDNN_POINTWISE_SOFTPLUS_FWD, 1),
        PointwiseMode::SWISH_FWD => (C::CUDNN_POINTWISE_SWISH_FWD, 1),
        _ => return None,
    })
}

/// Whether `strides` lay `dims` out densely in some dimension order.
pub fn is_packed(dims: &[usize], strides: &[usize]) -> bool {
    let mut order: Vec<usize> = (0..dims.len()).collect();
    // Innermost first; ties (unit dims) in any order.
    order.sort_by_key(|&d| (strides[d], dims[d]));
    let mut expected = 1usize;
    order.iter().all(|&d| {
        let ok = dims[d] == 1 || strides[d] == expected;
        expected = expected.saturating_mul(dims[d]);
        ok
    })
}

/// Dimension positions from outermost to innermost (largest stride first; ties keep
/// their order).
pub fn stride_order(strides: &[i64]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..strides.len()).collect();
    order.sort_by_key(|&d| std::cmp::Reverse(strides[d]));
    order
}

/// Packed strides for `dims` with dimensions nested as `order` says (outermost first).
pub fn packed_strides(dims: &[i64], order: &[usize]) -> Vec<i64> {
    let mut strides = vec![0; dims.len()];
    let mut step = 1;
    for &d in order.iter().rev() {
        strides[d] = step;
        step *= dims[d].max(1);
    }
    strides
}

fn dims_i64(d: &[usize]) -> Vec<i64> {
    d.iter().map(|&v| v as i64).collect()
}

/// Builds the translation node by node.
struct Translator<'g> {
    index: GraphIndex<'g>,
    out: Translation,
    next_uid: i64,
    compute: cudnnDataType_t,
}

impl Translation {
    /// Translates a validated graph (nodes in topological order).
    ///
    /// # Errors
    /// Why the engine does not run the graph, naming the node or tensor.
    pub fn new(graph: &Graph) -> Result<Self, String> {
        let index = GraphIndex::new(graph).map_err(|e| e.to_string())?;
        let next_uid = graph.tensors.iter().map(|t| t.uid).max().unwrap_or(0) + 1;
        let mut tr = Translator {
            index,
            out: Translation {
                tensors: HashMap::new(),
                nodes: Vec::new(),
                bound: BTreeSet::new(),
                virtuals: BTreeSet::new(),
                storage_types: HashMap::new(),
                chains: Vec::new(),
            },
            next_uid,
            compute: cudnnDataType_t::CUDNN_DATA_FLOAT,
        };
        for t in &graph.tensors {
            tr.tensor(t.uid)?;
        }
        for node in tr.index.topological_order() {
            let n = tr.index.node(node);
            let compute = tr.index.compute_data_type(node);
            if !matches!(compute, DataType::Unset | DataType::Float) {
                return Err(format!(
                    "node \"{}\" computes in {}; CUDNN_ENGINE computes in FLOAT",
                    n.name,
                    compute.name()
                ));
            }
            let ops = tr
                .node(&n.attributes)
                .map_err(|e| format!("node \"{}\": {e}", n.name))?;
            for op in &ops {
                tr.follow_layout(op);
                tr.storage_type(op);
            }
            tr.out.nodes.push((n.name.clone(), ops));
        }
        let Translator { index, out, .. } = tr;
        let mut translation = out;
        let chains = partition(&index, &AnyEpilogue);
        translation.check_standalone_pointwise(&chains)?;
        translation.chains = chains.iter().map(|c| c.nodes().collect()).collect();
        Ok(translation)
    }
}

impl Translator<'_> {
    fn tensor(&mut self, uid: i64) -> Result<(), String> {
        let index = &self.index;
        let t = index.tensor(uid);
        let dtype = index.data_type(uid);
        let value = match index.value(uid) {
            None => None,
            Some(TensorValue::Float32(v) | TensorValue::Float16(v) | TensorValue::BFloat16(v)) => {
                Some(*v)
            }
            Some(TensorValue::Float64(v)) => Some(*v as f32),
            Some(_) => {
                return Err(format!(
                    "tensor \"{}\" (uid {uid}): pass-by-value scalars must be floating point",
                    t.name
                ));
            }
        };
        if t.is_runtime_pass_by_value || t.ragged_offset_tensor_uid.is_some() {
            return Err(format!(
                "tensor \"{}\" (uid {uid}): run-time scalars and ragged tensors are not supported",
                t.name
            ));
        }
        let data_type = if value.is_some() {
            cudnnDataType_t::CUDNN_DATA_FLOAT
        } else {
            data_type(dtype).ok_or_else(|| {
                format!(
                    "tensor \"{}\" (uid {uid}) is {}; CUDNN_ENGINE takes FLOAT, HALF and BFLOAT16",
                    t.name,
                    dtype.name()
                )
            })?
        };
        let (dims, strides) = (index.dims(uid), index.strides(uid));
        if value.is_none() && !is_packed(dims, strides) {
            return Err(format!(
                "tensor \"{}\" (uid {uid}) is not densely packed (dims {dims:?}, strides {strides:?})",
                t.name
            ));
        }
        if t.is_virtual {
            self.out.virtuals.insert(uid);
        } else if value.is_none() {
            self.out.bound.insert(uid);
        }
        // cuDNN wants virtual intermediates in FLOAT (its fusion engines keep them in
        // registers at full precision).
        let data_type = if t.is_virtual {
            cudnnDataType_t::CUDNN_DATA_FLOAT
        } else {
            data_type
        };
        self.out.tensors.insert(
            uid,
            TensorSpec {
                uid,
                data_type,
                dims: dims_i64(dims),
                strides: dims_i64(strides),
                is_virtual: t.is_virtual,
                value,
            },
        );
        Ok(())
    }

    /// Lays a virtual output out like the operation's first input (a virtual tensor's
    /// strides are the graph's guess; cuDNN fuses best when an epilogue keeps the
    /// producer's layout, and inter-stage scratch is ours to lay out).
    fn follow_layout(&mut self, op: &OpSpec) {
        let (ins, out) = op.uids();
        if matches!(op, OpSpec::Matmul { .. }) || !self.out.virtuals.contains(&out) {
            return;
        }
        let Some(&like) = ins.first() else { return };
        let model = self.spec(like);
        if model.dims.len() != self.spec(out).dims.len() {
            return;
        }
        let order = stride_order(&model.strides);
        let target = self.out.tensors.get_mut(&out).expect("declared");
        target.strides = packed_strides(&target.dims, &order);
    }

    /// Records the storage type of a virtual output: its first input's (or that
    /// input's storage type when it is virtual too).
    fn storage_type(&mut self, op: &OpSpec) {
        let (ins, out) = op.uids();
        if !self.out.virtuals.contains(&out) {
            return;
        }
        let first = ins.iter().copied().find(|u| self.spec(*u).value.is_none());
        let ty = first.map_or(cudnnDataType_t::CUDNN_DATA_FLOAT, |u| {
            self.out
                .storage_types
                .get(&u)
                .copied()
                .unwrap_or(self.spec(u).data_type)
        });
        self.out.storage_types.insert(out, ty);
    }

    fn spec(&self, uid: i64) -> &TensorSpec {
        &self.out.tensors[&uid]
    }

    fn rank(&self, uid: i64) -> usize {
        self.spec(uid).dims.len()
    }

    fn same_type(&self, uids: &[i64]) -> Result<(), String> {
        let types: BTreeSet<_> = uids
            .iter()
            .filter(|u| !self.out.virtuals.contains(u))
            .map(|&u| self.index.data_type(u))
            .collect();
        if types.len() > 1 {
            return Err(format!(
                "tensors {uids:?} mix types {:?}; cuDNN wants one",
                types.iter().map(|t| t.name()).collect::<Vec<_>>()
            ));
        }
        Ok(())
    }

    fn not_scalar(&self, uids: &[i64]) -> Result<(), String> {
        match uids.iter().find(|&&u| self.spec(u).value.is_some()) {
            Some(u) => Err(format!("tensor uid {u} must be in memory, not a scalar")),
            None => Ok(()),
        }
    }

    /// A virtual FLOAT intermediate with `like`'s dims (packed as `like`).
    fn synthesized(&mut self, like: i64) -> i64 {
        let uid = self.next_uid;
        self.next_uid += 1;
        let mut spec = self.spec(like).clone();
        spec.uid = uid;
        spec.is_virtual = true;
        spec.value = None;
        spec.data_type = cudnnDataType_t::CUDNN_DATA_FLOAT;
        self.out.tensors.insert(uid, spec);
        self.out.virtuals.insert(uid);
        uid
    }

    /// Checks a convolution's tensors (`[x, w, y]` in forward terms) and geometry
    /// (`[pre_padding, post_padding, stride, dilation]`).
    fn conv(
        &self,
        mode: ConvMode,
        geometry: [&[i64]; 4],
        [x, w, y]: [i64; 3],
    ) -> Result<ConvSpec, String> {
        let [pre, post, stride, dilation] = geometry;
        let mode = match mode {
            ConvMode::CROSS_CORRELATION => cudnnConvolutionMode_t::CUDNN_CROSS_CORRELATION,
            ConvMode::CONVOLUTION => cudnnConvolutionMode_t::CUDNN_CONVOLUTION,
            _ => return Err("conv_mode is unset".into()),
        };
        self.not_scalar(&[x, w, y])?;
        self.same_type(&[x, w, y])?;
        let rank = self.rank(x);
        if !(3..=5).contains(&rank) || self.rank(w) != rank || self.rank(y) != rank {
            return Err(format!(
                "convolutions need 3- to 5-dimensional tensors (x has {rank})"
            ));
        }
        let spatial = rank - 2;
        for (what, v) in [
            ("pre_padding", pre),
            ("post_padding", post),
            ("stride", stride),
            ("dilation", dilation),
        ] {
            if v.len() != spatial {
                return Err(format!(
                    "{what} has {} values for {spatial} spatial dims",
                    v.len()
                ));
            }
        }
        // cuDNN convolves 2 or 3 spatial dims: a 1-D convolution gets a unit height.
        let lifted_1d = spatial == 1;
        let lift = |v: &[i64], unit: i64| {
            if lifted_1d {
                std::iter::once(unit).chain(v.iter().copied()).collect()
            } else {
                v.to_vec()
            }
        };
        Ok(ConvSpec {
            mode,
            compute: self.compute,
            pre_padding: lift(pre, 0),
            post_padding: lift(post, 0),
            stride: lift(stride, 1),
            dilation: lift(dilation, 1),
            lifted_1d,
        })
    }

    fn node(&mut self, attributes: &NodeAttributes) -> Result<Vec<OpSpec>, String> {
        Ok(match attributes {
            NodeAttributes::ConvolutionFwdAttributes(a) => {
                let (x, w, y) = (a.x_tensor_uid, a.w_tensor_uid, a.y_tensor_uid);
                let conv = self.conv(
                    a.conv_mode,
                    [&a.pre_padding, &a.post_padding, &a.stride, &a.dilation],
                    [x, w, y],
                )?;
                vec![OpSpec::ConvForward { x, w, y, conv }]
            }
            NodeAttributes::ConvolutionBwdAttributes(a) => {
                let (dy, w, dx) = (a.dy_tensor_uid, a.w_tensor_uid, a.dx_tensor_uid);
                let conv = self.conv(
                    a.conv_mode,
                    [&a.pre_padding, &a.post_padding, &a.stride, &a.dilation],
                    [dx, w, dy],
                )?;
                vec![OpSpec::ConvBackwardData { dy, w, dx, conv }]
            }
            NodeAttributes::ConvolutionWrwAttributes(a) => {
                let (x, dy, dw) = (a.x_tensor_uid, a.dy_tensor_uid, a.dw_tensor_uid);
                let conv = self.conv(
                    a.conv_mode,
                    [&a.pre_padding, &a.post_padding, &a.stride, &a.dilation],
                    [x, dw, dy],
                )?;
                vec![OpSpec::ConvBackwardFilter { x, dy, dw, conv }]
            }
            NodeAttributes::MatmulAttributes(a) => {
                let (ua, ub, uc) = (a.a_tensor_uid, a.b_tensor_uid, a.c_tensor_uid);
                self.not_scalar(&[ua, ub, uc])?;
                self.same_type(&[ua, ub])?;
                let rank = self.rank(ua);
                if !(rank == 2 || rank == 3) || self.rank(ub) != rank || self.rank(uc) != rank {
                    return Err(
                        "matmul is not supported by CUDNN_ENGINE beyond rank 3 or across ranks"
                            .into(),
                    );
                }
                if self.index.data_type(ua) == DataType::Float {
                    // cuDNN's matmul engines compute FLOAT operands in TF32 whatever
                    // they advertise: not FLOAT's precision.
                    return Err("matmul of FLOAT operands is not supported by CUDNN_ENGINE (cuDNN computes it in TF32)".into());
                }
                let batch = |u: i64| self.spec(u).dims[..rank - 2].to_vec();
                if batch(ua) != batch(uc) || batch(ub) != batch(uc) {
                    return Err(
                        "matmul with broadcast batch dimensions is not supported by CUDNN_ENGINE"
                            .into(),
                    );
                }
                vec![OpSpec::Matmul {
                    a: ua,
                    b: ub,
                    c: uc,
                    compute: self.compute,
                }]
            }
            NodeAttributes::PointwiseAttributes(p) => vec![self.pointwise(p)?],
            NodeAttributes::BatchnormInferenceAttributes(a) => {
                let x = a.x_tensor_uid;
                let y = a.y_tensor_uid;
                let per_channel = [
                    a.mean_tensor_uid,
                    a.inv_variance_tensor_uid,
                    a.scale_tensor_uid,
                    a.bias_tensor_uid,
                ];
                self.not_scalar(&[x, y])?;
                self.broadcasts(x, &per_channel)?;
                // y = ((x - mean) * inv_variance) * scale + bias
                let centered = self.synthesized(x);
                let normalized = self.synthesized(x);
                let scaled = self.synthesized(x);
                let step = |mode, x, b, y| OpSpec::Pointwise {
                    mode,
                    x,
                    b: Some(b),
                    y,
                    compute: cudnnDataType_t::CUDNN_DATA_FLOAT,
                    params: PointwiseParams::default(),
                };
                use cudnnPointwiseMode_t as C;
                vec![
                    step(C::CUDNN_POINTWISE_SUB, x, a.mean_tensor_uid, centered),
                    step(
                        C::CUDNN_POINTWISE_MUL,
                        centered,
                        a.inv_variance_tensor_uid,
                        normalized,
                    ),
                    step(
                        C::CUDNN_POINTWISE_MUL,
                        normalized,
                        a.scale_tensor_uid,
                        scaled,
                    ),
                    step(C::CUDNN_POINTWISE_ADD, scaled, a.bias_tensor_uid, y),
                ]
            }
            NodeAttributes::BatchnormAttributes(a) => {
                let (Some(mean), Some(inv_variance)) =
                    (a.mean_tensor_uid, a.inv_variance_tensor_uid)
                else {
                    return Err("batch-norm training must write mean and inv_variance".into());
                };
                if !a.peer_stats_tensor_uid.is_empty() {
                    return Err("batch norm across devices (peer statistics) is not supported by CUDNN_ENGINE".into());
                }
                let running = match (
                    a.momentum_tensor_uid,
                    a.prev_running_mean_tensor_uid,
                    a.prev_running_variance_tensor_uid,
                    a.next_running_mean_tensor_uid,
                    a.next_running_variance_tensor_uid,
                ) {
                    (Some(m), Some(pm), Some(pv), Some(nm), Some(nv)) => Some([m, pm, pv, nm, nv]),
                    (None, None, None, None, None) => None,
                    _ => {
                        return Err(
                            "running statistics need momentum, both previous and both next tensors"
                                .into(),
                        );
                    }
                };
                let x = a.x_tensor_uid;
                let mut per_channel =
                    vec![a.scale_tensor_uid, a.bias_tensor_uid, mean, inv_variance];
                per_channel.extend(running.into_iter().flat_map(|r| [r[1], r[2], r[3], r[4]]));
                self.batch_norm_tensors(x, a.y_tensor_uid, &per_channel)?;
                let scalars = [Some(a.epsilon_tensor_uid), running.map(|r| r[0])];
                if scalars
                    .into_iter()
                    .flatten()
                    .any(|u| self.spec(u).value.is_none())
                {
                    return Err("epsilon and momentum must be pass-by-value scalars".into());
                }
                vec![OpSpec::NormForward(NormSpec {
                    mode: cudnnBackendNormMode_t::CUDNN_BATCH_NORM,
                    phase: cudnnBackendNormFwdPhase_t::CUDNN_NORM_FWD_TRAINING,
                    x,
                    scale: a.scale_tensor_uid,
                    bias: Some(a.bias_tensor_uid),
                    epsilon: a.epsilon_tensor_uid,
                    y: a.y_tensor_uid,
                    mean: Some(mean),
                    inv_variance: Some(inv_variance),
                    running,
                    views: Vec::new(),
                })]
            }
            NodeAttributes::BatchnormBackwardAttributes(a) => {
                let (Some(mean), Some(inv_variance)) =
                    (a.mean_tensor_uid, a.inv_variance_tensor_uid)
                else {
                    return Err("batch-norm backward needs the saved mean and inv_variance".into());
                };
                if !a.peer_stats_tensor_uid.is_empty() {
                    return Err("batch norm across devices (peer statistics) is not supported by CUDNN_ENGINE".into());
                }
                let per_channel = [
                    a.scale_tensor_uid,
                    mean,
                    inv_variance,
                    a.dscale_tensor_uid,
                    a.dbias_tensor_uid,
                ];
                self.batch_norm_tensors(a.x_tensor_uid, a.dx_tensor_uid, &per_channel)?;
                self.batch_norm_tensors(a.dy_tensor_uid, a.dx_tensor_uid, &[])?;
                vec![OpSpec::NormBackward(NormBackwardSpec {
                    dy: a.dy_tensor_uid,
                    x: a.x_tensor_uid,
                    mean,
                    inv_variance,
                    scale: a.scale_tensor_uid,
                    dx: a.dx_tensor_uid,
                    dscale: a.dscale_tensor_uid,
                    dbias: a.dbias_tensor_uid,
                })]
            }
            NodeAttributes::LayernormAttributes(a) => {
                let k = usize::try_from(a.normalized_dim_count).unwrap_or(0);
                let outputs = match a.forward_phase {
                    NormFwdPhase::TRAINING => (a.mean_tensor_uid, a.inv_variance_tensor_uid),
                    _ => (None, None),
                };
                vec![self.norm(
                    cudnnBackendNormMode_t::CUDNN_LAYER_NORM,
                    a.forward_phase,
                    k,
                    [
                        a.x_tensor_uid,
                        a.scale_tensor_uid,
                        a.epsilon_tensor_uid,
                        a.y_tensor_uid,
                    ],
                    Some(a.bias_tensor_uid),
                    outputs,
                )?]
            }
            NodeAttributes::RMSNormAttributes(a) => {
                let k = self.rank(a.x_tensor_uid).saturating_sub(1);
                let inv_rms = match a.forward_phase {
                    NormFwdPhase::TRAINING => a.inv_rms_tensor_uid,
                    _ => None,
                };
                vec![self.norm(
                    cudnnBackendNormMode_t::CUDNN_RMS_NORM,
                    a.forward_phase,
                    k,
                    [
                        a.x_tensor_uid,
                        a.scale_tensor_uid,
                        a.epsilon_tensor_uid,
                        a.y_tensor_uid,
                    ],
                    a.bias_tensor_uid,
                    (None, inv_rms),
                )?]
            }
            other => {
                return Err(format!(
                    "{} is not supported by CUDNN_ENGINE",
                    other.type_name()
                ));
            }
        })
    }

    /// Checks a batch norm's tensors as cuDNN's batch-norm engines take them: `x` and
    /// `y` in memory, 4- or 5-dimensional and channels-last (channel stride 1), one type;
    /// the per-channel tensors `[1, C, 1, ...]` in memory.
    fn batch_norm_tensors(&self, x: i64, y: i64, per_channel: &[i64]) -> Result<(), String> {
        let memory: Vec<i64> = [x, y].iter().chain(per_channel).copied().collect();
        self.not_scalar(&memory)?;
        if memory.iter().any(|u| self.out.virtuals.contains(u)) {
            return Err("batch-norm tensors must be in memory (not virtual)".into());
        }
        self.same_type(&[x, y])?;
        let spec = self.spec(x);
        let rank = spec.dims.len();
        if !(rank == 4 || rank == 5) || self.spec(y).dims != spec.dims {
            return Err("batch norm needs 4- or 5-dimensional x and y of one shape".into());
        }
        let channels_last = |u: i64| {
            let t = self.spec(u);
            t.strides[1] == 1 || t.dims[1] == 1
        };
        if !channels_last(x) || !channels_last(y) {
            return Err(
                "batch-norm training and backward are channels-last only in cuDNN (NHWC, NDHWC)"
                    .into(),
            );
        }
        // cuDNN's batch-norm engines read whole 16-byte vectors of channels (seen on an
        // H200 with cuDNN 9.14: FLOAT with 4 channels runs, HALF with 4 or FLOAT with 3
        // gets no engine).
        let row = spec.dims[1] as usize * element_size(spec.data_type);
        if !row.is_multiple_of(16) {
            return Err(format!(
                "batch-norm training and backward need channels × element size to be a multiple of 16 bytes in cuDNN ({} channels of {} bytes)",
                spec.dims[1],
                element_size(spec.data_type)
            ));
        }
        for &u in per_channel {
            let d = &self.spec(u).dims;
            let ok = d.len() == rank
                && d[1] == spec.dims[1]
                && d.iter().enumerate().all(|(i, &e)| i == 1 || e == 1);
            if !ok {
                return Err(format!("tensor uid {u} (dims {d:?}) is not per channel"));
            }
        }
        Ok(())
    }

    /// A layer or RMS norm over the trailing `k` dims, as cuDNN's norm engines take it:
    /// every tensor viewed as `[outer, inner, 1, 1]` (statistics `[outer, 1, 1, 1]`),
    /// which needs the normalized dims innermost in memory, in the same order in x, y
    /// and the parameters.
    fn norm(
        &self,
        mode: cudnnBackendNormMode_t,
        phase: NormFwdPhase,
        k: usize,
        [x, scale, epsilon, y]: [i64; 4],
        bias: Option<i64>,
        (mean, inv_variance): (Option<i64>, Option<i64>),
    ) -> Result<OpSpec, String> {
        let phase = match phase {
            NormFwdPhase::TRAINING => cudnnBackendNormFwdPhase_t::CUDNN_NORM_FWD_TRAINING,
            NormFwdPhase::INFERENCE => cudnnBackendNormFwdPhase_t::CUDNN_NORM_FWD_INFERENCE,
            _ => return Err("the forward phase is unset".into()),
        };
        let training = phase == cudnnBackendNormFwdPhase_t::CUDNN_NORM_FWD_TRAINING;
        let stats_missing = match mode {
            cudnnBackendNormMode_t::CUDNN_LAYER_NORM => mean.is_none() || inv_variance.is_none(),
            _ => inv_variance.is_none(),
        };
        if training && stats_missing {
            return Err("training normalizations must write their statistics".into());
        }
        let memory: Vec<i64> = [Some(x), Some(scale), bias, Some(y), mean, inv_variance]
            .into_iter()
            .flatten()
            .collect();
        self.not_scalar(&memory)?;
        if memory.iter().any(|u| self.out.virtuals.contains(u)) {
            return Err("normalization tensors must be in memory (not virtual)".into());
        }
        if self.spec(epsilon).value.is_none() {
            return Err("epsilon must be a pass-by-value scalar".into());
        }
        let dims = self.spec(x).dims.clone();
        let rank = dims.len();
        if k == 0 || k > rank || self.spec(y).dims != dims {
            return Err(format!("cannot normalize {k} of {rank} dims"));
        }
        let lead = rank - k;
        // Normalized dims innermost, in one order across x, y and the parameters.
        let inner_order = |uid: i64| -> Option<Vec<usize>> {
            let order = stride_order(&self.spec(uid).strides);
            let (outer, inner) = order.split_at(order.len() - k);
            let t = &self.spec(uid).dims;
            let outer_ok = outer.iter().all(|&d| d < lead || t[d] == 1);
            let inner_ok = inner.iter().all(|&d| d >= lead || t[d] == 1);
            (outer_ok && inner_ok).then(|| inner.iter().copied().filter(|&d| d >= lead).collect())
        };
        let reference = inner_order(x);
        let consistent = [Some(y), Some(scale), bias].into_iter().flatten().all(|u| {
            inner_order(u) == reference || self.spec(u).dims[lead..].iter().all(|&e| e == 1)
        });
        if reference.is_none() || !consistent {
            return Err("the normalized dims must be innermost in memory, in one order for x, y and the parameters".into());
        }
        let outer: i64 = dims[..lead].iter().product();
        let inner: i64 = dims[lead..].iter().product();
        let view = |uid: i64, d: [i64; 4], st: [i64; 4]| {
            let mut v = self.spec(uid).clone();
            v.dims = d.to_vec();
            v.strides = st.to_vec();
            v
        };
        let mut views = vec![
            view(x, [outer, inner, 1, 1], [inner, 1, inner, inner]),
            view(y, [outer, inner, 1, 1], [inner, 1, inner, inner]),
            view(scale, [1, inner, 1, 1], [inner, 1, inner, inner]),
        ];
        views.extend(bias.map(|b| view(b, [1, inner, 1, 1], [inner, 1, inner, inner])));
        for stat in [mean, inv_variance].into_iter().flatten() {
            views.push(view(stat, [outer, 1, 1, 1], [1, 1, 1, 1]));
        }
        Ok(OpSpec::NormForward(NormSpec {
            mode,
            phase,
            x,
            scale,
            bias,
            epsilon,
            y,
            mean,
            inv_variance,
            running: None,
            views,
        }))
    }

    /// Checks that each of `others` broadcasts to `x`'s dims (same rank, each extent
    /// equal or 1).
    fn broadcasts(&self, x: i64, others: &[i64]) -> Result<(), String> {
        let dims = &self.spec(x).dims;
        for &o in others {
            let od = &self.spec(o).dims;
            let fits =
                od.len() == dims.len() && od.iter().zip(dims).all(|(&a, &b)| a == b || a == 1);
            if !fits {
                return Err(format!(
                    "tensor uid {o} (dims {od:?}) does not broadcast to {dims:?}"
                ));
            }
        }
        Ok(())
    }

    fn pointwise(&mut self, p: &PointwiseAttributes) -> Result<OpSpec, String> {
        let (mode, arity) = pointwise_mode(p.operation).ok_or_else(|| {
            format!(
                "pointwise {:?} is not supported by CUDNN_ENGINE",
                p.operation
            )
        })?;
        let inputs: Vec<i64> = [
            Some(p.in_0_tensor_uid),
            p.in_1_tensor_uid,
            p.in_2_tensor_uid,
        ]
        .into_iter()
        .flatten()
        .collect();
        if inputs.len() != arity {
            return Err(format!(
                "pointwise {:?} takes {arity} input(s), got {}",
                p.operation,
                inputs.len()
            ));
        }
        let (x, y) = (p.in_0_tensor_uid, p.out_0_tensor_uid);
        self.not_scalar(&[x, y])?;
        if p.operation == PointwiseMode::TAN && self.index.data_type(y) == DataType::Float {
            // cuDNN's tan is a fast approximation: off by more than FLOAT's tolerance
            // near its poles.
            return Err(
                "pointwise TAN on FLOAT is not supported by CUDNN_ENGINE (approximate)".into(),
            );
        }
        if self.spec(x).dims != self.spec(y).dims {
            return Err(format!("in_0 (uid {x}) must have the output's dims"));
        }
        let b = p.in_1_tensor_uid;
        if let Some(b) = b
            && self.spec(b).value.is_none()
        {
            self.broadcasts(y, &[b])?;
        }
        let f = |v: Option<f32>| v.map(f64::from);
        Ok(OpSpec::Pointwise {
            mode,
            x,
            b,
            y,
            compute: self.compute,
            params: PointwiseParams {
                relu_lower_clip: f(p.relu_lower_clip),
                relu_upper_clip: f(p.relu_upper_clip),
                relu_lower_clip_slope: f(p.relu_lower_clip_slope),
                elu_alpha: f(p.elu_alpha),
                softplus_beta: f(p.softplus_beta),
                swish_beta: f(p.swish_beta),
            },
        })
    }
}

/// Nodes run as one cuDNN operation graph.
#[derive(Debug, Clone, PartialEq)]
pub struct Stage {
    /// The hipDNN nodes (positions), in order.
    pub nodes: Vec<usize>,
    /// The operations, in order.
    pub ops: Vec<OpSpec>,
    /// The tensors the operations use, virtual where they stay inside the stage.
    pub tensors: Vec<TensorSpec>,
}

impl Stage {
    /// The tensors the stage takes pointers for (not virtual): memory, then scalars.
    pub fn bound(&self) -> impl Iterator<Item = &TensorSpec> {
        self.tensors.iter().filter(|t| !t.is_virtual)
    }

    /// A short description for logs and errors.
    pub fn describe(&self, translation: &Translation) -> String {
        let names: Vec<&str> = self
            .nodes
            .iter()
            .map(|&n| translation.nodes[n].0.as_str())
            .collect();
        format!("nodes [{}]", names.join(", "))
    }
}

impl Translation {
    /// The stage running `nodes` (positions, in order): a tensor is virtual in it when
    /// the graph lets it be (virtual or synthesized) and every reader is in the stage.
    pub fn stage(&self, nodes: &[usize]) -> Stage {
        let ops: Vec<OpSpec> = nodes
            .iter()
            .flat_map(|&n| self.nodes[n].1.iter().cloned())
            .collect();
        let mut written = BTreeSet::new();
        let mut used = Vec::new();
        for op in &ops {
            let (ins, _) = op.uids();
            let outs = op.outputs();
            for &uid in ins.iter().chain(&outs) {
                if !used.contains(&uid) {
                    used.push(uid);
                }
            }
            written.extend(outs);
        }
        let readers_outside = |uid: i64| {
            self.nodes.iter().enumerate().any(|(n, (_, ops))| {
                !nodes.contains(&n) && ops.iter().any(|op| op.uids().0.contains(&uid))
            })
        };
        let tensors = used
            .iter()
            .map(|&uid| {
                let mut spec = self.tensors[&uid].clone();
                spec.is_virtual =
                    self.virtuals.contains(&uid) && written.contains(&uid) && !readers_outside(uid);
                if !spec.is_virtual && self.virtuals.contains(&uid) {
                    // Crosses stages: scratch memory in its producer's type.
                    spec.data_type = self
                        .storage_types
                        .get(&uid)
                        .copied()
                        .unwrap_or(cudnnDataType_t::CUDNN_DATA_FLOAT);
                }
                spec
            })
            .collect();
        let mut tensors: Vec<TensorSpec> = tensors;
        if ops.iter().any(|op| matches!(op, OpSpec::Matmul { .. })) {
            // cuDNN's matmul is batched: rank-2 operands get a leading batch of one.
            for t in &mut tensors {
                if t.dims.len() == 2 {
                    let outer = (t.dims[0] * t.strides[0]).max(t.dims[1] * t.strides[1]);
                    t.dims.insert(0, 1);
                    t.strides.insert(0, outer.max(1));
                }
            }
        }
        // A 1-D convolution's stage is 2-D: a unit dimension before the length.
        let lifted = ops.iter().any(|op| match op {
            OpSpec::ConvForward { conv, .. }
            | OpSpec::ConvBackwardData { conv, .. }
            | OpSpec::ConvBackwardFilter { conv, .. } => conv.lifted_1d,
            _ => false,
        });
        if lifted {
            for t in tensors
                .iter_mut()
                .filter(|t| t.dims.len() == 3 && t.value.is_none())
            {
                let stride = t.dims[2] * t.strides[2];
                t.dims.insert(2, 1);
                t.strides.insert(2, stride.max(1));
            }
        }
        // A normalization's tensors take its views.
        for op in &ops {
            if let OpSpec::NormForward(n) = op {
                for view in &n.views {
                    if let Some(t) = tensors.iter_mut().find(|t| t.uid == view.uid) {
                        t.dims.clone_from(&view.dims);
                        t.strides.clone_from(&view.strides);
                    }
                }
            }
        }
        // Scalars take the stage's rank (all extents one).
        let rank = tensors.iter().map(|t| t.dims.len()).max().unwrap_or(1);
        for t in tensors.iter_mut().filter(|t| t.value.is_some()) {
            t.dims = vec![1; rank];
            t.strides = vec![1; rank];
        }
        if ops.iter().all(|op| matches!(op, OpSpec::Pointwise { .. })) {
            channels_last_view(&mut tensors);
        }
        Stage {
            nodes: nodes.to_vec(),
            ops,
            tensors,
        }
    }

    /// Virtual tensors that `stages` pass between each other (they need scratch
    /// memory), with their sizes in bytes.
    pub fn scratch(&self, stages: &[Stage]) -> Vec<(i64, usize)> {
        let mut out: Vec<(i64, usize)> = Vec::new();
        for stage in stages {
            for t in stage.bound() {
                if self.virtuals.contains(&t.uid) && !out.iter().any(|(u, _)| *u == t.uid) {
                    let elements: i64 = t.dims.iter().product();
                    out.push((t.uid, elements as usize * element_size(t.data_type)));
                }
            }
        }
        out
    }
}

impl Translation {
    /// Refuses pointwise nodes that would run in a pointwise-only stage (not fused
    /// into a convolution's or matmul's epilogue) with an operand cuDNN's pointwise
    /// engines cannot broadcast: they broadcast only along the outer dimensions of the
    /// layout (a per-channel bias in NHWC, not in NCHW).
    fn check_standalone_pointwise(&self, chains: &[Chain]) -> Result<(), String> {
        for chain in chains {
            if matches!(
                chain.head_kind,
                HeadKind::Convolution | HeadKind::Matmul | HeadKind::Other
            ) {
                continue;
            }
            let nodes: Vec<usize> = chain.nodes().collect();
            let stage = self.stage(&nodes);
            let out_dims = stage
                .tensors
                .iter()
                .filter(|t| t.value.is_none())
                .map(|t| t.dims.clone())
                .max_by_key(|d| d.iter().product::<i64>())
                .unwrap_or_default();
            for t in stage
                .tensors
                .iter()
                .filter(|t| t.value.is_none() && t.dims != out_dims)
            {
                // In the channels-last view, innermost is position 1, then the last
                // positions backwards: the broadcast operand's full extents must be an
                // innermost run.
                let inner_to_outer: Vec<usize> = std::iter::once(1)
                    .chain((2..t.dims.len()).rev())
                    .chain(std::iter::once(0))
                    .collect();
                let mut in_run = true;
                for &d in &inner_to_outer {
                    if out_dims[d] == 1 {
                        continue;
                    }
                    if t.dims[d] == 1 {
                        in_run = false;
                    } else if !in_run {
                        return Err(format!(
                            "node \"{}\": cuDNN's pointwise engines cannot broadcast tensor uid {} (dims {:?}) in this layout; channels-last layouts broadcast per channel",
                            self.nodes[nodes[0]].0, t.uid, self.tensors[&t.uid].dims
                        ));
                    }
                }
            }
        }
        Ok(())
    }
}

/// Describes a pointwise-only stage to cuDNN in the dimension order its pointwise
/// engines take (the innermost dimension at position 1, as in NHWC), whatever the
/// graph's layout: an element-wise computation does not change when every tensor's
/// dimensions are listed in another (common) order, and the memory each tensor
/// addresses stays the same. Ranks below 4 get leading unit dimensions first.
fn channels_last_view(tensors: &mut [TensorSpec]) {
    let Some(rank) = tensors.iter().map(|t| t.dims.len()).max() else {
        return;
    };
    let rank = rank.max(4);
    for t in tensors.iter_mut() {
        while t.dims.len() < rank {
            let outer = t.dims[0] * t.strides[0];
            t.dims.insert(0, 1);
            t.strides.insert(0, outer.max(1));
        }
    }
    // The layout of the largest tensor decides.
    let model = tensors
        .iter()
        .filter(|t| t.value.is_none())
        .max_by_key(|t| t.dims.iter().product::<i64>())
        .map(|t| stride_order(&t.strides));
    let Some(order) = model else { return };
    // Position k of the outer-to-inner order goes to target[k]: 0, 2, 3, ..., 1.
    let target: Vec<usize> = std::iter::once(0)
        .chain(2..rank)
        .chain(std::iter::once(1))
        .collect();
    for t in tensors.iter_mut() {
        let (dims, strides) = (t.dims.clone(), t.strides.clone());
        for k in 0..rank {
            t.dims[target[k]] = dims[order[k]];
            t.strides[target[k]] = strides[order[k]];
        }
    }
}

#[cfg(test)]
mod tests;
