// Loads and makes handles, and says both its engines can run any graph, but returns
// details the backend must refuse: engine 950 gives bytes that are not an
// `EngineDetails` FlatBuffer, engine 951 gives valid details of another engine (952).
// Asking for either engine's details (or a plan on it) fails naming the plugin and the
// engine; nothing crashes, and the details buffers are handed back.

use std::ffi::CStr;
use std::sync::LazyLock;

use hipdnn_flatbuffers_sdk::model::EngineDetails;
use hipdnn_plugin_sdk::PluginError;
use hipdnn_plugin_sdk::abi::*;

#[path = "support/raw.rs"]
mod raw;

const NAME: &CStr = c"bad_details";
const API_VERSION: &CStr = c"1.4.0";
const ENGINE_IDS: &[i64] = &[950, 951];
raw_exports!(
    name,
    version,
    api_version,
    plugin_type,
    last_error,
    logging,
    engine_ids,
    planning_plans,
    execute
);

/// Not a FlatBuffer: a root offset pointing far outside the buffer.
static GARBAGE: [u8; 16] = [
    0xff, 0xff, 0xff, 0x7f, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
];

/// Well-formed details, but of engine 952.
static OTHER_ENGINE: LazyLock<Vec<u8>> = LazyLock::new(|| {
    EngineDetails {
        engine_id: 952,
        knobs: Vec::new(),
        behavior_notes: Vec::new(),
        name: "someone else".to_owned(),
        candidate_page: None,
    }
    .to_bytes()
});

/// The plugin's one handle value (it keeps no state).
static HANDLE: u8 = 0;

/// # Safety
/// `handle` is null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipdnnEnginePluginCreate(
    handle: *mut hipdnnEnginePluginHandle_t,
) -> hipdnnPluginStatus_t {
    // SAFETY: the caller's contract.
    raw::boundary("hipdnnEnginePluginCreate", || unsafe {
        raw::write(handle, (&raw const HANDLE).cast_mut().cast())
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn hipdnnEnginePluginDestroy(_: hipdnnEnginePluginHandle_t) -> hipdnnPluginStatus_t {
    HIPDNN_PLUGIN_STATUS_SUCCESS
}

#[unsafe(no_mangle)]
pub extern "C" fn hipdnnEnginePluginSetStream(
    _: hipdnnEnginePluginHandle_t,
    _: hipStream_t,
) -> hipdnnPluginStatus_t {
    HIPDNN_PLUGIN_STATUS_SUCCESS
}

/// Both engines, for every graph.
///
/// # Safety
/// `engine_ids` has room for `max` ids; `num` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipdnnEnginePluginGetApplicableEngineIds(
    _: hipdnnEnginePluginHandle_t,
    _: *const hipdnnPluginConstData_t,
    engine_ids: *mut i64,
    max: u32,
    num: *mut u32,
) -> hipdnnPluginStatus_t {
    // SAFETY: the caller's contract.
    raw::boundary("hipdnnEnginePluginGetApplicableEngineIds", || unsafe {
        raw::write_ids(ENGINE_IDS, engine_ids, max, num)
    })
}

/// The malformed details (module comment).
///
/// # Safety
/// `details` is null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipdnnEnginePluginGetEngineDetails(
    _: hipdnnEnginePluginHandle_t,
    engine_id: i64,
    _: *const hipdnnPluginConstData_t,
    details: *mut hipdnnPluginConstData_t,
) -> hipdnnPluginStatus_t {
    raw::boundary("hipdnnEnginePluginGetEngineDetails", || {
        let bytes: &[u8] = match engine_id {
            950 => &GARBAGE,
            951 => &OTHER_ENGINE,
            other => return Err(PluginError::bad_param(format!("no engine {other}"))),
        };
        let span = hipdnnPluginConstData_t {
            ptr: bytes.as_ptr().cast(),
            size: bytes.len(),
        };
        // SAFETY: the caller's contract.
        unsafe { raw::write(details, span) }
    })
}

/// The buffers are static: only zeroes the span.
///
/// # Safety
/// `details` is null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipdnnEnginePluginDestroyEngineDetails(
    _: hipdnnEnginePluginHandle_t,
    details: *mut hipdnnPluginConstData_t,
) -> hipdnnPluginStatus_t {
    // SAFETY: the caller's contract.
    raw::boundary("hipdnnEnginePluginDestroyEngineDetails", || unsafe {
        raw::write(
            details,
            hipdnnPluginConstData_t {
                ptr: std::ptr::null(),
                size: 0,
            },
        )
    })
}
