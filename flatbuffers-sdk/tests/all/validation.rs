//! Graph validation: the owned form (`model::Graph::validate`, which also sorts and
//! fills data types) and received bytes (`GraphView::validate`). Errors must name the
//! node and the tensor uid at fault.

use hipdnn_data_sdk::{DataType, TensorLayout, packed_strides};
use hipdnn_flatbuffers_sdk::model::{Graph, Node, PointwiseAttributes, TensorAttributes};
use hipdnn_flatbuffers_sdk::{GraphError, GraphView, TensorValue, wire};

use crate::samples;

fn tensor(uid: i64, name: &str, dims: &[i64], is_virtual: bool) -> TensorAttributes {
    TensorAttributes {
        uid,
        name: name.into(),
        strides: packed_strides(dims, TensorLayout::Packed).unwrap(),
        dims: dims.to_vec(),
        is_virtual,
        ..TensorAttributes::default()
    }
}

fn unary(name: &str, input: i64, output: i64) -> Node {
    Node::new(
        name,
        PointwiseAttributes {
            operation: wire::PointwiseMode::RELU_FWD,
            in_0_tensor_uid: input,
            out_0_tensor_uid: output,
            ..PointwiseAttributes::default()
        },
    )
}

fn binary(name: &str, a: i64, b: i64, output: i64) -> Node {
    Node::new(
        name,
        PointwiseAttributes {
            operation: wire::PointwiseMode::ADD,
            in_0_tensor_uid: a,
            in_1_tensor_uid: Some(b),
            out_0_tensor_uid: output,
            ..PointwiseAttributes::default()
        },
    )
}

fn graph(tensors: Vec<TensorAttributes>, nodes: Vec<Node>) -> Graph {
    Graph {
        name: "test".into(),
        compute_data_type: DataType::Float,
        intermediate_data_type: DataType::Float,
        io_data_type: DataType::Float,
        tensors,
        nodes,
        ..Graph::default()
    }
}

fn node_names(g: &Graph) -> Vec<&str> {
    g.nodes.iter().map(|n| n.name.as_str()).collect()
}

/// Validates `g` in both forms: the owned graph (which must be left unchanged by the
/// error) and its bytes through a view. Both must report `expected`, and the message
/// must contain every string in `mentions`.
fn expect_error(g: &Graph, expected: &GraphError, mentions: &[&str]) {
    let mut owned = g.clone();
    let err = owned
        .validate()
        .expect_err("model validation accepted an invalid graph");
    assert_eq!(&err, expected, "model::Graph::validate");
    assert_eq!(&owned, g, "validate changed the graph although it failed");

    let bytes = g.to_bytes();
    let view = GraphView::from_bytes(&bytes).expect("a graph built by the model verifies");
    let err = view
        .validate()
        .expect_err("view validation accepted an invalid graph");
    assert_eq!(&err, expected, "GraphView::validate");

    let message = err.to_string();
    for m in mentions {
        assert!(message.contains(m), "{message:?} does not mention {m:?}");
    }
}

fn validate_both(g: &mut Graph) {
    let before = g.to_bytes();
    GraphView::from_bytes(&before).unwrap().validate().unwrap();
    g.validate().unwrap();
    let after = g.to_bytes();
    let view = GraphView::from_bytes(&after).unwrap();
    view.validate().unwrap();
    assert_eq!(&view.to_model().unwrap(), g);
}

// ---------------------------------------------------------------------------------------
// Valid graphs.
// ---------------------------------------------------------------------------------------

#[test]
fn conv_bias_relu_is_valid() {
    let mut g = samples::conv_bias_relu();
    validate_both(&mut g);
    assert_eq!(node_names(&g), ["conv", "bias", "relu"]);
    assert!(g.tensors.iter().all(|t| t.data_type == DataType::Float));
    assert!(
        g.nodes
            .iter()
            .all(|n| n.compute_data_type == DataType::Float)
    );
}

#[test]
fn pointwise_chain_is_valid() {
    let mut g = samples::pointwise_chain(1000);
    let before = g.clone();
    validate_both(&mut g);
    assert_eq!(g.nodes.len(), 1000);
    assert_eq!(g.tensors.len(), 1001);
    // Already sorted: the order is kept.
    assert_eq!(node_names(&g), node_names(&before));
}

#[test]
fn resnet50_is_valid() {
    let mut g = samples::resnet50(1);
    let before = g.clone();
    validate_both(&mut g);
    assert_eq!(node_names(&g), node_names(&before));
    let count = |t: &str| {
        g.nodes
            .iter()
            .filter(|n| n.attributes.type_name() == t)
            .count()
    };
    assert_eq!(count("ConvolutionFwdAttributes"), 54);
    assert_eq!(count("BatchnormInferenceAttributes"), 53);
    assert_eq!(count("ResampleFwdAttributes"), 2);
    let pointwise = |mode| {
        g.nodes
            .iter()
            .filter(|n| matches!(&n.attributes, hipdnn_flatbuffers_sdk::model::NodeAttributes::PointwiseAttributes(p) if p.operation == mode))
            .count()
    };
    assert_eq!(pointwise(wire::PointwiseMode::RELU_FWD), 49);
    assert_eq!(pointwise(wire::PointwiseMode::ADD), 17);
}

#[test]
fn single_node_graph_is_valid() {
    let mut g = graph(
        vec![
            tensor(1, "x", &[1, 8], false),
            tensor(2, "y", &[1, 8], false),
        ],
        vec![unary("relu", 1, 2)],
    );
    validate_both(&mut g);
}

#[test]
fn graph_reading_a_scalar_is_valid() {
    let mut alpha = tensor(2, "alpha", &[1], false);
    alpha.value = Some(TensorValue::Float32(0.5));
    let mut g = graph(
        vec![
            tensor(1, "x", &[1, 8], false),
            alpha,
            tensor(3, "y", &[1, 8], false),
        ],
        vec![binary("scale", 1, 2, 3)],
    );
    validate_both(&mut g);
}

// ---------------------------------------------------------------------------------------
// Ordering.
// ---------------------------------------------------------------------------------------

#[test]
fn validate_sorts_a_shuffled_graph() {
    let mut g = samples::conv_bias_relu();
    g.nodes.reverse();
    assert_eq!(node_names(&g), ["relu", "bias", "conv"]);
    let unsorted = g.to_bytes();

    g.validate().unwrap();
    assert_eq!(node_names(&g), ["conv", "bias", "relu"]);
    GraphView::from_bytes(&g.to_bytes())
        .unwrap()
        .validate()
        .unwrap();

    // Received bytes must already be sorted.
    let err = GraphView::from_bytes(&unsorted)
        .unwrap()
        .validate()
        .unwrap_err();
    assert_eq!(
        err,
        GraphError::NotSorted {
            node: 0,
            name: "relu".into(),
            uid: 5,
            writer: 1,
            writer_name: "bias".into()
        }
    );
    let message = err.to_string();
    for m in ["\"relu\"", "uid 5", "\"bias\""] {
        assert!(message.contains(m), "{message:?} does not mention {m:?}");
    }
}

#[test]
fn validate_sort_is_stable_and_deterministic() {
    // Two independent branches joined at the end: ties keep their relative order.
    let mut g = graph(
        vec![
            tensor(1, "x", &[1, 8], false),
            tensor(2, "a", &[1, 8], true),
            tensor(3, "b", &[1, 8], true),
            tensor(4, "y", &[1, 8], false),
        ],
        vec![
            binary("join", 2, 3, 4),
            unary("left", 1, 2),
            unary("right", 1, 3),
        ],
    );
    g.validate().unwrap();
    assert_eq!(node_names(&g), ["left", "right", "join"]);

    let mut g2 = graph(
        g.tensors.clone(),
        vec![
            unary("right", 1, 3),
            binary("join", 2, 3, 4),
            unary("left", 1, 2),
        ],
    );
    g2.validate().unwrap();
    assert_eq!(node_names(&g2), ["right", "left", "join"]);
}

#[test]
fn not_sorted_names_the_first_unsorted_reader() {
    // conv, relu, bias: relu (node 1) reads bias_out (uid 5) written by bias (node 2).
    let mut g = samples::conv_bias_relu();
    g.nodes.swap(1, 2);
    let bytes = g.to_bytes();
    let err = GraphView::from_bytes(&bytes)
        .unwrap()
        .validate()
        .unwrap_err();
    assert_eq!(
        err,
        GraphError::NotSorted {
            node: 1,
            name: "relu".into(),
            uid: 5,
            writer: 2,
            writer_name: "bias".into()
        }
    );
    g.validate().unwrap();
    assert_eq!(node_names(&g), ["conv", "bias", "relu"]);
}

// ---------------------------------------------------------------------------------------
// Uids.
// ---------------------------------------------------------------------------------------

#[test]
fn duplicate_uid() {
    let mut g = samples::conv_bias_relu();
    g.tensors[5].uid = 1; // "y" takes "x"'s uid
    expect_error(
        &g,
        &GraphError::DuplicateUid {
            uid: 1,
            first: "x".into(),
            second: "y".into(),
        },
        &["uid 1", "\"x\"", "\"y\""],
    );
}

#[test]
fn unknown_uid_read() {
    let mut g = samples::conv_bias_relu();
    if let hipdnn_flatbuffers_sdk::model::NodeAttributes::PointwiseAttributes(p) =
        &mut g.nodes[1].attributes
    {
        p.in_1_tensor_uid = Some(99);
    }
    expect_error(
        &g,
        &GraphError::UnknownUid {
            node: 1,
            name: "bias".into(),
            role: "reads",
            uid: 99,
        },
        &["\"bias\"", "reads", "uid 99"],
    );
}

#[test]
fn unknown_uid_written() {
    let mut g = samples::conv_bias_relu();
    if let hipdnn_flatbuffers_sdk::model::NodeAttributes::PointwiseAttributes(p) =
        &mut g.nodes[2].attributes
    {
        p.out_0_tensor_uid = 77;
    }
    expect_error(
        &g,
        &GraphError::UnknownUid {
            node: 2,
            name: "relu".into(),
            role: "writes",
            uid: 77,
        },
        &["\"relu\"", "writes", "uid 77"],
    );
}

#[test]
fn dangling_tensor() {
    let mut g = samples::conv_bias_relu();
    g.tensors.push(tensor(7, "unused", &[1, 4], false));
    expect_error(
        &g,
        &GraphError::DanglingTensor {
            uid: 7,
            name: "unused".into(),
        },
        &["uid 7", "\"unused\""],
    );
}

#[test]
fn two_writers_of_one_tensor() {
    let mut g = samples::conv_bias_relu();
    g.nodes.push(unary("relu2", 5, 6));
    expect_error(
        &g,
        &GraphError::MultipleWriters {
            uid: 6,
            tensor: "y".into(),
            first: "relu".into(),
            second: "relu2".into(),
        },
        &["uid 6", "\"y\"", "\"relu\"", "\"relu2\""],
    );
}

#[test]
fn node_writing_a_scalar() {
    let mut g = samples::conv_bias_relu();
    g.tensors[5].value = Some(TensorValue::Float32(0.0));
    expect_error(
        &g,
        &GraphError::WritesScalar {
            node: "relu".into(),
            uid: 6,
            tensor: "y".into(),
        },
        &["\"relu\"", "uid 6", "\"y\""],
    );
}

// ---------------------------------------------------------------------------------------
// Virtual tensors.
// ---------------------------------------------------------------------------------------

#[test]
fn virtual_tensor_without_writer() {
    let mut g = samples::conv_bias_relu();
    g.tensors[0].is_virtual = true; // "x", read by conv, written by nobody
    expect_error(
        &g,
        &GraphError::VirtualWithoutWriter {
            uid: 1,
            tensor: "x".into(),
            node: "conv".into(),
        },
        &["uid 1", "\"x\"", "\"conv\""],
    );
}

#[test]
fn virtual_tensor_without_reader() {
    let mut g = samples::conv_bias_relu();
    g.tensors[5].is_virtual = true; // "y", written by relu, read by nobody
    expect_error(
        &g,
        &GraphError::VirtualWithoutReader {
            uid: 6,
            tensor: "y".into(),
            node: "relu".into(),
        },
        &["uid 6", "\"y\"", "\"relu\""],
    );
}

// ---------------------------------------------------------------------------------------
// Structure.
// ---------------------------------------------------------------------------------------

/// The cycle's node names, without the quotes the error puts around them.
fn cycle_nodes(err: &GraphError) -> Vec<String> {
    match err {
        GraphError::Cycle { nodes } => nodes
            .iter()
            .map(|n| n.trim_matches('"').to_owned())
            .collect(),
        other => panic!("expected a cycle, got {other:?}"),
    }
}

fn expect_cycle(g: &Graph, members: &[&str]) {
    let mut owned = g.clone();
    let err = owned.validate().unwrap_err();
    assert_eq!(&owned, g, "validate changed the graph although it failed");
    let bytes = g.to_bytes();
    let view_err = GraphView::from_bytes(&bytes)
        .unwrap()
        .validate()
        .unwrap_err();
    assert_eq!(err, view_err);

    let nodes = cycle_nodes(&err);
    assert_eq!(
        nodes.first(),
        nodes.last(),
        "the first node is repeated at the end: {nodes:?}"
    );
    let mut on_cycle: Vec<&str> = nodes[..nodes.len() - 1]
        .iter()
        .map(String::as_str)
        .collect();
    on_cycle.sort_unstable();
    let mut expected = members.to_vec();
    expected.sort_unstable();
    assert_eq!(on_cycle, expected);
    let message = err.to_string();
    for m in members {
        assert!(
            message.contains(&format!("\"{m}\"")),
            "{message:?} does not mention {m:?}"
        );
    }
}

#[test]
fn two_node_cycle() {
    let g = graph(
        vec![
            tensor(1, "t1", &[1, 8], false),
            tensor(2, "t2", &[1, 8], false),
        ],
        vec![unary("a", 1, 2), unary("b", 2, 1)],
    );
    expect_cycle(&g, &["a", "b"]);
}

#[test]
fn cycle_behind_a_source_lists_only_its_nodes() {
    let g = graph(
        vec![
            tensor(1, "x", &[1, 8], false),
            tensor(2, "t1", &[1, 8], true),
            tensor(3, "t2", &[1, 8], true),
            tensor(4, "t3", &[1, 8], true),
            tensor(5, "y", &[1, 8], false),
        ],
        vec![
            unary("src", 1, 2),
            binary("a", 2, 4, 3),
            unary("b", 3, 4),
            unary("sink", 3, 5),
        ],
    );
    expect_cycle(&g, &["a", "b"]);
}

#[test]
fn three_node_cycle() {
    let g = graph(
        vec![
            tensor(1, "t1", &[1, 8], false),
            tensor(2, "t2", &[1, 8], false),
            tensor(3, "t3", &[1, 8], false),
        ],
        vec![unary("a", 1, 2), unary("b", 2, 3), unary("c", 3, 1)],
    );
    expect_cycle(&g, &["a", "b", "c"]);
}

#[test]
fn self_loop() {
    // "loop" reads and writes uid 2.
    let g = graph(
        vec![
            tensor(1, "x", &[1, 8], false),
            tensor(2, "acc", &[1, 8], false),
        ],
        vec![binary("loop", 1, 2, 2)],
    );
    expect_cycle(&g, &["loop"]);
}

#[test]
fn disconnected_graph() {
    let mut g = samples::conv_bias_relu();
    g.tensors.push(tensor(10, "p", &[1, 8], false));
    g.tensors.push(tensor(11, "q", &[1, 8], true));
    g.tensors.push(tensor(12, "r", &[1, 8], false));
    g.nodes.push(unary("lonely0", 10, 11));
    g.nodes.push(unary("lonely1", 11, 12));
    expect_error(
        &g,
        &GraphError::Disconnected {
            node: 3,
            name: "lonely0".into(),
            first: "conv".into(),
        },
        &["\"lonely0\"", "\"conv\""],
    );
}

#[test]
fn nodes_sharing_only_an_input_are_connected() {
    let mut g = graph(
        vec![
            tensor(1, "x", &[1, 8], false),
            tensor(2, "a", &[1, 8], false),
            tensor(3, "b", &[1, 8], false),
        ],
        vec![unary("left", 1, 2), unary("right", 1, 3)],
    );
    validate_both(&mut g);
}

#[test]
fn empty_graph() {
    expect_error(&Graph::default(), &GraphError::NoNodes, &["no nodes"]);
    let mut g = samples::conv_bias_relu();
    g.nodes.clear();
    expect_error(&g, &GraphError::NoNodes, &["no nodes"]);
}

// ---------------------------------------------------------------------------------------
// Data types.
// ---------------------------------------------------------------------------------------

#[test]
fn unset_io_type_without_default() {
    let mut g = samples::conv_bias_relu();
    g.io_data_type = DataType::Unset;
    expect_error(
        &g,
        &GraphError::UnresolvedDataType {
            uid: 1,
            name: "x".into(),
            default: "io_data_type",
        },
        &["uid 1", "\"x\"", "io_data_type"],
    );
}

#[test]
fn unset_intermediate_type_without_default() {
    let mut g = samples::conv_bias_relu();
    g.intermediate_data_type = DataType::Unset;
    expect_error(
        &g,
        &GraphError::UnresolvedDataType {
            uid: 3,
            name: "conv_out".into(),
            default: "intermediate_data_type",
        },
        &["uid 3", "\"conv_out\"", "intermediate_data_type"],
    );
}

#[test]
fn explicit_types_need_no_default() {
    let mut g = samples::conv_bias_relu();
    g.io_data_type = DataType::Unset;
    g.intermediate_data_type = DataType::Unset;
    g.compute_data_type = DataType::Unset;
    for t in &mut g.tensors {
        t.data_type = DataType::Half;
    }
    validate_both(&mut g);
    assert!(g.tensors.iter().all(|t| t.data_type == DataType::Half));
    assert!(
        g.nodes
            .iter()
            .all(|n| n.compute_data_type == DataType::Unset)
    );
}

#[test]
fn unset_types_take_the_graph_defaults() {
    let mut g = samples::conv_bias_relu();
    g.io_data_type = DataType::Half;
    g.intermediate_data_type = DataType::Float;
    g.compute_data_type = DataType::Double;
    g.tensors[1].data_type = DataType::Bfloat16; // "w" keeps its own type
    g.nodes[1].compute_data_type = DataType::Float; // "bias" keeps its own type

    // A received graph may leave types to the defaults.
    let unresolved = g.to_bytes();
    let view = GraphView::from_bytes(&unresolved).unwrap();
    view.validate().unwrap();
    assert_eq!(view.tensor(1).unwrap().data_type(), DataType::Unset);

    g.validate().unwrap();
    let types: Vec<_> = g
        .tensors
        .iter()
        .map(|t| (t.name.as_str(), t.data_type))
        .collect();
    assert_eq!(
        types,
        [
            ("x", DataType::Half),
            ("w", DataType::Bfloat16),
            ("conv_out", DataType::Float),
            ("bias", DataType::Half),
            ("bias_out", DataType::Float),
            ("y", DataType::Half),
        ]
    );
    let compute: Vec<_> = g
        .nodes
        .iter()
        .map(|n| (n.name.as_str(), n.compute_data_type))
        .collect();
    assert_eq!(
        compute,
        [
            ("conv", DataType::Double),
            ("bias", DataType::Float),
            ("relu", DataType::Double)
        ]
    );

    let bytes = g.to_bytes();
    let view = GraphView::from_bytes(&bytes).unwrap();
    view.validate().unwrap();
    assert_eq!(view.tensor(1).unwrap().data_type(), DataType::Half);
    assert_eq!(view.tensor(3).unwrap().data_type(), DataType::Float);
    assert_eq!(
        view.nodes().next().unwrap().compute_data_type(),
        DataType::Double
    );
}

// ---------------------------------------------------------------------------------------
// Dims and strides.
// ---------------------------------------------------------------------------------------

fn expect_invalid_tensor(g: &Graph, uid: i64, name: &str) {
    let mut owned = g.clone();
    let err = owned.validate().unwrap_err();
    assert_eq!(&owned, g, "validate changed the graph although it failed");
    match &err {
        GraphError::InvalidTensor {
            uid: u,
            name: n,
            reason,
        } => {
            assert_eq!((*u, n.as_str()), (uid, name));
            assert!(!reason.is_empty());
        }
        other => panic!("expected InvalidTensor, got {other:?}"),
    }
    let message = err.to_string();
    assert!(
        message.contains(&format!("uid {uid}")) && message.contains(&format!("\"{name}\"")),
        "{message}"
    );

    let bytes = g.to_bytes();
    let view_err = GraphView::from_bytes(&bytes)
        .unwrap()
        .validate()
        .unwrap_err();
    assert_eq!(view_err, err);
}

#[test]
fn rank_mismatch() {
    let mut g = samples::conv_bias_relu();
    g.tensors[1].strides.pop(); // "w": 4 dims, 3 strides
    expect_invalid_tensor(&g, 2, "w");
}

#[test]
fn negative_stride() {
    let mut g = samples::conv_bias_relu();
    g.tensors[3].strides[1] = -1; // "bias"
    expect_invalid_tensor(&g, 4, "bias");
}

#[test]
fn zero_dim() {
    let mut g = samples::conv_bias_relu();
    g.tensors[2].dims[0] = 0; // "conv_out"
    expect_invalid_tensor(&g, 3, "conv_out");
}

#[test]
fn negative_dim() {
    let mut g = samples::conv_bias_relu();
    g.tensors[5].dims[3] = -8; // "y"
    expect_invalid_tensor(&g, 6, "y");
}

#[test]
fn empty_shape() {
    let mut g = samples::conv_bias_relu();
    g.tensors[0].dims.clear();
    g.tensors[0].strides.clear();
    expect_invalid_tensor(&g, 1, "x");
}

#[test]
fn overflowing_span() {
    let mut g = samples::conv_bias_relu();
    g.tensors[0].strides[0] = i64::MAX; // "x": (3 - 1) * i64::MAX overflows
    g.tensors[0].dims[0] = 3;
    expect_invalid_tensor(&g, 1, "x");
}

// ---------------------------------------------------------------------------------------
// Failure leaves the graph unchanged.
// ---------------------------------------------------------------------------------------

#[test]
fn failed_validation_leaves_the_graph_unchanged() {
    // Unsorted with unset types: a success would sort and fill types. A late failure
    // (bad dims on the last tensor, found after analysis and sorting) must undo nothing
    // because nothing was changed.
    let mut g = samples::conv_bias_relu();
    g.nodes.reverse();
    g.tensors[5].dims[0] = 0;
    let before = g.clone();
    assert!(matches!(
        g.validate(),
        Err(GraphError::InvalidTensor { uid: 6, .. })
    ));
    assert_eq!(g, before);

    // Unresolved type on the last tensor, after the others would have resolved.
    let mut g = samples::conv_bias_relu();
    g.nodes.reverse();
    g.intermediate_data_type = DataType::Unset;
    g.tensors[2].data_type = DataType::Float;
    let before = g.clone();
    assert!(matches!(
        g.validate(),
        Err(GraphError::UnresolvedDataType { uid: 5, .. })
    ));
    assert_eq!(g, before);

    // And a structural failure.
    let mut g = samples::conv_bias_relu();
    g.nodes.reverse();
    g.tensors.push(tensor(7, "unused", &[1], false));
    let before = g.clone();
    assert!(matches!(
        g.validate(),
        Err(GraphError::DanglingTensor { uid: 7, .. })
    ));
    assert_eq!(g, before);
}

#[test]
fn validation_is_idempotent() {
    let mut g = samples::resnet50(2);
    g.nodes.reverse();
    g.validate().unwrap();
    let once = g.clone();
    g.validate().unwrap();
    assert_eq!(g, once);
}
