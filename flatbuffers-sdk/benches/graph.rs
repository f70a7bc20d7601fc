//! Graph building, serialization, verification and sorting against the raw
//! `flatbuffers` builder writing the same graph.
//!
//! * `raw_builder`: the generated builders called directly on data that already exists
//!   (the floor: what writing these bytes costs with `flatbuffers` alone);
//! * `sdk_pipeline`: what an application does: build the owned graph from scratch,
//!   validate it (checks + topological sort + data-type defaults), serialize it, and
//!   verify the bytes into a `GraphView`, as the receiving side does;
//! * `sdk_build`, `sdk_build_validate`, `sdk_serialize`: the pipeline's first steps;
//! * `verify` and `view_validate`: the receiving side's steps alone, and
//!   `verify_flatbuffers_crate_only`: the `flatbuffers` verifier without our extra checks.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use flatbuffers::{FlatBufferBuilder, WIPOffset};
use hipdnn_flatbuffers_sdk::model::{Graph, NodeAttributes};
use hipdnn_flatbuffers_sdk::{GraphView, wire};

#[path = "../tests/support/model_graphs.rs"]
#[allow(dead_code, reason = "the benchmarks use two of the graphs")]
mod samples;

/// Writes `graph` with nothing but the generated `create` functions.
#[inline(never)]
fn raw_build(graph: &Graph, fbb: &mut FlatBufferBuilder<'_>) -> usize {
    fbb.reset();
    let name = fbb.create_string(&graph.name);
    let mut tensors = Vec::with_capacity(graph.tensors.len());
    for t in &graph.tensors {
        let name = fbb.create_string(&t.name);
        let strides = fbb.create_vector(&t.strides);
        let dims = fbb.create_vector(&t.dims);
        tensors.push(wire::TensorAttributes::create(
            fbb,
            &wire::TensorAttributesArgs {
                uid: t.uid,
                name: Some(name),
                data_type: wire::DataType(t.data_type.to_wire()),
                strides: Some(strides),
                dims: Some(dims),
                virtual_: t.is_virtual,
                ..Default::default()
            },
        ));
    }
    let tensors = fbb.create_vector(&tensors);
    let mut nodes = Vec::with_capacity(graph.nodes.len());
    for n in &graph.nodes {
        let name = fbb.create_string(&n.name);
        let (tag, attributes) = match &n.attributes {
            NodeAttributes::PointwiseAttributes(p) => (
                wire::NodeAttributes::PointwiseAttributes,
                wire::PointwiseAttributes::create(
                    fbb,
                    &wire::PointwiseAttributesArgs {
                        operation: p.operation,
                        in_0_tensor_uid: p.in_0_tensor_uid,
                        in_1_tensor_uid: p.in_1_tensor_uid,
                        out_0_tensor_uid: p.out_0_tensor_uid,
                        ..Default::default()
                    },
                )
                .as_union_value(),
            ),
            NodeAttributes::ConvolutionFwdAttributes(c) => {
                let pre_padding = fbb.create_vector(&c.pre_padding);
                let post_padding = fbb.create_vector(&c.post_padding);
                let stride = fbb.create_vector(&c.stride);
                let dilation = fbb.create_vector(&c.dilation);
                (
                    wire::NodeAttributes::ConvolutionFwdAttributes,
                    wire::ConvolutionFwdAttributes::create(
                        fbb,
                        &wire::ConvolutionFwdAttributesArgs {
                            x_tensor_uid: c.x_tensor_uid,
                            w_tensor_uid: c.w_tensor_uid,
                            y_tensor_uid: c.y_tensor_uid,
                            pre_padding: Some(pre_padding),
                            post_padding: Some(post_padding),
                            stride: Some(stride),
                            dilation: Some(dilation),
                            conv_mode: c.conv_mode,
                            ..Default::default()
                        },
                    )
                    .as_union_value(),
                )
            }
            NodeAttributes::BatchnormInferenceAttributes(b) => (
                wire::NodeAttributes::BatchnormInferenceAttributes,
                wire::BatchnormInferenceAttributes::create(
                    fbb,
                    &wire::BatchnormInferenceAttributesArgs {
                        x_tensor_uid: b.x_tensor_uid,
                        mean_tensor_uid: b.mean_tensor_uid,
                        inv_variance_tensor_uid: b.inv_variance_tensor_uid,
                        scale_tensor_uid: b.scale_tensor_uid,
                        bias_tensor_uid: b.bias_tensor_uid,
                        y_tensor_uid: b.y_tensor_uid,
                    },
                )
                .as_union_value(),
            ),
            other => unreachable!("not in the benchmark graphs: {}", other.type_name()),
        };
        nodes.push(wire::Node::create(
            fbb,
            &wire::NodeArgs {
                name: Some(name),
                compute_data_type: wire::DataType(n.compute_data_type.to_wire()),
                attributes_type: tag,
                attributes: Some(attributes),
            },
        ));
    }
    let nodes = fbb.create_vector(&nodes);
    let root: WIPOffset<wire::Graph<'_>> = wire::Graph::create(
        fbb,
        &wire::GraphArgs {
            name: Some(name),
            compute_data_type: wire::DataType(graph.compute_data_type.to_wire()),
            intermediate_data_type: wire::DataType(graph.intermediate_data_type.to_wire()),
            io_data_type: wire::DataType(graph.io_data_type.to_wire()),
            tensors: Some(tensors),
            nodes: Some(nodes),
            ..Default::default()
        },
    );
    fbb.finish_minimal(root);
    fbb.finished_data().len()
}

/// The whole application-side path, from nothing to a verified view.
#[inline(never)]
fn sdk_pipeline(make: &dyn Fn() -> Graph) -> usize {
    let mut graph = make();
    graph.validate().expect("sample graphs are valid");
    let bytes = graph.to_bytes();
    let view = GraphView::from_bytes(&bytes).expect("own output verifies");
    view.node_count()
}

fn bench_graph(c: &mut Criterion, name: &str, make: &dyn Fn() -> Graph) {
    let mut graph = make();
    graph.validate().unwrap();
    let bytes = graph.to_bytes();
    let mut fbb = FlatBufferBuilder::with_capacity(bytes.len());
    raw_build(&graph, &mut fbb);
    assert_eq!(
        fbb.finished_data(),
        bytes.as_slice(),
        "the raw builder writes the same bytes"
    );

    let mut group = c.benchmark_group(format!("graph/{name}"));
    group.throughput(Throughput::Elements(graph.nodes.len() as u64));
    group.bench_function(BenchmarkId::from_parameter("raw_builder"), |b| {
        b.iter(|| raw_build(black_box(&graph), &mut fbb))
    });
    group.bench_function(BenchmarkId::from_parameter("sdk_pipeline"), |b| {
        b.iter(|| sdk_pipeline(black_box(make)))
    });
    group.bench_function(BenchmarkId::from_parameter("sdk_build"), |b| {
        b.iter(|| make().nodes.len())
    });
    group.bench_function(BenchmarkId::from_parameter("sdk_build_validate"), |b| {
        b.iter(|| {
            let mut g = make();
            g.validate().unwrap();
            g.nodes.len()
        })
    });
    group.bench_function(BenchmarkId::from_parameter("sdk_serialize"), |b| {
        b.iter(|| black_box(&graph).to_bytes().len())
    });
    group.bench_function(BenchmarkId::from_parameter("verify"), |b| {
        b.iter(|| {
            GraphView::from_bytes(black_box(&bytes))
                .unwrap()
                .node_count()
        })
    });
    group.bench_function(
        BenchmarkId::from_parameter("verify_flatbuffers_crate_only"),
        |b| {
            b.iter(|| {
                flatbuffers::root::<wire::Graph<'_>>(black_box(&bytes))
                    .unwrap()
                    .nodes()
                    .unwrap()
                    .len()
            })
        },
    );
    let view = GraphView::from_bytes(&bytes).unwrap();
    group.bench_function(BenchmarkId::from_parameter("view_validate"), |b| {
        b.iter(|| black_box(view).validate().unwrap())
    });
    group.finish();
}

fn benches(c: &mut Criterion) {
    bench_graph(c, "pointwise_chain_1000", &|| {
        samples::pointwise_chain(1000)
    });
    bench_graph(c, "resnet50", &|| samples::resnet50(1));
}

criterion_group!(graph, benches);
criterion_main!(graph);
