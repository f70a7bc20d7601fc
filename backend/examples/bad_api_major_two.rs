// Rejected: engine plugin API 2.1.0, a major version this backend does not implement.

use std::ffi::CStr;

#[path = "support/raw.rs"]
mod raw;

const NAME: &CStr = c"bad_api_major_two";
const API_VERSION: &CStr = c"2.1.0";
const ENGINE_IDS: &[i64] = &[401];
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
