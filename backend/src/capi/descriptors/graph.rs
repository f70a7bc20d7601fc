//! OPERATIONGRAPH: a validated graph and the handle it runs on; made from FlatBuffer or
//! JSON bytes, or built from operation descriptors (`HIPDNN_ATTR_OPERATIONGRAPH_OPS`),
//! and serialized back.
//!
//! A built graph lists its tensors as hipDNN does: each operation's tensors in order,
//! first use first, once each; a uid used by two different TENSOR descriptors is
//! `BAD_PARAM` (a TENSOR descriptor read back from an operation counts as the one it was
//! read from). Its nodes are the operations in the order they were set (`OPS` may be
//! set more than once: each call appends). Finalizing validates it as a graph made from
//! bytes is validated, so the same operations give the same wire bytes either way.
//!
//! A graph reads back before it is finalized too, as hipDNN's does (its frontend unpacks
//! a graph made from bytes without ever giving it a handle): everything but the handle
//! and the engine count, which need finalizing (`NOT_INITIALIZED`). `OPS` reads back as
//! in hipDNN: one new, finalized operation descriptor per operation, in order, which the
//! caller owns (and frees with `hipdnnBackendDestroyDescriptor`); the array must have
//! room for all of them (`BAD_PARAM` otherwise, and nothing is made). For a graph built
//! from operation descriptors each is the operation that was set; for a graph made from
//! bytes, the operation its node stands for (made at the first read, as hipDNN makes them
//! when it deserializes, and kept, so every read shares the graph's tensors), whose
//! attributes read back as if set and whose graph has the node's bytes. A node of a kind
//! no operation descriptor stands for here (resample backward) is `NOT_SUPPORTED`.

use std::collections::HashMap;
use std::ffi::c_char;
use std::sync::{Arc, OnceLock};

use hipdnn_data_sdk::DataType;
use hipdnn_flatbuffers_sdk::model::{EngineApiVersion, Graph, TensorAttributes};

use super::attributes::{GetTarget, SetValue};
use super::in_attribute;
use super::operation::OperationDescriptor;
use super::tensor::FrozenTensor;
use super::tensor::{
    get_data_type, get_text, put_bool, put_i64s, set_bool, set_data_type, set_i64, set_text,
};
use super::{
    Descriptor, Kind, desc_mut, hipdnnBackendDescriptor_t, into_raw, unsupported_attribute,
    wrong_kind,
};
use crate::capi::enums::tables::*;
use crate::capi::{SharedHandle, boundary, handle_arc, hipdnnHandle_t, null, write};
use crate::execution::OperationGraph;
use crate::status::*;

/// An operation graph descriptor.
#[derive(Debug)]
pub(super) struct GraphDescriptor {
    /// Set by `HIPDNN_ATTR_OPERATIONGRAPH_HANDLE`; required to finalize.
    handle: Option<Arc<SharedHandle>>,
    /// The graph: given as bytes at creation, or built from `operations` at finalize.
    graph: Option<Arc<OperationGraph>>,
    /// What a graph made with `hipdnnBackendCreateDescriptor` is built from.
    operations: Option<Operations>,
    /// A graph made from bytes: the operation descriptors its nodes stand for, once
    /// `HIPDNN_ATTR_OPERATIONGRAPH_OPS` is read.
    node_operations: OnceLock<Vec<OperationDescriptor>>,
}

/// The operations and graph-level attributes of a graph built from descriptors.
#[derive(Debug, Default)]
struct Operations {
    /// The operations as set (finalized), each holding its frozen node.
    ops: Vec<OperationDescriptor>,
    compute: DataType,
    intermediate: DataType,
    io: DataType,
    preferred_engine: Option<i64>,
    name: String,
    override_shape: bool,
}

impl Operations {
    /// The graph of these operations (validated and serialized as any graph is).
    fn build(&self) -> BackendResult<OperationGraph> {
        let frozen: Vec<_> = self
            .ops
            .iter()
            .map(|op| {
                op.frozen()
                    .expect("a finalized operation descriptor is frozen")
            })
            .collect();
        let mut tensors: Vec<&Arc<FrozenTensor>> = Vec::new();
        for op in &frozen {
            for t in &op.tensors {
                match tensors.iter().find(|seen| seen.uid == t.uid) {
                    Some(seen) if !Arc::ptr_eq(seen, t) => {
                        return Err(BackendError::bad_param(format!(
                            "OPERATIONGRAPH: tensor uid {} is used with two different TENSOR \
                             descriptors",
                            t.uid
                        )));
                    }
                    Some(_) => {}
                    None => tensors.push(t),
                }
            }
        }
        let tensors: Vec<TensorAttributes> =
            tensors.into_iter().map(|t| t.attributes.clone()).collect();
        // The engine API a graph needs, stamped as the graph builder stamps it.
        let min_required_engine_api_version = if tensors.iter().any(|t| t.alignment != 16) {
            Some(EngineApiVersion::new(1, 3, 0))
        } else if tensors.iter().any(|t| t.is_runtime_pass_by_value) {
            Some(EngineApiVersion::new(1, 2, 0))
        } else {
            None
        };
        OperationGraph::new(Graph {
            name: self.name.clone(),
            compute_data_type: self.compute,
            intermediate_data_type: self.intermediate,
            io_data_type: self.io,
            tensors,
            nodes: frozen.iter().map(|op| op.node.clone()).collect(),
            preferred_engine_id: self.preferred_engine,
            is_override_shape_enabled: self.override_shape,
            min_required_engine_api_version,
            id: None,
        })
    }

    fn set(&mut self, value: &SetValue) -> BackendResult<bool> {
        match value.name {
            HIPDNN_ATTR_OPERATIONGRAPH_OPS => {
                let mut ops = Vec::new();
                for d in value.descriptors()? {
                    match &d?.kind {
                        Kind::Operation(op) => ops.push(op.clone()),
                        other => return Err(wrong_kind(value.name, "operation", other)),
                    }
                }
                self.ops.extend(ops);
            }
            HIPDNN_ATTR_OPERATIONGRAPH_COMPUTE_DATA_TYPE_EXT => {
                self.compute = set_data_type(value)?
            }
            HIPDNN_ATTR_OPERATIONGRAPH_INTERMEDIATE_DATA_TYPE_EXT => {
                self.intermediate = set_data_type(value)?;
            }
            HIPDNN_ATTR_OPERATIONGRAPH_IO_DATA_TYPE_EXT => self.io = set_data_type(value)?,
            HIPDNN_ATTR_OPERATIONGRAPH_PREFERRED_ENGINE_ID_EXT => {
                self.preferred_engine = Some(set_i64(value)?);
            }
            HIPDNN_ATTR_OPERATIONGRAPH_NAME_EXT => self.name = set_text(value)?,
            HIPDNN_ATTR_OPERATIONGRAPH_IS_OVERRIDE_SHAPE_ENABLED_EXT => {
                self.override_shape = set_bool(value)?;
            }
            _ => return Ok(false),
        }
        Ok(true)
    }
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
                graph: Some(graph),
                ..
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

    /// An empty graph to build from operation descriptors.
    pub(super) fn from_operations() -> Self {
        Self {
            handle: None,
            graph: None,
            operations: Some(Operations::default()),
            node_operations: OnceLock::new(),
        }
    }

    /// The graph: the finalized one, else (a graph being built) the one its operations
    /// make now.
    fn current(&self) -> BackendResult<Arc<OperationGraph>> {
        match (&self.graph, &self.operations) {
            (Some(graph), _) => Ok(Arc::clone(graph)),
            (None, Some(ops)) => ops.build().map(Arc::new),
            (None, None) => Err(BackendError::new(
                HIPDNN_STATUS_INTERNAL_ERROR,
                "OPERATIONGRAPH without a graph",
            )),
        }
    }

    pub(super) fn set(&mut self, value: SetValue) -> BackendResult<()> {
        if value.name == HIPDNN_ATTR_OPERATIONGRAPH_HANDLE {
            value.expect_type(HIPDNN_TYPE_HANDLE)?;
            // SAFETY: the type is checked: one handle.
            let h = unsafe { value.one::<hipdnnHandle_t>() }?;
            // SAFETY: the registry checks the pointer (a descriptor or a destroyed
            // handle is refused); a live handle is not destroyed during the call.
            let handle = unsafe { handle_arc(h) }.map_err(|e| in_attribute(value.name, e))?;
            self.handle = Some(handle);
            return Ok(());
        }
        match &mut self.operations {
            Some(ops) => {
                if ops.set(&value)? {
                    Ok(())
                } else {
                    Err(unsupported_attribute(Self::TYPE_NAME, value.name))
                }
            }
            None => Err(BackendError::not_supported(format!(
                "attribute {}: an OPERATIONGRAPH made from serialized bytes takes only \
                 HIPDNN_ATTR_OPERATIONGRAPH_HANDLE",
                value.name
            ))),
        }
    }

    pub(super) fn finalize(&mut self) -> BackendResult<()> {
        if self.handle.is_none() {
            return Err(BackendError::bad_param(
                "the OPERATIONGRAPH descriptor has no handle (HIPDNN_ATTR_OPERATIONGRAPH_HANDLE)",
            ));
        }
        if let Some(ops) = &self.operations {
            if ops.ops.is_empty() {
                return Err(BackendError::bad_param(
                    "the OPERATIONGRAPH descriptor has no operations (HIPDNN_ATTR_OPERATIONGRAPH_OPS)",
                ));
            }
            self.graph = Some(Arc::new(ops.build()?));
        }
        if let Some(graph) = &self.graph {
            crate::graph_log::log_graph(graph);
        }
        Ok(())
    }

    /// The operation descriptors of a graph made from bytes, one per node, made at the
    /// first read and kept (so the descriptors of two reads share their tensors, as one
    /// graph's do).
    fn node_operations(&self, name: i32) -> BackendResult<&[OperationDescriptor]> {
        if let Some(ops) = self.node_operations.get() {
            return Ok(ops);
        }
        let Some(graph) = &self.graph else {
            return Err(BackendError::new(
                HIPDNN_STATUS_INTERNAL_ERROR,
                "OPERATIONGRAPH without a graph",
            ));
        };
        let g = graph.graph();
        let tensors: HashMap<i64, Arc<FrozenTensor>> = g
            .tensors
            .iter()
            .map(|t| (t.uid, FrozenTensor::from_graph(t.clone())))
            .collect();
        // A validated graph lists every uid its nodes use.
        let tensor = |uid: i64| {
            tensors.get(&uid).cloned().ok_or_else(|| {
                BackendError::new(
                    HIPDNN_STATUS_INTERNAL_ERROR,
                    format!("the graph does not list tensor {uid}"),
                )
            })
        };
        let ops = g
            .nodes
            .iter()
            .enumerate()
            .map(|(i, node)| {
                OperationDescriptor::from_node(node, &tensor).map_err(|e| {
                    BackendError::new(
                        e.status,
                        format!(
                            "attribute {name}: node {i} ('{}') cannot be read back as an \
                             operation descriptor: {}",
                            node.name, e.message
                        ),
                    )
                })
            })
            .collect::<BackendResult<Vec<_>>>()?;
        Ok(self.node_operations.get_or_init(|| ops))
    }

    /// Reads an attribute back. As in hipDNN, a graph is read before it is finalized
    /// too (`finalized` false), except for what needs the handle it is finalized with.
    pub(super) fn get(&self, target: GetTarget, finalized: bool) -> BackendResult<()> {
        match target.name {
            HIPDNN_ATTR_OPERATIONGRAPH_OPS => {
                let ops = match &self.operations {
                    Some(built) => built.ops.as_slice(),
                    None => self.node_operations(target.name)?,
                };
                return target
                    .put_new_descriptors(ops.len(), true, |i| Kind::Operation(ops[i].clone()));
            }
            HIPDNN_ATTR_OPERATIONGRAPH_HANDLE | HIPDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT => {
                let (Some(handle), Some(graph), true) = (&self.handle, &self.graph, finalized)
                else {
                    return Err(BackendError::new(
                        HIPDNN_STATUS_NOT_INITIALIZED,
                        format!(
                            "attribute {}: the OPERATIONGRAPH descriptor is not finalized",
                            target.name
                        ),
                    ));
                };
                if target.name == HIPDNN_ATTR_OPERATIONGRAPH_HANDLE {
                    target.expect_type(HIPDNN_TYPE_HANDLE)?;
                    // SAFETY: the type is checked: handles.
                    return unsafe { target.put(&[SharedHandle::as_raw(handle)]) };
                }
                let n = handle.handle().ranked_engines(graph).map_or(0, |e| e.len()) as i64;
                return put_i64s(&target, &[n]);
            }
            _ => {}
        }
        // The graph-level attributes: of the graph (made from bytes, or finalized), else
        // as set on the graph being built.
        let built = Operations::default();
        let (g, ops) = match (&self.graph, &self.operations) {
            (Some(graph), _) => (Some(graph.graph()), &built),
            (None, Some(ops)) => (None, ops),
            (None, None) => (None, &built),
        };
        match target.name {
            HIPDNN_ATTR_OPERATIONGRAPH_COMPUTE_DATA_TYPE_EXT => {
                get_data_type(&target, g.map_or(ops.compute, |g| g.compute_data_type))
            }
            HIPDNN_ATTR_OPERATIONGRAPH_INTERMEDIATE_DATA_TYPE_EXT => get_data_type(
                &target,
                g.map_or(ops.intermediate, |g| g.intermediate_data_type),
            ),
            HIPDNN_ATTR_OPERATIONGRAPH_IO_DATA_TYPE_EXT => {
                get_data_type(&target, g.map_or(ops.io, |g| g.io_data_type))
            }
            HIPDNN_ATTR_OPERATIONGRAPH_PREFERRED_ENGINE_ID_EXT => {
                let id = g.map_or(ops.preferred_engine, |g| g.preferred_engine_id);
                put_i64s(&target, &id.into_iter().collect::<Vec<_>>())
            }
            HIPDNN_ATTR_OPERATIONGRAPH_NAME_EXT => {
                get_text(&target, g.map_or(ops.name.as_str(), |g| g.name.as_str()))
            }
            HIPDNN_ATTR_OPERATIONGRAPH_IS_OVERRIDE_SHAPE_ENABLED_EXT => put_bool(
                &target,
                g.map_or(ops.override_shape, |g| g.is_override_shape_enabled),
            ),
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
        graph: Some(Arc::new(graph)),
        operations: None,
        node_operations: OnceLock::new(),
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

/// Makes an (unfinalized) operation graph descriptor from a graph in JSON, in either
/// dialect (`docs/graph-json.md`: hipDNN's, as hipDNN's frontend and graph dumps write
/// it, or this project's flatc-style form; told apart by content); `size` counts the
/// bytes without a terminating NUL (one is allowed).
/// A `size` above 256 MiB (the binary form's limit) is `BAD_PARAM`, before any byte is
/// read.
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
        // The binary form's bound, before a byte is read (as the verifier checks it
        // there): a size past the caller's buffer is then refused rather than read.
        let limit = hipdnn_flatbuffers_sdk::VerifyLimits::DEFAULT.max_bytes;
        if size > limit {
            return Err(BackendError::bad_param(format!(
                "JSON graph of {size} bytes exceeds the limit of {limit} bytes"
            )));
        }
        // SAFETY: non-null, valid for `size` bytes per the contract (at most
        // 256 MiB, checked).
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

/// The graph of an OPERATIONGRAPH descriptor; one being built from operations and not
/// finalized is built now (hipDNN serializes such a graph too).
fn graph_of(d: &Descriptor) -> BackendResult<Arc<OperationGraph>> {
    match &d.kind {
        Kind::Graph(g) => g.current(),
        other => Err(BackendError::bad_param(format!(
            "expected an OPERATIONGRAPH descriptor, not {}",
            other.type_name()
        ))),
    }
}

/// The graph's FlatBuffer serialization (validated, topologically sorted), two-call:
/// `out` null writes only `*size`. A graph built from operation descriptors
/// (`HIPDNN_ATTR_OPERATIONGRAPH_OPS`) need not be finalized: its operations are built
/// into a graph now, as finalizing would.
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
        let graph = graph_of(d)?;
        // SAFETY: per the contract.
        unsafe { copy_out(graph.bytes(), requested, size, out) }
    })
}

/// The graph as JSON in hipDNN's dialect (what hipDNN's backend returns and its
/// frontend reads back; `docs/graph-json.md`), NUL-terminated, two-call (the size
/// includes the NUL).
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
        let mut json = graph_of(d)?.graph().to_upstream_json().into_bytes();
        json.push(0);
        // SAFETY: per the contract.
        unsafe { copy_out(&json, requested, size, out.cast()) }
    })
}
