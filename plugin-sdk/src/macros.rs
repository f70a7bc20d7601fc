//! The export macro.

/// Exports the whole engine-plugin C ABI for a type implementing
/// [`EnginePlugin`](crate::EnginePlugin).
///
/// Invoke it once, at the root of a `cdylib` crate:
///
/// ```ignore
/// hipdnn_plugin_sdk::export_engine_plugin!(MyPlugin);
/// // with the three plan-serialization functions (MyPlugin: SerializablePlugin):
/// hipdnn_plugin_sdk::export_engine_plugin!(MyPlugin, serialization);
/// ```
///
/// It emits the 7 base functions (`hipdnnPluginGetName`, ...), the 12 required engine
/// functions, `hipdnnEnginePluginGetEngineName`, and with `serialization` the three
/// plan-serialization functions: nothing else is exported. Every function forwards to
/// the function of the same role in [`ffi`](crate::ffi), inside one panic boundary.
#[macro_export]
macro_rules! export_engine_plugin {
    ($plugin:ty) => {
        $crate::__export_engine_plugin_base!($plugin, {});
    };
    ($plugin:ty, serialization) => {
        // Expanded inside the base's scope: the serialization functions share its
        // engine manager.
        $crate::__export_engine_plugin_base!($plugin, {
            $crate::__export_engine_plugin_serialization!($plugin);
        });
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __export_engine_plugin_base {
    ($plugin:ty, { $($extra:tt)* }) => {
        const _: () = {
            use ::std::ffi::{c_char, c_void};
            use $crate::abi::*;
            use $crate::ffi;

            static ENGINES: ffi::ManagerCell<$plugin> = ffi::ManagerCell::<$plugin>::new();

            /// Writes the plugin's static, NUL-terminated name.
            ///
            /// # Safety
            /// `name` is null or writable.
            #[unsafe(no_mangle)]
            #[allow(non_snake_case)]
            pub unsafe extern "C" fn hipdnnPluginGetName(
                name: *mut *const c_char,
            ) -> hipdnnPluginStatus_t {
                // SAFETY: the caller's contract is the function's.
                unsafe { ffi::get_name::<$plugin>(name) }
            }

            /// Writes the plugin's static, NUL-terminated version.
            ///
            /// # Safety
            /// `version` is null or writable.
            #[unsafe(no_mangle)]
            #[allow(non_snake_case)]
            pub unsafe extern "C" fn hipdnnPluginGetVersion(
                version: *mut *const c_char,
            ) -> hipdnnPluginStatus_t {
                // SAFETY: the caller's contract is the function's.
                unsafe { ffi::get_version::<$plugin>(version) }
            }

            /// Writes the engine plugin API version the plugin implements.
            ///
            /// # Safety
            /// `version` is null or writable.
            #[unsafe(no_mangle)]
            #[allow(non_snake_case)]
            pub unsafe extern "C" fn hipdnnPluginGetApiVersion(
                version: *mut *const c_char,
            ) -> hipdnnPluginStatus_t {
                // SAFETY: the caller's contract is the function's.
                unsafe { ffi::get_api_version::<$plugin>(version) }
            }

            /// Writes `HIPDNN_PLUGIN_TYPE_ENGINE`.
            ///
            /// # Safety
            /// `plugin_type` is null or writable.
            #[unsafe(no_mangle)]
            #[allow(non_snake_case)]
            pub unsafe extern "C" fn hipdnnPluginGetType(
                plugin_type: *mut hipdnnPluginType_t,
            ) -> hipdnnPluginStatus_t {
                // SAFETY: the caller's contract is the function's.
                unsafe { ffi::get_type::<$plugin>(plugin_type) }
            }

            /// Writes a pointer to this thread's last error (valid until the thread's
            /// next call into the plugin). Null is a no-op.
            ///
            /// # Safety
            /// `error` is null or writable.
            #[unsafe(no_mangle)]
            #[allow(non_snake_case)]
            pub unsafe extern "C" fn hipdnnPluginGetLastErrorString(error: *mut *const c_char) {
                // SAFETY: the caller's contract is the function's.
                unsafe { ffi::get_last_error_string(error) }
            }

            /// Installs the host's log sink (null: `BAD_PARAM`).
            #[unsafe(no_mangle)]
            #[allow(non_snake_case)]
            pub extern "C" fn hipdnnPluginSetLoggingCallback(
                callback: hipdnnCallback_t,
            ) -> hipdnnPluginStatus_t {
                ffi::set_logging_callback(callback)
            }

            /// Sets the lowest severity forwarded to the host.
            #[unsafe(no_mangle)]
            #[allow(non_snake_case)]
            pub extern "C" fn hipdnnPluginSetLogLevel(
                level: hipdnnSeverity_t,
            ) -> hipdnnPluginStatus_t {
                ffi::set_log_level(level)
            }

            /// Two-call engine ids: `max_engines == 0` writes the count.
            ///
            /// # Safety
            /// `engine_ids` has room for `max_engines` ids; `num_engines` is writable.
            #[unsafe(no_mangle)]
            #[allow(non_snake_case)]
            pub unsafe extern "C" fn hipdnnEnginePluginGetAllEngineIds(
                engine_ids: *mut i64,
                max_engines: u32,
                num_engines: *mut u32,
            ) -> hipdnnPluginStatus_t {
                // SAFETY: the caller's contract is the function's.
                unsafe {
                    ffi::get_all_engine_ids::<$plugin>(
                        &ENGINES,
                        engine_ids,
                        max_engines,
                        num_engines,
                    )
                }
            }

            /// Writes the engine's static name (`NOT_APPLICABLE` when it has none).
            ///
            /// # Safety
            /// `name` is null or writable.
            #[unsafe(no_mangle)]
            #[allow(non_snake_case)]
            pub unsafe extern "C" fn hipdnnEnginePluginGetEngineName(
                engine_id: i64,
                name: *mut *const c_char,
            ) -> hipdnnPluginStatus_t {
                // SAFETY: the caller's contract is the function's.
                unsafe { ffi::get_engine_name::<$plugin>(&ENGINES, engine_id, name) }
            }

            /// Creates a plugin handle, freed by `hipdnnEnginePluginDestroy`.
            ///
            /// # Safety
            /// `handle` is null or writable.
            #[unsafe(no_mangle)]
            #[allow(non_snake_case)]
            pub unsafe extern "C" fn hipdnnEnginePluginCreate(
                handle: *mut hipdnnEnginePluginHandle_t,
            ) -> hipdnnPluginStatus_t {
                // SAFETY: the caller's contract is the function's.
                unsafe { ffi::create::<$plugin>(&ENGINES, handle) }
            }

            /// Destroys a plugin handle (null: no-op).
            ///
            /// # Safety
            /// `handle` is null or a live handle of this plugin, unused afterwards.
            #[unsafe(no_mangle)]
            #[allow(non_snake_case)]
            pub unsafe extern "C" fn hipdnnEnginePluginDestroy(
                handle: hipdnnEnginePluginHandle_t,
            ) -> hipdnnPluginStatus_t {
                // SAFETY: the caller's contract is the function's.
                unsafe { ffi::destroy::<$plugin>(handle) }
            }

            /// Sets the stream work is enqueued on.
            ///
            /// # Safety
            /// `handle` is null or a live handle of this plugin.
            #[unsafe(no_mangle)]
            #[allow(non_snake_case)]
            pub unsafe extern "C" fn hipdnnEnginePluginSetStream(
                handle: hipdnnEnginePluginHandle_t,
                stream: hipStream_t,
            ) -> hipdnnPluginStatus_t {
                // SAFETY: the caller's contract is the function's.
                unsafe { ffi::set_stream::<$plugin>(handle, stream) }
            }

            /// Two-call ids of the engines that can run the serialized graph.
            ///
            /// # Safety
            /// Pointers are null or valid as documented in `EnginePluginApi.h`.
            #[unsafe(no_mangle)]
            #[allow(non_snake_case)]
            pub unsafe extern "C" fn hipdnnEnginePluginGetApplicableEngineIds(
                handle: hipdnnEnginePluginHandle_t,
                op_graph: *const hipdnnPluginConstData_t,
                engine_ids: *mut i64,
                max_engines: u32,
                num_engines: *mut u32,
            ) -> hipdnnPluginStatus_t {
                // SAFETY: the caller's contract is the function's.
                unsafe {
                    ffi::get_applicable_engine_ids::<$plugin>(
                        &ENGINES,
                        handle,
                        op_graph,
                        engine_ids,
                        max_engines,
                        num_engines,
                    )
                }
            }

            /// Writes a plugin-owned `EngineDetails` buffer, freed by
            /// `hipdnnEnginePluginDestroyEngineDetails`.
            ///
            /// # Safety
            /// Pointers are null or valid as documented in `EnginePluginApi.h`.
            #[unsafe(no_mangle)]
            #[allow(non_snake_case)]
            pub unsafe extern "C" fn hipdnnEnginePluginGetEngineDetails(
                handle: hipdnnEnginePluginHandle_t,
                engine_id: i64,
                op_graph: *const hipdnnPluginConstData_t,
                engine_details: *mut hipdnnPluginConstData_t,
            ) -> hipdnnPluginStatus_t {
                // SAFETY: the caller's contract is the function's.
                unsafe {
                    ffi::get_engine_details::<$plugin>(
                        &ENGINES,
                        handle,
                        engine_id,
                        op_graph,
                        engine_details,
                    )
                }
            }

            /// Frees engine details and zeroes the span.
            ///
            /// # Safety
            /// Pointers are null or valid as documented in `EnginePluginApi.h`.
            #[unsafe(no_mangle)]
            #[allow(non_snake_case)]
            pub unsafe extern "C" fn hipdnnEnginePluginDestroyEngineDetails(
                handle: hipdnnEnginePluginHandle_t,
                engine_details: *mut hipdnnPluginConstData_t,
            ) -> hipdnnPluginStatus_t {
                // SAFETY: the caller's contract is the function's.
                unsafe { ffi::destroy_engine_details::<$plugin>(handle, engine_details) }
            }

            /// Workspace bytes for a config and graph.
            ///
            /// # Safety
            /// Pointers are null or valid as documented in `EnginePluginApi.h`.
            #[unsafe(no_mangle)]
            #[allow(non_snake_case)]
            pub unsafe extern "C" fn hipdnnEnginePluginGetWorkspaceSize(
                handle: hipdnnEnginePluginHandle_t,
                engine_config: *const hipdnnPluginConstData_t,
                op_graph: *const hipdnnPluginConstData_t,
                workspace_size: *mut usize,
            ) -> hipdnnPluginStatus_t {
                // SAFETY: the caller's contract is the function's.
                unsafe {
                    ffi::get_workspace_size::<$plugin>(
                        &ENGINES,
                        handle,
                        engine_config,
                        op_graph,
                        workspace_size,
                    )
                }
            }

            /// Builds an execution context, freed by
            /// `hipdnnEnginePluginDestroyExecutionContext`.
            ///
            /// # Safety
            /// Pointers are null or valid as documented in `EnginePluginApi.h`.
            #[unsafe(no_mangle)]
            #[allow(non_snake_case)]
            pub unsafe extern "C" fn hipdnnEnginePluginCreateExecutionContext(
                handle: hipdnnEnginePluginHandle_t,
                engine_config: *const hipdnnPluginConstData_t,
                op_graph: *const hipdnnPluginConstData_t,
                execution_context: *mut hipdnnEnginePluginExecutionContext_t,
            ) -> hipdnnPluginStatus_t {
                // SAFETY: the caller's contract is the function's.
                unsafe {
                    ffi::create_execution_context::<$plugin>(
                        &ENGINES,
                        handle,
                        engine_config,
                        op_graph,
                        execution_context,
                    )
                }
            }

            /// Destroys an execution context (null: no-op).
            ///
            /// # Safety
            /// Pointers are null or valid as documented in `EnginePluginApi.h`.
            #[unsafe(no_mangle)]
            #[allow(non_snake_case)]
            pub unsafe extern "C" fn hipdnnEnginePluginDestroyExecutionContext(
                handle: hipdnnEnginePluginHandle_t,
                execution_context: hipdnnEnginePluginExecutionContext_t,
            ) -> hipdnnPluginStatus_t {
                // SAFETY: the caller's contract is the function's.
                unsafe { ffi::destroy_execution_context::<$plugin>(handle, execution_context) }
            }

            /// Workspace bytes of a built execution context.
            ///
            /// # Safety
            /// Pointers are null or valid as documented in `EnginePluginApi.h`.
            #[unsafe(no_mangle)]
            #[allow(non_snake_case)]
            pub unsafe extern "C" fn hipdnnEnginePluginGetWorkspaceSizeFromExecutionContext(
                handle: hipdnnEnginePluginHandle_t,
                execution_context: hipdnnEnginePluginExecutionContext_t,
                workspace_size: *mut usize,
            ) -> hipdnnPluginStatus_t {
                // SAFETY: the caller's contract is the function's.
                unsafe {
                    ffi::get_workspace_size_from_execution_context::<$plugin>(
                        handle,
                        execution_context,
                        workspace_size,
                    )
                }
            }

            /// Runs an execution context on the handle's stream.
            ///
            /// # Safety
            /// Pointers are null or valid as documented in `EnginePluginApi.h`.
            #[unsafe(no_mangle)]
            #[allow(non_snake_case)]
            pub unsafe extern "C" fn hipdnnEnginePluginExecuteOpGraph(
                handle: hipdnnEnginePluginHandle_t,
                execution_context: hipdnnEnginePluginExecutionContext_t,
                workspace: *mut c_void,
                device_buffers: *const hipdnnPluginDeviceBuffer_t,
                num_device_buffers: u32,
            ) -> hipdnnPluginStatus_t {
                // SAFETY: the caller's contract is the function's.
                unsafe {
                    ffi::execute_op_graph::<$plugin>(
                        handle,
                        execution_context,
                        workspace,
                        device_buffers,
                        num_device_buffers,
                    )
                }
            }
            // Every export has the signature a host casts its symbol to (the ABI crate's
            // `*_fn` types): a mismatch does not compile.
            const _: () = {
                let _: hipdnnPluginGetName_fn = hipdnnPluginGetName;
                let _: hipdnnPluginGetVersion_fn = hipdnnPluginGetVersion;
                let _: hipdnnPluginGetApiVersion_fn = hipdnnPluginGetApiVersion;
                let _: hipdnnPluginGetType_fn = hipdnnPluginGetType;
                let _: hipdnnPluginGetLastErrorString_fn = hipdnnPluginGetLastErrorString;
                let _: hipdnnPluginSetLoggingCallback_fn = hipdnnPluginSetLoggingCallback;
                let _: hipdnnPluginSetLogLevel_fn = hipdnnPluginSetLogLevel;
                let _: hipdnnEnginePluginGetAllEngineIds_fn = hipdnnEnginePluginGetAllEngineIds;
                let _: hipdnnEnginePluginGetEngineName_fn = hipdnnEnginePluginGetEngineName;
                let _: hipdnnEnginePluginCreate_fn = hipdnnEnginePluginCreate;
                let _: hipdnnEnginePluginDestroy_fn = hipdnnEnginePluginDestroy;
                let _: hipdnnEnginePluginSetStream_fn = hipdnnEnginePluginSetStream;
                let _: hipdnnEnginePluginGetApplicableEngineIds_fn =
                    hipdnnEnginePluginGetApplicableEngineIds;
                let _: hipdnnEnginePluginGetEngineDetails_fn = hipdnnEnginePluginGetEngineDetails;
                let _: hipdnnEnginePluginDestroyEngineDetails_fn =
                    hipdnnEnginePluginDestroyEngineDetails;
                let _: hipdnnEnginePluginGetWorkspaceSize_fn = hipdnnEnginePluginGetWorkspaceSize;
                let _: hipdnnEnginePluginCreateExecutionContext_fn =
                    hipdnnEnginePluginCreateExecutionContext;
                let _: hipdnnEnginePluginDestroyExecutionContext_fn =
                    hipdnnEnginePluginDestroyExecutionContext;
                let _: hipdnnEnginePluginGetWorkspaceSizeFromExecutionContext_fn =
                    hipdnnEnginePluginGetWorkspaceSizeFromExecutionContext;
                let _: hipdnnEnginePluginExecuteOpGraph_fn = hipdnnEnginePluginExecuteOpGraph;
            };

            $($extra)*
        };
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __export_engine_plugin_serialization {
    ($plugin:ty) => {
        const _: () = {
            /// Serializes an execution context into plugin-owned bytes.
            ///
            /// # Safety
            /// Pointers are null or valid as documented in `EnginePluginApi.h`.
            #[unsafe(no_mangle)]
            #[allow(non_snake_case)]
            pub unsafe extern "C" fn hipdnnEnginePluginSerializeExecutionContext(
                handle: hipdnnEnginePluginHandle_t,
                execution_context: hipdnnEnginePluginExecutionContext_t,
                serialized_context: *mut hipdnnPluginConstData_t,
            ) -> hipdnnPluginStatus_t {
                // SAFETY: the caller's contract is the function's.
                unsafe {
                    ffi::serialize_execution_context::<$plugin>(
                        handle,
                        execution_context,
                        serialized_context,
                    )
                }
            }

            /// Frees serialized bytes and zeroes the span.
            ///
            /// # Safety
            /// Pointers are null or valid as documented in `EnginePluginApi.h`.
            #[unsafe(no_mangle)]
            #[allow(non_snake_case)]
            pub unsafe extern "C" fn hipdnnEnginePluginDestroySerializedExecutionContext(
                handle: hipdnnEnginePluginHandle_t,
                serialized_context: *mut hipdnnPluginConstData_t,
            ) -> hipdnnPluginStatus_t {
                // SAFETY: the caller's contract is the function's.
                unsafe {
                    ffi::destroy_serialized_execution_context::<$plugin>(handle, serialized_context)
                }
            }

            /// Rebuilds an execution context from serialized bytes.
            ///
            /// # Safety
            /// Pointers are null or valid as documented in `EnginePluginApi.h`.
            #[unsafe(no_mangle)]
            #[allow(non_snake_case)]
            pub unsafe extern "C" fn hipdnnEnginePluginCreateExecutionContextFromSerialized(
                handle: hipdnnEnginePluginHandle_t,
                serialized_context: *const hipdnnPluginConstData_t,
                execution_context: *mut hipdnnEnginePluginExecutionContext_t,
            ) -> hipdnnPluginStatus_t {
                // SAFETY: the caller's contract is the function's.
                unsafe {
                    ffi::create_execution_context_from_serialized::<$plugin>(
                        &ENGINES,
                        handle,
                        serialized_context,
                        execution_context,
                    )
                }
            }
            // Every export has the signature a host casts its symbol to (the ABI crate's
            // `*_fn` types): a mismatch does not compile.
            const _: () = {
                let _: hipdnnEnginePluginSerializeExecutionContext_fn =
                    hipdnnEnginePluginSerializeExecutionContext;
                let _: hipdnnEnginePluginDestroySerializedExecutionContext_fn =
                    hipdnnEnginePluginDestroySerializedExecutionContext;
                let _: hipdnnEnginePluginCreateExecutionContextFromSerialized_fn =
                    hipdnnEnginePluginCreateExecutionContextFromSerialized;
            };
        };
    };
}
