//! A panic in `EnginePlugin::engines`, which the SDK calls once per process (in a
//! `OnceLock`): it gets a binary of its own, so that the first call into the plugin is
//! the one under test.
//!
//! The panic is a real one: the first time, `engines()` adds the same engine twice, which
//! `EngineManager::with_engine` refuses. The call fails with `INTERNAL_ERROR`, nothing is
//! cached, and once `engines()` behaves, the next call builds the engines.

use std::ffi::{CStr, c_char};
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use hipdnn_data_sdk::engine_name_to_id;
use hipdnn_plugin_sdk::abi::*;
use hipdnn_plugin_sdk::prelude::*;

unsafe extern "C" {
    fn hipdnnPluginGetLastErrorString(error: *mut *const c_char);
    fn hipdnnEnginePluginGetAllEngineIds(
        engine_ids: *mut i64,
        max_engines: u32,
        num_engines: *mut u32,
    ) -> hipdnnPluginStatus_t;
    fn hipdnnEnginePluginGetEngineName(
        engine_id: i64,
        name: *mut *const c_char,
    ) -> hipdnnPluginStatus_t;
    fn hipdnnEnginePluginCreate(handle: *mut hipdnnEnginePluginHandle_t) -> hipdnnPluginStatus_t;
    fn hipdnnEnginePluginDestroy(handle: hipdnnEnginePluginHandle_t) -> hipdnnPluginStatus_t;
}

const ENGINE: &CStr = c"TEST_LATE_ENGINE";
const ENGINE_ID: i64 = engine_name_to_id("TEST_LATE_ENGINE");

/// While set, `engines()` registers its engine twice.
static DUPLICATE_ENGINE: AtomicBool = AtomicBool::new(true);
static ENGINES_CALLS: AtomicUsize = AtomicUsize::new(0);

struct Never;

impl IPlanBuilder for Never {
    fn is_applicable(&self, _: &Handle, _: &GraphView<'_>) -> bool {
        false
    }

    fn build_plan(&self, _: &Handle, _: &GraphView<'_>, _: ()) -> PluginResult<BoxedPlan> {
        Err(PluginError::not_applicable("never applies"))
    }
}

struct LatePlugin;

impl EnginePlugin for LatePlugin {
    const NAME: &'static CStr = c"late_plugin";
    const VERSION: &'static CStr = c"0.0.1";
    type Handle = ();
    type Settings = ();
    type Context = BoxedPlan;

    fn engines() -> EngineManager {
        ENGINES_CALLS.fetch_add(1, Ordering::Relaxed);
        let manager = EngineManager::new().with_engine(Engine::new(ENGINE).with_builder(Never));
        if DUPLICATE_ENGINE.load(Ordering::Relaxed) {
            return manager.with_engine(Engine::new(ENGINE).with_builder(Never));
        }
        manager
    }

    fn create_handle() -> PluginResult<()> {
        Ok(())
    }
}

hipdnn_plugin_sdk::export_engine_plugin!(LatePlugin);

fn last_error() -> String {
    let mut text = ptr::null();
    // SAFETY: `text` is a live local to write to.
    unsafe { hipdnnPluginGetLastErrorString(&mut text) };
    // SAFETY: the plugin wrote its NUL-terminated thread-local buffer.
    unsafe { CStr::from_ptr(text) }
        .to_string_lossy()
        .into_owned()
}

#[test]
fn panic_in_engines_is_internal_error_and_a_later_call_builds_them() {
    let duplicate = format!(
        "engine id {} added twice",
        hipdnn_data_sdk::engine_id_to_hex(ENGINE_ID)
    );

    let mut count = 77_u32;
    // SAFETY: max 0 with null ids is the size query; `count` is live.
    let status = unsafe { hipdnnEnginePluginGetAllEngineIds(ptr::null_mut(), 0, &mut count) };
    assert_eq!(status, HIPDNN_PLUGIN_STATUS_INTERNAL_ERROR);
    assert_eq!(
        last_error(),
        format!("panic in hipdnnEnginePluginGetAllEngineIds: {duplicate}")
    );
    assert_eq!(count, 77, "untouched");

    // Nothing was cached: every entry point that needs the engines asks again.
    let mut handle: hipdnnEnginePluginHandle_t = ptr::null_mut();
    // SAFETY: a live out-parameter.
    let status = unsafe { hipdnnEnginePluginCreate(&mut handle) };
    assert_eq!(status, HIPDNN_PLUGIN_STATUS_INTERNAL_ERROR);
    assert_eq!(
        last_error(),
        format!("panic in hipdnnEnginePluginCreate: {duplicate}")
    );
    assert!(handle.is_null(), "untouched");
    let mut name = ptr::null();
    // SAFETY: a live out-parameter.
    let status = unsafe { hipdnnEnginePluginGetEngineName(ENGINE_ID, &mut name) };
    assert_eq!(status, HIPDNN_PLUGIN_STATUS_INTERNAL_ERROR);
    assert_eq!(ENGINES_CALLS.load(Ordering::Relaxed), 3);

    DUPLICATE_ENGINE.store(false, Ordering::Relaxed);
    let mut ids = [0_i64; 2];
    // SAFETY: room for 2 ids; `count` is live.
    let status = unsafe { hipdnnEnginePluginGetAllEngineIds(ids.as_mut_ptr(), 2, &mut count) };
    assert_eq!(status, HIPDNN_PLUGIN_STATUS_SUCCESS, "{}", last_error());
    assert_eq!((count, ids[0]), (1, ENGINE_ID));
    // SAFETY: a live out-parameter.
    let status = unsafe { hipdnnEnginePluginCreate(&mut handle) };
    assert_eq!(status, HIPDNN_PLUGIN_STATUS_SUCCESS, "{}", last_error());
    // SAFETY: just created, destroyed once.
    let status = unsafe { hipdnnEnginePluginDestroy(handle) };
    assert_eq!(status, HIPDNN_PLUGIN_STATUS_SUCCESS);
    assert_eq!(
        ENGINES_CALLS.load(Ordering::Relaxed),
        4,
        "built once, then cached"
    );
}
