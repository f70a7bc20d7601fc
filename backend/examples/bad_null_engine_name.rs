// Loads, but hipdnnEnginePluginGetEngineName succeeds for engine 821 with a null name:
// admission drops that engine and keeps engine 822, which the plugin does not name.

use std::ffi::{CStr, c_char};

use hipdnn_plugin_sdk::abi::{HIPDNN_PLUGIN_STATUS_NOT_APPLICABLE, hipdnnPluginStatus_t};

#[path = "support/raw.rs"]
mod raw;

const NAME: &CStr = c"bad_null_engine_name";
const API_VERSION: &CStr = c"1.4.0";
const ENGINE_IDS: &[i64] = &[821, 822];
raw_exports!(
    name,
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

/// A null name for engine 821, no name for the others.
///
/// # Safety
/// `name` is null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipdnnEnginePluginGetEngineName(
    engine_id: i64,
    name: *mut *const c_char,
) -> hipdnnPluginStatus_t {
    if engine_id != 821 {
        return HIPDNN_PLUGIN_STATUS_NOT_APPLICABLE;
    }
    // SAFETY: the caller's contract.
    raw::boundary("hipdnnEnginePluginGetEngineName", || unsafe {
        raw::write(name, std::ptr::null())
    })
}
