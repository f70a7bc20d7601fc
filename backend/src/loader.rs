//! Loading every discovered plugin file, going on past failures (as hipDNN's backend
//! does: one bad plugin does not keep the others from loading).

use std::path::{Path, PathBuf};

use crate::error::LoadError;
use crate::plugin::LoadedPlugin;

/// Loads each file in order with [`LoadedPlugin::load`].
///
/// A file that fails is logged at error level as
/// `Error loading plugin from [path]: {error}`, returned with its error, and loading goes
/// on with the next one. Loading nothing is not an error: graphs then find no engine.
pub fn load_plugins<P: AsRef<Path>>(files: &[P]) -> (Vec<LoadedPlugin>, Vec<(PathBuf, LoadError)>) {
    let mut loaded = Vec::with_capacity(files.len());
    let mut failed = Vec::new();
    for file in files {
        let path = file.as_ref();
        match LoadedPlugin::load(path) {
            Ok(plugin) => {
                tracing::info!(
                    "loaded plugin {} {} (engine plugin api {}) from [{}] with {} engine(s)",
                    plugin.name(),
                    plugin.version(),
                    plugin.api_version(),
                    path.display(),
                    plugin.engines().len()
                );
                loaded.push(plugin);
            }
            Err(error) => {
                tracing::error!("Error loading plugin from [{}]: {error}", path.display());
                failed.push((path.to_path_buf(), error));
            }
        }
    }
    (loaded, failed)
}
