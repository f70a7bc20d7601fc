//! Upstream hipDNN's JSON dialect: a document written by hand from upstream's field
//! names, round trips of every sample and example graph, auto-detection, and errors.

use std::path::{Path, PathBuf};

use hipdnn_data_sdk::{DataType, TensorLayout};
use hipdnn_flatbuffers_sdk::TensorValue;
use hipdnn_flatbuffers_sdk::model::{EngineApiVersion, Graph, JsonDialect, Uuid};
use hipdnn_frontend::samples as frontend;
use serde_json::Value;

use crate::samples;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

fn validated(mut graph: Graph) -> Graph {
    graph.validate().unwrap();
    graph
}

/// Model → upstream JSON → model, and model → our JSON → model, both through the
/// auto-detecting reader too.
#[track_caller]
fn assert_round_trips(graph: &Graph, what: &str) {
    let upstream = graph.to_upstream_json();
    let (back, dialect) =
        Graph::from_json_detected(&upstream).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(dialect, JsonDialect::Upstream, "{what}");
    assert_eq!(&back, graph, "{what}: through upstream's dialect");
    assert_eq!(
        &Graph::from_upstream_json(&upstream).unwrap(),
        graph,
        "{what}"
    );
    let (back, dialect) = Graph::from_json_detected(&graph.to_json()).unwrap();
    assert_eq!(dialect, JsonDialect::Flatc, "{what}");
    assert_eq!(&back, graph, "{what}: through our dialect");
}

/// `tests/data/conv_bias_relu.upstream.json` was written by hand from upstream's
/// `to_json` functions (`Graph.hpp`, `TensorAttributes.hpp`,
/// `ConvolutionFwdAttributes.hpp`, `PointwiseAttributes.hpp`), not from our writer:
/// every key upstream writes, `null` for each absent optional, lower-case data types
/// and pointwise modes. Our writer must produce the same document and our reader must
/// read it as the golden graph.
#[test]
fn hand_written_upstream_conv_bias_relu_matches_both_ways() {
    let golden = validated(samples::conv_bias_relu());
    let text = std::fs::read_to_string(data("conv_bias_relu.upstream.json")).unwrap();
    assert_eq!(Graph::from_upstream_json(&text).unwrap(), golden);
    assert_eq!(Graph::from_json(&text).unwrap(), golden);
    let ours: Value = serde_json::from_str(&golden.to_upstream_json()).unwrap();
    let hand: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        ours, hand,
        "our writer differs from the hand-written document"
    );
    // The same bytes as the golden binary.
    assert_eq!(
        Graph::from_upstream_json(&text).unwrap().to_bytes(),
        std::fs::read(data("conv_bias_relu.bin")).unwrap()
    );
}

/// The example of `docs/graph-json.md` ("Upstream's dialect") is the hand-written
/// document.
#[test]
fn doc_example_is_the_hand_written_document() {
    let doc = include_str!("../../../docs/graph-json.md");
    let example = doc
        .split("```json upstream\n")
        .nth(1)
        .and_then(|s| s.split("```").next())
        .expect("the upstream example block");
    let example: Value = serde_json::from_str(example).unwrap();
    let hand: Value = serde_json::from_str(&hand_written()).unwrap();
    assert_eq!(example, hand);
}

/// Pretty-printed as upstream's `dump(2)`: two-space indent, keys sorted (nlohmann's
/// objects are ordered maps).
#[test]
fn upstream_json_is_indented_by_two_with_sorted_keys() {
    let json = validated(samples::conv_bias_relu()).to_upstream_json();
    assert!(
        json.starts_with("{\n  \"compute_data_type\": \"float\",\n  \"intermediate_data_type\""),
        "{json}"
    );
    assert!(json.contains("\n      \"compute_data_type\": \"float\",\n      \"inputs\": {\n        \"w_tensor_uid\": 2,"), "{json}");
    assert!(!json.contains('\t'));
}

#[test]
fn frontend_samples_round_trip_through_both_dialects() {
    let graphs = [
        frontend::conv_bias_relu(),
        frontend::pointwise_chain(5),
        frontend::resnet_bottleneck(1, 16, 8, DataType::Half, TensorLayout::ChannelsLast),
        frontend::resnet50_conv(2, frontend::RESNET50_CONVS[3], TensorLayout::ChannelsLast),
        frontend::resnet50(1),
        frontend::resnet50_scaled(1, 64, 8, TensorLayout::ChannelsLast),
    ];
    for graph in &graphs {
        assert_round_trips(graph, &graph.name);
    }
    for conv in frontend::RESNET50_CONVS {
        let graph = frontend::resnet50_conv(1, *conv, TensorLayout::Packed);
        assert_round_trips(&graph, conv.0);
    }
}

#[test]
fn example_graphs_round_trip_through_both_dialects() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/graphs");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let graph = Graph::from_flatc_json(&text).unwrap_or_else(|e| panic!("{path:?}: {e}"));
        assert_round_trips(&graph, &path.display().to_string());
        seen += 1;
    }
    assert!(seen >= 6, "{seen} example graphs");
}

/// Graph-level fields upstream writes only when present, the tensor value union, and
/// the extra keys for fields upstream's dialect does not carry.
#[test]
fn graph_fields_scalars_and_extras_round_trip() {
    let mut graph = validated(samples::conv_bias_relu());
    graph.preferred_engine_id = Some(-42);
    graph.is_override_shape_enabled = true;
    graph.min_required_engine_api_version = Some(EngineApiVersion::new(1, 3, 0));
    graph.id = Some(Uuid([
        0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0x4d, 0xef, 0x80, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66,
        0x77,
    ]));
    graph.tensors[0].ragged_offset_tensor_uid = Some(4);
    graph.tensors[0].ragged_offset_multiplier = 3;
    graph.tensors[1].alignment = 64;
    let values = [
        TensorValue::Float32(1.5),
        TensorValue::Float16(-2.0),
        TensorValue::BFloat16(0.25),
        TensorValue::Float8(0x38),
        TensorValue::Int32(-7),
        TensorValue::Float64(1e-300),
        TensorValue::Int64(i64::MIN),
        TensorValue::Bool(true),
    ];
    let value: Value = serde_json::from_str(&graph.to_upstream_json()).unwrap();
    assert_eq!(value["id"], "12345678-9abc-4def-8011-223344556677");
    assert_eq!(value["preferred_engine_id"], -42);
    assert_eq!(
        value["min_required_engine_api_version"],
        serde_json::json!({"major": 1, "minor": 3, "patch": 0})
    );
    assert_eq!(value["tensors"][0]["ragged_offset_multiplier"], 3);
    assert!(
        value["tensors"][1]
            .get("ragged_offset_multiplier")
            .is_none()
    );
    for v in values {
        graph.tensors[3].value = Some(v);
        graph.tensors[3].is_runtime_pass_by_value = matches!(v, TensorValue::Bool(_));
        assert_round_trips(&graph, &format!("{v:?}"));
    }
    graph.tensors[3].value = Some(TensorValue::Int32(5));
    let value: Value = serde_json::from_str(&graph.to_upstream_json()).unwrap();
    assert_eq!(value["tensors"][3]["value_type"], "Int32Value");
    assert_eq!(value["tensors"][3]["value"], 5);
}

fn upstream_error(text: &str) -> String {
    Graph::from_json(text).unwrap_err().to_string()
}

fn hand_written() -> String {
    std::fs::read_to_string(data("conv_bias_relu.upstream.json")).unwrap()
}

#[test]
fn a_node_type_outside_upstreams_dialect_is_named() {
    let text = hand_written().replacen(
        "\"type\": \"ConvolutionFwdAttributes\"",
        "\"type\": \"PoolingFwdAttributes\"",
        1,
    );
    let error = upstream_error(&text);
    assert!(
        error.contains("node 0 (\"conv\"): node type \"PoolingFwdAttributes\" is not part of upstream's graph JSON dialect"),
        "{error}"
    );
}

#[test]
fn upstream_errors_name_the_node_tensor_and_key() {
    let text = hand_written();
    let error = upstream_error(&text.replacen("\"x_tensor_uid\": 1,", "", 1));
    assert!(
        error.contains(
            "node 0 (\"conv\"), ConvolutionFwdAttributes: `inputs.x_tensor_uid` is missing"
        ),
        "{error}"
    );
    let error = upstream_error(&text.replacen(
        "\"w_tensor_uid\": 2",
        "\"w_tensor_uid\": 2, \"bias_tensor_uid\": 7",
        1,
    ));
    assert!(
        error.contains("unknown key `inputs.bias_tensor_uid`"),
        "{error}"
    );
    let error = upstream_error(&text.replacen("\"relu_fwd\"", "\"relu_sideways\"", 1));
    assert!(
        error.contains("node 2 (\"relu\")") && error.contains("RELU_SIDEWAYS"),
        "{error}"
    );
    let error =
        upstream_error(&text.replacen("\"data_type\": \"float\"", "\"data_type\": \"quad\"", 1));
    assert!(
        error.contains("tensor uid 1: `data_type`: unknown data type \"quad\""),
        "{error}"
    );
    let error = upstream_error(&text.replacen("\"virtual\": false", "\"virtaul\": false", 1));
    assert!(
        error.contains("tensor uid 1: unknown key `virtaul`"),
        "{error}"
    );
    let error = upstream_error(&text.replacen(
        "\"is_override_shape_enabled\": false",
        "\"is_override_shape_enabled\": false, \"id\": \"1234\"",
        1,
    ));
    assert!(error.contains("`id` \"1234\" is not a UUID"), "{error}");
    assert!(
        error.starts_with("invalid graph JSON (upstream dialect): "),
        "{error}"
    );
}

/// What upstream leaves to defaults may be left out; `null` optionals may be missing.
#[test]
fn upstream_reader_takes_defaults_for_keys_left_out() {
    let text = r#"{
      "name": "relu",
      "io_data_type": "float", "compute_data_type": "float", "intermediate_data_type": "float",
      "tensors": [
        { "uid": 1, "name": "x", "data_type": "float", "dims": [4], "strides": [1] },
        { "uid": 2, "name": "y", "data_type": "float", "dims": [4], "strides": [1] }
      ],
      "nodes": [
        { "name": "relu", "type": "PointwiseAttributes", "compute_data_type": "float",
          "inputs": { "operation": "relu_fwd", "in_0_tensor_uid": 1 },
          "outputs": { "out_0_tensor_uid": 2 } }
      ]
    }"#;
    let graph = Graph::from_json(text).unwrap();
    assert_eq!(graph.tensors[0].alignment, 16);
    assert!(!graph.tensors[1].is_virtual);
    let mut expected = graph.clone();
    expected.validate().unwrap();
    assert_round_trips(&expected, "relu");
}
