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

use crate::discovery::{Discovery, LoadingMode, PluginPaths, SearchEnvironment, discover};
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

/// A plugin path that gave no loaded plugin: discovery found it unusable, or loading
/// refused it. Each was logged as `Error loading plugin from [path]: {reason}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefusedPlugin {
    /// The path (a directory entry, a path given as a file, a search directory).
    pub path: PathBuf,
    /// Why, as logged.
    pub reason: String,
}

/// An engine that a loaded plugin declared and admission dropped (hipDNN's rules: the
/// name must hash to the id, the first plugin to declare an id keeps it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DroppedEngine {
    /// The engine id.
    pub id: i64,
    /// The name the plugin gave, else the registry's, else the id in hex.
    pub name: String,
    /// The plugin that declared it.
    pub plugin_name: String,
    /// That plugin's file.
    pub plugin_path: PathBuf,
    /// Why it was dropped.
    pub reason: String,
}

/// Loaded plugins, the engines admitted from them, and what was refused or dropped.
#[derive(Debug)]
pub struct PluginSet {
    plugins: Vec<LoadedPlugin>,
    engines: Vec<AdmittedEngine>,
    refused: Vec<RefusedPlugin>,
    dropped: Vec<DroppedEngine>,
}

impl PluginSet {
    /// Loads `files` (in order) and admits their engines; the files that fail to load
    /// are [`PluginSet::refused`].
    pub fn load(files: &[PathBuf]) -> Self {
        let (plugins, failed) = load_plugins(files);
        let mut set = Self::from_plugins(plugins);
        set.refused = failed
            .into_iter()
            .map(|(path, error)| RefusedPlugin {
                path,
                reason: error.to_string(),
            })
            .collect();
        set
    }

    /// Loads what `discovery` found; its problems come first in [`PluginSet::refused`],
    /// then the files that failed to load.
    pub fn load_discovered(discovery: &Discovery) -> Self {
        let mut set = Self::load(&discovery.files);
        let unusable = discovery
            .problems
            .iter()
            .map(|(path, error)| RefusedPlugin {
                path: path.clone(),
                reason: error.to_string(),
            });
        set.refused.splice(0..0, unusable);
        set
    }

    /// Admits the engines of already loaded plugins, in order.
    ///
    /// An engine whose plugin names it with a name that does not hash to its id, or
    /// whose name query failed, is dropped with an error log; an id already admitted
    /// from an earlier plugin stays with that plugin and the later engine is dropped with
    /// an error log. The rest of the plugin is kept. Each dropped engine is listed in
    /// [`PluginSet::dropped_engines`] with why.
    pub fn from_plugins(plugins: Vec<LoadedPlugin>) -> Self {
        let mut engines: Vec<AdmittedEngine> = Vec::new();
        let mut dropped: Vec<DroppedEngine> = Vec::new();
        let mut owner: HashMap<i64, usize> = HashMap::new();
        for (index, plugin) in plugins.iter().enumerate() {
            let mut drop_engine = |id: i64, name: &str, reason: String| {
                dropped.push(DroppedEngine {
                    id,
                    name: name.to_owned(),
                    plugin_name: plugin.name().to_owned(),
                    plugin_path: plugin.path().to_path_buf(),
                    reason,
                });
            };
            for engine in plugin.engines() {
                let hex = engine_id_to_hex(engine.id);
                let fallback_name =
                    || engine_name_from_id(engine.id).map_or_else(|| hex.clone(), str::to_owned);
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
                            drop_engine(
                                engine.id,
                                name,
                                format!(
                                    "its name hashes to {}{owned_by}, not to its id {hex}",
                                    engine_id_to_hex(hashed)
                                ),
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
                        drop_engine(
                            engine.id,
                            &fallback_name(),
                            format!("its name could not be read: {why}"),
                        );
                        continue;
                    }
                    EngineName::Unnamed => fallback_name(),
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
                    drop_engine(
                        engine.id,
                        &name,
                        format!(
                            "plugin '{}' ([{}]) already provides this id; the first plugin keeps it",
                            plugins[first].name(),
                            plugins[first].path().display()
                        ),
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
        Self {
            plugins,
            engines,
            refused: Vec::new(),
            dropped,
        }
    }

    /// The loaded plugins, in load order.
    pub fn plugins(&self) -> &[LoadedPlugin] {
        &self.plugins
    }

    /// The admitted engines, in load order.
    pub fn engines(&self) -> &[AdmittedEngine] {
        &self.engines
    }

    /// The paths that gave no plugin, with why: discovery's problems, then the files
    /// that failed to load, as they were logged when this set was loaded.
    pub fn refused(&self) -> &[RefusedPlugin] {
        &self.refused
    }

    /// The engines admission dropped, with why, in load order.
    pub fn dropped_engines(&self) -> &[DroppedEngine] {
        &self.dropped
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
            let set = Arc::new(PluginSet::load_discovered(&discovery));
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
