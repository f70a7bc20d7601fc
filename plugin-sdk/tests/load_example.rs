//! The minimal example plugin, loaded as a host loads it: `dlopen` the cdylib, resolve
//! every entry point by name with its C type, and drive a ReLU graph from discovery to
//! execution. Also checks that `scripts/check-plugin-symbols.sh` accepts that plugin and
//! rejects one with a stray export.
//!
//! The libraries are the examples' cdylibs in `target/<profile>/examples/`, which plain
//! `cargo test` builds (a test selected with `--test` does not build them: then run
//! `cargo build -p hipdnn-plugin-sdk --examples` first).

use std::env::consts::{DLL_PREFIX, DLL_SUFFIX};
use std::ffi::{CStr, c_char, c_void};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::ptr;
use std::sync::Mutex;

use hipdnn_data_sdk::{DataType, HOST_MEMORY_BEHAVIOR_NOTE_EXT, engine_name_to_id};
use hipdnn_flatbuffers_sdk::EngineDetailsView;
use hipdnn_flatbuffers_sdk::model::{
    EngineConfig, Graph, KnobSetting, KnobValue, Node, PointwiseAttributes, TensorAttributes,
};
use hipdnn_flatbuffers_sdk::wire::PointwiseMode;
use hipdnn_frontend::samples;
use hipdnn_plugin_sdk::abi::*;
use libloading::Library;

const SLOPE: &str = "example.relu.negative_slope";
const ENGINE: &str = "EXAMPLE_RELU_ENGINE";

/// `target/<profile>/examples/lib<name>.so`, next to this test's `target/<profile>/deps/`.
fn example_library(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("the test binary lives in target/<profile>/deps/");
    let path = profile_dir
        .join("examples")
        .join(format!("{DLL_PREFIX}{name}{DLL_SUFFIX}"));
    assert!(
        path.is_file(),
        "{} is missing: run `cargo build -p hipdnn-plugin-sdk --examples` \
         (plain `cargo test` builds it; `cargo test --test ...` does not)",
        path.display()
    );
    path
}

type Status = hipdnnPluginStatus_t;
type Span = hipdnnPluginConstData_t;

/// Every entry point of the plugin, resolved by name; valid while `_library` is loaded.
/// The optional functions the test calls are unwrapped (the example exports them).
struct Plugin {
    base: BaseApi,
    engine: EngineApi,
    get_api_version: hipdnnPluginGetApiVersion_fn,
    set_logging_callback: hipdnnPluginSetLoggingCallback_fn,
    set_log_level: hipdnnPluginSetLogLevel_fn,
    get_engine_name: hipdnnEnginePluginGetEngineName_fn,
    _library: Library,
}

impl Plugin {
    fn load(path: &Path) -> Self {
        // SAFETY: the example plugin's initialisers are Rust statics with no side effects.
        let library = unsafe { Library::new(path) }
            .unwrap_or_else(|e| panic!("dlopen {}: {e}", path.display()));
        // SAFETY: the plugin's symbols are the hipDNN functions of their names; the table
        // is used only while `_library` keeps them loaded.
        let api = unsafe {
            EnginePluginApi::resolve(|name| {
                library
                    .get::<*mut c_void>(name.to_bytes_with_nul())
                    .map_or(ptr::null_mut(), |symbol| *symbol)
            })
        }
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(
            api.engine.missing_optional(),
            [
                "hipdnnEnginePluginExecuteOpGraphWithOverrides",
                "hipdnnEnginePluginSerializeExecutionContext",
                "hipdnnEnginePluginDestroySerializedExecutionContext",
                "hipdnnEnginePluginCreateExecutionContextFromSerialized",
            ],
            "the example exports GetEngineName and no serialization"
        );
        let exported = "the example plugin exports it";
        Plugin {
            base: api.base,
            engine: api.engine,
            get_api_version: api.base.get_api_version.expect(exported),
            set_logging_callback: api.base.set_logging_callback.expect(exported),
            set_log_level: api.base.set_log_level.expect(exported),
            get_engine_name: api.engine.get_engine_name.expect(exported),
            _library: library,
        }
    }

    /// Panics with the plugin's last error unless `status` is SUCCESS.
    #[track_caller]
    fn ok(&self, status: Status, what: &str) {
        if status != HIPDNN_PLUGIN_STATUS_SUCCESS {
            let mut error = ptr::null();
            // SAFETY: a live out-parameter; the buffer is read before the next call.
            let error = unsafe {
                (self.base.get_last_error_string)(&mut error);
                CStr::from_ptr(error)
            };
            panic!("{what}: {status}: {error:?}");
        }
    }
}

/// What the logging callback received.
static LOGGED: Mutex<Vec<(hipdnnSeverity_t, String)>> = Mutex::new(Vec::new());

unsafe extern "C" fn record_log(severity: hipdnnSeverity_t, message: *const c_char) {
    // SAFETY: the plugin passes a NUL-terminated message valid during the call.
    let message = unsafe { CStr::from_ptr(message) }
        .to_string_lossy()
        .into_owned();
    if let Ok(mut logged) = LOGGED.lock() {
        logged.push((severity, message));
    }
}

fn span(bytes: &[u8]) -> Span {
    Span {
        ptr: bytes.as_ptr().cast(),
        size: bytes.len(),
    }
}

/// x (uid 1) → ReLU → y (uid 2), dims `[2, 4]`, FLOAT.
fn relu_graph() -> Vec<u8> {
    relu_graph_with(DataType::Float, &[4, 1])
}

/// As [`relu_graph`] with y of type `y_type` and strides `y_strides`.
fn relu_graph_with(y_type: DataType, y_strides: &[i64]) -> Vec<u8> {
    let tensor = |uid, name: &str, data_type, strides: &[i64]| TensorAttributes {
        uid,
        name: name.to_owned(),
        data_type,
        dims: vec![2, 4],
        strides: strides.to_vec(),
        ..TensorAttributes::default()
    };
    let mut graph = Graph {
        name: "relu".to_owned(),
        io_data_type: DataType::Float,
        compute_data_type: DataType::Float,
        tensors: vec![
            tensor(1, "x", DataType::Float, &[4, 1]),
            tensor(2, "y", y_type, y_strides),
        ],
        nodes: vec![Node::new(
            "relu",
            PointwiseAttributes {
                operation: PointwiseMode::RELU_FWD,
                in_0_tensor_uid: 1,
                out_0_tensor_uid: 2,
                ..PointwiseAttributes::default()
            },
        )],
        ..Graph::default()
    };
    graph.validate().expect("a valid graph");
    graph.to_bytes()
}

#[test]
fn minimal_plugin_runs_a_relu_graph_through_the_c_abi() {
    let p = Plugin::load(&example_library("minimal_plugin"));
    let engine_id = engine_name_to_id(ENGINE);

    // SAFETY: for the whole sequence: every pointer passed is a live local or a span over
    // live bytes, of the type the symbol's C declaration gives; plugin-owned buffers are
    // read only before they are returned.
    unsafe {
        // Identity.
        let (mut name, mut version, mut api, mut kind) = (
            ptr::null(),
            ptr::null(),
            ptr::null(),
            HIPDNN_PLUGIN_TYPE_UNSPECIFIED,
        );
        p.ok((p.base.get_name)(&mut name), "GetName");
        p.ok((p.base.get_version)(&mut version), "GetVersion");
        p.ok((p.get_api_version)(&mut api), "GetApiVersion");
        p.ok((p.base.get_type)(&mut kind), "GetType");
        assert_eq!(CStr::from_ptr(name), c"example_relu_plugin");
        assert_eq!(CStr::from_ptr(version), c"0.1.0");
        assert_eq!(CStr::from_ptr(api), c"1.4.0");
        assert_eq!(kind, HIPDNN_PLUGIN_TYPE_ENGINE);

        // Logging: the plugin's own copy of `tracing` forwards to this callback.
        p.ok(
            (p.set_logging_callback)(Some(record_log)),
            "SetLoggingCallback",
        );
        p.ok((p.set_log_level)(HIPDNN_SEV_INFO), "SetLogLevel");

        // Engines, two-call.
        let mut count = 0_u32;
        p.ok(
            (p.engine.get_all_engine_ids)(ptr::null_mut(), 0, &mut count),
            "GetAllEngineIds(count)",
        );
        assert_eq!(count, 1);
        let mut ids = vec![0_i64; count as usize];
        p.ok(
            (p.engine.get_all_engine_ids)(ids.as_mut_ptr(), count, &mut count),
            "GetAllEngineIds",
        );
        assert_eq!((count, &ids[..]), (1, &[engine_id][..]));
        let mut engine_name = ptr::null();
        p.ok(
            (p.get_engine_name)(engine_id, &mut engine_name),
            "GetEngineName",
        );
        assert_eq!(CStr::from_ptr(engine_name).to_str(), Ok(ENGINE));

        // A failing call reaches the host's log as an error.
        let status = (p.get_engine_name)(0x1234, &mut engine_name);
        assert_eq!(status, HIPDNN_PLUGIN_STATUS_INVALID_VALUE);
        let logged = std::mem::take(&mut *LOGGED.lock().expect("not poisoned"));
        assert!(
            logged
                .iter()
                .any(|(severity, message)| *severity == HIPDNN_SEV_ERROR
                    && message.contains("hipdnnEnginePluginGetEngineName")),
            "{logged:?}"
        );

        // A handle on a stream.
        let mut handle = ptr::null_mut();
        p.ok((p.engine.create)(&mut handle), "Create");
        let stream: hipStream_t = ptr::without_provenance_mut(0x1000);
        p.ok((p.engine.set_stream)(handle, stream), "SetStream");

        // Discovery: the ReLU graph has the engine; the conv sample has none.
        let relu = relu_graph();
        let graph = span(&relu);
        let mut applicable = [0_i64; 1];
        p.ok(
            (p.engine.get_applicable_engine_ids)(
                handle,
                &graph,
                applicable.as_mut_ptr(),
                1,
                &mut count,
            ),
            "GetApplicableEngineIds(relu)",
        );
        assert_eq!((count, applicable), (1, [engine_id]));
        let mut conv = samples::conv_bias_relu();
        conv.validate().expect("a valid sample");
        let conv = conv.to_bytes();
        p.ok(
            (p.engine.get_applicable_engine_ids)(
                handle,
                &span(&conv),
                applicable.as_mut_ptr(),
                1,
                &mut count,
            ),
            "GetApplicableEngineIds(conv)",
        );
        assert_eq!(count, 0);
        // Exact applicability: a HALF output in a FLOAT graph, or a strided one, is not
        // claimed.
        for (y_type, y_strides) in [(DataType::Half, [4, 1]), (DataType::Float, [1, 2])] {
            let other = relu_graph_with(y_type, &y_strides);
            p.ok(
                (p.engine.get_applicable_engine_ids)(
                    handle,
                    &span(&other),
                    applicable.as_mut_ptr(),
                    1,
                    &mut count,
                ),
                "GetApplicableEngineIds(other relu)",
            );
            assert_eq!(count, 0, "{y_type:?} {y_strides:?}");
        }

        // Details, verified, then returned.
        let mut details = Span::default();
        p.ok(
            (p.engine.get_engine_details)(handle, engine_id, &graph, &mut details),
            "GetEngineDetails",
        );
        {
            let bytes = std::slice::from_raw_parts(details.ptr.cast::<u8>(), details.size);
            let view = EngineDetailsView::from_bytes(bytes).expect("valid EngineDetails");
            assert_eq!(view.engine_id(), engine_id);
            let knobs: Vec<&str> = view.knobs().map(|k| k.knob_id()).collect();
            assert!(knobs.contains(&SLOPE), "{knobs:?}");
            let notes: Vec<i32> = view.behavior_notes().collect();
            assert!(notes.contains(&HOST_MEMORY_BEHAVIOR_NOTE_EXT), "{notes:?}");
        }
        p.ok(
            (p.engine.destroy_engine_details)(handle, &mut details),
            "DestroyEngineDetails",
        );
        assert!(details.ptr.is_null() && details.size == 0);

        // Plan with slope 0.5.
        let config = EngineConfig {
            engine_id,
            knobs: vec![KnobSetting::new(SLOPE, KnobValue::Float(0.5))],
            ..EngineConfig::default()
        }
        .to_bytes();
        let config = span(&config);
        let mut workspace = usize::MAX;
        p.ok(
            (p.engine.get_workspace_size)(handle, &config, &graph, &mut workspace),
            "GetWorkspaceSize",
        );
        assert_eq!(workspace, 0);
        let mut context = ptr::null_mut();
        p.ok(
            (p.engine.create_execution_context)(handle, &config, &graph, &mut context),
            "CreateExecutionContext",
        );
        assert!(!context.is_null());
        drop(relu); // The plan must not keep the graph.
        workspace = usize::MAX;
        p.ok(
            (p.engine.get_workspace_size_from_execution_context)(handle, context, &mut workspace),
            "GetWorkspaceSizeFromExecutionContext",
        );
        assert_eq!(workspace, 0);

        // Execute on host buffers.
        let mut x = [-4.0_f32, -1.0, -0.5, 0.0, 0.25, 1.0, 2.0, 3.5];
        let mut y = [f32::NAN; 8];
        let buffers = [
            hipdnnPluginDeviceBuffer_t {
                uid: 1,
                ptr: x.as_mut_ptr().cast(),
            },
            hipdnnPluginDeviceBuffer_t {
                uid: 2,
                ptr: y.as_mut_ptr().cast(),
            },
        ];
        p.ok(
            (p.engine.execute_op_graph)(handle, context, ptr::null_mut(), buffers.as_ptr(), 2),
            "ExecuteOpGraph",
        );
        assert_eq!(y, [-2.0, -0.5, -0.25, 0.0, 0.25, 1.0, 2.0, 3.5]);
        let expected: Vec<f32> = x
            .iter()
            .map(|&x| if x > 0.0 { x } else { 0.5 * x })
            .collect();
        assert_eq!(y[..], expected[..]);

        p.ok(
            (p.engine.destroy_execution_context)(handle, context),
            "DestroyExecutionContext",
        );
        p.ok((p.engine.destroy)(handle), "Destroy");
    }
}

/// Runs `scripts/check-plugin-symbols.sh` on `library`: (exit code, stdout + stderr).
fn check_symbols(library: &Path) -> (Option<i32>, String) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/check-plugin-symbols.sh");
    assert!(script.is_file(), "{} is missing", script.display());
    let output = Command::new("bash")
        .arg(&script)
        .arg(library)
        .output()
        .expect("bash runs");
    let text = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    (output.status.code(), text)
}

#[test]
fn symbol_check_accepts_the_minimal_plugin() {
    let (code, output) = check_symbols(&example_library("minimal_plugin"));
    assert_eq!(code, Some(0), "{output}");
}

#[test]
fn symbol_check_rejects_a_stray_export() {
    let (code, output) = check_symbols(&example_library("stray_symbol_plugin"));
    assert_eq!(code, Some(1), "{output}");
    assert!(output.contains("hipdnn_stray_helper"), "{output}");
    assert!(
        !output.contains("hipdnnPluginGetName"),
        "only the stray export is reported: {output}"
    );
}

#[test]
fn the_guide_shows_the_minimal_plugin_exactly_and_it_is_under_80_lines() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let example = std::fs::read_to_string(root.join("examples/minimal_plugin.rs")).unwrap();
    let guide = std::fs::read_to_string(root.join("../docs/writing-a-plugin.md")).unwrap();
    assert!(
        guide.contains(&format!("```rust\n{example}```")),
        "docs/writing-a-plugin.md must show plugin-sdk/examples/minimal_plugin.rs verbatim"
    );
    assert!(
        example.lines().count() < 80,
        "{} lines",
        example.lines().count()
    );
}
