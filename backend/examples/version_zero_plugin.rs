// A working plugin that reports engine plugin API 0.0.0. It loads (hipDNN accepts major
// version 0 from plugins built against its pre-1.0 SDK) and its engine is listed, but
// every graph needs at least 1.0.0, so the backend never asks it about one. Its engine
// would accept every graph; it counts the times it is asked (export
// `version_zero_plugin_analyses`), so the tests can show it never is.

use std::ffi::CStr;
use std::sync::atomic::{AtomicU64, Ordering};

use hipdnn_plugin_sdk::prelude::*;

static ANALYSES: AtomicU64 = AtomicU64::new(0);

/// How many times its engine was asked whether it accepts a graph.
#[unsafe(no_mangle)]
pub extern "C" fn version_zero_plugin_analyses() -> u64 {
    ANALYSES.load(Ordering::SeqCst)
}

/// Writes nothing.
struct Noop;

impl IPlan for Noop {
    fn execute(&self, _: &Handle, _: &Execution<'_>) -> PluginResult<()> {
        Ok(())
    }
}

/// Accepts every graph.
struct Anything;

impl IPlanBuilder for Anything {
    fn is_applicable(&self, _: &Handle, _: &GraphView<'_>) -> bool {
        ANALYSES.fetch_add(1, Ordering::SeqCst);
        true
    }

    fn build_plan(&self, _: &Handle, _: &GraphView<'_>, _: ()) -> PluginResult<BoxedPlan> {
        Ok(Box::new(Noop))
    }
}

struct VersionZero;

impl EnginePlugin for VersionZero {
    const NAME: &'static CStr = c"version_zero_plugin";
    const VERSION: &'static CStr = c"1.0.0";
    const API_VERSION: &'static CStr = c"0.0.0";
    type Handle = ();
    type Settings = ();
    type Context = BoxedPlan;

    fn engines() -> EngineManager {
        let engine = Engine::new(c"VERSION_ZERO_ENGINE")
            .with_memory_kind(MemoryKind::Host)
            .with_builder(Anything);
        EngineManager::new().with_engine(engine)
    }

    fn create_handle() -> PluginResult<()> {
        Ok(())
    }
}

hipdnn_plugin_sdk::export_engine_plugin!(VersionZero);
