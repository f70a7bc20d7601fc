// Rejected: its API version is not a semantic version.

use std::ffi::CStr;

#[path = "support/raw.rs"]
mod raw;

const NAME: &CStr = c"bad_api_unparsable";
const API_VERSION: &CStr = c"one.two";
const ENGINE_IDS: &[i64] = &[301];
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
