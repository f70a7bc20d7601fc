//! Every entry point `export_engine_plugin!` emits, called the way a host calls it.
//!
//! The test plugin below is exported into this test binary by the macro. The exports sit
//! in an anonymous `const _` block, so they cannot be named by Rust path: they are
//! reached by symbol, through the `extern "C"` declarations in [`c`], which the ABI crate
//! generates from its one list of signatures.
//! Every trait method the SDK calls can be made to panic or fail on demand ([`arm`]),
//! which is how the panic boundary is tested. That switch, the logging callback and the
//! log level are process-wide, so the tests run one at a time ([`serial`]).
//!
//! `EnginePlugin::engines` runs once per process (in a `OnceLock`): a panic there is
//! tested in its own binary, `tests/engines_panic.rs`.

use std::cell::RefCell;
use std::ffi::{CStr, c_char, c_void};
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use hipdnn_data_sdk::engine_name_to_id;
use hipdnn_flatbuffers_sdk::EngineDetailsView;
use hipdnn_flatbuffers_sdk::model::{
    EngineConfig, EngineDetails, Graph, KnobSetting, Node, PointwiseAttributes, TensorAttributes,
};
use hipdnn_frontend::samples;
use hipdnn_plugin_sdk::abi::*;
use hipdnn_plugin_sdk::knobs::{DETERMINISTIC_KNOB_NAME, KnobSettingFactory};
use hipdnn_plugin_sdk::prelude::*;

// ---------------------------------------------------------------------------------------
// The exports, as a host sees them.

/// Every entry point, declared with the ABI crate's signatures.
mod c {
    hipdnn_plugin_sdk::abi::declare_entry_points!();
}

/// `hipdnnPluginSetLoggingCallback`, which takes its argument by value.
fn set_logging_callback(callback: hipdnnCallback_t) -> hipdnnPluginStatus_t {
    // SAFETY: no pointer is dereferenced; a callback, when given, is a `'static` function
    // of the declared type.
    unsafe { c::hipdnnPluginSetLoggingCallback(callback) }
}

/// `hipdnnPluginSetLogLevel`, which takes its argument by value.
fn set_log_level(level: hipdnnSeverity_t) -> hipdnnPluginStatus_t {
    // SAFETY: no pointer is involved; any value is allowed (unknown ones are refused).
    unsafe { c::hipdnnPluginSetLogLevel(level) }
}

// ---------------------------------------------------------------------------------------
// Fault injection.

/// What an armed trait method does instead of its work.
#[derive(Debug, Clone)]
enum Fault {
    /// `panic!("sabotaged <method>")`.
    Panic,
    /// `std::panic::panic_any(42)`: a payload that is not a string.
    PanicWithValue,
    /// Returns this error (methods returning `PluginResult`).
    Fail(PluginError),
    /// Returns a value the SDK must refuse (`serialize`: no bytes; `custom_knobs`: a
    /// knob in the reserved namespace).
    Degenerate,
}

static FAULT: Mutex<Option<(&'static str, Fault)>> = Mutex::new(None);

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The fault armed for `method`, if any; panics right here for the panicking kinds.
fn injected(method: &'static str) -> Option<Fault> {
    let armed = lock(&FAULT).clone();
    match armed {
        Some((m, Fault::Panic)) if m == method => panic!("sabotaged {method}"),
        Some((m, Fault::PanicWithValue)) if m == method => std::panic::panic_any(42_i32),
        Some((m, fault)) if m == method => Some(fault),
        _ => None,
    }
}

/// [`injected`] for methods returning `PluginResult`.
fn check(method: &'static str) -> PluginResult<()> {
    match injected(method) {
        Some(Fault::Fail(error)) => Err(error),
        _ => Ok(()),
    }
}

/// Disarms on drop, so a failing test leaves no fault behind.
struct Armed;

impl Drop for Armed {
    fn drop(&mut self) {
        *lock(&FAULT) = None;
    }
}

fn arm(method: &'static str, fault: Fault) -> Armed {
    *lock(&FAULT) = Some((method, fault));
    Armed
}

static SERIAL: Mutex<()> = Mutex::new(());

/// Held by every test: faults, the logging callback and the log level are global.
fn serial() -> MutexGuard<'static, ()> {
    lock(&SERIAL)
}

// ---------------------------------------------------------------------------------------
// The test plugin: a pointwise engine (y = scale * x on host floats, three custom knobs)
// and an engine that applies to every graph and needs workspace.

const POINTWISE_ENGINE: &CStr = c"TEST_POINTWISE_ENGINE";
const WORKSPACE_ENGINE: &CStr = c"TEST_WORKSPACE_ENGINE";
const POINTWISE_ID: i64 = engine_name_to_id("TEST_POINTWISE_ENGINE");
const WORKSPACE_ID: i64 = engine_name_to_id("TEST_WORKSPACE_ENGINE");
/// An engine of its own `IEngine` impl, without a name, that applies to nothing.
const ANONYMOUS_ID: i64 = engine_name_to_id("TEST_ANONYMOUS_ENGINE");
/// float64 in 0..=10, default 1: the factor applied to x.
const SCALE: &str = "test.pointwise.scale";
/// string "fast" or "exact", default "fast"; "exact" needs tile 16 (`from_choices`).
const MODE: &str = "test.pointwise.mode";
/// int64 in 1..=64, default 16.
const TILE: &str = "test.pointwise.tile";
const WORKSPACE_BYTES: usize = 256;

/// Per-handle state: which handle this is, in creation order.
#[derive(Debug)]
struct HandleState {
    serial: usize,
}

static HANDLES_CREATED: AtomicUsize = AtomicUsize::new(0);

#[derive(Debug)]
struct TestSettings {
    scale: f32,
}

impl Settings for TestSettings {
    fn from_choices(choices: &KnobChoices<'_>) -> PluginResult<Self> {
        check("Settings::from_choices")?;
        if choices.string(MODE) == Some("exact") && choices.int(TILE) != Some(16) {
            return Err(PluginError::bad_param("mode \"exact\" needs tile 16"));
        }
        Ok(Self {
            scale: choices.float(SCALE).unwrap_or(1.0) as f32,
        })
    }
}

/// What the last execution saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ExecutionSeen {
    stream: usize,
    handle: usize,
    workspace: usize,
    workspace_size: usize,
}

static LAST_EXECUTION: Mutex<Option<ExecutionSeen>> = Mutex::new(None);

#[derive(Debug, Clone, PartialEq)]
struct TestPlan {
    /// (x, y) uids; `None` for a plan that touches no tensor.
    io: Option<(i64, i64)>,
    len: usize,
    scale: f32,
    workspace: usize,
}

const PLAN_MAGIC: &[u8; 4] = b"TPL1";
const PLAN_BYTES: usize = 4 + 1 + 8 + 8 + 8 + 4 + 8;

impl TestPlan {
    fn to_bytes(&self) -> Vec<u8> {
        let (x, y) = self.io.unwrap_or((0, 0));
        let mut out = PLAN_MAGIC.to_vec();
        out.push(u8::from(self.io.is_some()));
        out.extend(x.to_le_bytes());
        out.extend(y.to_le_bytes());
        out.extend((self.len as u64).to_le_bytes());
        out.extend(self.scale.to_le_bytes());
        out.extend((self.workspace as u64).to_le_bytes());
        out
    }

    fn from_bytes(bytes: &[u8]) -> PluginResult<Self> {
        if bytes.len() != PLAN_BYTES || !bytes.starts_with(PLAN_MAGIC) {
            return Err(PluginError::bad_param(format!(
                "serialized plan: expected {PLAN_BYTES} bytes starting with TPL1, got {}",
                bytes.len()
            )));
        }
        let word = |at: usize| -> [u8; 8] { bytes[at..at + 8].try_into().expect("8 bytes") };
        let (x, y) = (i64::from_le_bytes(word(5)), i64::from_le_bytes(word(13)));
        Ok(Self {
            io: (bytes[4] == 1).then_some((x, y)),
            len: u64::from_le_bytes(word(21)) as usize,
            scale: f32::from_le_bytes(bytes[29..33].try_into().expect("4 bytes")),
            workspace: u64::from_le_bytes(word(33)) as usize,
        })
    }
}

impl IPlan<HandleState> for TestPlan {
    fn workspace_size(&self) -> usize {
        injected("IPlan::workspace_size");
        self.workspace
    }

    fn execute(&self, handle: &Handle<HandleState>, exec: &Execution<'_>) -> PluginResult<()> {
        check("IPlan::execute")?;
        let (buffers, workspace) = (exec.buffers(), exec.workspace());
        *lock(&LAST_EXECUTION) = Some(ExecutionSeen {
            stream: exec.stream().addr(),
            handle: handle.serial,
            workspace: workspace.as_ptr().addr(),
            workspace_size: workspace.size(),
        });
        let Some((x, y)) = self.io else {
            return Ok(());
        };
        // SAFETY: this plugin's contract: distinct host buffers of `len` floats.
        let x = unsafe { buffers.host::<f32>(x, self.len)? };
        // SAFETY: as above.
        let y = unsafe { buffers.host_mut::<f32>(y, self.len)? };
        for (y, &x) in y.iter_mut().zip(x) {
            *y = self.scale * x;
        }
        Ok(())
    }
}

/// Single-node pointwise graphs.
struct PointwiseBuilder;

fn single_pointwise<'a>(graph: &GraphView<'a>) -> Option<wire::PointwiseAttributes<'a>> {
    match graph.nodes().next()?.attributes() {
        NodeAttributesRef::PointwiseAttributes(p) if graph.node_count() == 1 => Some(p),
        _ => None,
    }
}

impl IPlanBuilder<HandleState, TestSettings, TestPlan> for PointwiseBuilder {
    fn is_applicable(&self, _: &Handle<HandleState>, graph: &GraphView<'_>) -> bool {
        injected("IPlanBuilder::is_applicable").is_none() && single_pointwise(graph).is_some()
    }

    fn custom_knobs(&self, _: &Handle<HandleState>, _: &GraphView<'_>) -> Vec<Knob> {
        let mut knobs = vec![
            KnobFactory::float(SCALE, 1.0)
                .float_range(0.0, 10.0)
                .build()
                .expect("a valid knob"),
            KnobFactory::string(MODE, "fast")
                .valid_strings(&["fast", "exact"])
                .build()
                .expect("a valid knob"),
            KnobFactory::int(TILE, 16)
                .range(1, 64)
                .build()
                .expect("a valid knob"),
        ];
        if let Some(Fault::Degenerate) = injected("IPlanBuilder::custom_knobs") {
            // KnobFactory refuses this id; a hand-made knob gets past it.
            let mut reserved = knobs[2].clone();
            reserved.knob_id = "global.tile".to_owned();
            knobs.push(reserved);
        }
        knobs
    }

    fn build_plan(
        &self,
        _: &Handle<HandleState>,
        graph: &GraphView<'_>,
        settings: TestSettings,
    ) -> PluginResult<TestPlan> {
        check("IPlanBuilder::build_plan")?;
        let p = single_pointwise(graph)
            .ok_or_else(|| PluginError::not_applicable("not a pointwise graph"))?;
        let (x, y) = (p.in_0_tensor_uid(), p.out_0_tensor_uid());
        let len = graph
            .tensor(x)
            .map_or(0, |t| t.dims().iter().product::<i64>() as usize);
        Ok(TestPlan {
            io: Some((x, y)),
            len,
            scale: settings.scale,
            workspace: 0,
        })
    }
}

/// Every graph; the plan touches no tensor but needs workspace.
struct WorkspaceBuilder;

impl IPlanBuilder<HandleState, TestSettings, TestPlan> for WorkspaceBuilder {
    fn is_applicable(&self, _: &Handle<HandleState>, _: &GraphView<'_>) -> bool {
        injected("IPlanBuilder::is_applicable").is_none()
    }

    fn build_plan(
        &self,
        _: &Handle<HandleState>,
        _: &GraphView<'_>,
        settings: TestSettings,
    ) -> PluginResult<TestPlan> {
        check("IPlanBuilder::build_plan")?;
        Ok(TestPlan {
            io: None,
            len: 0,
            scale: settings.scale,
            workspace: WORKSPACE_BYTES,
        })
    }
}

/// `IEngine` implemented by hand: no name, never applicable.
struct AnonymousEngine;

impl IEngine<HandleState, TestSettings, TestPlan> for AnonymousEngine {
    fn id(&self) -> i64 {
        ANONYMOUS_ID
    }

    fn is_applicable(&self, _: &Handle<HandleState>, _: &GraphView<'_>) -> bool {
        false
    }

    fn details(&self, _: &Handle<HandleState>, _: &GraphView<'_>) -> PluginResult<EngineDetails> {
        Err(PluginError::not_applicable(
            "the anonymous engine runs nothing",
        ))
    }

    fn create_plan(
        &self,
        _: &Handle<HandleState>,
        _: &EngineConfig,
        _: &GraphView<'_>,
    ) -> PluginResult<TestPlan> {
        Err(PluginError::not_applicable(
            "the anonymous engine runs nothing",
        ))
    }
}

struct TestPlugin;

impl EnginePlugin for TestPlugin {
    const NAME: &'static CStr = c"test_plugin";
    const VERSION: &'static CStr = c"9.8.7";
    type Handle = HandleState;
    type Settings = TestSettings;
    type Context = TestPlan;

    fn engines() -> EngineManager<HandleState, TestSettings, TestPlan> {
        let pointwise = Engine::new(POINTWISE_ENGINE)
            .with_memory_kind(MemoryKind::Host)
            .with_builder(PointwiseBuilder)
            .with_global_knob(global_knobs::deterministic());
        let workspace = Engine::new(WORKSPACE_ENGINE)
            .with_memory_kind(MemoryKind::Host)
            .with_builder(WorkspaceBuilder);
        EngineManager::new()
            .with_engine(pointwise)
            .with_engine(workspace)
            .with_engine(AnonymousEngine)
    }

    fn create_handle() -> PluginResult<HandleState> {
        check("EnginePlugin::create_handle")?;
        Ok(HandleState {
            serial: HANDLES_CREATED.fetch_add(1, Ordering::Relaxed) + 1,
        })
    }

    fn stream_changed(state: &HandleState, stream: hipStream_t) -> PluginResult<()> {
        check("EnginePlugin::stream_changed")?;
        lock(&STREAM_CHANGES).push((state.serial, stream.addr()));
        Ok(())
    }
}

/// (handle serial, new stream) for every call of the stream hook.
static STREAM_CHANGES: Mutex<Vec<(usize, usize)>> = Mutex::new(Vec::new());

impl SerializablePlugin for TestPlugin {
    // The plugin mixes host engines with a device one (the anonymous engine), so it
    // says which memory a restored plan runs in.
    fn memory_kind(_: &TestPlan) -> Option<MemoryKind> {
        Some(MemoryKind::Host)
    }

    fn serialize(_: &Handle<HandleState>, plan: &TestPlan) -> PluginResult<Vec<u8>> {
        match injected("SerializablePlugin::serialize") {
            Some(Fault::Fail(error)) => Err(error),
            Some(Fault::Degenerate) => Ok(Vec::new()),
            _ => Ok(plan.to_bytes()),
        }
    }

    fn deserialize(_: &Handle<HandleState>, bytes: &[u8]) -> PluginResult<TestPlan> {
        check("SerializablePlugin::deserialize")?;
        TestPlan::from_bytes(bytes)
    }
}

hipdnn_plugin_sdk::export_engine_plugin!(TestPlugin, serialization);

// ---------------------------------------------------------------------------------------
// Host-side helpers.

const SUCCESS: hipdnnPluginStatus_t = HIPDNN_PLUGIN_STATUS_SUCCESS;
const BAD_PARAM: hipdnnPluginStatus_t = HIPDNN_PLUGIN_STATUS_BAD_PARAM;
const INVALID_VALUE: hipdnnPluginStatus_t = HIPDNN_PLUGIN_STATUS_INVALID_VALUE;
const INTERNAL_ERROR: hipdnnPluginStatus_t = HIPDNN_PLUGIN_STATUS_INTERNAL_ERROR;
const NOT_APPLICABLE: hipdnnPluginStatus_t = HIPDNN_PLUGIN_STATUS_NOT_APPLICABLE;

/// Uids and size of the pointwise graph.
const X: i64 = 1;
const Y: i64 = 2;
const LEN: usize = 8;
/// Written into out-parameters before a failing call, to check they stay untouched.
const UNTOUCHED: usize = 0x5EED;
const UNTOUCHED_ID: i64 = 0x5EED;
const UNTOUCHED_STR: &CStr = c"untouched";

/// This thread's last error, read through `hipdnnPluginGetLastErrorString`.
fn last_error() -> String {
    let mut text = ptr::null();
    // SAFETY: `text` is a live local to write to.
    unsafe { c::hipdnnPluginGetLastErrorString(&mut text) };
    assert!(!text.is_null(), "GetLastErrorString wrote null");
    // SAFETY: the plugin wrote its NUL-terminated thread-local buffer, which stays valid
    // until this thread's next call into the plugin.
    unsafe { CStr::from_ptr(text) }
        .to_string_lossy()
        .into_owned()
}

#[track_caller]
fn assert_ok(status: hipdnnPluginStatus_t) {
    assert_eq!(status, SUCCESS, "last error: {}", last_error());
    assert_eq!(last_error(), "", "a successful call clears the last error");
}

#[track_caller]
fn assert_fails(status: hipdnnPluginStatus_t, expected: hipdnnPluginStatus_t, needle: &str) {
    let error = last_error();
    assert_eq!(status, expected, "last error: {error}");
    assert!(
        error.contains(needle),
        "last error {error:?} does not mention {needle:?}"
    );
}

fn span(bytes: &[u8]) -> hipdnnPluginConstData_t {
    hipdnnPluginConstData_t {
        ptr: bytes.as_ptr().cast(),
        size: bytes.len(),
    }
}

fn untouched_span() -> hipdnnPluginConstData_t {
    hipdnnPluginConstData_t {
        ptr: UNTOUCHED_STR.as_ptr().cast(),
        size: UNTOUCHED,
    }
}

#[track_caller]
fn assert_span_untouched(span: hipdnnPluginConstData_t) {
    assert!(ptr::eq(span.ptr, UNTOUCHED_STR.as_ptr().cast()) && span.size == UNTOUCHED);
}

fn untouched_handle() -> hipdnnEnginePluginHandle_t {
    ptr::without_provenance_mut(UNTOUCHED)
}

fn untouched_context() -> hipdnnEnginePluginExecutionContext_t {
    ptr::without_provenance_mut(UNTOUCHED)
}

fn buffer(uid: i64, data: &mut [f32]) -> hipdnnPluginDeviceBuffer_t {
    hipdnnPluginDeviceBuffer_t {
        uid,
        ptr: data.as_mut_ptr().cast(),
    }
}

fn tensor(uid: i64, name: &str) -> TensorAttributes {
    TensorAttributes {
        uid,
        name: name.to_owned(),
        dims: vec![2, 4],
        strides: vec![4, 1],
        ..TensorAttributes::default()
    }
}

/// x (uid 1) → ReLU → y (uid 2), `[2, 4]` FLOAT; `in_1` adds a second input uid.
fn pointwise_model(in_1: Option<i64>) -> Graph {
    Graph {
        name: "relu".to_owned(),
        io_data_type: DataType::Float,
        compute_data_type: DataType::Float,
        tensors: vec![tensor(X, "x"), tensor(Y, "y")],
        nodes: vec![Node::new(
            "relu",
            PointwiseAttributes {
                operation: PointwiseMode::RELU_FWD,
                in_0_tensor_uid: X,
                in_1_tensor_uid: in_1,
                out_0_tensor_uid: Y,
                ..PointwiseAttributes::default()
            },
        )],
        ..Graph::default()
    }
}

fn relu_graph() -> Vec<u8> {
    let mut graph = pointwise_model(None);
    graph.validate().expect("a valid graph");
    graph.to_bytes()
}

fn conv_graph() -> Vec<u8> {
    let mut graph = samples::conv_bias_relu();
    graph.validate().expect("a valid graph");
    graph.to_bytes()
}

fn config(engine_id: i64, knobs: Vec<KnobSetting>) -> Vec<u8> {
    EngineConfig {
        engine_id,
        knobs,
        ..EngineConfig::default()
    }
    .to_bytes()
}

/// Deterministic noise (xorshift64).
fn noise(seed: u64, len: usize) -> Vec<u8> {
    let mut state = seed.max(1);
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u8
        })
        .collect()
}

/// Malformed renderings of `valid`: empty, truncated, and random bytes.
fn malformed(valid: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut cases = vec![
        ("empty".to_owned(), Vec::new()),
        ("4 bytes".to_owned(), valid[..4].to_vec()),
        ("first half".to_owned(), valid[..valid.len() / 2].to_vec()),
    ];
    for seed in 1..=16 {
        cases.push((format!("noise {seed}"), noise(seed, 16 * seed as usize)));
    }
    cases
}

/// A plugin handle, destroyed on drop.
struct PluginHandle(hipdnnEnginePluginHandle_t);

impl PluginHandle {
    fn new() -> Self {
        let mut raw = ptr::null_mut();
        // SAFETY: `raw` is a live local to write to.
        assert_ok(unsafe { c::hipdnnEnginePluginCreate(&mut raw) });
        assert!(!raw.is_null());
        Self(raw)
    }

    fn raw(&self) -> hipdnnEnginePluginHandle_t {
        self.0
    }

    fn applicable(&self, graph: &[u8]) -> Vec<i64> {
        let graph = span(graph);
        let (mut ids, mut count) = ([UNTOUCHED_ID; 4], 0_u32);
        // SAFETY: a live handle, a span over live bytes, room for 4 ids.
        let status = unsafe {
            c::hipdnnEnginePluginGetApplicableEngineIds(
                self.0,
                &graph,
                ids.as_mut_ptr(),
                4,
                &mut count,
            )
        };
        assert_ok(status);
        ids[..count as usize].to_vec()
    }

    fn workspace_size(&self, config: &[u8], graph: &[u8]) -> Result<usize, hipdnnPluginStatus_t> {
        let (config, graph, mut size) = (span(config), span(graph), UNTOUCHED);
        // SAFETY: a live handle, spans over live bytes, a live out-parameter.
        let status =
            unsafe { c::hipdnnEnginePluginGetWorkspaceSize(self.0, &config, &graph, &mut size) };
        if status == SUCCESS {
            Ok(size)
        } else {
            assert_eq!(size, UNTOUCHED, "workspace_size written on failure");
            Err(status)
        }
    }

    fn try_context(
        &self,
        config: &[u8],
        graph: &[u8],
    ) -> Result<Context<'_>, hipdnnPluginStatus_t> {
        let (config, graph, mut raw) = (span(config), span(graph), untouched_context());
        // SAFETY: a live handle, spans over live bytes, a live out-parameter.
        let status = unsafe {
            c::hipdnnEnginePluginCreateExecutionContext(self.0, &config, &graph, &mut raw)
        };
        if status == SUCCESS {
            assert!(!raw.is_null());
            Ok(Context { handle: self, raw })
        } else {
            assert_eq!(
                raw,
                untouched_context(),
                "execution_context written on failure"
            );
            Err(status)
        }
    }

    #[track_caller]
    fn context(&self, config: &[u8], graph: &[u8]) -> Context<'_> {
        self.try_context(config, graph)
            .unwrap_or_else(|status| panic!("{status}: {}", last_error()))
    }

    /// GetEngineDetails; on failure the out-span must be untouched.
    fn details(
        &self,
        engine_id: i64,
        graph: &[u8],
    ) -> Result<hipdnnPluginConstData_t, hipdnnPluginStatus_t> {
        let (graph, mut details) = (span(graph), untouched_span());
        // SAFETY: a live handle, a span over live bytes, a live out-parameter.
        let status = unsafe {
            c::hipdnnEnginePluginGetEngineDetails(self.0, engine_id, &graph, &mut details)
        };
        if status == SUCCESS {
            Ok(details)
        } else {
            assert_span_untouched(details);
            Err(status)
        }
    }

    fn destroy_details(&self, details: &mut hipdnnPluginConstData_t) -> hipdnnPluginStatus_t {
        // SAFETY: a live handle and a live span (the plugin checks its pointer).
        unsafe { c::hipdnnEnginePluginDestroyEngineDetails(self.0, details) }
    }
}

impl Drop for PluginHandle {
    fn drop(&mut self) {
        // SAFETY: created by `new`, destroyed once, here.
        let status = unsafe { c::hipdnnEnginePluginDestroy(self.0) };
        if !std::thread::panicking() {
            assert_ok(status);
        }
    }
}

/// An execution context, destroyed on drop.
struct Context<'h> {
    handle: &'h PluginHandle,
    raw: hipdnnEnginePluginExecutionContext_t,
}

impl Context<'_> {
    fn execute(
        &self,
        workspace: *mut c_void,
        buffers: &[hipdnnPluginDeviceBuffer_t],
    ) -> hipdnnPluginStatus_t {
        // SAFETY: a live handle and context; `buffers` is a live array of its length, its
        // pointers address LEN floats each (the test plugin's contract).
        unsafe {
            c::hipdnnEnginePluginExecuteOpGraph(
                self.handle.raw(),
                self.raw,
                workspace,
                buffers.as_ptr(),
                buffers.len() as u32,
            )
        }
    }

    fn workspace_size(&self) -> Result<usize, hipdnnPluginStatus_t> {
        let mut size = UNTOUCHED;
        // SAFETY: a live handle and context, a live out-parameter.
        let status = unsafe {
            c::hipdnnEnginePluginGetWorkspaceSizeFromExecutionContext(
                self.handle.raw(),
                self.raw,
                &mut size,
            )
        };
        if status == SUCCESS {
            Ok(size)
        } else {
            assert_eq!(size, UNTOUCHED);
            Err(status)
        }
    }

    fn serialize(&self) -> Result<hipdnnPluginConstData_t, hipdnnPluginStatus_t> {
        let mut serialized = untouched_span();
        // SAFETY: a live handle and context, a live out-parameter.
        let status = unsafe {
            c::hipdnnEnginePluginSerializeExecutionContext(
                self.handle.raw(),
                self.raw,
                &mut serialized,
            )
        };
        if status == SUCCESS {
            Ok(serialized)
        } else {
            assert_span_untouched(serialized);
            Err(status)
        }
    }
}

impl Drop for Context<'_> {
    fn drop(&mut self) {
        // SAFETY: created by CreateExecutionContext(FromSerialized) on this handle,
        // destroyed once, here.
        let status =
            unsafe { c::hipdnnEnginePluginDestroyExecutionContext(self.handle.raw(), self.raw) };
        if !std::thread::panicking() {
            assert_ok(status);
        }
    }
}

/// Runs the pointwise engine's plan on x = 1..=8 and returns y.
fn run_pointwise(context: &Context<'_>) -> Vec<f32> {
    let mut x: Vec<f32> = (1..=LEN).map(|i| i as f32).collect();
    let mut y = vec![0.0_f32; LEN];
    let buffers = [buffer(X, &mut x), buffer(Y, &mut y)];
    assert_ok(context.execute(ptr::null_mut(), &buffers));
    y
}

/// Arms `method` to panic, checks that `call` then fails with INTERNAL_ERROR and the
/// panic message, and that the same call succeeds once disarmed.
#[track_caller]
fn assert_panic_is_internal_error(
    method: &'static str,
    entry: &str,
    mut call: impl FnMut() -> hipdnnPluginStatus_t,
) {
    {
        let _armed = arm(method, Fault::Panic);
        let status = call();
        assert_eq!(status, INTERNAL_ERROR, "last error: {}", last_error());
        assert_eq!(
            last_error(),
            format!("panic in {entry}: sabotaged {method}")
        );
    }
    assert_ok(call());
}

// ---------------------------------------------------------------------------------------
// Base functions and the last error.

#[test]
fn base_functions_report_name_version_api_version_and_type() {
    let _serial = serial();
    let (mut name, mut version, mut api, mut kind) = (
        ptr::null(),
        ptr::null(),
        ptr::null(),
        HIPDNN_PLUGIN_TYPE_UNSPECIFIED,
    );
    // SAFETY: live out-parameters; the strings written are static.
    unsafe {
        assert_ok(c::hipdnnPluginGetName(&mut name));
        assert_ok(c::hipdnnPluginGetVersion(&mut version));
        assert_ok(c::hipdnnPluginGetApiVersion(&mut api));
        assert_ok(c::hipdnnPluginGetType(&mut kind));
        assert_eq!(CStr::from_ptr(name), c"test_plugin");
        assert_eq!(CStr::from_ptr(version), c"9.8.7");
        assert_eq!(CStr::from_ptr(api), HIPDNN_ENGINE_API_VERSION);
    }
    assert_eq!(kind, HIPDNN_PLUGIN_TYPE_ENGINE);
    assert_eq!(HIPDNN_ENGINE_API_VERSION, c"1.4.0");
}

#[test]
fn get_name_null_out_ptr_is_bad_param() {
    let _serial = serial();
    // SAFETY: null is what is tested.
    let status = unsafe { c::hipdnnPluginGetName(ptr::null_mut()) };
    assert_fails(status, BAD_PARAM, "name is null");
}

#[test]
fn get_version_and_api_version_null_out_ptr_is_bad_param() {
    let _serial = serial();
    // SAFETY: null is what is tested.
    let status = unsafe { c::hipdnnPluginGetVersion(ptr::null_mut()) };
    assert_fails(status, BAD_PARAM, "version is null");
    // SAFETY: as above.
    let status = unsafe { c::hipdnnPluginGetApiVersion(ptr::null_mut()) };
    assert_fails(status, BAD_PARAM, "version is null");
}

#[test]
fn get_type_null_out_ptr_is_bad_param() {
    let _serial = serial();
    // SAFETY: null is what is tested.
    let status = unsafe { c::hipdnnPluginGetType(ptr::null_mut()) };
    assert_fails(status, BAD_PARAM, "type is null");
}

#[test]
fn get_last_error_string_null_is_a_no_op() {
    let _serial = serial();
    // SAFETY: null is what is tested.
    let status = unsafe { c::hipdnnPluginGetType(ptr::null_mut()) };
    assert_eq!(status, BAD_PARAM);
    // SAFETY: documented as a no-op.
    unsafe { c::hipdnnPluginGetLastErrorString(ptr::null_mut()) };
    // It neither crashed nor cleared the error.
    assert_eq!(last_error(), "type is null");
}

#[test]
fn last_error_is_cleared_by_the_next_successful_call() {
    let _serial = serial();
    // SAFETY: null is what is tested.
    let status = unsafe { c::hipdnnPluginGetType(ptr::null_mut()) };
    assert_fails(status, BAD_PARAM, "type is null");
    let mut kind = HIPDNN_PLUGIN_TYPE_UNSPECIFIED;
    // SAFETY: a live out-parameter.
    assert_ok(unsafe { c::hipdnnPluginGetType(&mut kind) });
    assert_eq!(last_error(), "");
}

#[test]
fn last_error_is_per_thread() {
    let _serial = serial();
    // SAFETY: null is what is tested.
    let status = unsafe { c::hipdnnPluginGetName(ptr::null_mut()) };
    assert_eq!(status, BAD_PARAM);
    std::thread::spawn(|| {
        assert_eq!(last_error(), "", "another thread's error leaked");
        // SAFETY: null is what is tested.
        let status = unsafe { c::hipdnnPluginGetType(ptr::null_mut()) };
        assert_fails(status, BAD_PARAM, "type is null");
    })
    .join()
    .expect("the other thread passed");
    assert_eq!(last_error(), "name is null");
}

#[test]
fn last_error_is_truncated_to_the_c_buffer_size() {
    let _serial = serial();
    let handle = PluginHandle::new();
    let long = "x".repeat(3 * HIPDNN_PLUGIN_ERROR_STRING_MAX_LENGTH);
    let _armed = arm(
        "IPlanBuilder::build_plan",
        Fault::Fail(PluginError::bad_param(long)),
    );
    let status = handle
        .try_context(&config(POINTWISE_ID, vec![]), &relu_graph())
        .map(drop)
        .unwrap_err();
    assert_eq!(status, BAD_PARAM);
    let error = last_error();
    assert_eq!(error.len(), HIPDNN_PLUGIN_ERROR_STRING_MAX_LENGTH - 1);
    assert!(error.bytes().all(|b| b == b'x'));
}

// ---------------------------------------------------------------------------------------
// Logging.

thread_local! {
    /// What the host callback received on this thread.
    static LOGGED: RefCell<Vec<(hipdnnSeverity_t, String)>> = const { RefCell::new(Vec::new()) };
}

unsafe extern "C" fn record_log(severity: hipdnnSeverity_t, message: *const c_char) {
    // SAFETY: the plugin passes a NUL-terminated message valid during the call.
    let message = unsafe { CStr::from_ptr(message) }
        .to_string_lossy()
        .into_owned();
    LOGGED.with(|logged| logged.borrow_mut().push((severity, message)));
}

fn take_logged() -> Vec<(hipdnnSeverity_t, String)> {
    LOGGED.with(|logged| std::mem::take(&mut *logged.borrow_mut()))
}

/// Installs [`record_log`] at level INFO, with nothing recorded yet; puts the level back
/// to INFO on drop.
struct Recording;

impl Recording {
    fn start() -> Self {
        assert_ok(set_logging_callback(Some(record_log)));
        assert_ok(set_log_level(HIPDNN_SEV_INFO));
        // The first call into the plugin builds its engines, which warns that their
        // names are not registered: get that out of the way.
        all_engine_ids(0);
        take_logged();
        Recording
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        set_log_level(HIPDNN_SEV_INFO);
    }
}

/// Fails GetEngineName with an unknown id (an error the SDK logs).
fn fail_get_engine_name() {
    let mut name = ptr::null();
    // SAFETY: a live out-parameter.
    let status = unsafe { c::hipdnnEnginePluginGetEngineName(0x1234, &mut name) };
    assert_eq!(status, INVALID_VALUE);
}

/// Succeeds with a setting for a knob the engine lacks (a warning the SDK logs).
fn warn_unknown_knob(handle: &PluginHandle) {
    let config = config(POINTWISE_ID, vec![KnobSettingFactory::int("test.nope", 1)]);
    assert_eq!(handle.workspace_size(&config, &relu_graph()), Ok(0));
}

#[test]
fn set_logging_callback_null_is_bad_param_and_keeps_the_previous_callback() {
    let _serial = serial();
    let _recording = Recording::start();
    let status = set_logging_callback(None);
    assert_fails(status, BAD_PARAM, "logging callback is null");
    take_logged();
    fail_get_engine_name();
    assert_eq!(
        take_logged().len(),
        1,
        "the installed callback still receives"
    );
}

#[test]
fn failed_calls_are_logged_to_the_host_callback_as_errors() {
    let _serial = serial();
    let _recording = Recording::start();
    fail_get_engine_name();
    let logged = take_logged();
    assert_eq!(logged.len(), 1, "{logged:?}");
    let (severity, message) = &logged[0];
    assert_eq!(*severity, HIPDNN_SEV_ERROR);
    for needle in [
        "hipdnnEnginePluginGetEngineName",
        "HIPDNN_PLUGIN_STATUS_INVALID_VALUE",
        "0x0000000000001234",
    ] {
        assert!(message.contains(needle), "{message:?} lacks {needle:?}");
    }
}

#[test]
fn log_level_filters_what_reaches_the_callback() {
    let _serial = serial();
    let _recording = Recording::start();
    let handle = PluginHandle::new();
    take_logged();

    warn_unknown_knob(&handle);
    let logged = take_logged();
    assert!(
        logged
            .iter()
            .any(|(s, m)| *s == HIPDNN_SEV_WARN && m.contains("test.nope")),
        "{logged:?}"
    );

    assert_ok(set_log_level(HIPDNN_SEV_ERROR));
    warn_unknown_knob(&handle);
    assert_eq!(take_logged(), [], "warnings are below ERROR");
    fail_get_engine_name();
    assert_eq!(take_logged().len(), 1);

    assert_ok(set_log_level(HIPDNN_SEV_OFF));
    fail_get_engine_name();
    warn_unknown_knob(&handle);
    assert_eq!(take_logged(), [], "OFF forwards nothing");
}

#[test]
fn set_log_level_outside_hipdnn_severity_is_bad_param_and_keeps_the_level() {
    let _serial = serial();
    let _recording = Recording::start();
    assert_ok(set_log_level(HIPDNN_SEV_OFF));
    for level in [9, -1, 5] {
        let status = set_log_level(hipdnnSeverity_t(level));
        assert_fails(status, BAD_PARAM, &format!("log level {level}"));
    }
    fail_get_engine_name();
    assert_eq!(take_logged(), [], "the level is still OFF");
}

// ---------------------------------------------------------------------------------------
// Engine ids and names.

fn all_engine_ids(max: u32) -> (Vec<i64>, u32) {
    let (mut ids, mut count) = (vec![UNTOUCHED_ID; 4], UNTOUCHED as u32);
    assert!(max <= 4);
    // SAFETY: room for `max <= 4` ids, a live count.
    assert_ok(unsafe { c::hipdnnEnginePluginGetAllEngineIds(ids.as_mut_ptr(), max, &mut count) });
    (ids, count)
}

#[test]
fn get_all_engine_ids_with_max_zero_writes_the_total() {
    let _serial = serial();
    let mut count = UNTOUCHED as u32;
    // SAFETY: max 0 with null ids is the documented size query.
    assert_ok(unsafe { c::hipdnnEnginePluginGetAllEngineIds(ptr::null_mut(), 0, &mut count) });
    assert_eq!(count, 3);
}

#[test]
fn get_all_engine_ids_fills_the_array_in_registration_order() {
    let _serial = serial();
    let (ids, count) = all_engine_ids(4);
    assert_eq!(count, 3);
    assert_eq!(
        ids,
        [POINTWISE_ID, WORKSPACE_ID, ANONYMOUS_ID, UNTOUCHED_ID]
    );
    let (ids, count) = all_engine_ids(3);
    assert_eq!(
        (count, &ids[..3]),
        (3, &[POINTWISE_ID, WORKSPACE_ID, ANONYMOUS_ID][..])
    );
}

#[test]
fn get_all_engine_ids_short_array_gets_the_first_max_ids() {
    let _serial = serial();
    let (ids, count) = all_engine_ids(1);
    assert_eq!(count, 1);
    assert_eq!(ids[..2], [POINTWISE_ID, UNTOUCHED_ID]);
    let (ids, count) = all_engine_ids(2);
    assert_eq!(count, 2);
    assert_eq!(ids[..3], [POINTWISE_ID, WORKSPACE_ID, UNTOUCHED_ID]);
}

#[test]
fn get_all_engine_ids_null_pointers_are_bad_param() {
    let _serial = serial();
    let mut ids = [UNTOUCHED_ID; 2];
    // SAFETY: null is what is tested; `ids` is live.
    let status =
        unsafe { c::hipdnnEnginePluginGetAllEngineIds(ids.as_mut_ptr(), 2, ptr::null_mut()) };
    assert_fails(status, BAD_PARAM, "num_engines is null");
    assert_eq!(ids, [UNTOUCHED_ID; 2]);
    let mut count = UNTOUCHED as u32;
    // SAFETY: null is what is tested; `count` is live.
    let status = unsafe { c::hipdnnEnginePluginGetAllEngineIds(ptr::null_mut(), 2, &mut count) };
    assert_fails(status, BAD_PARAM, "engine_ids is null");
    assert_eq!(count, UNTOUCHED as u32);
}

#[test]
fn get_engine_name_returns_the_name_whose_fnv1a_hash_is_the_id() {
    let _serial = serial();
    let mut names = Vec::new();
    for id in [POINTWISE_ID, WORKSPACE_ID] {
        let mut name = ptr::null();
        // SAFETY: a live out-parameter; the name written is static.
        assert_ok(unsafe { c::hipdnnEnginePluginGetEngineName(id, &mut name) });
        // SAFETY: a static NUL-terminated string.
        let name = unsafe { CStr::from_ptr(name) }.to_str().expect("ASCII");
        assert_eq!(engine_name_to_id(name), id, "{name}");
        names.push(name);
    }
    assert_eq!(names, ["TEST_POINTWISE_ENGINE", "TEST_WORKSPACE_ENGINE"]);
}

#[test]
fn get_engine_name_of_an_engine_without_a_name_is_not_applicable() {
    let _serial = serial();
    let mut name = UNTOUCHED_STR.as_ptr();
    // SAFETY: a live out-parameter.
    let status = unsafe { c::hipdnnEnginePluginGetEngineName(ANONYMOUS_ID, &mut name) };
    assert_fails(status, NOT_APPLICABLE, "engine has no name");
    assert!(ptr::eq(name, UNTOUCHED_STR.as_ptr()));
}

#[test]
fn get_engine_name_unknown_id_is_invalid_value_naming_the_id_in_hex() {
    let _serial = serial();
    for (id, hex) in [
        (0x1234, "0x0000000000001234"),
        (-1, "0xFFFFFFFFFFFFFFFF"),
        (0, "0x0000000000000000"),
    ] {
        let mut name = UNTOUCHED_STR.as_ptr();
        // SAFETY: a live out-parameter.
        let status = unsafe { c::hipdnnEnginePluginGetEngineName(id, &mut name) };
        assert_fails(status, INVALID_VALUE, hex);
        assert!(ptr::eq(name, UNTOUCHED_STR.as_ptr()));
    }
}

#[test]
fn get_engine_name_null_out_ptr_is_bad_param() {
    let _serial = serial();
    // SAFETY: null is what is tested.
    let status = unsafe { c::hipdnnEnginePluginGetEngineName(POINTWISE_ID, ptr::null_mut()) };
    assert_fails(status, BAD_PARAM, "name is null");
}

// ---------------------------------------------------------------------------------------
// Handles and streams.

#[test]
fn create_makes_distinct_handles_with_their_own_state() {
    let _serial = serial();
    let (a, b) = (PluginHandle::new(), PluginHandle::new());
    assert_ne!(a.raw(), b.raw());
    let graph = relu_graph();
    let config = config(WORKSPACE_ID, vec![]);
    let mut workspace = [0_u8; WORKSPACE_BYTES];
    let mut seen = Vec::new();
    for handle in [&a, &b] {
        let context = handle.context(&config, &graph);
        assert_ok(context.execute(workspace.as_mut_ptr().cast(), &[]));
        seen.push(lock(&LAST_EXECUTION).expect("executed").handle);
    }
    assert_eq!(
        seen[1],
        seen[0] + 1,
        "state comes from create_handle, per handle"
    );
}

#[test]
fn create_null_out_ptr_is_bad_param() {
    let _serial = serial();
    // SAFETY: null is what is tested.
    let status = unsafe { c::hipdnnEnginePluginCreate(ptr::null_mut()) };
    assert_fails(status, BAD_PARAM, "handle is null");
}

#[test]
fn destroy_null_handle_is_a_no_op() {
    let _serial = serial();
    // SAFETY: null is documented as a no-op.
    assert_ok(unsafe { c::hipdnnEnginePluginDestroy(ptr::null_mut()) });
}

#[test]
fn set_stream_is_visible_to_the_plan_through_handle_stream() {
    let _serial = serial();
    let (a, b) = (PluginHandle::new(), PluginHandle::new());
    let stream: hipStream_t = ptr::without_provenance_mut(0xABC0);
    // SAFETY: a live handle; the stream is opaque to the plugin and never dereferenced.
    assert_ok(unsafe { c::hipdnnEnginePluginSetStream(a.raw(), stream) });
    let (config, graph) = (config(POINTWISE_ID, vec![]), relu_graph());
    run_pointwise(&a.context(&config, &graph));
    assert_eq!(lock(&LAST_EXECUTION).expect("executed").stream, 0xABC0);
    run_pointwise(&b.context(&config, &graph));
    assert_eq!(
        lock(&LAST_EXECUTION).expect("executed").stream,
        0,
        "another handle keeps the default stream"
    );
    // SAFETY: a live handle; null is HIP's default stream.
    assert_ok(unsafe { c::hipdnnEnginePluginSetStream(a.raw(), ptr::null_mut()) });
    run_pointwise(&a.context(&config, &graph));
    assert_eq!(lock(&LAST_EXECUTION).expect("executed").stream, 0);
}

#[test]
fn set_stream_calls_the_hook_and_a_refusal_keeps_the_old_stream() {
    let _serial = serial();
    let handle = PluginHandle::new();
    let serial_of = |stream: usize| {
        lock(&STREAM_CHANGES)
            .iter()
            .rev()
            .find(|(_, s)| *s == stream)
            .map(|(h, _)| *h)
    };
    let (first, second): (hipStream_t, hipStream_t) = (
        ptr::without_provenance_mut(0x5100),
        ptr::without_provenance_mut(0x5200),
    );
    // SAFETY: a live handle; streams are opaque to the plugin.
    assert_ok(unsafe { c::hipdnnEnginePluginSetStream(handle.raw(), first) });
    let calls = lock(&STREAM_CHANGES).len();
    assert!(serial_of(0x5100).is_some(), "the hook saw the new stream");
    // The same stream again: nothing changes, the hook is not called.
    // SAFETY: as above.
    assert_ok(unsafe { c::hipdnnEnginePluginSetStream(handle.raw(), first) });
    assert_eq!(lock(&STREAM_CHANGES).len(), calls);
    {
        let _armed = arm(
            "EnginePlugin::stream_changed",
            Fault::Fail(PluginError::internal("stream belongs to another device")),
        );
        // SAFETY: as above.
        let status = unsafe { c::hipdnnEnginePluginSetStream(handle.raw(), second) };
        assert_fails(status, INTERNAL_ERROR, "stream belongs to another device");
    }
    let (config, graph) = (config(POINTWISE_ID, vec![]), relu_graph());
    run_pointwise(&handle.context(&config, &graph));
    assert_eq!(
        lock(&LAST_EXECUTION).expect("executed").stream,
        0x5100,
        "a refused stream is not taken"
    );
}

#[test]
fn set_stream_null_handle_is_bad_param() {
    let _serial = serial();
    // SAFETY: null is what is tested.
    let status = unsafe { c::hipdnnEnginePluginSetStream(ptr::null_mut(), ptr::null_mut()) };
    assert_fails(status, BAD_PARAM, "plugin handle is null");
}

// ---------------------------------------------------------------------------------------
// Applicable engines.

#[test]
fn get_applicable_engine_ids_lists_the_engines_that_apply() {
    let _serial = serial();
    let handle = PluginHandle::new();
    assert_eq!(
        handle.applicable(&relu_graph()),
        [POINTWISE_ID, WORKSPACE_ID]
    );
    assert_eq!(handle.applicable(&conv_graph()), [WORKSPACE_ID]);
}

#[test]
fn get_applicable_engine_ids_two_call_and_short_array() {
    let _serial = serial();
    let handle = PluginHandle::new();
    let bytes = relu_graph();
    let graph = span(&bytes);
    let mut count = UNTOUCHED as u32;
    // SAFETY: max 0 with null ids is the size query; the rest is live.
    let status = unsafe {
        c::hipdnnEnginePluginGetApplicableEngineIds(
            handle.raw(),
            &graph,
            ptr::null_mut(),
            0,
            &mut count,
        )
    };
    assert_ok(status);
    assert_eq!(count, 2);
    let mut ids = [UNTOUCHED_ID; 2];
    // SAFETY: room for 1 id (of 2); the rest is live.
    let status = unsafe {
        c::hipdnnEnginePluginGetApplicableEngineIds(
            handle.raw(),
            &graph,
            ids.as_mut_ptr(),
            1,
            &mut count,
        )
    };
    assert_ok(status);
    assert_eq!((count, ids), (1, [POINTWISE_ID, UNTOUCHED_ID]));
}

#[test]
fn get_applicable_engine_ids_null_pointers_are_bad_param() {
    let _serial = serial();
    let handle = PluginHandle::new();
    let bytes = relu_graph();
    let graph = span(&bytes);
    let null_data = hipdnnPluginConstData_t {
        ptr: ptr::null(),
        size: bytes.len(),
    };
    let (mut ids, mut count) = ([UNTOUCHED_ID; 2], UNTOUCHED as u32);
    let h = handle.raw();
    let cases: [(
        &str,
        hipdnnEnginePluginHandle_t,
        *const hipdnnPluginConstData_t,
        *mut i64,
        *mut u32,
    ); 5] = [
        (
            "plugin handle is null",
            ptr::null_mut(),
            &graph,
            ids.as_mut_ptr(),
            &mut count,
        ),
        (
            "op_graph is null",
            h,
            ptr::null(),
            ids.as_mut_ptr(),
            &mut count,
        ),
        (
            "op_graph->ptr is null",
            h,
            &null_data,
            ids.as_mut_ptr(),
            &mut count,
        ),
        ("engine_ids is null", h, &graph, ptr::null_mut(), &mut count),
        (
            "num_engines is null",
            h,
            &graph,
            ids.as_mut_ptr(),
            ptr::null_mut(),
        ),
    ];
    for (message, handle, graph, ids_out, count_out) in cases {
        // SAFETY: one null pointer per case, as tested; the others are live.
        let status = unsafe {
            c::hipdnnEnginePluginGetApplicableEngineIds(handle, graph, ids_out, 2, count_out)
        };
        assert_fails(status, BAD_PARAM, message);
    }
    assert_eq!((ids, count), ([UNTOUCHED_ID; 2], UNTOUCHED as u32));
}

#[test]
fn malformed_graph_bytes_are_bad_param_everywhere_a_graph_enters() {
    let _serial = serial();
    let handle = PluginHandle::new();
    let config = config(POINTWISE_ID, vec![]);
    for (case, bytes) in malformed(&relu_graph()) {
        let graph = span(&bytes);
        let (mut ids, mut count) = ([UNTOUCHED_ID; 2], UNTOUCHED as u32);
        // SAFETY: live pointers; the bytes are garbage, which is what is tested.
        let status = unsafe {
            c::hipdnnEnginePluginGetApplicableEngineIds(
                handle.raw(),
                &graph,
                ids.as_mut_ptr(),
                2,
                &mut count,
            )
        };
        assert_fails(status, BAD_PARAM, "op_graph: ");
        assert_eq!(
            (ids, count),
            ([UNTOUCHED_ID; 2], UNTOUCHED as u32),
            "{case}"
        );
        assert_eq!(
            handle.details(POINTWISE_ID, &bytes).unwrap_err(),
            BAD_PARAM,
            "{case}"
        );
        assert!(
            last_error().starts_with("op_graph: "),
            "{case}: {}",
            last_error()
        );
        assert_eq!(
            handle.workspace_size(&config, &bytes),
            Err(BAD_PARAM),
            "{case}"
        );
        assert!(
            last_error().starts_with("op_graph: "),
            "{case}: {}",
            last_error()
        );
        assert_eq!(
            handle.try_context(&config, &bytes).map(drop),
            Err(BAD_PARAM),
            "{case}"
        );
        assert!(
            last_error().starts_with("op_graph: "),
            "{case}: {}",
            last_error()
        );
    }
}

#[test]
fn graph_with_a_dangling_uid_is_bad_param() {
    let _serial = serial();
    let handle = PluginHandle::new();
    // Verifies as a FlatBuffer; the node reads uid 99, which is not declared.
    let bytes = pointwise_model(Some(99)).to_bytes();
    let graph = span(&bytes);
    let (mut ids, mut count) = ([UNTOUCHED_ID; 2], UNTOUCHED as u32);
    // SAFETY: live pointers.
    let status = unsafe {
        c::hipdnnEnginePluginGetApplicableEngineIds(
            handle.raw(),
            &graph,
            ids.as_mut_ptr(),
            2,
            &mut count,
        )
    };
    assert_fails(status, BAD_PARAM, "op_graph: ");
    assert!(last_error().contains("99"), "{}", last_error());
    assert_eq!(
        handle
            .try_context(&config(POINTWISE_ID, vec![]), &bytes)
            .map(drop),
        Err(BAD_PARAM)
    );
}

// ---------------------------------------------------------------------------------------
// Engine details.

#[test]
fn get_engine_details_returns_verified_details_with_the_engines_knobs() {
    let _serial = serial();
    let handle = PluginHandle::new();
    let mut details = handle
        .details(POINTWISE_ID, &relu_graph())
        .expect("details");
    assert!(!details.ptr.is_null() && details.size > 0);
    {
        // SAFETY: the plugin owns these bytes until DestroyEngineDetails.
        let bytes = unsafe { std::slice::from_raw_parts(details.ptr.cast::<u8>(), details.size) };
        let view = EngineDetailsView::from_bytes(bytes).expect("a valid EngineDetails");
        assert_eq!(view.engine_id(), POINTWISE_ID);
        assert_eq!(view.name(), "TEST_POINTWISE_ENGINE");
        let knobs: Vec<&str> = view.knobs().map(|k| k.knob_id()).collect();
        assert_eq!(knobs, [DETERMINISTIC_KNOB_NAME, SCALE, MODE, TILE]);
    }
    assert_ok(handle.destroy_details(&mut details));
    assert!(details.ptr.is_null() && details.size == 0, "zeroed");
}

#[test]
fn get_engine_details_unknown_engine_is_invalid_value() {
    let _serial = serial();
    let handle = PluginHandle::new();
    assert_eq!(
        handle.details(0x77, &relu_graph()).unwrap_err(),
        INVALID_VALUE
    );
    assert!(
        last_error().contains("0x0000000000000077"),
        "{}",
        last_error()
    );
}

#[test]
fn get_engine_details_for_a_graph_the_engine_cannot_run_is_not_applicable() {
    let _serial = serial();
    let handle = PluginHandle::new();
    assert_eq!(
        handle.details(POINTWISE_ID, &conv_graph()).unwrap_err(),
        NOT_APPLICABLE
    );
    assert!(
        last_error().contains("TEST_POINTWISE_ENGINE"),
        "{}",
        last_error()
    );
    assert_eq!(
        handle.details(ANONYMOUS_ID, &relu_graph()).unwrap_err(),
        NOT_APPLICABLE
    );
}

#[test]
fn get_engine_details_null_pointers_are_bad_param() {
    let _serial = serial();
    let handle = PluginHandle::new();
    let bytes = relu_graph();
    let graph = span(&bytes);
    let mut details = untouched_span();
    let cases: [(
        &str,
        hipdnnEnginePluginHandle_t,
        *const hipdnnPluginConstData_t,
        *mut hipdnnPluginConstData_t,
    ); 3] = [
        (
            "plugin handle is null",
            ptr::null_mut(),
            &graph,
            &mut details,
        ),
        ("op_graph is null", handle.raw(), ptr::null(), &mut details),
        (
            "engine_details is null",
            handle.raw(),
            &graph,
            ptr::null_mut(),
        ),
    ];
    for (message, h, graph, out) in cases {
        // SAFETY: one null pointer per case, as tested; the others are live.
        let status = unsafe { c::hipdnnEnginePluginGetEngineDetails(h, POINTWISE_ID, graph, out) };
        assert_fails(status, BAD_PARAM, message);
    }
    assert_span_untouched(details);
}

#[test]
fn destroy_engine_details_rejects_double_free_foreign_and_other_handles_buffers() {
    let _serial = serial();
    let (a, b) = (PluginHandle::new(), PluginHandle::new());
    let graph = relu_graph();

    let mut details = a.details(POINTWISE_ID, &graph).expect("details");
    let copy = details;
    assert_ok(a.destroy_details(&mut details));
    // Double free through a copy of the span, and through the zeroed span.
    let mut again = copy;
    assert_fails(
        a.destroy_details(&mut again),
        BAD_PARAM,
        "was not handed out",
    );
    assert_eq!(
        (again.ptr, again.size),
        (copy.ptr, copy.size),
        "left as it was"
    );
    assert_fails(
        a.destroy_details(&mut details),
        BAD_PARAM,
        "was not handed out",
    );

    // A buffer the plugin never handed out.
    let foreign_bytes = vec![0_u8; 64];
    let mut foreign = span(&foreign_bytes);
    assert_fails(
        a.destroy_details(&mut foreign),
        BAD_PARAM,
        "was not handed out",
    );

    // Another handle's buffer: refused by b, still freed by a.
    let mut details = a.details(WORKSPACE_ID, &graph).expect("details");
    assert_fails(
        b.destroy_details(&mut details),
        BAD_PARAM,
        "was not handed out",
    );
    assert_ok(a.destroy_details(&mut details));
}

#[test]
fn destroy_engine_details_null_pointers_are_bad_param() {
    let _serial = serial();
    let handle = PluginHandle::new();
    let mut details = handle
        .details(POINTWISE_ID, &relu_graph())
        .expect("details");
    // SAFETY: null is what is tested.
    let status =
        unsafe { c::hipdnnEnginePluginDestroyEngineDetails(ptr::null_mut(), &mut details) };
    assert_fails(status, BAD_PARAM, "plugin handle is null");
    assert!(!details.ptr.is_null(), "left as it was");
    // SAFETY: null is what is tested.
    let status =
        unsafe { c::hipdnnEnginePluginDestroyEngineDetails(handle.raw(), ptr::null_mut()) };
    assert_fails(status, BAD_PARAM, "engine_details is null");
    assert_ok(handle.destroy_details(&mut details));
}

#[test]
fn destroying_a_handle_frees_the_details_it_still_holds() {
    let _serial = serial();
    let handle = PluginHandle::new();
    let _leaked_by_the_host = handle
        .details(POINTWISE_ID, &relu_graph())
        .expect("details");
    drop(handle); // Destroy succeeds (checked in Drop); the buffer goes with the handle.
}

#[test]
fn custom_knob_in_the_global_namespace_is_internal_error() {
    let _serial = serial();
    let handle = PluginHandle::new();
    let _armed = arm("IPlanBuilder::custom_knobs", Fault::Degenerate);
    assert_eq!(
        handle.details(POINTWISE_ID, &relu_graph()).unwrap_err(),
        INTERNAL_ERROR
    );
    assert!(last_error().contains("\"global.tile\""), "{}", last_error());
    assert!(last_error().contains("reserved"), "{}", last_error());
}

// ---------------------------------------------------------------------------------------
// Workspace sizes, engine configs and knobs.

#[test]
fn get_workspace_size_reports_the_builders_size() {
    let _serial = serial();
    let handle = PluginHandle::new();
    let graph = relu_graph();
    assert_eq!(
        handle.workspace_size(&config(POINTWISE_ID, vec![]), &graph),
        Ok(0)
    );
    assert_eq!(
        handle.workspace_size(&config(WORKSPACE_ID, vec![]), &graph),
        Ok(WORKSPACE_BYTES)
    );
}

#[test]
fn get_workspace_size_null_pointers_are_bad_param() {
    let _serial = serial();
    let handle = PluginHandle::new();
    let (config_bytes, graph_bytes) = (config(POINTWISE_ID, vec![]), relu_graph());
    let (config, graph, mut size) = (span(&config_bytes), span(&graph_bytes), UNTOUCHED);
    let h = handle.raw();
    let null_config = hipdnnPluginConstData_t {
        ptr: ptr::null(),
        size: 8,
    };
    let cases: [(
        &str,
        hipdnnEnginePluginHandle_t,
        *const hipdnnPluginConstData_t,
        *const hipdnnPluginConstData_t,
        *mut usize,
    ); 5] = [
        (
            "plugin handle is null",
            ptr::null_mut(),
            &config,
            &graph,
            &mut size,
        ),
        ("engine_config is null", h, ptr::null(), &graph, &mut size),
        (
            "engine_config->ptr is null",
            h,
            &null_config,
            &graph,
            &mut size,
        ),
        ("op_graph is null", h, &config, ptr::null(), &mut size),
        (
            "workspace_size is null",
            h,
            &config,
            &graph,
            ptr::null_mut(),
        ),
    ];
    for (message, h, config, graph, out) in cases {
        // SAFETY: one null pointer per case, as tested; the others are live.
        let status = unsafe { c::hipdnnEnginePluginGetWorkspaceSize(h, config, graph, out) };
        assert_fails(status, BAD_PARAM, message);
    }
    assert_eq!(size, UNTOUCHED);
}

#[test]
fn malformed_engine_config_bytes_are_bad_param() {
    let _serial = serial();
    let handle = PluginHandle::new();
    let graph = relu_graph();
    for (case, bytes) in malformed(&config(POINTWISE_ID, vec![])) {
        assert_eq!(
            handle.workspace_size(&bytes, &graph),
            Err(BAD_PARAM),
            "{case}"
        );
        assert!(
            last_error().starts_with("engine_config: "),
            "{case}: {}",
            last_error()
        );
        assert_eq!(
            handle.try_context(&bytes, &graph).map(drop),
            Err(BAD_PARAM),
            "{case}"
        );
        assert!(
            last_error().starts_with("engine_config: "),
            "{case}: {}",
            last_error()
        );
    }
}

#[test]
fn engine_config_for_an_unknown_engine_is_invalid_value() {
    let _serial = serial();
    let handle = PluginHandle::new();
    let (config, graph) = (config(0x42, vec![]), relu_graph());
    assert_eq!(handle.workspace_size(&config, &graph), Err(INVALID_VALUE));
    assert!(
        last_error().contains("0x0000000000000042"),
        "{}",
        last_error()
    );
    assert_eq!(
        handle.try_context(&config, &graph).map(drop),
        Err(INVALID_VALUE)
    );
    assert!(
        last_error().contains("0x0000000000000042"),
        "{}",
        last_error()
    );
}

#[test]
fn engine_config_for_an_engine_that_does_not_apply_is_not_applicable() {
    let _serial = serial();
    let handle = PluginHandle::new();
    for (engine_id, graph) in [(POINTWISE_ID, conv_graph()), (ANONYMOUS_ID, relu_graph())] {
        let config = config(engine_id, vec![]);
        assert_eq!(handle.workspace_size(&config, &graph), Err(NOT_APPLICABLE));
        assert_eq!(
            handle.try_context(&config, &graph).map(drop),
            Err(NOT_APPLICABLE)
        );
    }
}

/// Both entry points that read knob settings refuse `setting` with BAD_PARAM naming
/// `knob` and mentioning `reason`.
#[track_caller]
fn assert_setting_refused(setting: KnobSetting, knob: &str, reason: &str) {
    let handle = PluginHandle::new();
    let (config, graph) = (config(POINTWISE_ID, vec![setting]), relu_graph());
    assert_eq!(handle.workspace_size(&config, &graph), Err(BAD_PARAM));
    let error = last_error();
    assert!(
        error.contains(&format!("knob \"{knob}\"")) && error.contains(reason),
        "{error}"
    );
    assert_eq!(
        handle.try_context(&config, &graph).map(drop),
        Err(BAD_PARAM)
    );
    assert_eq!(last_error(), error);
}

#[test]
fn knob_setting_of_the_wrong_type_is_bad_param_naming_the_knob() {
    let _serial = serial();
    assert_setting_refused(KnobSettingFactory::int(SCALE, 2), SCALE, "expects float64");
    assert_setting_refused(KnobSettingFactory::float(TILE, 8.0), TILE, "expects int64");
    assert_setting_refused(KnobSettingFactory::int(MODE, 1), MODE, "expects string");
    assert_setting_refused(
        KnobSettingFactory::string(DETERMINISTIC_KNOB_NAME, "yes"),
        DETERMINISTIC_KNOB_NAME,
        "expects int64",
    );
}

#[test]
fn knob_setting_out_of_range_is_bad_param_naming_the_knob() {
    let _serial = serial();
    assert_setting_refused(KnobSettingFactory::float(SCALE, 10.5), SCALE, "outside");
    assert_setting_refused(KnobSettingFactory::float(SCALE, -0.1), SCALE, "outside");
    assert_setting_refused(KnobSettingFactory::float(SCALE, f64::NAN), SCALE, "outside");
    assert_setting_refused(KnobSettingFactory::int(TILE, 0), TILE, "outside");
    assert_setting_refused(KnobSettingFactory::int(TILE, 65), TILE, "outside");
    assert_setting_refused(KnobSettingFactory::string(MODE, "slow"), MODE, "not one of");
    assert_setting_refused(
        KnobSettingFactory::int(DETERMINISTIC_KNOB_NAME, 2),
        DETERMINISTIC_KNOB_NAME,
        "not one of",
    );
}

#[test]
fn unknown_knob_settings_are_accepted() {
    let _serial = serial();
    let handle = PluginHandle::new();
    let graph = relu_graph();
    let config = config(
        POINTWISE_ID,
        vec![
            KnobSettingFactory::int("test.pointwise.unknown", 1),
            KnobSettingFactory::string("global.benchmarking", "not even an int"),
            KnobSettingFactory::float(SCALE, 3.0),
        ],
    );
    assert_eq!(handle.workspace_size(&config, &graph), Ok(0));
    let y = run_pointwise(&handle.context(&config, &graph));
    assert_eq!(y[..3], [3.0, 6.0, 9.0], "the known knob still applies");
}

#[test]
fn knob_settings_reach_the_plan_and_defaults_fill_the_rest() {
    let _serial = serial();
    let handle = PluginHandle::new();
    let graph = relu_graph();
    let defaults = run_pointwise(&handle.context(&config(POINTWISE_ID, vec![]), &graph));
    assert_eq!(defaults, (1..=LEN).map(|i| i as f32).collect::<Vec<_>>());
    let settings = vec![
        KnobSettingFactory::float(SCALE, 2.5),
        KnobSettingFactory::string(MODE, "exact"),
        KnobSettingFactory::int(DETERMINISTIC_KNOB_NAME, 1),
    ];
    let scaled = run_pointwise(&handle.context(&config(POINTWISE_ID, settings), &graph));
    assert_eq!(
        scaled,
        (1..=LEN).map(|i| 2.5 * i as f32).collect::<Vec<_>>()
    );
}

#[test]
fn settings_refused_by_from_choices_keep_their_status() {
    let _serial = serial();
    let handle = PluginHandle::new();
    let settings = vec![
        KnobSettingFactory::string(MODE, "exact"),
        KnobSettingFactory::int(TILE, 32),
    ];
    let (config, graph) = (config(POINTWISE_ID, settings), relu_graph());
    assert_eq!(handle.workspace_size(&config, &graph), Err(BAD_PARAM));
    assert_eq!(last_error(), "mode \"exact\" needs tile 16");
    assert_eq!(
        handle.try_context(&config, &graph).map(drop),
        Err(BAD_PARAM)
    );
}

// ---------------------------------------------------------------------------------------
// Execution contexts and execution.

#[test]
fn create_execution_context_null_pointers_are_bad_param() {
    let _serial = serial();
    let handle = PluginHandle::new();
    let (config_bytes, graph_bytes) = (config(POINTWISE_ID, vec![]), relu_graph());
    let (config, graph, mut context) =
        (span(&config_bytes), span(&graph_bytes), untouched_context());
    let h = handle.raw();
    let cases: [(
        &str,
        hipdnnEnginePluginHandle_t,
        *const hipdnnPluginConstData_t,
        *const hipdnnPluginConstData_t,
        *mut hipdnnEnginePluginExecutionContext_t,
    ); 4] = [
        (
            "plugin handle is null",
            ptr::null_mut(),
            &config,
            &graph,
            &mut context,
        ),
        (
            "engine_config is null",
            h,
            ptr::null(),
            &graph,
            &mut context,
        ),
        ("op_graph is null", h, &config, ptr::null(), &mut context),
        (
            "execution_context is null",
            h,
            &config,
            &graph,
            ptr::null_mut(),
        ),
    ];
    for (message, h, config, graph, out) in cases {
        // SAFETY: one null pointer per case, as tested; the others are live.
        let status = unsafe { c::hipdnnEnginePluginCreateExecutionContext(h, config, graph, out) };
        assert_fails(status, BAD_PARAM, message);
    }
    assert_eq!(context, untouched_context());
}

#[test]
fn destroy_execution_context_accepts_null_and_refuses_a_null_handle() {
    let _serial = serial();
    let handle = PluginHandle::new();
    // SAFETY: a null context is documented as a no-op.
    assert_ok(unsafe {
        c::hipdnnEnginePluginDestroyExecutionContext(handle.raw(), ptr::null_mut())
    });
    let context = handle.context(&config(POINTWISE_ID, vec![]), &relu_graph());
    // SAFETY: null is what is tested; the context stays alive (destroyed by its Drop).
    let status =
        unsafe { c::hipdnnEnginePluginDestroyExecutionContext(ptr::null_mut(), context.raw) };
    assert_fails(status, BAD_PARAM, "plugin handle is null");
    run_pointwise(&context);
}

#[test]
fn get_workspace_size_from_execution_context_reports_the_plans_size() {
    let _serial = serial();
    let handle = PluginHandle::new();
    let graph = relu_graph();
    let pointwise = handle.context(&config(POINTWISE_ID, vec![]), &graph);
    assert_eq!(pointwise.workspace_size(), Ok(0));
    let workspace = handle.context(&config(WORKSPACE_ID, vec![]), &graph);
    assert_eq!(workspace.workspace_size(), Ok(WORKSPACE_BYTES));
}

#[test]
fn get_workspace_size_from_execution_context_null_pointers_are_bad_param() {
    let _serial = serial();
    let handle = PluginHandle::new();
    let context = handle.context(&config(POINTWISE_ID, vec![]), &relu_graph());
    let mut size = UNTOUCHED;
    let cases: [(
        &str,
        hipdnnEnginePluginHandle_t,
        hipdnnEnginePluginExecutionContext_t,
        *mut usize,
    ); 3] = [
        (
            "plugin handle is null",
            ptr::null_mut(),
            context.raw,
            &mut size,
        ),
        (
            "execution context is null",
            handle.raw(),
            ptr::null_mut(),
            &mut size,
        ),
        (
            "workspace_size is null",
            handle.raw(),
            context.raw,
            ptr::null_mut(),
        ),
    ];
    for (message, h, ctx, out) in cases {
        // SAFETY: one null pointer per case, as tested; the others are live.
        let status =
            unsafe { c::hipdnnEnginePluginGetWorkspaceSizeFromExecutionContext(h, ctx, out) };
        assert_fails(status, BAD_PARAM, message);
    }
    assert_eq!(size, UNTOUCHED);
}

#[test]
fn execute_op_graph_runs_the_plan_on_host_buffers() {
    let _serial = serial();
    let handle = PluginHandle::new();
    let config = config(POINTWISE_ID, vec![KnobSettingFactory::float(SCALE, 0.5)]);
    let context = handle.context(&config, &relu_graph());
    let mut x = [-4.0_f32, -2.0, -1.0, 0.0, 1.0, 2.0, 4.0, 8.0];
    let mut y = [f32::NAN; LEN];
    // Buffers in any order, with an extra one the plan does not use.
    let mut unused = [0.0_f32; 1];
    let buffers = [buffer(Y, &mut y), buffer(7, &mut unused), buffer(X, &mut x)];
    assert_ok(context.execute(ptr::null_mut(), &buffers));
    assert_eq!(y, [-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 4.0]);
    let seen = lock(&LAST_EXECUTION).expect("executed");
    assert_eq!((seen.workspace, seen.workspace_size), (0, 0));
}

#[test]
fn execute_op_graph_with_no_buffers_and_a_null_array_is_fine_for_a_plan_that_needs_none() {
    let _serial = serial();
    let handle = PluginHandle::new();
    let context = handle.context(&config(WORKSPACE_ID, vec![]), &relu_graph());
    let mut workspace = [0_u8; WORKSPACE_BYTES];
    // SAFETY: live handle and context; a null array with a zero count is allowed.
    let status = unsafe {
        c::hipdnnEnginePluginExecuteOpGraph(
            handle.raw(),
            context.raw,
            workspace.as_mut_ptr().cast(),
            ptr::null(),
            0,
        )
    };
    assert_ok(status);
    let seen = lock(&LAST_EXECUTION).expect("executed");
    assert_eq!(
        (seen.workspace, seen.workspace_size),
        (workspace.as_ptr().addr(), WORKSPACE_BYTES),
        "the plan gets the host's workspace and its own size"
    );
}

#[test]
fn execute_op_graph_missing_buffer_is_bad_param_naming_the_uid() {
    let _serial = serial();
    let handle = PluginHandle::new();
    let context = handle.context(&config(POINTWISE_ID, vec![]), &relu_graph());
    let mut x = [1.0_f32; LEN];
    assert_fails(
        context.execute(ptr::null_mut(), &[buffer(X, &mut x)]),
        BAD_PARAM,
        "no buffer for tensor uid 2",
    );
    assert_fails(
        context.execute(ptr::null_mut(), &[]),
        BAD_PARAM,
        "no buffer for tensor uid 1",
    );
    let null_y = hipdnnPluginDeviceBuffer_t {
        uid: Y,
        ptr: ptr::null_mut(),
    };
    assert_fails(
        context.execute(ptr::null_mut(), &[buffer(X, &mut x), null_y]),
        BAD_PARAM,
        "buffer for tensor uid 2 is null",
    );
    // SAFETY: null is what is tested (with a non-zero count).
    let status = unsafe {
        c::hipdnnEnginePluginExecuteOpGraph(
            handle.raw(),
            context.raw,
            ptr::null_mut(),
            ptr::null(),
            2,
        )
    };
    assert_fails(status, BAD_PARAM, "device_buffers is null");
}

#[test]
fn execute_op_graph_null_workspace_when_the_plan_needs_one_is_bad_param() {
    let _serial = serial();
    let handle = PluginHandle::new();
    let context = handle.context(&config(WORKSPACE_ID, vec![]), &relu_graph());
    *lock(&LAST_EXECUTION) = None;
    assert_fails(
        context.execute(ptr::null_mut(), &[]),
        BAD_PARAM,
        &format!("workspace is null but the plan needs {WORKSPACE_BYTES} bytes"),
    );
    assert_eq!(*lock(&LAST_EXECUTION), None, "the plan did not run");
}

#[test]
fn execute_op_graph_null_handle_or_context_is_bad_param() {
    let _serial = serial();
    let handle = PluginHandle::new();
    let context = handle.context(&config(POINTWISE_ID, vec![]), &relu_graph());
    // SAFETY: null is what is tested.
    let status = unsafe {
        c::hipdnnEnginePluginExecuteOpGraph(
            ptr::null_mut(),
            context.raw,
            ptr::null_mut(),
            ptr::null(),
            0,
        )
    };
    assert_fails(status, BAD_PARAM, "plugin handle is null");
    // SAFETY: null is what is tested.
    let status = unsafe {
        c::hipdnnEnginePluginExecuteOpGraph(
            handle.raw(),
            ptr::null_mut(),
            ptr::null_mut(),
            ptr::null(),
            0,
        )
    };
    assert_fails(status, BAD_PARAM, "execution context is null");
}

/// A handle and context shared between threads.
#[derive(Clone, Copy)]
struct Shared {
    handle: hipdnnEnginePluginHandle_t,
    context: hipdnnEnginePluginExecutionContext_t,
}

// SAFETY: the ABI lets a host use one handle and one execution context from many threads
// at once (plans are immutable and `Send + Sync`); that is what the test below checks.
unsafe impl Send for Shared {}
// SAFETY: as above.
unsafe impl Sync for Shared {}

#[test]
fn one_context_executes_on_many_threads_at_once() {
    let _serial = serial();
    let handle = PluginHandle::new();
    let config = config(POINTWISE_ID, vec![KnobSettingFactory::float(SCALE, 2.0)]);
    let context = handle.context(&config, &relu_graph());
    let shared = Shared {
        handle: handle.raw(),
        context: context.raw,
    };
    std::thread::scope(|scope| {
        for t in 0..4 {
            scope.spawn(move || {
                let shared = shared;
                for round in 0..100 {
                    let base = (t * 1000 + round) as f32;
                    let mut x: Vec<f32> = (0..LEN).map(|i| base + i as f32).collect();
                    let mut y = vec![0.0_f32; LEN];
                    let buffers = [buffer(X, &mut x), buffer(Y, &mut y)];
                    // SAFETY: the handle and context outlive the scope; the buffers are
                    // this thread's own LEN floats.
                    let status = unsafe {
                        c::hipdnnEnginePluginExecuteOpGraph(
                            shared.handle,
                            shared.context,
                            ptr::null_mut(),
                            buffers.as_ptr(),
                            2,
                        )
                    };
                    assert_ok(status);
                    assert!(y.iter().zip(&x).all(|(y, x)| *y == 2.0 * x));
                }
            });
        }
    });
}

#[test]
fn plugin_errors_keep_their_status_and_message() {
    let _serial = serial();
    {
        let _armed = arm(
            "EnginePlugin::create_handle",
            Fault::Fail(PluginError::new(
                HIPDNN_PLUGIN_STATUS_NOT_INITIALIZED,
                "no device",
            )),
        );
        let mut raw = untouched_handle();
        // SAFETY: a live out-parameter.
        let status = unsafe { c::hipdnnEnginePluginCreate(&mut raw) };
        assert_eq!(status, HIPDNN_PLUGIN_STATUS_NOT_INITIALIZED);
        assert_eq!(last_error(), "no device");
        assert_eq!(raw, untouched_handle());
    }
    let handle = PluginHandle::new();
    let graph = relu_graph();
    let config = config(POINTWISE_ID, vec![]);
    {
        let _armed = arm(
            "IPlanBuilder::build_plan",
            Fault::Fail(PluginError::new(
                HIPDNN_PLUGIN_STATUS_ALLOC_FAILED,
                "too big",
            )),
        );
        assert_eq!(
            handle.workspace_size(&config, &graph),
            Err(HIPDNN_PLUGIN_STATUS_ALLOC_FAILED)
        );
        assert_eq!(last_error(), "too big");
    }
    let context = handle.context(&config, &graph);
    let _armed = arm(
        "IPlan::execute",
        Fault::Fail(PluginError::internal("kernel failed")),
    );
    let mut x = [0.0_f32; LEN];
    let mut y = [0.0_f32; LEN];
    let status = context.execute(ptr::null_mut(), &[buffer(X, &mut x), buffer(Y, &mut y)]);
    assert_eq!(status, INTERNAL_ERROR);
    assert_eq!(last_error(), "kernel failed");
}

// ---------------------------------------------------------------------------------------
// A panic in each trait method the SDK calls: INTERNAL_ERROR, and the process goes on.

#[test]
fn panic_in_create_handle_is_internal_error() {
    let _serial = serial();
    assert_panic_is_internal_error(
        "EnginePlugin::create_handle",
        "hipdnnEnginePluginCreate",
        || {
            let mut raw = untouched_handle();
            // SAFETY: a live out-parameter.
            let status = unsafe { c::hipdnnEnginePluginCreate(&mut raw) };
            if status == SUCCESS {
                // SAFETY: just created, destroyed once.
                assert_eq!(unsafe { c::hipdnnEnginePluginDestroy(raw) }, SUCCESS);
            } else {
                assert_eq!(raw, untouched_handle());
            }
            status
        },
    );
}

#[test]
fn panic_in_is_applicable_leaves_the_engine_out_and_others_answer() {
    let _serial = serial();
    let bytes = relu_graph();
    let graph = span(&bytes);
    let applicable = |handle: &PluginHandle| {
        let mut ids = [0_i64; 8];
        let mut count = 0;
        // SAFETY: live pointers; `ids` has room for 8.
        let status = unsafe {
            c::hipdnnEnginePluginGetApplicableEngineIds(
                handle.raw(),
                &graph,
                ids.as_mut_ptr(),
                8,
                &mut count,
            )
        };
        assert_ok(status);
        ids[..count as usize].to_vec()
    };
    {
        let _armed = arm("IPlanBuilder::is_applicable", Fault::Panic);
        // Every builder panics: no engine is left, and the call itself succeeds.
        let handle = PluginHandle::new();
        assert_eq!(applicable(&handle), Vec::<i64>::new());
        // Asking for the engine by id says why instead of "not applicable".
        assert_eq!(
            handle.details(POINTWISE_ID, &bytes).err(),
            Some(INTERNAL_ERROR)
        );
        let error = last_error();
        assert!(
            error.contains("panicked deciding applicability")
                && error.contains("sabotaged IPlanBuilder::is_applicable"),
            "{error}"
        );
    }
    let healthy = applicable(&PluginHandle::new());
    assert!(healthy.contains(&POINTWISE_ID), "{healthy:?}");
}

#[test]
fn panic_in_custom_knobs_is_internal_error() {
    let _serial = serial();
    let handle = PluginHandle::new();
    let graph = relu_graph();
    assert_panic_is_internal_error(
        "IPlanBuilder::custom_knobs",
        "hipdnnEnginePluginGetEngineDetails",
        || match handle.details(POINTWISE_ID, &graph) {
            Ok(mut details) => handle.destroy_details(&mut details),
            Err(status) => status,
        },
    );
}

#[test]
fn panic_building_the_plan_for_a_workspace_size_is_internal_error() {
    let _serial = serial();
    let handle = PluginHandle::new();
    let (config, graph) = (config(POINTWISE_ID, vec![]), relu_graph());
    assert_panic_is_internal_error(
        "IPlanBuilder::build_plan",
        "hipdnnEnginePluginGetWorkspaceSize",
        || {
            handle
                .workspace_size(&config, &graph)
                .map_or_else(|s| s, |_| SUCCESS)
        },
    );
}

#[test]
fn panic_in_build_plan_is_internal_error() {
    let _serial = serial();
    let handle = PluginHandle::new();
    let (config, graph) = (config(POINTWISE_ID, vec![]), relu_graph());
    assert_panic_is_internal_error(
        "IPlanBuilder::build_plan",
        "hipdnnEnginePluginCreateExecutionContext",
        || {
            handle
                .try_context(&config, &graph)
                .map_or_else(|s| s, |_| SUCCESS)
        },
    );
}

#[test]
fn panic_in_settings_from_choices_is_internal_error() {
    let _serial = serial();
    let handle = PluginHandle::new();
    let (config, graph) = (config(POINTWISE_ID, vec![]), relu_graph());
    assert_panic_is_internal_error(
        "Settings::from_choices",
        "hipdnnEnginePluginCreateExecutionContext",
        || {
            handle
                .try_context(&config, &graph)
                .map_or_else(|s| s, |_| SUCCESS)
        },
    );
    // A fresh handle: the first one has the plan cached now.
    let handle = PluginHandle::new();
    assert_panic_is_internal_error(
        "Settings::from_choices",
        "hipdnnEnginePluginGetWorkspaceSize",
        || {
            handle
                .workspace_size(&config, &graph)
                .map_or_else(|s| s, |_| SUCCESS)
        },
    );
}

#[test]
fn panic_in_plan_workspace_size_is_internal_error() {
    let _serial = serial();
    let handle = PluginHandle::new();
    let context = handle.context(&config(POINTWISE_ID, vec![]), &relu_graph());
    assert_panic_is_internal_error(
        "IPlan::workspace_size",
        "hipdnnEnginePluginGetWorkspaceSizeFromExecutionContext",
        || context.workspace_size().map_or_else(|s| s, |_| SUCCESS),
    );
    let mut x = [0.0_f32; LEN];
    let mut y = [0.0_f32; LEN];
    assert_panic_is_internal_error(
        "IPlan::workspace_size",
        "hipdnnEnginePluginExecuteOpGraph",
        || context.execute(ptr::null_mut(), &[buffer(X, &mut x), buffer(Y, &mut y)]),
    );
}

#[test]
fn panic_in_execute_is_internal_error() {
    let _serial = serial();
    let handle = PluginHandle::new();
    let context = handle.context(&config(POINTWISE_ID, vec![]), &relu_graph());
    let mut x = [0.0_f32; LEN];
    let mut y = [0.0_f32; LEN];
    assert_panic_is_internal_error("IPlan::execute", "hipdnnEnginePluginExecuteOpGraph", || {
        context.execute(ptr::null_mut(), &[buffer(X, &mut x), buffer(Y, &mut y)])
    });
}

#[test]
fn panic_in_serialize_is_internal_error() {
    let _serial = serial();
    let handle = PluginHandle::new();
    let context = handle.context(&config(POINTWISE_ID, vec![]), &relu_graph());
    assert_panic_is_internal_error(
        "SerializablePlugin::serialize",
        "hipdnnEnginePluginSerializeExecutionContext",
        || match context.serialize() {
            // SAFETY: a live handle and the span it handed out.
            Ok(mut serialized) => unsafe {
                c::hipdnnEnginePluginDestroySerializedExecutionContext(
                    handle.raw(),
                    &mut serialized,
                )
            },
            Err(status) => status,
        },
    );
}

#[test]
fn panic_in_deserialize_is_internal_error() {
    let _serial = serial();
    let handle = PluginHandle::new();
    let bytes = TestPlan {
        io: None,
        len: 0,
        scale: 1.0,
        workspace: 0,
    }
    .to_bytes();
    let serialized = span(&bytes);
    assert_panic_is_internal_error(
        "SerializablePlugin::deserialize",
        "hipdnnEnginePluginCreateExecutionContextFromSerialized",
        || {
            let mut raw = untouched_context();
            // SAFETY: live pointers.
            let status = unsafe {
                c::hipdnnEnginePluginCreateExecutionContextFromSerialized(
                    handle.raw(),
                    &serialized,
                    &mut raw,
                )
            };
            if status == SUCCESS {
                drop(Context {
                    handle: &handle,
                    raw,
                });
            } else {
                assert_eq!(raw, untouched_context());
            }
            status
        },
    );
}

#[test]
fn panic_with_a_non_string_payload_is_internal_error() {
    let _serial = serial();
    let handle = PluginHandle::new();
    let (config, graph) = (config(POINTWISE_ID, vec![]), relu_graph());
    let _armed = arm("IPlanBuilder::build_plan", Fault::PanicWithValue);
    assert_eq!(
        handle.try_context(&config, &graph).map(drop),
        Err(INTERNAL_ERROR)
    );
    assert_eq!(
        last_error(),
        "panic in hipdnnEnginePluginCreateExecutionContext: a panic with a non-string payload"
    );
}

// ---------------------------------------------------------------------------------------
// Plan serialization.

#[test]
fn serialized_plan_round_trips_and_runs_the_same() {
    let _serial = serial();
    let handle = PluginHandle::new();
    let config = config(POINTWISE_ID, vec![KnobSettingFactory::float(SCALE, 4.0)]);
    let original = handle.context(&config, &relu_graph());
    let mut serialized = original.serialize().expect("serialized");
    assert_eq!(serialized.size, PLAN_BYTES);
    let mut restored = untouched_context();
    // SAFETY: live handle, the span it handed out, a live out-parameter.
    let status = unsafe {
        c::hipdnnEnginePluginCreateExecutionContextFromSerialized(
            handle.raw(),
            &serialized,
            &mut restored,
        )
    };
    assert_ok(status);
    let restored = Context {
        handle: &handle,
        raw: restored,
    };
    // SAFETY: a live handle and the span it handed out.
    assert_ok(unsafe {
        c::hipdnnEnginePluginDestroySerializedExecutionContext(handle.raw(), &mut serialized)
    });
    assert!(serialized.ptr.is_null() && serialized.size == 0, "zeroed");
    assert_eq!(run_pointwise(&restored), run_pointwise(&original));
    assert_eq!(run_pointwise(&restored)[1], 8.0);
}

#[test]
fn destroy_serialized_execution_context_rejects_double_free_and_null() {
    let _serial = serial();
    let handle = PluginHandle::new();
    let context = handle.context(&config(POINTWISE_ID, vec![]), &relu_graph());
    let mut serialized = context.serialize().expect("serialized");
    let mut copy = serialized;
    // SAFETY: null is what is tested.
    let status = unsafe {
        c::hipdnnEnginePluginDestroySerializedExecutionContext(ptr::null_mut(), &mut serialized)
    };
    assert_fails(status, BAD_PARAM, "plugin handle is null");
    // SAFETY: null is what is tested.
    let status = unsafe {
        c::hipdnnEnginePluginDestroySerializedExecutionContext(handle.raw(), ptr::null_mut())
    };
    assert_fails(status, BAD_PARAM, "serialized_context is null");
    // SAFETY: a live handle and the span it handed out.
    assert_ok(unsafe {
        c::hipdnnEnginePluginDestroySerializedExecutionContext(handle.raw(), &mut serialized)
    });
    // SAFETY: a copy of a freed span: the plugin must look it up, not free it.
    let status =
        unsafe { c::hipdnnEnginePluginDestroySerializedExecutionContext(handle.raw(), &mut copy) };
    assert_fails(status, BAD_PARAM, "was not handed out");
}

#[test]
fn serialization_null_pointers_are_bad_param() {
    let _serial = serial();
    let handle = PluginHandle::new();
    let context = handle.context(&config(POINTWISE_ID, vec![]), &relu_graph());
    let mut serialized = untouched_span();
    let cases: [(
        &str,
        hipdnnEnginePluginHandle_t,
        hipdnnEnginePluginExecutionContext_t,
        *mut hipdnnPluginConstData_t,
    ); 3] = [
        (
            "plugin handle is null",
            ptr::null_mut(),
            context.raw,
            &mut serialized,
        ),
        (
            "execution context is null",
            handle.raw(),
            ptr::null_mut(),
            &mut serialized,
        ),
        (
            "serialized_context is null",
            handle.raw(),
            context.raw,
            ptr::null_mut(),
        ),
    ];
    for (message, h, ctx, out) in cases {
        // SAFETY: one null pointer per case, as tested; the others are live.
        let status = unsafe { c::hipdnnEnginePluginSerializeExecutionContext(h, ctx, out) };
        assert_fails(status, BAD_PARAM, message);
    }
    assert_span_untouched(serialized);

    let bytes = TestPlan {
        io: None,
        len: 0,
        scale: 1.0,
        workspace: 0,
    }
    .to_bytes();
    let source = span(&bytes);
    let mut restored = untouched_context();
    let cases: [(
        &str,
        hipdnnEnginePluginHandle_t,
        *const hipdnnPluginConstData_t,
        *mut hipdnnEnginePluginExecutionContext_t,
    ); 3] = [
        (
            "plugin handle is null",
            ptr::null_mut(),
            &source,
            &mut restored,
        ),
        (
            "serialized_context is null",
            handle.raw(),
            ptr::null(),
            &mut restored,
        ),
        (
            "execution_context is null",
            handle.raw(),
            &source,
            ptr::null_mut(),
        ),
    ];
    for (message, h, source, out) in cases {
        // SAFETY: one null pointer per case, as tested; the others are live.
        let status =
            unsafe { c::hipdnnEnginePluginCreateExecutionContextFromSerialized(h, source, out) };
        assert_fails(status, BAD_PARAM, message);
    }
    assert_eq!(restored, untouched_context());
}

#[test]
fn malformed_serialized_plan_is_refused_by_the_plugin() {
    let _serial = serial();
    let handle = PluginHandle::new();
    for bytes in [Vec::new(), b"TPL1".to_vec(), noise(3, PLAN_BYTES)] {
        let source = span(&bytes);
        let mut restored = untouched_context();
        // SAFETY: live pointers; the bytes are garbage, which is what is tested.
        let status = unsafe {
            c::hipdnnEnginePluginCreateExecutionContextFromSerialized(
                handle.raw(),
                &source,
                &mut restored,
            )
        };
        assert_fails(status, BAD_PARAM, "serialized plan: ");
        assert_eq!(restored, untouched_context());
    }
}

#[test]
fn serialize_returning_no_bytes_is_internal_error() {
    let _serial = serial();
    let handle = PluginHandle::new();
    let context = handle.context(&config(POINTWISE_ID, vec![]), &relu_graph());
    let _armed = arm("SerializablePlugin::serialize", Fault::Degenerate);
    assert_eq!(context.serialize().unwrap_err(), INTERNAL_ERROR);
    assert!(last_error().contains("empty"), "{}", last_error());
}
