//! Small graphs to ask engines for their knobs (engine details are per graph): the
//! checked-in example graphs, then one small graph per common operation.

use hipdnn_backend::OperationGraph;
use hipdnn_data_sdk::DataType;
use hipdnn_flatbuffers_sdk::model::Graph;
use hipdnn_flatbuffers_sdk::wire::{PointwiseMode, ReductionMode};
use hipdnn_test_sdk::graphs::{self, ConvSpec, Layout};
use hipdnn_test_sdk::reference::PointwiseParams;

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
    /// `examples/graphs/<file>` or `test-sdk <builder> <shape>`.
    pub name: String,
    /// The validated graph.
    pub graph: OperationGraph,
}

fn pointwise(mode: PointwiseMode, inputs: usize, dims: &[i64], dtype: DataType) -> Graph {
    let ins = vec![dims.to_vec(); inputs];
    graphs::pointwise(
        &PointwiseParams::new(mode),
        &ins,
        dims,
        &Layout::Nchw,
        dtype,
    )
}

/// The sample graphs, in the order they are tried.
pub fn samples() -> Vec<Sample> {
    let f32 = DataType::Float;
    let nchw = Layout::Nchw;
    let conv = ConvSpec::new(&[1, 8, 8, 8], &[8, 8, 3, 3]).with(|p| p.padding(1));
    let x = [2, 8, 4, 4];
    let built: Vec<(&str, Graph)> = vec![
        (
            "relu 1x8x8x8",
            pointwise(PointwiseMode::RELU_FWD, 1, &[1, 8, 8, 8], f32),
        ),
        (
            "add 1x8x8x8",
            pointwise(PointwiseMode::ADD, 2, &[1, 8, 8, 8], f32),
        ),
        (
            "conv_fprop 1x8x8x8 * 8x8x3x3",
            graphs::conv_fprop(&conv, &nchw, f32),
        ),
        (
            "conv_fprop nhwc fp16",
            graphs::conv_fprop(&conv, &Layout::Nhwc, DataType::Half),
        ),
        (
            "conv_bias_relu 1x8x8x8",
            graphs::conv_bias_relu(&conv, &nchw, f32),
        ),
        ("conv_dgrad 1x8x8x8", graphs::conv_dgrad(&conv, &nchw, f32)),
        ("conv_wgrad 1x8x8x8", graphs::conv_wgrad(&conv, &nchw, f32)),
        (
            "batchnorm_inference 2x8x4x4",
            graphs::batchnorm_inference(&x, false, &nchw, f32),
        ),
        (
            "batchnorm_training 2x8x4x4",
            graphs::batchnorm_training(&x, 1e-5, None, &nchw, f32),
        ),
        (
            "batchnorm_backward 2x8x4x4",
            graphs::batchnorm_backward(&x, &nchw, f32),
        ),
        (
            "matmul 1x16x32 * 1x32x16",
            graphs::matmul(&[1, 16, 32], &[1, 32, 16], &nchw, f32),
        ),
        (
            "matmul fp16",
            graphs::matmul(&[1, 16, 32], &[1, 32, 16], &nchw, DataType::Half),
        ),
        (
            "layernorm 2x8x16",
            graphs::layernorm(&[2, 8, 16], 1, 1e-5, false, &nchw, f32),
        ),
        (
            "rmsnorm 2x16",
            graphs::rmsnorm(&[2, 16], 1e-5, false, false, &nchw, f32),
        ),
        (
            "reduction add 2x8 -> 2x1",
            graphs::reduction(ReductionMode::ADD, &[2, 8], &[2, 1], &nchw, f32),
        ),
    ];
    let examples = EXAMPLES.iter().filter_map(|(file, json)| {
        let graph = Graph::from_json(json).ok()?;
        Some((format!("examples/graphs/{file}"), graph))
    });
    examples
        .chain(built.into_iter().map(|(n, g)| (format!("test-sdk {n}"), g)))
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
