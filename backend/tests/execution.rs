//! Graphs through the backend and a real plugin: applicable engines, ranking, details,
//! knob checks, plans, execution with a variant pack — and every kind of bad input
//! refused, with nothing executed. The plugin is the SDK's example ReLU engine (host
//! `f32` buffers, knob `example.relu.negative_slope` in [0, 1]); `bad_details` returns
//! malformed engine details.

use std::ffi::c_void;

use hipdnn_backend::execution::ENGINE_ORDER_ENV;
use hipdnn_backend::status::*;
use hipdnn_backend::{Handle, MemoryKind, OperationGraph, VariantPack};
use hipdnn_data_sdk::{DataType, engine_name_to_id};
use hipdnn_flatbuffers_sdk::model::{
    ConvolutionFwdAttributes, EngineApiVersion, Graph, KnobSetting, KnobValue, Node,
    PointwiseAttributes, SerializedGraphAndPlan, TensorAttributes,
};
use hipdnn_flatbuffers_sdk::wire::{ConvMode, PointwiseMode};

mod support;
use support::capi::{serial, use_only};
use support::install;

const RELU: &str = "EXAMPLE_RELU_ENGINE";
const SLOPE: &str = "example.relu.negative_slope";

fn tensor(uid: i64, name: &str, dims: &[i64], is_virtual: bool) -> TensorAttributes {
    let mut strides = vec![1; dims.len()];
    for i in (0..dims.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * dims[i + 1];
    }
    TensorAttributes {
        uid,
        name: name.to_owned(),
        data_type: DataType::Float,
        dims: dims.to_vec(),
        strides,
        is_virtual,
        ..TensorAttributes::default()
    }
}

fn pointwise(name: &str, mode: PointwiseMode, x: i64, y: i64) -> Node {
    Node::new(
        name,
        PointwiseAttributes {
            operation: mode,
            in_0_tensor_uid: x,
            out_0_tensor_uid: y,
            ..PointwiseAttributes::default()
        },
    )
}

/// `y = relu(x)` over 8 floats (uids 1 → 2).
fn relu_graph() -> Graph {
    Graph {
        name: "relu".to_owned(),
        io_data_type: DataType::Float,
        compute_data_type: DataType::Float,
        tensors: vec![
            tensor(1, "x", &[2, 4], false),
            tensor(2, "y", &[2, 4], false),
        ],
        nodes: vec![pointwise("act", PointwiseMode::RELU_FWD, 1, 2)],
        ..Graph::default()
    }
}

const X: [f32; 8] = [-2.0, -1.0, 0.0, 1.0, 2.0, -0.5, 3.0, -4.0];

/// Tensors are 16-byte aligned unless the graph says otherwise: buffers must be too.
#[repr(align(64))]
#[derive(Clone, Copy)]
struct Aligned<T>(T);

fn run(
    plan: &hipdnn_backend::Plan<'_>,
    x: &mut Aligned<[f32; 8]>,
    y: &mut Aligned<[f32; 8]>,
) -> BackendResult<()> {
    let (x, y) = (&mut x.0, &mut y.0);
    let pack = VariantPack::new()
        .with(1, x.as_mut_ptr().cast())
        .with(2, y.as_mut_ptr().cast());
    // SAFETY: host buffers of the graph's 8 floats, distinct.
    unsafe { plan.execute(&pack, std::ptr::null_mut()) }
}

#[test]
fn a_graph_runs_through_the_backend_with_knobs() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    install(dir.path(), &["good_plugin"]);
    use_only(dir.path());
    let handle = Handle::new();
    let graph = OperationGraph::new(relu_graph()).unwrap();

    let ranked = handle.ranked_engines(&graph).unwrap();
    assert_eq!(ranked.len(), 1);
    assert_eq!(ranked[0].name, RELU);
    assert_eq!(ranked[0].plugin_name, "example_relu_plugin");
    let id = ranked[0].id;
    assert_eq!(id, engine_name_to_id(RELU));

    let details = handle.engine_details(id, &graph).unwrap();
    let ids: Vec<&str> = details.knobs.iter().map(|k| k.knob_id.as_str()).collect();
    assert_eq!(ids, [SLOPE]);
    assert_eq!(
        MemoryKind::from_behavior_notes(&details.behavior_notes),
        MemoryKind::Host
    );

    // Defaults: slope 0.
    let plan = handle.build_plan(&graph, &[]).unwrap();
    assert_eq!(plan.engine_id(), id);
    assert_eq!(plan.memory_kind(), MemoryKind::Host);
    assert_eq!(plan.workspace_size(), 0);
    assert_eq!(plan.required_uids().collect::<Vec<_>>(), [1, 2]);
    let (mut x, mut y) = (Aligned(X), Aligned([f32::NAN; 8]));
    run(&plan, &mut x, &mut y).unwrap();
    let expected: Vec<f32> = X.iter().map(|&v| v.max(0.0)).collect();
    assert_eq!(y.0.to_vec(), expected);

    // A knob setting reaches the plugin.
    let slope = KnobSetting {
        knob_id: SLOPE.to_owned(),
        value: KnobValue::Float(0.25),
    };
    let plan = handle.create_plan(&graph, id, &[slope]).unwrap();
    run(&plan, &mut x, &mut y).unwrap();
    let expected: Vec<f32> = X
        .iter()
        .map(|&v| if v > 0.0 { v } else { 0.25 * v })
        .collect();
    assert_eq!(y.0.to_vec(), expected);

    // Unknown knobs are ignored (warning), not errors.
    let unknown = KnobSetting {
        knob_id: "example.relu.nonexistent".to_owned(),
        value: KnobValue::Int(3),
    };
    assert!(handle.create_plan(&graph, id, &[unknown]).is_ok());
}

#[test]
fn bad_knob_settings_name_the_knob() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    install(dir.path(), &["good_plugin"]);
    use_only(dir.path());
    let handle = Handle::new();
    let graph = OperationGraph::new(relu_graph()).unwrap();
    let id = engine_name_to_id(RELU);
    for (value, reason) in [
        (KnobValue::Float(1.5), "1.5"),
        (KnobValue::Int(1), "int64"),
        (KnobValue::String("steep".to_owned()), "string"),
    ] {
        let setting = KnobSetting {
            knob_id: SLOPE.to_owned(),
            value,
        };
        let error = handle
            .create_plan(&graph, id, std::slice::from_ref(&setting))
            .unwrap_err();
        assert_eq!(error.status, HIPDNN_STATUS_BAD_PARAM, "{error:?}");
        assert!(
            error.message.contains(SLOPE) && error.message.contains(reason),
            "{error:?}"
        );
        // build_plan stops at an invalid setting rather than trying other engines.
        let error = handle.build_plan(&graph, &[setting]).unwrap_err();
        assert_eq!(error.status, HIPDNN_STATUS_BAD_PARAM);
    }
    let error = handle.create_plan(&graph, 12345, &[]).unwrap_err();
    assert_eq!(error.status, HIPDNN_STATUS_BAD_PARAM);
    assert!(
        error.message.contains("0x"),
        "names the engine id: {error:?}"
    );
}

#[test]
fn bad_variant_packs_are_refused_before_anything_runs() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    install(dir.path(), &["good_plugin"]);
    use_only(dir.path());
    let handle = Handle::new();
    let graph = OperationGraph::new(relu_graph()).unwrap();
    let plan = handle.build_plan(&graph, &[]).unwrap();
    let mut x = Aligned(X);
    let mut y = Aligned([7.0f32; 8]);
    let xp: *mut c_void = x.0.as_mut_ptr().cast();
    let yp: *mut c_void = y.0.as_mut_ptr().cast();
    let mut bytes = Aligned([0u8; 64]);
    // SAFETY: four bytes into a live buffer: aligned for f32, not to 16 bytes.
    let misaligned: *mut c_void = unsafe { bytes.0.as_mut_ptr().add(4) }.cast();

    let cases: Vec<(VariantPack, hipdnnStatus_t, &str)> = vec![
        (
            VariantPack::new().with(1, xp),
            HIPDNN_STATUS_BAD_PARAM,
            "no pointer for tensor uid 2 ('y')",
        ),
        (
            VariantPack::new().with(1, xp).with(2, std::ptr::null_mut()),
            HIPDNN_STATUS_BAD_PARAM_NULL_POINTER,
            "tensor uid 2 ('y') is null",
        ),
        (
            VariantPack::new().with(1, xp).with(2, misaligned),
            HIPDNN_STATUS_BAD_PARAM,
            "not aligned to 16 bytes",
        ),
        (
            VariantPack::new().with(1, xp).with(2, yp).with(9, yp),
            HIPDNN_STATUS_BAD_PARAM,
            "no tensor uid 9",
        ),
    ];
    for (pack, status, needle) in cases {
        // SAFETY: the pointers are valid or refused before use.
        let error = unsafe { plan.execute(&pack, std::ptr::null_mut()) }.unwrap_err();
        assert_eq!(error.status, status, "{error:?}");
        assert!(
            error.message.contains(needle),
            "{needle:?} not in {error:?}"
        );
        assert_eq!(y.0, [7.0; 8], "nothing ran");
    }
}

#[test]
fn unsupported_and_invalid_graphs_say_why() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    install(dir.path(), &["good_plugin"]);
    use_only(dir.path());
    let handle = Handle::new();

    // Two ReLUs: each is supported alone, the chain is not (the example runs one node).
    let mut chain = relu_graph();
    chain.tensors[1].is_virtual = true;
    chain.tensors.push(tensor(3, "z", &[2, 4], false));
    chain
        .nodes
        .push(pointwise("act2", PointwiseMode::RELU_FWD, 2, 3));
    let error = handle
        .ranked_engines(&OperationGraph::new(chain).unwrap())
        .unwrap_err();
    assert_eq!(error.status, HIPDNN_STATUS_NOT_SUPPORTED);
    assert!(
        error.message.contains("each node is supported alone"),
        "{error:?}"
    );
    // With a single plugin loaded, its refusal names it: which engines were asked.
    assert!(
        error
            .message
            .ends_with("; engines asked: EXAMPLE_RELU_ENGINE (example_relu_plugin)"),
        "{error:?}"
    );

    // A convolution and a tanh: nobody accepts either; both are named.
    let mut other = relu_graph();
    other.tensors.push(tensor(3, "w", &[1, 1, 1, 1], false));
    other.tensors.push(tensor(4, "c", &[2, 4], true));
    other.nodes = vec![
        Node::new(
            "conv",
            ConvolutionFwdAttributes {
                x_tensor_uid: 1,
                w_tensor_uid: 3,
                y_tensor_uid: 4,
                conv_mode: ConvMode::CROSS_CORRELATION,
                ..ConvolutionFwdAttributes::default()
            },
        ),
        pointwise("squash", PointwiseMode::TANH_FWD, 4, 2),
    ];
    let error = handle
        .ranked_engines(&OperationGraph::new(other).unwrap())
        .unwrap_err();
    assert!(
        error.message.contains("'conv' (ConvolutionFwdAttributes)"),
        "{error:?}"
    );
    assert!(
        error.message.contains("'squash' (PointwiseAttributes)"),
        "{error:?}"
    );
    assert!(
        error.message.contains(
            "no engine accepts node 'conv' (ConvolutionFwdAttributes), node 'squash' \
             (PointwiseAttributes); engines asked: EXAMPLE_RELU_ENGINE (example_relu_plugin)"
        ),
        "{error:?}"
    );

    // Invalid graphs never reach a plugin.
    let mut cycle = relu_graph();
    cycle
        .nodes
        .push(pointwise("back", PointwiseMode::RELU_FWD, 2, 1));
    let error = OperationGraph::new(cycle).unwrap_err();
    assert_eq!(error.status, HIPDNN_STATUS_BAD_PARAM);
    let mut dangling = relu_graph();
    dangling.nodes[0] = pointwise("act", PointwiseMode::RELU_FWD, 1, 77);
    let error = OperationGraph::new(dangling).unwrap_err();
    assert!(error.message.contains("77"), "{error:?}");
    let error = OperationGraph::from_bytes(b"not a flatbuffer").unwrap_err();
    assert_eq!(error.status, HIPDNN_STATUS_BAD_PARAM);

    // A graph-and-plan container gives its graph.
    let graph = OperationGraph::new(relu_graph()).unwrap();
    let container = SerializedGraphAndPlan {
        graph_blob: graph.bytes().to_vec(),
        plan_blob: vec![1, 2, 3],
    }
    .to_bytes();
    let from_container = OperationGraph::from_bytes(&container).unwrap();
    assert_eq!(from_container.graph(), graph.graph());
}

/// A graph declaring `min_required_engine_api_version` 99.0.0 is refused where it
/// enters, saying what it needs and what the backend speaks.
#[test]
fn a_graph_requiring_a_newer_engine_api_than_the_backend_is_refused() {
    let mut graph = relu_graph();
    graph.min_required_engine_api_version = Some(EngineApiVersion::new(99, 0, 0));
    let error = OperationGraph::new(graph.clone()).unwrap_err();
    assert_eq!(error.status, HIPDNN_STATUS_NOT_SUPPORTED, "{error:?}");
    assert!(
        error.message.contains("requires engine plugin API 99.0.0")
            && error
                .message
                .contains(&hipdnn_backend::SUPPORTED_ENGINE_API_VERSION.to_string()),
        "{error:?}"
    );
    let error = OperationGraph::from_bytes(&graph.to_bytes()).unwrap_err();
    assert_eq!(error.status, HIPDNN_STATUS_NOT_SUPPORTED, "{error:?}");
    // The backend's own version is accepted.
    graph.min_required_engine_api_version = Some(hipdnn_backend::SUPPORTED_ENGINE_API_VERSION);
    OperationGraph::new(graph).unwrap();
}

/// A graph whose features need engine API 1.3.0 (a non-default alignment) is not
/// offered to a plugin reporting 1.2.0 (`old_api_plugin`, whose engine would accept
/// anything): its engine is neither ranked nor given a plan, and with no other plugin
/// the refusal says why; the 1.4.0 example plugin still runs it.
#[test]
fn plugins_below_the_graphs_engine_api_floor_are_not_asked() {
    let _serial = serial();
    let mut graph = relu_graph();
    graph.tensors[0].alignment = 64;
    let graph = OperationGraph::new(graph).unwrap();
    assert_eq!(
        graph.graph().required_engine_api_version(),
        EngineApiVersion::new(1, 3, 0)
    );
    let old = engine_name_to_id("OLD_API_ENGINE");

    let dir = tempfile::tempdir().unwrap();
    install(dir.path(), &["old_api_plugin"]);
    use_only(dir.path());
    let handle = Handle::new();
    // Without the alignment, its engine takes the graph.
    let plain = OperationGraph::new(relu_graph()).unwrap();
    assert_eq!(handle.ranked_engines(&plain).unwrap()[0].id, old);
    let error = handle.ranked_engines(&graph).unwrap_err();
    assert_eq!(error.status, HIPDNN_STATUS_NOT_SUPPORTED, "{error:?}");
    assert!(
        error.message.contains(
            "it requires engine plugin API 1.3.0, and every plugin reports less: 'old_api_plugin' (1.2.0)"
        ),
        "{error:?}"
    );
    let error = handle.create_plan(&graph, old, &[]).unwrap_err();
    assert_eq!(error.status, HIPDNN_STATUS_NOT_SUPPORTED, "{error:?}");
    assert!(
        error.message.contains("implements engine plugin api 1.2.0")
            && error.message.contains("the graph needs at least 1.3.0"),
        "{error:?}"
    );
    drop(handle);

    let dir = tempfile::tempdir().unwrap();
    install(dir.path(), &["good_plugin", "old_api_plugin"]);
    use_only(dir.path());
    let handle = Handle::new();
    let ranked = handle.ranked_engines(&graph).unwrap();
    let names: Vec<&str> = ranked.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, [RELU]);
    assert_eq!(handle.applicable_engines(&graph).len(), 1);
}

#[test]
fn malformed_engine_details_are_refused() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    install(dir.path(), &["bad_details", "good_plugin"]);
    use_only(dir.path());
    let handle = Handle::new();
    let graph = OperationGraph::new(relu_graph()).unwrap();
    let error = handle.engine_details(950, &graph).unwrap_err();
    assert_eq!(error.status, HIPDNN_STATUS_PLUGIN_ERROR);
    assert!(
        error
            .message
            .contains("plugin 'bad_details' returned malformed details"),
        "{error:?}"
    );
    let error = handle.engine_details(951, &graph).unwrap_err();
    assert!(
        error
            .message
            .contains("returned the details of engine 0x00000000000003B8"),
        "{error:?}"
    );
    assert!(handle.create_plan(&graph, 950, &[]).is_err());

    // build_plan skips the broken engines and lands on the good one; the static order
    // can be replaced (here: only the good engine).
    let plan = handle.build_plan(&graph, &[]).unwrap();
    assert_eq!(plan.engine_name(), RELU);
    drop(plan);
    let ranked = handle.ranked_engines(&graph).unwrap();
    assert_eq!(
        ranked.iter().map(|e| e.id).collect::<Vec<_>>(),
        [950, 951, engine_name_to_id(RELU)]
    );
    let mut preferred = relu_graph();
    preferred.preferred_engine_id = Some(engine_name_to_id(RELU));
    let ranked = handle
        .ranked_engines(&OperationGraph::new(preferred).unwrap())
        .unwrap();
    assert_eq!(ranked[0].name, RELU);
    let _ = ENGINE_ORDER_ENV;
}
