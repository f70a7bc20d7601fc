// Loads, and its hipdnnEnginePluginCreate returns the same non-null sentinel handle as
// every other `collide_*` plugin (engine id 903, distinct from theirs). In a handle the
// first of them (path order) keeps its handle; a later one is skipped as colliding.

use std::ffi::CStr;

#[path = "support/raw.rs"]
mod raw;

#[path = "support/sentinel.rs"]
mod sentinel;

const NAME: &CStr = c"collide_a";
const API_VERSION: &CStr = c"1.4.0";
const ENGINE_IDS: &[i64] = &[903];
raw_exports!(
    name,
    version,
    api_version,
    plugin_type,
    last_error,
    logging,
    engine_ids,
    planning,
    execute
);
