//! Errors of plugin loading.

use std::path::PathBuf;

use hipdnn_plugin_abi::{
    HIPDNN_ENGINE_API_VERSION_MAJOR, HIPDNN_PLUGIN_TYPE_ENGINE, hipdnnPluginStatus_t,
    hipdnnPluginType_t,
};

/// A plugin entry point returned a failure status.
///
/// Displays as hipDNN's text, `Failed to <action>. Status: <NAME>(<n>), Error: <msg>`,
/// where `<msg>` is the plugin's last error (`hipdnnPluginGetLastErrorString`), copied
/// right after the call on the same thread.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Failed to {action}. Status: {status}, Error: {message}")]
pub struct PluginCallError {
    /// What the backend was doing, e.g. "get the plugin name".
    pub action: String,
    /// The status returned.
    pub status: hipdnnPluginStatus_t,
    /// The plugin's last error, possibly empty.
    pub message: String,
}

/// Why a plugin file was not loaded. Each is logged as
/// `Error loading plugin from [path]: {error}` and loading goes on with the next file.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The path is not a regular file (a directory, a FIFO, a device, a socket): it is
    /// not opened.
    #[error("plugin {} is a {kind}, not a regular file: not opened", path.display())]
    NotAFile {
        /// The plugin path.
        path: PathBuf,
        /// What it is.
        kind: &'static str,
    },
    /// The file is not a shared object this process can map whole (checked before
    /// `dlopen`, see [`elf`](crate::plugin::elf)): truncated, not ELF, another machine.
    #[error("plugin {} is not a loadable shared object: {reason}", path.display())]
    NotLoadable {
        /// The plugin file.
        path: PathBuf,
        /// What is wrong with it.
        #[source]
        reason: crate::plugin::elf::ElfError,
    },
    /// `dlopen` failed (not a shared library, unresolved symbols under `RTLD_NOW`, …).
    #[error("cannot open plugin {}: {source}", path.display())]
    Open {
        /// The plugin file.
        path: PathBuf,
        /// The loader's message.
        #[source]
        source: libloading::Error,
    },
    /// A symbol the backend requires is not exported. The text starts as hipDNN's does,
    /// `Failed to get symbol: <name>`, so that what matches on hipDNN's message matches
    /// on ours.
    #[error(
        "plugin {}: Failed to get symbol: {symbol} (Error: the plugin does not export this \
         required symbol)",
        path.display()
    )]
    MissingSymbol {
        /// The plugin file.
        path: PathBuf,
        /// The symbol.
        symbol: &'static str,
    },
    /// A handshake call returned a failure status.
    #[error("plugin {}: {call}", path.display())]
    Call {
        /// The plugin file.
        path: PathBuf,
        /// The failed call.
        call: PluginCallError,
    },
    /// A call succeeded but left its string out-parameter null.
    #[error("plugin {}: `{symbol}` succeeded but returned a null string", path.display())]
    NullString {
        /// The plugin file.
        path: PathBuf,
        /// The entry point.
        symbol: &'static str,
    },
    /// A string with no NUL within the bound.
    #[error(
        "plugin {}: `{symbol}` returned a string longer than {max} bytes",
        path.display()
    )]
    StringTooLong {
        /// The plugin file.
        path: PathBuf,
        /// The entry point.
        symbol: &'static str,
        /// The bound, in bytes.
        max: usize,
    },
    /// The plugin is not an engine plugin.
    #[error(
        "plugin {} has type {found}, expected {}",
        path.display(),
        HIPDNN_PLUGIN_TYPE_ENGINE
    )]
    WrongType {
        /// The plugin file.
        path: PathBuf,
        /// The type it reported.
        found: hipdnnPluginType_t,
    },
    /// `hipdnnPluginGetApiVersion` gave a string that is not a semantic version.
    #[error(
        "plugin {} reports api version `{version}`, which is not a semantic version: {reason}",
        path.display()
    )]
    UnparsableApiVersion {
        /// The plugin file.
        path: PathBuf,
        /// The string reported.
        version: String,
        /// Why it does not parse.
        reason: semver::Error,
    },
    /// An API major version this backend does not implement.
    #[error(
        "plugin {} implements engine plugin api {version}, but this backend supports major version {}",
        path.display(),
        HIPDNN_ENGINE_API_VERSION_MAJOR
    )]
    UnsupportedApiVersion {
        /// The plugin file.
        path: PathBuf,
        /// The version reported.
        version: semver::Version,
    },
    /// `hipdnnEnginePluginGetAllEngineIds` reported no engines.
    #[error("plugin {} reports no engines", path.display())]
    NoEngines {
        /// The plugin file.
        path: PathBuf,
    },
    /// More engines than the backend accepts from one plugin.
    #[error("plugin {} reports {count} engines, more than the {max} accepted", path.display())]
    TooManyEngines {
        /// The plugin file.
        path: PathBuf,
        /// The count reported.
        count: u32,
        /// The limit.
        max: u32,
    },
    /// The two calls of `hipdnnEnginePluginGetAllEngineIds` disagree.
    #[error(
        "plugin {} reported {first} engines, then wrote {second} engine ids",
        path.display()
    )]
    InconsistentEngineCount {
        /// The plugin file.
        path: PathBuf,
        /// The count from the sizing call.
        first: u32,
        /// The count written by the second call.
        second: u32,
    },
    /// An engine id listed twice by the same plugin.
    #[error("plugin {} reports engine id {id} more than once", path.display())]
    DuplicateEngineId {
        /// The plugin file.
        path: PathBuf,
        /// The repeated id.
        id: i64,
    },
}

impl LoadError {
    /// The plugin file concerned.
    pub fn path(&self) -> &std::path::Path {
        match self {
            Self::NotAFile { path, .. }
            | Self::NotLoadable { path, .. }
            | Self::Open { path, .. }
            | Self::MissingSymbol { path, .. }
            | Self::Call { path, .. }
            | Self::NullString { path, .. }
            | Self::StringTooLong { path, .. }
            | Self::WrongType { path, .. }
            | Self::UnparsableApiVersion { path, .. }
            | Self::UnsupportedApiVersion { path, .. }
            | Self::NoEngines { path }
            | Self::TooManyEngines { path, .. }
            | Self::InconsistentEngineCount { path, .. }
            | Self::DuplicateEngineId { path, .. } => path,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hipdnn_plugin_abi::HIPDNN_PLUGIN_STATUS_INTERNAL_ERROR;

    #[test]
    fn call_errors_read_as_hipdnns() {
        let call = PluginCallError {
            action: "get the plugin name".into(),
            status: HIPDNN_PLUGIN_STATUS_INTERNAL_ERROR,
            message: "boom".into(),
        };
        assert_eq!(
            call.to_string(),
            "Failed to get the plugin name. Status: HIPDNN_PLUGIN_STATUS_INTERNAL_ERROR(3), \
             Error: boom"
        );
        let error = LoadError::Call {
            path: "/p/libx.so".into(),
            call,
        };
        assert!(
            error
                .to_string()
                .starts_with("plugin /p/libx.so: Failed to get")
        );
        assert_eq!(error.path(), std::path::Path::new("/p/libx.so"));
    }

    #[test]
    fn a_missing_symbol_reads_as_hipdnns() {
        let error = LoadError::MissingSymbol {
            path: "/p/libx.so".into(),
            symbol: "hipdnnEnginePluginCreate",
        };
        assert_eq!(
            error.to_string(),
            "plugin /p/libx.so: Failed to get symbol: hipdnnEnginePluginCreate (Error: the \
             plugin does not export this required symbol)"
        );
    }
}
