// Loads; hipdnnEnginePluginGetEngineName succeeds without giving a name: a null name for
// engine 821 and for MIOPEN_ENGINE's id, an empty one for engine 822. As in hipDNN, every
// engine is kept: 821 and 822 are named by their ids in hex, the other from the registry.

use std::ffi::{CStr, c_char};

use hipdnn_data_sdk::engine_name_to_id;
use hipdnn_plugin_sdk::abi::{HIPDNN_PLUGIN_STATUS_NOT_APPLICABLE, hipdnnPluginStatus_t};

#[path = "support/raw.rs"]
mod raw;

const NAME: &CStr = c"ok_unnamed_engines";
const API_VERSION: &CStr = c"1.4.0";
const REGISTERED: i64 = engine_name_to_id("MIOPEN_ENGINE");
const ENGINE_IDS: &[i64] = &[821, 822, REGISTERED];
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

/// SUCCESS with a null name for 821 and `REGISTERED`, an empty one for 822.
///
/// # Safety
/// `name` is null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipdnnEnginePluginGetEngineName(
    engine_id: i64,
    name: *mut *const c_char,
) -> hipdnnPluginStatus_t {
    let given = match engine_id {
        821 | REGISTERED => std::ptr::null(),
        822 => c"".as_ptr(),
        _ => return HIPDNN_PLUGIN_STATUS_NOT_APPLICABLE,
    };
    // SAFETY: the caller's contract.
    raw::boundary("hipdnnEnginePluginGetEngineName", || unsafe {
        raw::write(name, given)
    })
}
