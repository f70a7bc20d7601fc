//! The fuzz targets: what each does with its bytes, the invariants it asserts (a broken
//! one panics, and the driver records the input as a finding) and how it classifies the
//! outcome (refused at which stage, or accepted).

use std::ffi::{c_char, c_void};
use std::path::{Path, PathBuf};

use hipdnn_backend::capi::*;
use hipdnn_backend::status::*;
use hipdnn_backend::{LoadingMode, OperationGraph, set_engine_plugin_paths};
use hipdnn_cli::npy::{self, NpyType};
use hipdnn_cpu_provider::{CpuSettings, plan_for, unsupported_reason};
use hipdnn_data_sdk::MemoryKind;
use hipdnn_flatbuffers_sdk::model::knob::check_settings;
use hipdnn_flatbuffers_sdk::model::{Graph, KnobSetting, KnobValue};
use hipdnn_flatbuffers_sdk::{
    EngineDetailsView, GraphAndPlanView, GraphError, GraphLimits, GraphView, VerifyLimits,
};

/// A fuzz target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The JSON form of a graph: parse, validate (model and backend), serialize, verify
    /// and validate the bytes as a plugin would, ask the CPU engine, build its plan.
    GraphJson,
    /// A binary graph as a plugin and the backend receive it: verify and validate as a
    /// view and through the backend, then as [`Target::GraphJson`] from validation on.
    GraphFb,
    /// `EngineDetails` bytes as a hostile plugin returns them: verify, read, check knob
    /// settings against the knobs, read the memory kind.
    EngineDetails,
    /// A `.npy` file as `hipdnn run --inputs` reads it.
    Npy,
    /// A sequence of C API calls (create, deserialize, set and get attributes, finalize,
    /// destroy) with operands drawn from the bytes.
    CApi,
}

impl Target {
    /// Every target.
    pub const ALL: [Target; 5] = [
        Target::GraphJson,
        Target::GraphFb,
        Target::EngineDetails,
        Target::Npy,
        Target::CApi,
    ];

    /// The name on the command line and of the corpus directory.
    pub fn name(self) -> &'static str {
        match self {
            Target::GraphJson => "graph-json",
            Target::GraphFb => "graph-fb",
            Target::EngineDetails => "engine-details",
            Target::Npy => "npy",
            Target::CApi => "capi",
        }
    }

    /// The target named `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.name() == name)
    }

    /// Whether inputs are text (JSON-aware mutations).
    pub fn is_text(self) -> bool {
        self == Target::GraphJson
    }
}

/// How one input ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verdict {
    /// Whether it got through everything the target does.
    pub accepted: bool,
    /// Where it was refused, or how far it got.
    pub stage: &'static str,
}

fn refused(stage: &'static str) -> Verdict {
    Verdict {
        accepted: false,
        stage,
    }
}

fn accepted(stage: &'static str) -> Verdict {
    Verdict {
        accepted: true,
        stage,
    }
}

/// What the targets share across inputs: a scratch directory, the graphs the C API
/// target deserializes.
#[derive(Debug)]
pub struct Context {
    dir: PathBuf,
    graphs: Vec<Vec<u8>>,
}

impl Context {
    /// A context with a fresh scratch directory and the binary graphs of `graphs` for
    /// the C API target. Points the backend at an empty plugin directory (no handle may
    /// exist yet): the C API target exercises the backend, not a plugin.
    pub fn new(graphs: Vec<Vec<u8>>) -> Self {
        let dir = std::env::temp_dir().join(format!(
            "hipdnn_fuzz_{}_{:x}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos())
        ));
        std::fs::create_dir_all(dir.join("plugins")).expect("a scratch directory");
        // Only fails while a handle exists; the C API target then runs with those paths.
        let _ = set_engine_plugin_paths([dir.join("plugins")], LoadingMode::Absolute);
        Self { dir, graphs }
    }

    /// The scratch directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Runs `target` on `bytes`.
///
/// # Panics
/// When an invariant breaks (the message says which): that input is a finding.
pub fn run(target: Target, bytes: &[u8], ctx: &Context) -> Verdict {
    match target {
        Target::GraphJson => graph_json(bytes),
        Target::GraphFb => graph_fb(bytes),
        Target::EngineDetails => engine_details(bytes),
        Target::Npy => npy_file(bytes, ctx),
        Target::CApi => capi(bytes, ctx),
    }
}

/// The refusal stage for a validation error.
fn graph_error_stage(e: &GraphError) -> &'static str {
    use GraphError as E;
    match e {
        E::RankTooHigh { .. }
        | E::TensorTooLarge { .. }
        | E::SpanTooLarge { .. }
        | E::GraphTooLarge { .. } => "validation: size limits",
        E::InvalidTensor { .. } => "validation: dims and strides",
        E::InvalidAlignment { .. } => "validation: alignment",
        E::AliasingOutput { .. } => "validation: aliasing output",
        E::InvalidNode { .. } => "validation: node modes and operands",
        E::InPlace { .. } => "validation: in-place node",
        E::UnresolvedDataType { .. } => "validation: data types",
        _ => "validation: graph structure",
    }
}

fn graph_json(bytes: &[u8]) -> Verdict {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return refused("not UTF-8");
    };
    let Ok(graph) = Graph::from_json(text) else {
        return refused("not a JSON graph");
    };
    validated(graph)
}

fn graph_fb(bytes: &[u8]) -> Verdict {
    // The plugin's path: verify, then validate as a view (which requires sorted nodes).
    if let Ok(view) = GraphView::from_bytes(bytes)
        && view.validate().is_ok()
    {
        let mut model = view
            .to_model()
            .expect("a verified graph converts to the model");
        model
            .validate()
            .expect("a graph valid as a view is valid as a model");
    }
    // The backend's path.
    let graph = match GraphView::from_bytes(bytes) {
        Ok(view) => match view.to_model() {
            Ok(graph) => graph,
            Err(_) => return refused("not a FlatBuffer graph"),
        },
        Err(_) => return refused("not a FlatBuffer graph"),
    };
    let backend = OperationGraph::from_bytes(bytes);
    let verdict = validated(graph);
    // (A graph-and-plan container is read for its inner graph by the backend.)
    let container = GraphAndPlanView::from_bytes_with_limits(bytes, &VerifyLimits::DEFAULT);
    if verdict.stage.starts_with("validation") && container.is_err() {
        assert!(
            backend.is_err(),
            "the backend accepts bytes the model refuses ({})",
            verdict.stage
        );
    }
    verdict
}

/// Everything after parsing: validation in both forms, the invariants of a valid graph,
/// the CPU engine's verdict and plan.
fn validated(graph: Graph) -> Verdict {
    let mut model = graph.clone();
    if let Err(e) = model.validate() {
        return refused(graph_error_stage(&e));
    }
    let op = match OperationGraph::new(graph) {
        Ok(op) => op,
        Err(e) if e.status == HIPDNN_STATUS_NOT_SUPPORTED => return refused("engine API version"),
        Err(e) => panic!(
            "the backend refuses a graph the model accepts: {}",
            e.message
        ),
    };
    // Compared as bytes: a NaN scalar is not equal to itself.
    assert!(
        op.graph().to_bytes() == model.to_bytes(),
        "the backend validates as the model does"
    );
    let limits = GraphLimits::current();
    for t in &op.graph().tensors {
        assert!(t.dims.len() <= limits.max_rank, "a valid tensor's rank");
        let elements = t
            .dims
            .iter()
            .try_fold(1u64, |n, &d| n.checked_mul(u64::try_from(d).ok()?));
        assert!(
            elements.is_some_and(|n| n <= limits.max_tensor_elements),
            "a valid tensor's size: {:?}",
            t.dims
        );
        assert!(
            t.alignment > 0 && (t.alignment & (t.alignment - 1)) == 0,
            "a valid alignment"
        );
    }
    // Non-finite floats (from binary graphs) have no JSON form.
    if op.graph().non_finite_value().is_none() {
        let again = Graph::from_json(&op.graph().to_json()).expect("a valid graph's JSON parses");
        assert_eq!(&again, op.graph(), "a valid graph survives its JSON form");
        let upstream = op.graph().to_upstream_json();
        let again = Graph::from_json(&upstream).expect("a valid graph's upstream JSON parses");
        assert_eq!(
            &again,
            op.graph(),
            "a valid graph survives upstream's JSON dialect"
        );
    }
    let view = GraphView::from_bytes(op.bytes()).expect("the backend's bytes verify");
    view.validate()
        .expect("the backend's graph validates as a plugin validates it");

    let reason = unsupported_reason(&view);
    // Plans are built for graphs whose tensors are small: building one lays out the
    // workspace, which grows with the tensors.
    let elements: u64 = op
        .graph()
        .tensors
        .iter()
        .map(|t| t.dims.iter().map(|&d| d.unsigned_abs()).product::<u64>())
        .sum();
    if elements <= 1 << 22 {
        let settings = CpuSettings {
            threads: 1,
            ..CpuSettings::default()
        };
        let built = plan_for(&view, &settings);
        assert_eq!(
            reason.as_deref(),
            built.as_ref().err().map(|e| e.message.as_str()),
            "the CPU engine's applicability check and its plan building agree"
        );
    }
    match reason {
        Some(_) => refused("CPU engine refuses"),
        None => accepted("CPU engine accepts"),
    }
}

fn engine_details(bytes: &[u8]) -> Verdict {
    let Ok(view) = EngineDetailsView::from_bytes(bytes) else {
        return refused("not EngineDetails");
    };
    let _ = (view.engine_id(), view.name(), view.behavior_notes().count());
    let details = view.to_model();
    let _ = MemoryKind::from_behavior_notes(&details.behavior_notes);
    let values = [
        KnobValue::Int(0),
        KnobValue::Int(i64::MIN),
        KnobValue::Int(i64::MAX),
        KnobValue::Float(f64::NAN),
        KnobValue::Float(f64::INFINITY),
        KnobValue::Float(-0.0),
        KnobValue::String(String::new()),
        KnobValue::String("x".repeat(4096)),
    ];
    let mut settled = 0;
    for knob in &details.knobs {
        let default = KnobSetting {
            knob_id: knob.knob_id.clone(),
            value: knob.default_value.clone(),
        };
        if check_settings(&details.knobs, &[default]).is_ok() {
            settled += 1;
        }
        for value in &values {
            let setting = KnobSetting {
                knob_id: knob.knob_id.clone(),
                value: value.clone(),
            };
            let _ = check_settings(&details.knobs, &[setting]);
        }
    }
    if settled == details.knobs.len() {
        accepted("every default passes its constraint")
    } else {
        refused("a default fails its own constraint")
    }
}

fn npy_file(bytes: &[u8], ctx: &Context) -> Verdict {
    let path = ctx.dir().join("input.npy");
    std::fs::write(&path, bytes).expect("the scratch file");
    let reads = [
        (&[2usize, 3, 4][..], NpyType::F32),
        (&[2, 3, 4][..], NpyType::F16),
        (&[4][..], NpyType::F32),
        (&[1][..], NpyType::F32),
    ];
    for (dims, ty) in reads {
        if let Ok(values) = npy::read(&path, dims, ty) {
            assert_eq!(
                values.len(),
                dims.iter().product::<usize>(),
                "all values read"
            );
            return accepted("read");
        }
    }
    refused("refused")
}

/// Reads operands from the input, then zeros.
struct Operands<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Operands<'_> {
    fn byte(&mut self) -> Option<u8> {
        let b = self.bytes.get(self.at).copied();
        self.at += 1;
        b
    }

    fn u8(&mut self) -> u8 {
        self.byte().unwrap_or(0)
    }

    fn u64(&mut self) -> u64 {
        let mut v = [0u8; 8];
        for b in &mut v {
            *b = self.u8();
        }
        u64::from_le_bytes(v)
    }
}

const NAMES: [hipdnnBackendAttributeName_t; 20] = [
    HIPDNN_ATTR_ENGINEHEUR_MODE,
    HIPDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH,
    HIPDNN_ATTR_ENGINEHEUR_RESULTS,
    HIPDNN_ATTR_ENGINECFG_ENGINE,
    HIPDNN_ATTR_ENGINECFG_KNOB_CHOICES,
    HIPDNN_ATTR_EXECUTION_PLAN_HANDLE,
    HIPDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
    HIPDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
    HIPDNN_ATTR_EXECUTION_PLAN_TENSOR_UIDS_EXT,
    HIPDNN_ATTR_KNOB_CHOICE_KNOB_TYPE,
    HIPDNN_ATTR_KNOB_CHOICE_KNOB_VALUE,
    HIPDNN_ATTR_OPERATIONGRAPH_HANDLE,
    HIPDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT,
    HIPDNN_ATTR_VARIANT_PACK_UNIQUE_IDS,
    HIPDNN_ATTR_VARIANT_PACK_DATA_POINTERS,
    HIPDNN_ATTR_VARIANT_PACK_WORKSPACE,
    HIPDNN_ATTR_ENGINE_OPERATION_GRAPH,
    HIPDNN_ATTR_ENGINE_GLOBAL_INDEX,
    HIPDNN_ATTR_ENGINE_BEHAVIOR_NOTE,
    HIPDNN_ATTR_ENGINE_NAME_EXT,
];

const TYPES: [hipdnnBackendAttributeType_t; 8] = [
    HIPDNN_TYPE_HANDLE,
    HIPDNN_TYPE_INT64,
    HIPDNN_TYPE_DOUBLE,
    HIPDNN_TYPE_VOID_PTR,
    HIPDNN_TYPE_HEUR_MODE,
    HIPDNN_TYPE_BACKEND_DESCRIPTOR,
    HIPDNN_TYPE_BEHAVIOR_NOTE,
    HIPDNN_TYPE_CHAR,
];

/// Bytes of the attribute arrays handed to the C API: every count given is at most
/// `ARRAY / 8` (or one the API must refuse without reading: negative, or above
/// its element bound), so no call can read or write past them.
const ARRAY: usize = 512;

/// 8-byte aligned storage for attribute arrays.
#[repr(C, align(8))]
struct Array([u8; ARRAY]);

/// The last error message (without clearing it).
fn last_error() -> String {
    let mut buffer = [0 as c_char; 1024];
    // SAFETY: a writable buffer of that many bytes.
    unsafe { hipdnnPeekLastErrorString_ext(buffer.as_mut_ptr(), buffer.len()) };
    // SAFETY: the function NUL-terminates within the buffer.
    unsafe { std::ffi::CStr::from_ptr(buffer.as_ptr()) }
        .to_string_lossy()
        .into_owned()
}

/// Checks a C API status: no caught panic, and a refusal says why.
fn checked(status: hipdnnStatus_t, call: &str) -> bool {
    if status == HIPDNN_STATUS_SUCCESS {
        return true;
    }
    let message = last_error();
    assert!(
        status != HIPDNN_STATUS_INTERNAL_ERROR,
        "{call} failed with INTERNAL_ERROR (a caught panic): {message}"
    );
    assert!(
        !message.is_empty(),
        "{call} failed ({status:?}) without a message"
    );
    false
}

fn capi(bytes: &[u8], ctx: &Context) -> Verdict {
    let mut ops = Operands { bytes, at: 0 };
    let mut handle: hipdnnHandle_t = std::ptr::null_mut();
    // SAFETY: a writable out-pointer.
    let created = unsafe { hipdnnCreate(&mut handle) };
    assert!(checked(created, "hipdnnCreate"), "a handle without plugins");
    let mut live: Vec<hipdnnBackendDescriptor_t> = Vec::new();
    let mut dead: Vec<usize> = Vec::new();
    let mut dead_handles: Vec<usize> = Vec::new();
    let mut finalized = 0;
    let mut calls = 0;
    while let Some(op) = ops.byte() {
        calls += 1;
        if calls > 48 {
            break;
        }
        // A descriptor operand: a live one, null, a destroyed one or a made-up address.
        let pick = |ops: &mut Operands<'_>, live: &[hipdnnBackendDescriptor_t]| {
            let b = ops.u8();
            match b % 8 {
                0 => std::ptr::null_mut(),
                1 if !dead.is_empty() => {
                    dead[usize::from(b) % dead.len()] as hipdnnBackendDescriptor_t
                }
                2 => (0x1000 + usize::from(b) * 8) as hipdnnBackendDescriptor_t,
                _ if !live.is_empty() => live[usize::from(b) % live.len()],
                _ => std::ptr::null_mut(),
            }
        };
        match op % 8 {
            0 => {
                let ty = hipdnnBackendDescriptorType_t::from(ops.u8() % 13);
                let mut d = std::ptr::null_mut();
                // SAFETY: a writable out-pointer.
                let status = unsafe { hipdnnBackendCreateDescriptor(ty, &mut d) };
                if checked(status, "create") {
                    live.push(d);
                }
            }
            1 => {
                let graph = &ctx.graphs[usize::from(ops.u8()) % ctx.graphs.len().max(1)];
                let mut d = std::ptr::null_mut();
                // SAFETY: `graph` is valid for its length; a writable out-pointer.
                let status = unsafe {
                    hipdnnBackendCreateAndDeserializeGraph_ext(&mut d, graph.as_ptr(), graph.len())
                };
                if checked(status, "deserialize") {
                    live.push(d);
                }
            }
            2 | 3 => {
                let d = pick(&mut ops, &live);
                let b = ops.u8();
                let name = if b < 230 {
                    NAMES[usize::from(b) % NAMES.len()]
                } else {
                    i32::from(b) * 7 - 1000
                };
                let b = ops.u8();
                let ty = if b < 240 {
                    TYPES[usize::from(b) % TYPES.len()]
                } else {
                    i32::from(b)
                };
                let count: i64 = match ops.u8() % 16 {
                    0 => 1 << 62,
                    1 => -1,
                    2 => 0,
                    n => i64::from(n % 4),
                };
                let mut array = Array([0; ARRAY]);
                let words = array.0.len() / 8;
                for i in 0..words {
                    let value: u64 = match ops.u8() % 6 {
                        0 => handle as u64,
                        1 if !live.is_empty() => live[i % live.len()] as u64,
                        2 if !dead_handles.is_empty() => dead_handles[0] as u64,
                        3 => ops.u64(),
                        _ => u64::from(ops.u8()),
                    };
                    array.0[i * 8..i * 8 + 8].copy_from_slice(&value.to_le_bytes());
                }
                // SAFETY: the array holds ARRAY bytes, at least `count` elements of any
                // type for the counts given (see ARRAY).
                let status = unsafe {
                    hipdnnBackendSetAttribute(d, name, ty, count, array.0.as_ptr().cast::<c_void>())
                };
                checked(status, "set attribute");
            }
            4 => {
                let d = pick(&mut ops, &live);
                // SAFETY: any pointer: the registry checks it.
                if checked(unsafe { hipdnnBackendFinalize(d) }, "finalize") {
                    finalized += 1;
                }
            }
            5 => {
                let d = pick(&mut ops, &live);
                let name = NAMES[usize::from(ops.u8()) % NAMES.len()];
                let ty = TYPES[usize::from(ops.u8()) % TYPES.len()];
                let requested = i64::from(ops.u8() % 8);
                let mut count = 0i64;
                let mut array = Array([0; ARRAY]);
                // SAFETY: room for `requested` (< ARRAY / 8) elements of any type.
                let status = unsafe {
                    hipdnnBackendGetAttribute(
                        d,
                        name,
                        ty,
                        requested,
                        &mut count,
                        array.0.as_mut_ptr().cast::<c_void>(),
                    )
                };
                if checked(status, "get attribute") {
                    assert!(count >= 0, "a count read back is not negative");
                }
            }
            6 => {
                let d = pick(&mut ops, &live);
                // SAFETY: any pointer: the registry checks it.
                if checked(unsafe { hipdnnBackendDestroyDescriptor(d) }, "destroy") && !d.is_null()
                {
                    live.retain(|&l| l != d);
                    dead.push(d as usize);
                }
            }
            _ => {
                // The handle goes first; descriptors keep what they need alive.
                // SAFETY: the live handle from hipdnnCreate.
                assert!(checked(unsafe { hipdnnDestroy(handle) }, "hipdnnDestroy"));
                dead_handles.push(handle as usize);
                // SAFETY: a writable out-pointer.
                let status = unsafe { hipdnnCreate(&mut handle) };
                assert!(checked(status, "hipdnnCreate"));
            }
        }
    }
    for d in live {
        // SAFETY: live descriptors of this run, destroyed once.
        let status = unsafe { hipdnnBackendDestroyDescriptor(d) };
        assert!(checked(status, "destroy"));
    }
    // SAFETY: the live handle.
    assert!(checked(unsafe { hipdnnDestroy(handle) }, "hipdnnDestroy"));
    if finalized > 0 {
        accepted("finalized a descriptor")
    } else {
        refused("nothing finalized")
    }
}
