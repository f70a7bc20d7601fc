//! The bodies of every exported C function, generic over the plugin.
//!
//! [`export_engine_plugin!`](crate::export_engine_plugin) emits one thin `extern "C"`
//! function per symbol that calls the function of the same role here. Each body runs in
//! [`boundary`]: null pointers are `BAD_PARAM`, errors become statuses with the message
//! as the thread's last error, and a panic becomes `INTERNAL_ERROR`. Out-parameters are
//! written only on success. Input FlatBuffers are verified (and graphs validated) here,
//! before any plugin code sees them.
//!
//! # Pointer contracts
//!
//! Each function's `# Safety` section refers to these rules by name:
//! * *handle*: null, or a handle returned by this plugin's `create` and not destroyed;
//! * *context*: null, or an execution context made by this plugin and not destroyed;
//! * *span*: null, or a `hipdnnPluginConstData_t` whose `ptr` is valid for `size` bytes
//!   for the duration of the call;
//! * *out*: null, or valid for a write of the pointed-to type;
//! * *ids*: `engine_ids` has room for `max_engines` ids (it may be null when
//!   `max_engines` is 0); `num_engines` follows *out*.

use std::ffi::{CStr, c_char, c_void};
use std::sync::{Arc, OnceLock};

use hipdnn_data_sdk::MemoryKind;

use hipdnn_flatbuffers_sdk::model::EngineConfig;
use hipdnn_flatbuffers_sdk::{EngineConfigView, GraphView};

use crate::abi::*;
use crate::engine::{EngineManager, Handle, IPlan};
use crate::error::{PluginError, PluginResult, boundary, last_error_ptr, non_null, non_null_mut};
use crate::memory::{Buffers, Execution, WorkspaceView};
use crate::{EnginePlugin, SerializablePlugin, logging};

/// The engines of `P`, built on first use and shared by every handle of the process.
pub type Manager<P> = EngineManager<
    <P as EnginePlugin>::Handle,
    <P as EnginePlugin>::Settings,
    <P as EnginePlugin>::Context,
>;

/// Where the export macro keeps `P`'s engine manager.
pub type ManagerCell<P> = OnceLock<Manager<P>>;

type PluginHandle<P> = Handle<<P as EnginePlugin>::Handle>;

fn manager<P: EnginePlugin>(cell: &'static ManagerCell<P>) -> &'static Manager<P> {
    cell.get_or_init(P::engines)
}

/// What an execution-context pointer addresses: a plan (shared with the handle's plan
/// cache) and the memory its engine runs in.
#[derive(Debug)]
pub struct ExecutionContext<C> {
    plan: Arc<C>,
    memory: MemoryKind,
}

impl<C> ExecutionContext<C> {
    /// The plan.
    pub fn plan(&self) -> &C {
        &self.plan
    }

    /// The memory the plan's buffers and workspace are in.
    pub fn memory_kind(&self) -> MemoryKind {
        self.memory
    }
}

/// The plan for (`config`, `graph`) on `handle`: from the handle's plan cache, or
/// built by the engine and cached.
fn cached_plan<P: EnginePlugin>(
    cell: &'static ManagerCell<P>,
    handle: &PluginHandle<P>,
    config: &EngineConfig,
    graph: &GraphView<'_>,
) -> PluginResult<(Arc<P::Context>, MemoryKind)> {
    let engine = manager::<P>(cell).engine(config.engine_id)?;
    let plan = handle
        .caches
        .plan(config.engine_id, &config.knobs, graph.bytes(), || {
            engine.create_plan(handle, config, graph)
        })?;
    Ok((plan, engine.memory_kind()))
}

/// # Safety
/// `out` is null or valid for a write.
unsafe fn write<T>(out: *mut T, what: &str, value: T) -> PluginResult<()> {
    let out = non_null_mut(out, what)?;
    // SAFETY: non-null, and valid for writes per the caller's contract.
    unsafe { out.write(value) };
    Ok(())
}

/// # Safety
/// `handle` is null or a pointer returned by `create` of the same plugin, not destroyed.
unsafe fn handle_ref<'a, P: EnginePlugin>(
    handle: hipdnnEnginePluginHandle_t,
) -> PluginResult<&'a PluginHandle<P>> {
    let handle = non_null_mut(handle, "plugin handle")?;
    // SAFETY: per the contract, a live `Box<Handle<P::Handle>>` made by `create`.
    Ok(unsafe { &*handle.cast::<PluginHandle<P>>() })
}

/// # Safety
/// `context` is null or a pointer returned by `create_execution_context` of the same
/// plugin, not destroyed.
unsafe fn context_ref<'a, P: EnginePlugin>(
    context: hipdnnEnginePluginExecutionContext_t,
) -> PluginResult<&'a ExecutionContext<P::Context>> {
    let context = non_null_mut(context, "execution context")?;
    // SAFETY: per the contract, a live `Box<ExecutionContext<P::Context>>` made by this
    // module.
    Ok(unsafe { &*context.cast::<ExecutionContext<P::Context>>() })
}

/// Hands a context to the host as an opaque pointer, freed by `destroy_execution_context`.
fn into_raw_context<C>(context: ExecutionContext<C>) -> hipdnnEnginePluginExecutionContext_t {
    Box::into_raw(Box::new(context)).cast::<HipdnnEnginePluginExecutionContext>()
}

/// # Safety
/// `data` is null or points to a span whose `ptr` is valid for `size` bytes for `'a`.
unsafe fn span<'a>(data: *const hipdnnPluginConstData_t, what: &str) -> PluginResult<&'a [u8]> {
    let data = non_null(data, what)?;
    // SAFETY: non-null and readable per the caller's contract.
    let data = unsafe { &*data };
    if data.size == 0 {
        return Ok(&[]);
    }
    let ptr = non_null(data.ptr, &format!("{what}->ptr"))?;
    // SAFETY: the caller guarantees `size` readable bytes at `ptr` for the call.
    Ok(unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), data.size) })
}

/// Verifies and validates a serialized graph.
fn parse_graph<'a>(bytes: &'a [u8]) -> PluginResult<GraphView<'a>> {
    let view = GraphView::from_bytes(bytes)
        .map_err(|e| PluginError::bad_param(format!("op_graph: {e}")))?;
    view.validate()
        .map_err(|e| PluginError::bad_param(format!("op_graph: {e}")))?;
    Ok(view)
}

fn parse_config(bytes: &[u8]) -> PluginResult<EngineConfig> {
    let view = EngineConfigView::from_bytes(bytes)
        .map_err(|e| PluginError::bad_param(format!("engine_config: {e}")))?;
    Ok(view.to_model())
}

/// Two-call id arrays: `max == 0` writes the total; otherwise the first `max` ids are
/// copied and the number copied is written.
///
/// # Safety
/// `out` is null or valid for `max` writes; `count` is null or valid for a write.
unsafe fn write_ids(ids: &[i64], out: *mut i64, max: u32, count: *mut u32) -> PluginResult<()> {
    let count = non_null_mut(count, "num_engines")?;
    let total = u32::try_from(ids.len())
        .map_err(|_| PluginError::internal("more than u32::MAX engines"))?;
    if max == 0 {
        // SAFETY: checked non-null; writable per the contract.
        unsafe { count.write(total) };
        return Ok(());
    }
    let out = non_null_mut(out, "engine_ids")?;
    let n = ids.len().min(max as usize);
    // SAFETY: `out` has room for `max >= n` ids per the contract; the ranges are disjoint.
    unsafe {
        std::ptr::copy_nonoverlapping(ids.as_ptr(), out, n);
        count.write(n as u32);
    }
    Ok(())
}

/// `hipdnnPluginGetName`.
///
/// # Safety
/// `name` is null or valid for a write.
pub unsafe fn get_name<P: EnginePlugin>(name: *mut *const c_char) -> hipdnnPluginStatus_t {
    // SAFETY: forwarded contract.
    boundary("hipdnnPluginGetName", || unsafe {
        write(name, "name", P::NAME.as_ptr())
    })
}

/// `hipdnnPluginGetVersion`.
///
/// # Safety
/// `version` is null or valid for a write.
pub unsafe fn get_version<P: EnginePlugin>(version: *mut *const c_char) -> hipdnnPluginStatus_t {
    // SAFETY: forwarded contract.
    boundary("hipdnnPluginGetVersion", || unsafe {
        write(version, "version", P::VERSION.as_ptr())
    })
}

/// `hipdnnPluginGetApiVersion`.
///
/// # Safety
/// `version` is null or valid for a write.
pub unsafe fn get_api_version<P: EnginePlugin>(
    version: *mut *const c_char,
) -> hipdnnPluginStatus_t {
    // SAFETY: forwarded contract.
    boundary("hipdnnPluginGetApiVersion", || unsafe {
        write(version, "version", P::API_VERSION.as_ptr())
    })
}

/// `hipdnnPluginGetType`.
///
/// # Safety
/// `plugin_type` is null or valid for a write.
pub unsafe fn get_type<P: EnginePlugin>(
    plugin_type: *mut hipdnnPluginType_t,
) -> hipdnnPluginStatus_t {
    // SAFETY: forwarded contract.
    boundary("hipdnnPluginGetType", || unsafe {
        write(plugin_type, "type", HIPDNN_PLUGIN_TYPE_ENGINE)
    })
}

/// `hipdnnPluginGetLastErrorString`: a pointer to this thread's last error, valid until
/// the thread's next call into the plugin. A null argument is a no-op.
///
/// # Safety
/// `error` is null or valid for a write.
pub unsafe fn get_last_error_string(error: *mut *const c_char) {
    if !error.is_null() {
        // SAFETY: non-null, writable per the contract.
        unsafe { error.write(last_error_ptr()) };
    }
}

/// `hipdnnPluginSetLoggingCallback`.
pub fn set_logging_callback(callback: hipdnnCallback_t) -> hipdnnPluginStatus_t {
    boundary("hipdnnPluginSetLoggingCallback", || {
        logging::set_callback(callback)
    })
}

/// `hipdnnPluginSetLogLevel`.
pub fn set_log_level(level: hipdnnSeverity_t) -> hipdnnPluginStatus_t {
    boundary("hipdnnPluginSetLogLevel", || logging::set_level(level))
}

/// `hipdnnEnginePluginGetAllEngineIds`.
///
/// # Safety
/// The *ids* rule.
pub unsafe fn get_all_engine_ids<P: EnginePlugin>(
    cell: &'static ManagerCell<P>,
    engine_ids: *mut i64,
    max_engines: u32,
    num_engines: *mut u32,
) -> hipdnnPluginStatus_t {
    boundary("hipdnnEnginePluginGetAllEngineIds", || {
        // SAFETY: forwarded contract.
        unsafe {
            write_ids(
                manager::<P>(cell).ids(),
                engine_ids,
                max_engines,
                num_engines,
            )
        }
    })
}

/// `hipdnnEnginePluginGetEngineName`: `NOT_APPLICABLE` when the engine has no name.
///
/// # Safety
/// `name` is null or valid for a write.
pub unsafe fn get_engine_name<P: EnginePlugin>(
    cell: &'static ManagerCell<P>,
    engine_id: i64,
    name: *mut *const c_char,
) -> hipdnnPluginStatus_t {
    boundary("hipdnnEnginePluginGetEngineName", || {
        let name = non_null_mut(name, "name")?;
        let engine = manager::<P>(cell).engine(engine_id)?;
        let engine_name: &'static CStr = engine
            .name()
            .ok_or_else(|| PluginError::not_applicable("engine has no name"))?;
        // SAFETY: checked non-null; writable per the contract.
        unsafe { name.write(engine_name.as_ptr()) };
        Ok(())
    })
}

/// `hipdnnEnginePluginCreate`: a new plugin handle, freed by `destroy`.
///
/// # Safety
/// `handle` is null or valid for a write.
pub unsafe fn create<P: EnginePlugin>(
    cell: &'static ManagerCell<P>,
    handle: *mut hipdnnEnginePluginHandle_t,
) -> hipdnnPluginStatus_t {
    boundary("hipdnnEnginePluginCreate", || {
        let out = non_null_mut(handle, "handle")?;
        manager::<P>(cell);
        let state = P::create_handle()?;
        let raw = Box::into_raw(Box::new(Handle::new(state))).cast::<HipdnnEnginePluginHandle>();
        // SAFETY: checked non-null; writable per the contract.
        unsafe { out.write(raw) };
        Ok(())
    })
}

/// `hipdnnEnginePluginDestroy`: frees the handle and every buffer it still holds. Null
/// is a no-op.
///
/// # Safety
/// `handle` is null or from `create`, not destroyed yet, and unused afterwards.
pub unsafe fn destroy<P: EnginePlugin>(handle: hipdnnEnginePluginHandle_t) -> hipdnnPluginStatus_t {
    boundary("hipdnnEnginePluginDestroy", || {
        if !handle.is_null() {
            // SAFETY: per the contract, the Box made by `create`, released once.
            drop(unsafe { Box::from_raw(handle.cast::<PluginHandle<P>>()) });
        }
        Ok(())
    })
}

/// `hipdnnEnginePluginSetStream`.
///
/// # Safety
/// `handle` as for the *handle* rule.
pub unsafe fn set_stream<P: EnginePlugin>(
    handle: hipdnnEnginePluginHandle_t,
    stream: hipStream_t,
) -> hipdnnPluginStatus_t {
    boundary("hipdnnEnginePluginSetStream", || {
        // SAFETY: forwarded contract.
        let handle = unsafe { handle_ref::<P>(handle) }?;
        if handle.stream() != stream {
            P::stream_changed(handle.state(), stream)?;
            handle.set_stream(stream);
        }
        Ok(())
    })
}

/// `hipdnnEnginePluginGetApplicableEngineIds`.
///
/// # Safety
/// `handle` as for the *handle* rule; `op_graph` as for the *span* rule; ids as for the *ids* rule.
pub unsafe fn get_applicable_engine_ids<P: EnginePlugin>(
    cell: &'static ManagerCell<P>,
    handle: hipdnnEnginePluginHandle_t,
    op_graph: *const hipdnnPluginConstData_t,
    engine_ids: *mut i64,
    max_engines: u32,
    num_engines: *mut u32,
) -> hipdnnPluginStatus_t {
    boundary("hipdnnEnginePluginGetApplicableEngineIds", || {
        // SAFETY: forwarded contracts.
        let handle = unsafe { handle_ref::<P>(handle) }?;
        // SAFETY: forwarded contract.
        let graph = parse_graph(unsafe { span(op_graph, "op_graph") }?)?;
        let ids = manager::<P>(cell).applicable_ids(handle, &graph);
        // SAFETY: forwarded contract.
        unsafe { write_ids(&ids, engine_ids, max_engines, num_engines) }
    })
}

/// `hipdnnEnginePluginGetEngineDetails`: writes a plugin-owned `EngineDetails` buffer,
/// freed by `destroy_engine_details` on the same handle (or with the handle).
///
/// # Safety
/// `handle` as for the *handle* rule; `op_graph` as for the *span* rule; `engine_details` null or
/// valid for a write.
pub unsafe fn get_engine_details<P: EnginePlugin>(
    cell: &'static ManagerCell<P>,
    handle: hipdnnEnginePluginHandle_t,
    engine_id: i64,
    op_graph: *const hipdnnPluginConstData_t,
    engine_details: *mut hipdnnPluginConstData_t,
) -> hipdnnPluginStatus_t {
    boundary("hipdnnEnginePluginGetEngineDetails", || {
        // SAFETY: forwarded contract.
        let handle = unsafe { handle_ref::<P>(handle) }?;
        let out = non_null_mut(engine_details, "engine_details")?;
        // SAFETY: forwarded contract.
        let graph = parse_graph(unsafe { span(op_graph, "op_graph") }?)?;
        let engine = manager::<P>(cell).engine(engine_id)?;
        let mut details = engine.details(handle, &graph)?;
        details.engine_id = engine_id;
        if let Some(note) = engine.memory_kind().behavior_note()
            && !details.behavior_notes.contains(&note)
        {
            details.behavior_notes.push(note);
        }
        let span = handle.hand_out(details.to_bytes());
        // SAFETY: checked non-null; writable per the contract.
        unsafe { out.write(span) };
        Ok(())
    })
}

/// `hipdnnEnginePluginDestroyEngineDetails`: frees the buffer and zeroes the span.
///
/// # Safety
/// `handle` as for the *handle* rule; `engine_details` null or valid for reads and writes.
pub unsafe fn destroy_engine_details<P: EnginePlugin>(
    handle: hipdnnEnginePluginHandle_t,
    engine_details: *mut hipdnnPluginConstData_t,
) -> hipdnnPluginStatus_t {
    boundary("hipdnnEnginePluginDestroyEngineDetails", || {
        // SAFETY: forwarded contract.
        let handle = unsafe { handle_ref::<P>(handle) }?;
        let details = non_null_mut(engine_details, "engine_details")?;
        // SAFETY: non-null, readable and writable per the contract.
        let details = unsafe { &mut *details };
        handle.take_back(details.ptr)?;
        *details = hipdnnPluginConstData_t::default();
        Ok(())
    })
}

/// `hipdnnEnginePluginGetWorkspaceSize`: the workspace of the plan for the config and
/// graph, built now (and cached in the handle, so that creating the execution context
/// next does not build it again) unless the handle has it.
///
/// # Safety
/// `handle` as for the *handle* rule; spans as for the *span* rule; `workspace_size` null or valid
/// for a write.
pub unsafe fn get_workspace_size<P: EnginePlugin>(
    cell: &'static ManagerCell<P>,
    handle: hipdnnEnginePluginHandle_t,
    engine_config: *const hipdnnPluginConstData_t,
    op_graph: *const hipdnnPluginConstData_t,
    workspace_size: *mut usize,
) -> hipdnnPluginStatus_t {
    boundary("hipdnnEnginePluginGetWorkspaceSize", || {
        // SAFETY: forwarded contract.
        let handle = unsafe { handle_ref::<P>(handle) }?;
        let out = non_null_mut(workspace_size, "workspace_size")?;
        // SAFETY: forwarded contract.
        let config = parse_config(unsafe { span(engine_config, "engine_config") }?)?;
        // SAFETY: forwarded contract.
        let graph = parse_graph(unsafe { span(op_graph, "op_graph") }?)?;
        let size = cached_plan::<P>(cell, handle, &config, &graph)?
            .0
            .workspace_size();
        // SAFETY: checked non-null; writable per the contract.
        unsafe { out.write(size) };
        Ok(())
    })
}

/// `hipdnnEnginePluginCreateExecutionContext`: the plan for the config and graph (built,
/// or shared from the handle's plan cache); freed by `destroy_execution_context`. The
/// config and graph are not needed afterwards.
///
/// # Safety
/// `handle` as for the *handle* rule; spans as for the *span* rule; `execution_context` null or
/// valid for a write.
pub unsafe fn create_execution_context<P: EnginePlugin>(
    cell: &'static ManagerCell<P>,
    handle: hipdnnEnginePluginHandle_t,
    engine_config: *const hipdnnPluginConstData_t,
    op_graph: *const hipdnnPluginConstData_t,
    execution_context: *mut hipdnnEnginePluginExecutionContext_t,
) -> hipdnnPluginStatus_t {
    boundary("hipdnnEnginePluginCreateExecutionContext", || {
        // SAFETY: forwarded contract.
        let handle = unsafe { handle_ref::<P>(handle) }?;
        let out = non_null_mut(execution_context, "execution_context")?;
        // SAFETY: forwarded contract.
        let config = parse_config(unsafe { span(engine_config, "engine_config") }?)?;
        // SAFETY: forwarded contract.
        let graph = parse_graph(unsafe { span(op_graph, "op_graph") }?)?;
        let (plan, memory) = cached_plan::<P>(cell, handle, &config, &graph)?;
        let raw = into_raw_context(ExecutionContext { plan, memory });
        // SAFETY: checked non-null; writable per the contract.
        unsafe { out.write(raw) };
        Ok(())
    })
}

/// `hipdnnEnginePluginDestroyExecutionContext`. A null context is a no-op.
///
/// # Safety
/// `handle` as for the *handle* rule; `execution_context` null or from
/// `create_execution_context`, not destroyed yet, and unused afterwards.
pub unsafe fn destroy_execution_context<P: EnginePlugin>(
    handle: hipdnnEnginePluginHandle_t,
    execution_context: hipdnnEnginePluginExecutionContext_t,
) -> hipdnnPluginStatus_t {
    boundary("hipdnnEnginePluginDestroyExecutionContext", || {
        // SAFETY: forwarded contract.
        unsafe { handle_ref::<P>(handle) }?;
        if !execution_context.is_null() {
            // SAFETY: per the contract, the Box made by this module, released once.
            drop(unsafe {
                Box::from_raw(execution_context.cast::<ExecutionContext<P::Context>>())
            });
        }
        Ok(())
    })
}

/// `hipdnnEnginePluginGetWorkspaceSizeFromExecutionContext`.
///
/// # Safety
/// `handle` as for the *handle* rule; context as for the *context* rule; `workspace_size` null
/// or valid for a write.
pub unsafe fn get_workspace_size_from_execution_context<P: EnginePlugin>(
    handle: hipdnnEnginePluginHandle_t,
    execution_context: hipdnnEnginePluginExecutionContext_t,
    workspace_size: *mut usize,
) -> hipdnnPluginStatus_t {
    boundary(
        "hipdnnEnginePluginGetWorkspaceSizeFromExecutionContext",
        || {
            // SAFETY: forwarded contracts.
            unsafe { handle_ref::<P>(handle) }?;
            // SAFETY: forwarded contract.
            let context = unsafe { context_ref::<P>(execution_context) }?;
            let size = context.plan.workspace_size();
            // SAFETY: forwarded contract.
            unsafe { write(workspace_size, "workspace_size", size) }
        },
    )
}

/// `hipdnnEnginePluginExecuteOpGraph`: runs the plan on the handle's stream. The
/// buffers are valid only during the call; `workspace` may be null when the plan needs
/// none.
///
/// # Safety
/// `handle` as for the *handle* rule; context as for the *context* rule; `device_buffers`
/// null (only with `num_device_buffers == 0`) or valid for that many reads.
pub unsafe fn execute_op_graph<P: EnginePlugin>(
    handle: hipdnnEnginePluginHandle_t,
    execution_context: hipdnnEnginePluginExecutionContext_t,
    workspace: *mut c_void,
    device_buffers: *const hipdnnPluginDeviceBuffer_t,
    num_device_buffers: u32,
) -> hipdnnPluginStatus_t {
    boundary("hipdnnEnginePluginExecuteOpGraph", || {
        // SAFETY: forwarded contracts.
        let handle = unsafe { handle_ref::<P>(handle) }?;
        // SAFETY: forwarded contract.
        let context = unsafe { context_ref::<P>(execution_context) }?;
        let buffers: &[hipdnnPluginDeviceBuffer_t] = if num_device_buffers == 0 {
            &[]
        } else {
            let ptr = non_null(device_buffers, "device_buffers")?;
            // SAFETY: non-null with `num_device_buffers` readable entries per the contract.
            unsafe { std::slice::from_raw_parts(ptr, num_device_buffers as usize) }
        };
        let size = context.plan.workspace_size();
        if size > 0 && workspace.is_null() {
            return Err(null_workspace(size));
        }
        let exec = Execution::new(
            Buffers::new(buffers, context.memory),
            WorkspaceView::new(workspace, size, context.memory),
            handle.stream(),
        );
        context.plan.execute(handle, &exec)
    })
}

#[cold]
#[inline(never)]
fn null_workspace(size: usize) -> PluginError {
    PluginError::bad_param(format!("workspace is null but the plan needs {size} bytes"))
}

/// `hipdnnEnginePluginSerializeExecutionContext`: plugin-owned bytes, freed by
/// `destroy_serialized_execution_context` on the same handle.
///
/// # Safety
/// `handle` as for the *handle* rule; context as for the *context* rule; `serialized` null or
/// valid for a write.
pub unsafe fn serialize_execution_context<P: SerializablePlugin>(
    handle: hipdnnEnginePluginHandle_t,
    execution_context: hipdnnEnginePluginExecutionContext_t,
    serialized: *mut hipdnnPluginConstData_t,
) -> hipdnnPluginStatus_t {
    boundary("hipdnnEnginePluginSerializeExecutionContext", || {
        // SAFETY: forwarded contracts.
        let handle = unsafe { handle_ref::<P>(handle) }?;
        // SAFETY: forwarded contract.
        let context = unsafe { context_ref::<P>(execution_context) }?;
        let out = non_null_mut(serialized, "serialized_context")?;
        let bytes = P::serialize(handle, &context.plan)?;
        if bytes.is_empty() {
            return Err(PluginError::internal(
                "serialized execution context is empty",
            ));
        }
        let span = handle.hand_out(bytes);
        // SAFETY: checked non-null; writable per the contract.
        unsafe { out.write(span) };
        Ok(())
    })
}

/// `hipdnnEnginePluginDestroySerializedExecutionContext`.
///
/// # Safety
/// As for `destroy_engine_details`.
pub unsafe fn destroy_serialized_execution_context<P: SerializablePlugin>(
    handle: hipdnnEnginePluginHandle_t,
    serialized: *mut hipdnnPluginConstData_t,
) -> hipdnnPluginStatus_t {
    boundary(
        "hipdnnEnginePluginDestroySerializedExecutionContext",
        || {
            // SAFETY: forwarded contract.
            let handle = unsafe { handle_ref::<P>(handle) }?;
            let serialized = non_null_mut(serialized, "serialized_context")?;
            // SAFETY: non-null, readable and writable per the contract.
            let serialized = unsafe { &mut *serialized };
            handle.take_back(serialized.ptr)?;
            *serialized = hipdnnPluginConstData_t::default();
            Ok(())
        },
    )
}

/// `hipdnnEnginePluginCreateExecutionContextFromSerialized`.
///
/// # Safety
/// `handle` as for the *handle* rule; `serialized` as for the *span* rule; `execution_context`
/// null or valid for a write.
pub unsafe fn create_execution_context_from_serialized<P: SerializablePlugin>(
    cell: &'static ManagerCell<P>,
    handle: hipdnnEnginePluginHandle_t,
    serialized: *const hipdnnPluginConstData_t,
    execution_context: *mut hipdnnEnginePluginExecutionContext_t,
) -> hipdnnPluginStatus_t {
    boundary(
        "hipdnnEnginePluginCreateExecutionContextFromSerialized",
        || {
            // SAFETY: forwarded contracts.
            let handle = unsafe { handle_ref::<P>(handle) }?;
            // SAFETY: forwarded contract.
            let bytes = unsafe { span(serialized, "serialized_context") }?;
            let out = non_null_mut(execution_context, "execution_context")?;
            let plan = P::deserialize(handle, bytes)?;
            let memory = match P::memory_kind(&plan) {
                Some(memory) => memory,
                None => common_memory_kind(manager::<P>(cell))?,
            };
            let raw = into_raw_context(ExecutionContext {
                plan: Arc::new(plan),
                memory,
            });
            // SAFETY: checked non-null; writable per the contract.
            unsafe { out.write(raw) };
            Ok(())
        },
    )
}

/// The memory every engine of a plugin declares.
fn common_memory_kind<H, S, C>(engines: &EngineManager<H, S, C>) -> PluginResult<MemoryKind> {
    let mut kinds = engines
        .ids()
        .iter()
        .filter_map(|&id| engines.engine(id).ok())
        .map(|e| e.memory_kind());
    let first = kinds.next().unwrap_or_default();
    if kinds.all(|k| k == first) {
        Ok(first)
    } else {
        Err(PluginError::internal(
            "the plugin has host and device engines: SerializablePlugin::memory_kind must say which memory a restored plan runs in",
        ))
    }
}
