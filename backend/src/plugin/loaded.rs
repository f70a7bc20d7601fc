//! A loaded plugin and what it reported at load.

use std::fmt;
use std::path::{Path, PathBuf};

use hipdnn_plugin_abi::{BaseApi, EngineApi};
use libloading::os::unix::Library;

/// What a plugin said about an engine's name (`hipdnnEnginePluginGetEngineName`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EngineName {
    /// The plugin does not export `GetEngineName`, answered `NOT_APPLICABLE`, or
    /// answered `SUCCESS` with a null or empty name (as hipDNN, the engine is kept and
    /// named from the registry, else by its id in hex).
    Unnamed,
    /// The name the plugin gave (not empty).
    Named(String),
    /// Any other answer (a failure status, a string longer than the bound); admission
    /// drops such an engine.
    Failed(String),
}

impl EngineName {
    /// The name, when the plugin gave one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Self::Named(name) => Some(name),
            _ => None,
        }
    }
}

/// One engine a plugin declared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineInfo {
    /// The engine id.
    pub id: i64,
    /// Its name, as the plugin reported it.
    pub name: EngineName,
}

/// A loaded engine plugin that passed the handshake.
///
/// The function pointers are copied out of the library and valid only while it is
/// loaded: they live in this struct next to the [`Library`], which is declared (and so
/// dropped) last and never handed out.
pub struct LoadedPlugin {
    pub(super) path: PathBuf,
    pub(super) name: String,
    pub(super) version: String,
    pub(super) api_version: semver::Version,
    pub(super) engines: Vec<EngineInfo>,
    pub(super) base: BaseApi,
    pub(super) api: EngineApi,
    /// Dropped last: unloading the library invalidates every pointer above.
    pub(super) _library: Library,
}

impl fmt::Debug for LoadedPlugin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoadedPlugin")
            .field("path", &self.path)
            .field("name", &self.name)
            .field("version", &self.version)
            .field("api_version", &self.api_version)
            .field("engines", &self.engines)
            .finish_non_exhaustive()
    }
}

impl LoadedPlugin {
    /// The file it was loaded from (canonical when it came from discovery).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The plugin's name (`hipdnnPluginGetName`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The plugin's own version, free-form (`hipdnnPluginGetVersion`).
    pub fn version(&self) -> &str {
        &self.version
    }

    /// The engine plugin API version it implements (`1.0.0` when not reported).
    pub fn api_version(&self) -> &semver::Version {
        &self.api_version
    }

    /// Its engines, in the order the plugin listed them.
    pub fn engines(&self) -> &[EngineInfo] {
        &self.engines
    }

    /// Whether it exports `hipdnnEnginePluginGetEngineName`.
    pub fn exports_engine_names(&self) -> bool {
        self.api.get_engine_name.is_some()
    }

    /// Whether it exports `hipdnnEnginePluginExecuteOpGraphWithOverrides`.
    pub fn supports_overrides(&self) -> bool {
        self.api.execute_op_graph_with_overrides.is_some()
    }

    /// Whether it exports all three plan-serialization functions.
    pub fn supports_serialization(&self) -> bool {
        self.api.serialization().is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loaded_plugins_can_be_shared_between_threads() {
        fn shareable<T: Send + Sync>() {}
        shareable::<LoadedPlugin>();
    }
}
