// Raw exports for the misbehaving test plugins: each plugin lists the groups of
// entry points it exports with their well-behaved default bodies, and writes by hand the
// ones that misbehave. Defaults read constants from the plugin's crate root:
// `NAME: &CStr` and `ENGINE_IDS: &[i64]`, and with `api_version` also
// `API_VERSION: &CStr`. Every body runs in the SDK's boundary, so statuses and the
// last error behave as in an SDK plugin.
//
// Groups: `name`, `version`, `api_version`, `plugin_type`, `last_error`, `logging`
// (SetLoggingCallback and SetLogLevel), `engine_ids`, `handles` (Create, Destroy,
// SetStream), `planning` (the 7 required engine functions besides those and
// ExecuteOpGraph; also as two halves: `planning_discovery` = GetApplicableEngineIds,
// GetEngineDetails, DestroyEngineDetails, and `planning_plans` = the other four),
// `execute` (ExecuteOpGraph).

#![allow(dead_code, reason = "each plugin uses a different part")]

use hipdnn_plugin_sdk::abi::*;
use hipdnn_plugin_sdk::{PluginError, PluginResult};

pub use hipdnn_plugin_sdk::boundary;

/// Writes `value` to `out` (BAD_PARAM when null).
///
/// # Safety
/// `out` is null or writable.
pub unsafe fn write<T>(out: *mut T, value: T) -> PluginResult<()> {
    if out.is_null() {
        return Err(PluginError::bad_param("out-parameter is null"));
    }
    // SAFETY: non-null, writable per the caller's contract.
    unsafe { out.write(value) };
    Ok(())
}

/// The well-behaved two-call engine id protocol over `ids`.
///
/// # Safety
/// `engine_ids` has room for `max` ids; `num` is null or writable.
pub unsafe fn write_ids(
    ids: &[i64],
    engine_ids: *mut i64,
    max: u32,
    num: *mut u32,
) -> PluginResult<()> {
    if max == 0 {
        // SAFETY: forwarded contract.
        return unsafe { write(num, ids.len() as u32) };
    }
    if engine_ids.is_null() {
        return Err(PluginError::bad_param("engine_ids is null"));
    }
    let n = ids.len().min(max as usize);
    // SAFETY: room for `max >= n` ids per the contract.
    unsafe { std::ptr::copy_nonoverlapping(ids.as_ptr(), engine_ids, n) };
    // SAFETY: forwarded contract.
    unsafe { write(num, n as u32) }
}

/// The body of every engine function these plugins never get to: loading does not
/// call them.
pub fn unused(entry: &'static str) -> hipdnnPluginStatus_t {
    boundary(entry, || {
        Err(PluginError::internal(format!("{entry} is not implemented")))
    })
}

#[macro_export]
macro_rules! raw_exports {
    ($($group:ident),* $(,)?) => {
        $( $crate::raw_exports!(@ $group); )*
    };
    (@ name) => {
        /// # Safety
        /// `name` is null or writable.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn hipdnnPluginGetName(
            name: *mut *const ::std::ffi::c_char,
        ) -> ::hipdnn_plugin_sdk::abi::hipdnnPluginStatus_t {
            // SAFETY: the caller's contract.
            raw::boundary("hipdnnPluginGetName", || unsafe { raw::write(name, NAME.as_ptr()) })
        }
    };
    (@ version) => {
        /// # Safety
        /// `version` is null or writable.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn hipdnnPluginGetVersion(
            version: *mut *const ::std::ffi::c_char,
        ) -> ::hipdnn_plugin_sdk::abi::hipdnnPluginStatus_t {
            // SAFETY: the caller's contract.
            raw::boundary("hipdnnPluginGetVersion", || unsafe {
                raw::write(version, c"0.0.1".as_ptr())
            })
        }
    };
    (@ api_version) => {
        /// # Safety
        /// `version` is null or writable.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn hipdnnPluginGetApiVersion(
            version: *mut *const ::std::ffi::c_char,
        ) -> ::hipdnn_plugin_sdk::abi::hipdnnPluginStatus_t {
            // SAFETY: the caller's contract.
            raw::boundary("hipdnnPluginGetApiVersion", || unsafe {
                raw::write(version, API_VERSION.as_ptr())
            })
        }
    };
    (@ plugin_type) => {
        /// # Safety
        /// `plugin_type` is null or writable.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn hipdnnPluginGetType(
            plugin_type: *mut ::hipdnn_plugin_sdk::abi::hipdnnPluginType_t,
        ) -> ::hipdnn_plugin_sdk::abi::hipdnnPluginStatus_t {
            // SAFETY: the caller's contract.
            raw::boundary("hipdnnPluginGetType", || unsafe {
                raw::write(plugin_type, ::hipdnn_plugin_sdk::abi::HIPDNN_PLUGIN_TYPE_ENGINE)
            })
        }
    };
    (@ last_error) => {
        /// # Safety
        /// `error` is null or writable.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn hipdnnPluginGetLastErrorString(
            error: *mut *const ::std::ffi::c_char,
        ) {
            // SAFETY: the caller's contract.
            unsafe { ::hipdnn_plugin_sdk::ffi::get_last_error_string(error) }
        }
    };
    (@ logging) => {
        #[unsafe(no_mangle)]
        pub extern "C" fn hipdnnPluginSetLoggingCallback(
            callback: ::hipdnn_plugin_sdk::abi::hipdnnCallback_t,
        ) -> ::hipdnn_plugin_sdk::abi::hipdnnPluginStatus_t {
            ::hipdnn_plugin_sdk::ffi::set_logging_callback(callback)
        }

        #[unsafe(no_mangle)]
        pub extern "C" fn hipdnnPluginSetLogLevel(
            level: ::hipdnn_plugin_sdk::abi::hipdnnSeverity_t,
        ) -> ::hipdnn_plugin_sdk::abi::hipdnnPluginStatus_t {
            ::hipdnn_plugin_sdk::ffi::set_log_level(level)
        }
    };
    (@ engine_ids) => {
        /// # Safety
        /// `engine_ids` has room for `max_engines` ids; `num_engines` is writable.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn hipdnnEnginePluginGetAllEngineIds(
            engine_ids: *mut i64,
            max_engines: u32,
            num_engines: *mut u32,
        ) -> ::hipdnn_plugin_sdk::abi::hipdnnPluginStatus_t {
            // SAFETY: the caller's contract.
            raw::boundary("hipdnnEnginePluginGetAllEngineIds", || unsafe {
                raw::write_ids(ENGINE_IDS, engine_ids, max_engines, num_engines)
            })
        }
    };
    (@ handles) => {
        #[unsafe(no_mangle)]
        pub extern "C" fn hipdnnEnginePluginCreate(
            _: *mut ::hipdnn_plugin_sdk::abi::hipdnnEnginePluginHandle_t,
        ) -> ::hipdnn_plugin_sdk::abi::hipdnnPluginStatus_t {
            raw::unused("hipdnnEnginePluginCreate")
        }

        #[unsafe(no_mangle)]
        pub extern "C" fn hipdnnEnginePluginDestroy(
            _: ::hipdnn_plugin_sdk::abi::hipdnnEnginePluginHandle_t,
        ) -> ::hipdnn_plugin_sdk::abi::hipdnnPluginStatus_t {
            raw::unused("hipdnnEnginePluginDestroy")
        }

        #[unsafe(no_mangle)]
        pub extern "C" fn hipdnnEnginePluginSetStream(
            _: ::hipdnn_plugin_sdk::abi::hipdnnEnginePluginHandle_t,
            _: ::hipdnn_plugin_sdk::abi::hipStream_t,
        ) -> ::hipdnn_plugin_sdk::abi::hipdnnPluginStatus_t {
            raw::unused("hipdnnEnginePluginSetStream")
        }
    };
    (@ planning) => {
        $crate::raw_exports!(@ planning_discovery);
        $crate::raw_exports!(@ planning_plans);
    };
    (@ planning_discovery) => {
        #[unsafe(no_mangle)]
        pub extern "C" fn hipdnnEnginePluginGetApplicableEngineIds(
            _: ::hipdnn_plugin_sdk::abi::hipdnnEnginePluginHandle_t,
            _: *const ::hipdnn_plugin_sdk::abi::hipdnnPluginConstData_t,
            _: *mut i64,
            _: u32,
            _: *mut u32,
        ) -> ::hipdnn_plugin_sdk::abi::hipdnnPluginStatus_t {
            raw::unused("hipdnnEnginePluginGetApplicableEngineIds")
        }

        #[unsafe(no_mangle)]
        pub extern "C" fn hipdnnEnginePluginGetEngineDetails(
            _: ::hipdnn_plugin_sdk::abi::hipdnnEnginePluginHandle_t,
            _: i64,
            _: *const ::hipdnn_plugin_sdk::abi::hipdnnPluginConstData_t,
            _: *mut ::hipdnn_plugin_sdk::abi::hipdnnPluginConstData_t,
        ) -> ::hipdnn_plugin_sdk::abi::hipdnnPluginStatus_t {
            raw::unused("hipdnnEnginePluginGetEngineDetails")
        }

        #[unsafe(no_mangle)]
        pub extern "C" fn hipdnnEnginePluginDestroyEngineDetails(
            _: ::hipdnn_plugin_sdk::abi::hipdnnEnginePluginHandle_t,
            _: *mut ::hipdnn_plugin_sdk::abi::hipdnnPluginConstData_t,
        ) -> ::hipdnn_plugin_sdk::abi::hipdnnPluginStatus_t {
            raw::unused("hipdnnEnginePluginDestroyEngineDetails")
        }

    };
    (@ planning_plans) => {
        #[unsafe(no_mangle)]
        pub extern "C" fn hipdnnEnginePluginGetWorkspaceSize(
            _: ::hipdnn_plugin_sdk::abi::hipdnnEnginePluginHandle_t,
            _: *const ::hipdnn_plugin_sdk::abi::hipdnnPluginConstData_t,
            _: *const ::hipdnn_plugin_sdk::abi::hipdnnPluginConstData_t,
            _: *mut usize,
        ) -> ::hipdnn_plugin_sdk::abi::hipdnnPluginStatus_t {
            raw::unused("hipdnnEnginePluginGetWorkspaceSize")
        }

        #[unsafe(no_mangle)]
        pub extern "C" fn hipdnnEnginePluginCreateExecutionContext(
            _: ::hipdnn_plugin_sdk::abi::hipdnnEnginePluginHandle_t,
            _: *const ::hipdnn_plugin_sdk::abi::hipdnnPluginConstData_t,
            _: *const ::hipdnn_plugin_sdk::abi::hipdnnPluginConstData_t,
            _: *mut ::hipdnn_plugin_sdk::abi::hipdnnEnginePluginExecutionContext_t,
        ) -> ::hipdnn_plugin_sdk::abi::hipdnnPluginStatus_t {
            raw::unused("hipdnnEnginePluginCreateExecutionContext")
        }

        #[unsafe(no_mangle)]
        pub extern "C" fn hipdnnEnginePluginDestroyExecutionContext(
            _: ::hipdnn_plugin_sdk::abi::hipdnnEnginePluginHandle_t,
            _: ::hipdnn_plugin_sdk::abi::hipdnnEnginePluginExecutionContext_t,
        ) -> ::hipdnn_plugin_sdk::abi::hipdnnPluginStatus_t {
            raw::unused("hipdnnEnginePluginDestroyExecutionContext")
        }

        #[unsafe(no_mangle)]
        pub extern "C" fn hipdnnEnginePluginGetWorkspaceSizeFromExecutionContext(
            _: ::hipdnn_plugin_sdk::abi::hipdnnEnginePluginHandle_t,
            _: ::hipdnn_plugin_sdk::abi::hipdnnEnginePluginExecutionContext_t,
            _: *mut usize,
        ) -> ::hipdnn_plugin_sdk::abi::hipdnnPluginStatus_t {
            raw::unused("hipdnnEnginePluginGetWorkspaceSizeFromExecutionContext")
        }
    };
    (@ execute) => {
        #[unsafe(no_mangle)]
        pub extern "C" fn hipdnnEnginePluginExecuteOpGraph(
            _: ::hipdnn_plugin_sdk::abi::hipdnnEnginePluginHandle_t,
            _: ::hipdnn_plugin_sdk::abi::hipdnnEnginePluginExecutionContext_t,
            _: *mut ::std::ffi::c_void,
            _: *const ::hipdnn_plugin_sdk::abi::hipdnnPluginDeviceBuffer_t,
            _: u32,
        ) -> ::hipdnn_plugin_sdk::abi::hipdnnPluginStatus_t {
            raw::unused("hipdnnEnginePluginExecuteOpGraph")
        }
    };
}
