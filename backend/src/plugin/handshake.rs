//! The load-time handshake: opening the library, resolving its entry points and asking
//! the plugin who it is (the steps are listed in the docs of
//! [the parent module](super)).

use std::collections::HashSet;
use std::ffi::{CStr, c_char, c_void};
use std::path::Path;

use hipdnn_plugin_abi::*;
use libloading::os::unix::{Library, RTLD_LOCAL, RTLD_NOW};

use super::calls::call_error;
use super::elf;
use super::strings::read_bounded;
use super::{EngineInfo, EngineName, LoadedPlugin, Status};
use crate::error::LoadError;
use crate::logging;

/// `RTLD_NODELETE`: `dlclose` releases the backend's reference but keeps the code mapped.
///
/// Unloading a plugin (EAGER mode, changed plugin paths) drops everything the backend
/// holds of it (handles, engines, function pointers, its reference to the library), but
/// the code itself stays mapped until the process exits: a plugin may leave threads (a
/// thread pool) or thread-local destructors that still run its code, and a Rust plugin's
/// statics are never dropped, so unmapping it would crash the process or leak them. A
/// later load of the same file gets the same, still-initialised library.
const RTLD_NODELETE: std::ffi::c_int = libc::RTLD_NODELETE;

/// Longest name or version string accepted from a plugin, in bytes.
pub const MAX_STRING_LEN: usize = 4096;

/// Most engines accepted from one plugin: the id buffer is allocated from the count
/// the plugin reports, so the count is bounded.
pub const MAX_ENGINES: u32 = 1 << 16;

/// The API version assumed for a plugin that does not export `hipdnnPluginGetApiVersion`.
pub const DEFAULT_API_VERSION: semver::Version = semver::Version::new(1, 0, 0);

/// Looks `name` up in `library`: its address, or null when it is not exported.
fn symbol_address(library: &Library, name: &CStr) -> *mut c_void {
    // SAFETY: read as a plain address, which any symbol is; the name is NUL-terminated,
    // so libloading passes it to `dlsym` as is.
    unsafe { library.get::<*mut c_void>(name.to_bytes_with_nul()) }
        .map_or(std::ptr::null_mut(), |symbol| *symbol)
}

/// Resolving and calling one plugin during the handshake.
struct Handshake<'a> {
    path: &'a Path,
    library: &'a Library,
    last_error: Option<hipdnnPluginGetLastErrorString_fn>,
}

impl Handshake<'_> {
    fn missing(&self, error: MissingSymbol) -> LoadError {
        LoadError::MissingSymbol {
            path: self.path.to_path_buf(),
            symbol: error.symbol,
        }
    }

    fn log_missing_optional(&self, symbols: Vec<&'static str>) {
        for symbol in symbols {
            tracing::info!(
                "plugin {} does not export the optional symbol `{symbol}`",
                self.path.display()
            );
        }
    }

    fn check(&self, status: Status, action: impl FnOnce() -> String) -> Result<(), LoadError> {
        if status == HIPDNN_PLUGIN_STATUS_SUCCESS {
            return Ok(());
        }
        Err(LoadError::Call {
            path: self.path.to_path_buf(),
            call: call_error(self.last_error, status, action()),
        })
    }

    /// Calls a string getter and copies its string.
    fn string(
        &self,
        f: hipdnnPluginGetName_fn,
        symbol: &'static str,
        action: &str,
    ) -> Result<String, LoadError> {
        let mut out: *const c_char = std::ptr::null();
        // SAFETY: `f` was resolved with its declared type; `out` is writable.
        let status = unsafe { f(&mut out) };
        self.check(status, || action.to_owned())?;
        if out.is_null() {
            return Err(LoadError::NullString {
                path: self.path.to_path_buf(),
                symbol,
            });
        }
        // SAFETY: on success the plugin wrote a NUL-terminated string it owns.
        unsafe { read_bounded(out, MAX_STRING_LEN) }.map_err(|_| LoadError::StringTooLong {
            path: self.path.to_path_buf(),
            symbol,
            max: MAX_STRING_LEN,
        })
    }
}

/// Parses and checks an API version (step 5 of the handshake).
fn check_api_version(path: &Path, text: &str) -> Result<semver::Version, LoadError> {
    let version =
        semver::Version::parse(text).map_err(|reason| LoadError::UnparsableApiVersion {
            path: path.to_path_buf(),
            version: text.to_owned(),
            reason,
        })?;
    match version.major {
        m if m == u64::from(HIPDNN_ENGINE_API_VERSION_MAJOR) => Ok(version),
        0 => {
            tracing::info!(
                "plugin {} implements engine plugin api {version}: accepted as a pre-1.0 plugin \
                 (its engines are listed, but it is asked about no graph: every graph needs \
                 at least {DEFAULT_API_VERSION})",
                path.display()
            );
            Ok(version)
        }
        _ => Err(LoadError::UnsupportedApiVersion {
            path: path.to_path_buf(),
            version,
        }),
    }
}

impl LoadedPlugin {
    /// Checks that `path` is a regular file holding a shared object this process can
    /// map whole ([`elf`]), then opens it with `RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE`
    /// and runs the handshake (module docs).
    ///
    /// Loading runs the library's initializers and then its entry points: plugins are
    /// trusted code, as every library a program loads. Misbehaviour the ABI allows to be
    /// detected (failing calls, bad versions, bad ids, null or endless strings, missing
    /// symbols) is an error, never a panic. A plugin panicking across the ABI instead of
    /// returning a status aborts the process; the plugin SDK prevents that.
    ///
    /// # Errors
    /// The first way the plugin failed the handshake; see [`LoadError`].
    pub fn load(path: &Path) -> Result<Self, LoadError> {
        // Not opened at all unless it is a regular file (a FIFO would block the open).
        let meta = std::fs::metadata(path).map_err(|e| LoadError::NotLoadable {
            path: path.to_path_buf(),
            reason: e.into(),
        })?;
        if !meta.is_file() {
            return Err(LoadError::NotAFile {
                path: path.to_path_buf(),
                kind: crate::discovery::file_kind(&meta.file_type()),
            });
        }
        elf::check_shared_object(path).map_err(|reason| LoadError::NotLoadable {
            path: path.to_path_buf(),
            reason,
        })?;
        // SAFETY: loading a plugin runs its initializers; plugins are trusted code (see
        // above). The flags are hipDNN's plus `RTLD_NODELETE` ([`RTLD_NODELETE`]).
        let library = unsafe { Library::open(Some(path), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE) }
            .map_err(|source| LoadError::Open {
            path: path.to_path_buf(),
            source,
        })?;
        let mut hs = Handshake {
            path,
            library: &library,
            last_error: None,
        };

        // SAFETY: the library's symbols are the hipDNN functions of their names (a
        // plugin is trusted code); the table lives next to the library in `Self`, which
        // drops the library last.
        let base = unsafe { BaseApi::resolve(|name| symbol_address(&library, name)) }
            .map_err(|e| hs.missing(e))?;
        hs.last_error = Some(base.get_last_error_string);
        hs.log_missing_optional(base.missing_optional());

        let name = hs.string(base.get_name, "hipdnnPluginGetName", "get the plugin name")?;
        let version = hs.string(
            base.get_version,
            "hipdnnPluginGetVersion",
            "get the plugin version",
        )?;
        let api_text = match base.get_api_version {
            Some(f) => {
                Some(hs.string(f, "hipdnnPluginGetApiVersion", "get the plugin api version")?)
            }
            None => None,
        };
        let mut plugin_type = HIPDNN_PLUGIN_TYPE_UNSPECIFIED;
        // SAFETY: resolved with its declared type; the out-parameter is writable.
        let status = unsafe { (base.get_type)(&mut plugin_type) };
        hs.check(status, || "get the plugin type".to_owned())?;
        if plugin_type != HIPDNN_PLUGIN_TYPE_ENGINE {
            return Err(LoadError::WrongType {
                path: path.to_path_buf(),
                found: plugin_type,
            });
        }

        if let Some(f) = base.set_logging_callback {
            // SAFETY: resolved with its declared type; the sink is a `'static` function
            // matching `hipdnnCallback_t`.
            let status = unsafe { f(Some(logging::plugin_log_sink)) };
            hs.check(status, || "set the logging callback".to_owned())?;
        }
        if let Some(f) = base.set_log_level {
            let level = logging::current_severity();
            // SAFETY: resolved with its declared type; `level` is a defined severity.
            let status = unsafe { f(level) };
            hs.check(status, || format!("set the log level to {level}"))?;
        }

        let api = Self::resolve_engine_api(&hs)?;

        let api_version = match &api_text {
            Some(text) => check_api_version(path, text)?,
            None => {
                tracing::info!(
                    "plugin {} does not report its api version: assuming {DEFAULT_API_VERSION}",
                    path.display()
                );
                DEFAULT_API_VERSION
            }
        };

        let ids = Self::engine_ids(&hs, api.get_all_engine_ids)?;
        let engines = ids
            .into_iter()
            .map(|id| EngineInfo {
                id,
                name: api
                    .get_engine_name
                    .map_or(EngineName::Unnamed, |f| Self::engine_name(&hs, f, id)),
            })
            .collect();

        Ok(Self {
            path: path.to_path_buf(),
            name,
            version,
            api_version,
            engines,
            base,
            api,
            _library: library,
        })
    }

    fn resolve_engine_api(hs: &Handshake<'_>) -> Result<EngineApi, LoadError> {
        // SAFETY: as for the base functions in `load`.
        let api = unsafe { EngineApi::resolve(|name| symbol_address(hs.library, name)) }
            .map_err(|e| hs.missing(e))?;
        hs.log_missing_optional(api.missing_optional());
        if api.has_partial_serialization() {
            tracing::warn!(
                "plugin {} exports only some of the three plan-serialization \
                 functions: plan serialization is not supported",
                hs.path.display()
            );
        }
        Ok(api)
    }

    /// The two-call `GetAllEngineIds`, checked (step 6 of the handshake).
    fn engine_ids(
        hs: &Handshake<'_>,
        f: hipdnnEnginePluginGetAllEngineIds_fn,
    ) -> Result<Vec<i64>, LoadError> {
        let path = || hs.path.to_path_buf();
        let mut count = 0u32;
        // SAFETY: resolved with its declared type; with `max_engines == 0` the id array
        // may be null; `count` is writable.
        let status = unsafe { f(std::ptr::null_mut(), 0, &mut count) };
        hs.check(status, || "get the engine count".to_owned())?;
        if count == 0 {
            return Err(LoadError::NoEngines { path: path() });
        }
        if count > MAX_ENGINES {
            return Err(LoadError::TooManyEngines {
                path: path(),
                count,
                max: MAX_ENGINES,
            });
        }
        let mut ids = vec![0i64; count as usize];
        let mut written = 0u32;
        // SAFETY: `ids` has room for `count` ids, the `max_engines` passed; `written` is
        // writable.
        let status = unsafe { f(ids.as_mut_ptr(), count, &mut written) };
        hs.check(status, || "get the engine ids".to_owned())?;
        if written != count {
            return Err(LoadError::InconsistentEngineCount {
                path: path(),
                first: count,
                second: written,
            });
        }
        let mut seen = HashSet::with_capacity(ids.len());
        if let Some(&id) = ids.iter().find(|&&id| !seen.insert(id)) {
            return Err(LoadError::DuplicateEngineId { path: path(), id });
        }
        Ok(ids)
    }

    fn engine_name(
        hs: &Handshake<'_>,
        f: hipdnnEnginePluginGetEngineName_fn,
        id: i64,
    ) -> EngineName {
        let mut out: *const c_char = std::ptr::null();
        // SAFETY: resolved with its declared type; `out` is writable.
        let status = unsafe { f(id, &mut out) };
        if status == HIPDNN_PLUGIN_STATUS_NOT_APPLICABLE {
            return EngineName::Unnamed;
        }
        if status != HIPDNN_PLUGIN_STATUS_SUCCESS {
            let call = call_error(
                hs.last_error,
                status,
                format!("get the name of engine {id}"),
            );
            return EngineName::Failed(call.to_string());
        }
        // hipDNN reads a null or empty name given with SUCCESS as no name at all: the
        // engine is kept and named from the registry, else by its id in hex.
        if out.is_null() {
            tracing::debug!(
                "plugin {} gives engine {id} a null name: taken as unnamed",
                hs.path.display()
            );
            return EngineName::Unnamed;
        }
        // SAFETY: on success the plugin wrote a NUL-terminated string it owns.
        match unsafe { read_bounded(out, MAX_STRING_LEN) } {
            Ok(name) if name.is_empty() => {
                tracing::debug!(
                    "plugin {} gives engine {id} an empty name: taken as unnamed",
                    hs.path.display()
                );
                EngineName::Unnamed
            }
            Ok(name) => EngineName::Named(name),
            Err(_) => EngineName::Failed(format!(
                "the name of engine {id} is longer than {MAX_STRING_LEN} bytes"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_versions_follow_the_handshake_rules() {
        let p = Path::new("/x/libp.so");
        assert_eq!(
            check_api_version(p, "1.4.0").unwrap(),
            semver::Version::new(1, 4, 0)
        );
        assert_eq!(
            check_api_version(p, "0.9.1").unwrap(),
            semver::Version::new(0, 9, 1)
        );
        let two = check_api_version(p, "2.0.0").unwrap_err();
        assert_eq!(
            two.to_string(),
            "plugin /x/libp.so implements engine plugin api 2.0.0, but this backend supports \
             major version 1"
        );
        let bad = check_api_version(p, "1.x").unwrap_err();
        assert!(
            bad.to_string().starts_with(
                "plugin /x/libp.so reports api version `1.x`, which is not a semantic version"
            ),
            "{bad}"
        );
    }

    #[test]
    fn a_non_library_is_refused_before_dlopen() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let file = dir.path().join("libnot.so");
        std::fs::write(&file, b"garbage").expect("write");
        let error = LoadedPlugin::load(&file).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "plugin {} is not a loadable shared object: the file is 7 bytes, shorter \
                 than an ELF header (64 bytes)",
                file.display()
            )
        );
        let error = LoadedPlugin::load(dir.path()).unwrap_err();
        assert!(
            matches!(
                error,
                LoadError::NotAFile {
                    kind: "directory",
                    ..
                }
            ),
            "{error}"
        );
    }
}
