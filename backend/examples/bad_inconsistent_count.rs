// Rejected: the sizing call of GetAllEngineIds says 3 engines, the second call writes 2.

use std::ffi::CStr;

#[path = "support/raw.rs"]
mod raw;

const NAME: &CStr = c"bad_inconsistent_count";
const API_VERSION: &CStr = c"1.4.0";
raw_exports!(
    name,
    version,
    api_version,
    plugin_type,
    last_error,
    logging,
    handles,
    planning,
    execute
);

/// Counts 3 engines but writes only 2 ids.
///
/// # Safety
/// `engine_ids` has room for `max_engines` ids; `num_engines` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipdnnEnginePluginGetAllEngineIds(
    engine_ids: *mut i64,
    max_engines: u32,
    num_engines: *mut u32,
) -> hipdnn_plugin_sdk::abi::hipdnnPluginStatus_t {
    raw::boundary("hipdnnEnginePluginGetAllEngineIds", || {
        if max_engines == 0 {
            // SAFETY: the caller's contract.
            return unsafe { raw::write(num_engines, 3) };
        }
        // SAFETY: the caller's contract.
        unsafe { raw::write_ids(&[801, 802], engine_ids, max_engines, num_engines) }
    })
}
