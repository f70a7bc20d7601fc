//! Builders for the common graphs, as owned [`Graph`]s that pass [`Graph::validate`].
//!
//! The graphs are built with `hipdnn-frontend`'s [`GraphBuilder`], the builder
//! applications use; this module only fixes shapes, names and layouts. Each function
//! takes shapes, a [`Layout`] and the I/O [`DataType`], and names its tensors by role
//! (`"x"`, `"w"`, `"y"`, `"scale"`, ...); [`uid_of`] finds a tensor's uid by that name.
//! Conventions:
//!
//! * Graph defaults: `io_data_type = dtype`; compute and intermediate types `FLOAT`,
//!   so virtual intermediates of fused chains are `FLOAT` (hipDNN's and MIOpen's
//!   fusion convention).
//! * Uids are 1, 2, … in the order the tensors are listed in each function's
//!   documentation: inputs first, then each node's outputs.
//! * Activations (`x`, `y`, `dy`, ...) and weights use the layout; per-channel tensors
//!   are `[1, C, 1, …]` and have the same strides in either layout. Virtual
//!   intermediates are packed channels-first.
//! * Normalization parameters and statistics (scale, bias, mean, inverse variance,
//!   running statistics) are `FLOAT` whatever `dtype` is, as in hipDNN's and MIOpen's
//!   mixed-precision batch norm.
//! * Scalars (`epsilon`, `momentum`) are pass-by-value `FLOAT` tensors of dims `[1]`:
//!   they are in the graph, not in any device buffer.

use hipdnn_data_sdk::{DataType, TensorLayout};
use hipdnn_flatbuffers_sdk::TensorValue;
use hipdnn_flatbuffers_sdk::model::Graph;
use hipdnn_flatbuffers_sdk::wire::{NormFwdPhase, PointwiseMode, ReductionMode, ResampleMode};
use hipdnn_frontend::{
    BatchnormAttrs, BatchnormBackwardAttrs, BatchnormInferenceAttrs,
    BatchnormInferenceVarianceAttrs, ConvAttrs, FrontendError, GraphBuilder, LayernormAttrs,
    MatmulAttrs, PointwiseAttrs, ReductionAttrs, ResampleAttrs, RmsnormAttrs, Tensor,
    TensorDescriptor,
};

use crate::reference::{ConvParams, PointwiseParams};
use crate::tensor::{dims_usize, layout_strides};

fn to_i64(v: usize) -> i64 {
    i64::try_from(v).expect("a size fits in i64")
}

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

/// The frontend's builder with this module's conventions (graph data types, strides
/// from the [`Layout`], names by role). Every step panics on a frontend error: the
/// functions of this module only make valid graphs, so an error is a bug in the caller's
/// shapes, reported with the graph's name.
struct Builder {
    name: &'static str,
    layout: Layout,
    g: GraphBuilder,
}

fn check<T>(graph: &str, r: Result<T, FrontendError>) -> T {
    r.unwrap_or_else(|e| panic!("graph \"{graph}\" is invalid: {e}"))
}

impl Builder {
    fn new(name: &'static str, layout: &Layout, dtype: DataType) -> Self {
        Self {
            name,
            layout: layout.clone(),
            g: GraphBuilder::new(name)
                .io_data_type(dtype)
                .compute_data_type(DataType::Float)
                .intermediate_data_type(DataType::Float),
        }
    }

    /// A graph input of type `dtype` (`UNSET` takes the graph's I/O type), laid out by
    /// the layout.
    fn input(&mut self, name: &str, dims: &[i64], dtype: DataType) -> Tensor {
        let d = TensorDescriptor::new(name, dims)
            .strides(self.layout.strides_for(name, dims))
            .data_type(dtype);
        check(self.name, self.g.tensor(d))
    }

    /// A pass-by-value `FLOAT` scalar of dims `[1]`.
    fn scalar(&mut self, name: &str, value: f32) -> Tensor {
        let d = TensorDescriptor::scalar(name, TensorValue::Float32(value));
        check(self.name, self.g.tensor(d))
    }

    /// Makes an operation's result the graph output `name` of type `dtype` (`UNSET`:
    /// the I/O type), laid out by the layout.
    fn output(&mut self, t: Tensor, name: &str, dtype: DataType) -> Tensor {
        let dims = check(self.name, self.g.tensor_info(t)).dims().to_vec();
        let strides = self.layout.strides_for(name, &dims);
        let r = self
            .g
            .set_name(t, name)
            .and_then(|g| g.set_output(t, true))
            .and_then(|g| g.set_strides(t, strides))
            .and_then(|g| g.set_data_type(t, dtype));
        check(self.name, r);
        t
    }

    /// Names an operation's result, a virtual intermediate, packed channels-first.
    fn intermediate(&mut self, t: Tensor, name: &str) -> Tensor {
        let dims = check(self.name, self.g.tensor_info(t)).dims().to_vec();
        let strides = Layout::Nchw.strides_for(name, &dims);
        let r = self
            .g
            .set_name(t, name)
            .and_then(|g| g.set_strides(t, strides));
        check(self.name, r);
        t
    }

    /// `inputs` through the pointwise operation `p`, as node `node`.
    fn pointwise(&mut self, node: &str, p: &PointwiseParams, inputs: &[Tensor]) -> Tensor {
        check(
            self.name,
            self.g.pointwise(inputs, pointwise_attrs(p).name(node)),
        )
    }

    /// Builds (validates, fills unset data types) and returns the graph.
    fn finish(self) -> Graph {
        check(self.name, self.g.build()).into_graph()
    }
}

/// The frontend's attributes for the pointwise operation `p`.
pub fn pointwise_attrs(p: &PointwiseParams) -> PointwiseAttrs {
    let mut a = PointwiseAttrs::new(p.mode);
    let optional = [
        (
            p.relu_lower_clip,
            PointwiseAttrs::relu_lower_clip as fn(_, _) -> _,
        ),
        (p.relu_upper_clip, PointwiseAttrs::relu_upper_clip),
        (
            p.relu_lower_clip_slope,
            PointwiseAttrs::relu_lower_clip_slope,
        ),
        (p.swish_beta, PointwiseAttrs::swish_beta),
        (p.elu_alpha, PointwiseAttrs::elu_alpha),
        (p.softplus_beta, PointwiseAttrs::softplus_beta),
    ];
    for (value, set) in optional {
        if let Some(v) = value {
            a = set(a, v);
        }
    }
    if let Some(axis) = p.axis {
        a = a.axis(axis);
    }
    a
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

    /// The frontend's attributes of this convolution, for node `node`.
    pub fn attrs(&self, node: &str) -> ConvAttrs {
        let v = |x: &[usize]| x.iter().map(|&u| to_i64(u)).collect::<Vec<_>>();
        let p = &self.params;
        ConvAttrs::new()
            .name(node)
            .pre_padding(v(&p.pre_padding))
            .post_padding(v(&p.post_padding))
            .stride(v(&p.stride))
            .dilation(v(&p.dilation))
            .mode(p.mode)
    }
}

/// Convolution forward: tensors `x`, `w`, `y`.
pub fn conv_fprop(spec: &ConvSpec, layout: &Layout, dtype: DataType) -> Graph {
    let mut b = Builder::new("conv_fprop", layout, dtype);
    let x = b.input("x", &spec.x_dims, DataType::Unset);
    let w = b.input("w", &spec.w_dims, DataType::Unset);
    let y = check(b.name, b.g.conv_fprop(x, w, spec.attrs("conv")));
    b.output(y, "y", DataType::Unset);
    b.finish()
}

/// Convolution → bias add → ReLU: tensors `x`, `w`, `bias` (`[1, K, 1, …]`), virtual
/// `conv_out`, `bias_out`, then `y`.
pub fn conv_bias_relu(spec: &ConvSpec, layout: &Layout, dtype: DataType) -> Graph {
    let mut b = Builder::new("conv_bias_relu", layout, dtype);
    let x = b.input("x", &spec.x_dims, DataType::Unset);
    let w = b.input("w", &spec.w_dims, DataType::Unset);
    let bias = b.input("bias", &spec.bias_dims(), DataType::Unset);
    let conv = check(b.name, b.g.conv_fprop(x, w, spec.attrs("conv")));
    b.intermediate(conv, "conv_out");
    let add = PointwiseParams::new(PointwiseMode::ADD);
    let biased = b.pointwise("bias", &add, &[conv, bias]);
    b.intermediate(biased, "bias_out");
    let y = b.pointwise(
        "relu",
        &PointwiseParams::new(PointwiseMode::RELU_FWD),
        &[biased],
    );
    b.output(y, "y", DataType::Unset);
    b.finish()
}

/// Convolution data gradient: tensors `dy`, `w`, `dx`.
pub fn conv_dgrad(spec: &ConvSpec, layout: &Layout, dtype: DataType) -> Graph {
    let mut b = Builder::new("conv_dgrad", layout, dtype);
    let dy = b.input("dy", &spec.y_dims(), DataType::Unset);
    let w = b.input("w", &spec.w_dims, DataType::Unset);
    let attrs = spec.attrs("dgrad").output_dims(spec.x_dims.clone());
    let dx = check(b.name, b.g.conv_dgrad(dy, w, attrs));
    b.output(dx, "dx", DataType::Unset);
    b.finish()
}

/// Convolution weight gradient: tensors `x`, `dy`, `dw`.
pub fn conv_wgrad(spec: &ConvSpec, layout: &Layout, dtype: DataType) -> Graph {
    let mut b = Builder::new("conv_wgrad", layout, dtype);
    let x = b.input("x", &spec.x_dims, DataType::Unset);
    let dy = b.input("dy", &spec.y_dims(), DataType::Unset);
    let attrs = spec.attrs("wgrad").output_dims(spec.w_dims.clone());
    let dw = check(b.name, b.g.conv_wgrad(x, dy, attrs));
    b.output(dw, "dw", DataType::Unset);
    b.finish()
}

/// `[1, C, 1, …]` for activation dims `x_dims`.
pub fn channel_dims(x_dims: &[i64]) -> Vec<i64> {
    let mut d = vec![1; x_dims.len()];
    d[1] = x_dims[1];
    d
}

/// Batch norm inference (`mean`, `inv_variance`), optionally followed by a ReLU:
/// tensors `x`, `mean`, `inv_variance`, `scale`, `bias`, then `y` (or, when `relu`,
/// virtual `bn_out`, then `y`).
pub fn batchnorm_inference(x_dims: &[i64], relu: bool, layout: &Layout, dtype: DataType) -> Graph {
    let name = if relu {
        "batchnorm_inference_relu"
    } else {
        "batchnorm_inference"
    };
    let mut b = Builder::new(name, layout, dtype);
    let c = channel_dims(x_dims);
    let x = b.input("x", x_dims, DataType::Unset);
    let [mean, inv, scale, bias] =
        ["mean", "inv_variance", "scale", "bias"].map(|n| b.input(n, &c, DataType::Float));
    let attrs = BatchnormInferenceAttrs::new().name("bn");
    let bn = check(
        b.name,
        b.g.batchnorm_inference(x, mean, inv, scale, bias, attrs),
    );
    if relu {
        b.intermediate(bn, "bn_out");
        let y = b.pointwise(
            "relu",
            &PointwiseParams::new(PointwiseMode::RELU_FWD),
            &[bn],
        );
        b.output(y, "y", DataType::Unset);
    } else {
        b.output(bn, "y", DataType::Unset);
    }
    b.finish()
}

/// Batch norm inference from a variance (`BatchnormInferenceAttributesVarianceExt`):
/// tensors `x`, `mean`, `variance`, `scale`, `bias`, the scalar `epsilon`, then `y`.
pub fn batchnorm_inference_variance(
    x_dims: &[i64],
    epsilon: f32,
    layout: &Layout,
    dtype: DataType,
) -> Graph {
    let mut b = Builder::new("batchnorm_inference_variance", layout, dtype);
    let c = channel_dims(x_dims);
    let x = b.input("x", x_dims, DataType::Unset);
    let [mean, var, scale, bias] =
        ["mean", "variance", "scale", "bias"].map(|n| b.input(n, &c, DataType::Float));
    let eps = b.scalar("epsilon", epsilon);
    let attrs = BatchnormInferenceVarianceAttrs::new(eps).name("bn");
    let y = check(
        b.name,
        b.g.batchnorm_inference_variance(x, mean, var, scale, bias, attrs),
    );
    b.output(y, "y", DataType::Unset);
    b.finish()
}

/// Batch norm training forward: tensors `x`, `scale`, `bias`, scalar `epsilon`; with
/// `momentum` also `prev_running_mean`, `prev_running_variance`, scalar `momentum`;
/// then outputs `y`, `mean`, `inv_variance` and, with `momentum`,
/// `next_running_mean`, `next_running_variance`.
pub fn batchnorm_training(
    x_dims: &[i64],
    epsilon: f32,
    momentum: Option<f32>,
    layout: &Layout,
    dtype: DataType,
) -> Graph {
    let mut b = Builder::new("batchnorm_training", layout, dtype);
    let c = channel_dims(x_dims);
    let x = b.input("x", x_dims, DataType::Unset);
    let scale = b.input("scale", &c, DataType::Float);
    let bias = b.input("bias", &c, DataType::Float);
    let eps = b.scalar("epsilon", epsilon);
    let mut attrs = BatchnormAttrs::new(eps).name("bn");
    if let Some(m) = momentum {
        let mean = b.input("prev_running_mean", &c, DataType::Float);
        let var = b.input("prev_running_variance", &c, DataType::Float);
        let m = b.scalar("momentum", m);
        attrs = attrs.running_stats(mean, var, m);
    }
    let out = check(b.name, b.g.batchnorm(x, scale, bias, attrs));
    b.output(out.y, "y", DataType::Unset);
    b.output(out.mean, "mean", DataType::Float);
    b.output(out.inv_variance, "inv_variance", DataType::Float);
    if let (Some(mean), Some(var)) = (out.next_running_mean, out.next_running_variance) {
        b.output(mean, "next_running_mean", DataType::Float);
        b.output(var, "next_running_variance", DataType::Float);
    }
    b.finish()
}

/// Batch norm backward from saved statistics: tensors `dy`, `x`, `mean`,
/// `inv_variance`, `scale`, then outputs `dx`, `dscale`, `dbias`.
pub fn batchnorm_backward(x_dims: &[i64], layout: &Layout, dtype: DataType) -> Graph {
    let mut b = Builder::new("batchnorm_backward", layout, dtype);
    let c = channel_dims(x_dims);
    let dy = b.input("dy", x_dims, DataType::Unset);
    let x = b.input("x", x_dims, DataType::Unset);
    let [mean, inv, scale] =
        ["mean", "inv_variance", "scale"].map(|n| b.input(n, &c, DataType::Float));
    let attrs = BatchnormBackwardAttrs::new()
        .name("bn_bwd")
        .saved_stats(mean, inv);
    let out = check(b.name, b.g.batchnorm_backward(dy, x, scale, attrs));
    b.output(out.dx, "dx", DataType::Unset);
    b.output(out.dscale, "dscale", DataType::Float);
    b.output(out.dbias, "dbias", DataType::Float);
    b.finish()
}

/// Convolution → ReLU (no bias): tensors `x`, `w`, virtual `conv_out`, then `y`.
pub fn conv_relu(spec: &ConvSpec, layout: &Layout, dtype: DataType) -> Graph {
    let mut b = Builder::new("conv_relu", layout, dtype);
    let x = b.input("x", &spec.x_dims, DataType::Unset);
    let w = b.input("w", &spec.w_dims, DataType::Unset);
    let conv = check(b.name, b.g.conv_fprop(x, w, spec.attrs("conv")));
    b.intermediate(conv, "conv_out");
    let y = b.pointwise(
        "relu",
        &PointwiseParams::new(PointwiseMode::RELU_FWD),
        &[conv],
    );
    b.output(y, "y", DataType::Unset);
    b.finish()
}

/// Batch norm training forward followed by an activation `act` on `y`: as
/// [`batchnorm_training`], with `y` virtual (`bn_out`) and the activation's output
/// `y`.
pub fn batchnorm_training_activation(
    x_dims: &[i64],
    epsilon: f32,
    momentum: Option<f32>,
    act: &PointwiseParams,
    layout: &Layout,
    dtype: DataType,
) -> Graph {
    let mut b = Builder::new("batchnorm_training_activation", layout, dtype);
    let c = channel_dims(x_dims);
    let x = b.input("x", x_dims, DataType::Unset);
    let scale = b.input("scale", &c, DataType::Float);
    let bias = b.input("bias", &c, DataType::Float);
    let eps = b.scalar("epsilon", epsilon);
    let mut attrs = BatchnormAttrs::new(eps).name("bn");
    if let Some(m) = momentum {
        let mean = b.input("prev_running_mean", &c, DataType::Float);
        let var = b.input("prev_running_variance", &c, DataType::Float);
        let m = b.scalar("momentum", m);
        attrs = attrs.running_stats(mean, var, m);
    }
    let out = check(b.name, b.g.batchnorm(x, scale, bias, attrs));
    b.intermediate(out.y, "bn_out");
    let y = b.pointwise("act", act, &[out.y]);
    b.output(y, "y", DataType::Unset);
    b.output(out.mean, "mean", DataType::Float);
    b.output(out.inv_variance, "inv_variance", DataType::Float);
    if let (Some(mean), Some(var)) = (out.next_running_mean, out.next_running_variance) {
        b.output(mean, "next_running_mean", DataType::Float);
        b.output(var, "next_running_variance", DataType::Float);
    }
    b.finish()
}

/// Batch norm backward through a ReLU: the forward output is recomputed by batch-norm
/// inference from the saved statistics (virtual `bn_out`), `RELU_BWD` takes it and the
/// incoming `dy` (virtual `dy_relu`), and batch-norm backward takes that. Tensors `dy`,
/// `x`, `mean`, `inv_variance`, `scale`, `bias`, then outputs `dx`, `dscale`, `dbias`.
pub fn batchnorm_backward_relu(x_dims: &[i64], layout: &Layout, dtype: DataType) -> Graph {
    let mut b = Builder::new("batchnorm_backward_relu", layout, dtype);
    let c = channel_dims(x_dims);
    let dy = b.input("dy", x_dims, DataType::Unset);
    let x = b.input("x", x_dims, DataType::Unset);
    let [mean, inv, scale, bias] =
        ["mean", "inv_variance", "scale", "bias"].map(|n| b.input(n, &c, DataType::Float));
    let fwd = check(
        b.name,
        b.g.batchnorm_inference(
            x,
            mean,
            inv,
            scale,
            bias,
            BatchnormInferenceAttrs::new().name("bn"),
        ),
    );
    b.intermediate(fwd, "bn_out");
    let drelu = b.pointwise(
        "relu_bwd",
        &PointwiseParams::new(PointwiseMode::RELU_BWD),
        &[fwd, dy],
    );
    b.intermediate(drelu, "dy_relu");
    let attrs = BatchnormBackwardAttrs::new()
        .name("bn_bwd")
        .saved_stats(mean, inv);
    let out = check(b.name, b.g.batchnorm_backward(drelu, x, scale, attrs));
    b.output(out.dx, "dx", DataType::Unset);
    b.output(out.dscale, "dscale", DataType::Float);
    b.output(out.dbias, "dbias", DataType::Float);
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
    let mut b = Builder::new("matmul", layout, dtype);
    let a = b.input("a", a_dims, DataType::Unset);
    let bb = b.input("b", b_dims, DataType::Unset);
    let c = check(b.name, b.g.matmul(a, bb, MatmulAttrs::new().name("matmul")));
    b.output(c, "c", DataType::Unset);
    b.finish()
}

/// Matmul → bias add → GELU (erf form): tensors `a`, `b`, `bias` (`[1, …, 1, N]`),
/// virtual `mm_out`, `bias_out`, then `y`.
pub fn matmul_bias_gelu(a_dims: &[i64], b_dims: &[i64], layout: &Layout, dtype: DataType) -> Graph {
    let mut b = Builder::new("matmul_bias_gelu", layout, dtype);
    let c_dims = matmul_dims(a_dims, b_dims);
    let mut bias_dims = vec![1; c_dims.len()];
    *bias_dims.last_mut().expect("rank ≥ 2") = *c_dims.last().expect("rank ≥ 2");
    let a = b.input("a", a_dims, DataType::Unset);
    let bb = b.input("b", b_dims, DataType::Unset);
    let bias = b.input("bias", &bias_dims, DataType::Unset);
    let mm = check(b.name, b.g.matmul(a, bb, MatmulAttrs::new().name("matmul")));
    b.intermediate(mm, "mm_out");
    let biased = b.pointwise(
        "bias",
        &PointwiseParams::new(PointwiseMode::ADD),
        &[mm, bias],
    );
    b.intermediate(biased, "bias_out");
    let gelu = PointwiseParams::new(PointwiseMode::GELU_FWD);
    let y = b.pointwise("gelu", &gelu, &[biased]);
    b.output(y, "y", DataType::Unset);
    b.finish()
}

/// A single pointwise node: inputs `in_0`, `in_1`, `in_2` (as many as `input_dims`),
/// output `out`.
///
/// # Panics
/// If `out_dims` is not the broadcast of the input dims.
pub fn pointwise(
    p: &PointwiseParams,
    input_dims: &[Vec<i64>],
    out_dims: &[i64],
    layout: &Layout,
    dtype: DataType,
) -> Graph {
    let mut b = Builder::new("pointwise", layout, dtype);
    let ins: Vec<Tensor> = input_dims
        .iter()
        .enumerate()
        .map(|(i, d)| b.input(&format!("in_{i}"), d, DataType::Unset))
        .collect();
    let out = b.pointwise("pointwise", p, &ins);
    let inferred = check(b.name, b.g.tensor_info(out)).dims().to_vec();
    assert_eq!(
        inferred, out_dims,
        "pointwise output dims of {input_dims:?}"
    );
    b.output(out, "out", DataType::Unset);
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
    let mut b = Builder::new("reduction", layout, dtype);
    let i = b.input("in", in_dims, DataType::Unset);
    let attrs = ReductionAttrs::new(mode)
        .name("reduce")
        .output_dims(out_dims.to_vec());
    let o = check(b.name, b.g.reduction(i, attrs));
    b.output(o, "out", DataType::Unset);
    b.finish()
}

/// Pooling (resample forward) of `x` with `window`, `stride` and padding (`pad`: pre
/// and post per spatial dim): tensors `x`, then output `y`.
pub fn resample_fwd(
    mode: ResampleMode,
    x_dims: &[i64],
    [window, stride, pre, post]: [&[i64]; 4],
    layout: &Layout,
    dtype: DataType,
) -> Graph {
    let mut b = Builder::new("resample_fwd", layout, dtype);
    let x = b.input("x", x_dims, DataType::Unset);
    let attrs = ResampleAttrs::new(mode, window.to_vec())
        .name("pool")
        .stride(stride.to_vec())
        .pre_padding(pre.to_vec())
        .post_padding(post.to_vec());
    let y = check(b.name, b.g.resample_fwd(x, attrs));
    b.output(y, "y", DataType::Unset);
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

fn phase(training: bool) -> NormFwdPhase {
    if training {
        NormFwdPhase::TRAINING
    } else {
        NormFwdPhase::INFERENCE
    }
}

/// Layer norm forward over the trailing `normalized_dims` dims: tensors `x`, `scale`,
/// `bias`, scalar `epsilon`, then output `y`; when `training`, also outputs `mean` and
/// `inv_variance` (`FLOAT`).
pub fn layernorm(
    x_dims: &[i64],
    normalized_dims: usize,
    epsilon: f32,
    training: bool,
    layout: &Layout,
    dtype: DataType,
) -> Graph {
    let mut b = Builder::new("layernorm", layout, dtype);
    let (param, _) = norm_dims(x_dims, normalized_dims);
    let x = b.input("x", x_dims, DataType::Unset);
    let scale = b.input("scale", &param, DataType::Float);
    let bias = b.input("bias", &param, DataType::Float);
    let eps = b.scalar("epsilon", epsilon);
    let attrs = LayernormAttrs::new(eps)
        .name("layernorm")
        .normalized_dims(to_i64(normalized_dims))
        .phase(phase(training));
    let out = check(b.name, b.g.layernorm(x, scale, bias, attrs));
    b.output(out.y, "y", DataType::Unset);
    if let (Some(mean), Some(inv)) = (out.mean, out.inv_variance) {
        b.output(mean, "mean", DataType::Float);
        b.output(inv, "inv_variance", DataType::Float);
    }
    b.finish()
}

/// RMS norm forward over every dim but the batch: tensors `x`, `scale`, optional
/// `bias`, scalar `epsilon`, then output `y`; when `training`, also output `inv_rms`.
pub fn rmsnorm(
    x_dims: &[i64],
    epsilon: f32,
    with_bias: bool,
    training: bool,
    layout: &Layout,
    dtype: DataType,
) -> Graph {
    let mut b = Builder::new("rmsnorm", layout, dtype);
    let (param, _) = norm_dims(x_dims, x_dims.len() - 1);
    let x = b.input("x", x_dims, DataType::Unset);
    let scale = b.input("scale", &param, DataType::Float);
    let bias = with_bias.then(|| b.input("bias", &param, DataType::Float));
    let eps = b.scalar("epsilon", epsilon);
    let mut attrs = RmsnormAttrs::new(eps)
        .name("rmsnorm")
        .phase(phase(training));
    if let Some(bias) = bias {
        attrs = attrs.bias(bias);
    }
    let out = check(b.name, b.g.rmsnorm(x, scale, attrs));
    b.output(out.y, "y", DataType::Unset);
    if let Some(inv_rms) = out.inv_rms {
        b.output(inv_rms, "inv_rms", DataType::Float);
    }
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
