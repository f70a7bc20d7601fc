//! Builds a conv → bias → ReLU graph, validates it, serializes it to the hipDNN wire
//! format, verifies the bytes as a plugin would and checks that nothing was lost on the
//! way, in both the binary and the JSON form.
//!
//! ```text
//! cargo run -p hipdnn-flatbuffers-sdk --example conv_bias_relu [-- --json]
//! ```

use std::process::ExitCode;

use hipdnn_data_sdk::{
    DataType, TensorLayout, engine_id_to_hex, engine_name_to_id, packed_strides,
};
use hipdnn_flatbuffers_sdk::model::{
    ConvolutionFwdAttributes, Graph, Node, NodeAttributesRef, PointwiseAttributes, TensorAttributes,
};
use hipdnn_flatbuffers_sdk::{GraphView, wire};

fn tensor(uid: i64, name: &str, dims: &[i64], is_virtual: bool) -> TensorAttributes {
    TensorAttributes {
        uid,
        name: name.into(),
        strides: packed_strides(dims, TensorLayout::Nchw).expect("rank-4 dims"),
        dims: dims.to_vec(),
        is_virtual,
        ..TensorAttributes::default()
    }
}

fn main() -> Result<ExitCode, Box<dyn std::error::Error>> {
    let mut graph = Graph {
        name: "conv_bias_relu".into(),
        io_data_type: DataType::Float,
        intermediate_data_type: DataType::Float,
        compute_data_type: DataType::Float,
        preferred_engine_id: Some(engine_name_to_id("CPU_ENGINE")),
        tensors: vec![
            tensor(1, "x", &[1, 3, 8, 8], false),
            tensor(2, "w", &[4, 3, 3, 3], false),
            tensor(3, "conv_out", &[1, 4, 8, 8], true),
            tensor(4, "bias", &[1, 4, 1, 1], false),
            tensor(5, "bias_out", &[1, 4, 8, 8], true),
            tensor(6, "y", &[1, 4, 8, 8], false),
        ],
        // Deliberately out of order: validation sorts the nodes topologically.
        nodes: vec![
            Node::new(
                "relu",
                PointwiseAttributes {
                    operation: wire::PointwiseMode::RELU_FWD,
                    in_0_tensor_uid: 5,
                    out_0_tensor_uid: 6,
                    ..Default::default()
                },
            ),
            Node::new(
                "conv",
                ConvolutionFwdAttributes {
                    x_tensor_uid: 1,
                    w_tensor_uid: 2,
                    y_tensor_uid: 3,
                    pre_padding: vec![1, 1],
                    post_padding: vec![1, 1],
                    stride: vec![1, 1],
                    dilation: vec![1, 1],
                    conv_mode: wire::ConvMode::CROSS_CORRELATION,
                    ..Default::default()
                },
            ),
            Node::new(
                "bias",
                PointwiseAttributes {
                    operation: wire::PointwiseMode::ADD,
                    in_0_tensor_uid: 3,
                    in_1_tensor_uid: Some(4),
                    out_0_tensor_uid: 5,
                    ..Default::default()
                },
            ),
        ],
        ..Graph::default()
    };

    graph.validate()?;
    let bytes = graph.to_bytes();

    // The receiving side: verify untrusted bytes, then read them without copying.
    let view = GraphView::from_bytes(&bytes)?;
    view.validate()?;
    println!(
        "graph \"{}\": {} bytes, {} tensors, preferred engine {}",
        view.name(),
        bytes.len(),
        view.tensor_count(),
        engine_id_to_hex(view.preferred_engine_id().unwrap_or_default())
    );
    for node in view.nodes() {
        let (mut ins, mut outs) = (Vec::new(), Vec::new());
        let attributes = node.attributes();
        attributes.tensor_uids(&mut ins, &mut outs);
        let detail = match attributes {
            NodeAttributesRef::ConvolutionFwdAttributes(c) => {
                format!(
                    " padding {:?}",
                    c.pre_padding().map(|p| p.iter().collect::<Vec<_>>())
                )
            }
            NodeAttributesRef::PointwiseAttributes(p) => {
                format!(" {}", p.operation().variant_name().unwrap_or("?"))
            }
            _ => String::new(),
        };
        println!(
            "  node {} {:<5} {}{detail}: reads {ins:?}, writes {outs:?}",
            node.index(),
            node.name(),
            attributes.type_name()
        );
    }

    let order: Vec<_> = view.nodes().map(|n| n.name()).collect();
    let from_wire = view.to_model()?;
    let json = from_wire.to_json();
    let from_json = Graph::from_json(&json)?;
    let checks = [
        (
            "nodes sorted topologically",
            order == ["conv", "bias", "relu"],
        ),
        ("binary round trip keeps every field", from_wire == graph),
        ("JSON round trip keeps every field", from_json == graph),
        (
            "JSON form serializes to the same bytes",
            from_json.to_bytes() == bytes,
        ),
        (
            "unset tensor types resolved",
            view.tensors().all(|t| t.data_type() == DataType::Float),
        ),
    ];
    let mut ok = true;
    for (what, passed) in checks {
        println!("{} {what}", if passed { "ok  " } else { "FAIL" });
        ok &= passed;
    }
    if std::env::args().any(|a| a == "--json") {
        println!("{json}");
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
