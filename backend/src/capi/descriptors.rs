//! Backend descriptors (`hipdnnBackend*`): the cuDNN-backend-shaped C path from a
//! serialized graph to an executed plan.
//!
//! ```text
//! hipdnnBackendCreateAndDeserializeGraph_ext  → OPERATIONGRAPH (set HANDLE, finalize)
//! ENGINEHEUR   set OPERATION_GRAPH, MODE; finalize ranks the engines;
//!              get RESULTS fills caller-created ENGINECFG descriptors, best first
//! ENGINE       set OPERATION_GRAPH, GLOBAL_INDEX (the engine id); get NAME_EXT, BEHAVIOR_NOTE
//! KNOB_CHOICE  set KNOB_TYPE (the knob id, CHAR), KNOB_VALUE (INT64, DOUBLE or CHAR)
//! ENGINECFG    set ENGINE, KNOB_CHOICES; finalize checks the settings against the engine
//! EXECUTION_PLAN set ENGINE_CONFIG (and HANDLE); finalize builds the plugin's plan;
//!              get WORKSPACE_SIZE, TENSOR_UIDS_EXT
//! VARIANT_PACK set UNIQUE_IDS, DATA_POINTERS, WORKSPACE
//! hipdnnBackendExecute(handle, plan, variant pack)
//! ```
//!
//! Setting a descriptor attribute copies what it refers to, so the referenced
//! descriptor may be destroyed afterwards. A finalized descriptor cannot change
//! (`NOT_INITIALIZED`, hipDNN's status for it); a descriptor must be finalized before
//! its attributes are read or it is used by another one. An execution plan keeps using
//! the handle it was built with: the handle must outlive the plan descriptor.

use std::ffi::{c_char, c_void};
use std::sync::Arc;

use hipdnn_flatbuffers_sdk::model::{Graph, KnobSetting, KnobValue};

use super::{boundary, handle_mut, hipdnnHandle_t, null, write};
use crate::execution::{OperationGraph, Plan, VariantPack};
use crate::handle::Handle;
use crate::status::*;

/// Opaque target of [`hipdnnBackendDescriptor_t`].
#[derive(Debug)]
pub struct hipdnnBackendDescriptor {
    _private: [u8; 0],
}

/// A backend descriptor, created by [`hipdnnBackendCreateDescriptor`] (or a
/// deserializing constructor) and freed by [`hipdnnBackendDestroyDescriptor`].
pub type hipdnnBackendDescriptor_t = *mut hipdnnBackendDescriptor;

/// Kinds of backend descriptor (`hipdnnBackendDescriptorType_t`).
pub type hipdnnBackendDescriptorType_t = i32;
/// Not a descriptor type.
pub const HIPDNN_BACKEND_INVALID_TYPE: hipdnnBackendDescriptorType_t = 0;
/// An engine of an operation graph.
pub const HIPDNN_BACKEND_ENGINE_DESCRIPTOR: hipdnnBackendDescriptorType_t = 1;
/// An engine with knob choices.
pub const HIPDNN_BACKEND_ENGINECFG_DESCRIPTOR: hipdnnBackendDescriptorType_t = 2;
/// The engine heuristic: ranked engine configs for a graph.
pub const HIPDNN_BACKEND_ENGINEHEUR_DESCRIPTOR: hipdnnBackendDescriptorType_t = 3;
/// An execution plan.
pub const HIPDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR: hipdnnBackendDescriptorType_t = 4;
/// Intermediate tensor information (not supported).
pub const HIPDNN_BACKEND_INTERMEDIATE_INFO_DESCRIPTOR: hipdnnBackendDescriptorType_t = 5;
/// One knob setting.
pub const HIPDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR: hipdnnBackendDescriptorType_t = 6;
/// A knob's description (not supported).
pub const HIPDNN_BACKEND_KNOB_INFO_DESCRIPTOR: hipdnnBackendDescriptorType_t = 7;
/// Layout information (not supported).
pub const HIPDNN_BACKEND_LAYOUT_INFO_DESCRIPTOR: hipdnnBackendDescriptorType_t = 8;
/// Statistics generation (not supported).
pub const HIPDNN_BACKEND_OPERATION_GEN_STATS_DESCRIPTOR: hipdnnBackendDescriptorType_t = 9;
/// An operation graph (made from FlatBuffer or JSON bytes).
pub const HIPDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR: hipdnnBackendDescriptorType_t = 10;
/// Tensor pointers and workspace for one execution.
pub const HIPDNN_BACKEND_VARIANT_PACK_DESCRIPTOR: hipdnnBackendDescriptorType_t = 11;

/// Attribute names (`hipdnnBackendAttributeName_t`).
pub type hipdnnBackendAttributeName_t = i32;
/// ENGINEHEUR: heuristic mode (HEUR_MODE; recorded, every mode ranks the same way).
pub const HIPDNN_ATTR_ENGINEHEUR_MODE: hipdnnBackendAttributeName_t = 100;
/// ENGINEHEUR: the operation graph (BACKEND_DESCRIPTOR).
pub const HIPDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH: hipdnnBackendAttributeName_t = 101;
/// ENGINEHEUR: ranked engine configs (BACKEND_DESCRIPTOR, read).
pub const HIPDNN_ATTR_ENGINEHEUR_RESULTS: hipdnnBackendAttributeName_t = 102;
/// ENGINECFG: the engine (BACKEND_DESCRIPTOR).
pub const HIPDNN_ATTR_ENGINECFG_ENGINE: hipdnnBackendAttributeName_t = 200;
/// ENGINECFG: knob choices (BACKEND_DESCRIPTOR array of KNOB_CHOICE).
pub const HIPDNN_ATTR_ENGINECFG_KNOB_CHOICES: hipdnnBackendAttributeName_t = 202;
/// EXECUTION_PLAN: the handle (HANDLE; defaults to the graph's).
pub const HIPDNN_ATTR_EXECUTION_PLAN_HANDLE: hipdnnBackendAttributeName_t = 300;
/// EXECUTION_PLAN: the engine config (BACKEND_DESCRIPTOR).
pub const HIPDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG: hipdnnBackendAttributeName_t = 301;
/// EXECUTION_PLAN: workspace bytes (INT64, read).
pub const HIPDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE: hipdnnBackendAttributeName_t = 302;
/// EXECUTION_PLAN: uids the variant pack must give pointers for (INT64, read).
pub const HIPDNN_ATTR_EXECUTION_PLAN_TENSOR_UIDS_EXT: hipdnnBackendAttributeName_t = 308;
/// KNOB_CHOICE: the knob id (CHAR).
pub const HIPDNN_ATTR_KNOB_CHOICE_KNOB_TYPE: hipdnnBackendAttributeName_t = 500;
/// KNOB_CHOICE: the value (INT64, DOUBLE or CHAR).
pub const HIPDNN_ATTR_KNOB_CHOICE_KNOB_VALUE: hipdnnBackendAttributeName_t = 501;
/// OPERATIONGRAPH: the handle (HANDLE).
pub const HIPDNN_ATTR_OPERATIONGRAPH_HANDLE: hipdnnBackendAttributeName_t = 600;
/// OPERATIONGRAPH: number of engines that can run it (INT64, read).
pub const HIPDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT: hipdnnBackendAttributeName_t = 602;
/// VARIANT_PACK: tensor uids (INT64).
pub const HIPDNN_ATTR_VARIANT_PACK_UNIQUE_IDS: hipdnnBackendAttributeName_t = 700;
/// VARIANT_PACK: one pointer per uid (VOID_PTR).
pub const HIPDNN_ATTR_VARIANT_PACK_DATA_POINTERS: hipdnnBackendAttributeName_t = 701;
/// VARIANT_PACK: the workspace (VOID_PTR).
pub const HIPDNN_ATTR_VARIANT_PACK_WORKSPACE: hipdnnBackendAttributeName_t = 703;
/// ENGINE: the operation graph (BACKEND_DESCRIPTOR).
pub const HIPDNN_ATTR_ENGINE_OPERATION_GRAPH: hipdnnBackendAttributeName_t = 1000;
/// ENGINE: the engine id (INT64).
pub const HIPDNN_ATTR_ENGINE_GLOBAL_INDEX: hipdnnBackendAttributeName_t = 1001;
/// ENGINE: behavior notes (BEHAVIOR_NOTE, read).
pub const HIPDNN_ATTR_ENGINE_BEHAVIOR_NOTE: hipdnnBackendAttributeName_t = 1005;
/// ENGINE: the engine's name (CHAR, read; the count includes the NUL).
pub const HIPDNN_ATTR_ENGINE_NAME_EXT: hipdnnBackendAttributeName_t = 1008;

/// Attribute value types (`hipdnnBackendAttributeType_t`).
pub type hipdnnBackendAttributeType_t = i32;
/// `hipdnnHandle_t`.
pub const HIPDNN_TYPE_HANDLE: hipdnnBackendAttributeType_t = 0;
/// `int64_t`.
pub const HIPDNN_TYPE_INT64: hipdnnBackendAttributeType_t = 3;
/// `double`.
pub const HIPDNN_TYPE_DOUBLE: hipdnnBackendAttributeType_t = 5;
/// `void*`.
pub const HIPDNN_TYPE_VOID_PTR: hipdnnBackendAttributeType_t = 6;
/// A heuristic mode (`int32_t`-sized enum).
pub const HIPDNN_TYPE_HEUR_MODE: hipdnnBackendAttributeType_t = 7;
/// `hipdnnBackendDescriptor_t`.
pub const HIPDNN_TYPE_BACKEND_DESCRIPTOR: hipdnnBackendAttributeType_t = 13;
/// A behavior note (`int32_t`-sized enum).
pub const HIPDNN_TYPE_BEHAVIOR_NOTE: hipdnnBackendAttributeType_t = 16;
/// `char`.
pub const HIPDNN_TYPE_CHAR: hipdnnBackendAttributeType_t = 19;

/// A graph as descriptors refer to it: the graph and the handle it runs on.
#[derive(Debug, Clone)]
struct GraphRef {
    handle: *mut Handle,
    graph: Arc<OperationGraph>,
}

#[derive(Debug)]
enum Kind {
    Graph {
        handle: *mut Handle,
        graph: Arc<OperationGraph>,
    },
    Heuristic {
        graph: Option<GraphRef>,
        mode: i32,
        results: Vec<i64>,
    },
    Engine {
        graph: Option<GraphRef>,
        id: Option<i64>,
        name: String,
        notes: Vec<i32>,
    },
    EngineConfig {
        engine: Option<(GraphRef, i64)>,
        knobs: Vec<KnobSetting>,
    },
    KnobChoice {
        id: Option<String>,
        value: Option<KnobValue>,
    },
    Plan {
        handle: *mut Handle,
        config: Option<(GraphRef, i64, Vec<KnobSetting>)>,
        // Borrows `*handle`, which the caller keeps alive (module docs).
        plan: Option<Plan<'static>>,
    },
    VariantPack {
        uids: Vec<i64>,
        pointers: Vec<*mut c_void>,
        workspace: *mut c_void,
    },
}

#[derive(Debug)]
struct Descriptor {
    kind: Kind,
    finalized: bool,
}

impl Kind {
    fn type_name(&self) -> &'static str {
        match self {
            Kind::Graph { .. } => "OPERATIONGRAPH",
            Kind::Heuristic { .. } => "ENGINEHEUR",
            Kind::Engine { .. } => "ENGINE",
            Kind::EngineConfig { .. } => "ENGINECFG",
            Kind::KnobChoice { .. } => "KNOB_CHOICE",
            Kind::Plan { .. } => "EXECUTION_PLAN",
            Kind::VariantPack { .. } => "VARIANT_PACK",
        }
    }
}

/// # Safety
/// `desc` is null or a live descriptor of this library, used by one thread at a time.
unsafe fn desc_mut<'a>(desc: hipdnnBackendDescriptor_t) -> BackendResult<&'a mut Descriptor> {
    if desc.is_null() {
        return Err(null("descriptor"));
    }
    // SAFETY: per the contract, the Box made by a constructor of this module.
    Ok(unsafe { &mut *desc.cast::<Descriptor>() })
}

fn into_raw(kind: Kind, finalized: bool) -> hipdnnBackendDescriptor_t {
    Box::into_raw(Box::new(Descriptor { kind, finalized })).cast()
}

fn unsupported_attribute(kind: &Kind, name: hipdnnBackendAttributeName_t) -> BackendError {
    BackendError::not_supported(format!(
        "attribute {name} is not supported on a {} descriptor",
        kind.type_name()
    ))
}

fn expect_type(
    name: hipdnnBackendAttributeName_t,
    got: hipdnnBackendAttributeType_t,
    want: hipdnnBackendAttributeType_t,
) -> BackendResult<()> {
    if got == want {
        Ok(())
    } else {
        Err(BackendError::bad_param(format!(
            "attribute {name} takes attribute type {want}, not {got}"
        )))
    }
}

/// The `count` elements at `array`.
///
/// # Safety
/// `array` is null or valid for `count` reads of `T`.
unsafe fn elements<'a, T>(array: *const c_void, count: i64, name: i32) -> BackendResult<&'a [T]> {
    let count = usize::try_from(count).map_err(|_| {
        BackendError::bad_param(format!("attribute {name}: negative element count {count}"))
    })?;
    if count == 0 {
        return Ok(&[]);
    }
    if array.is_null() {
        return Err(null(&format!("attribute {name} array")));
    }
    // SAFETY: per the contract.
    Ok(unsafe { std::slice::from_raw_parts(array.cast::<T>(), count) })
}

/// Exactly one element.
///
/// # Safety
/// As [`elements`].
unsafe fn one<T: Copy>(array: *const c_void, count: i64, name: i32) -> BackendResult<T> {
    // SAFETY: forwarded.
    match unsafe { elements::<T>(array, count, name) }? {
        [value] => Ok(*value),
        other => Err(BackendError::bad_param(format!(
            "attribute {name} takes 1 element, not {}",
            other.len()
        ))),
    }
}

/// A finalized descriptor of the wanted kind, referenced by a BACKEND_DESCRIPTOR
/// attribute.
///
/// # Safety
/// `desc` is null or a live descriptor.
unsafe fn referenced<'a>(
    desc: hipdnnBackendDescriptor_t,
    name: i32,
) -> BackendResult<&'a Descriptor> {
    // SAFETY: per the contract.
    let d = unsafe { desc_mut(desc) }?;
    if !d.finalized {
        return Err(BackendError::new(
            HIPDNN_STATUS_BAD_PARAM_NOT_FINALIZED,
            format!(
                "attribute {name}: the {} descriptor is not finalized",
                d.kind.type_name()
            ),
        ));
    }
    Ok(d)
}

fn wrong_kind(name: i32, want: &str, got: &Kind) -> BackendError {
    BackendError::bad_param(format!(
        "attribute {name} takes a {want} descriptor, not {}",
        got.type_name()
    ))
}

fn graph_ref(d: &Descriptor, name: i32) -> BackendResult<GraphRef> {
    match &d.kind {
        Kind::Graph { handle, graph } => Ok(GraphRef {
            handle: *handle,
            graph: Arc::clone(graph),
        }),
        other => Err(wrong_kind(name, "OPERATIONGRAPH", other)),
    }
}

/// # Safety
/// `handle` is a live handle.
unsafe fn handle_ref<'a>(handle: *mut Handle) -> BackendResult<&'a Handle> {
    // SAFETY: per the contract (checked for null).
    unsafe { handle_mut(handle.cast()) }.map(|h| &*h)
}

/// Creates an empty descriptor of `descriptor_type`; free it with
/// [`hipdnnBackendDestroyDescriptor`]. Operation graphs are made from bytes instead
/// ([`hipdnnBackendCreateAndDeserializeGraph_ext`]).
///
/// # Safety
/// `descriptor` is null or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipdnnBackendCreateDescriptor(
    descriptor_type: hipdnnBackendDescriptorType_t,
    descriptor: *mut hipdnnBackendDescriptor_t,
) -> hipdnnStatus_t {
    boundary("hipdnnBackendCreateDescriptor", || {
        if descriptor.is_null() {
            return Err(null("descriptor"));
        }
        let kind = match descriptor_type {
            HIPDNN_BACKEND_ENGINEHEUR_DESCRIPTOR => Kind::Heuristic {
                graph: None,
                mode: 0,
                results: Vec::new(),
            },
            HIPDNN_BACKEND_ENGINE_DESCRIPTOR => Kind::Engine {
                graph: None,
                id: None,
                name: String::new(),
                notes: Vec::new(),
            },
            HIPDNN_BACKEND_ENGINECFG_DESCRIPTOR => Kind::EngineConfig {
                engine: None,
                knobs: Vec::new(),
            },
            HIPDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR => Kind::KnobChoice {
                id: None,
                value: None,
            },
            HIPDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR => Kind::Plan {
                handle: std::ptr::null_mut(),
                config: None,
                plan: None,
            },
            HIPDNN_BACKEND_VARIANT_PACK_DESCRIPTOR => Kind::VariantPack {
                uids: Vec::new(),
                pointers: Vec::new(),
                workspace: std::ptr::null_mut(),
            },
            HIPDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR => {
                return Err(BackendError::not_supported(
                    "operation graphs are made from serialized graphs: use hipdnnBackendCreateAndDeserializeGraph_ext",
                ));
            }
            other => {
                return Err(BackendError::not_supported(format!(
                    "descriptor type {other} is not supported"
                )));
            }
        };
        // SAFETY: checked non-null; writable per the contract.
        unsafe { descriptor.write(into_raw(kind, false)) };
        Ok(())
    })
}

/// Destroys a descriptor; null does nothing. An execution plan descriptor releases the
/// plugin's plan, which needs its handle alive.
///
/// # Safety
/// `descriptor` is null or a live descriptor, not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipdnnBackendDestroyDescriptor(
    descriptor: hipdnnBackendDescriptor_t,
) -> hipdnnStatus_t {
    boundary("hipdnnBackendDestroyDescriptor", || {
        if !descriptor.is_null() {
            // SAFETY: per the contract, a Box of this module, released once.
            drop(unsafe { Box::from_raw(descriptor.cast::<Descriptor>()) });
        }
        Ok(())
    })
}

fn make_graph_descriptor(
    descriptor: *mut hipdnnBackendDescriptor_t,
    graph: BackendResult<OperationGraph>,
) -> BackendResult<()> {
    if descriptor.is_null() {
        return Err(null("descriptor"));
    }
    let graph = graph?;
    let kind = Kind::Graph {
        handle: std::ptr::null_mut(),
        graph: Arc::new(graph),
    };
    // SAFETY: checked non-null; writable per the caller's contract.
    unsafe { descriptor.write(into_raw(kind, false)) };
    Ok(())
}

/// Makes an (unfinalized) operation graph descriptor from a serialized `Graph`
/// FlatBuffer, or from a graph-and-plan container (`"HDGP"`, whose graph is used): the
/// bytes are verified and the graph validated here, once; they are copied. Set its handle (`HIPDNN_ATTR_OPERATIONGRAPH_HANDLE`) and finalize it.
///
/// # Safety
/// `descriptor` is null or writable; `data` is null or valid for `size` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipdnnBackendCreateAndDeserializeGraph_ext(
    descriptor: *mut hipdnnBackendDescriptor_t,
    data: *const u8,
    size: usize,
) -> hipdnnStatus_t {
    boundary("hipdnnBackendCreateAndDeserializeGraph_ext", || {
        if data.is_null() {
            return Err(null("serialized graph"));
        }
        // SAFETY: non-null, valid for `size` bytes per the contract.
        let bytes = unsafe { std::slice::from_raw_parts(data, size) };
        make_graph_descriptor(descriptor, OperationGraph::from_bytes(bytes))
    })
}

/// Makes an (unfinalized) operation graph descriptor from the JSON form of a graph
/// (`docs/graph-json.md`); `size` counts the bytes without a terminating NUL (one is
/// allowed).
///
/// # Safety
/// `descriptor` is null or writable; `json` is null or valid for `size` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipdnnBackendCreateAndDeserializeJsonGraph_ext(
    descriptor: *mut hipdnnBackendDescriptor_t,
    json: *const c_char,
    size: usize,
) -> hipdnnStatus_t {
    boundary("hipdnnBackendCreateAndDeserializeJsonGraph_ext", || {
        if json.is_null() {
            return Err(null("JSON graph"));
        }
        // SAFETY: non-null, valid for `size` bytes per the contract.
        let bytes = unsafe { std::slice::from_raw_parts(json.cast::<u8>(), size) };
        let bytes = bytes.strip_suffix(&[0]).unwrap_or(bytes);
        let text = std::str::from_utf8(bytes)
            .map_err(|e| BackendError::bad_param(format!("JSON graph is not UTF-8: {e}")))?;
        let graph = Graph::from_json(text)
            .map_err(|e| BackendError::bad_param(format!("not a valid JSON graph: {e}")));
        make_graph_descriptor(descriptor, graph.and_then(OperationGraph::new))
    })
}

/// Copies `bytes` to a caller buffer with the two-call convention (null `out`: size
/// only).
///
/// # Safety
/// `size` is null or writable; `out` is null or valid for `requested` bytes.
unsafe fn copy_out(
    bytes: &[u8],
    requested: usize,
    size: *mut usize,
    out: *mut u8,
) -> BackendResult<()> {
    // SAFETY: per the contract.
    unsafe { write(size, "size", bytes.len()) }?;
    if out.is_null() {
        return Ok(());
    }
    if requested < bytes.len() {
        return Err(BackendError::new(
            HIPDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT,
            format!(
                "the buffer has {requested} bytes, {} are needed",
                bytes.len()
            ),
        ));
    }
    // SAFETY: `out` holds at least `bytes.len()` bytes per the contract.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), out, bytes.len()) };
    Ok(())
}

fn graph_of(d: &Descriptor) -> BackendResult<&OperationGraph> {
    match &d.kind {
        Kind::Graph { graph, .. } => Ok(graph),
        other => Err(BackendError::bad_param(format!(
            "expected an OPERATIONGRAPH descriptor, not {}",
            other.type_name()
        ))),
    }
}

/// The graph's FlatBuffer serialization (validated, topologically sorted), two-call:
/// `out` null writes only `*size`.
///
/// # Safety
/// `descriptor` is a live descriptor; `size` is null or writable; `out` is null or
/// valid for `requested` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipdnnBackendGetSerializedBinaryGraph_ext(
    descriptor: hipdnnBackendDescriptor_t,
    requested: usize,
    size: *mut usize,
    out: *mut u8,
) -> hipdnnStatus_t {
    boundary("hipdnnBackendGetSerializedBinaryGraph_ext", || {
        // SAFETY: per the contract.
        let d = unsafe { desc_mut(descriptor) }?;
        let bytes = graph_of(d)?.bytes();
        // SAFETY: per the contract.
        unsafe { copy_out(bytes, requested, size, out) }
    })
}

/// The graph's JSON form, NUL-terminated, two-call (the size includes the NUL).
///
/// # Safety
/// As [`hipdnnBackendGetSerializedBinaryGraph_ext`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipdnnBackendGetSerializedJsonGraph_ext(
    descriptor: hipdnnBackendDescriptor_t,
    requested: usize,
    size: *mut usize,
    out: *mut c_char,
) -> hipdnnStatus_t {
    boundary("hipdnnBackendGetSerializedJsonGraph_ext", || {
        // SAFETY: per the contract.
        let d = unsafe { desc_mut(descriptor) }?;
        let mut json = graph_of(d)?.graph().to_json().into_bytes();
        json.push(0);
        // SAFETY: per the contract.
        unsafe { copy_out(&json, requested, size, out.cast()) }
    })
}

/// Sets an attribute of an unfinalized descriptor (`NOT_INITIALIZED` once finalized).
///
/// # Safety
/// `descriptor` is a live descriptor; `array` is null or valid for `count` elements of
/// the type `attribute_type` names; descriptors in it are live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipdnnBackendSetAttribute(
    descriptor: hipdnnBackendDescriptor_t,
    name: hipdnnBackendAttributeName_t,
    attribute_type: hipdnnBackendAttributeType_t,
    count: i64,
    array: *const c_void,
) -> hipdnnStatus_t {
    boundary("hipdnnBackendSetAttribute", || {
        // SAFETY: per the contract.
        let d = unsafe { desc_mut(descriptor) }?;
        if d.finalized {
            return Err(BackendError::new(
                HIPDNN_STATUS_NOT_INITIALIZED,
                format!(
                    "the {} descriptor is finalized and cannot change",
                    d.kind.type_name()
                ),
            ));
        }
        // SAFETY: the array matches the declared type and count per the contract; each
        // arm checks the type before reading.
        unsafe { set_attribute(&mut d.kind, name, attribute_type, count, array) }
    })
}

/// # Safety
/// As [`hipdnnBackendSetAttribute`].
unsafe fn set_attribute(
    kind: &mut Kind,
    name: i32,
    ty: i32,
    count: i64,
    array: *const c_void,
) -> BackendResult<()> {
    let descriptor_arg = |ty: i32| -> BackendResult<&Descriptor> {
        expect_type(name, ty, HIPDNN_TYPE_BACKEND_DESCRIPTOR)?;
        // SAFETY: one descriptor pointer per the contract.
        let desc = unsafe { one::<hipdnnBackendDescriptor_t>(array, count, name) }?;
        // SAFETY: a live descriptor per the contract.
        unsafe { referenced(desc, name) }
    };
    match (kind, name) {
        (Kind::Graph { handle, .. }, HIPDNN_ATTR_OPERATIONGRAPH_HANDLE) => {
            expect_type(name, ty, HIPDNN_TYPE_HANDLE)?;
            // SAFETY: one handle per the contract.
            let h = unsafe { one::<hipdnnHandle_t>(array, count, name) }?;
            if h.is_null() {
                return Err(null("handle"));
            }
            *handle = h.cast();
        }
        (Kind::Heuristic { graph, .. }, HIPDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH)
        | (Kind::Engine { graph, .. }, HIPDNN_ATTR_ENGINE_OPERATION_GRAPH) => {
            *graph = Some(graph_ref(descriptor_arg(ty)?, name)?);
        }
        (Kind::Heuristic { mode, .. }, HIPDNN_ATTR_ENGINEHEUR_MODE) => {
            expect_type(name, ty, HIPDNN_TYPE_HEUR_MODE)?;
            // SAFETY: one enum value per the contract.
            *mode = unsafe { one::<i32>(array, count, name) }?;
        }
        (Kind::Engine { id, .. }, HIPDNN_ATTR_ENGINE_GLOBAL_INDEX) => {
            expect_type(name, ty, HIPDNN_TYPE_INT64)?;
            // SAFETY: one int64 per the contract.
            *id = Some(unsafe { one::<i64>(array, count, name) }?);
        }
        (Kind::EngineConfig { engine, .. }, HIPDNN_ATTR_ENGINECFG_ENGINE) => {
            let d = descriptor_arg(ty)?;
            let Kind::Engine {
                graph: Some(graph),
                id: Some(id),
                ..
            } = &d.kind
            else {
                return Err(wrong_kind(name, "finalized ENGINE", &d.kind));
            };
            *engine = Some((graph.clone(), *id));
        }
        (Kind::EngineConfig { knobs, .. }, HIPDNN_ATTR_ENGINECFG_KNOB_CHOICES) => {
            expect_type(name, ty, HIPDNN_TYPE_BACKEND_DESCRIPTOR)?;
            // SAFETY: `count` descriptor pointers per the contract.
            let choices = unsafe { elements::<hipdnnBackendDescriptor_t>(array, count, name) }?;
            let mut settings = Vec::with_capacity(choices.len());
            for &choice in choices {
                // SAFETY: live descriptors per the contract.
                let d = unsafe { referenced(choice, name) }?;
                let Kind::KnobChoice {
                    id: Some(id),
                    value: Some(value),
                } = &d.kind
                else {
                    return Err(wrong_kind(name, "KNOB_CHOICE", &d.kind));
                };
                settings.push(KnobSetting {
                    knob_id: id.clone(),
                    value: value.clone(),
                });
            }
            *knobs = settings;
        }
        (Kind::KnobChoice { id, .. }, HIPDNN_ATTR_KNOB_CHOICE_KNOB_TYPE) => {
            expect_type(name, ty, HIPDNN_TYPE_CHAR)?;
            // SAFETY: `count` chars per the contract.
            *id = Some(text(unsafe { elements::<u8>(array, count, name) }?, name)?);
        }
        (Kind::KnobChoice { value, .. }, HIPDNN_ATTR_KNOB_CHOICE_KNOB_VALUE) => {
            *value = Some(match ty {
                // SAFETY: one element of the declared type per the contract.
                HIPDNN_TYPE_INT64 => KnobValue::Int(unsafe { one::<i64>(array, count, name) }?),
                // SAFETY: as above.
                HIPDNN_TYPE_DOUBLE => KnobValue::Float(unsafe { one::<f64>(array, count, name) }?),
                HIPDNN_TYPE_CHAR => {
                    // SAFETY: `count` chars per the contract.
                    let chars = unsafe { elements::<u8>(array, count, name) }?;
                    KnobValue::String(text(chars, name)?)
                }
                other => {
                    return Err(BackendError::bad_param(format!(
                        "attribute {name} takes INT64, DOUBLE or CHAR values, not type {other}"
                    )));
                }
            });
        }
        (Kind::Plan { handle, .. }, HIPDNN_ATTR_EXECUTION_PLAN_HANDLE) => {
            expect_type(name, ty, HIPDNN_TYPE_HANDLE)?;
            // SAFETY: one handle per the contract.
            *handle = unsafe { one::<hipdnnHandle_t>(array, count, name) }?.cast();
        }
        (Kind::Plan { config, .. }, HIPDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG) => {
            let d = descriptor_arg(ty)?;
            let Kind::EngineConfig {
                engine: Some((graph, id)),
                knobs,
            } = &d.kind
            else {
                return Err(wrong_kind(name, "ENGINECFG", &d.kind));
            };
            *config = Some((graph.clone(), *id, knobs.clone()));
        }
        (Kind::VariantPack { uids, .. }, HIPDNN_ATTR_VARIANT_PACK_UNIQUE_IDS) => {
            expect_type(name, ty, HIPDNN_TYPE_INT64)?;
            // SAFETY: `count` int64s per the contract.
            *uids = unsafe { elements::<i64>(array, count, name) }?.to_vec();
        }
        (Kind::VariantPack { pointers, .. }, HIPDNN_ATTR_VARIANT_PACK_DATA_POINTERS) => {
            expect_type(name, ty, HIPDNN_TYPE_VOID_PTR)?;
            // SAFETY: `count` pointers per the contract.
            *pointers = unsafe { elements::<*mut c_void>(array, count, name) }?.to_vec();
        }
        (Kind::VariantPack { workspace, .. }, HIPDNN_ATTR_VARIANT_PACK_WORKSPACE) => {
            expect_type(name, ty, HIPDNN_TYPE_VOID_PTR)?;
            // SAFETY: one pointer per the contract.
            *workspace = unsafe { one::<*mut c_void>(array, count, name) }?;
        }
        (kind, name) => return Err(unsupported_attribute(kind, name)),
    }
    Ok(())
}

fn text(bytes: &[u8], name: i32) -> BackendResult<String> {
    let bytes = bytes.split(|&b| b == 0).next().unwrap_or_default();
    String::from_utf8(bytes.to_vec())
        .map_err(|e| BackendError::bad_param(format!("attribute {name}: not UTF-8: {e}")))
}

/// Finalizes a descriptor: checks that it is complete and consistent, and does the
/// work its kind stands for (ranking engines, building the plan).
///
/// # Safety
/// `descriptor` is a live descriptor; the handles it refers to are live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipdnnBackendFinalize(
    descriptor: hipdnnBackendDescriptor_t,
) -> hipdnnStatus_t {
    boundary("hipdnnBackendFinalize", || {
        // SAFETY: per the contract.
        let d = unsafe { desc_mut(descriptor) }?;
        if d.finalized {
            return Err(BackendError::new(
                HIPDNN_STATUS_NOT_INITIALIZED,
                format!("the {} descriptor is already finalized", d.kind.type_name()),
            ));
        }
        // SAFETY: per the contract.
        unsafe { finalize(&mut d.kind) }?;
        d.finalized = true;
        Ok(())
    })
}

/// # Safety
/// Handles referred to by the descriptor are live.
unsafe fn finalize(kind: &mut Kind) -> BackendResult<()> {
    match kind {
        Kind::Graph { handle, .. } => {
            if handle.is_null() {
                return Err(BackendError::bad_param(
                    "the OPERATIONGRAPH descriptor has no handle (HIPDNN_ATTR_OPERATIONGRAPH_HANDLE)",
                ));
            }
        }
        Kind::Heuristic { graph, results, .. } => {
            let g = graph.as_ref().ok_or_else(|| {
                BackendError::bad_param(
                    "the ENGINEHEUR descriptor has no operation graph (HIPDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH)",
                )
            })?;
            // SAFETY: the graph's handle is live per the contract.
            let handle = unsafe { handle_ref(g.handle) }?;
            *results = handle
                .ranked_engines(&g.graph)?
                .into_iter()
                .map(|e| e.id)
                .collect();
        }
        Kind::Engine {
            graph,
            id,
            name,
            notes,
        } => {
            let (Some(g), Some(engine)) = (graph.as_ref(), *id) else {
                return Err(BackendError::bad_param(
                    "the ENGINE descriptor needs an operation graph and a global index (the engine id)",
                ));
            };
            // SAFETY: the graph's handle is live per the contract.
            let handle = unsafe { handle_ref(g.handle) }?;
            // An engine named explicitly is usable even where the ranking's engine order
            // (HIPDNN_HEUR_FALLBACK_ENGINE_ORDER) leaves it out.
            let applicable = handle.applicable_engines(&g.graph);
            let Some(found) = applicable.into_iter().find(|e| e.id == engine) else {
                return Err(BackendError::not_supported(format!(
                    "engine {} cannot run graph '{}' on this handle",
                    hipdnn_data_sdk::engine_id_to_hex(engine),
                    g.graph.graph().name
                )));
            };
            *name = found.name;
            *notes = handle.engine_details(engine, &g.graph)?.behavior_notes;
        }
        Kind::EngineConfig { engine, knobs } => {
            let (g, id) = engine.as_ref().ok_or_else(|| {
                BackendError::bad_param(
                    "the ENGINECFG descriptor has no engine (HIPDNN_ATTR_ENGINECFG_ENGINE)",
                )
            })?;
            // SAFETY: the graph's handle is live per the contract.
            let handle = unsafe { handle_ref(g.handle) }?;
            let details = handle.engine_details(*id, &g.graph)?;
            crate::knobs::check_settings(&details.knobs, knobs).map_err(|e| {
                BackendError::bad_param(format!(
                    "engine {}: {e}",
                    hipdnn_data_sdk::engine_id_to_hex(*id)
                ))
            })?;
        }
        Kind::KnobChoice { id, value } => {
            if id.is_none() || value.is_none() {
                return Err(BackendError::bad_param(
                    "the KNOB_CHOICE descriptor needs a knob id (KNOB_TYPE) and a value (KNOB_VALUE)",
                ));
            }
        }
        Kind::Plan {
            handle,
            config,
            plan,
        } => {
            let (g, id, knobs) = config.as_ref().ok_or_else(|| {
                BackendError::bad_param("the EXECUTION_PLAN descriptor has no engine config")
            })?;
            if handle.is_null() {
                *handle = g.handle;
            } else if *handle != g.handle {
                return Err(BackendError::bad_param(
                    "the EXECUTION_PLAN descriptor's handle is not its graph's handle",
                ));
            }
            // SAFETY: live per the contract, which also keeps it alive as long as the
            // plan descriptor: that is what the `'static` borrow stands for.
            let h: &'static Handle = unsafe { handle_ref(*handle) }?;
            *plan = Some(h.create_plan(&g.graph, *id, knobs)?);
        }
        Kind::VariantPack { uids, pointers, .. } => {
            if uids.len() != pointers.len() {
                return Err(BackendError::bad_param(format!(
                    "the VARIANT_PACK descriptor has {} uids but {} data pointers",
                    uids.len(),
                    pointers.len()
                )));
            }
        }
    }
    Ok(())
}

/// Reads an attribute of a finalized descriptor (`NOT_INITIALIZED` before): writes
/// `min(requested, available)` elements to `array` and the available count to
/// `*count`. A null `array` (or `requested` 0) asks for the count only. For
/// `HIPDNN_ATTR_ENGINEHEUR_RESULTS`, `array` holds caller-created ENGINECFG
/// descriptors, which are filled and finalized.
///
/// # Safety
/// `descriptor` is a live descriptor; `count` is null or writable; `array` is null or
/// valid for `requested` elements of the type `attribute_type` names.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipdnnBackendGetAttribute(
    descriptor: hipdnnBackendDescriptor_t,
    name: hipdnnBackendAttributeName_t,
    attribute_type: hipdnnBackendAttributeType_t,
    requested: i64,
    count: *mut i64,
    array: *mut c_void,
) -> hipdnnStatus_t {
    boundary("hipdnnBackendGetAttribute", || {
        // SAFETY: per the contract.
        let d = unsafe { desc_mut(descriptor) }?;
        if !d.finalized {
            return Err(BackendError::new(
                HIPDNN_STATUS_NOT_INITIALIZED,
                format!("the {} descriptor is not finalized", d.kind.type_name()),
            ));
        }
        let requested = usize::try_from(requested).unwrap_or(0);
        // SAFETY: per the contract.
        unsafe { get_attribute(&d.kind, name, attribute_type, requested, count, array) }
    })
}

/// Writes `values` with the get-attribute convention.
///
/// # Safety
/// `count` is null or writable; `array` is null or valid for `requested` `T`s.
unsafe fn put<T: Copy>(
    values: &[T],
    requested: usize,
    count: *mut i64,
    array: *mut c_void,
) -> BackendResult<()> {
    // SAFETY: per the contract.
    unsafe { write(count, "element count", values.len() as i64) }?;
    if !array.is_null() {
        let n = requested.min(values.len());
        // SAFETY: room for `requested >= n` elements per the contract.
        unsafe { std::ptr::copy_nonoverlapping(values.as_ptr(), array.cast::<T>(), n) };
    }
    Ok(())
}

/// # Safety
/// As [`hipdnnBackendGetAttribute`].
unsafe fn get_attribute(
    kind: &Kind,
    name: i32,
    ty: i32,
    requested: usize,
    count: *mut i64,
    array: *mut c_void,
) -> BackendResult<()> {
    match (kind, name) {
        (Kind::Graph { handle, .. }, HIPDNN_ATTR_OPERATIONGRAPH_HANDLE) => {
            expect_type(name, ty, HIPDNN_TYPE_HANDLE)?;
            // SAFETY: per the contract.
            unsafe {
                put(
                    &[handle.cast::<super::hipdnnHandle>()],
                    requested,
                    count,
                    array,
                )
            }
        }
        (Kind::Graph { handle, graph }, HIPDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT) => {
            expect_type(name, ty, HIPDNN_TYPE_INT64)?;
            // SAFETY: the graph's handle is live per the contract.
            let h = unsafe { handle_ref(*handle) }?;
            let n = h.ranked_engines(graph).map_or(0, |e| e.len()) as i64;
            // SAFETY: per the contract.
            unsafe { put(&[n], requested, count, array) }
        }
        (
            Kind::Heuristic {
                graph: Some(graph),
                results,
                ..
            },
            HIPDNN_ATTR_ENGINEHEUR_RESULTS,
        ) => {
            expect_type(name, ty, HIPDNN_TYPE_BACKEND_DESCRIPTOR)?;
            // SAFETY: per the contract.
            unsafe { write(count, "element count", results.len() as i64) }?;
            if array.is_null() {
                return Ok(());
            }
            // SAFETY: `requested` descriptor pointers per the contract.
            let targets = unsafe {
                std::slice::from_raw_parts(array.cast::<hipdnnBackendDescriptor_t>(), requested)
            };
            for (&target, &id) in targets.iter().zip(results) {
                // SAFETY: live descriptors per the contract.
                let t = unsafe { desc_mut(target) }?;
                if !matches!(t.kind, Kind::EngineConfig { .. }) {
                    return Err(wrong_kind(name, "ENGINECFG", &t.kind));
                }
                t.kind = Kind::EngineConfig {
                    engine: Some((graph.clone(), id)),
                    knobs: Vec::new(),
                };
                t.finalized = true;
            }
            Ok(())
        }
        (Kind::Engine { id: Some(id), .. }, HIPDNN_ATTR_ENGINE_GLOBAL_INDEX) => {
            expect_type(name, ty, HIPDNN_TYPE_INT64)?;
            // SAFETY: per the contract.
            unsafe { put(&[*id], requested, count, array) }
        }
        (
            Kind::Engine {
                name: engine_name, ..
            },
            HIPDNN_ATTR_ENGINE_NAME_EXT,
        ) => {
            expect_type(name, ty, HIPDNN_TYPE_CHAR)?;
            let mut bytes = engine_name.clone().into_bytes();
            bytes.push(0);
            if !array.is_null() && requested < bytes.len() {
                return Err(BackendError::new(
                    HIPDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT,
                    format!(
                        "the engine name needs {} bytes, the buffer has {requested}",
                        bytes.len()
                    ),
                ));
            }
            // SAFETY: per the contract.
            unsafe { put(&bytes, requested, count, array) }
        }
        (Kind::Engine { notes, .. }, HIPDNN_ATTR_ENGINE_BEHAVIOR_NOTE) => {
            expect_type(name, ty, HIPDNN_TYPE_BEHAVIOR_NOTE)?;
            // SAFETY: per the contract.
            unsafe { put(notes, requested, count, array) }
        }
        (
            Kind::Plan {
                plan: Some(plan), ..
            },
            HIPDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
        ) => {
            expect_type(name, ty, HIPDNN_TYPE_INT64)?;
            let size = i64::try_from(plan.workspace_size()).unwrap_or(i64::MAX);
            // SAFETY: per the contract.
            unsafe { put(&[size], requested, count, array) }
        }
        (
            Kind::Plan {
                plan: Some(plan), ..
            },
            HIPDNN_ATTR_EXECUTION_PLAN_TENSOR_UIDS_EXT,
        ) => {
            expect_type(name, ty, HIPDNN_TYPE_INT64)?;
            let uids: Vec<i64> = plan.required_uids().collect();
            // SAFETY: per the contract.
            unsafe { put(&uids, requested, count, array) }
        }
        (kind, name) => Err(unsupported_attribute(kind, name)),
    }
}

/// Runs a finalized execution plan with a finalized variant pack on `handle` (the
/// plan's handle). The pack is checked against the graph first (a pointer for every
/// non-virtual tensor, aligned; a workspace when one is needed): on any mismatch
/// nothing runs.
///
/// # Safety
/// `handle` is the live handle the plan was built on; the descriptors are live; the
/// pack's pointers are valid for the tensors their uids name and the workspace for the
/// plan's workspace size.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipdnnBackendExecute(
    handle: hipdnnHandle_t,
    execution_plan: hipdnnBackendDescriptor_t,
    variant_pack: hipdnnBackendDescriptor_t,
) -> hipdnnStatus_t {
    boundary("hipdnnBackendExecute", || {
        if handle.is_null() {
            return Err(null("handle"));
        }
        // SAFETY: per the contract.
        let plan_desc =
            unsafe { referenced(execution_plan, HIPDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG) }?;
        let Kind::Plan {
            handle: plan_handle,
            plan: Some(plan),
            ..
        } = &plan_desc.kind
        else {
            return Err(BackendError::bad_param(format!(
                "expected an EXECUTION_PLAN descriptor, not {}",
                plan_desc.kind.type_name()
            )));
        };
        if plan_handle.cast::<super::hipdnnHandle>() != handle {
            return Err(BackendError::bad_param(
                "the plan was built on another handle",
            ));
        }
        // SAFETY: per the contract.
        let pack_desc = unsafe { referenced(variant_pack, HIPDNN_ATTR_VARIANT_PACK_UNIQUE_IDS) }?;
        let Kind::VariantPack {
            uids,
            pointers,
            workspace,
        } = &pack_desc.kind
        else {
            return Err(BackendError::bad_param(format!(
                "expected a VARIANT_PACK descriptor, not {}",
                pack_desc.kind.type_name()
            )));
        };
        let mut pack = VariantPack::new();
        for (&uid, &pointer) in uids.iter().zip(pointers) {
            if pack.buffers().contains_key(&uid) {
                return Err(BackendError::bad_param(format!(
                    "variant pack: uid {uid} appears twice"
                )));
            }
            pack.set(uid, pointer);
        }
        // SAFETY: the pointers are valid per the contract; `execute` checks them
        // against the graph before the plugin runs.
        unsafe { plan.execute(&pack, *workspace) }
    })
}
