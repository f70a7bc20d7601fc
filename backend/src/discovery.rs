//! Which files are engine plugins: hipDNN's discovery rules.
//!
//! Discovery is pure path logic, split from the process state it reads so that every
//! rule can be tested with temporary directories:
//!
//! * [`SearchEnvironment`] holds what comes from the process: the directory of the
//!   loaded backend module ([`backend_library_dir`]) and `HIPDNN_PLUGIN_DIR`.
//! * [`PluginPaths`] is the application's configuration
//!   ([`PluginPaths::set_engine_plugin_paths`] with a [`LoadingMode`]).
//! * [`search_paths`] combines them into the list of paths to look at, and
//!   [`discover_plugin_files`] turns that list into plugin files plus one
//!   [`DiscoveryError`] per path that could not be used.
//!
//! The rules:
//!
//! 1. The default directory is [`DEFAULT_ENGINE_PLUGIN_DIR`] resolved against the
//!    directory of the backend module. `HIPDNN_PLUGIN_DIR`, when set and not empty,
//!    replaces it.
//! 2. [`LoadingMode::Additive`] searches the default (or environment) directory and the
//!    custom paths; [`LoadingMode::Absolute`] only the custom paths. Relative paths are
//!    resolved against the backend module's directory, never the working directory.
//! 3. A directory is scanned non-recursively for entries whose extension is `.so`:
//!    regular files (symbolic links followed) are plugin files. Any other entry named
//!    like a plugin (a directory, a FIFO, a device, a socket, a link to one of those, a
//!    dangling link, a link loop) is reported with what it is ([`DiscoveryError`]),
//!    found with `stat` alone: it is never opened, so a FIFO cannot block discovery.
//!    Entries without the extension are ignored.
//! 4. Any other path is a file: a name without extension gets `lib` + name + `.so`; a
//!    name with another extension is rejected; a missing file is an error, and so is
//!    anything but a regular file (as in rule 3).
//! 5. Files are canonicalized, deduplicated by canonical path (a symbolic link and its
//!    target load once) and returned in sorted order, which is the load order.
//!
//! A missing *default* directory is not an error: it only means no plugin is installed.
//!
//! A program that links this crate statically (the `hipdnn` command) has no
//! `libhipdnn_backend.so` of its own: its module directory is the executable's. When that
//! directory is `PREFIX/bin` of an installed layout (no `bin/hipdnn_plugins/engines`, but
//! a `PREFIX/lib/hipdnn_plugins/engines`), `PREFIX/lib` stands in for it, as if the
//! program had loaded the installed library ([`installed_library_dir`]).

use std::collections::BTreeSet;
use std::ffi::{OsStr, OsString};
use std::fs::FileType;
use std::io;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The default engine plugin directory, relative to the backend module's directory.
pub const DEFAULT_ENGINE_PLUGIN_DIR: &str = "hipdnn_plugins/engines";

/// The environment variable whose directory replaces the default one.
pub const PLUGIN_DIR_ENV: &str = "HIPDNN_PLUGIN_DIR";

/// The platform's shared-library extension, without the dot.
pub const PLUGIN_EXTENSION: &str = "so";

/// The prefix added to a plugin file name given without extension.
pub const PLUGIN_PREFIX: &str = "lib";

/// How custom plugin paths combine with the default directory
/// (`hipdnnPluginLoadingMode_ext_t`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum LoadingMode {
    /// The default (or `HIPDNN_PLUGIN_DIR`) directory, then the custom paths.
    #[default]
    Additive,
    /// Only the custom paths.
    Absolute,
}

/// The application's plugin path configuration.
///
/// The default value searches only the default directory. It takes effect at the next
/// discovery; the backend refuses to change it while plugins are in use.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PluginPaths {
    custom: Vec<PathBuf>,
    mode: LoadingMode,
}

impl PluginPaths {
    /// The default configuration: no custom paths, [`LoadingMode::Additive`].
    pub const fn new() -> Self {
        Self {
            custom: Vec::new(),
            mode: LoadingMode::Additive,
        }
    }

    /// Replaces the custom paths and the mode (`hipdnnSetEnginePluginPaths_ext`). Each
    /// path is a directory or a file; relative ones are resolved against the backend
    /// module's directory at discovery.
    pub fn set_engine_plugin_paths<I, P>(&mut self, paths: I, mode: LoadingMode)
    where
        I: IntoIterator<Item = P>,
        P: Into<PathBuf>,
    {
        self.custom = paths.into_iter().map(Into::into).collect();
        self.mode = mode;
    }

    /// The custom paths, as given.
    pub fn custom_paths(&self) -> &[PathBuf] {
        &self.custom
    }

    /// The loading mode.
    pub fn mode(&self) -> LoadingMode {
        self.mode
    }
}

/// What discovery reads from the process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchEnvironment {
    /// The directory of the loaded backend module: relative paths and the default
    /// directory are resolved against it.
    pub library_dir: PathBuf,
    /// `HIPDNN_PLUGIN_DIR`, when set and not empty.
    pub env_plugin_dir: Option<PathBuf>,
}

impl SearchEnvironment {
    /// Reads the backend module's directory ([`backend_library_dir`]) and
    /// [`PLUGIN_DIR_ENV`].
    ///
    /// # Errors
    /// The backend module's path cannot be found.
    pub fn from_process() -> io::Result<Self> {
        let mut library_dir = backend_library_dir()?;
        if backend_is_executable() {
            library_dir = installed_library_dir(&library_dir);
        }
        Ok(Self {
            library_dir,
            env_plugin_dir: env_plugin_dir(std::env::var_os(PLUGIN_DIR_ENV)),
        })
    }
}

/// The value of `HIPDNN_PLUGIN_DIR` as a directory: `None` when unset or empty.
pub fn env_plugin_dir(value: Option<OsString>) -> Option<PathBuf> {
    value.filter(|v| !v.is_empty()).map(PathBuf::from)
}

/// The directory a statically linked program in `dir` resolves plugin paths against:
/// `dir/../lib` when `dir` is named `bin`, has no [`DEFAULT_ENGINE_PLUGIN_DIR`] of its
/// own and `dir/../lib` has one (an installed layout); otherwise `dir`.
pub fn installed_library_dir(dir: &Path) -> PathBuf {
    if dir.file_name() == Some(OsStr::new("bin"))
        && !dir.join(DEFAULT_ENGINE_PLUGIN_DIR).is_dir()
        && let Some(prefix) = dir.parent()
    {
        let lib = prefix.join("lib");
        if lib.join(DEFAULT_ENGINE_PLUGIN_DIR).is_dir() {
            return lib;
        }
    }
    dir.to_path_buf()
}

/// Whether this crate is linked into the main executable (rather than being
/// `libhipdnn_backend.so` or another shared library).
fn backend_is_executable() -> bool {
    static IS_EXECUTABLE: OnceLock<bool> = OnceLock::new();
    *IS_EXECUTABLE.get_or_init(|| {
        let canonical = |p: PathBuf| p.canonicalize().unwrap_or(p);
        match (module_path(), std::env::current_exe()) {
            (Some(module), Ok(exe)) => canonical(module) == canonical(exe),
            // `dladdr` could not name the module: the executable's path is used.
            (None, _) => true,
            (Some(_), Err(_)) => false,
        }
    })
}

/// The directory of the module this crate is linked into: the executable when the rlib
/// is linked statically, `libhipdnn_backend.so` when built as a cdylib.
///
/// # Errors
/// `dladdr` cannot name the module and the executable's path is unknown.
pub fn backend_library_dir() -> io::Result<PathBuf> {
    // The module does not move while the process runs: resolved once (a failure is
    // retried, it may be transient).
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    if let Some(dir) = DIR.get() {
        return Ok(dir.clone());
    }
    let module = module_path().map_or_else(std::env::current_exe, Ok)?;
    let module = module.canonicalize().unwrap_or(module);
    let dir = module
        .parent()
        .map(Path::to_path_buf)
        .ok_or_else(|| io::Error::other(format!("{} has no parent directory", module.display())))?;
    Ok(DIR.get_or_init(|| dir).clone())
}

/// The path of the module holding this function, from `dladdr`; `None` when `dladdr`
/// fails or names the module by a relative path (the main executable may be named by
/// `argv[0]`), in which case the caller uses the executable's path.
fn module_path() -> Option<PathBuf> {
    use std::os::unix::ffi::OsStrExt;

    // Any function of this crate lies in the module that contains the crate.
    let address = backend_library_dir as *const () as *const libc::c_void;
    // SAFETY: `Dl_info` is plain old data for which all-zero is a valid value.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: `address` is a valid code address and `info` is writable; `dladdr` only
    // reads the loader's tables.
    if unsafe { libc::dladdr(address, &mut info) } == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: on success `dli_fname` is a NUL-terminated string owned by the loader,
    // valid while the module is loaded (as long as this function exists).
    let name = unsafe { std::ffi::CStr::from_ptr(info.dli_fname) };
    let path = PathBuf::from(OsStr::from_bytes(name.to_bytes()));
    path.is_absolute().then_some(path)
}

/// Where a search path came from; decides whether its absence is an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PathOrigin {
    /// The default directory: missing means no plugin is installed, not an error.
    Default,
    /// `HIPDNN_PLUGIN_DIR`.
    Environment,
    /// A path given to [`PluginPaths::set_engine_plugin_paths`].
    Custom,
}

/// One path to search, absolute.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SearchPath {
    /// The path, resolved against the backend module's directory.
    pub path: PathBuf,
    /// Where it came from.
    pub origin: PathOrigin,
}

/// The paths to search, in order: the default or environment directory (unless
/// [`LoadingMode::Absolute`]), then the custom paths. Relative paths are resolved
/// against `env.library_dir`.
pub fn search_paths(config: &PluginPaths, env: &SearchEnvironment) -> Vec<SearchPath> {
    let resolve = |p: &Path| env.library_dir.join(p);
    let mut paths = Vec::with_capacity(config.custom.len() + 1);
    if config.mode == LoadingMode::Additive {
        paths.push(match &env.env_plugin_dir {
            Some(dir) => SearchPath {
                path: resolve(dir),
                origin: PathOrigin::Environment,
            },
            None => SearchPath {
                path: resolve(Path::new(DEFAULT_ENGINE_PLUGIN_DIR)),
                origin: PathOrigin::Default,
            },
        });
    }
    paths.extend(config.custom.iter().map(|p| SearchPath {
        path: resolve(p),
        origin: PathOrigin::Custom,
    }));
    paths
}

/// Why a search path, or an entry named like a plugin in a searched directory, gave no
/// plugin. Each is reported by the caller as `Error loading plugin from [path]: {error}`.
#[derive(Debug, thiserror::Error)]
pub enum DiscoveryError {
    /// The file does not exist (after the `lib` + `.so` completion, if any).
    #[error("plugin file {path} does not exist")]
    NotFound {
        /// The file looked for.
        path: PathBuf,
    },
    /// A file whose extension is not the platform's.
    #[error("plugin file {path} has extension `.{extension}`, expected `.{PLUGIN_EXTENSION}`")]
    WrongExtension {
        /// The file.
        path: PathBuf,
        /// Its extension, without the dot.
        extension: String,
    },
    /// The path is not a regular file (a directory named like a plugin, a FIFO, a
    /// device, a socket): it is not opened.
    #[error("plugin file {} is a {kind}, not a regular file: not opened", path.display())]
    NotAFile {
        /// The path.
        path: PathBuf,
        /// What it is ([`file_kind`]).
        kind: &'static str,
    },
    /// A symbolic link to something other than a regular file: not opened.
    #[error(
        "plugin file {} is a symbolic link to {}, a {kind}, not a regular file: not opened",
        path.display(),
        target.display()
    )]
    LinkToNonFile {
        /// The link.
        path: PathBuf,
        /// What it points to (its first hop).
        target: PathBuf,
        /// What the final target is ([`file_kind`]).
        kind: &'static str,
    },
    /// A symbolic link whose target does not exist.
    #[error(
        "plugin file {} is a dangling symbolic link (to {}, which does not exist)",
        path.display(),
        target.display()
    )]
    DanglingLink {
        /// The link.
        path: PathBuf,
        /// What it points to (its first hop).
        target: PathBuf,
    },
    /// A symbolic link that never reaches a file (`ELOOP`).
    #[error("plugin file {} is a symbolic link loop", path.display())]
    LinkLoop {
        /// The link.
        path: PathBuf,
    },
    /// A directory or file that cannot be read or canonicalized.
    #[error("cannot read plugin path {path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: io::Error,
    },
}

/// What discovery found.
#[derive(Debug, Default)]
pub struct Discovery {
    /// Canonical plugin files, deduplicated, in load (sorted) order.
    pub files: Vec<PathBuf>,
    /// The search paths that could not be used, with why.
    pub problems: Vec<(PathBuf, DiscoveryError)>,
}

impl Discovery {
    /// Logs each problem at error level as `Error loading plugin from [path]: …`.
    pub fn log_problems(&self) {
        for (path, error) in &self.problems {
            tracing::error!("Error loading plugin from [{}]: {error}", path.display());
        }
    }
}

/// Discovers plugins with `config` in `env`: [`search_paths`] then
/// [`discover_plugin_files`].
pub fn discover(config: &PluginPaths, env: &SearchEnvironment) -> Discovery {
    discover_plugin_files(&search_paths(config, env))
}

/// Applies the directory and file rules to each search path (see the module docs).
pub fn discover_plugin_files(paths: &[SearchPath]) -> Discovery {
    let mut files = BTreeSet::new();
    let mut problems = Vec::new();
    for search in paths {
        let path = &search.path;
        match std::fs::metadata(path) {
            Ok(meta) if meta.is_dir() => match scan_dir(path) {
                Ok(found) => {
                    files.extend(found.files);
                    problems.extend(found.problems);
                }
                Err(source) => problems.push((
                    path.clone(),
                    DiscoveryError::Io {
                        path: path.clone(),
                        source,
                    },
                )),
            },
            Err(e)
                if e.kind() == io::ErrorKind::NotFound && search.origin == PathOrigin::Default =>
            {
                tracing::debug!("no default plugin directory at {}", path.display());
            }
            _ => match plugin_file(path) {
                Ok(file) => {
                    files.insert(file);
                }
                Err(error) => problems.push((path.clone(), error)),
            },
        }
    }
    Discovery {
        files: files.into_iter().collect(),
        problems,
    }
}

fn has_plugin_extension(path: &Path) -> bool {
    path.extension() == Some(OsStr::new(PLUGIN_EXTENSION))
}

/// What a file type is, in words ("directory", "FIFO", "character device", …).
pub fn file_kind(kind: &FileType) -> &'static str {
    if kind.is_file() {
        "regular file"
    } else if kind.is_dir() {
        "directory"
    } else if kind.is_symlink() {
        "symbolic link"
    } else if kind.is_fifo() {
        "FIFO"
    } else if kind.is_socket() {
        "socket"
    } else if kind.is_char_device() {
        "character device"
    } else if kind.is_block_device() {
        "block device"
    } else {
        "special file"
    }
}

/// Checks with `stat` (never opening it) that `path` is a regular file or a symbolic
/// link to one; otherwise says what it is.
fn regular_file(path: &Path) -> Result<(), DiscoveryError> {
    let link_target = || std::fs::read_link(path).ok();
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() => Ok(()),
        Ok(meta) => {
            let kind = file_kind(&meta.file_type());
            let path = path.to_path_buf();
            Err(match link_target() {
                Some(target) => DiscoveryError::LinkToNonFile { path, target, kind },
                None => DiscoveryError::NotAFile { path, kind },
            })
        }
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => Err(DiscoveryError::LinkLoop {
            path: path.to_path_buf(),
        }),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            let path = path.to_path_buf();
            Err(match link_target() {
                Some(target) => DiscoveryError::DanglingLink { path, target },
                None => DiscoveryError::NotFound { path },
            })
        }
        Err(source) => Err(DiscoveryError::Io {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// The canonical paths of the regular `.so` files directly inside `dir`, and why each
/// other `.so` entry is not one (sorted by path). An entry that vanishes while scanning
/// is skipped.
///
/// The directory is canonicalized once: a regular file in it (the entry's type comes
/// with the directory listing) is then canonical as `dir/name`; only other entries are
/// looked at one by one, with `stat`.
fn scan_dir(dir: &Path) -> io::Result<Discovery> {
    let dir = dir.canonicalize()?;
    let mut found = Vec::new();
    let mut problems = Vec::new();
    for entry in std::fs::read_dir(&dir)? {
        let entry = entry?;
        let path = entry.path();
        if !has_plugin_extension(&path) {
            continue;
        }
        if entry.file_type().is_ok_and(|kind| kind.is_file()) {
            found.push(path);
            continue;
        }
        // A link to a plugin is a plugin, under the target's canonical path.
        match regular_file(&path).and_then(|()| {
            path.canonicalize().map_err(|source| DiscoveryError::Io {
                path: path.clone(),
                source,
            })
        }) {
            Ok(canonical) => found.push(canonical),
            Err(DiscoveryError::NotFound { .. }) => {}
            Err(error) => problems.push((path, error)),
        }
    }
    problems.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(Discovery {
        files: found,
        problems,
    })
}

/// One path taken as a file: the extension rules, then existence, then the canonical
/// path.
fn plugin_file(path: &Path) -> Result<PathBuf, DiscoveryError> {
    let file = match path.extension() {
        None => {
            let Some(name) = path.file_name() else {
                return Err(DiscoveryError::NotFound {
                    path: path.to_path_buf(),
                });
            };
            let mut completed = OsString::from(PLUGIN_PREFIX);
            completed.push(name);
            completed.push(".");
            completed.push(PLUGIN_EXTENSION);
            path.with_file_name(completed)
        }
        Some(ext) if ext == PLUGIN_EXTENSION => path.to_path_buf(),
        Some(ext) => {
            return Err(DiscoveryError::WrongExtension {
                path: path.to_path_buf(),
                extension: ext.to_string_lossy().into_owned(),
            });
        }
    };
    regular_file(&file)?;
    file.canonicalize()
        .map_err(|source| DiscoveryError::Io { path: file, source })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::symlink;

    fn touch(path: &Path) {
        fs::write(path, b"not really a library").expect("write a test file");
    }

    fn env_at(dir: &Path) -> SearchEnvironment {
        SearchEnvironment {
            library_dir: dir.to_path_buf(),
            env_plugin_dir: None,
        }
    }

    fn canonical(path: &Path) -> PathBuf {
        path.canonicalize().expect("an existing path")
    }

    /// A library directory with `hipdnn_plugins/engines/` holding `libdefault.so`.
    fn layout() -> (tempfile::TempDir, PathBuf) {
        let root = tempfile::tempdir().expect("a temp dir");
        let engines = root.path().join(DEFAULT_ENGINE_PLUGIN_DIR);
        fs::create_dir_all(&engines).expect("create the default dir");
        touch(&engines.join("libdefault.so"));
        (root, engines)
    }

    #[test]
    fn default_directory_is_next_to_the_library() {
        let (root, engines) = layout();
        let found = discover(&PluginPaths::new(), &env_at(root.path()));
        assert_eq!(found.files, vec![canonical(&engines.join("libdefault.so"))]);
        assert!(found.problems.is_empty(), "{:?}", found.problems);
    }

    #[test]
    fn missing_default_directory_is_not_an_error() {
        let root = tempfile::tempdir().expect("a temp dir");
        let found = discover(&PluginPaths::new(), &env_at(root.path()));
        assert!(found.files.is_empty());
        assert!(found.problems.is_empty(), "{:?}", found.problems);
    }

    #[test]
    fn env_dir_replaces_the_default_and_may_be_relative() {
        let (root, _) = layout();
        let other = root.path().join("other");
        fs::create_dir(&other).expect("mkdir");
        touch(&other.join("libenv.so"));
        let env = SearchEnvironment {
            library_dir: root.path().to_path_buf(),
            env_plugin_dir: Some(PathBuf::from("other")),
        };
        let found = discover(&PluginPaths::new(), &env);
        assert_eq!(found.files, vec![canonical(&other.join("libenv.so"))]);
    }

    #[test]
    fn missing_env_dir_is_reported() {
        let root = tempfile::tempdir().expect("a temp dir");
        let env = SearchEnvironment {
            library_dir: root.path().to_path_buf(),
            env_plugin_dir: Some(root.path().join("nowhere")),
        };
        let found = discover(&PluginPaths::new(), &env);
        assert!(found.files.is_empty());
        assert_eq!(found.problems.len(), 1);
        assert!(matches!(
            found.problems[0].1,
            DiscoveryError::NotFound { .. }
        ));
    }

    #[test]
    fn empty_env_value_counts_as_unset() {
        assert_eq!(env_plugin_dir(Some(OsString::new())), None);
        assert_eq!(env_plugin_dir(None), None);
        assert_eq!(env_plugin_dir(Some("x".into())), Some(PathBuf::from("x")));
    }

    #[test]
    fn additive_adds_custom_paths_to_the_default() {
        let (root, engines) = layout();
        let custom = tempfile::tempdir().expect("a temp dir");
        touch(&custom.path().join("libcustom.so"));
        let mut config = PluginPaths::new();
        config.set_engine_plugin_paths([custom.path()], LoadingMode::Additive);
        let found = discover(&config, &env_at(root.path()));
        let mut expected = vec![
            canonical(&engines.join("libdefault.so")),
            canonical(&custom.path().join("libcustom.so")),
        ];
        expected.sort();
        assert_eq!(found.files, expected);
    }

    #[test]
    fn absolute_uses_only_custom_paths() {
        let (root, _) = layout();
        let custom = tempfile::tempdir().expect("a temp dir");
        touch(&custom.path().join("libcustom.so"));
        let mut config = PluginPaths::new();
        config.set_engine_plugin_paths([custom.path()], LoadingMode::Absolute);
        let found = discover(&config, &env_at(root.path()));
        assert_eq!(
            found.files,
            vec![canonical(&custom.path().join("libcustom.so"))]
        );
        // Absolute also ignores HIPDNN_PLUGIN_DIR.
        let env = SearchEnvironment {
            env_plugin_dir: Some(root.path().join(DEFAULT_ENGINE_PLUGIN_DIR)),
            ..env_at(root.path())
        };
        assert_eq!(discover(&config, &env).files.len(), 1);
    }

    #[test]
    fn relative_custom_paths_resolve_against_the_library_dir() {
        let root = tempfile::tempdir().expect("a temp dir");
        fs::create_dir(root.path().join("mine")).expect("mkdir");
        touch(&root.path().join("mine/libx.so"));
        let mut config = PluginPaths::new();
        config.set_engine_plugin_paths(["mine", "mine/libx.so"], LoadingMode::Absolute);
        let found = discover(&config, &env_at(root.path()));
        assert_eq!(
            found.files,
            vec![canonical(&root.path().join("mine/libx.so"))]
        );
        assert!(found.problems.is_empty(), "{:?}", found.problems);
    }

    #[test]
    fn directory_scan_keeps_regular_so_files_only_and_is_not_recursive() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let d = dir.path();
        touch(&d.join("liba.so"));
        touch(&d.join("README.txt"));
        touch(&d.join("libversioned.so.1"));
        touch(&d.join("noext"));
        fs::create_dir(d.join("nested")).expect("mkdir");
        touch(&d.join("nested/libdeep.so"));
        let mut config = PluginPaths::new();
        config.set_engine_plugin_paths([d], LoadingMode::Absolute);
        let found = discover(&config, &env_at(d));
        assert_eq!(found.files, vec![canonical(&d.join("liba.so"))]);
        assert!(found.problems.is_empty(), "{:?}", found.problems);
    }

    /// The reasons of `found`, as `(file name, message)`.
    fn reasons(found: &Discovery) -> Vec<(String, String)> {
        found
            .problems
            .iter()
            .map(|(path, error)| {
                let name = path.file_name().unwrap().to_string_lossy().into_owned();
                (name, error.to_string())
            })
            .collect()
    }

    #[test]
    fn odd_entries_named_like_plugins_are_reported_with_what_they_are() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let d = canonical(dir.path());
        touch(&d.join("libgood.so"));
        fs::create_dir(d.join("y.so")).expect("a directory named like a plugin");
        symlink(d.join("libloop_b.so"), d.join("libloop_a.so")).expect("symlink");
        symlink(d.join("libloop_a.so"), d.join("libloop_b.so")).expect("symlink");
        symlink(d.join("missing.so"), d.join("libdangling.so")).expect("symlink");
        symlink("/dev/zero", d.join("libzero.so")).expect("symlink");
        symlink(d.join("y.so"), d.join("libtodir.so")).expect("symlink");
        let _socket =
            std::os::unix::net::UnixListener::bind(d.join("libsocket.so")).expect("a socket");
        let mut config = PluginPaths::new();
        config.set_engine_plugin_paths([&d], LoadingMode::Absolute);
        let found = discover(&config, &env_at(&d));
        assert_eq!(found.files, vec![d.join("libgood.so")]);
        let p = |name: &str| d.join(name).display().to_string();
        assert_eq!(
            reasons(&found),
            [
                (
                    "libdangling.so".to_owned(),
                    format!(
                        "plugin file {} is a dangling symbolic link (to {}, which does not exist)",
                        p("libdangling.so"),
                        p("missing.so")
                    )
                ),
                (
                    "libloop_a.so".to_owned(),
                    format!("plugin file {} is a symbolic link loop", p("libloop_a.so"))
                ),
                (
                    "libloop_b.so".to_owned(),
                    format!("plugin file {} is a symbolic link loop", p("libloop_b.so"))
                ),
                (
                    "libsocket.so".to_owned(),
                    format!(
                        "plugin file {} is a socket, not a regular file: not opened",
                        p("libsocket.so")
                    )
                ),
                (
                    "libtodir.so".to_owned(),
                    format!(
                        "plugin file {} is a symbolic link to {}, a directory, not a regular \
                         file: not opened",
                        p("libtodir.so"),
                        p("y.so")
                    )
                ),
                (
                    "libzero.so".to_owned(),
                    format!(
                        "plugin file {} is a symbolic link to /dev/zero, a character device, \
                         not a regular file: not opened",
                        p("libzero.so")
                    )
                ),
                (
                    "y.so".to_owned(),
                    format!(
                        "plugin file {} is a directory, not a regular file: not opened",
                        p("y.so")
                    )
                ),
            ]
        );
        // Given as files, the same entries get the same reasons.
        let mut config = PluginPaths::new();
        config.set_engine_plugin_paths(
            [d.join("libzero.so"), d.join("libloop_a.so")],
            LoadingMode::Absolute,
        );
        let found = discover(&config, &env_at(&d));
        assert!(found.files.is_empty());
        assert_eq!(reasons(&found).len(), 2, "{:?}", found.problems);
        assert!(matches!(
            found.problems[0].1,
            DiscoveryError::LinkToNonFile { .. }
        ));
        assert!(matches!(
            found.problems[1].1,
            DiscoveryError::LinkLoop { .. }
        ));
    }

    #[test]
    fn fifo_in_plugin_dir_is_refused_without_blocking() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let d = canonical(dir.path());
        touch(&d.join("libgood.so"));
        let fifo = d.join("libfifo.so");
        let name = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0, "mkfifo");
        symlink(&fifo, d.join("liblink_to_fifo.so")).expect("symlink");
        // Discovery runs on another thread: opening the FIFO would block it forever (no
        // writer ever comes), and the test would fail on the deadline instead of hanging.
        let (send, receive) = std::sync::mpsc::channel();
        let scanned = d.clone();
        std::thread::spawn(move || {
            let mut config = PluginPaths::new();
            config.set_engine_plugin_paths([&scanned], LoadingMode::Absolute);
            let _ = send.send(discover(&config, &env_at(&scanned)));
        });
        let found = receive
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("discovery blocked on the FIFO");
        assert_eq!(found.files, vec![d.join("libgood.so")]);
        assert_eq!(
            reasons(&found),
            [
                (
                    "libfifo.so".to_owned(),
                    format!(
                        "plugin file {} is a FIFO, not a regular file: not opened",
                        fifo.display()
                    )
                ),
                (
                    "liblink_to_fifo.so".to_owned(),
                    format!(
                        "plugin file {} is a symbolic link to {}, a FIFO, not a regular file: \
                         not opened",
                        d.join("liblink_to_fifo.so").display(),
                        fifo.display()
                    )
                ),
            ]
        );
    }

    #[test]
    fn symlinks_are_followed_and_deduplicated() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let links = tempfile::tempdir().expect("a temp dir");
        let target = dir.path().join("libreal.so");
        touch(&target);
        symlink(&target, dir.path().join("libalias.so")).expect("symlink");
        symlink(&target, links.path().join("libelsewhere.so")).expect("symlink");
        let mut config = PluginPaths::new();
        config.set_engine_plugin_paths(
            [
                dir.path().to_path_buf(),
                links.path().to_path_buf(),
                target.clone(),
                links.path().join("elsewhere"),
            ],
            LoadingMode::Absolute,
        );
        let found = discover(&config, &env_at(dir.path()));
        assert_eq!(found.files, vec![canonical(&target)]);
        assert!(found.problems.is_empty(), "{:?}", found.problems);
    }

    #[test]
    fn file_name_without_extension_gets_prefix_and_suffix() {
        let dir = tempfile::tempdir().expect("a temp dir");
        touch(&dir.path().join("libmy_plugin.so"));
        let mut config = PluginPaths::new();
        config.set_engine_plugin_paths([dir.path().join("my_plugin")], LoadingMode::Absolute);
        let found = discover(&config, &env_at(dir.path()));
        assert_eq!(
            found.files,
            vec![canonical(&dir.path().join("libmy_plugin.so"))]
        );
    }

    #[test]
    fn other_extensions_are_rejected_with_a_message() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let dll = dir.path().join("plugin.dll");
        touch(&dll);
        let mut config = PluginPaths::new();
        config.set_engine_plugin_paths([&dll], LoadingMode::Absolute);
        let found = discover(&config, &env_at(dir.path()));
        assert!(found.files.is_empty());
        let (path, error) = &found.problems[0];
        assert_eq!(path, &dll);
        assert_eq!(
            error.to_string(),
            format!(
                "plugin file {} has extension `.dll`, expected `.so`",
                dll.display()
            )
        );
    }

    #[test]
    fn missing_files_are_reported_with_the_completed_name() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let mut config = PluginPaths::new();
        config.set_engine_plugin_paths(
            [dir.path().join("absent"), dir.path().join("libgone.so")],
            LoadingMode::Absolute,
        );
        let found = discover(&config, &env_at(dir.path()));
        let messages: Vec<String> = found.problems.iter().map(|(_, e)| e.to_string()).collect();
        assert_eq!(
            messages,
            vec![
                format!(
                    "plugin file {} does not exist",
                    dir.path().join("libabsent.so").display()
                ),
                format!(
                    "plugin file {} does not exist",
                    dir.path().join("libgone.so").display()
                ),
            ]
        );
    }

    #[test]
    fn files_come_back_sorted() {
        let dir = tempfile::tempdir().expect("a temp dir");
        for name in ["libc.so", "liba.so", "libb.so"] {
            touch(&dir.path().join(name));
        }
        let mut config = PluginPaths::new();
        config.set_engine_plugin_paths(
            [dir.path().join("libc.so"), dir.path().to_path_buf()],
            LoadingMode::Absolute,
        );
        let found = discover(&config, &env_at(dir.path()));
        let names: Vec<_> = found.files.iter().map(|f| f.file_name().unwrap()).collect();
        assert_eq!(names, ["liba.so", "libb.so", "libc.so"]);
    }

    #[test]
    fn library_dir_of_a_statically_linked_rlib_is_the_executables() {
        let exe = std::env::current_exe().expect("the test binary");
        let expected = canonical(exe.parent().expect("a parent"));
        assert_eq!(backend_library_dir().expect("dladdr"), expected);
        assert!(backend_is_executable());
    }

    #[test]
    fn a_program_in_an_installed_bin_resolves_against_lib() {
        let prefix = tempfile::tempdir().unwrap();
        let bin = prefix.path().join("bin");
        let lib = prefix.path().join("lib");
        std::fs::create_dir_all(&bin).unwrap();
        // No plugin directory anywhere: stays in bin.
        assert_eq!(installed_library_dir(&bin), bin);
        std::fs::create_dir_all(lib.join(DEFAULT_ENGINE_PLUGIN_DIR)).unwrap();
        assert_eq!(installed_library_dir(&bin), lib);
        // Only a directory named bin is taken as part of a layout.
        let tools = prefix.path().join("tools");
        std::fs::create_dir_all(&tools).unwrap();
        assert_eq!(installed_library_dir(&tools), tools);
        // A plugin directory next to the program wins.
        std::fs::create_dir_all(bin.join(DEFAULT_ENGINE_PLUGIN_DIR)).unwrap();
        assert_eq!(installed_library_dir(&bin), bin);
    }
}
