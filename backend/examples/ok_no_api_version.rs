// Well-behaved but minimal: no hipdnnPluginGetApiVersion (loads as API 1.0.0), no logging
// setters and no GetEngineName (all optional).

use std::ffi::CStr;

#[path = "support/raw.rs"]
mod raw;

const NAME: &CStr = c"ok_no_api_version";
const ENGINE_IDS: &[i64] = &[101, 102];
raw_exports!(
    name,
    version,
    plugin_type,
    last_error,
    engine_ids,
    handles,
    planning,
    execute
);
