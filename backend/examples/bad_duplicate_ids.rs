// Rejected: lists engine id 7 twice.

use std::ffi::CStr;

#[path = "support/raw.rs"]
mod raw;

const NAME: &CStr = c"bad_duplicate_ids";
const API_VERSION: &CStr = c"1.4.0";
const ENGINE_IDS: &[i64] = &[7, 8, 7];
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
