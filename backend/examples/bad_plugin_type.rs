// Rejected: says it is a heuristic plugin.

use std::ffi::CStr;

#[path = "support/raw.rs"]
mod raw;

const NAME: &CStr = c"bad_plugin_type";
const API_VERSION: &CStr = c"1.4.0";
const ENGINE_IDS: &[i64] = &[601];
raw_exports!(
    name,
    version,
    api_version,
    last_error,
    logging,
    engine_ids,
    handles,
    planning,
    execute
);

/// Writes `HIPDNN_PLUGIN_TYPE_HEURISTIC`.
///
/// # Safety
/// `plugin_type` is null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipdnnPluginGetType(
    plugin_type: *mut hipdnn_plugin_sdk::abi::hipdnnPluginType_t,
) -> hipdnn_plugin_sdk::abi::hipdnnPluginStatus_t {
    // SAFETY: the caller's contract.
    raw::boundary("hipdnnPluginGetType", || unsafe {
        raw::write(
            plugin_type,
            hipdnn_plugin_sdk::abi::HIPDNN_PLUGIN_TYPE_HEURISTIC,
        )
    })
}
