// Rejected: hipdnnPluginGetName fails with INTERNAL_ERROR and a last error.

use std::ffi::CStr;

#[path = "support/raw.rs"]
mod raw;

const API_VERSION: &CStr = c"1.4.0";
const ENGINE_IDS: &[i64] = &[701];
raw_exports!(
    version,
    api_version,
    plugin_type,
    last_error,
    logging,
    engine_ids,
    handles,
    planning,
    execute
);

/// Fails: the name is "unavailable".
#[unsafe(no_mangle)]
pub extern "C" fn hipdnnPluginGetName(
    _: *mut *const std::ffi::c_char,
) -> hipdnn_plugin_sdk::abi::hipdnnPluginStatus_t {
    raw::boundary("hipdnnPluginGetName", || {
        Err(hipdnn_plugin_sdk::PluginError::internal(
            "the plugin name is unavailable",
        ))
    })
}
