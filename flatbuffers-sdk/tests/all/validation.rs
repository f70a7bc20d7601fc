//! Graph validation: the owned form (`model::Graph::validate`, which also sorts and
//! fills data types) and received bytes (`GraphView::validate`). Errors must name the
//! node and the tensor uid at fault.

use hipdnn_data_sdk::{DataType, TensorLayout, packed_strides};
use hipdnn_flatbuffers_sdk::model::{
    Graph, Node, NodeAttributes, PointwiseAttributes, RMSNormAttributes, ReductionAttributes,
    TensorAttributes,
};
use hipdnn_flatbuffers_sdk::{
    GraphError, GraphLimits, GraphView, MAX_GRAPH_ELEMENTS_ENV, MAX_TENSOR_ELEMENTS_ENV,
    MAX_TENSOR_RANK_ENV, TensorValue, wire,
};

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

/// A self-loop: "loop" reads and writes uid 2 (in-place `x == y`), refused naming the
/// node and the tensor rather than as a one-node cycle.
#[test]
fn in_place_node_is_refused_naming_the_node_and_tensor() {
    let g = graph(
        vec![
            tensor(1, "x", &[1, 8], false),
            tensor(2, "acc", &[1, 8], false),
        ],
        vec![binary("loop", 1, 2, 2)],
    );
    expect_error(
        &g,
        &GraphError::InPlace {
            node: 0,
            name: "loop".into(),
            uid: 2,
            tensor: "acc".into(),
        },
        &["\"loop\"", "uid 2", "in-place"],
    );
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

// ---------------------------------------------------------------------------------------
// Limits, aliasing outputs, alignments, modes and operands.
// ---------------------------------------------------------------------------------------

fn relu_graph(x: TensorAttributes, y: TensorAttributes) -> Graph {
    graph(vec![x, y], vec![unary("relu", 1, 2)])
}

fn with_layout(mut t: TensorAttributes, dims: &[i64], strides: &[i64]) -> TensorAttributes {
    t.dims = dims.to_vec();
    t.strides = strides.to_vec();
    t
}

/// Validates `g` in both forms under `limits`; both must agree.
fn validate_with(g: &Graph, limits: &GraphLimits) -> Result<(), GraphError> {
    let bytes = g.to_bytes();
    let view = GraphView::from_bytes(&bytes)
        .unwrap()
        .validate_with_limits(limits);
    let owned = g.clone().validate_with_limits(limits);
    assert_eq!(owned, view, "the model and the view disagree");
    owned
}

/// A 300-byte graph whose tensors have 2⁴⁰ logical elements (zero strides: one stored
/// element each) is refused by validation, before anything loops over them.
#[test]
fn a_huge_zero_stride_tensor_is_refused_before_any_allocation() {
    let side = 1 << 20;
    let g = relu_graph(
        with_layout(tensor(1, "x", &[1], false), &[side, side], &[0, 0]),
        with_layout(tensor(2, "y", &[1], false), &[side, side], &[0, 0]),
    );
    assert!(g.to_bytes().len() < 400);
    let start = std::time::Instant::now();
    expect_error(
        &g,
        &GraphError::TensorTooLarge {
            uid: 1,
            name: "x".into(),
            dims: vec![side, side],
            elements: 1 << 40,
            limit: GraphLimits::DEFAULT.max_tensor_elements,
        },
        &[
            "uid 1",
            "\"x\"",
            "1099511627776 elements",
            MAX_TENSOR_ELEMENTS_ENV,
        ],
    );
    assert!(start.elapsed().as_secs() < 1);
}

#[test]
fn a_tensor_above_the_rank_limit_is_refused() {
    let dims = vec![2; 40];
    let strides = packed_strides(&dims, TensorLayout::Packed).unwrap();
    let g = relu_graph(
        with_layout(tensor(1, "x", &[1], false), &dims, &strides),
        with_layout(tensor(2, "y", &[1], false), &dims, &strides),
    );
    expect_error(
        &g,
        &GraphError::RankTooHigh {
            uid: 1,
            name: "x".into(),
            rank: 40,
            limit: 8,
        },
        &["rank 40", MAX_TENSOR_RANK_ENV],
    );
    // Rank 8 is within the limit.
    let mut g = relu_graph(
        tensor(1, "x", &[1; 8], false),
        tensor(2, "y", &[1; 8], false),
    );
    validate_both(&mut g);
}

/// The limits are the caller's: lowered, a small graph is refused per tensor and per
/// graph; raised, a rank-9 graph passes.
#[test]
fn limits_are_overridable() {
    let g = relu_graph(
        tensor(1, "x", &[8, 8], false),
        tensor(2, "y", &[8, 8], false),
    );
    let tight = |tensor, graph| GraphLimits {
        max_rank: 8,
        max_tensor_elements: tensor,
        max_graph_elements: graph,
    };
    assert_eq!(validate_with(&g, &tight(64, 128)), Ok(()));
    assert!(matches!(
        validate_with(&g, &tight(63, 128)),
        Err(GraphError::TensorTooLarge {
            uid: 1,
            elements: 64,
            limit: 63,
            ..
        })
    ));
    let err = validate_with(&g, &tight(64, 127)).unwrap_err();
    assert_eq!(
        err,
        GraphError::GraphTooLarge {
            elements: 128,
            limit: 127
        }
    );
    assert!(err.to_string().contains(MAX_GRAPH_ELEMENTS_ENV), "{err}");

    let nine = relu_graph(
        tensor(1, "x", &[1; 9], false),
        tensor(2, "y", &[1; 9], false),
    );
    assert!(matches!(
        validate_with(&nine, &GraphLimits::DEFAULT),
        Err(GraphError::RankTooHigh { rank: 9, .. })
    ));
    let wide = GraphLimits {
        max_rank: 9,
        ..GraphLimits::DEFAULT
    };
    assert_eq!(validate_with(&nine, &wide), Ok(()));
}

/// Eight elements whose strides address 2³⁸ (a buffer of 1 TiB as FLOAT) are refused
/// like 2³⁸ elements: the buffer is what gets allocated. A virtual tensor's strides
/// address nothing, and count only its elements.
#[test]
fn huge_strides_on_a_tensor_with_a_buffer_are_refused() {
    let g = relu_graph(
        with_layout(tensor(1, "x", &[1], false), &[2, 4], &[1 << 38, 1]),
        tensor(2, "y", &[2, 4], false),
    );
    expect_error(
        &g,
        &GraphError::SpanTooLarge {
            uid: 1,
            name: "x".into(),
            span: (1 << 38) + 4,
            limit: GraphLimits::DEFAULT.max_tensor_elements,
        },
        &[
            "uid 1",
            "address 274877906948 elements",
            MAX_TENSOR_ELEMENTS_ENV,
        ],
    );
    // The extent counts toward the graph's total too.
    let g = relu_graph(
        with_layout(tensor(1, "x", &[1], false), &[2, 4], &[100, 1]),
        tensor(2, "y", &[2, 4], false),
    );
    let limits = |graph| GraphLimits {
        max_graph_elements: graph,
        ..GraphLimits::DEFAULT
    };
    assert_eq!(validate_with(&g, &limits(104 + 8)), Ok(()));
    assert!(matches!(
        validate_with(&g, &limits(104 + 7)),
        Err(GraphError::GraphTooLarge { elements: 112, .. })
    ));
    let mut g = graph(
        vec![
            tensor(1, "x", &[2, 4], false),
            with_layout(tensor(2, "t", &[1], true), &[2, 4], &[1 << 40, 1]),
            tensor(3, "y", &[2, 4], false),
        ],
        vec![unary("a", 1, 2), unary("b", 2, 3)],
    );
    validate_both(&mut g);
}

/// `y` strides `[0, 64, 8, 1]`: both batches would be written to the same place.
#[test]
fn aliasing_output_strides_are_refused() {
    let dims = [2, 1, 8, 8];
    let g = relu_graph(
        tensor(1, "x", &dims, false),
        with_layout(tensor(2, "y", &[1], false), &dims, &[0, 64, 8, 1]),
    );
    expect_error(
        &g,
        &GraphError::AliasingOutput {
            uid: 2,
            tensor: "y".into(),
            node: "relu".into(),
            layout: "dims [2, 1, 8, 8] and strides [0, 64, 8, 1]".into(),
            dim: 0,
        },
        &["uid 2", "\"y\"", "\"relu\"", "dimension 0"],
    );
    // Overlapping rows (stride 3 for rows of 4).
    let g = relu_graph(
        tensor(1, "x", &[3, 4], false),
        with_layout(tensor(2, "y", &[1], false), &[3, 4], &[3, 1]),
    );
    assert!(matches!(
        validate_with(&g, &GraphLimits::DEFAULT),
        Err(GraphError::AliasingOutput { uid: 2, dim: 0, .. })
    ));
}

/// Inputs may broadcast with zero strides; padded and permuted outputs are fine; a
/// virtual tensor has no memory, so its strides cannot alias anything.
#[test]
fn broadcast_inputs_and_padded_outputs_are_accepted() {
    let mut g = graph(
        vec![
            tensor(1, "x", &[2, 8], false),
            with_layout(tensor(2, "b", &[1], false), &[2, 8], &[0, 1]),
            with_layout(tensor(3, "sum", &[1], true), &[2, 8], &[0, 0]),
            with_layout(tensor(4, "y", &[1], false), &[2, 8], &[16, 1]),
            with_layout(tensor(5, "z", &[1], false), &[2, 8], &[1, 2]),
        ],
        vec![
            binary("add", 1, 2, 3),
            unary("relu", 3, 4),
            unary("relu2", 4, 5),
        ],
    );
    validate_both(&mut g);
}

#[test]
fn alignment_must_be_a_positive_power_of_two() {
    for alignment in [0, -16, 3, 48] {
        let mut x = tensor(1, "x", &[2, 8], false);
        x.alignment = alignment;
        let g = relu_graph(x, tensor(2, "y", &[2, 8], false));
        expect_error(
            &g,
            &GraphError::InvalidAlignment {
                uid: 1,
                name: "x".into(),
                alignment,
            },
            &["uid 1", &format!("alignment {alignment}"), "power of two"],
        );
    }
    for alignment in [1, 2, 64, 4096] {
        let mut x = tensor(1, "x", &[2, 8], false);
        x.alignment = alignment;
        let mut g = relu_graph(x, tensor(2, "y", &[2, 8], false));
        validate_both(&mut g);
    }
}

fn conv_mode_error(mode: wire::ConvMode) -> GraphError {
    let mut g = samples::conv_bias_relu();
    let NodeAttributes::ConvolutionFwdAttributes(conv) = &mut g.nodes[0].attributes else {
        panic!("node 0 is the convolution");
    };
    conv.conv_mode = mode;
    let err = validate_with(&g, &GraphLimits::DEFAULT).unwrap_err();
    let mut owned = g.clone();
    assert_eq!(owned.validate(), Err(err.clone()));
    err
}

/// `conv_mode` absent (UNSET) is refused rather than run as a cross-correlation.
#[test]
fn unset_conv_mode_is_refused_with_the_node_named() {
    let err = conv_mode_error(wire::ConvMode::UNSET);
    assert!(
        matches!(&err, GraphError::InvalidNode { node: 0, name, .. } if name == "conv"),
        "{err:?}"
    );
    let message = err.to_string();
    assert!(
        message.contains("\"conv\"") && message.contains("conv_mode is UNSET"),
        "{message}"
    );
    let message = conv_mode_error(wire::ConvMode(7)).to_string();
    assert!(
        message.contains("\"conv\"") && message.contains("conv_mode is 7"),
        "{message}"
    );
    // Both named modes are accepted.
    let mut g = samples::conv_bias_relu();
    if let NodeAttributes::ConvolutionFwdAttributes(conv) = &mut g.nodes[0].attributes {
        conv.conv_mode = wire::ConvMode::CONVOLUTION;
    }
    validate_both(&mut g);
}

fn pointwise_node(mode: wire::PointwiseMode, in_1: Option<i64>, in_2: Option<i64>) -> Graph {
    graph(
        vec![
            tensor(1, "a", &[2, 8], false),
            tensor(2, "b", &[2, 8], false),
            tensor(3, "c", &[2, 8], false),
            tensor(4, "y", &[2, 8], false),
        ],
        vec![Node::new(
            "pw",
            PointwiseAttributes {
                operation: mode,
                in_0_tensor_uid: 1,
                in_1_tensor_uid: in_1,
                in_2_tensor_uid: in_2,
                out_0_tensor_uid: 4,
                ..PointwiseAttributes::default()
            },
        )],
    )
}

/// RELU with an `in_1`, ADD with an `in_2` or without `in_1`, BINARY_SELECT without
/// its mask, and an UNSET or unknown operation: each refused naming the node.
#[test]
fn extra_and_missing_pointwise_operands_are_refused_with_the_node_named() {
    use wire::PointwiseMode as M;
    let cases = [
        (
            M::RELU_FWD,
            Some(2),
            None,
            "RELU_FWD takes 1 input (in_0), but in_1 is set (uid 2)",
        ),
        (
            M::ADD,
            Some(2),
            Some(3),
            "ADD takes 2 inputs (in_0, in_1), but in_2 is set (uid 3)",
        ),
        (
            M::ADD,
            None,
            None,
            "ADD takes 2 inputs (in_0, in_1), but in_1 is missing",
        ),
        (M::BINARY_SELECT, Some(2), None, "but in_2 is missing"),
        (M::UNSET, None, None, "operation is UNSET"),
        (M(99), None, None, "operation is 99"),
    ];
    for (mode, in_1, in_2, needle) in cases {
        let mut g = pointwise_node(mode, in_1, in_2);
        // Keep every declared tensor used, so that the operands are what is wrong.
        for uid in [2, 3] {
            if in_1 != Some(uid) && in_2 != Some(uid) {
                g.tensors.retain(|t| t.uid != uid);
            }
        }
        let err = validate_with(&g, &GraphLimits::DEFAULT).unwrap_err();
        assert!(
            matches!(&err, GraphError::InvalidNode { node: 0, name, .. } if name == "pw"),
            "{mode:?}: {err:?}"
        );
        let message = err.to_string();
        assert!(
            message.starts_with("node 0 (\"pw\"): ") && message.contains(needle),
            "{message}"
        );
    }
    let mut g = pointwise_node(M::BINARY_SELECT, Some(2), Some(3));
    validate_both(&mut g);
}

/// Reduction modes and normalization phases left NOT_SET are refused like conv modes.
#[test]
fn unset_reduction_mode_and_norm_phase_are_refused_with_the_node_named() {
    let reduction = graph(
        vec![
            tensor(1, "x", &[2, 8], false),
            tensor(2, "y", &[2, 1], false),
        ],
        vec![Node::new(
            "sum",
            ReductionAttributes {
                mode: wire::ReductionMode::NOT_SET,
                in_tensor_uid: 1,
                out_tensor_uid: 2,
                ..ReductionAttributes::default()
            },
        )],
    );
    let message = validate_with(&reduction, &GraphLimits::DEFAULT)
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("\"sum\"") && message.contains("mode is NOT_SET"),
        "{message}"
    );
    let rms = graph(
        vec![
            tensor(1, "x", &[2, 8], false),
            tensor(2, "scale", &[1, 8], false),
            tensor(3, "eps", &[1], false),
            tensor(4, "y", &[2, 8], false),
        ],
        vec![Node::new(
            "rms",
            RMSNormAttributes {
                x_tensor_uid: 1,
                scale_tensor_uid: 2,
                epsilon_tensor_uid: 3,
                y_tensor_uid: 4,
                forward_phase: wire::NormFwdPhase::NOT_SET,
                ..RMSNormAttributes::default()
            },
        )],
    );
    let message = validate_with(&rms, &GraphLimits::DEFAULT)
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("\"rms\"") && message.contains("forward_phase is NOT_SET"),
        "{message}"
    );
}
