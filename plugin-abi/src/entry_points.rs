//! The ABI's functions, listed once.
//!
//! [`__entry_points!`](crate::__entry_points) holds the one list of every function a
//! plugin may export, with its C signature. The list is expanded into:
//!
//! * the function-pointer types at the crate root, named as the C headers' typedefs
//!   (`hipdnnPluginGetName_fn`, ...): what a host casts a resolved symbol to;
//! * `symbol_of!`, crate-private, mapping each type to its symbol name, so the tables
//!   resolve every symbol with the type of its own declaration;
//! * on request, `extern "C"` declarations of the exports
//!   ([`declare_entry_points!`](crate::declare_entry_points)), for a program that links a
//!   plugin's exports into itself.
//!
//! The plugin SDK's export macro checks each function it exports against the same types.

/// The list of entry points, expanded by `$mode`: `aliases`, `symbols` or
/// `declarations`. Not public API: use the types, the tables or
/// [`declare_entry_points!`](crate::declare_entry_points).
#[doc(hidden)]
#[macro_export]
macro_rules! __entry_points {
    ($mode:ident) => {
        $crate::__entry_points! { @ $mode
            // PluginApi.h: every plugin type.

            /// `hipdnnPluginGetName` (required): writes the plugin's name, a static
            /// NUL-terminated string.
            hipdnnPluginGetName_fn = fn hipdnnPluginGetName(
                name: *mut *const ::std::ffi::c_char,
            ) -> $crate::hipdnnPluginStatus_t;
            /// `hipdnnPluginGetVersion` (required): writes the plugin's own version, a
            /// static NUL-terminated string.
            hipdnnPluginGetVersion_fn = fn hipdnnPluginGetVersion(
                version: *mut *const ::std::ffi::c_char,
            ) -> $crate::hipdnnPluginStatus_t;
            /// `hipdnnPluginGetApiVersion` (optional; absent means `1.0.0`): writes the
            /// ABI version implemented, `MAJOR.MINOR.PATCH`.
            hipdnnPluginGetApiVersion_fn = fn hipdnnPluginGetApiVersion(
                version: *mut *const ::std::ffi::c_char,
            ) -> $crate::hipdnnPluginStatus_t;
            /// `hipdnnPluginGetType` (required): writes the plugin's kind.
            hipdnnPluginGetType_fn = fn hipdnnPluginGetType(
                plugin_type: *mut $crate::hipdnnPluginType_t,
            ) -> $crate::hipdnnPluginStatus_t;
            /// `hipdnnPluginGetLastErrorString` (required): writes a pointer to the
            /// calling thread's last error, valid until its next call into the plugin.
            hipdnnPluginGetLastErrorString_fn = fn hipdnnPluginGetLastErrorString(
                error: *mut *const ::std::ffi::c_char,
            );
            /// `hipdnnPluginSetLoggingCallback` (optional): installs the host's log sink.
            hipdnnPluginSetLoggingCallback_fn = fn hipdnnPluginSetLoggingCallback(
                callback: $crate::hipdnnCallback_t,
            ) -> $crate::hipdnnPluginStatus_t;
            /// `hipdnnPluginSetLogLevel` (optional): the least severe message forwarded.
            hipdnnPluginSetLogLevel_fn = fn hipdnnPluginSetLogLevel(
                level: $crate::hipdnnSeverity_t,
            ) -> $crate::hipdnnPluginStatus_t;

            // EnginePluginApi.h: engine plugins.

            /// `hipdnnEnginePluginGetAllEngineIds` (required): the plugin's engine ids,
            /// two calls (`max_engines == 0` writes the count).
            hipdnnEnginePluginGetAllEngineIds_fn = fn hipdnnEnginePluginGetAllEngineIds(
                engine_ids: *mut i64,
                max_engines: u32,
                num_engines: *mut u32,
            ) -> $crate::hipdnnPluginStatus_t;
            /// `hipdnnEnginePluginGetEngineName` (optional, ABI 1.4): writes an engine's
            /// static name.
            hipdnnEnginePluginGetEngineName_fn = fn hipdnnEnginePluginGetEngineName(
                engine_id: i64,
                name: *mut *const ::std::ffi::c_char,
            ) -> $crate::hipdnnPluginStatus_t;
            /// `hipdnnEnginePluginCreate` (required): makes a plugin handle.
            hipdnnEnginePluginCreate_fn = fn hipdnnEnginePluginCreate(
                handle: *mut $crate::hipdnnEnginePluginHandle_t,
            ) -> $crate::hipdnnPluginStatus_t;
            /// `hipdnnEnginePluginDestroy` (required): frees a plugin handle.
            hipdnnEnginePluginDestroy_fn = fn hipdnnEnginePluginDestroy(
                handle: $crate::hipdnnEnginePluginHandle_t,
            ) -> $crate::hipdnnPluginStatus_t;
            /// `hipdnnEnginePluginSetStream` (required): the stream later executions
            /// enqueue on.
            hipdnnEnginePluginSetStream_fn = fn hipdnnEnginePluginSetStream(
                handle: $crate::hipdnnEnginePluginHandle_t,
                stream: $crate::hipStream_t,
            ) -> $crate::hipdnnPluginStatus_t;
            /// `hipdnnEnginePluginGetApplicableEngineIds` (required): the engines that can
            /// run a serialized graph, two calls.
            hipdnnEnginePluginGetApplicableEngineIds_fn =
                fn hipdnnEnginePluginGetApplicableEngineIds(
                    handle: $crate::hipdnnEnginePluginHandle_t,
                    op_graph: *const $crate::hipdnnPluginConstData_t,
                    engine_ids: *mut i64,
                    max_engines: u32,
                    num_engines: *mut u32,
                ) -> $crate::hipdnnPluginStatus_t;
            /// `hipdnnEnginePluginGetEngineDetails` (required): a plugin-owned
            /// `EngineDetails` buffer for an engine and a graph.
            hipdnnEnginePluginGetEngineDetails_fn = fn hipdnnEnginePluginGetEngineDetails(
                handle: $crate::hipdnnEnginePluginHandle_t,
                engine_id: i64,
                op_graph: *const $crate::hipdnnPluginConstData_t,
                engine_details: *mut $crate::hipdnnPluginConstData_t,
            ) -> $crate::hipdnnPluginStatus_t;
            /// `hipdnnEnginePluginDestroyEngineDetails` (required): gives such a buffer
            /// back.
            hipdnnEnginePluginDestroyEngineDetails_fn =
                fn hipdnnEnginePluginDestroyEngineDetails(
                    handle: $crate::hipdnnEnginePluginHandle_t,
                    engine_details: *mut $crate::hipdnnPluginConstData_t,
                ) -> $crate::hipdnnPluginStatus_t;
            /// `hipdnnEnginePluginGetWorkspaceSize` (required): workspace bytes for an
            /// engine config and a graph.
            hipdnnEnginePluginGetWorkspaceSize_fn = fn hipdnnEnginePluginGetWorkspaceSize(
                handle: $crate::hipdnnEnginePluginHandle_t,
                engine_config: *const $crate::hipdnnPluginConstData_t,
                op_graph: *const $crate::hipdnnPluginConstData_t,
                workspace_size: *mut usize,
            ) -> $crate::hipdnnPluginStatus_t;
            /// `hipdnnEnginePluginCreateExecutionContext` (required): builds a plan.
            hipdnnEnginePluginCreateExecutionContext_fn =
                fn hipdnnEnginePluginCreateExecutionContext(
                    handle: $crate::hipdnnEnginePluginHandle_t,
                    engine_config: *const $crate::hipdnnPluginConstData_t,
                    op_graph: *const $crate::hipdnnPluginConstData_t,
                    execution_context: *mut $crate::hipdnnEnginePluginExecutionContext_t,
                ) -> $crate::hipdnnPluginStatus_t;
            /// `hipdnnEnginePluginDestroyExecutionContext` (required): frees a plan.
            hipdnnEnginePluginDestroyExecutionContext_fn =
                fn hipdnnEnginePluginDestroyExecutionContext(
                    handle: $crate::hipdnnEnginePluginHandle_t,
                    execution_context: $crate::hipdnnEnginePluginExecutionContext_t,
                ) -> $crate::hipdnnPluginStatus_t;
            /// `hipdnnEnginePluginGetWorkspaceSizeFromExecutionContext` (required): the
            /// workspace bytes a built plan needs.
            hipdnnEnginePluginGetWorkspaceSizeFromExecutionContext_fn =
                fn hipdnnEnginePluginGetWorkspaceSizeFromExecutionContext(
                    handle: $crate::hipdnnEnginePluginHandle_t,
                    execution_context: $crate::hipdnnEnginePluginExecutionContext_t,
                    workspace_size: *mut usize,
                ) -> $crate::hipdnnPluginStatus_t;
            /// `hipdnnEnginePluginExecuteOpGraph` (required): enqueues a plan's work.
            hipdnnEnginePluginExecuteOpGraph_fn = fn hipdnnEnginePluginExecuteOpGraph(
                handle: $crate::hipdnnEnginePluginHandle_t,
                execution_context: $crate::hipdnnEnginePluginExecutionContext_t,
                workspace: *mut ::std::ffi::c_void,
                device_buffers: *const $crate::hipdnnPluginDeviceBuffer_t,
                num_device_buffers: u32,
            ) -> $crate::hipdnnPluginStatus_t;
            /// `hipdnnEnginePluginExecuteOpGraphWithOverrides` (optional, ABI 1.1):
            /// executes with per-execution shapes and strides for some tensors.
            hipdnnEnginePluginExecuteOpGraphWithOverrides_fn =
                fn hipdnnEnginePluginExecuteOpGraphWithOverrides(
                    handle: $crate::hipdnnEnginePluginHandle_t,
                    execution_context: $crate::hipdnnEnginePluginExecutionContext_t,
                    workspace: *mut ::std::ffi::c_void,
                    device_buffers: *const $crate::hipdnnPluginDeviceBuffer_t,
                    num_device_buffers: u32,
                    num_overrides: u32,
                    override_unique_ids: *const i64,
                    override_lengths: *const u32,
                    override_shapes: *const *const i64,
                    override_strides: *const *const i64,
                ) -> $crate::hipdnnPluginStatus_t;
            /// `hipdnnEnginePluginSerializeExecutionContext` (optional, with the next
            /// two): a plugin-owned buffer of a plan's bytes.
            hipdnnEnginePluginSerializeExecutionContext_fn =
                fn hipdnnEnginePluginSerializeExecutionContext(
                    handle: $crate::hipdnnEnginePluginHandle_t,
                    execution_context: $crate::hipdnnEnginePluginExecutionContext_t,
                    serialized_context: *mut $crate::hipdnnPluginConstData_t,
                ) -> $crate::hipdnnPluginStatus_t;
            /// `hipdnnEnginePluginDestroySerializedExecutionContext` (optional): gives
            /// such a buffer back.
            hipdnnEnginePluginDestroySerializedExecutionContext_fn =
                fn hipdnnEnginePluginDestroySerializedExecutionContext(
                    handle: $crate::hipdnnEnginePluginHandle_t,
                    serialized_context: *mut $crate::hipdnnPluginConstData_t,
                ) -> $crate::hipdnnPluginStatus_t;
            /// `hipdnnEnginePluginCreateExecutionContextFromSerialized` (optional):
            /// rebuilds a plan from its bytes.
            hipdnnEnginePluginCreateExecutionContextFromSerialized_fn =
                fn hipdnnEnginePluginCreateExecutionContextFromSerialized(
                    handle: $crate::hipdnnEnginePluginHandle_t,
                    serialized_context: *const $crate::hipdnnPluginConstData_t,
                    execution_context: *mut $crate::hipdnnEnginePluginExecutionContext_t,
                ) -> $crate::hipdnnPluginStatus_t;
        }
    };

    (@ aliases $(
        $(#[$doc:meta])*
        $alias:ident = fn $symbol:ident ( $($arg:ident : $ty:ty),* $(,)? ) $(-> $ret:ty)?;
    )*) => {
        $(
            $(#[$doc])*
            pub type $alias = unsafe extern "C" fn($($arg: $ty),*) $(-> $ret)?;
        )*
    };

    (@ symbols $(
        $(#[$doc:meta])*
        $alias:ident = fn $symbol:ident ( $($arg:ident : $ty:ty),* $(,)? ) $(-> $ret:ty)?;
    )*) => {
        /// The symbol name of the function whose pointer type is `$alias`.
        macro_rules! symbol_of {
            $( ($alias) => { stringify!($symbol) }; )*
        }
    };

    (@ declarations $(
        $(#[$doc:meta])*
        $alias:ident = fn $symbol:ident ( $($arg:ident : $ty:ty),* $(,)? ) $(-> $ret:ty)?;
    )*) => {
        unsafe extern "C" {
            $(
                $(#[$doc])*
                #[allow(non_snake_case, reason = "hipDNN's C names, kept exactly")]
                pub fn $symbol($($arg: $ty),*) $(-> $ret)?;
            )*
        }
    };
}

/// Declares every entry point as an `extern "C"` function of the enclosing module, with
/// the signature this crate gives it: for a program that links a plugin's exports into
/// itself (a test of an export macro), which then calls them by name. Every function
/// is `unsafe` to call.
///
/// ```
/// mod exports {
///     // In a program that links a plugin's exports, `exports::hipdnnPluginGetName`
///     // and the others are now callable (unsafely).
///     hipdnn_plugin_abi::declare_entry_points!();
/// }
/// ```
#[macro_export]
macro_rules! declare_entry_points {
    () => {
        $crate::__entry_points!(declarations);
    };
}

crate::__entry_points!(symbols);
