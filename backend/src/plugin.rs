//! One loaded engine plugin: the library, every entry point resolved from it, and what
//! the load-time handshake learned (reference §1.3, §1.6, §2.4).
//!
//! [`LoadedPlugin::load`] opens the file with `RTLD_NOW | RTLD_LOCAL` (plus
//! `RTLD_NODELETE`, see below) and runs hipDNN's handshake, in hipDNN's order:
//!
//! 1. resolve the base symbols: `hipdnnPluginGetName`, `GetVersion`, `GetType`,
//!    `GetLastErrorString` are required; `GetApiVersion`, `SetLoggingCallback`,
//!    `SetLogLevel` are optional (a missing one is logged at info);
//! 2. call GetName, GetVersion, GetApiVersion (absent ⇒ `1.0.0`) and GetType, which
//!    must say `ENGINE`;
//! 3. install the backend's log sink and push the current log level;
//! 4. resolve the 12 required engine symbols (a missing one rejects the plugin, naming
//!    it) and the optional ones (`GetEngineName`, `ExecuteOpGraphWithOverrides`, and the
//!    three plan-serialization functions, which count only all together);
//! 5. check the API version: a semantic version with major 1 (major 0 is accepted with
//!    an info log, as hipDNN's transitional shim does);
//! 6. read the engine ids with the two-call protocol: at least one, the same count in
//!    both calls, no id twice;
//! 7. ask each engine's name when `GetEngineName` is exported. Names are recorded, not
//!    yet checked: admission (name hashes to id, first plugin keeps a duplicate id)
//!    happens when engines are routed.
//!
//! Every call's status is checked; on failure the plugin's last error is copied at once
//! and the error reads `Failed to <action>. Status: <NAME>(<n>), Error: <msg>`. Strings
//! from the plugin are read with a length bound.

use std::collections::HashSet;
use std::ffi::{CStr, c_char, c_void};
use std::fmt;
use std::path::{Path, PathBuf};

use hipdnn_plugin_abi::*;
use libloading::os::unix::{Library, RTLD_LOCAL, RTLD_NOW};

/// `RTLD_NODELETE`: `dlclose` releases the backend's reference but keeps the code mapped.
///
/// Unloading a plugin (EAGER mode, changed plugin paths) drops everything the backend
/// holds of it (handles, engines, function pointers, its reference to the library), but
/// the code itself stays mapped until the process exits: a plugin may leave threads (a
/// thread pool) or thread-local destructors that still run its code, and a Rust plugin's
/// statics are never dropped, so unmapping it would crash the process or leak them. A
/// later load of the same file gets the same, still-initialised library.
const RTLD_NODELETE: std::ffi::c_int = libc::RTLD_NODELETE;

use crate::error::{LoadError, PluginCallError};
use crate::logging;

type Status = hipdnnPluginStatus_t;
type Span = hipdnnPluginConstData_t;
type PluginHandle = hipdnnEnginePluginHandle_t;
type Context = hipdnnEnginePluginExecutionContext_t;

/// Longest name or version string accepted from a plugin, in bytes.
pub const MAX_STRING_LEN: usize = 4096;

/// Most engines accepted from one plugin: the id buffer is allocated from the count
/// the plugin reports, so the count is bounded.
pub const MAX_ENGINES: u32 = 1 << 16;

/// The API version assumed for a plugin that does not export `hipdnnPluginGetApiVersion`.
pub const DEFAULT_API_VERSION: semver::Version = semver::Version::new(1, 0, 0);

/// What a plugin said about an engine's name (`hipdnnEnginePluginGetEngineName`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EngineName {
    /// The plugin does not export `GetEngineName`, or answered `NOT_APPLICABLE`.
    Unnamed,
    /// The name the plugin gave.
    Named(String),
    /// Any other answer (a failure status, a null or over-long string); admission drops
    /// such an engine.
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
    path: PathBuf,
    name: String,
    version: String,
    api_version: semver::Version,
    engines: Vec<EngineInfo>,
    base: BaseApi,
    api: EngineApi,
    /// Dropped last: unloading the library invalidates every pointer above.
    _library: Library,
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

/// Reads a NUL-terminated string of at most `max` bytes (NUL excluded), lossily as
/// UTF-8. `Err` holds the first `max` bytes when no NUL came within them.
///
/// # Safety
/// `ptr` is non-null and points to a NUL-terminated string readable up to its NUL (or
/// to `max` bytes, whichever is first).
pub(crate) unsafe fn read_bounded(ptr: *const c_char, max: usize) -> Result<String, String> {
    let mut len = 0;
    // SAFETY: bytes before the first NUL belong to the string; we stop at the NUL or at
    // `max`, never beyond.
    while len < max && unsafe { *ptr.add(len) } != 0 {
        len += 1;
    }
    // SAFETY: the `len` bytes just scanned are readable.
    let bytes = unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), len) };
    let text = String::from_utf8_lossy(bytes).into_owned();
    // SAFETY: when `len < max` the loop stopped at the NUL, which is readable.
    if len < max || unsafe { *ptr.add(len) } == 0 {
        Ok(text)
    } else {
        Err(text)
    }
}

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

/// Builds the error of a failed call, reading the plugin's last error right away.
fn call_error(
    last_error: Option<hipdnnPluginGetLastErrorString_fn>,
    status: Status,
    action: String,
) -> PluginCallError {
    let message = last_error.map(read_last_error).unwrap_or_default();
    PluginCallError {
        action,
        status,
        message,
    }
}

/// The plugin's last error on this thread, copied (and cut at the SDK's buffer size).
fn read_last_error(f: hipdnnPluginGetLastErrorString_fn) -> String {
    let mut out: *const c_char = std::ptr::null();
    // SAFETY: `f` was resolved with its declared type; `out` is writable.
    unsafe { f(&mut out) };
    if out.is_null() {
        return String::new();
    }
    // SAFETY: the plugin wrote a pointer to its NUL-terminated thread-local buffer,
    // valid until this thread's next call into it; it is copied here.
    unsafe { read_bounded(out, HIPDNN_PLUGIN_ERROR_STRING_MAX_LENGTH) }.unwrap_or_else(|cut| cut)
}

/// Parses and checks an API version (§1.6).
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
                "plugin {} implements engine plugin api {version}: accepted as a pre-1.0 plugin",
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
    /// Opens `path` with `RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE` and runs the handshake
    /// (module docs).
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

    /// The two-call `GetAllEngineIds`, checked (§2.4 `validateBeforeAdding`).
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
        if out.is_null() {
            return EngineName::Failed(format!(
                "hipdnnEnginePluginGetEngineName succeeded for engine {id} but returned a null name"
            ));
        }
        // SAFETY: on success the plugin wrote a NUL-terminated string it owns.
        match unsafe { read_bounded(out, MAX_STRING_LEN) } {
            Ok(name) => EngineName::Named(name),
            Err(_) => EngineName::Failed(format!(
                "the name of engine {id} is longer than {MAX_STRING_LEN} bytes"
            )),
        }
    }

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

    /// Pushes a new log level to the plugin (no-op when it does not export
    /// `hipdnnPluginSetLogLevel`).
    ///
    /// # Errors
    /// The plugin's failure.
    pub fn set_log_level(&self, level: hipdnnSeverity_t) -> Result<(), PluginCallError> {
        let Some(f) = self.base.set_log_level else {
            return Ok(());
        };
        // SAFETY: resolved with its declared type from the library `self` keeps loaded.
        let status = unsafe { f(level) };
        self.check(status, || format!("set the log level to {level}"))
    }

    /// Creates a plugin handle (`hipdnnEnginePluginCreate`); null is returned as is, for
    /// the caller to reject.
    ///
    /// # Errors
    /// The plugin's failure (including a panic it caught).
    pub(crate) fn create_handle(&self) -> Result<hipdnnEnginePluginHandle_t, PluginCallError> {
        let mut handle: hipdnnEnginePluginHandle_t = std::ptr::null_mut();
        // SAFETY: resolved with its declared type from the library `self` keeps loaded;
        // the out-pointer is valid for the call.
        let status = unsafe { (self.api.create)(&mut handle) };
        self.check(status, || "create a plugin handle".to_owned())?;
        Ok(handle)
    }

    /// Destroys a plugin handle (`hipdnnEnginePluginDestroy`).
    ///
    /// # Safety
    /// `handle` came from [`LoadedPlugin::create_handle`] of this plugin and is not used
    /// afterwards.
    ///
    /// # Errors
    /// The plugin's failure.
    pub(crate) unsafe fn destroy_handle(
        &self,
        handle: hipdnnEnginePluginHandle_t,
    ) -> Result<(), PluginCallError> {
        // SAFETY: per this function's contract.
        let status = unsafe { (self.api.destroy)(handle) };
        self.check(status, || "destroy a plugin handle".to_owned())
    }

    /// Sets the stream of a plugin handle (`hipdnnEnginePluginSetStream`).
    ///
    /// # Safety
    /// `handle` is a live handle of this plugin.
    ///
    /// # Errors
    /// The plugin's failure.
    pub(crate) unsafe fn set_stream(
        &self,
        handle: hipdnnEnginePluginHandle_t,
        stream: hipStream_t,
    ) -> Result<(), PluginCallError> {
        // SAFETY: per this function's contract.
        let status = unsafe { (self.api.set_stream)(handle, stream) };
        self.check(status, || "set the stream".to_owned())
    }

    /// The engines of this plugin that can run `graph` (a serialized `Graph`)
    /// (`hipdnnEnginePluginGetApplicableEngineIds`), with a buffer sized to the plugin's
    /// engine count; ids beyond it are cut.
    ///
    /// # Safety
    /// `handle` is a live handle of this plugin.
    ///
    /// # Errors
    /// The plugin's failure.
    pub(crate) unsafe fn applicable_engine_ids(
        &self,
        handle: PluginHandle,
        graph: &[u8],
    ) -> Result<Vec<i64>, PluginCallError> {
        let span = Span {
            ptr: graph.as_ptr().cast(),
            size: graph.len(),
        };
        let mut ids = vec![0i64; self.engines.len().max(1)];
        let mut count = 0u32;
        let capacity = u32::try_from(ids.len()).unwrap_or(u32::MAX);
        // SAFETY: `handle` is live per the contract; the graph span and the id buffer
        // are valid for the call, the buffer for `capacity` ids.
        let status = unsafe {
            (self.api.get_applicable_engine_ids)(
                handle,
                &span,
                ids.as_mut_ptr(),
                capacity,
                &mut count,
            )
        };
        self.check(status, || "get applicable engine ids".to_owned())?;
        // The plugin may report more applicable ids than fit; only the first ones exist.
        ids.truncate((count as usize).min(ids.len()));
        Ok(ids)
    }

    /// The serialized `EngineDetails` of `engine` for `graph`
    /// (`hipdnnEnginePluginGetEngineDetails`), copied and handed back to the plugin
    /// (`hipdnnEnginePluginDestroyEngineDetails`) before returning.
    ///
    /// # Safety
    /// `handle` is a live handle of this plugin.
    ///
    /// # Errors
    /// The plugin's failure, or a null buffer with a non-zero size.
    pub(crate) unsafe fn engine_details(
        &self,
        handle: PluginHandle,
        engine: i64,
        graph: &[u8],
    ) -> Result<Vec<u8>, PluginCallError> {
        let span = Span {
            ptr: graph.as_ptr().cast(),
            size: graph.len(),
        };
        let mut details = Span {
            ptr: std::ptr::null(),
            size: 0,
        };
        // SAFETY: `handle` is live per the contract; the spans are valid for the call.
        let status = unsafe { (self.api.get_engine_details)(handle, engine, &span, &mut details) };
        self.check(status, || {
            format!("get engine details of engine {engine:#018x}")
        })?;
        let bytes = if details.size == 0 {
            Ok(Vec::new())
        } else if details.ptr.is_null() {
            Err(call_error(
                None,
                HIPDNN_PLUGIN_STATUS_INTERNAL_ERROR,
                format!(
                    "get engine details of engine {engine:#018x}: the plugin returned a null buffer of {} bytes",
                    details.size
                ),
            ))
        } else {
            // SAFETY: the plugin owns `size` readable bytes at `ptr` until the destroy call
            // below.
            Ok(
                unsafe { std::slice::from_raw_parts(details.ptr.cast::<u8>(), details.size) }
                    .to_vec(),
            )
        };
        if !details.ptr.is_null() {
            // SAFETY: the span the plugin returned for this handle, given back once.
            let status = unsafe { (self.api.destroy_engine_details)(handle, &mut details) };
            if let Err(error) = self.check(status, || "destroy engine details".to_owned()) {
                tracing::warn!("plugin '{}': {error}", self.name);
            }
        }
        bytes
    }

    /// Builds an execution context for a serialized `EngineConfig` and `Graph`
    /// (`hipdnnEnginePluginCreateExecutionContext`).
    ///
    /// # Safety
    /// `handle` is a live handle of this plugin.
    ///
    /// # Errors
    /// The plugin's failure, or a null context.
    pub(crate) unsafe fn create_execution_context(
        &self,
        handle: PluginHandle,
        config: &[u8],
        graph: &[u8],
    ) -> Result<Context, PluginCallError> {
        let config = Span {
            ptr: config.as_ptr().cast(),
            size: config.len(),
        };
        let graph = Span {
            ptr: graph.as_ptr().cast(),
            size: graph.len(),
        };
        let mut context: Context = std::ptr::null_mut();
        // SAFETY: `handle` is live per the contract; spans and out-pointer valid.
        let status =
            unsafe { (self.api.create_execution_context)(handle, &config, &graph, &mut context) };
        self.check(status, || "create an execution context".to_owned())?;
        if context.is_null() {
            return Err(call_error(
                None,
                HIPDNN_PLUGIN_STATUS_INTERNAL_ERROR,
                "create an execution context: the plugin returned a null context".to_owned(),
            ));
        }
        Ok(context)
    }

    /// Destroys an execution context (`hipdnnEnginePluginDestroyExecutionContext`).
    ///
    /// # Safety
    /// `context` came from [`LoadedPlugin::create_execution_context`] on `handle`, which
    /// is live; it is not used afterwards.
    ///
    /// # Errors
    /// The plugin's failure.
    pub(crate) unsafe fn destroy_execution_context(
        &self,
        handle: PluginHandle,
        context: Context,
    ) -> Result<(), PluginCallError> {
        // SAFETY: per the contract.
        let status = unsafe { (self.api.destroy_execution_context)(handle, context) };
        self.check(status, || "destroy an execution context".to_owned())
    }

    /// Workspace bytes an execution context needs
    /// (`hipdnnEnginePluginGetWorkspaceSizeFromExecutionContext`).
    ///
    /// # Safety
    /// `context` is a live context of `handle`, which is live.
    ///
    /// # Errors
    /// The plugin's failure.
    pub(crate) unsafe fn context_workspace_size(
        &self,
        handle: PluginHandle,
        context: Context,
    ) -> Result<usize, PluginCallError> {
        let mut size = 0usize;
        // SAFETY: per the contract; the out-pointer is valid.
        let status = unsafe {
            (self.api.get_workspace_size_from_execution_context)(handle, context, &mut size)
        };
        self.check(status, || "get the workspace size".to_owned())?;
        Ok(size)
    }

    /// Runs an execution context (`hipdnnEnginePluginExecuteOpGraph`).
    ///
    /// # Safety
    /// `context` is a live context of `handle`, which is live; every buffer pointer and
    /// `workspace` are valid for what the graph reads and writes.
    ///
    /// # Errors
    /// The plugin's failure.
    pub(crate) unsafe fn execute(
        &self,
        handle: PluginHandle,
        context: Context,
        workspace: *mut c_void,
        buffers: &[hipdnnPluginDeviceBuffer_t],
    ) -> Result<(), PluginCallError> {
        let count = u32::try_from(buffers.len()).map_err(|_| {
            call_error(
                None,
                HIPDNN_PLUGIN_STATUS_BAD_PARAM,
                format!(
                    "execute: {} buffers do not fit the ABI's u32 count",
                    buffers.len()
                ),
            )
        })?;
        // SAFETY: per the contract; the buffer array is valid for `count` entries.
        let status = unsafe {
            (self.api.execute_op_graph)(handle, context, workspace, buffers.as_ptr(), count)
        };
        self.check(status, || "execute the graph".to_owned())
    }

    /// Turns a status from one of this plugin's entry points into a result, reading the
    /// plugin's last error on failure. Call it right after the call, on the same thread.
    pub(crate) fn check(
        &self,
        status: Status,
        action: impl FnOnce() -> String,
    ) -> Result<(), PluginCallError> {
        if status == HIPDNN_PLUGIN_STATUS_SUCCESS {
            Ok(())
        } else {
            Err(call_error(
                Some(self.base.get_last_error_string),
                status,
                action(),
            ))
        }
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

    #[test]
    fn read_bounded_stops_at_nul_or_bound() {
        // SAFETY: NUL-terminated literals.
        unsafe {
            assert_eq!(read_bounded(c"abc".as_ptr(), 3), Ok("abc".to_owned()));
            assert_eq!(read_bounded(c"abc".as_ptr(), 10), Ok("abc".to_owned()));
            assert_eq!(read_bounded(c"abcd".as_ptr(), 3), Err("abc".to_owned()));
            assert_eq!(read_bounded(c"".as_ptr(), 0), Ok(String::new()));
            assert_eq!(
                read_bounded(c"\xffa".as_ptr(), 8),
                Ok("\u{fffd}a".to_owned())
            );
        }
    }

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
    fn opening_a_non_library_fails_cleanly() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let file = dir.path().join("libnot.so");
        std::fs::write(&file, b"garbage").expect("write");
        let error = LoadedPlugin::load(&file).unwrap_err();
        assert!(matches!(error, LoadError::Open { .. }), "{error}");
        assert!(
            error.to_string().starts_with("cannot open plugin "),
            "{error}"
        );
    }
}
