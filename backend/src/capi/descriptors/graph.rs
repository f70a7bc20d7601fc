//! OPERATIONGRAPH: a validated graph and the handle it runs on; made from FlatBuffer or
//! JSON bytes, and serialized back.

use std::ffi::c_char;
use std::sync::Arc;

use hipdnn_flatbuffers_sdk::model::Graph;

use super::attributes::{GetTarget, SetValue};
use super::in_attribute;
use super::{
    Descriptor, Kind, desc_mut, hipdnnBackendDescriptor_t, into_raw, unsupported_attribute,
    wrong_kind,
};
use super::{
    HIPDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT, HIPDNN_ATTR_OPERATIONGRAPH_HANDLE,
    HIPDNN_TYPE_HANDLE, HIPDNN_TYPE_INT64,
};
use crate::capi::{SharedHandle, boundary, handle_arc, hipdnnHandle_t, null, write};
use crate::execution::OperationGraph;
use crate::status::*;

/// An operation graph descriptor.
#[derive(Debug)]
pub(super) struct GraphDescriptor {
    /// Set by `HIPDNN_ATTR_OPERATIONGRAPH_HANDLE`; required to finalize.
    handle: Option<Arc<SharedHandle>>,
    graph: Arc<OperationGraph>,
}

/// A finalized graph as other descriptors refer to it: the graph and (a reference to)
/// the handle it runs on.
#[derive(Debug, Clone)]
pub(super) struct GraphRef {
    pub(super) handle: Arc<SharedHandle>,
    pub(super) graph: Arc<OperationGraph>,
}

impl GraphRef {
    /// The finalized OPERATIONGRAPH descriptor `d`, referenced by attribute `name`.
    pub(super) fn of(d: &Descriptor, name: i32) -> BackendResult<Self> {
        match &d.kind {
            Kind::Graph(GraphDescriptor {
                handle: Some(handle),
                graph,
            }) => Ok(GraphRef {
                handle: Arc::clone(handle),
                graph: Arc::clone(graph),
            }),
            other => Err(wrong_kind(name, "OPERATIONGRAPH", other)),
        }
    }
}

impl GraphDescriptor {
    pub(super) const TYPE_NAME: &str = "OPERATIONGRAPH";

    pub(super) fn set(&mut self, value: SetValue) -> BackendResult<()> {
        match value.name {
            HIPDNN_ATTR_OPERATIONGRAPH_HANDLE => {
                value.expect_type(HIPDNN_TYPE_HANDLE)?;
                // SAFETY: the type is checked: one handle.
                let h = unsafe { value.one::<hipdnnHandle_t>() }?;
                // SAFETY: the registry checks the pointer (a descriptor or a destroyed
                // handle is refused); a live handle is not destroyed during the call.
                let handle = unsafe { handle_arc(h) }.map_err(|e| in_attribute(value.name, e))?;
                self.handle = Some(handle);
                Ok(())
            }
            other => Err(unsupported_attribute(Self::TYPE_NAME, other)),
        }
    }

    pub(super) fn finalize(&mut self) -> BackendResult<()> {
        if self.handle.is_none() {
            return Err(BackendError::bad_param(
                "the OPERATIONGRAPH descriptor has no handle (HIPDNN_ATTR_OPERATIONGRAPH_HANDLE)",
            ));
        }
        Ok(())
    }

    pub(super) fn get(&self, target: GetTarget) -> BackendResult<()> {
        let handle = match (&self.handle, target.name) {
            (Some(handle), _) => handle,
            (None, other) => return Err(unsupported_attribute(Self::TYPE_NAME, other)),
        };
        match target.name {
            HIPDNN_ATTR_OPERATIONGRAPH_HANDLE => {
                target.expect_type(HIPDNN_TYPE_HANDLE)?;
                // SAFETY: the type is checked: handles.
                unsafe { target.put(&[SharedHandle::as_raw(handle)]) }
            }
            HIPDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT => {
                target.expect_type(HIPDNN_TYPE_INT64)?;
                let n = handle
                    .handle()
                    .ranked_engines(&self.graph)
                    .map_or(0, |e| e.len()) as i64;
                // SAFETY: the type is checked: int64s.
                unsafe { target.put(&[n]) }
            }
            other => Err(unsupported_attribute(Self::TYPE_NAME, other)),
        }
    }
}

/// No buffer is larger than `isize::MAX` bytes: a larger size is a caller's mistake.
fn check_size(size: usize, what: &str) -> BackendResult<()> {
    if isize::try_from(size).is_err() {
        return Err(BackendError::bad_param(format!(
            "{what}: size {size} is larger than any buffer can be"
        )));
    }
    Ok(())
}

fn make_graph_descriptor(
    descriptor: *mut hipdnnBackendDescriptor_t,
    graph: BackendResult<OperationGraph>,
) -> BackendResult<()> {
    if descriptor.is_null() {
        return Err(null("descriptor"));
    }
    let graph = graph?;
    let kind = Kind::Graph(GraphDescriptor {
        handle: None,
        graph: Arc::new(graph),
    });
    // SAFETY: checked non-null; writable per the caller's contract.
    unsafe { descriptor.write(into_raw(kind, false)) };
    Ok(())
}

/// Makes an (unfinalized) operation graph descriptor from a serialized `Graph`
/// FlatBuffer, or from a graph-and-plan container (`"HDGP"`, whose graph is used): the
/// bytes are verified and the graph validated here, once; they are copied. Set its
/// handle (`HIPDNN_ATTR_OPERATIONGRAPH_HANDLE`, which the descriptor then keeps alive)
/// and finalize it.
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
        check_size(size, "serialized graph")?;
        // SAFETY: non-null, valid for `size` bytes per the contract (at most
        // `isize::MAX`, checked).
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
        check_size(size, "JSON graph")?;
        // SAFETY: non-null, valid for `size` bytes per the contract (at most
        // `isize::MAX`, checked).
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
        Kind::Graph(g) => Ok(&g.graph),
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
