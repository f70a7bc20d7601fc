//! The frontend graph builder end to end: built graphs go through the wire format (bytes,
//! verified views, JSON) and come back unchanged, and match the graphs written by hand in
//! the owned model (`flatbuffers-sdk/tests/support/model_graphs.rs`).

use hipdnn_flatbuffers_sdk::GraphView;
use hipdnn_flatbuffers_sdk::model::{Graph, NodeAttributesRef};
use hipdnn_frontend::samples;

#[path = "../../flatbuffers-sdk/tests/support/model_graphs.rs"]
mod model_graphs;
use hipdnn_frontend::{
    BatchnormAttrs, BatchnormBackwardAttrs, BatchnormInferenceAttrs, BuiltGraph, ConvAttrs,
    DataType, GraphBuilder, LayernormAttrs, MatmulAttrs, NormFwdPhase, PointwiseAttrs,
    PointwiseMode, ReductionAttrs, ReductionMode, RmsnormAttrs, Tensor, TensorDescriptor,
    TensorLayout, TensorValue,
};

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn f32_builder(name: &str) -> GraphBuilder {
    GraphBuilder::new(name)
        .io_data_type(DataType::Float)
        .intermediate_data_type(DataType::Float)
        .compute_data_type(DataType::Float)
}

/// Serializes, verifies as a plugin would, and copies back out: the result must be the
/// built graph, and the view must pass the received-graph validation.
fn round_trip(built: &BuiltGraph) -> Result<Graph, Box<dyn std::error::Error>> {
    let bytes = built.to_bytes();
    let view = GraphView::from_bytes(&bytes)?;
    view.validate()?;
    let back = view.to_model()?;
    assert_eq!(&back, built.graph());
    let json = Graph::from_json(&built.to_json())?;
    assert_eq!(&json, built.graph());
    Ok(back)
}

/// The sample conv → bias → ReLU graph of `hipdnn-flatbuffers-sdk`, built with the
/// frontend: the bytes are the golden file's.
#[test]
fn conv_bias_relu_matches_the_golden_sample() -> TestResult {
    let mut g = f32_builder("conv_bias_relu");
    let x = g.tensor(TensorDescriptor::new("x", [1, 3, 8, 8]))?;
    let w = g.tensor(TensorDescriptor::new("w", [4, 3, 3, 3]))?;
    let conv = g.conv_fprop(x, w, ConvAttrs::new().name("conv").padding([1, 1]))?;
    g.set_name(conv, "conv_out")?;
    let bias = g.tensor(TensorDescriptor::new("bias", [1, 4, 1, 1]))?;
    let biased = g.pointwise(
        &[conv, bias],
        PointwiseAttrs::new(PointwiseMode::ADD).name("bias"),
    )?;
    g.set_name(biased, "bias_out")?;
    let y = g.pointwise(
        &[biased],
        PointwiseAttrs::new(PointwiseMode::RELU_FWD).name("relu"),
    )?;
    g.set_name(y, "y")?.set_output(y, true)?;
    let built = g.build()?;

    let mut expected = model_graphs::conv_bias_relu();
    expected.validate()?;
    assert_eq!(built.graph(), &expected);
    assert_eq!(samples::conv_bias_relu(), expected);
    assert_eq!(built.to_bytes(), expected.to_bytes());
    let golden = include_bytes!("../../flatbuffers-sdk/tests/data/conv_bias_relu.bin");
    assert_eq!(built.to_bytes(), golden);
    assert_eq!(
        [x, w, conv, bias, biased, y].map(|t| built.uid(t)),
        [1, 2, 3, 4, 5, 6].map(Some)
    );
    round_trip(&built)?;
    Ok(())
}

/// The samples are the hand-written model graphs, validated.
#[test]
fn samples_match_the_hand_written_graphs() -> TestResult {
    for (built, mut by_hand) in [
        (
            samples::pointwise_chain(1),
            model_graphs::pointwise_chain(1),
        ),
        (
            samples::pointwise_chain(1000),
            model_graphs::pointwise_chain(1000),
        ),
        (samples::resnet50(1), model_graphs::resnet50(1)),
        (samples::resnet50(3), model_graphs::resnet50(3)),
    ] {
        by_hand.validate()?;
        assert_eq!(built, by_hand, "{}", built.name);
        assert_eq!(built.to_bytes(), by_hand.to_bytes(), "{}", built.name);
    }
    Ok(())
}

/// An inference block in NHWC half precision: conv → batch norm → ReLU → residual add,
/// then a global average pool (reduction) and a classifier (matmul).
#[test]
fn inference_network_round_trips() -> TestResult {
    let mut g = GraphBuilder::new("resnet_block")
        .io_data_type(DataType::Half)
        .intermediate_data_type(DataType::Float)
        .compute_data_type(DataType::Float)
        .preferred_engine_id(42);
    let nhwc = TensorLayout::ChannelsLast;
    let x = g.tensor(
        TensorDescriptor::new("x", [8, 16, 14, 14])
            .layout(nhwc)
            .uid(1),
    )?;
    let w = g.tensor(
        TensorDescriptor::new("w", [16, 16, 3, 3])
            .layout(nhwc)
            .uid(2),
    )?;
    let stats: Vec<Tensor> = ["mean", "inv_variance", "scale", "bias"]
        .into_iter()
        .map(|n| g.tensor(TensorDescriptor::new(n, [1, 16, 1, 1]).data_type(DataType::Float)))
        .collect::<Result<_, _>>()?;
    let conv = g.conv_fprop(x, w, ConvAttrs::new().name("conv").padding([1, 1]))?;
    let bn = g.batchnorm_inference(
        conv,
        stats[0],
        stats[1],
        stats[2],
        stats[3],
        BatchnormInferenceAttrs::new().name("bn"),
    )?;
    let relu = g.pointwise(
        &[bn],
        PointwiseAttrs::new(PointwiseMode::RELU_FWD).name("relu"),
    )?;
    let residual = g.pointwise(
        &[relu, x],
        PointwiseAttrs::new(PointwiseMode::ADD).name("add"),
    )?;
    let pooled = g.reduction(
        residual,
        ReductionAttrs::new(ReductionMode::AVG)
            .name("pool")
            .output_dims([8, 16, 1, 1]),
    )?;
    // A per-channel projection: [8, 16, 1, 1] · [1, 1, 1, 10], the batch dims broadcast.
    let fc_w = g.tensor(TensorDescriptor::new("fc_w", [1, 1, 1, 10]).uid(10))?;
    let logits = g.matmul(pooled, fc_w, MatmulAttrs::new().name("fc"))?;
    assert_eq!(g.tensor_info(logits)?.dims(), [8, 16, 1, 10]);
    assert_eq!(
        g.tensor_info(residual)?.strides(),
        g.tensor_info(x)?.strides()
    );
    g.set_output(logits, true)?.set_uid(logits, 12)?;
    let built = g.build()?;
    let back = round_trip(&built)?;
    assert_eq!(back.preferred_engine_id, Some(42));
    let kinds: Vec<_> = back
        .nodes
        .iter()
        .map(|n| n.attributes.type_name())
        .collect();
    assert_eq!(
        kinds,
        [
            "ConvolutionFwdAttributes",
            "BatchnormInferenceAttributes",
            "PointwiseAttributes",
            "PointwiseAttributes",
            "ReductionAttributes",
            "MatmulAttributes",
        ]
    );
    let logits_t = back.tensors.iter().find(|t| t.uid == 12).unwrap();
    assert_eq!(
        (logits_t.data_type, logits_t.is_virtual),
        (DataType::Half, false)
    );
    Ok(())
}

/// A training step of a norm-heavy block: batch norm with running statistics, its
/// backward, layer norm and RMS norm with saved statistics, through the wire format.
#[test]
fn training_graph_round_trips_with_statistics() -> TestResult {
    let mut g = f32_builder("training");
    let x = g.tensor(TensorDescriptor::new("x", [4, 8, 6, 6]))?;
    let per_channel =
        |g: &mut GraphBuilder, name: &str| g.tensor(TensorDescriptor::new(name, [1, 8, 1, 1]));
    let scale = per_channel(&mut g, "scale")?;
    let bias = per_channel(&mut g, "bias")?;
    let running_mean = per_channel(&mut g, "running_mean")?;
    let running_var = per_channel(&mut g, "running_var")?;
    let eps = g.tensor(TensorDescriptor::scalar("eps", TensorValue::Float32(1e-5)))?;
    let momentum = g.tensor(TensorDescriptor::scalar(
        "momentum",
        TensorValue::Float32(0.1),
    ))?;
    let bn = g.batchnorm(
        x,
        scale,
        bias,
        BatchnormAttrs::new(eps)
            .name("bn")
            .running_stats(running_mean, running_var, momentum),
    )?;
    let dy = g.tensor(TensorDescriptor::new("dy", [4, 8, 6, 6]))?;
    let grads = g.batchnorm_backward(
        dy,
        x,
        scale,
        BatchnormBackwardAttrs::new()
            .name("bn_bwd")
            .saved_stats(bn.mean, bn.inv_variance),
    )?;
    let ln_scale = g.tensor(TensorDescriptor::new("ln_scale", [1, 1, 6, 6]))?;
    let ln_bias = g.tensor(TensorDescriptor::new("ln_bias", [1, 1, 6, 6]))?;
    let ln = g.layernorm(
        bn.y,
        ln_scale,
        ln_bias,
        LayernormAttrs::new(eps)
            .name("ln")
            .normalized_dims(2)
            .phase(NormFwdPhase::TRAINING),
    )?;
    let rms_scale = g.tensor(TensorDescriptor::new("rms_scale", [1, 8, 6, 6]))?;
    let rms = g.rmsnorm(
        ln.y,
        rms_scale,
        RmsnormAttrs::new(eps)
            .name("rms")
            .phase(NormFwdPhase::TRAINING),
    )?;
    for t in [
        rms.y,
        rms.inv_rms.unwrap(),
        bn.next_running_mean.unwrap(),
        bn.next_running_variance.unwrap(),
        grads.dx,
        grads.dscale,
        grads.dbias,
    ] {
        g.set_output(t, true)?;
    }
    let built = g.build()?;
    let back = round_trip(&built)?;
    // Layer norm statistics are unread and virtual: left out. The batch norm's are read
    // by the backward node: kept, virtual.
    assert_eq!(built.uid(ln.mean.unwrap()), None);
    let bn_mean = built.uid(bn.mean).unwrap();
    assert!(
        back.tensors
            .iter()
            .any(|t| t.uid == bn_mean && t.is_virtual)
    );

    let bytes = built.to_bytes();
    let view = GraphView::from_bytes(&bytes)?;
    let names: Vec<_> = view.nodes().map(|n| n.name()).collect();
    assert_eq!(names, ["bn", "bn_bwd", "ln", "rms"]);
    let rms_node = view.nodes().nth(3).unwrap();
    let NodeAttributesRef::RMSNormAttributes(a) = rms_node.attributes() else {
        panic!("node 3 is {}", rms_node.attributes().type_name())
    };
    assert_eq!(a.inv_rms_tensor_uid(), built.uid(rms.inv_rms.unwrap()));
    assert_eq!(
        view.tensor(a.inv_rms_tensor_uid().unwrap())
            .unwrap()
            .dims()
            .iter()
            .collect::<Vec<_>>(),
        [4, 1, 1, 1]
    );
    Ok(())
}

/// Gradient convolutions with a stride: the given output dims are what goes on the wire.
#[test]
fn conv_gradients_round_trip() -> TestResult {
    let mut g = f32_builder("conv_grads");
    let x = g.tensor(TensorDescriptor::new("x", [2, 4, 9, 9]))?;
    let w = g.tensor(TensorDescriptor::new("w", [6, 2, 3, 3]))?;
    let dy = g.tensor(TensorDescriptor::new("dy", [2, 6, 4, 4]))?;
    let attrs = ConvAttrs::new().stride([2, 2]);
    let dx = g.conv_dgrad(dy, w, attrs.clone().name("dgrad").output_dims([2, 4, 9, 9]))?;
    let dw = g.conv_wgrad(x, dy, attrs.name("wgrad").output_dims([6, 2, 3, 3]))?;
    g.set_output(dx, true)?.set_output(dw, true)?;
    let built = g.build()?;
    let back = round_trip(&built)?;
    let dx_uid = built.uid(dx).unwrap();
    let t = back.tensors.iter().find(|t| t.uid == dx_uid).unwrap();
    assert_eq!(
        (t.dims.as_slice(), t.strides.as_slice()),
        (&[2, 4, 9, 9][..], &[324, 81, 9, 1][..])
    );
    Ok(())
}

/// A disconnected graph is found at build, by the wire format's validation.
#[test]
fn disconnected_graph_fails_to_build() -> TestResult {
    let mut g = f32_builder("two_parts");
    let a = g.tensor(TensorDescriptor::new("a", [4]))?;
    let b = g.tensor(TensorDescriptor::new("b", [4]))?;
    let ra = g.pointwise(&[a], PointwiseAttrs::new(PointwiseMode::ABS).name("abs"))?;
    let rb = g.pointwise(&[b], PointwiseAttrs::new(PointwiseMode::NEG).name("neg"))?;
    g.set_output(ra, true)?.set_output(rb, true)?;
    let e = g.build().unwrap_err();
    assert!(
        e.to_string().contains("\"neg\"") && e.to_string().contains("connected"),
        "{e}"
    );
    Ok(())
}
