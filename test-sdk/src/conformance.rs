//! The provider conformance suite: one list of cases, run against any [`Provider`].
//!
//! A [`Case`] is data: an [`Op`] with its shapes and attributes, a [`Layout`] and an
//! I/O [`DataType`]. For each case the suite builds the graph ([`crate::graphs`]),
//! draws seeded inputs rounded to each tensor's type ([`crate::data`]), computes the
//! expected outputs with the references ([`crate::reference`]), hands the graph and
//! the buffers to the provider, and compares what it wrote under the op's tolerance
//! ([`crate::tolerance`]) plus one unit in the last place of the output type.
//!
//! # Running a provider
//!
//! ```
//! use std::collections::BTreeMap;
//! use hipdnn_flatbuffers_sdk::model::Graph;
//! use hipdnn_test_sdk::conformance::{run_suite, Provider, SkipList};
//! use hipdnn_test_sdk::executor::execute_graph;
//!
//! struct MyProvider;
//! impl Provider for MyProvider {
//!     fn name(&self) -> &str { "mine" }
//!     fn execute(&self, graph: &Graph, buffers: &mut BTreeMap<i64, Vec<u8>>) -> Result<(), String> {
//!         if graph.name == "matmul" {
//!             return Err("no matmul yet".into());
//!         }
//!         execute_graph(graph, buffers) // a real provider runs its own kernels here
//!     }
//! }
//!
//! let skips = SkipList::new()
//!     .pattern("matmul/*", "matmul kernels are not written yet")
//!     .predicate("3-D convolutions need NCDHW support", |c| c.name.contains("/3d_"));
//! let report = run_suite(&MyProvider, &skips);
//! report.print_summary();
//! report.assert_passed();
//! ```
//!
//! # Buffers
//!
//! `buffers` maps the uid of every non-virtual tensor that is not a pass-by-value
//! scalar to its bytes: the tensor's data type, little-endian, laid out by its strides
//! (element at offset `o` occupies bytes `o·size .. (o+1)·size`). Inputs hold the
//! data; outputs are pre-allocated and filled with `0xFF` bytes (NaN in every float
//! type), so an output the provider does not write fails. A provider must not resize
//! buffers or change inputs.
//!
//! # Outcomes
//!
//! A case is skipped when a [`SkipList`] rule matches it (the reason is reported);
//! otherwise it fails when the provider returns an error, panics, changes an input,
//! or writes an output outside tolerance, and passes otherwise. Skips are reported as
//! skips, never counted as passes.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::io::Write;
use std::panic::{AssertUnwindSafe, catch_unwind};

use hipdnn_data_sdk::DataType;
use hipdnn_flatbuffers_sdk::model::Graph;
use hipdnn_flatbuffers_sdk::wire::{ConvMode, PointwiseMode, ReductionMode};

use crate::data::{DataGen, decode, encode, round_to, test_seed};
use crate::graphs::{self, ConvSpec, Layout, uid_of};
use crate::reference::{self, PointwiseParams, ReferenceError, RunningStats};
use crate::tensor::{HostTensor, dims_usize};
use crate::tolerance::{OpFamily, Tolerance, compare_rounded, tolerance};

/// Something that executes graphs: a plugin, an engine, or the references.
pub trait Provider {
    /// Name used in reports.
    fn name(&self) -> &str;

    /// Runs `graph`, reading inputs from and writing outputs into `buffers` (see the
    /// [module docs](self)). An `Err` (e.g. "not applicable") fails the case unless a
    /// skip rule covers it.
    ///
    /// # Errors
    /// Whatever the provider cannot do, in its own words.
    fn execute(&self, graph: &Graph, buffers: &mut BTreeMap<i64, Vec<u8>>) -> Result<(), String>;
}

/// An operation under test, with its shapes and attributes.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    /// Convolution forward.
    ConvFprop(ConvSpec),
    /// Convolution → bias → ReLU.
    ConvBiasRelu(ConvSpec),
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
    /// Batch norm backward from saved statistics.
    BatchnormBackward {
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
            Op::ConvDgrad(_) => "conv_dgrad",
            Op::ConvWgrad(_) => "conv_wgrad",
            Op::BatchnormInference { relu: false, .. } => "batchnorm_inference",
            Op::BatchnormInference { relu: true, .. } => "batchnorm_inference_relu",
            Op::BatchnormInferenceVariance { .. } => "batchnorm_inference_variance",
            Op::BatchnormTraining { .. } => "batchnorm_training",
            Op::BatchnormBackward { .. } => "batchnorm_backward",
            Op::Matmul { .. } => "matmul",
            Op::MatmulBiasGelu { .. } => "matmul_bias_gelu",
            Op::Pointwise { .. } => "pointwise",
            Op::Reduction { .. } => "reduction",
            Op::Layernorm { .. } => "layernorm",
            Op::Rmsnorm { .. } => "rmsnorm",
        }
    }

    /// The tolerance table the op's outputs are checked with.
    pub fn family(&self) -> OpFamily {
        match self {
            Op::ConvFprop(_) | Op::ConvBiasRelu(_) => OpFamily::ConvFprop,
            Op::ConvDgrad(_) => OpFamily::ConvDgrad,
            Op::ConvWgrad(_) => OpFamily::ConvWgrad,
            Op::BatchnormInference { .. } => OpFamily::BatchnormInference,
            Op::BatchnormInferenceVariance { .. } => OpFamily::BatchnormInferenceVariance,
            Op::BatchnormTraining { .. } => OpFamily::BatchnormTraining,
            Op::BatchnormBackward { .. } => OpFamily::BatchnormBackward,
            Op::Matmul { .. } | Op::MatmulBiasGelu { .. } => OpFamily::Matmul,
            Op::Pointwise { .. } => OpFamily::Pointwise,
            Op::Reduction { .. } => OpFamily::Reduction,
            Op::Layernorm { .. } => OpFamily::Layernorm,
            Op::Rmsnorm { .. } => OpFamily::Rmsnorm,
        }
    }

    /// The graph of this op.
    pub fn graph(&self, layout: &Layout, dtype: DataType) -> Graph {
        match self {
            Op::ConvFprop(s) => graphs::conv_fprop(s, layout, dtype),
            Op::ConvBiasRelu(s) => graphs::conv_bias_relu(s, layout, dtype),
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
            Op::BatchnormBackward { x_dims } => graphs::batchnorm_backward(x_dims, layout, dtype),
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

    /// How the input tensor called `name` is drawn.
    fn distribution(&self, name: &str) -> Dist {
        use PointwiseMode as M;
        match (self, name) {
            (_, "inv_variance" | "variance" | "prev_running_variance") => Dist::Uniform(0.5, 2.0),
            (_, "scale") => Dist::Uniform(0.5, 1.5),
            (_, "mean" | "prev_running_mean") => Dist::Uniform(-0.5, 0.5),
            (Op::Pointwise { params, .. }, _) => match (params.mode, name) {
                (M::LOG | M::SQRT | M::RSQRT | M::RECIPROCAL, "in_0") | (M::DIV, "in_1") => {
                    Dist::Uniform(0.5, 2.0)
                }
                (M::LOGICAL_AND | M::LOGICAL_OR | M::LOGICAL_NOT, _)
                | (M::BINARY_SELECT, "in_2") => Dist::Bool,
                (M::CMP_EQ | M::CMP_GE | M::CMP_GT | M::CMP_LE | M::CMP_LT | M::CMP_NEQ, _) => {
                    Dist::Grid
                }
                _ => Dist::Uniform(-2.0, 2.0),
            },
            (Op::Reduction { mode, .. }, _) => match *mode {
                ReductionMode::MUL => Dist::Uniform(0.5, 1.5),
                ReductionMode::MUL_NO_ZEROS => Dist::SparseUniform(0.5, 1.5),
                _ => Dist::Uniform(-1.0, 1.0),
            },
            _ => Dist::Uniform(-1.0, 1.0),
        }
    }
}

/// How an input is drawn.
#[derive(Debug, Clone, Copy)]
enum Dist {
    Uniform(f32, f32),
    /// 0 or 1.
    Bool,
    /// One of −1, −0.5, 0, 0.5, 1 (so comparisons see ties).
    Grid,
    /// Uniform, with about a quarter of the values 0.
    SparseUniform(f32, f32),
}

impl Dist {
    fn draw(self, g: &mut DataGen, dtype: DataType) -> f32 {
        let v = match self {
            Dist::Uniform(lo, hi) => g.uniform(lo, hi),
            Dist::Bool => g.uniform(0.0, 2.0).floor(),
            Dist::Grid => (g.uniform(0.0, 5.0).floor() - 2.0) / 2.0,
            Dist::SparseUniform(lo, hi) => {
                if g.uniform(0.0, 1.0) < 0.25 {
                    0.0
                } else {
                    g.uniform(lo, hi)
                }
            }
        };
        round_to(dtype, v)
    }
}

/// One conformance case.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    /// `"<op kind>/<shape tag>/<fp32|fp16|bf16>/<nchw|nhwc|strided>"`, unique in
    /// [`standard_cases`].
    pub name: String,
    /// What runs.
    pub op: Op,
    /// Memory layout of the dense tensors.
    pub layout: Layout,
    /// I/O data type.
    pub dtype: DataType,
}

/// Short name of a data type in case names.
pub fn dtype_tag(dtype: DataType) -> String {
    match dtype {
        DataType::Float => "fp32".into(),
        DataType::Half => "fp16".into(),
        DataType::Bfloat16 => "bf16".into(),
        other => other.name().to_ascii_lowercase(),
    }
}

/// A case's inputs, expected outputs and buffers, ready to hand to a provider.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The graph, validated.
    pub graph: Graph,
    /// Input values by uid (already rounded to each tensor's type).
    pub inputs: BTreeMap<i64, HostTensor>,
    /// Expected outputs by uid, rounded to each output's type.
    pub expected: BTreeMap<i64, HostTensor>,
    /// Every buffer: inputs encoded, outputs filled with `0xFF`.
    pub buffers: BTreeMap<i64, Vec<u8>>,
}

impl Case {
    /// A case named `"<op kind>/<tag>/<dtype>/<layout>"`.
    pub fn new(tag: &str, op: Op, layout: Layout, dtype: DataType) -> Self {
        Self {
            name: format!("{}/{tag}/{}/{}", op.kind(), dtype_tag(dtype), layout.tag()),
            op,
            layout,
            dtype,
        }
    }

    /// The graph the provider receives.
    pub fn graph(&self) -> Graph {
        self.op.graph(&self.layout, self.dtype)
    }

    /// Tolerance for an output of type `dtype`.
    pub fn tolerance(&self, dtype: DataType) -> Tolerance {
        tolerance(self.op.family(), dtype)
    }

    /// Builds the graph, draws the inputs from the case's own stream under `seed`
    /// ([`DataGen::for_case`]) and computes the expected outputs.
    ///
    /// # Errors
    /// When the references cannot compute the case (a bad case definition).
    pub fn prepare(&self, seed: u64) -> Result<Prepared, ReferenceError> {
        let graph = self.graph();
        let mut dg = DataGen::for_case(seed, &self.name);
        let written: BTreeSet<i64> = {
            let (mut ins, mut outs) = (Vec::new(), Vec::new());
            for n in &graph.nodes {
                n.attributes.tensor_uids(&mut ins, &mut outs);
            }
            outs.into_iter().collect()
        };
        let mut inputs = BTreeMap::new();
        let mut buffers = BTreeMap::new();
        for t in &graph.tensors {
            if t.is_virtual || t.value.is_some() {
                continue;
            }
            let mut h = HostTensor::zeros(dims_usize(&t.dims), dims_usize(&t.strides));
            if written.contains(&t.uid) {
                buffers.insert(t.uid, vec![0xFF; encode_len(t.data_type, &h)]);
            } else {
                let dist = self.op.distribution(&t.name);
                h.map_inplace(|_| dist.draw(&mut dg, t.data_type));
                buffers.insert(
                    t.uid,
                    encode(t.data_type, &h).expect("conformance types are encodable"),
                );
                inputs.insert(t.uid, h);
            }
        }
        let mut expected = self.reference(&graph, &inputs)?;
        for (uid, h) in &mut expected {
            let t = tensor_attrs(&graph, *uid);
            let dt = t.data_type;
            h.map_inplace(|v| round_to(dt, v));
        }
        Ok(Prepared {
            graph,
            inputs,
            expected,
            buffers,
        })
    }

    /// The expected value of every output tensor, by uid, computed op by op with the
    /// references (independently of [`crate::executor`]).
    fn reference(
        &self,
        graph: &Graph,
        inputs: &BTreeMap<i64, HostTensor>,
    ) -> Result<BTreeMap<i64, HostTensor>, ReferenceError> {
        let get = |name: &str| &inputs[&uid_of(graph, name)];
        let out = |name: &str| {
            let t = tensor_attrs(graph, uid_of(graph, name));
            HostTensor::zeros(dims_usize(&t.dims), dims_usize(&t.strides))
        };
        let per_channel = |name: &str, values: &[f32]| {
            let mut t = out(name);
            let mut it = values.iter();
            t.map_inplace(|_| *it.next().expect("one value per channel"));
            (uid_of(graph, name), t)
        };
        let mut results = BTreeMap::new();
        let mut put = |name: &str, t: HostTensor| {
            results.insert(uid_of(graph, name), t);
        };
        match &self.op {
            Op::ConvFprop(s) => {
                let mut y = out("y");
                reference::conv_fprop(get("x"), get("w"), &mut y, &s.params)?;
                put("y", y);
            }
            Op::ConvBiasRelu(s) => {
                let mut conv = HostTensor::packed(dims_usize(&s.y_dims()));
                reference::conv_fprop(get("x"), get("w"), &mut conv, &s.params)?;
                let mut biased = HostTensor::packed(conv.dims.clone());
                let add = PointwiseParams::new(PointwiseMode::ADD);
                reference::pointwise(&add, &[&conv, get("bias")], &mut biased)?;
                let mut y = out("y");
                let relu = PointwiseParams::new(PointwiseMode::RELU_FWD);
                reference::pointwise(&relu, &[&biased], &mut y)?;
                put("y", y);
            }
            Op::ConvDgrad(s) => {
                let mut dx = out("dx");
                reference::conv_dgrad(get("dy"), get("w"), &mut dx, &s.params)?;
                put("dx", dx);
            }
            Op::ConvWgrad(s) => {
                let mut dw = out("dw");
                reference::conv_wgrad(get("x"), get("dy"), &mut dw, &s.params)?;
                put("dw", dw);
            }
            Op::BatchnormInference { relu, .. } => {
                let mut y = out("y");
                reference::batchnorm_inference(
                    get("x"),
                    get("mean"),
                    get("inv_variance"),
                    get("scale"),
                    get("bias"),
                    &mut y,
                )?;
                if *relu {
                    y.map_inplace(|v| v.max(0.0));
                }
                put("y", y);
            }
            Op::BatchnormInferenceVariance { epsilon, .. } => {
                let mut y = out("y");
                reference::batchnorm_inference_variance(
                    get("x"),
                    get("mean"),
                    get("variance"),
                    get("scale"),
                    get("bias"),
                    *epsilon,
                    &mut y,
                )?;
                put("y", y);
            }
            Op::BatchnormTraining {
                epsilon, momentum, ..
            } => {
                let running = momentum.map(|m| RunningStats {
                    mean: get("prev_running_mean"),
                    variance: get("prev_running_variance"),
                    momentum: m,
                });
                let mut y = out("y");
                let s = reference::batchnorm_training(
                    get("x"),
                    get("scale"),
                    get("bias"),
                    *epsilon,
                    running,
                    &mut y,
                )?;
                put("y", y);
                let (u, t) = per_channel("mean", &s.mean);
                results.insert(u, t);
                let (u, t) = per_channel("inv_variance", &s.inv_variance);
                results.insert(u, t);
                if let (Some(m), Some(v)) = (&s.next_running_mean, &s.next_running_variance) {
                    let (u, t) = per_channel("next_running_mean", m);
                    results.insert(u, t);
                    let (u, t) = per_channel("next_running_variance", v);
                    results.insert(u, t);
                }
            }
            Op::BatchnormBackward { .. } => {
                let mut dx = out("dx");
                let g = reference::batchnorm_backward(
                    get("dy"),
                    get("x"),
                    get("mean"),
                    get("inv_variance"),
                    get("scale"),
                    &mut dx,
                )?;
                put("dx", dx);
                let (u, t) = per_channel("dscale", &g.dscale);
                results.insert(u, t);
                let (u, t) = per_channel("dbias", &g.dbias);
                results.insert(u, t);
            }
            Op::Matmul { .. } => {
                let mut c = out("c");
                reference::matmul(get("a"), get("b"), &mut c)?;
                put("c", c);
            }
            Op::MatmulBiasGelu { a_dims, b_dims } => {
                let mut mm = HostTensor::packed(dims_usize(&graphs::matmul_dims(a_dims, b_dims)));
                reference::matmul(get("a"), get("b"), &mut mm)?;
                let mut biased = HostTensor::packed(mm.dims.clone());
                let add = PointwiseParams::new(PointwiseMode::ADD);
                reference::pointwise(&add, &[&mm, get("bias")], &mut biased)?;
                let mut y = out("y");
                let gelu = PointwiseParams::new(PointwiseMode::GELU_FWD);
                reference::pointwise(&gelu, &[&biased], &mut y)?;
                put("y", y);
            }
            Op::Pointwise {
                params, input_dims, ..
            } => {
                let ins: Vec<&HostTensor> = (0..input_dims.len())
                    .map(|i| get(&format!("in_{i}")))
                    .collect();
                let mut o = out("out");
                reference::pointwise(params, &ins, &mut o)?;
                put("out", o);
            }
            Op::Reduction { mode, .. } => {
                let mut o = out("out");
                reference::reduction(*mode, get("in"), &mut o)?;
                put("out", o);
            }
            Op::Layernorm {
                normalized_dims,
                epsilon,
                training,
                ..
            } => {
                let mut y = out("y");
                let s = reference::layernorm(
                    get("x"),
                    get("scale"),
                    get("bias"),
                    *epsilon,
                    *normalized_dims,
                    &mut y,
                )?;
                put("y", y);
                if *training {
                    let (u, t) = per_channel("mean", &s.mean);
                    results.insert(u, t);
                    let (u, t) = per_channel("inv_variance", &s.inv);
                    results.insert(u, t);
                }
            }
            Op::Rmsnorm {
                x_dims,
                epsilon,
                bias,
                training,
            } => {
                let mut y = out("y");
                let b = bias.then(|| get("bias"));
                let s = reference::rmsnorm(
                    get("x"),
                    get("scale"),
                    b,
                    *epsilon,
                    x_dims.len() - 1,
                    &mut y,
                )?;
                put("y", y);
                if *training {
                    let (u, t) = per_channel("inv_rms", &s.inv);
                    results.insert(u, t);
                }
            }
        }
        Ok(results)
    }
}

fn tensor_attrs(graph: &Graph, uid: i64) -> &hipdnn_flatbuffers_sdk::model::TensorAttributes {
    graph
        .tensors
        .iter()
        .find(|t| t.uid == uid)
        .expect("uid from the same graph")
}

fn encode_len(dtype: DataType, h: &HostTensor) -> usize {
    h.data.len() * crate::data::element_size(dtype).expect("conformance types are encodable")
}

const DTYPES: [DataType; 3] = [DataType::Float, DataType::Half, DataType::Bfloat16];

fn push_all(cases: &mut Vec<Case>, tag: &str, op: &Op) {
    for dtype in DTYPES {
        for layout in [Layout::Nchw, Layout::Nhwc] {
            cases.push(Case::new(tag, op.clone(), layout, dtype));
        }
    }
}

/// The convolution shapes of the suite, by tag.
pub fn conv_shapes() -> Vec<(&'static str, ConvSpec)> {
    let asym = ConvSpec::new(&[1, 3, 6, 7], &[2, 3, 2, 2]).with(|mut p| {
        p.pre_padding = vec![0, 1];
        p.post_padding = vec![1, 0];
        p
    });
    vec![
        (
            "3x3_pad1",
            ConvSpec::new(&[2, 4, 8, 8], &[6, 4, 3, 3]).with(|p| p.padding(1)),
        ),
        (
            "3x3_stride2_pad1",
            ConvSpec::new(&[1, 3, 9, 9], &[4, 3, 3, 3]).with(|p| p.padding(1).stride(2)),
        ),
        (
            "3x3_dilation2",
            ConvSpec::new(&[1, 2, 9, 9], &[3, 2, 3, 3]).with(|p| p.padding(2).dilation(2)),
        ),
        ("2x2_asym_pad", asym),
        (
            "groups2",
            ConvSpec::new(&[1, 4, 6, 6], &[6, 2, 3, 3]).with(|p| p.padding(1)),
        ),
        (
            "depthwise",
            ConvSpec::new(&[1, 4, 6, 6], &[4, 1, 3, 3]).with(|p| p.padding(1)),
        ),
        (
            "1d_k3_stride2",
            ConvSpec::new(&[2, 3, 10], &[4, 3, 3]).with(|p| p.padding(1).stride(2)),
        ),
        (
            "3d_3x3x3",
            ConvSpec::new(&[1, 2, 4, 5, 5], &[3, 2, 3, 3, 3]).with(|p| p.padding(1)),
        ),
        ("1x1", ConvSpec::new(&[2, 8, 5, 5], &[4, 8, 1, 1])),
        (
            "convolution_mode",
            ConvSpec::new(&[1, 2, 5, 5], &[3, 2, 3, 3]).with(|p| p.mode(ConvMode::CONVOLUTION)),
        ),
    ]
}

/// Every pointwise variant of the suite: `(tag, params, input dims)` on a
/// `[2, 3, 4, 4]` output. Binary forward modes broadcast `in_1` from `[1, 3, 1, 1]`;
/// backward modes take a full-size `dy`.
pub fn pointwise_variants() -> Vec<(String, PointwiseParams, Vec<Vec<i64>>)> {
    use PointwiseMode as M;
    let full = vec![2, 3, 4, 4];
    let chan = vec![1, 3, 1, 1];
    let mut out = Vec::new();
    for v in 1..=M::ENUM_MAX {
        let mode = M(v);
        let Some(name) = mode.variant_name() else {
            continue;
        };
        let Ok(arity) = reference::pointwise_arity(mode) else {
            continue;
        };
        let mut p = PointwiseParams::new(mode);
        if mode == M::GEN_INDEX {
            p.axis = Some(2);
        }
        let is_bwd = name.ends_with("_BWD");
        let dims = match arity {
            1 => vec![full.clone()],
            2 if is_bwd => vec![full.clone(), full.clone()],
            2 => vec![full.clone(), chan.clone()],
            _ => vec![full.clone(), chan.clone(), full.clone()],
        };
        out.push((name.to_ascii_lowercase(), p, dims));
    }
    let with = |tag: &str, mode, f: &dyn Fn(&mut PointwiseParams)| {
        let mut p = PointwiseParams::new(mode);
        f(&mut p);
        let dims = if mode == M::RELU_BWD {
            vec![full.clone(), full.clone()]
        } else {
            vec![full.clone()]
        };
        (tag.to_owned(), p, dims)
    };
    out.push(with("relu_fwd_clipped", M::RELU_FWD, &|p| {
        p.relu_lower_clip = Some(-0.5);
        p.relu_upper_clip = Some(0.5);
    }));
    out.push(with("relu_fwd_leaky", M::RELU_FWD, &|p| {
        p.relu_lower_clip_slope = Some(0.1)
    }));
    out.push(with("relu_bwd_clipped_leaky", M::RELU_BWD, &|p| {
        p.relu_upper_clip = Some(1.0);
        p.relu_lower_clip_slope = Some(0.1);
    }));
    out.push(with("swish_fwd_beta1.5", M::SWISH_FWD, &|p| {
        p.swish_beta = Some(1.5)
    }));
    out.push(with("elu_fwd_alpha0.5", M::ELU_FWD, &|p| {
        p.elu_alpha = Some(0.5)
    }));
    out.push(with("softplus_fwd_beta2", M::SOFTPLUS_FWD, &|p| {
        p.softplus_beta = Some(2.0)
    }));
    out
}

/// The standard cases: every op × fp32/fp16/bf16 × NCHW/NHWC, the convolution shapes
/// of [`conv_shapes`] for fprop, dgrad and wgrad, every pointwise mode, every
/// reduction mode, batched and broadcast matmuls, the fused chains, and a few cases
/// with padded (non-packed) strides.
pub fn standard_cases() -> Vec<Case> {
    let mut cases = Vec::new();
    let c = &mut cases;
    for (tag, spec) in conv_shapes() {
        push_all(c, tag, &Op::ConvFprop(spec.clone()));
        push_all(c, tag, &Op::ConvDgrad(spec.clone()));
        push_all(c, tag, &Op::ConvWgrad(spec));
    }
    for (tag, spec) in conv_shapes() {
        if matches!(tag, "3x3_pad1" | "groups2" | "3x3_stride2_pad1") {
            push_all(c, tag, &Op::ConvBiasRelu(spec));
        }
    }
    for (tag, x_dims) in [
        ("2x4x5x5", vec![2, 4, 5, 5]),
        ("3d_1x3x3x4x4", vec![1, 3, 3, 4, 4]),
    ] {
        for relu in [false, true] {
            push_all(
                c,
                tag,
                &Op::BatchnormInference {
                    x_dims: x_dims.clone(),
                    relu,
                },
            );
        }
        push_all(
            c,
            tag,
            &Op::BatchnormInferenceVariance {
                x_dims: x_dims.clone(),
                epsilon: 1e-5,
            },
        );
    }
    for (tag, x_dims) in [("2x4x5x5", vec![2, 4, 5, 5]), ("4x3x3x3", vec![4, 3, 3, 3])] {
        push_all(
            c,
            tag,
            &Op::BatchnormTraining {
                x_dims: x_dims.clone(),
                epsilon: 1e-5,
                momentum: None,
            },
        );
        push_all(
            c,
            &format!("{tag}_running"),
            &Op::BatchnormTraining {
                x_dims: x_dims.clone(),
                epsilon: 1e-5,
                momentum: Some(0.1),
            },
        );
        push_all(c, tag, &Op::BatchnormBackward { x_dims });
    }
    for (tag, a, b) in [
        ("2d_4x5x3", vec![4, 5], vec![5, 3]),
        ("batched_2x4x5x3", vec![2, 4, 5], vec![2, 5, 3]),
        ("broadcast_2x1_1x3", vec![2, 1, 4, 5], vec![1, 3, 5, 6]),
        ("broadcast_b_batch1", vec![3, 4, 5], vec![1, 5, 2]),
        ("rank4_by_rank2", vec![2, 3, 4, 5], vec![5, 6]),
    ] {
        push_all(
            c,
            tag,
            &Op::Matmul {
                a_dims: a,
                b_dims: b,
            },
        );
    }
    push_all(
        c,
        "2x8x16x4",
        &Op::MatmulBiasGelu {
            a_dims: vec![2, 8, 16],
            b_dims: vec![2, 16, 4],
        },
    );
    for (tag, params, input_dims) in pointwise_variants() {
        push_all(
            c,
            &tag,
            &Op::Pointwise {
                params,
                input_dims,
                out_dims: vec![2, 3, 4, 4],
            },
        );
    }
    for v in 1..=ReductionMode::ENUM_MAX {
        let mode = ReductionMode(v);
        let tag = format!(
            "{}_spatial",
            mode.variant_name()
                .unwrap_or("unknown")
                .to_ascii_lowercase()
        );
        push_all(
            c,
            &tag,
            &Op::Reduction {
                mode,
                in_dims: vec![2, 3, 4, 4],
                out_dims: vec![2, 3, 1, 1],
            },
        );
    }
    push_all(
        c,
        "add_per_channel",
        &Op::Reduction {
            mode: ReductionMode::ADD,
            in_dims: vec![2, 3, 4, 4],
            out_dims: vec![1, 3, 1, 1],
        },
    );
    push_all(
        c,
        "max_op_all",
        &Op::Reduction {
            mode: ReductionMode::MAX_OP,
            in_dims: vec![2, 3, 4, 4],
            out_dims: vec![1, 1, 1, 1],
        },
    );
    push_all(
        c,
        "2x3x4x4_chw_training",
        &Op::Layernorm {
            x_dims: vec![2, 3, 4, 4],
            normalized_dims: 3,
            epsilon: 1e-5,
            training: true,
        },
    );
    push_all(
        c,
        "4x3x16_last_inference",
        &Op::Layernorm {
            x_dims: vec![4, 3, 16],
            normalized_dims: 1,
            epsilon: 1e-5,
            training: false,
        },
    );
    push_all(
        c,
        "2x3x4x4_bias_training",
        &Op::Rmsnorm {
            x_dims: vec![2, 3, 4, 4],
            epsilon: 1e-5,
            bias: true,
            training: true,
        },
    );
    push_all(
        c,
        "4x16_inference",
        &Op::Rmsnorm {
            x_dims: vec![4, 16],
            epsilon: 1e-5,
            bias: false,
            training: false,
        },
    );
    // Padded strides: rows of x and y padded to a pitch wider than the image.
    for dtype in DTYPES {
        let spec = &conv_shapes()[0].1;
        let layout = Layout::Explicit(vec![
            ("x".into(), vec![4 * 8 * 10, 8 * 10, 10, 1]),
            ("y".into(), vec![6 * 8 * 9, 8 * 9, 9, 1]),
        ]);
        cases.push(Case::new(
            "3x3_pad1",
            Op::ConvFprop(spec.clone()),
            layout,
            dtype,
        ));
        let layout = Layout::Explicit(vec![
            ("in_0".into(), vec![3 * 4 * 6, 4 * 6, 6, 1]),
            ("out".into(), vec![2 * 3 * 4 * 4, 1, 3 * 4, 3]),
        ]);
        let op = Op::Pointwise {
            params: PointwiseParams::new(PointwiseMode::ADD),
            input_dims: vec![vec![2, 3, 4, 4], vec![1, 3, 1, 1]],
            out_dims: vec![2, 3, 4, 4],
        };
        cases.push(Case::new("add_padded_in_nhwc_out", op, layout, dtype));
    }
    cases
}

/// A rule of a [`SkipList`].
enum Matcher {
    Pattern(String),
    Predicate(Box<dyn Fn(&Case) -> bool + Send + Sync>),
}

/// Cases a provider does not support, each with the reason it is skipped.
#[derive(Default)]
pub struct SkipList {
    rules: Vec<(Matcher, String)>,
}

impl fmt::Debug for SkipList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut l = f.debug_list();
        for (m, reason) in &self.rules {
            match m {
                Matcher::Pattern(p) => l.entry(&format_args!("{p:?}: {reason}")),
                Matcher::Predicate(_) => l.entry(&format_args!("<predicate>: {reason}")),
            };
        }
        l.finish()
    }
}

/// Whether `name` matches `pattern`, where `*` matches any run of characters
/// (including `/`) and `?` any one character.
pub fn glob_match(pattern: &str, name: &str) -> bool {
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    let (mut pi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == n[ni]) {
            pi += 1;
            ni += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ni));
            pi += 1;
        } else if let Some((sp, sn)) = star {
            pi = sp + 1;
            ni = sn + 1;
            star = Some((sp, sn + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

impl SkipList {
    /// No skips.
    pub fn new() -> Self {
        Self::default()
    }

    /// Skips cases whose name matches `pattern` (see [`glob_match`]), e.g.
    /// `"conv_*/*/bf16/*"` or `"pointwise/gen_index/*"`.
    pub fn pattern(mut self, pattern: &str, reason: &str) -> Self {
        self.rules
            .push((Matcher::Pattern(pattern.to_owned()), reason.to_owned()));
        self
    }

    /// Skips cases for which `pred` is true.
    pub fn predicate(
        mut self,
        reason: &str,
        pred: impl Fn(&Case) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.rules
            .push((Matcher::Predicate(Box::new(pred)), reason.to_owned()));
        self
    }

    /// The reason of the first rule matching `case`, if any.
    pub fn reason_for(&self, case: &Case) -> Option<&str> {
        self.rules.iter().find_map(|(m, reason)| {
            let hit = match m {
                Matcher::Pattern(p) => glob_match(p, &case.name),
                Matcher::Predicate(f) => f(case),
            };
            hit.then_some(reason.as_str())
        })
    }
}

/// What happened to one case.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Every output within tolerance.
    Passed,
    /// Why it failed (provider error, panic, or the errors of the first bad output).
    Failed(String),
    /// The skip rule's reason.
    Skipped(String),
}

/// One case's outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct CaseResult {
    /// The case name.
    pub name: String,
    /// Its outcome.
    pub outcome: Outcome,
}

/// The outcome of a suite run.
#[derive(Debug, Clone)]
pub struct Report {
    /// The provider's name.
    pub provider: String,
    /// The seed the inputs were drawn with (re-run with `HIPDNN_TEST_SEED=<seed>`).
    pub seed: u64,
    /// One entry per case, in suite order.
    pub results: Vec<CaseResult>,
}

impl Report {
    fn count(&self, f: impl Fn(&Outcome) -> bool) -> usize {
        self.results.iter().filter(|r| f(&r.outcome)).count()
    }

    /// Number of passed cases.
    pub fn passed(&self) -> usize {
        self.count(|o| matches!(o, Outcome::Passed))
    }

    /// The failed cases with their reasons.
    pub fn failures(&self) -> Vec<(&str, &str)> {
        self.results
            .iter()
            .filter_map(|r| match &r.outcome {
                Outcome::Failed(why) => Some((r.name.as_str(), why.as_str())),
                _ => None,
            })
            .collect()
    }

    /// The skipped cases with their reasons.
    pub fn skips(&self) -> Vec<(&str, &str)> {
        self.results
            .iter()
            .filter_map(|r| match &r.outcome {
                Outcome::Skipped(why) => Some((r.name.as_str(), why.as_str())),
                _ => None,
            })
            .collect()
    }

    /// A multi-line summary: counts, then skips grouped by reason, then failures.
    pub fn summary(&self) -> String {
        use fmt::Write as _;
        let mut s = String::new();
        let (skips, failures) = (self.skips(), self.failures());
        let _ = writeln!(
            s,
            "conformance [{}] seed {}: {} cases, {} passed, {} failed, {} skipped",
            self.provider,
            self.seed,
            self.results.len(),
            self.passed(),
            failures.len(),
            skips.len()
        );
        let mut by_reason: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for (name, why) in &skips {
            by_reason.entry(why).or_default().push(name);
        }
        for (why, names) in by_reason {
            let _ = writeln!(s, "  SKIPPED {} case(s): {why}", names.len());
            for n in names {
                let _ = writeln!(s, "    {n}");
            }
        }
        for (name, why) in failures {
            let _ = writeln!(s, "  FAILED {name}: {why}");
        }
        s
    }

    /// Prints [`summary`](Self::summary) to stderr, bypassing the test harness's output
    /// capture so skips are visible on every run.
    pub fn print_summary(&self) {
        let _ = std::io::stderr().write_all(self.summary().as_bytes());
    }

    /// Panics, listing every failure, unless no case failed.
    ///
    /// # Panics
    /// When a case failed.
    pub fn assert_passed(&self) {
        let failures = self.failures();
        if !failures.is_empty() {
            let list: Vec<String> = failures
                .iter()
                .map(|(n, why)| format!("  {n}: {why}"))
                .collect();
            panic!(
                "{} of {} conformance cases failed for provider \"{}\" (seed {}):\n{}",
                failures.len(),
                self.results.len(),
                self.provider,
                self.seed,
                list.join("\n")
            );
        }
    }
}

/// Runs one case against `provider` with inputs drawn under `seed`.
pub fn run_case<P: Provider + ?Sized>(provider: &P, case: &Case, seed: u64) -> Outcome {
    let prepared = match case.prepare(seed) {
        Ok(p) => p,
        Err(e) => return Outcome::Failed(format!("the reference cannot run this case: {e}")),
    };
    let mut buffers = prepared.buffers.clone();
    let result = catch_unwind(AssertUnwindSafe(|| {
        provider.execute(&prepared.graph, &mut buffers)
    }));
    match result {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return Outcome::Failed(format!("provider rejected the case: {e}")),
        Err(panic) => {
            let msg = hipdnn_data_sdk::panic_message(panic.as_ref());
            return Outcome::Failed(format!("provider panicked: {msg}"));
        }
    }
    if buffers.keys().ne(prepared.buffers.keys()) {
        return Outcome::Failed("provider added or removed buffers".into());
    }
    for uid in prepared.inputs.keys() {
        if buffers[uid] != prepared.buffers[uid] {
            let name = &tensor_attrs(&prepared.graph, *uid).name;
            return Outcome::Failed(format!("provider modified input \"{name}\" (uid {uid})"));
        }
    }
    for (uid, want) in &prepared.expected {
        let t = tensor_attrs(&prepared.graph, *uid);
        let got = match decode(
            t.data_type,
            &buffers[uid],
            &dims_usize(&t.dims),
            &dims_usize(&t.strides),
        ) {
            Ok(g) => g,
            Err(e) => return Outcome::Failed(format!("output \"{}\": {e}", t.name)),
        };
        let tol = case.tolerance(t.data_type);
        let cmp = compare_rounded(&got.logical(), &want.logical(), tol, t.data_type, 1.0);
        if !cmp.passed {
            return Outcome::Failed(format!(
                "output \"{}\" ({}, atol {:e}, rtol {:e}): {cmp}",
                t.name, t.data_type, tol.atol, tol.rtol
            ));
        }
    }
    Outcome::Passed
}

/// Runs `cases` against `provider`, skipping what `skips` covers, with the seed of
/// [`test_seed`].
pub fn run_cases<P: Provider + ?Sized>(provider: &P, cases: &[Case], skips: &SkipList) -> Report {
    let seed = test_seed();
    let results = cases
        .iter()
        .map(|case| CaseResult {
            name: case.name.clone(),
            outcome: match skips.reason_for(case) {
                Some(reason) => Outcome::Skipped(reason.to_owned()),
                None => run_case(provider, case, seed),
            },
        })
        .collect();
    Report {
        provider: provider.name().to_owned(),
        seed,
        results,
    }
}

/// Runs the [`standard_cases`] against `provider`.
pub fn run_suite<P: Provider + ?Sized>(provider: &P, skips: &SkipList) -> Report {
    run_cases(provider, &standard_cases(), skips)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::executor::ReferenceProvider;

    #[test]
    fn case_names_are_unique_and_cover_every_op_dtype_layout() {
        let cases = standard_cases();
        let names: BTreeSet<&str> = cases.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names.len(), cases.len(), "duplicate case names");
        let kinds: BTreeSet<&str> = cases.iter().map(|c| c.op.kind()).collect();
        for k in [
            "conv_fprop",
            "conv_bias_relu",
            "conv_dgrad",
            "conv_wgrad",
            "batchnorm_inference",
            "batchnorm_inference_relu",
            "batchnorm_inference_variance",
            "batchnorm_training",
            "batchnorm_backward",
            "matmul",
            "matmul_bias_gelu",
            "pointwise",
            "reduction",
            "layernorm",
            "rmsnorm",
        ] {
            assert!(kinds.contains(k), "no {k} case");
            for dt in ["fp32", "fp16", "bf16"] {
                for layout in ["nchw", "nhwc"] {
                    assert!(
                        cases
                            .iter()
                            .any(|c| c.op.kind() == k
                                && c.name.ends_with(&format!("/{dt}/{layout}"))),
                        "no {k} {dt} {layout} case"
                    );
                }
            }
        }
        // Every pointwise mode but UNSET, every reduction mode but NOT_SET.
        let pw = pointwise_variants();
        for v in 1..=PointwiseMode::ENUM_MAX {
            assert!(
                pw.iter().any(|(_, p, _)| p.mode == PointwiseMode(v)),
                "mode {v}"
            );
        }
        for v in 1..=ReductionMode::ENUM_MAX {
            let tag = ReductionMode(v)
                .variant_name()
                .unwrap()
                .to_ascii_lowercase();
            assert!(names.contains(format!("reduction/{tag}_spatial/fp32/nchw").as_str()));
        }
    }

    #[test]
    fn reference_provider_passes_the_whole_suite() {
        let report = run_suite(&ReferenceProvider, &SkipList::new());
        report.assert_passed();
        assert_eq!(report.passed(), report.results.len());
        assert!(report.results.len() > 500, "{} cases", report.results.len());
    }

    /// Runs the references, then distorts every output value.
    struct Perturbing;

    impl Provider for Perturbing {
        fn name(&self) -> &str {
            "perturbing"
        }
        fn execute(
            &self,
            graph: &Graph,
            buffers: &mut BTreeMap<i64, Vec<u8>>,
        ) -> Result<(), String> {
            let before = buffers.clone();
            crate::executor::execute_graph(graph, buffers)?;
            for t in &graph.tensors {
                let Some(bytes) = buffers.get_mut(&t.uid) else {
                    continue;
                };
                if *bytes == before[&t.uid] {
                    continue; // an input
                }
                let (d, s) = (dims_usize(&t.dims), dims_usize(&t.strides));
                let mut h = decode(t.data_type, bytes, &d, &s).unwrap();
                h.map_inplace(|v| 1.5 * v + 0.5);
                *bytes = encode(t.data_type, &h).unwrap();
            }
            Ok(())
        }
    }

    #[test]
    fn perturbed_outputs_fail_every_case() {
        let report = run_suite(&Perturbing, &SkipList::new());
        assert_eq!(report.passed(), 0, "{}", report.summary());
        assert_eq!(report.failures().len(), report.results.len());
        assert!(
            report
                .failures()
                .iter()
                .all(|(_, why)| why.contains("mismatches"))
        );
        let r = std::panic::catch_unwind(|| report.assert_passed());
        assert!(r.is_err());
    }

    struct Picky;

    impl Provider for Picky {
        fn name(&self) -> &str {
            "picky"
        }
        fn execute(
            &self,
            graph: &Graph,
            buffers: &mut BTreeMap<i64, Vec<u8>>,
        ) -> Result<(), String> {
            match graph.name.as_str() {
                "matmul" => Err("matmul is not applicable".into()),
                "reduction" => Ok(()), // claims success, writes nothing
                "layernorm" => panic!("layernorm kernel crashed"),
                "rmsnorm" => {
                    // Scribbles on an input.
                    let uid = uid_of(graph, "x");
                    buffers.get_mut(&uid).unwrap()[0] ^= 1;
                    crate::executor::execute_graph(graph, buffers)
                }
                _ => crate::executor::execute_graph(graph, buffers),
            }
        }
    }

    #[test]
    fn rejections_silence_and_crashes_fail_unless_skipped() {
        let cases: Vec<Case> = standard_cases()
            .into_iter()
            .filter(|c| c.dtype == DataType::Float && c.layout == Layout::Nchw)
            .collect();
        let report = run_cases(&Picky, &cases, &SkipList::new());
        let failed: BTreeMap<&str, &str> = report.failures().into_iter().collect();
        assert!(failed["matmul/2d_4x5x3/fp32/nchw"].contains("not applicable"));
        assert!(failed["reduction/add_spatial/fp32/nchw"].contains("mismatches"));
        assert!(failed["layernorm/4x3x16_last_inference/fp32/nchw"].contains("panicked"));
        assert!(failed["rmsnorm/4x16_inference/fp32/nchw"].contains("modified input"));
        assert!(report.passed() > 0);
        assert!(failed.keys().all(|n| {
            ["matmul/", "reduction/", "layernorm/", "rmsnorm/"]
                .iter()
                .any(|p| n.starts_with(p))
        }));

        let skips = SkipList::new()
            .pattern("matmul/*", "no matmul")
            .pattern("reduction/*/fp32/*", "reductions not written")
            .predicate("layernorm crashes", |c| {
                matches!(c.op, Op::Layernorm { .. })
            })
            .pattern("rmsnorm/*", "in-place rmsnorm");
        let report = run_cases(&Picky, &cases, &skips);
        assert!(report.failures().is_empty(), "{}", report.summary());
        assert!(
            report
                .skips()
                .iter()
                .any(|(n, why)| n.starts_with("matmul/") && *why == "no matmul")
        );
        assert!(
            report
                .skips()
                .iter()
                .any(|(_, why)| *why == "layernorm crashes")
        );
        let summary = report.summary();
        assert!(summary.contains("SKIPPED"), "{summary}");
        assert!(summary.contains("no matmul"), "{summary}");
        report.assert_passed();
        assert_eq!(report.passed() + report.skips().len(), cases.len());
    }

    #[test]
    fn glob_patterns() {
        assert!(glob_match(
            "conv_*/*/bf16/*",
            "conv_fprop/3x3_pad1/bf16/nhwc"
        ));
        assert!(!glob_match(
            "conv_*/*/bf16/*",
            "conv_fprop/3x3_pad1/fp16/nhwc"
        ));
        assert!(glob_match("*", "anything"));
        assert!(glob_match("a?c", "abc"));
        assert!(!glob_match("a?c", "abbc"));
        assert!(glob_match("*/nhwc", "x/y/nhwc"));
        assert!(!glob_match("*/nhwc", "x/y/nchw"));
    }

    #[test]
    fn prepared_inputs_are_seeded_and_rounded() {
        let case = standard_cases()
            .into_iter()
            .find(|c| c.name == "conv_fprop/3x3_pad1/bf16/nhwc")
            .unwrap();
        let a = case.prepare(5).unwrap();
        let b = case.prepare(5).unwrap();
        let c = case.prepare(6).unwrap();
        assert_eq!(a.buffers, b.buffers);
        assert_ne!(a.buffers, c.buffers);
        let x = &a.inputs[&uid_of(&a.graph, "x")];
        assert!(x.data.iter().all(|&v| round_to(DataType::Bfloat16, v) == v));
        let y = uid_of(&a.graph, "y");
        assert!(a.buffers[&y].iter().all(|&b| b == 0xFF));
        assert_eq!(a.buffers[&y].len(), 2 * 6 * 8 * 8 * 2);
    }
}
