//! A hipDNN handle: one plugin handle per loaded plugin that agreed to make one, and
//! the routing of every admitted engine id to its plugin handle.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicPtr, Ordering};

use hipdnn_plugin_abi::{hipStream_t, hipdnnEnginePluginHandle_t, ihipStream_t};

use crate::manager::{self, DroppedEngine, PluginSet, RefusedPlugin};
use crate::plugin::LoadedPlugin;
use crate::status::{BackendError, BackendResult};

/// One plugin's handle inside a hipDNN handle.
#[derive(Debug)]
pub(crate) struct PluginHandle {
    /// Index into the plugin set.
    pub(crate) plugin: usize,
    pub(crate) raw: hipdnnEnginePluginHandle_t,
}

/// An engine as the handle's queries report it (`hipdnnGetEngineInfo_ext`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineSummary {
    /// The engine id.
    pub id: i64,
    /// Resolved name (plugin, registry, or the id in hex).
    pub name: String,
    /// Name of the plugin serving it.
    pub plugin_name: String,
    /// That plugin's version.
    pub plugin_version: String,
    /// The plugin type, `"engine"`.
    pub plugin_type: &'static str,
}

/// A hipDNN handle (`hipdnnHandle_t`).
///
/// Creating one loads the plugins if no handle holds them (see [`manager`](crate::manager))
/// and asks each plugin for a plugin handle; dropping it destroys the plugin handles and
/// gives the plugin set back.
#[derive(Debug)]
pub struct Handle {
    // Declared first: plugin handles are destroyed (in `Drop`) before the set is released.
    pub(crate) plugin_handles: Vec<PluginHandle>,
    /// Engine id → index into `plugin_handles`.
    pub(crate) routes: HashMap<i64, usize>,
    /// The stream last set; changed through `&self`, so that a handle shared by the C
    /// API's descriptors (which borrow it) can still have its stream set.
    stream: AtomicPtr<ihipStream_t>,
    /// Plugins loaded but without a plugin handle here, and why.
    unavailable: Vec<UnavailablePlugin>,
    pub(crate) set: Arc<PluginSet>,
}

/// A loaded plugin that made no plugin handle for a [`Handle`] (its `Create` failed, e.g.
/// a GPU plugin on a machine without the GPU; it returned a null handle, or one that
/// another plugin returned too), so its engines are not offered there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnavailablePlugin {
    /// The plugin's name.
    pub name: String,
    /// Its file.
    pub path: PathBuf,
    /// Why: the plugin's own message where it gave one.
    pub reason: String,
    /// The names of its admitted engines, which this handle does not offer.
    pub engines: Vec<String>,
}

// SAFETY: the raw plugin handles and the stream are opaque pointers owned by this value;
// plugins accept calls on a handle from any thread as long as calls on one handle do not
// overlap, which `&mut self` / exclusive ownership guarantees for moves between threads.
unsafe impl Send for Handle {}

impl Handle {
    /// Creates a handle (`hipdnnCreate`).
    ///
    /// A plugin whose `Create` fails, returns a null handle, or returns a handle equal to
    /// one another plugin returned (a symptom of symbol collisions between plugins) is
    /// skipped for this handle with an error log and listed in
    /// [`Handle::unavailable_plugins`]; the handle still serves the others. No plugin at
    /// all is not an error: graphs then find no engine.
    pub fn new() -> Self {
        let set = manager::acquire();
        let mut plugin_handles: Vec<PluginHandle> = Vec::new();
        let mut routes = HashMap::new();
        let mut unavailable = Vec::new();
        for (index, plugin) in set.plugins().iter().enumerate() {
            let mut skip = |reason: String| {
                let engines = set.engines().iter().filter(|e| e.plugin == index);
                unavailable.push(UnavailablePlugin {
                    name: plugin.name().to_owned(),
                    path: plugin.path().to_path_buf(),
                    reason,
                    engines: engines.map(|e| e.name.clone()).collect(),
                });
            };
            let raw = match plugin.create_handle() {
                Ok(raw) => raw,
                Err(error) => {
                    tracing::error!(
                        "Failed to create handle for plugin '{}': {error}",
                        plugin.name()
                    );
                    skip(if error.message.is_empty() {
                        error.to_string()
                    } else {
                        error.message.clone()
                    });
                    continue;
                }
            };
            if raw.is_null() {
                tracing::error!("Plugin '{}' returned null handle", plugin.name());
                skip("hipdnnEnginePluginCreate succeeded but returned a null handle".to_owned());
                continue;
            }
            if let Some(other) = plugin_handles.iter().find(|h| h.raw == raw) {
                let other = set.plugins()[other.plugin].name();
                tracing::error!(
                    "Plugin '{}' returned a handle that collides with another plugin ('{other}'). This may indicate \
                     a symbol collision between plugins. Ensure all plugins are built with -fvisibility=hidden.",
                    plugin.name(),
                );
                // SAFETY: `raw` was just returned by this plugin's Create and is not used again.
                if let Err(error) = unsafe { plugin.destroy_handle(raw) } {
                    tracing::error!("{error}");
                }
                skip(format!(
                    "hipdnnEnginePluginCreate returned the handle plugin '{other}' returned \
                     (a symbol collision between plugins: build them with -fvisibility=hidden)"
                ));
                continue;
            }
            let slot = plugin_handles.len();
            plugin_handles.push(PluginHandle { plugin: index, raw });
            for engine in set.engines().iter().filter(|e| e.plugin == index) {
                routes.insert(engine.id, slot);
            }
        }
        Self {
            plugin_handles,
            routes,
            stream: AtomicPtr::new(std::ptr::null_mut()),
            unavailable,
            set,
        }
    }

    pub(crate) fn plugin(&self, handle: &PluginHandle) -> &LoadedPlugin {
        &self.set.plugins()[handle.plugin]
    }

    /// Sets the stream of every plugin handle (`hipdnnSetStream`).
    ///
    /// # Safety
    /// `stream` is null (HIP's default stream) or a valid stream of the device the
    /// plugins run on, kept alive while this handle uses it: plugins enqueue work on it.
    ///
    /// # Errors
    /// `PLUGIN_ERROR` naming every plugin that refused (the others have the stream).
    pub unsafe fn set_stream(&self, stream: hipStream_t) -> BackendResult<()> {
        let mut failures = Vec::new();
        for handle in &self.plugin_handles {
            let plugin = self.plugin(handle);
            // SAFETY: `handle.raw` is a live handle of this plugin, owned by `self`; the
            // stream is valid per this function's contract.
            if let Err(error) = unsafe { plugin.set_stream(handle.raw, stream) } {
                failures.push(format!("plugin '{}': {error}", plugin.name()));
            }
        }
        self.stream.store(stream, Ordering::Relaxed);
        if failures.is_empty() {
            Ok(())
        } else {
            Err(BackendError::plugin(failures.join("; ")))
        }
    }

    /// The stream last set (`hipdnnGetStream`); null is HIP's default stream.
    pub fn stream(&self) -> hipStream_t {
        self.stream.load(Ordering::Relaxed)
    }

    /// The loaded plugins that made no plugin handle for this handle, with why (their
    /// engines are not offered here).
    pub fn unavailable_plugins(&self) -> &[UnavailablePlugin] {
        &self.unavailable
    }

    /// The plugin paths that gave no loaded plugin in this process, with why (discovery's
    /// problems, then the files that failed to load), as logged when the plugins were
    /// loaded.
    pub fn refused_plugins(&self) -> &[RefusedPlugin] {
        self.set.refused()
    }

    /// The engines of loaded plugins that admission dropped, with why (a name that does
    /// not hash to the id, a failed name query, an id an earlier plugin provides).
    pub fn dropped_engines(&self) -> &[DroppedEngine] {
        self.set.dropped_engines()
    }

    /// Paths of the plugins loaded in this process (`hipdnnGetLoadedEnginePluginPaths_ext`).
    pub fn loaded_plugin_paths(&self) -> Vec<PathBuf> {
        self.set
            .plugins()
            .iter()
            .map(|p| p.path().to_path_buf())
            .collect()
    }

    /// The engines this handle can route to, sorted by name, then id, then plugin name
    /// (`hipdnnGetEngineCount_ext` / `hipdnnGetEngineInfo_ext`).
    pub fn engines(&self) -> Vec<EngineSummary> {
        let mut engines: Vec<EngineSummary> = self
            .set
            .engines()
            .iter()
            .filter(|e| self.routes.contains_key(&e.id))
            .map(|e| {
                let plugin = &self.set.plugins()[e.plugin];
                EngineSummary {
                    id: e.id,
                    name: e.name.clone(),
                    plugin_name: plugin.name().to_owned(),
                    plugin_version: plugin.version().to_owned(),
                    plugin_type: "engine",
                }
            })
            .collect();
        engines
            .sort_by(|a, b| (&a.name, a.id, &a.plugin_name).cmp(&(&b.name, b.id, &b.plugin_name)));
        engines
    }

    /// The id of the engine named `name` (`hipdnnGetEngineIdByName_ext`).
    ///
    /// # Errors
    /// `NOT_SUPPORTED` when no engine of this handle has that name.
    pub fn engine_id_by_name(&self, name: &str) -> BackendResult<i64> {
        self.engines()
            .into_iter()
            .find(|e| e.name == name)
            .map(|e| e.id)
            .ok_or_else(|| BackendError::not_supported(format!("no engine named \"{name}\"")))
    }

    /// The plugin serving engine `id` on this handle, if any.
    pub fn plugin_for_engine(&self, id: i64) -> Option<&LoadedPlugin> {
        let handle = &self.plugin_handles[*self.routes.get(&id)?];
        Some(self.plugin(handle))
    }

    /// Number of plugins that made a plugin handle for this handle.
    pub fn plugin_handle_count(&self) -> usize {
        self.plugin_handles.len()
    }
}

impl Default for Handle {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for Handle {
    /// Destroys the plugin handles (failures are logged), then gives the plugin set back.
    fn drop(&mut self) {
        for handle in self.plugin_handles.drain(..) {
            let plugin = &self.set.plugins()[handle.plugin];
            // SAFETY: a live handle of this plugin, owned by `self`, not used again.
            if let Err(error) = unsafe { plugin.destroy_handle(handle.raw) } {
                tracing::error!("plugin '{}': {error}", plugin.name());
            }
        }
        manager::release();
    }
}
