// Loads, but every hipdnnEnginePluginCreate fails with NOT_INITIALIZED and a last error
// (a plugin that cannot run on this machine). A handle skips it and serves the others.

use std::ffi::CStr;

use hipdnn_plugin_sdk::PluginError;
use hipdnn_plugin_sdk::abi::{
    HIPDNN_PLUGIN_STATUS_NOT_INITIALIZED, hipStream_t, hipdnnEnginePluginHandle_t,
    hipdnnPluginStatus_t,
};

#[path = "support/raw.rs"]
mod raw;

const NAME: &CStr = c"bad_create_fails";
const API_VERSION: &CStr = c"1.4.0";
const ENGINE_IDS: &[i64] = &[901];
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

/// Fails: "no device for bad_create_fails".
#[unsafe(no_mangle)]
pub extern "C" fn hipdnnEnginePluginCreate(
    _: *mut hipdnnEnginePluginHandle_t,
) -> hipdnnPluginStatus_t {
    raw::boundary("hipdnnEnginePluginCreate", || {
        Err(PluginError::new(
            HIPDNN_PLUGIN_STATUS_NOT_INITIALIZED,
            "no device for bad_create_fails",
        ))
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn hipdnnEnginePluginDestroy(_: hipdnnEnginePluginHandle_t) -> hipdnnPluginStatus_t {
    raw::unused("hipdnnEnginePluginDestroy")
}

#[unsafe(no_mangle)]
pub extern "C" fn hipdnnEnginePluginSetStream(
    _: hipdnnEnginePluginHandle_t,
    _: hipStream_t,
) -> hipdnnPluginStatus_t {
    raw::unused("hipdnnEnginePluginSetStream")
}
