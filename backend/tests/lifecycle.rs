//! The check → build → cache lifecycle seen from the host: creating one plan, through
//! the Rust API or the C API, makes the plugin decide applicability once and build
//! once, and asking again for the same graph and knobs does neither. The plugin is
//! `counting_plugin` (backend/examples), which counts both and exports the counts.

use std::ffi::c_void;
use std::ptr;

use hipdnn_backend::capi::*;
use hipdnn_backend::{Handle, MemoryKind, OperationGraph};
use hipdnn_data_sdk::{DataType, engine_name_to_id};
use hipdnn_flatbuffers_sdk::model::{Graph, Node, PointwiseAttributes, TensorAttributes};
use hipdnn_flatbuffers_sdk::wire::PointwiseMode;
use libloading::Library;

mod support;
use support::capi::{c_last_error, deserialized_json, destroy, ok, serial, serialized, use_only};

/// A one-node pointwise graph; `name` makes the serialized bytes distinct.
fn graph(name: &str) -> Graph {
    let tensor = |uid: i64| TensorAttributes {
        uid,
        name: format!("t{uid}"),
        data_type: DataType::Float,
        dims: vec![2, 4],
        strides: vec![4, 1],
        ..TensorAttributes::default()
    };
    Graph {
        name: name.to_owned(),
        io_data_type: DataType::Float,
        compute_data_type: DataType::Float,
        tensors: vec![tensor(1), tensor(2)],
        nodes: vec![Node::new(
            "act",
            PointwiseAttributes {
                operation: PointwiseMode::RELU_FWD,
                in_0_tensor_uid: 1,
                out_0_tensor_uid: 2,
                ..PointwiseAttributes::default()
            },
        )],
        ..Graph::default()
    }
}

/// Reads the plugin's (analyses, builds).
struct Counts(Library);

impl Counts {
    fn now(&self) -> [u64; 2] {
        let mut out = [0; 2];
        // SAFETY: the symbol is `counting_plugin_counts(*mut [u64; 2])`, given a live
        // out-parameter.
        unsafe {
            let f = self
                .0
                .get::<unsafe extern "C" fn(*mut [u64; 2])>(b"counting_plugin_counts\0")
                .expect("the counting plugin exports its counts");
            f(&mut out);
        }
        out
    }

    /// How many of the plugin's plans are alive (built, not dropped).
    fn live_plans(&self) -> i64 {
        // SAFETY: the symbol is `counting_plugin_live_plans() -> i64`.
        unsafe {
            let f = self
                .0
                .get::<unsafe extern "C" fn() -> i64>(b"counting_plugin_live_plans\0")
                .expect("the counting plugin exports its live plan count");
            f()
        }
    }

    /// Runs `f` and returns how many analyses and builds it caused.
    fn during(&self, f: impl FnOnce()) -> [u64; 2] {
        let before = self.now();
        f();
        let after = self.now();
        [after[0] - before[0], after[1] - before[1]]
    }
}

/// Heuristics → engine config → execution plan through the C API, as a C program does.
fn plan_through_the_c_api(json: &str) -> i64 {
    let mut handle: hipdnnHandle_t = ptr::null_mut();
    let (mut graph, mut heuristic, mut config, mut plan) = (
        ptr::null_mut(),
        ptr::null_mut(),
        ptr::null_mut(),
        ptr::null_mut(),
    );
    let mut workspace = 0_i64;
    // SAFETY: every pointer is a live local or a descriptor made just before; the
    // descriptors are destroyed before the handle.
    unsafe {
        ok(hipdnnCreate(&mut handle));
        ok(hipdnnBackendCreateAndDeserializeJsonGraph_ext(
            &mut graph,
            json.as_ptr().cast(),
            json.len(),
        ));
        let handle_ptr: *const c_void = (&raw const handle).cast();
        ok(hipdnnBackendSetAttribute(
            graph,
            HIPDNN_ATTR_OPERATIONGRAPH_HANDLE,
            HIPDNN_TYPE_HANDLE,
            1,
            handle_ptr,
        ));
        ok(hipdnnBackendFinalize(graph));
        ok(hipdnnBackendCreateDescriptor(
            HIPDNN_BACKEND_ENGINEHEUR_DESCRIPTOR,
            &mut heuristic,
        ));
        ok(hipdnnBackendSetAttribute(
            heuristic,
            HIPDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH,
            HIPDNN_TYPE_BACKEND_DESCRIPTOR,
            1,
            (&raw const graph).cast(),
        ));
        let mode = HIPDNN_HEUR_MODE_FALLBACK;
        ok(hipdnnBackendSetAttribute(
            heuristic,
            HIPDNN_ATTR_ENGINEHEUR_MODE,
            HIPDNN_TYPE_HEUR_MODE,
            1,
            (&raw const mode).cast(),
        ));
        ok(hipdnnBackendFinalize(heuristic));
        ok(hipdnnBackendCreateDescriptor(
            HIPDNN_BACKEND_ENGINECFG_DESCRIPTOR,
            &mut config,
        ));
        let mut found = 0_i64;
        ok(hipdnnBackendGetAttribute(
            heuristic,
            HIPDNN_ATTR_ENGINEHEUR_RESULTS,
            HIPDNN_TYPE_BACKEND_DESCRIPTOR,
            1,
            &mut found,
            (&raw mut config).cast(),
        ));
        assert_eq!(found, 1);
        ok(hipdnnBackendCreateDescriptor(
            HIPDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR,
            &mut plan,
        ));
        ok(hipdnnBackendSetAttribute(
            plan,
            HIPDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
            HIPDNN_TYPE_BACKEND_DESCRIPTOR,
            1,
            (&raw const config).cast(),
        ));
        ok(hipdnnBackendFinalize(plan));
        let mut count = 0_i64;
        ok(hipdnnBackendGetAttribute(
            plan,
            HIPDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
            HIPDNN_TYPE_INT64,
            1,
            &mut count,
            (&raw mut workspace).cast(),
        ));
        for d in [plan, config, heuristic, graph] {
            ok(hipdnnBackendDestroyDescriptor(d));
        }
        ok(hipdnnDestroy(handle));
    }
    workspace
}

#[test]
fn one_plan_creation_analyses_once_and_builds_once() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let path = support::install_as(dir.path(), "counting_plugin", "counting_plugin");
    use_only(dir.path());
    let handle = Handle::new();
    // SAFETY: the same file the backend loaded (dlopen returns its handle); only the
    // counting export is called.
    let counts = Counts(unsafe { Library::new(&path) }.expect("load the counting plugin"));
    let id = engine_name_to_id("COUNTING_ENGINE");

    // Rust API, an engine named explicitly: applicability asked once (the backend asks
    // which engines apply, then for details, then for the plan), one build.
    let first = OperationGraph::new(graph("first")).unwrap();
    let mut plan = None;
    assert_eq!(
        counts.during(|| plan = Some(handle.create_plan(&first, id, &[]).unwrap())),
        [1, 1]
    );
    let plan = plan.unwrap();
    assert_eq!(
        (plan.workspace_size(), plan.memory_kind()),
        (64, MemoryKind::Host)
    );
    // The same graph and knobs again: nothing is analysed or built.
    assert_eq!(
        counts.during(|| drop(handle.create_plan(&first, id, &[]).unwrap())),
        [0, 0]
    );
    // Other knob settings: a new plan, no new analysis.
    let knob = hipdnn_flatbuffers_sdk::model::KnobSetting {
        knob_id: "global.deterministic".to_owned(),
        value: hipdnn_flatbuffers_sdk::model::KnobValue::Int(1),
    };
    assert_eq!(
        counts.during(|| drop(handle.create_plan(&first, id, &[knob]).unwrap())),
        [0, 1]
    );

    // Rust API, best engine: the same.
    let second = OperationGraph::new(graph("second")).unwrap();
    assert_eq!(
        counts.during(|| drop(handle.build_plan(&second, &[]).unwrap())),
        [1, 1]
    );
    drop(plan);
    drop(handle);

    // C API: OPERATIONGRAPH → ENGINEHEUR → ENGINECFG → EXECUTION_PLAN on a new handle.
    let json = graph("third").to_json();
    let mut workspace = 0;
    assert_eq!(
        counts.during(|| workspace = plan_through_the_c_api(&json)),
        [1, 1]
    );
    assert_eq!(workspace, 64);
}

/// The graph a JSON text describes, as the C API serializes it (validated bytes).
fn c_api_bytes(json: &str) -> Vec<u8> {
    let graph = deserialized_json(json);
    let bytes = serialized(graph);
    destroy(graph);
    bytes
}

/// The graph's JSON as the C API writes it.
fn c_api_json(json: &str) -> String {
    let graph = deserialized_json(json);
    let mut size = 0_usize;
    // SAFETY: a live descriptor and a writable size; `text` is writable for `size` bytes.
    let mut text = unsafe {
        ok(hipdnnBackendGetSerializedJsonGraph_ext(
            graph,
            0,
            &mut size,
            ptr::null_mut(),
        ));
        let mut text = vec![0_u8; size];
        ok(hipdnnBackendGetSerializedJsonGraph_ext(
            graph,
            size,
            &mut size,
            text.as_mut_ptr().cast(),
        ));
        text
    };
    destroy(graph);
    assert_eq!(text.pop(), Some(0), "NUL-terminated");
    String::from_utf8(text).unwrap()
}

/// The C API's JSON entry points read upstream hipDNN's dialect as well as ours (told
/// apart by content): the same graph, the same bytes, and a plan from it; they write
/// upstream's, which reads back as the same graph.
#[test]
fn the_c_api_reads_graphs_in_upstreams_json_dialect() {
    let _serial = serial();
    let model = graph("upstream");
    assert_eq!(
        c_api_bytes(&model.to_upstream_json()),
        c_api_bytes(&model.to_json())
    );
    // What the backend holds (node compute types resolved from the graph's), written in
    // upstream's dialect, which reads back as the same graph.
    let held = OperationGraph::new(model.clone()).unwrap();
    let written = c_api_json(&model.to_json());
    assert_eq!(written, held.graph().to_upstream_json());
    assert_eq!(&Graph::from_upstream_json(&written).unwrap(), held.graph());
    assert_eq!(
        c_api_bytes(&model.to_upstream_json()),
        OperationGraph::new(model.clone()).unwrap().bytes()
    );
    let dir = tempfile::tempdir().unwrap();
    let path = support::install_as(dir.path(), "counting_plugin", "counting_plugin");
    use_only(dir.path());
    // SAFETY: the file the backend loads; only the counting export is called.
    let counts = Counts(unsafe { Library::new(&path) }.expect("load the counting plugin"));
    let mut workspace = 0;
    assert_eq!(
        counts.during(|| workspace = plan_through_the_c_api(&model.to_upstream_json())),
        [1, 1]
    );
    assert_eq!(workspace, 64);
}

#[test]
fn the_c_api_reports_a_host_engine_through_its_behavior_notes() {
    let _serial = serial();
    assert_eq!(
        HIPDNN_BEHAVIOR_NOTE_HOST_MEMORY_EXT,
        hipdnn_data_sdk::HOST_MEMORY_BEHAVIOR_NOTE_EXT
    );
    let dir = tempfile::tempdir().unwrap();
    support::install_as(dir.path(), "counting_plugin", "counting_plugin");
    use_only(dir.path());
    let json = graph("notes").to_json();
    let id = engine_name_to_id("COUNTING_ENGINE");
    let mut handle: hipdnnHandle_t = ptr::null_mut();
    let (mut graph_desc, mut engine) = (ptr::null_mut(), ptr::null_mut());
    let mut notes = [0_i32; 8];
    let mut count = 0_i64;
    // SAFETY: live locals and descriptors made just before; destroyed before the handle.
    unsafe {
        ok(hipdnnCreate(&mut handle));
        ok(hipdnnBackendCreateAndDeserializeJsonGraph_ext(
            &mut graph_desc,
            json.as_ptr().cast(),
            json.len(),
        ));
        ok(hipdnnBackendSetAttribute(
            graph_desc,
            HIPDNN_ATTR_OPERATIONGRAPH_HANDLE,
            HIPDNN_TYPE_HANDLE,
            1,
            (&raw const handle).cast(),
        ));
        ok(hipdnnBackendFinalize(graph_desc));
        ok(hipdnnBackendCreateDescriptor(
            HIPDNN_BACKEND_ENGINE_DESCRIPTOR,
            &mut engine,
        ));
        ok(hipdnnBackendSetAttribute(
            engine,
            HIPDNN_ATTR_ENGINE_OPERATION_GRAPH,
            HIPDNN_TYPE_BACKEND_DESCRIPTOR,
            1,
            (&raw const graph_desc).cast(),
        ));
        ok(hipdnnBackendSetAttribute(
            engine,
            HIPDNN_ATTR_ENGINE_GLOBAL_INDEX,
            HIPDNN_TYPE_INT64,
            1,
            (&raw const id).cast(),
        ));
        ok(hipdnnBackendFinalize(engine));
        ok(hipdnnBackendGetAttribute(
            engine,
            HIPDNN_ATTR_ENGINE_BEHAVIOR_NOTE,
            HIPDNN_TYPE_BEHAVIOR_NOTE,
            notes.len() as i64,
            &mut count,
            notes.as_mut_ptr().cast(),
        ));
        ok(hipdnnBackendDestroyDescriptor(engine));
        ok(hipdnnBackendDestroyDescriptor(graph_desc));
        ok(hipdnnDestroy(handle));
    }
    let notes = &notes[..count as usize];
    assert!(
        notes.contains(&HIPDNN_BEHAVIOR_NOTE_HOST_MEMORY_EXT),
        "{notes:?}"
    );
}

/// Destroying the handle before its plan: the plan keeps what it needs (the handle
/// object, its plugin handle, the plugin library), executing through the destroyed
/// handle is a clean `BAD_PARAM`, and destroying the plan releases the execution
/// context, the plugin handle and the handle, once; a second destroy is refused.
#[test]
fn plan_outlives_destroyed_handle() {
    use hipdnn_backend::manager::live_handle_count;
    use hipdnn_backend::status::{HIPDNN_STATUS_BAD_PARAM, HIPDNN_STATUS_BAD_PARAM_NULL_POINTER};

    #[repr(align(64))]
    struct Buffers {
        x: [f32; 8],
        y: [f32; 8],
        workspace: [u8; 64],
    }

    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let path = support::install_as(dir.path(), "counting_plugin", "counting_plugin");
    use_only(dir.path());
    let json = graph("outlives").to_json();
    let mut buffers = Buffers {
        x: [1.0; 8],
        y: [0.0; 8],
        workspace: [0; 64],
    };
    let uids = [1_i64, 2];
    let pointers: [*mut c_void; 2] = [buffers.x.as_mut_ptr().cast(), buffers.y.as_mut_ptr().cast()];
    let workspace: *mut c_void = buffers.workspace.as_mut_ptr().cast();

    let mut handle: hipdnnHandle_t = ptr::null_mut();
    let (mut graph_desc, mut heuristic, mut config, mut plan, mut pack) = (
        ptr::null_mut(),
        ptr::null_mut(),
        ptr::null_mut(),
        ptr::null_mut(),
        ptr::null_mut(),
    );
    // SAFETY: every pointer is a live local or a descriptor made just before; the pack's
    // pointers hold the graph's 8 floats each and the plan's 64-byte workspace. The
    // destroyed handle and plan are passed again on purpose: the backend checks them.
    unsafe {
        ok(hipdnnCreate(&mut handle));
        // The plugin is loaded now: its counter can be read.
        let counts = Counts(Library::new(&path).expect("load the counting plugin"));
        let before = counts.live_plans();
        ok(hipdnnBackendCreateAndDeserializeJsonGraph_ext(
            &mut graph_desc,
            json.as_ptr().cast(),
            json.len(),
        ));
        ok(hipdnnBackendSetAttribute(
            graph_desc,
            HIPDNN_ATTR_OPERATIONGRAPH_HANDLE,
            HIPDNN_TYPE_HANDLE,
            1,
            (&raw const handle).cast(),
        ));
        ok(hipdnnBackendFinalize(graph_desc));
        ok(hipdnnBackendCreateDescriptor(
            HIPDNN_BACKEND_ENGINEHEUR_DESCRIPTOR,
            &mut heuristic,
        ));
        ok(hipdnnBackendSetAttribute(
            heuristic,
            HIPDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH,
            HIPDNN_TYPE_BACKEND_DESCRIPTOR,
            1,
            (&raw const graph_desc).cast(),
        ));
        let mode = HIPDNN_HEUR_MODE_FALLBACK;
        ok(hipdnnBackendSetAttribute(
            heuristic,
            HIPDNN_ATTR_ENGINEHEUR_MODE,
            HIPDNN_TYPE_HEUR_MODE,
            1,
            (&raw const mode).cast(),
        ));
        ok(hipdnnBackendFinalize(heuristic));
        ok(hipdnnBackendCreateDescriptor(
            HIPDNN_BACKEND_ENGINECFG_DESCRIPTOR,
            &mut config,
        ));
        let mut found = 0_i64;
        ok(hipdnnBackendGetAttribute(
            heuristic,
            HIPDNN_ATTR_ENGINEHEUR_RESULTS,
            HIPDNN_TYPE_BACKEND_DESCRIPTOR,
            1,
            &mut found,
            (&raw mut config).cast(),
        ));
        ok(hipdnnBackendCreateDescriptor(
            HIPDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR,
            &mut plan,
        ));
        ok(hipdnnBackendSetAttribute(
            plan,
            HIPDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
            HIPDNN_TYPE_BACKEND_DESCRIPTOR,
            1,
            (&raw const config).cast(),
        ));
        ok(hipdnnBackendFinalize(plan));
        ok(hipdnnBackendCreateDescriptor(
            HIPDNN_BACKEND_VARIANT_PACK_DESCRIPTOR,
            &mut pack,
        ));
        ok(hipdnnBackendSetAttribute(
            pack,
            HIPDNN_ATTR_VARIANT_PACK_UNIQUE_IDS,
            HIPDNN_TYPE_INT64,
            2,
            uids.as_ptr().cast(),
        ));
        ok(hipdnnBackendSetAttribute(
            pack,
            HIPDNN_ATTR_VARIANT_PACK_DATA_POINTERS,
            HIPDNN_TYPE_VOID_PTR,
            2,
            pointers.as_ptr().cast(),
        ));
        ok(hipdnnBackendSetAttribute(
            pack,
            HIPDNN_ATTR_VARIANT_PACK_WORKSPACE,
            HIPDNN_TYPE_VOID_PTR,
            1,
            (&raw const workspace).cast(),
        ));
        ok(hipdnnBackendFinalize(pack));
        ok(hipdnnBackendExecute(handle, plan, pack));
        assert!(counts.live_plans() > before, "the plan is alive");

        // The handle goes first; the plan keeps its object, plugin handle and plugin.
        for d in [config, heuristic, graph_desc] {
            ok(hipdnnBackendDestroyDescriptor(d));
        }
        ok(hipdnnDestroy(handle));
        assert_eq!(live_handle_count(), 1, "the plan keeps its handle");
        assert!(counts.live_plans() > before, "the plan is still alive");

        // Executing through the destroyed handle fails cleanly, naming it.
        assert_eq!(
            hipdnnBackendExecute(handle, plan, pack),
            HIPDNN_STATUS_BAD_PARAM
        );
        assert_eq!(
            c_last_error(),
            format!(
                "hipdnnBackendExecute: handle {handle:p} is not a live handle (never made by \
                 this library, or already destroyed)"
            )
        );
        assert_eq!(
            hipdnnBackendExecute(ptr::null_mut(), plan, pack),
            HIPDNN_STATUS_BAD_PARAM_NULL_POINTER
        );
        // The plan can still be queried.
        let (mut count, mut size) = (0_i64, 0_i64);
        ok(hipdnnBackendGetAttribute(
            plan,
            HIPDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
            HIPDNN_TYPE_INT64,
            1,
            &mut count,
            (&raw mut size).cast(),
        ));
        assert_eq!(size, 64);

        // Destroying the plan releases everything: its context, then (the last
        // reference) the handle with its plugin handle and that handle's plan cache.
        ok(hipdnnBackendDestroyDescriptor(plan));
        assert_eq!(live_handle_count(), 0, "the handle went with the plan");
        assert_eq!(counts.live_plans(), before, "every plan released");
        // Once: destroying either again is refused and frees nothing.
        assert_eq!(
            hipdnnBackendDestroyDescriptor(plan),
            HIPDNN_STATUS_BAD_PARAM
        );
        assert_eq!(
            c_last_error(),
            format!(
                "hipdnnBackendDestroyDescriptor: descriptor {plan:p} is not a live descriptor \
                 (never made by this library, or already destroyed)"
            )
        );
        assert_eq!(hipdnnDestroy(handle), HIPDNN_STATUS_BAD_PARAM);
        assert_eq!(counts.live_plans(), before);
        ok(hipdnnBackendDestroyDescriptor(pack));
    }
}
