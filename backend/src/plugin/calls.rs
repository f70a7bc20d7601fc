//! The calls the backend makes through a loaded plugin after the handshake, each
//! checked, with the plugin's last error copied on failure.

use std::ffi::c_void;

use hipdnn_plugin_abi::*;

use super::strings::read_last_error;
use super::{Context, LoadedPlugin, PluginHandle, Span, Status};
use crate::error::PluginCallError;

/// Builds the error of a failed call, reading the plugin's last error right away.
pub(super) fn call_error(
    last_error: Option<hipdnnPluginGetLastErrorString_fn>,
    status: Status,
    action: String,
) -> PluginCallError {
    let message = last_error.map(read_last_error).unwrap_or_default();
    PluginCallError {
        action,
        status,
        message,
    }
}

impl LoadedPlugin {
    /// Pushes a new log level to the plugin (no-op when it does not export
    /// `hipdnnPluginSetLogLevel`).
    ///
    /// # Errors
    /// The plugin's failure.
    pub fn set_log_level(&self, level: hipdnnSeverity_t) -> Result<(), PluginCallError> {
        let Some(f) = self.base.set_log_level else {
            return Ok(());
        };
        // SAFETY: resolved with its declared type from the library `self` keeps loaded.
        let status = unsafe { f(level) };
        self.check(status, || format!("set the log level to {level}"))
    }

    /// Creates a plugin handle (`hipdnnEnginePluginCreate`); null is returned as is, for
    /// the caller to reject.
    ///
    /// # Errors
    /// The plugin's failure (including a panic it caught).
    pub(crate) fn create_handle(&self) -> Result<hipdnnEnginePluginHandle_t, PluginCallError> {
        let mut handle: hipdnnEnginePluginHandle_t = std::ptr::null_mut();
        // SAFETY: resolved with its declared type from the library `self` keeps loaded;
        // the out-pointer is valid for the call.
        let status = unsafe { (self.api.create)(&mut handle) };
        self.check(status, || "create a plugin handle".to_owned())?;
        Ok(handle)
    }

    /// Destroys a plugin handle (`hipdnnEnginePluginDestroy`).
    ///
    /// # Safety
    /// `handle` came from [`LoadedPlugin::create_handle`] of this plugin and is not used
    /// afterwards.
    ///
    /// # Errors
    /// The plugin's failure.
    pub(crate) unsafe fn destroy_handle(
        &self,
        handle: hipdnnEnginePluginHandle_t,
    ) -> Result<(), PluginCallError> {
        // SAFETY: per this function's contract.
        let status = unsafe { (self.api.destroy)(handle) };
        self.check(status, || "destroy a plugin handle".to_owned())
    }

    /// Sets the stream of a plugin handle (`hipdnnEnginePluginSetStream`).
    ///
    /// # Safety
    /// `handle` is a live handle of this plugin.
    ///
    /// # Errors
    /// The plugin's failure.
    pub(crate) unsafe fn set_stream(
        &self,
        handle: hipdnnEnginePluginHandle_t,
        stream: hipStream_t,
    ) -> Result<(), PluginCallError> {
        // SAFETY: per this function's contract.
        let status = unsafe { (self.api.set_stream)(handle, stream) };
        self.check(status, || "set the stream".to_owned())
    }

    /// The engines of this plugin that can run `graph` (a serialized `Graph`)
    /// (`hipdnnEnginePluginGetApplicableEngineIds`), with a buffer sized to the plugin's
    /// engine count; ids beyond it are cut.
    ///
    /// # Safety
    /// `handle` is a live handle of this plugin.
    ///
    /// # Errors
    /// The plugin's failure.
    pub(crate) unsafe fn applicable_engine_ids(
        &self,
        handle: PluginHandle,
        graph: &[u8],
    ) -> Result<Vec<i64>, PluginCallError> {
        let span = Span {
            ptr: graph.as_ptr().cast(),
            size: graph.len(),
        };
        let mut ids = vec![0i64; self.engines.len().max(1)];
        let mut count = 0u32;
        let capacity = u32::try_from(ids.len()).unwrap_or(u32::MAX);
        // SAFETY: `handle` is live per the contract; the graph span and the id buffer
        // are valid for the call, the buffer for `capacity` ids.
        let status = unsafe {
            (self.api.get_applicable_engine_ids)(
                handle,
                &span,
                ids.as_mut_ptr(),
                capacity,
                &mut count,
            )
        };
        self.check(status, || "get applicable engine ids".to_owned())?;
        // The plugin may report more applicable ids than fit; only the first ones exist.
        ids.truncate((count as usize).min(ids.len()));
        Ok(ids)
    }

    /// The serialized `EngineDetails` of `engine` for `graph`
    /// (`hipdnnEnginePluginGetEngineDetails`), copied and handed back to the plugin
    /// (`hipdnnEnginePluginDestroyEngineDetails`) before returning.
    ///
    /// # Safety
    /// `handle` is a live handle of this plugin.
    ///
    /// # Errors
    /// The plugin's failure, or a null buffer with a non-zero size.
    pub(crate) unsafe fn engine_details(
        &self,
        handle: PluginHandle,
        engine: i64,
        graph: &[u8],
    ) -> Result<Vec<u8>, PluginCallError> {
        let span = Span {
            ptr: graph.as_ptr().cast(),
            size: graph.len(),
        };
        let mut details = Span {
            ptr: std::ptr::null(),
            size: 0,
        };
        // SAFETY: `handle` is live per the contract; the spans are valid for the call.
        let status = unsafe { (self.api.get_engine_details)(handle, engine, &span, &mut details) };
        self.check(status, || {
            format!("get engine details of engine {engine:#018x}")
        })?;
        let bytes = if details.size == 0 {
            Ok(Vec::new())
        } else if details.ptr.is_null() {
            Err(call_error(
                None,
                HIPDNN_PLUGIN_STATUS_INTERNAL_ERROR,
                format!(
                    "get engine details of engine {engine:#018x}: the plugin returned a null buffer of {} bytes",
                    details.size
                ),
            ))
        } else {
            // SAFETY: the plugin owns `size` readable bytes at `ptr` until the destroy call
            // below.
            Ok(
                unsafe { std::slice::from_raw_parts(details.ptr.cast::<u8>(), details.size) }
                    .to_vec(),
            )
        };
        if !details.ptr.is_null() {
            // SAFETY: the span the plugin returned for this handle, given back once.
            let status = unsafe { (self.api.destroy_engine_details)(handle, &mut details) };
            if let Err(error) = self.check(status, || "destroy engine details".to_owned()) {
                tracing::warn!("plugin '{}': {error}", self.name);
            }
        }
        bytes
    }

    /// Builds an execution context for a serialized `EngineConfig` and `Graph`
    /// (`hipdnnEnginePluginCreateExecutionContext`).
    ///
    /// # Safety
    /// `handle` is a live handle of this plugin.
    ///
    /// # Errors
    /// The plugin's failure, or a null context.
    pub(crate) unsafe fn create_execution_context(
        &self,
        handle: PluginHandle,
        config: &[u8],
        graph: &[u8],
    ) -> Result<Context, PluginCallError> {
        let config = Span {
            ptr: config.as_ptr().cast(),
            size: config.len(),
        };
        let graph = Span {
            ptr: graph.as_ptr().cast(),
            size: graph.len(),
        };
        let mut context: Context = std::ptr::null_mut();
        // SAFETY: `handle` is live per the contract; spans and out-pointer valid.
        let status =
            unsafe { (self.api.create_execution_context)(handle, &config, &graph, &mut context) };
        self.check(status, || "create an execution context".to_owned())?;
        if context.is_null() {
            return Err(call_error(
                None,
                HIPDNN_PLUGIN_STATUS_INTERNAL_ERROR,
                "create an execution context: the plugin returned a null context".to_owned(),
            ));
        }
        Ok(context)
    }

    /// Workspace bytes an engine config needs for a graph, without building a plan
    /// (`hipdnnEnginePluginGetWorkspaceSize`).
    ///
    /// # Safety
    /// `handle` is a live handle of this plugin.
    ///
    /// # Errors
    /// The plugin's failure.
    pub(crate) unsafe fn workspace_size(
        &self,
        handle: PluginHandle,
        config: &[u8],
        graph: &[u8],
    ) -> Result<usize, PluginCallError> {
        let config = Span {
            ptr: config.as_ptr().cast(),
            size: config.len(),
        };
        let graph = Span {
            ptr: graph.as_ptr().cast(),
            size: graph.len(),
        };
        let mut size = 0usize;
        // SAFETY: `handle` is live per the contract; spans and out-pointer valid.
        let status = unsafe { (self.api.get_workspace_size)(handle, &config, &graph, &mut size) };
        self.check(status, || {
            "get the workspace size of an engine config".to_owned()
        })?;
        Ok(size)
    }

    /// Destroys an execution context (`hipdnnEnginePluginDestroyExecutionContext`).
    ///
    /// # Safety
    /// `context` came from [`LoadedPlugin::create_execution_context`] on `handle`, which
    /// is live; it is not used afterwards.
    ///
    /// # Errors
    /// The plugin's failure.
    pub(crate) unsafe fn destroy_execution_context(
        &self,
        handle: PluginHandle,
        context: Context,
    ) -> Result<(), PluginCallError> {
        // SAFETY: per the contract.
        let status = unsafe { (self.api.destroy_execution_context)(handle, context) };
        self.check(status, || "destroy an execution context".to_owned())
    }

    /// Workspace bytes an execution context needs
    /// (`hipdnnEnginePluginGetWorkspaceSizeFromExecutionContext`).
    ///
    /// # Safety
    /// `context` is a live context of `handle`, which is live.
    ///
    /// # Errors
    /// The plugin's failure.
    pub(crate) unsafe fn context_workspace_size(
        &self,
        handle: PluginHandle,
        context: Context,
    ) -> Result<usize, PluginCallError> {
        let mut size = 0usize;
        // SAFETY: per the contract; the out-pointer is valid.
        let status = unsafe {
            (self.api.get_workspace_size_from_execution_context)(handle, context, &mut size)
        };
        self.check(status, || "get the workspace size".to_owned())?;
        Ok(size)
    }

    /// Runs an execution context (`hipdnnEnginePluginExecuteOpGraph`).
    ///
    /// # Safety
    /// `context` is a live context of `handle`, which is live; every buffer pointer and
    /// `workspace` are valid for what the graph reads and writes.
    ///
    /// # Errors
    /// The plugin's failure.
    pub(crate) unsafe fn execute(
        &self,
        handle: PluginHandle,
        context: Context,
        workspace: *mut c_void,
        buffers: &[hipdnnPluginDeviceBuffer_t],
    ) -> Result<(), PluginCallError> {
        let count = u32::try_from(buffers.len()).map_err(|_| {
            call_error(
                None,
                HIPDNN_PLUGIN_STATUS_BAD_PARAM,
                format!(
                    "execute: {} buffers do not fit the ABI's u32 count",
                    buffers.len()
                ),
            )
        })?;
        // SAFETY: per the contract; the buffer array is valid for `count` entries.
        let status = unsafe {
            (self.api.execute_op_graph)(handle, context, workspace, buffers.as_ptr(), count)
        };
        self.check(status, || "execute the graph".to_owned())
    }

    /// Turns a status from one of this plugin's entry points into a result, reading the
    /// plugin's last error on failure. Call it right after the call, on the same thread.
    pub(crate) fn check(
        &self,
        status: Status,
        action: impl FnOnce() -> String,
    ) -> Result<(), PluginCallError> {
        if status == HIPDNN_PLUGIN_STATUS_SUCCESS {
            Ok(())
        } else {
            Err(call_error(
                Some(self.base.get_last_error_string),
                status,
                action(),
            ))
        }
    }
}
