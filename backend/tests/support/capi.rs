//! The C API as the descriptor tests call it (and `lifecycle.rs` and `handles.rs` in
//! part): one test at a time with the plugin paths it sets, a status checked with the
//! thread's last error in the failure message, descriptors created, set, finalized, read
//! back and destroyed, OPERATIONGRAPHs made from operations, bytes or JSON and
//! serialized, and the model of a one-node graph to compare with.

use std::ffi::c_void;
use std::path::Path;
use std::ptr;
use std::sync::{Mutex, MutexGuard};

use hipdnn_backend::capi::*;
use hipdnn_backend::status::*;
use hipdnn_backend::{LoadingMode, set_engine_plugin_paths};
use hipdnn_data_sdk::DataType;
use hipdnn_flatbuffers_sdk::model::{Graph, Node, NodeAttributes, TensorAttributes};

/// One test at a time: the plugin paths are process-wide (and cannot change while a
/// handle lives), and checks such as a double destroy rely on no other thread making a
/// descriptor meanwhile. A failed test poisons the lock; the next one still runs.
pub fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// Only the plugins in `dir` from now on.
pub fn use_only(dir: &Path) {
    set_engine_plugin_paths([dir], LoadingMode::Absolute).expect("no handle is alive");
}

/// The C API's last error on this thread (cleared by reading).
pub fn c_last_error() -> String {
    let mut buffer = [0 as std::ffi::c_char; 512];
    // SAFETY: a writable buffer of its length; the backend NUL-terminates it.
    unsafe {
        hipdnnGetLastErrorString(buffer.as_mut_ptr(), buffer.len());
        std::ffi::CStr::from_ptr(buffer.as_ptr())
    }
    .to_string_lossy()
    .into_owned()
}

/// `status` is SUCCESS; else the test fails with the last error.
#[track_caller]
pub fn ok(status: hipdnnStatus_t) {
    assert_eq!(status, HIPDNN_STATUS_SUCCESS, "{}", c_last_error());
}

/// `status` is `want`; returns the last error it left.
#[track_caller]
pub fn fails(status: hipdnnStatus_t, want: hipdnnStatus_t) -> String {
    assert_eq!(status, want, "{}", c_last_error());
    c_last_error()
}

/// A new handle.
pub fn handle() -> hipdnnHandle_t {
    let mut h = ptr::null_mut();
    // SAFETY: a writable out-parameter.
    ok(unsafe { hipdnnCreate(&mut h) });
    h
}

/// A new descriptor of `kind`.
pub fn create(kind: hipdnnBackendDescriptorType_t) -> hipdnnBackendDescriptor_t {
    let mut d = ptr::null_mut();
    // SAFETY: a writable out-parameter.
    ok(unsafe { hipdnnBackendCreateDescriptor(kind, &mut d) });
    d
}

/// Sets `name` to `values` of attribute type `ty`.
pub fn set<T>(
    d: hipdnnBackendDescriptor_t,
    name: hipdnnBackendAttributeName_t,
    ty: hipdnnBackendAttributeType_t,
    values: &[T],
) -> hipdnnStatus_t {
    // SAFETY: `values` holds `len` elements of the type `ty` names (the callers pair them).
    unsafe {
        hipdnnBackendSetAttribute(
            d,
            name,
            ty,
            values.len() as i64,
            values.as_ptr().cast::<c_void>(),
        )
    }
}

/// Finalizes `d` (any pointer: the backend checks it); returns the status.
pub fn finalize(d: hipdnnBackendDescriptor_t) -> hipdnnStatus_t {
    // SAFETY: any pointer; the backend checks it.
    unsafe { hipdnnBackendFinalize(d) }
}

/// Destroys `d`, a live descriptor not used again; the test fails if that fails.
#[track_caller]
pub fn destroy(d: hipdnnBackendDescriptor_t) {
    // SAFETY: a live descriptor, not used again.
    ok(unsafe { hipdnnBackendDestroyDescriptor(d) });
}

/// Reads `name` with room for `requested` elements of `out` (at least that many), the
/// count written to a variable; returns the count.
pub fn get_n<T>(
    d: hipdnnBackendDescriptor_t,
    name: hipdnnBackendAttributeName_t,
    ty: hipdnnBackendAttributeType_t,
    requested: i64,
    out: &mut [T],
) -> Result<i64, hipdnnStatus_t> {
    assert!(requested <= out.len() as i64);
    let mut count = -1;
    // SAFETY: `out` has room for `requested` elements of the type `ty` names.
    let status = unsafe {
        hipdnnBackendGetAttribute(d, name, ty, requested, &mut count, out.as_mut_ptr().cast())
    };
    if status == HIPDNN_STATUS_SUCCESS {
        Ok(count)
    } else {
        Err(status)
    }
}

/// Reads `name` into all of `out`; returns the count.
pub fn get<T>(
    d: hipdnnBackendDescriptor_t,
    name: hipdnnBackendAttributeName_t,
    ty: hipdnnBackendAttributeType_t,
    out: &mut [T],
) -> Result<i64, hipdnnStatus_t> {
    let requested = out.len() as i64;
    get_n(d, name, ty, requested, out)
}

/// The count alone: what an attribute reports when asked with a null array, as hipDNN's
/// frontend asks.
pub fn count(
    d: hipdnnBackendDescriptor_t,
    name: hipdnnBackendAttributeName_t,
    ty: hipdnnBackendAttributeType_t,
) -> Result<i64, hipdnnStatus_t> {
    let mut count = -1;
    // SAFETY: a writable count; no array.
    let status = unsafe { hipdnnBackendGetAttribute(d, name, ty, 0, &mut count, ptr::null_mut()) };
    if status == HIPDNN_STATUS_SUCCESS {
        Ok(count)
    } else {
        Err(status)
    }
}

/// The kind an operation descriptor reports (one value; else the test fails with the
/// last error).
pub fn operation_type(op: hipdnnBackendDescriptor_t) -> i32 {
    let mut kind = [-1i32];
    assert_eq!(
        get(
            op,
            HIPDNN_ATTR_OPERATION_TYPE_EXT,
            HIPDNN_TYPE_OPERATION_TYPE_EXT,
            &mut kind
        ),
        Ok(1),
        "{}",
        c_last_error()
    );
    kind[0]
}

/// The packed (row-major) strides of `dims`.
pub fn packed(dims: &[i64]) -> Vec<i64> {
    let mut strides = vec![1; dims.len()];
    for i in (0..dims.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * dims[i + 1];
    }
    strides
}

/// An (unfinalized) OPERATIONGRAPH of `ops`, FLOAT throughout.
pub fn graph_of(ops: &[hipdnnBackendDescriptor_t]) -> hipdnnBackendDescriptor_t {
    let graph = create(HIPDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    ok(set(
        graph,
        HIPDNN_ATTR_OPERATIONGRAPH_OPS,
        HIPDNN_TYPE_BACKEND_DESCRIPTOR,
        ops,
    ));
    for attribute in [
        HIPDNN_ATTR_OPERATIONGRAPH_IO_DATA_TYPE_EXT,
        HIPDNN_ATTR_OPERATIONGRAPH_COMPUTE_DATA_TYPE_EXT,
        HIPDNN_ATTR_OPERATIONGRAPH_INTERMEDIATE_DATA_TYPE_EXT,
    ] {
        ok(set(
            graph,
            attribute,
            HIPDNN_TYPE_DATA_TYPE,
            &[HIPDNN_DATA_FLOAT],
        ));
    }
    graph
}

/// An (unfinalized) OPERATIONGRAPH of `ops`, FLOAT throughout, named `name`.
pub fn graph_of_operations(
    ops: &[hipdnnBackendDescriptor_t],
    name: &str,
) -> hipdnnBackendDescriptor_t {
    let graph = graph_of(ops);
    ok(set(
        graph,
        HIPDNN_ATTR_OPERATIONGRAPH_NAME_EXT,
        HIPDNN_TYPE_CHAR,
        name.as_bytes(),
    ));
    graph
}

/// An (unfinalized) OPERATIONGRAPH made from serialized bytes.
#[track_caller]
pub fn deserialized(bytes: &[u8]) -> hipdnnBackendDescriptor_t {
    let mut graph = ptr::null_mut();
    // SAFETY: a writable out-parameter; the bytes are a buffer of their length.
    ok(unsafe {
        hipdnnBackendCreateAndDeserializeGraph_ext(&mut graph, bytes.as_ptr(), bytes.len())
    });
    graph
}

/// An (unfinalized) OPERATIONGRAPH made from JSON text.
#[track_caller]
pub fn deserialized_json(json: &str) -> hipdnnBackendDescriptor_t {
    let mut graph = ptr::null_mut();
    // SAFETY: a writable out-parameter; `json` holds `len` bytes.
    ok(unsafe {
        hipdnnBackendCreateAndDeserializeJsonGraph_ext(&mut graph, json.as_ptr().cast(), json.len())
    });
    graph
}

/// The graph's binary serialization (a size query, then the bytes).
pub fn serialized(graph: hipdnnBackendDescriptor_t) -> Vec<u8> {
    let mut size = 0;
    // SAFETY: size query: writable size, null buffer.
    ok(unsafe { hipdnnBackendGetSerializedBinaryGraph_ext(graph, 0, &mut size, ptr::null_mut()) });
    let mut bytes = vec![0u8; size];
    // SAFETY: a buffer of `size` bytes.
    ok(unsafe {
        hipdnnBackendGetSerializedBinaryGraph_ext(graph, size, &mut size, bytes.as_mut_ptr())
    });
    bytes
}

/// The model of a one-node graph as hipDNN's frontend would serialize it: FLOAT
/// throughout, the node's tensors in hipDNN's order.
pub fn one_node_model(
    name: &str,
    node: &str,
    tensors: Vec<TensorAttributes>,
    attributes: NodeAttributes,
) -> Graph {
    Graph {
        name: name.to_owned(),
        io_data_type: DataType::Float,
        compute_data_type: DataType::Float,
        intermediate_data_type: DataType::Float,
        tensors,
        nodes: vec![Node {
            name: node.to_owned(),
            compute_data_type: DataType::Float,
            attributes,
        }],
        ..Graph::default()
    }
}
