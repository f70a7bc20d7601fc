// Rejected: does not export the required hipdnnEnginePluginExecuteOpGraph.

use std::ffi::CStr;

#[path = "support/raw.rs"]
mod raw;

const NAME: &CStr = c"bad_missing_symbol";
const API_VERSION: &CStr = c"1.4.0";
const ENGINE_IDS: &[i64] = &[501];
raw_exports!(
    name,
    version,
    api_version,
    plugin_type,
    last_error,
    logging,
    engine_ids,
    handles,
    planning
);
