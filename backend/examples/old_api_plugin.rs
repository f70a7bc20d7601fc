// A plugin of engine API 1.2.0 whose engine, `OLD_API_ENGINE`, accepts every graph and
// runs nothing: graphs whose features need a newer API must not be offered to it.

use std::ffi::CStr;

use hipdnn_plugin_sdk::prelude::*;

struct Nothing;

impl IPlan for Nothing {
    fn execute(&self, _: &Handle, _: &Execution<'_>) -> PluginResult<()> {
        Ok(())
    }
}

struct Everything;

impl IPlanBuilder<(), KnobValues> for Everything {
    fn is_applicable(&self, _: &Handle, _: &GraphView<'_>) -> bool {
        true
    }

    fn build_plan(&self, _: &Handle, _: &GraphView<'_>, _: KnobValues) -> PluginResult<BoxedPlan> {
        Ok(Box::new(Nothing))
    }
}

struct OldApi;

impl EnginePlugin for OldApi {
    const NAME: &'static CStr = c"old_api_plugin";
    const VERSION: &'static CStr = c"0.1.0";
    const API_VERSION: &'static CStr = c"1.2.0";
    type Handle = ();
    type Settings = KnobValues;
    type Context = BoxedPlan;

    fn engines() -> EngineManager<(), KnobValues> {
        let engine = Engine::new(c"OLD_API_ENGINE").with_memory_kind(MemoryKind::Host);
        EngineManager::new().with_engine(engine.with_builder(Everything))
    }

    fn create_handle() -> PluginResult<()> {
        Ok(())
    }
}

hipdnn_plugin_sdk::export_engine_plugin!(OldApi);
