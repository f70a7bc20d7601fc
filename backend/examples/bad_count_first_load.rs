// Rejected at its first load: the sizing call of GetAllEngineIds says 3 engines, the
// second call writes 2. Afterwards (the same library loaded again, its state kept) both
// calls say 2. Its refusal must be reported from the load that refused it, not learned
// again by loading it a second time.

use std::ffi::CStr;
use std::sync::atomic::{AtomicBool, Ordering};

#[path = "support/raw.rs"]
mod raw;

const NAME: &CStr = c"bad_count_first_load";
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

/// Whether the ids have been written once.
static WRITTEN: AtomicBool = AtomicBool::new(false);

/// Counts 3 engines until it has written its 2 ids once, then 2.
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
            let count = if WRITTEN.load(Ordering::SeqCst) { 2 } else { 3 };
            // SAFETY: the caller's contract.
            return unsafe { raw::write(num_engines, count) };
        }
        WRITTEN.store(true, Ordering::SeqCst);
        // SAFETY: the caller's contract.
        unsafe { raw::write_ids(&[811, 812], engine_ids, max_engines, num_engines) }
    })
}
