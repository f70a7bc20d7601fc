// Loads, but hipdnnEnginePluginCreate reports SUCCESS and writes a null handle. A handle
// skips it ("returned null handle") and serves the others.

use std::ffi::CStr;

use hipdnn_plugin_sdk::abi::{hipStream_t, hipdnnEnginePluginHandle_t, hipdnnPluginStatus_t};

#[path = "support/raw.rs"]
mod raw;

const NAME: &CStr = c"bad_null_handle";
const API_VERSION: &CStr = c"1.4.0";
const ENGINE_IDS: &[i64] = &[902];
raw_exports!(
    name,
    version,
    api_version,
    plugin_type,
    last_error,
    logging,
    engine_ids,
    planning,
    execute
);

/// Succeeds with a null handle.
///
/// # Safety
/// `handle` is null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipdnnEnginePluginCreate(
    handle: *mut hipdnnEnginePluginHandle_t,
) -> hipdnnPluginStatus_t {
    // SAFETY: the caller's contract.
    raw::boundary("hipdnnEnginePluginCreate", || unsafe {
        raw::write(handle, std::ptr::null_mut())
    })
}

/// Null is a no-op.
#[unsafe(no_mangle)]
pub extern "C" fn hipdnnEnginePluginDestroy(_: hipdnnEnginePluginHandle_t) -> hipdnnPluginStatus_t {
    raw::boundary("hipdnnEnginePluginDestroy", || Ok(()))
}

#[unsafe(no_mangle)]
pub extern "C" fn hipdnnEnginePluginSetStream(
    _: hipdnnEnginePluginHandle_t,
    _: hipStream_t,
) -> hipdnnPluginStatus_t {
    raw::unused("hipdnnEnginePluginSetStream")
}
