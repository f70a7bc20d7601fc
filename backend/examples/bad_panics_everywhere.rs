// Every entry point panics, inside the SDK's boundary: each call must come back as
// INTERNAL_ERROR with "panic in <entry>: ..." as the last error, and the host must not
// go down. Loading stops at the first call, hipdnnPluginGetName.

use hipdnn_plugin_sdk::abi::*;
use hipdnn_plugin_sdk::boundary;
use std::ffi::{c_char, c_void};

macro_rules! panicking {
    ($( $name:ident ( $($ty:ty),* ); )*) => {
        $(
            #[unsafe(no_mangle)]
            #[allow(non_snake_case)]
            pub extern "C" fn $name($(_: $ty),*) -> hipdnnPluginStatus_t {
                boundary(stringify!($name), || {
                    panic!("deliberate panic in {}", stringify!($name))
                })
            }
        )*
    };
}

panicking! {
    hipdnnPluginGetName(*mut *const c_char);
    hipdnnPluginGetVersion(*mut *const c_char);
    hipdnnPluginGetApiVersion(*mut *const c_char);
    hipdnnPluginGetType(*mut hipdnnPluginType_t);
    hipdnnPluginSetLoggingCallback(hipdnnCallback_t);
    hipdnnPluginSetLogLevel(hipdnnSeverity_t);
    hipdnnEnginePluginGetAllEngineIds(*mut i64, u32, *mut u32);
    hipdnnEnginePluginGetEngineName(i64, *mut *const c_char);
    hipdnnEnginePluginCreate(*mut hipdnnEnginePluginHandle_t);
    hipdnnEnginePluginDestroy(hipdnnEnginePluginHandle_t);
    hipdnnEnginePluginSetStream(hipdnnEnginePluginHandle_t, hipStream_t);
    hipdnnEnginePluginGetApplicableEngineIds(
        hipdnnEnginePluginHandle_t, *const hipdnnPluginConstData_t, *mut i64, u32, *mut u32);
    hipdnnEnginePluginGetEngineDetails(
        hipdnnEnginePluginHandle_t, i64, *const hipdnnPluginConstData_t,
        *mut hipdnnPluginConstData_t);
    hipdnnEnginePluginDestroyEngineDetails(
        hipdnnEnginePluginHandle_t, *mut hipdnnPluginConstData_t);
    hipdnnEnginePluginGetWorkspaceSize(
        hipdnnEnginePluginHandle_t, *const hipdnnPluginConstData_t,
        *const hipdnnPluginConstData_t, *mut usize);
    hipdnnEnginePluginCreateExecutionContext(
        hipdnnEnginePluginHandle_t, *const hipdnnPluginConstData_t,
        *const hipdnnPluginConstData_t, *mut hipdnnEnginePluginExecutionContext_t);
    hipdnnEnginePluginDestroyExecutionContext(
        hipdnnEnginePluginHandle_t, hipdnnEnginePluginExecutionContext_t);
    hipdnnEnginePluginGetWorkspaceSizeFromExecutionContext(
        hipdnnEnginePluginHandle_t, hipdnnEnginePluginExecutionContext_t, *mut usize);
    hipdnnEnginePluginExecuteOpGraph(
        hipdnnEnginePluginHandle_t, hipdnnEnginePluginExecutionContext_t, *mut c_void,
        *const hipdnnPluginDeviceBuffer_t, u32);
}

/// The SDK's last error: reading it must not panic.
///
/// # Safety
/// `error` is null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipdnnPluginGetLastErrorString(error: *mut *const c_char) {
    // SAFETY: the caller's contract.
    unsafe { hipdnn_plugin_sdk::ffi::get_last_error_string(error) }
}
