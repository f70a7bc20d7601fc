// An SDK plugin with two engines: `BAD_ENGINE_NAME_KEPT_ENGINE`, named correctly, and
// one whose id is the hash of `BAD_ENGINE_NAME_REAL_ENGINE` but which names itself
// `NOT_THIS_ENGINES_NAME` (an `IEngine` written by hand). Admission drops the misnamed
// engine and keeps the other one, with the plugin.

use std::ffi::CStr;

use hipdnn_data_sdk::engine_name_to_id;
use hipdnn_flatbuffers_sdk::model::{EngineConfig, EngineDetails};
use hipdnn_plugin_sdk::prelude::*;

/// The engine whose name does not hash to its id.
struct Misnamed;

impl IEngine for Misnamed {
    fn id(&self) -> i64 {
        engine_name_to_id("BAD_ENGINE_NAME_REAL_ENGINE")
    }

    fn name(&self) -> Option<&'static CStr> {
        Some(c"NOT_THIS_ENGINES_NAME")
    }

    fn is_applicable(&self, _: &Handle, _: &GraphView<'_>) -> bool {
        false
    }

    fn details(&self, _: &Handle, _: &GraphView<'_>) -> PluginResult<EngineDetails> {
        Err(PluginError::not_applicable("never applicable"))
    }

    fn create_plan(
        &self,
        _: &Handle,
        _: &EngineConfig,
        _: &GraphView<'_>,
    ) -> PluginResult<BoxedPlan> {
        Err(PluginError::not_applicable("never applicable"))
    }
}

struct BadEngineName;

impl EnginePlugin for BadEngineName {
    const NAME: &'static CStr = c"bad_engine_name";
    const VERSION: &'static CStr = c"0.0.1";
    type Handle = ();
    type Settings = ();
    type Context = BoxedPlan;

    fn engines() -> EngineManager<(), (), BoxedPlan> {
        EngineManager::new()
            .with_engine(Misnamed)
            .with_engine(Engine::new(c"BAD_ENGINE_NAME_KEPT_ENGINE"))
    }

    fn create_handle() -> PluginResult<()> {
        Ok(())
    }
}

hipdnn_plugin_sdk::export_engine_plugin!(BadEngineName);
