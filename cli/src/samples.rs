//! Small graphs to ask engines for their knobs (engine details are per graph): the
//! checked-in example graphs, then one small graph per common operation.

use hipdnn_backend::OperationGraph;
use hipdnn_backend::frontend::{
    BatchnormAttrs, BatchnormBackwardAttrs, BatchnormInferenceAttrs, ConvAttrs, DataType,
    FrontendError, GraphBuilder, LayernormAttrs, MatmulAttrs, NormFwdPhase, PointwiseAttrs,
    PointwiseMode, ReductionAttrs, ReductionMode, RmsnormAttrs, Tensor, TensorDescriptor,
    TensorLayout, TensorValue,
};
use hipdnn_flatbuffers_sdk::model::Graph;

/// The example graphs, embedded so an installed `hipdnn` has them too.
const EXAMPLES: [(&str, &str); 4] = [
    (
        "conv_bias_relu.json",
        include_str!("../../examples/graphs/conv_bias_relu.json"),
    ),
    (
        "resnet_bottleneck_nhwc.json",
        include_str!("../../examples/graphs/resnet_bottleneck_nhwc.json"),
    ),
    (
        "batchnorm_training.json",
        include_str!("../../examples/graphs/batchnorm_training.json"),
    ),
    (
        "matmul_bias_gelu.json",
        include_str!("../../examples/graphs/matmul_bias_gelu.json"),
    ),
];

/// A named sample graph.
#[derive(Debug)]
pub struct Sample {
    /// `examples/graphs/<file>` or `built-in <op> <shape>`.
    pub name: String,
    /// The validated graph.
    pub graph: OperationGraph,
}

/// Panics with the sample's name: the samples are fixed, valid graphs.
fn check<T>(sample: &str, r: Result<T, FrontendError>) -> T {
    r.unwrap_or_else(|e| panic!("sample graph {sample}: {e}"))
}

/// A graph of I/O type `dtype` (compute and intermediate `FLOAT`) from `build`, which
/// adds the operations and returns the outputs.
fn graph(
    name: &str,
    dtype: DataType,
    build: impl FnOnce(&mut GraphBuilder) -> Result<Vec<Tensor>, FrontendError>,
) -> Graph {
    let mut g = GraphBuilder::new(name)
        .io_data_type(dtype)
        .compute_data_type(DataType::Float)
        .intermediate_data_type(DataType::Float);
    for t in check(name, build(&mut g)) {
        check(name, g.set_output(t, true));
    }
    check(name, g.build()).into_graph()
}

fn input(g: &mut GraphBuilder, name: &str, dims: &[i64]) -> Result<Tensor, FrontendError> {
    g.tensor(TensorDescriptor::new(name, dims))
}

/// A per-channel (or otherwise `FLOAT`) parameter.
fn param(g: &mut GraphBuilder, name: &str, dims: &[i64]) -> Result<Tensor, FrontendError> {
    g.tensor(TensorDescriptor::new(name, dims).data_type(DataType::Float))
}

fn epsilon(g: &mut GraphBuilder) -> Result<Tensor, FrontendError> {
    g.tensor(TensorDescriptor::scalar(
        "epsilon",
        TensorValue::Float32(1e-5),
    ))
}

fn pointwise(mode: PointwiseMode, inputs: usize, dims: &[i64]) -> Graph {
    graph("pointwise", DataType::Float, |g| {
        let ins = (0..inputs)
            .map(|i| input(g, &format!("in_{i}"), dims))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(vec![g.pointwise(&ins, PointwiseAttrs::new(mode))?])
    })
}

/// `[1, 8, 8, 8] ⊛ [8, 8, 3, 3]`, padding 1, in `layout`.
fn conv_fprop(layout: TensorLayout, dtype: DataType) -> Graph {
    graph("conv_fprop", dtype, |g| {
        let x = g.tensor(TensorDescriptor::new("x", [1, 8, 8, 8]).layout(layout))?;
        let w = g.tensor(TensorDescriptor::new("w", [8, 8, 3, 3]).layout(layout))?;
        Ok(vec![g.conv_fprop(
            x,
            w,
            ConvAttrs::new().padding([1, 1]),
        )?])
    })
}

fn conv_bias_relu() -> Graph {
    graph("conv_bias_relu", DataType::Float, |g| {
        let x = input(g, "x", &[1, 8, 8, 8])?;
        let w = input(g, "w", &[8, 8, 3, 3])?;
        let bias = input(g, "bias", &[1, 8, 1, 1])?;
        let conv = g.conv_fprop(x, w, ConvAttrs::new().padding([1, 1]))?;
        let biased = g.pointwise(&[conv, bias], PointwiseAttrs::new(PointwiseMode::ADD))?;
        Ok(vec![g.pointwise(
            &[biased],
            PointwiseAttrs::new(PointwiseMode::RELU_FWD),
        )?])
    })
}

/// The data (`dgrad`) or weight (`wgrad`) gradient of the convolution of [`conv_fprop`].
fn conv_gradient(wgrad: bool) -> Graph {
    graph(
        if wgrad { "conv_wgrad" } else { "conv_dgrad" },
        DataType::Float,
        |g| {
            let dy = input(g, "dy", &[1, 8, 8, 8])?;
            let attrs = ConvAttrs::new().padding([1, 1]);
            Ok(vec![if wgrad {
                let x = input(g, "x", &[1, 8, 8, 8])?;
                g.conv_wgrad(x, dy, attrs.output_dims([8, 8, 3, 3]))?
            } else {
                let w = input(g, "w", &[8, 8, 3, 3])?;
                g.conv_dgrad(dy, w, attrs.output_dims([1, 8, 8, 8]))?
            }])
        },
    )
}

const BN_X: [i64; 4] = [2, 8, 4, 4];
const BN_C: [i64; 4] = [1, 8, 1, 1];

fn batchnorm_inference() -> Graph {
    graph("batchnorm_inference", DataType::Float, |g| {
        let x = input(g, "x", &BN_X)?;
        let mean = param(g, "mean", &BN_C)?;
        let inv = param(g, "inv_variance", &BN_C)?;
        let scale = param(g, "scale", &BN_C)?;
        let bias = param(g, "bias", &BN_C)?;
        Ok(vec![g.batchnorm_inference(
            x,
            mean,
            inv,
            scale,
            bias,
            BatchnormInferenceAttrs::new(),
        )?])
    })
}

fn batchnorm_training() -> Graph {
    graph("batchnorm_training", DataType::Float, |g| {
        let x = input(g, "x", &BN_X)?;
        let scale = param(g, "scale", &BN_C)?;
        let bias = param(g, "bias", &BN_C)?;
        let eps = epsilon(g)?;
        let out = g.batchnorm(x, scale, bias, BatchnormAttrs::new(eps))?;
        for stat in [out.mean, out.inv_variance] {
            g.set_data_type(stat, DataType::Float)?;
        }
        Ok(vec![out.y, out.mean, out.inv_variance])
    })
}

fn batchnorm_backward() -> Graph {
    graph("batchnorm_backward", DataType::Float, |g| {
        let dy = input(g, "dy", &BN_X)?;
        let x = input(g, "x", &BN_X)?;
        let mean = param(g, "mean", &BN_C)?;
        let inv = param(g, "inv_variance", &BN_C)?;
        let scale = param(g, "scale", &BN_C)?;
        let attrs = BatchnormBackwardAttrs::new().saved_stats(mean, inv);
        let out = g.batchnorm_backward(dy, x, scale, attrs)?;
        for grad in [out.dscale, out.dbias] {
            g.set_data_type(grad, DataType::Float)?;
        }
        Ok(vec![out.dx, out.dscale, out.dbias])
    })
}

fn matmul(dtype: DataType) -> Graph {
    graph("matmul", dtype, |g| {
        let a = input(g, "a", &[1, 16, 32])?;
        let b = input(g, "b", &[1, 32, 16])?;
        Ok(vec![g.matmul(a, b, MatmulAttrs::new())?])
    })
}

fn layernorm() -> Graph {
    graph("layernorm", DataType::Float, |g| {
        let x = input(g, "x", &[2, 8, 16])?;
        let scale = param(g, "scale", &[1, 1, 16])?;
        let bias = param(g, "bias", &[1, 1, 16])?;
        let eps = epsilon(g)?;
        let attrs = LayernormAttrs::new(eps)
            .normalized_dims(1)
            .phase(NormFwdPhase::INFERENCE);
        Ok(vec![g.layernorm(x, scale, bias, attrs)?.y])
    })
}

fn rmsnorm() -> Graph {
    graph("rmsnorm", DataType::Float, |g| {
        let x = input(g, "x", &[2, 16])?;
        let scale = param(g, "scale", &[1, 16])?;
        let eps = epsilon(g)?;
        let attrs = RmsnormAttrs::new(eps).phase(NormFwdPhase::INFERENCE);
        Ok(vec![g.rmsnorm(x, scale, attrs)?.y])
    })
}

fn reduction() -> Graph {
    graph("reduction", DataType::Float, |g| {
        let x = input(g, "in", &[2, 8])?;
        let attrs = ReductionAttrs::new(ReductionMode::ADD).output_dims([2, 1]);
        Ok(vec![g.reduction(x, attrs)?])
    })
}

/// The sample graphs, in the order they are tried.
pub fn samples() -> Vec<Sample> {
    let f32 = DataType::Float;
    let built: Vec<(&str, Graph)> = vec![
        (
            "relu 1x8x8x8",
            pointwise(PointwiseMode::RELU_FWD, 1, &[1, 8, 8, 8]),
        ),
        (
            "add 1x8x8x8",
            pointwise(PointwiseMode::ADD, 2, &[1, 8, 8, 8]),
        ),
        (
            "conv_fprop 1x8x8x8 * 8x8x3x3",
            conv_fprop(TensorLayout::Packed, f32),
        ),
        (
            "conv_fprop nhwc fp16",
            conv_fprop(TensorLayout::ChannelsLast, DataType::Half),
        ),
        ("conv_bias_relu 1x8x8x8", conv_bias_relu()),
        ("conv_dgrad 1x8x8x8", conv_gradient(false)),
        ("conv_wgrad 1x8x8x8", conv_gradient(true)),
        ("batchnorm_inference 2x8x4x4", batchnorm_inference()),
        ("batchnorm_training 2x8x4x4", batchnorm_training()),
        ("batchnorm_backward 2x8x4x4", batchnorm_backward()),
        ("matmul 1x16x32 * 1x32x16", matmul(f32)),
        ("matmul fp16", matmul(DataType::Half)),
        ("layernorm 2x8x16", layernorm()),
        ("rmsnorm 2x16", rmsnorm()),
        ("reduction add 2x8 -> 2x1", reduction()),
    ];
    let examples = EXAMPLES.iter().filter_map(|(file, json)| {
        let graph = Graph::from_json(json).ok()?;
        Some((format!("examples/graphs/{file}"), graph))
    });
    examples
        .chain(built.into_iter().map(|(n, g)| (format!("built-in {n}"), g)))
        .filter_map(|(name, graph)| {
            OperationGraph::new(graph)
                .ok()
                .map(|graph| Sample { name, graph })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_sample_is_valid() {
        // Examples plus builders: none is dropped for failing validation.
        assert_eq!(samples().len(), EXAMPLES.len() + 15);
    }
}
