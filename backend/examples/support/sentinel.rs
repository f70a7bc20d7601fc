// Handle entry points for the `collide_*` plugins: Create hands out the same non-null
// sentinel value in every plugin that includes this file (what two plugins sharing one
// global through a symbol collision would do); Destroy and SetStream accept only it.

use crate::raw;
use hipdnn_plugin_sdk::PluginError;
use hipdnn_plugin_sdk::abi::{hipStream_t, hipdnnEnginePluginHandle_t, hipdnnPluginStatus_t};

/// The handle value every `collide_*` plugin returns.
const SENTINEL: usize = 0x1000;

fn sentinel() -> hipdnnEnginePluginHandle_t {
    std::ptr::without_provenance_mut(SENTINEL)
}

fn check(handle: hipdnnEnginePluginHandle_t) -> hipdnn_plugin_sdk::PluginResult<()> {
    if handle == sentinel() {
        Ok(())
    } else {
        Err(PluginError::bad_param(format!(
            "{handle:p} is not this plugin's handle"
        )))
    }
}

/// Succeeds with the sentinel handle.
///
/// # Safety
/// `handle` is null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipdnnEnginePluginCreate(
    handle: *mut hipdnnEnginePluginHandle_t,
) -> hipdnnPluginStatus_t {
    // SAFETY: the caller's contract.
    raw::boundary("hipdnnEnginePluginCreate", || unsafe {
        raw::write(handle, sentinel())
    })
}

/// Accepts the sentinel (nothing to free).
#[unsafe(no_mangle)]
pub extern "C" fn hipdnnEnginePluginDestroy(
    handle: hipdnnEnginePluginHandle_t,
) -> hipdnnPluginStatus_t {
    raw::boundary("hipdnnEnginePluginDestroy", || check(handle))
}

/// Accepts any stream on the sentinel (never dereferenced).
#[unsafe(no_mangle)]
pub extern "C" fn hipdnnEnginePluginSetStream(
    handle: hipdnnEnginePluginHandle_t,
    _: hipStream_t,
) -> hipdnnPluginStatus_t {
    raw::boundary("hipdnnEnginePluginSetStream", || check(handle))
}
