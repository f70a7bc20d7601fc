//! Builders for the common graphs, as owned [`Graph`]s that pass [`Graph::validate`].
//!
//! Each builder takes shapes, a [`Layout`] and the I/O [`DataType`], and names its
//! tensors by role (`"x"`, `"w"`, `"y"`, `"scale"`, ...); [`uid_of`] finds a tensor's
//! uid by that name. Conventions:
//!
//! * Graph defaults: `io_data_type = dtype`; compute and intermediate types `FLOAT`,
//!   so virtual intermediates of fused chains are `FLOAT` (hipDNN's and MIOpen's
//!   fusion convention).
//! * Activations (`x`, `y`, `dy`, ...) and weights use the layout; per-channel tensors
//!   are `[1, C, 1, …]` and have the same strides in either layout.
//! * Normalization parameters and statistics (scale, bias, mean, inverse variance,
//!   running statistics) are `FLOAT` whatever `dtype` is, as in hipDNN's and MIOpen's
//!   mixed-precision batch norm.
//! * Scalars (`epsilon`, `momentum`) are pass-by-value `FLOAT` tensors of dims `[1]`:
//!   they are in the graph, not in any device buffer.

use hipdnn_data_sdk::{DataType, TensorLayout};
use hipdnn_flatbuffers_sdk::TensorValue;
use hipdnn_flatbuffers_sdk::model::{
    BatchnormAttributes, BatchnormBackwardAttributes, BatchnormInferenceAttributes,
    BatchnormInferenceAttributesVarianceExt, ConvolutionBwdAttributes, ConvolutionFwdAttributes,
    ConvolutionWrwAttributes, Graph, LayernormAttributes, MatmulAttributes, Node, NodeAttributes,
    PointwiseAttributes, RMSNormAttributes, ReductionAttributes, TensorAttributes,
};
use hipdnn_flatbuffers_sdk::wire::{ConvMode, NormFwdPhase, PointwiseMode, ReductionMode};

use crate::reference::{ConvParams, PointwiseParams};
use crate::tensor::{dims_usize, layout_strides, to_i64};

/// How the dense tensors of a graph are laid out in memory.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Layout {
    /// Channels first, row-major at any rank (NCL, NCHW, NCDHW; plain row-major
    /// matrices).
    Nchw,
    /// Channels last: dimension 1 innermost (NLC, NHWC, NDHWC; for a batched matrix
    /// `[B, M, K]` this stores each matrix column-major).
    Nhwc,
    /// Explicit strides for the named tensors; the others are [`Layout::Nchw`].
    Explicit(Vec<(String, Vec<i64>)>),
}

impl Layout {
    /// Short name used in case names: `nchw`, `nhwc` or `strided`.
    pub fn tag(&self) -> &'static str {
        match self {
            Layout::Nchw => "nchw",
            Layout::Nhwc => "nhwc",
            Layout::Explicit(_) => "strided",
        }
    }

    /// Strides of tensor `name` with `dims` in this layout.
    pub fn strides_for(&self, name: &str, dims: &[i64]) -> Vec<i64> {
        let packed = |layout| {
            layout_strides(&dims_usize(dims), layout)
                .into_iter()
                .map(to_i64)
                .collect()
        };
        match self {
            Layout::Nchw => packed(TensorLayout::Packed),
            Layout::Nhwc if dims.len() >= 2 => packed(TensorLayout::ChannelsLast),
            Layout::Nhwc => packed(TensorLayout::Packed),
            Layout::Explicit(list) => list
                .iter()
                .find(|(n, _)| n == name)
                .map_or_else(|| packed(TensorLayout::Packed), |(_, s)| s.clone()),
        }
    }
}

/// The uid of the tensor called `name` in `graph`.
///
/// # Panics
/// If the graph has no such tensor (a bug in the caller: builder names are fixed).
pub fn uid_of(graph: &Graph, name: &str) -> i64 {
    graph
        .tensors
        .iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("graph \"{}\" has no tensor \"{name}\"", graph.name))
        .uid
}

/// Accumulates tensors (fresh uids from 1) and nodes, then validates.
#[derive(Debug)]
pub struct GraphBuilder {
    graph: Graph,
    layout: Layout,
    next_uid: i64,
}

impl GraphBuilder {
    /// An empty graph with I/O type `dtype` and `FLOAT` compute/intermediate types.
    pub fn new(name: &str, layout: &Layout, dtype: DataType) -> Self {
        Self {
            graph: Graph {
                name: name.to_owned(),
                io_data_type: dtype,
                compute_data_type: DataType::Float,
                intermediate_data_type: DataType::Float,
                ..Graph::default()
            },
            layout: layout.clone(),
            next_uid: 1,
        }
    }

    fn push(&mut self, t: TensorAttributes) -> i64 {
        let uid = self.next_uid;
        self.next_uid += 1;
        self.graph.tensors.push(TensorAttributes { uid, ..t });
        uid
    }

    /// A non-virtual tensor of type `dtype` (`UNSET` takes the graph's I/O type) laid
    /// out by the builder's layout.
    pub fn tensor(&mut self, name: &str, dims: &[i64], dtype: DataType) -> i64 {
        let strides = self.layout.strides_for(name, dims);
        self.push(TensorAttributes {
            name: name.to_owned(),
            data_type: dtype,
            dims: dims.to_vec(),
            strides,
            ..TensorAttributes::default()
        })
    }

    /// A virtual intermediate (packed channels-first, intermediate type).
    pub fn virtual_tensor(&mut self, name: &str, dims: &[i64]) -> i64 {
        let strides = Layout::Nchw.strides_for(name, dims);
        self.push(TensorAttributes {
            name: name.to_owned(),
            dims: dims.to_vec(),
            strides,
            is_virtual: true,
            ..TensorAttributes::default()
        })
    }

    /// A pass-by-value `FLOAT` scalar of dims `[1]`.
    pub fn scalar(&mut self, name: &str, value: f32) -> i64 {
        self.push(TensorAttributes {
            name: name.to_owned(),
            data_type: DataType::Float,
            dims: vec![1],
            strides: vec![1],
            value: Some(TensorValue::Float32(value)),
            ..TensorAttributes::default()
        })
    }

    /// Appends a node.
    pub fn node(&mut self, name: &str, attributes: impl Into<NodeAttributes>) {
        self.graph.nodes.push(Node::new(name, attributes));
    }

    /// Appends a pointwise node `out = f(inputs)`.
    pub fn pointwise(&mut self, name: &str, p: &PointwiseParams, inputs: &[i64], out: i64) {
        let mut a = PointwiseAttributes {
            in_0_tensor_uid: inputs[0],
            in_1_tensor_uid: inputs.get(1).copied(),
            in_2_tensor_uid: inputs.get(2).copied(),
            out_0_tensor_uid: out,
            ..PointwiseAttributes::default()
        };
        p.apply_to(&mut a);
        self.node(name, a);
    }

    /// Validates (which sorts nodes and fills unset data types) and returns the graph.
    ///
    /// # Panics
    /// If the graph is invalid: the builders of this module only make valid graphs.
    pub fn finish(mut self) -> Graph {
        if let Err(e) = self.graph.validate() {
            panic!("graph \"{}\" is invalid: {e}", self.graph.name);
        }
        self.graph
    }
}

/// Shapes and parameters of one convolution (`x: [N, C, spatial…]`,
/// `w: [K, C/G, kernel…]`).
#[derive(Debug, Clone, PartialEq)]
pub struct ConvSpec {
    /// Input dims.
    pub x_dims: Vec<i64>,
    /// Filter dims.
    pub w_dims: Vec<i64>,
    /// Padding, stride, dilation and mode.
    pub params: ConvParams,
}

impl ConvSpec {
    /// A stride-1, unpadded cross-correlation of `x_dims` with `w_dims`.
    pub fn new(x_dims: &[i64], w_dims: &[i64]) -> Self {
        Self {
            x_dims: x_dims.to_vec(),
            w_dims: w_dims.to_vec(),
            params: ConvParams::new(x_dims.len().saturating_sub(2)),
        }
    }

    /// Replaces the parameters.
    pub fn with(mut self, f: impl FnOnce(ConvParams) -> ConvParams) -> Self {
        self.params = f(self.params);
        self
    }

    /// The output dims.
    ///
    /// # Panics
    /// If the geometry is invalid.
    pub fn y_dims(&self) -> Vec<i64> {
        self.params
            .output_dims(&dims_usize(&self.x_dims), &dims_usize(&self.w_dims))
            .unwrap_or_else(|e| panic!("{self:?}: {e}"))
            .into_iter()
            .map(to_i64)
            .collect()
    }

    /// Per-output-channel bias dims `[1, K, 1, …]`.
    pub fn bias_dims(&self) -> Vec<i64> {
        let mut d = vec![1; self.x_dims.len()];
        d[1] = self.w_dims[0];
        d
    }

    fn wire_params(&self) -> (Vec<i64>, Vec<i64>, Vec<i64>, Vec<i64>, ConvMode) {
        let v = |x: &[usize]| x.iter().map(|&u| to_i64(u)).collect();
        let p = &self.params;
        (
            v(&p.pre_padding),
            v(&p.post_padding),
            v(&p.stride),
            v(&p.dilation),
            p.mode,
        )
    }

    fn fwd_attributes(&self, x: i64, w: i64, y: i64) -> ConvolutionFwdAttributes {
        let (pre_padding, post_padding, stride, dilation, conv_mode) = self.wire_params();
        ConvolutionFwdAttributes {
            x_tensor_uid: x,
            w_tensor_uid: w,
            y_tensor_uid: y,
            pre_padding,
            post_padding,
            stride,
            dilation,
            conv_mode,
            ..ConvolutionFwdAttributes::default()
        }
    }
}

/// Convolution forward: tensors `x`, `w`, `y`.
pub fn conv_fprop(spec: &ConvSpec, layout: &Layout, dtype: DataType) -> Graph {
    let mut b = GraphBuilder::new("conv_fprop", layout, dtype);
    let x = b.tensor("x", &spec.x_dims, DataType::Unset);
    let w = b.tensor("w", &spec.w_dims, DataType::Unset);
    let y = b.tensor("y", &spec.y_dims(), DataType::Unset);
    b.node("conv", spec.fwd_attributes(x, w, y));
    b.finish()
}

/// Convolution → bias add → ReLU: tensors `x`, `w`, `bias` (`[1, K, 1, …]`), `y`;
/// virtual `conv_out`, `bias_out`.
pub fn conv_bias_relu(spec: &ConvSpec, layout: &Layout, dtype: DataType) -> Graph {
    let mut b = GraphBuilder::new("conv_bias_relu", layout, dtype);
    let y_dims = spec.y_dims();
    let x = b.tensor("x", &spec.x_dims, DataType::Unset);
    let w = b.tensor("w", &spec.w_dims, DataType::Unset);
    let bias = b.tensor("bias", &spec.bias_dims(), DataType::Unset);
    let conv = b.virtual_tensor("conv_out", &y_dims);
    let biased = b.virtual_tensor("bias_out", &y_dims);
    let y = b.tensor("y", &y_dims, DataType::Unset);
    b.node("conv", spec.fwd_attributes(x, w, conv));
    b.pointwise(
        "bias",
        &PointwiseParams::new(PointwiseMode::ADD),
        &[conv, bias],
        biased,
    );
    b.pointwise(
        "relu",
        &PointwiseParams::new(PointwiseMode::RELU_FWD),
        &[biased],
        y,
    );
    b.finish()
}

/// Convolution data gradient: tensors `dy`, `w`, `dx`.
pub fn conv_dgrad(spec: &ConvSpec, layout: &Layout, dtype: DataType) -> Graph {
    let mut b = GraphBuilder::new("conv_dgrad", layout, dtype);
    let dy = b.tensor("dy", &spec.y_dims(), DataType::Unset);
    let w = b.tensor("w", &spec.w_dims, DataType::Unset);
    let dx = b.tensor("dx", &spec.x_dims, DataType::Unset);
    let (pre_padding, post_padding, stride, dilation, conv_mode) = spec.wire_params();
    b.node(
        "dgrad",
        ConvolutionBwdAttributes {
            dy_tensor_uid: dy,
            w_tensor_uid: w,
            dx_tensor_uid: dx,
            pre_padding,
            post_padding,
            stride,
            dilation,
            conv_mode,
            ..ConvolutionBwdAttributes::default()
        },
    );
    b.finish()
}

/// Convolution weight gradient: tensors `x`, `dy`, `dw`.
pub fn conv_wgrad(spec: &ConvSpec, layout: &Layout, dtype: DataType) -> Graph {
    let mut b = GraphBuilder::new("conv_wgrad", layout, dtype);
    let x = b.tensor("x", &spec.x_dims, DataType::Unset);
    let dy = b.tensor("dy", &spec.y_dims(), DataType::Unset);
    let dw = b.tensor("dw", &spec.w_dims, DataType::Unset);
    let (pre_padding, post_padding, stride, dilation, conv_mode) = spec.wire_params();
    b.node(
        "wgrad",
        ConvolutionWrwAttributes {
            x_tensor_uid: x,
            dy_tensor_uid: dy,
            dw_tensor_uid: dw,
            pre_padding,
            post_padding,
            stride,
            dilation,
            conv_mode,
            ..ConvolutionWrwAttributes::default()
        },
    );
    b.finish()
}

/// `[1, C, 1, …]` for activation dims `x_dims`.
pub fn channel_dims(x_dims: &[i64]) -> Vec<i64> {
    let mut d = vec![1; x_dims.len()];
    d[1] = x_dims[1];
    d
}

/// Batch norm inference (`mean`, `inv_variance`), optionally followed by a ReLU:
/// tensors `x`, `mean`, `inv_variance`, `scale`, `bias`, `y` (virtual `bn_out` when
/// `relu`).
pub fn batchnorm_inference(x_dims: &[i64], relu: bool, layout: &Layout, dtype: DataType) -> Graph {
    let name = if relu {
        "batchnorm_inference_relu"
    } else {
        "batchnorm_inference"
    };
    let mut b = GraphBuilder::new(name, layout, dtype);
    let c = channel_dims(x_dims);
    let x = b.tensor("x", x_dims, DataType::Unset);
    let mean = b.tensor("mean", &c, DataType::Float);
    let inv = b.tensor("inv_variance", &c, DataType::Float);
    let scale = b.tensor("scale", &c, DataType::Float);
    let bias = b.tensor("bias", &c, DataType::Float);
    let bn_out = if relu {
        b.virtual_tensor("bn_out", x_dims)
    } else {
        b.tensor("y", x_dims, DataType::Unset)
    };
    b.node(
        "bn",
        BatchnormInferenceAttributes {
            x_tensor_uid: x,
            mean_tensor_uid: mean,
            inv_variance_tensor_uid: inv,
            scale_tensor_uid: scale,
            bias_tensor_uid: bias,
            y_tensor_uid: bn_out,
        },
    );
    if relu {
        let y = b.tensor("y", x_dims, DataType::Unset);
        b.pointwise(
            "relu",
            &PointwiseParams::new(PointwiseMode::RELU_FWD),
            &[bn_out],
            y,
        );
    }
    b.finish()
}

/// Batch norm inference from a variance (`BatchnormInferenceAttributesVarianceExt`):
/// tensors `x`, `mean`, `variance`, `scale`, `bias`, `y` and the scalar `epsilon`.
pub fn batchnorm_inference_variance(
    x_dims: &[i64],
    epsilon: f32,
    layout: &Layout,
    dtype: DataType,
) -> Graph {
    let mut b = GraphBuilder::new("batchnorm_inference_variance", layout, dtype);
    let c = channel_dims(x_dims);
    let x = b.tensor("x", x_dims, DataType::Unset);
    let mean = b.tensor("mean", &c, DataType::Float);
    let var = b.tensor("variance", &c, DataType::Float);
    let scale = b.tensor("scale", &c, DataType::Float);
    let bias = b.tensor("bias", &c, DataType::Float);
    let eps = b.scalar("epsilon", epsilon);
    let y = b.tensor("y", x_dims, DataType::Unset);
    b.node(
        "bn",
        BatchnormInferenceAttributesVarianceExt {
            x_tensor_uid: x,
            mean_tensor_uid: mean,
            variance_tensor_uid: var,
            scale_tensor_uid: scale,
            bias_tensor_uid: bias,
            y_tensor_uid: y,
            epsilon_tensor_uid: eps,
        },
    );
    b.finish()
}

/// Batch norm training forward: tensors `x`, `scale`, `bias`, scalar `epsilon`, outputs
/// `y`, `mean`, `inv_variance`; with `momentum` also `prev_running_mean`,
/// `prev_running_variance`, scalar `momentum`, outputs `next_running_mean`,
/// `next_running_variance`.
pub fn batchnorm_training(
    x_dims: &[i64],
    epsilon: f32,
    momentum: Option<f32>,
    layout: &Layout,
    dtype: DataType,
) -> Graph {
    let mut b = GraphBuilder::new("batchnorm_training", layout, dtype);
    let c = channel_dims(x_dims);
    let x = b.tensor("x", x_dims, DataType::Unset);
    let scale = b.tensor("scale", &c, DataType::Float);
    let bias = b.tensor("bias", &c, DataType::Float);
    let eps = b.scalar("epsilon", epsilon);
    let running = momentum.map(|m| {
        (
            b.tensor("prev_running_mean", &c, DataType::Float),
            b.tensor("prev_running_variance", &c, DataType::Float),
            b.scalar("momentum", m),
        )
    });
    let y = b.tensor("y", x_dims, DataType::Unset);
    let mean = b.tensor("mean", &c, DataType::Float);
    let inv = b.tensor("inv_variance", &c, DataType::Float);
    let next = running.map(|_| {
        (
            b.tensor("next_running_mean", &c, DataType::Float),
            b.tensor("next_running_variance", &c, DataType::Float),
        )
    });
    b.node(
        "bn",
        BatchnormAttributes {
            x_tensor_uid: x,
            scale_tensor_uid: scale,
            bias_tensor_uid: bias,
            epsilon_tensor_uid: eps,
            peer_stats_tensor_uid: Vec::new(),
            prev_running_mean_tensor_uid: running.map(|r| r.0),
            prev_running_variance_tensor_uid: running.map(|r| r.1),
            momentum_tensor_uid: running.map(|r| r.2),
            y_tensor_uid: y,
            mean_tensor_uid: Some(mean),
            inv_variance_tensor_uid: Some(inv),
            next_running_mean_tensor_uid: next.map(|n| n.0),
            next_running_variance_tensor_uid: next.map(|n| n.1),
        },
    );
    b.finish()
}

/// Batch norm backward from saved statistics: tensors `dy`, `x`, `mean`,
/// `inv_variance`, `scale`, outputs `dx`, `dscale`, `dbias`.
pub fn batchnorm_backward(x_dims: &[i64], layout: &Layout, dtype: DataType) -> Graph {
    let mut b = GraphBuilder::new("batchnorm_backward", layout, dtype);
    let c = channel_dims(x_dims);
    let dy = b.tensor("dy", x_dims, DataType::Unset);
    let x = b.tensor("x", x_dims, DataType::Unset);
    let mean = b.tensor("mean", &c, DataType::Float);
    let inv = b.tensor("inv_variance", &c, DataType::Float);
    let scale = b.tensor("scale", &c, DataType::Float);
    let dx = b.tensor("dx", x_dims, DataType::Unset);
    let dscale = b.tensor("dscale", &c, DataType::Float);
    let dbias = b.tensor("dbias", &c, DataType::Float);
    b.node(
        "bn_bwd",
        BatchnormBackwardAttributes {
            dy_tensor_uid: dy,
            x_tensor_uid: x,
            mean_tensor_uid: Some(mean),
            inv_variance_tensor_uid: Some(inv),
            scale_tensor_uid: scale,
            peer_stats_tensor_uid: Vec::new(),
            dx_tensor_uid: dx,
            dscale_tensor_uid: dscale,
            dbias_tensor_uid: dbias,
        },
    );
    b.finish()
}

/// The output dims of `a · b` with numpy broadcasting of the batch dims.
///
/// # Panics
/// If the shapes do not multiply.
pub fn matmul_dims(a: &[i64], b: &[i64]) -> Vec<i64> {
    let (ra, rb) = (a.len(), b.len());
    assert!(ra >= 2 && rb >= 2, "matmul needs rank ≥ 2: {a:?} {b:?}");
    assert_eq!(a[ra - 1], b[rb - 2], "inner dims of {a:?} · {b:?}");
    let (ba, bb) = (&a[..ra - 2], &b[..rb - 2]);
    let r = ba.len().max(bb.len());
    let mut out = Vec::with_capacity(r + 2);
    for i in 0..r {
        let da = (i + ba.len()).checked_sub(r).map_or(1, |j| ba[j]);
        let db = (i + bb.len()).checked_sub(r).map_or(1, |j| bb[j]);
        assert!(
            da == db || da == 1 || db == 1,
            "batch dims of {a:?} · {b:?}"
        );
        out.push(da.max(db));
    }
    out.extend([a[ra - 2], b[rb - 1]]);
    out
}

/// Matrix multiplication: tensors `a`, `b`, `c`.
pub fn matmul(a_dims: &[i64], b_dims: &[i64], layout: &Layout, dtype: DataType) -> Graph {
    let mut b = GraphBuilder::new("matmul", layout, dtype);
    let a = b.tensor("a", a_dims, DataType::Unset);
    let bb = b.tensor("b", b_dims, DataType::Unset);
    let c = b.tensor("c", &matmul_dims(a_dims, b_dims), DataType::Unset);
    b.node(
        "matmul",
        MatmulAttributes {
            a_tensor_uid: a,
            b_tensor_uid: bb,
            c_tensor_uid: c,
            ..MatmulAttributes::default()
        },
    );
    b.finish()
}

/// Matmul → bias add → GELU (erf form): tensors `a`, `b`, `bias` (`[1, …, 1, N]`), `y`;
/// virtual `mm_out`, `bias_out`.
pub fn matmul_bias_gelu(a_dims: &[i64], b_dims: &[i64], layout: &Layout, dtype: DataType) -> Graph {
    let mut b = GraphBuilder::new("matmul_bias_gelu", layout, dtype);
    let c_dims = matmul_dims(a_dims, b_dims);
    let mut bias_dims = vec![1; c_dims.len()];
    *bias_dims.last_mut().expect("rank ≥ 2") = *c_dims.last().expect("rank ≥ 2");
    let a = b.tensor("a", a_dims, DataType::Unset);
    let bb = b.tensor("b", b_dims, DataType::Unset);
    let bias = b.tensor("bias", &bias_dims, DataType::Unset);
    let mm = b.virtual_tensor("mm_out", &c_dims);
    let biased = b.virtual_tensor("bias_out", &c_dims);
    let y = b.tensor("y", &c_dims, DataType::Unset);
    b.node(
        "matmul",
        MatmulAttributes {
            a_tensor_uid: a,
            b_tensor_uid: bb,
            c_tensor_uid: mm,
            ..MatmulAttributes::default()
        },
    );
    b.pointwise(
        "bias",
        &PointwiseParams::new(PointwiseMode::ADD),
        &[mm, bias],
        biased,
    );
    b.pointwise(
        "gelu",
        &PointwiseParams::new(PointwiseMode::GELU_FWD),
        &[biased],
        y,
    );
    b.finish()
}

/// A single pointwise node: inputs `in_0`, `in_1`, `in_2` (as many as `input_dims`),
/// output `out` of `out_dims`.
pub fn pointwise(
    p: &PointwiseParams,
    input_dims: &[Vec<i64>],
    out_dims: &[i64],
    layout: &Layout,
    dtype: DataType,
) -> Graph {
    let mut b = GraphBuilder::new("pointwise", layout, dtype);
    let ins: Vec<i64> = input_dims
        .iter()
        .enumerate()
        .map(|(i, d)| b.tensor(&format!("in_{i}"), d, DataType::Unset))
        .collect();
    let out = b.tensor("out", out_dims, DataType::Unset);
    b.pointwise("pointwise", p, &ins, out);
    b.finish()
}

/// A reduction: tensors `in`, `out` (extent 1 on the reduced dims).
pub fn reduction(
    mode: ReductionMode,
    in_dims: &[i64],
    out_dims: &[i64],
    layout: &Layout,
    dtype: DataType,
) -> Graph {
    let mut b = GraphBuilder::new("reduction", layout, dtype);
    let i = b.tensor("in", in_dims, DataType::Unset);
    let o = b.tensor("out", out_dims, DataType::Unset);
    b.node(
        "reduce",
        ReductionAttributes {
            mode,
            in_tensor_uid: i,
            out_tensor_uid: o,
            is_deterministic: false,
        },
    );
    b.finish()
}

/// Dims of a normalization's parameters (`[1, …, 1, normalized dims…]`) and statistics
/// (`[leading dims…, 1, …, 1]`).
pub fn norm_dims(x_dims: &[i64], normalized_dims: usize) -> (Vec<i64>, Vec<i64>) {
    let lead = x_dims.len() - normalized_dims;
    let param = (0..x_dims.len())
        .map(|i| if i < lead { 1 } else { x_dims[i] })
        .collect();
    let stats = (0..x_dims.len())
        .map(|i| if i < lead { x_dims[i] } else { 1 })
        .collect();
    (param, stats)
}

/// Layer norm forward over the trailing `normalized_dims` dims: tensors `x`, `scale`,
/// `bias`, scalar `epsilon`, output `y`; when `training`, also outputs `mean` and
/// `inv_variance` (`FLOAT`).
pub fn layernorm(
    x_dims: &[i64],
    normalized_dims: usize,
    epsilon: f32,
    training: bool,
    layout: &Layout,
    dtype: DataType,
) -> Graph {
    let mut b = GraphBuilder::new("layernorm", layout, dtype);
    let (param, stats) = norm_dims(x_dims, normalized_dims);
    let x = b.tensor("x", x_dims, DataType::Unset);
    let scale = b.tensor("scale", &param, DataType::Float);
    let bias = b.tensor("bias", &param, DataType::Float);
    let eps = b.scalar("epsilon", epsilon);
    let y = b.tensor("y", x_dims, DataType::Unset);
    let saved = training.then(|| {
        (
            b.tensor("mean", &stats, DataType::Float),
            b.tensor("inv_variance", &stats, DataType::Float),
        )
    });
    b.node(
        "layernorm",
        LayernormAttributes {
            x_tensor_uid: x,
            scale_tensor_uid: scale,
            bias_tensor_uid: bias,
            epsilon_tensor_uid: eps,
            y_tensor_uid: y,
            normalized_dim_count: to_i64(normalized_dims),
            mean_tensor_uid: saved.map(|s| s.0),
            inv_variance_tensor_uid: saved.map(|s| s.1),
            forward_phase: if training {
                NormFwdPhase::TRAINING
            } else {
                NormFwdPhase::INFERENCE
            },
        },
    );
    b.finish()
}

/// RMS norm forward over every dim but the batch: tensors `x`, `scale`, optional
/// `bias`, scalar `epsilon`, output `y`; when `training`, also output `inv_rms`.
pub fn rmsnorm(
    x_dims: &[i64],
    epsilon: f32,
    with_bias: bool,
    training: bool,
    layout: &Layout,
    dtype: DataType,
) -> Graph {
    let mut b = GraphBuilder::new("rmsnorm", layout, dtype);
    let (param, stats) = norm_dims(x_dims, x_dims.len() - 1);
    let x = b.tensor("x", x_dims, DataType::Unset);
    let scale = b.tensor("scale", &param, DataType::Float);
    let bias = with_bias.then(|| b.tensor("bias", &param, DataType::Float));
    let eps = b.scalar("epsilon", epsilon);
    let y = b.tensor("y", x_dims, DataType::Unset);
    let inv_rms = training.then(|| b.tensor("inv_rms", &stats, DataType::Float));
    b.node(
        "rmsnorm",
        RMSNormAttributes {
            x_tensor_uid: x,
            scale_tensor_uid: scale,
            epsilon_tensor_uid: eps,
            y_tensor_uid: y,
            bias_tensor_uid: bias,
            inv_rms_tensor_uid: inv_rms,
            forward_phase: if training {
                NormFwdPhase::TRAINING
            } else {
                NormFwdPhase::INFERENCE
            },
        },
    );
    b.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use hipdnn_flatbuffers_sdk::GraphView;

    fn conv_spec() -> ConvSpec {
        ConvSpec::new(&[2, 4, 8, 8], &[6, 2, 3, 3]).with(|p| p.padding(1).stride(2))
    }

    fn all_graphs(layout: &Layout, dtype: DataType) -> Vec<Graph> {
        let gelu = PointwiseParams::new(PointwiseMode::GELU_FWD);
        vec![
            conv_fprop(&conv_spec(), layout, dtype),
            conv_bias_relu(&conv_spec(), layout, dtype),
            conv_dgrad(&conv_spec(), layout, dtype),
            conv_wgrad(&conv_spec(), layout, dtype),
            batchnorm_inference(&[2, 3, 4, 4], false, layout, dtype),
            batchnorm_inference(&[2, 3, 4, 4], true, layout, dtype),
            batchnorm_inference_variance(&[2, 3, 4, 4], 1e-5, layout, dtype),
            batchnorm_training(&[2, 3, 4, 4], 1e-5, None, layout, dtype),
            batchnorm_training(&[2, 3, 4, 4], 1e-5, Some(0.1), layout, dtype),
            batchnorm_backward(&[2, 3, 4, 4], layout, dtype),
            matmul(&[2, 1, 4, 5], &[3, 5, 6], layout, dtype),
            matmul_bias_gelu(&[8, 16], &[16, 4], layout, dtype),
            pointwise(&gelu, &[vec![2, 3, 4, 4]], &[2, 3, 4, 4], layout, dtype),
            reduction(
                ReductionMode::ADD,
                &[2, 3, 4, 4],
                &[2, 3, 1, 1],
                layout,
                dtype,
            ),
            layernorm(&[2, 3, 4, 4], 3, 1e-5, true, layout, dtype),
            rmsnorm(&[2, 3, 4, 4], 1e-5, true, true, layout, dtype),
        ]
    }

    #[test]
    fn every_builder_validates_and_round_trips() {
        for layout in [Layout::Nchw, Layout::Nhwc] {
            for dtype in [DataType::Float, DataType::Half, DataType::Bfloat16] {
                for g in all_graphs(&layout, dtype) {
                    // `finish` validated; check again on the wire form a plugin receives.
                    let bytes = g.to_bytes();
                    let view = GraphView::from_bytes(&bytes).unwrap();
                    view.validate()
                        .unwrap_or_else(|e| panic!("{}: {e}", g.name));
                    let back = view.to_model().unwrap();
                    assert_eq!(back, g);
                    for t in &g.tensors {
                        assert_ne!(t.data_type, DataType::Unset, "{}: {}", g.name, t.name);
                        let spatial: i64 = t.dims.iter().skip(2).product();
                        if !t.is_virtual
                            && t.value.is_none()
                            && t.dims.len() >= 2
                            && t.dims[1] > 1
                            && spatial > 1
                        {
                            let channels_last = t.strides[1] == 1;
                            assert_eq!(
                                channels_last,
                                layout == Layout::Nhwc,
                                "{}: {} {:?}",
                                g.name,
                                t.name,
                                t.strides
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn conv_bias_relu_shapes() {
        let g = conv_bias_relu(&conv_spec(), &Layout::Nhwc, DataType::Half);
        let y = &g.tensors[(uid_of(&g, "y") - 1) as usize];
        assert_eq!(y.dims, [2, 6, 4, 4]);
        assert_eq!(y.strides, [96, 1, 24, 6]);
        assert_eq!(y.data_type, DataType::Half);
        let conv = &g.tensors[(uid_of(&g, "conv_out") - 1) as usize];
        assert!(conv.is_virtual);
        assert_eq!(conv.data_type, DataType::Float);
        assert_eq!(g.nodes.len(), 3);
    }

    #[test]
    fn explicit_strides_are_used() {
        let layout = Layout::Explicit(vec![("x".into(), vec![400, 100, 10, 1])]);
        let g = conv_fprop(
            &ConvSpec::new(&[1, 4, 8, 8], &[2, 4, 3, 3]),
            &layout,
            DataType::Float,
        );
        let x = g.tensors.iter().find(|t| t.name == "x").unwrap();
        assert_eq!(x.strides, [400, 100, 10, 1]);
        let w = g.tensors.iter().find(|t| t.name == "w").unwrap();
        assert_eq!(w.strides, [36, 9, 3, 1]);
    }

    #[test]
    fn matmul_dims_broadcast() {
        assert_eq!(matmul_dims(&[2, 1, 4, 5], &[3, 5, 6]), [2, 3, 4, 6]);
        assert_eq!(matmul_dims(&[4, 5], &[5, 6]), [4, 6]);
        assert_eq!(matmul_dims(&[1, 4, 5], &[7, 5, 2]), [7, 4, 2]);
    }

    #[test]
    fn scalars_are_pass_by_value() {
        let g = batchnorm_training(
            &[2, 3, 4, 4],
            1e-3,
            Some(0.25),
            &Layout::Nchw,
            DataType::Float,
        );
        let eps = g.tensors.iter().find(|t| t.name == "epsilon").unwrap();
        assert_eq!(eps.value, Some(TensorValue::Float32(1e-3)));
        let m = g.tensors.iter().find(|t| t.name == "momentum").unwrap();
        assert_eq!(m.value, Some(TensorValue::Float32(0.25)));
    }
}
