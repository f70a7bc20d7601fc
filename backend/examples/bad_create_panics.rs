// An SDK plugin whose create_handle panics: the SDK's boundary catches the panic and
// hipdnnEnginePluginCreate returns INTERNAL_ERROR ("panic in hipdnnEnginePluginCreate:
// ..."). The host must skip the plugin and go on.

use std::ffi::CStr;

use hipdnn_plugin_sdk::prelude::*;

struct CreatePanics;

impl EnginePlugin for CreatePanics {
    const NAME: &'static CStr = c"bad_create_panics";
    const VERSION: &'static CStr = c"0.0.1";
    type Handle = ();
    type Settings = ();
    type Context = BoxedPlan;

    fn engines() -> EngineManager<(), (), BoxedPlan> {
        EngineManager::new().with_engine(Engine::new(c"CREATE_PANICS_ENGINE"))
    }

    fn create_handle() -> PluginResult<()> {
        panic!("deliberate panic in create_handle")
    }
}

hipdnn_plugin_sdk::export_engine_plugin!(CreatePanics);
