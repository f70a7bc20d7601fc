// Reports engine plugin API 0.9.0: accepted with an info log (hipDNN's transitional shim),
// then asked about no graph (every graph needs at least 1.0.0).

use std::ffi::CStr;

#[path = "support/raw.rs"]
mod raw;

const NAME: &CStr = c"ok_api_major_zero";
const API_VERSION: &CStr = c"0.9.0";
const ENGINE_IDS: &[i64] = &[201];
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
