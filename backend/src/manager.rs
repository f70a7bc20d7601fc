//! The process-global set of loaded plugins, engine admission, and the configuration
//! that applies to the next load (plugin paths, unload mode).
//!
//! Loaded libraries are shared by every handle of the process. The set is loaded when a
//! handle needs it and none is loaded; in LAZY unload mode (the default) it then stays
//! loaded until the plugin paths change or the process exits, in EAGER mode it is
//! unloaded when the last handle goes away.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use hipdnn_data_sdk::{engine_id_to_hex, engine_name_from_id, engine_name_to_id};

use crate::discovery::{LoadingMode, PluginPaths, SearchEnvironment, discover};
use crate::loader::load_plugins;
use crate::plugin::{EngineName, LoadedPlugin};
use crate::status::{BackendError, BackendResult};

/// When loaded plugins are unloaded (`hipdnnPluginUnloadingMode_ext_t`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UnloadMode {
    /// Keep plugins loaded after the last handle is destroyed (the default).
    #[default]
    Lazy,
    /// Unload plugins when the last handle is destroyed.
    Eager,
}

/// An engine that passed admission: its id routes to `plugin`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdmittedEngine {
    /// The engine id.
    pub id: i64,
    /// The resolved name: the plugin's, else the registry's, else the id in hex.
    pub name: String,
    /// Index of the plugin in [`PluginSet::plugins`].
    pub plugin: usize,
}

/// Loaded plugins and the engines admitted from them.
#[derive(Debug)]
pub struct PluginSet {
    plugins: Vec<LoadedPlugin>,
    engines: Vec<AdmittedEngine>,
}

impl PluginSet {
    /// Loads `files` (in order) and admits their engines.
    pub fn load(files: &[PathBuf]) -> Self {
        let (plugins, _) = load_plugins(files);
        Self::from_plugins(plugins)
    }

    /// Admits the engines of already loaded plugins, in order.
    ///
    /// An engine whose plugin names it with a name that does not hash to its id, or
    /// whose name query failed, is dropped with an error log; an id already admitted
    /// from an earlier plugin stays with that plugin and the later engine is dropped with
    /// an error log. The rest of the plugin is kept.
    pub fn from_plugins(plugins: Vec<LoadedPlugin>) -> Self {
        let mut engines: Vec<AdmittedEngine> = Vec::new();
        let mut owner: HashMap<i64, usize> = HashMap::new();
        for (index, plugin) in plugins.iter().enumerate() {
            for engine in plugin.engines() {
                let hex = engine_id_to_hex(engine.id);
                let name = match &engine.name {
                    EngineName::Named(name) => {
                        let hashed = engine_name_to_id(name);
                        if hashed != engine.id {
                            let owned_by = owner
                                .get(&hashed)
                                .map(|&i| {
                                    format!(
                                        " (the id of an engine of plugin '{}')",
                                        plugins[i].name()
                                    )
                                })
                                .unwrap_or_default();
                            tracing::error!(
                                "Plugin '{}' names engine {hex} \"{name}\", but that name hashes to {}{owned_by}; \
                                 the engine is dropped",
                                plugin.name(),
                                engine_id_to_hex(hashed)
                            );
                            continue;
                        }
                        name.clone()
                    }
                    EngineName::Failed(why) => {
                        tracing::error!(
                            "Plugin '{}' failed to name engine {hex}: {why}; the engine is dropped",
                            plugin.name()
                        );
                        continue;
                    }
                    EngineName::Unnamed => {
                        engine_name_from_id(engine.id).map_or_else(|| hex.clone(), str::to_owned)
                    }
                };
                if let Some(&first) = owner.get(&engine.id) {
                    tracing::error!(
                        "Plugin '{}' ([{}]) declares engine {hex} ({name}), which plugin '{}' ([{}]) already \
                         provides; the first plugin keeps it and this engine is dropped",
                        plugin.name(),
                        plugin.path().display(),
                        plugins[first].name(),
                        plugins[first].path().display()
                    );
                    continue;
                }
                owner.insert(engine.id, index);
                engines.push(AdmittedEngine {
                    id: engine.id,
                    name,
                    plugin: index,
                });
            }
        }
        Self { plugins, engines }
    }

    /// The loaded plugins, in load order.
    pub fn plugins(&self) -> &[LoadedPlugin] {
        &self.plugins
    }

    /// The admitted engines, in load order.
    pub fn engines(&self) -> &[AdmittedEngine] {
        &self.engines
    }
}

#[derive(Debug, Default)]
struct Global {
    paths: PluginPaths,
    unload: UnloadMode,
    /// Kept while the set must outlive its handles (LAZY).
    keep: Option<Arc<PluginSet>>,
    loaded: Weak<PluginSet>,
    live_handles: usize,
}

static GLOBAL: Mutex<Global> = Mutex::new(Global {
    paths: PluginPaths::new(),
    unload: UnloadMode::Lazy,
    keep: None,
    loaded: Weak::new(),
    live_handles: 0,
});

fn global() -> MutexGuard<'static, Global> {
    // A panic while holding the lock leaves the state consistent (every update is one
    // assignment), so a poisoned lock is still usable.
    GLOBAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// Sets where engine plugins are searched for the next load
/// (`hipdnnSetEnginePluginPaths_ext`). Relative paths resolve against the backend
/// library's directory. Drops the currently loaded set (it reloads with the new paths
/// at the next handle creation).
///
/// # Errors
/// `NOT_SUPPORTED` while any handle exists: paths cannot change under a live handle.
pub fn set_engine_plugin_paths<I, P>(paths: I, mode: LoadingMode) -> BackendResult<()>
where
    I: IntoIterator<Item = P>,
    P: Into<PathBuf>,
{
    let mut global = global();
    if global.live_handles > 0 {
        return Err(BackendError::not_supported(format!(
            "engine plugin paths cannot change while {} handle(s) exist",
            global.live_handles
        )));
    }
    global.paths.set_engine_plugin_paths(paths, mode);
    // Forget the loaded set entirely: a handle being dropped right now may still hold it
    // for a moment, and the next handle must load with the new paths, not pick it up.
    global.keep = None;
    global.loaded = Weak::new();
    Ok(())
}

/// Sets when plugins are unloaded (`hipdnnSetPluginUnloadMode_ext`). Switching to
/// EAGER with no live handle unloads now.
pub fn set_plugin_unload_mode(mode: UnloadMode) {
    let mut global = global();
    global.unload = mode;
    match mode {
        UnloadMode::Eager if global.live_handles == 0 => global.keep = None,
        UnloadMode::Eager => {}
        // A set loaded under EAGER and still held by handles stays loaded after them.
        UnloadMode::Lazy => global.keep = global.loaded.upgrade(),
    }
}

/// The current unload mode.
pub fn plugin_unload_mode() -> UnloadMode {
    global().unload
}

/// Number of live handles in the process.
pub fn live_handle_count() -> usize {
    global().live_handles
}

/// Pushes a log level to every loaded plugin that accepts one (failures are logged).
pub(crate) fn push_log_level(level: hipdnn_plugin_abi::hipdnnSeverity_t) {
    let loaded = global().loaded.upgrade();
    for plugin in loaded.iter().flat_map(|set| set.plugins()) {
        if let Err(e) = plugin.set_log_level(level) {
            tracing::warn!("{e}");
        }
    }
}

/// Takes a reference to the loaded set for a new handle, loading it if needed.
pub(crate) fn acquire() -> Arc<PluginSet> {
    let mut global = global();
    let set = match global.loaded.upgrade() {
        Some(set) => set,
        None => {
            let environment = SearchEnvironment::from_process().unwrap_or_else(|e| {
                tracing::error!("cannot locate the backend library: {e}; searching relative to the working directory");
                SearchEnvironment { library_dir: PathBuf::from("."), env_plugin_dir: None }
            });
            let discovery = discover(&global.paths, &environment);
            discovery.log_problems();
            let set = Arc::new(PluginSet::load(&discovery.files));
            global.loaded = Arc::downgrade(&set);
            set
        }
    };
    if global.unload == UnloadMode::Lazy {
        global.keep = Some(Arc::clone(&set));
    }
    global.live_handles += 1;
    set
}

/// Gives back a handle's reference (the handle drops its `Arc` after this returns).
pub(crate) fn release() {
    let mut global = global();
    global.live_handles = global.live_handles.saturating_sub(1);
    if global.unload == UnloadMode::Eager && global.live_handles == 0 {
        global.keep = None;
    }
}
