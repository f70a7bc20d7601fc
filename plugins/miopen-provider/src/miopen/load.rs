//! Finding and opening HIP and MIOpen at run time, and deciding whether this machine
//! can run the engine.
//!
//! # Search order
//! MIOpen: the path in `HIPDNN_MIOPEN_LIBRARY` if set (and nothing else); otherwise
//! `libMIOpen.so.1` then `libMIOpen.so` through the dynamic loader's usual search
//! (`LD_LIBRARY_PATH`, the loader cache, the system directories), then the same names in
//! `$ROCM_PATH/lib` and `/opt/rocm/lib`.
//!
//! HIP: the path in `HIPDNN_HIP_LIBRARY` if set; otherwise the HIP runtime MIOpen
//! already brought into the process (`libamdhip64.so.7`, `.so.6`, `.so.5`, `.so`, asked
//! without loading anything new, so the plugin never talks to a second HIP runtime),
//! else the same names through the same search as MIOpen.
//!
//! Both are opened with `RTLD_NOW | RTLD_LOCAL`, and every function the plugin calls
//! is resolved before the first call ([`sys`]'s tables), so a library that lacks one is
//! refused with the symbol's name instead of failing later.
//!
//! # What the engine needs
//! [`Runtime::open`] checks, in order: MIOpen loads; HIP loads; a HIP device exists;
//! MIOpen's version is at least [`MIN_MIOPEN_VERSION`]; every symbol is there (the
//! batch-norm entry points that take inverse variances and separate running-statistics
//! buffers are recent). Each failure is one sentence that names what is missing
//! ("no HIP device", "libMIOpen.so.1 not found (...)", "MIOpen 2.19.0 is too old ...").

use std::ffi::{CStr, OsStr, c_int};
use std::path::{Path, PathBuf};

use libloading::os::unix::{Library, RTLD_LOCAL, RTLD_NOW};

use super::sys::{self, HipApi, MiopenApi, hipError_t};

/// Environment variable naming the MIOpen library to use instead of searching.
pub const MIOPEN_LIBRARY_ENV: &str = "HIPDNN_MIOPEN_LIBRARY";
/// Environment variable naming the HIP runtime library to use instead of searching.
pub const HIP_LIBRARY_ENV: &str = "HIPDNN_HIP_LIBRARY";
/// MIOpen's library names, in search order.
pub const MIOPEN_NAMES: &[&str] = &["libMIOpen.so.1", "libMIOpen.so"];
/// The HIP runtime's library names, in search order.
pub const HIP_NAMES: &[&str] = &[
    "libamdhip64.so.7",
    "libamdhip64.so.6",
    "libamdhip64.so.5",
    "libamdhip64.so",
];
/// The oldest MIOpen the engine runs with (immediate-mode convolutions, fusion plans
/// with workspaces); newer entry points are checked symbol by symbol.
pub const MIN_MIOPEN_VERSION: (usize, usize, usize) = (3, 0, 0);

/// HIP and MIOpen, loaded, with a device: everything the engine calls.
#[derive(Debug)]
pub struct Runtime {
    /// The HIP runtime's functions.
    pub hip: HipApi,
    /// MIOpen's functions.
    pub miopen: MiopenApi,
    /// Where MIOpen was loaded from.
    pub miopen_path: PathBuf,
    /// Where HIP was loaded from.
    pub hip_path: PathBuf,
    /// MIOpen's `major.minor.patch`.
    pub miopen_version: (usize, usize, usize),
    /// HIP devices visible.
    pub devices: i32,
}

/// Directories searched after the dynamic loader's own search.
fn rocm_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(root) = std::env::var_os("ROCM_PATH").filter(|v| !v.is_empty()) {
        dirs.push(Path::new(&root).join("lib"));
    }
    dirs.push(PathBuf::from("/opt/rocm/lib"));
    dirs
}

/// The paths to try for a library: the override alone, or the names then the names in
/// the ROCm directories.
fn candidates(env: &str, names: &[&str]) -> Vec<PathBuf> {
    if let Some(path) = std::env::var_os(env).filter(|v| !v.is_empty()) {
        return vec![PathBuf::from(path)];
    }
    let mut all: Vec<PathBuf> = names.iter().map(PathBuf::from).collect();
    for dir in rocm_dirs() {
        all.extend(names.iter().map(|n| dir.join(n)));
    }
    all
}

fn open_with(path: &Path, flags: c_int) -> Result<Library, String> {
    // SAFETY: loading a shared library runs its initialisers; HIP and MIOpen (or the
    // library named by the override) are trusted like any library the host links.
    unsafe { Library::open(Some(path.as_os_str()), flags) }.map_err(|e| e.to_string())
}

/// Opens the first candidate that loads; the error names the first name and every
/// other path tried.
fn open_first(env: &str, names: &[&str]) -> Result<(Library, PathBuf), String> {
    let tried = candidates(env, names);
    if std::env::var_os(env).is_some_and(|v| !v.is_empty()) {
        let path = &tried[0];
        return open_with(path, RTLD_NOW | RTLD_LOCAL)
            .map(|lib| (lib, path.clone()))
            .map_err(|e| format!("{env}={}: cannot load it: {e}", path.display()));
    }
    let mut last = String::new();
    for path in &tried {
        match open_with(path, RTLD_NOW | RTLD_LOCAL) {
            Ok(lib) => return Ok((lib, path.clone())),
            Err(e) => last = e,
        }
    }
    let others: Vec<String> = tried[1..].iter().map(|p| p.display().to_string()).collect();
    Err(format!(
        "{} not found (also tried {}; set {env} to its path): {last}",
        names[0],
        others.join(", ")
    ))
}

/// The HIP runtime already in the process, if one of its names is loaded.
fn loaded_hip() -> Option<(Library, PathBuf)> {
    if std::env::var_os(HIP_LIBRARY_ENV).is_some_and(|v| !v.is_empty()) {
        return None;
    }
    HIP_NAMES.iter().find_map(|name| {
        let path = PathBuf::from(name);
        open_with(&path, RTLD_NOW | RTLD_LOCAL | libc::RTLD_NOLOAD)
            .ok()
            .map(|lib| (lib, path))
    })
}

fn version_text((a, b, c): (usize, usize, usize)) -> String {
    format!("{a}.{b}.{c}")
}

impl Runtime {
    /// Loads MIOpen and HIP and checks the machine (see the module docs).
    ///
    /// # Errors
    /// One sentence naming what is missing.
    pub fn open() -> Result<Self, String> {
        let (miopen_lib, miopen_path) = open_first(MIOPEN_LIBRARY_ENV, MIOPEN_NAMES)?;
        let version = {
            // SAFETY: `miopenGetVersion` has this signature in every MIOpen.
            let get = unsafe {
                miopen_lib.get::<sys::miopen_fn::miopenGetVersion>(b"miopenGetVersion\0")
            }
            .map_err(|_| {
                format!(
                    "{} is not MIOpen: it has no miopenGetVersion",
                    miopen_path.display()
                )
            })?;
            let (mut a, mut b, mut c) = (0, 0, 0);
            // SAFETY: three valid out-pointers.
            let status = unsafe { get(&mut a, &mut b, &mut c) };
            if status != sys::miopenStatus_t::miopenStatusSuccess {
                return Err(format!("miopenGetVersion failed with {status}"));
            }
            (a, b, c)
        };
        let (hip_lib, hip_path) = match loaded_hip() {
            Some(found) => found,
            None => open_first(HIP_LIBRARY_ENV, HIP_NAMES)?,
        };
        // SAFETY: the HIP runtime's functions have the declared signatures.
        let hip = unsafe { HipApi::resolve(hip_lib) }.map_err(|symbol| {
            format!(
                "{} lacks {symbol}: it is not a usable HIP runtime",
                hip_path.display()
            )
        })?;
        let mut devices: c_int = 0;
        // SAFETY: a valid out-pointer.
        let status = unsafe { (hip.hipGetDeviceCount)(&mut devices) };
        if status == hipError_t::hipErrorNoDevice || (status == hipError_t::hipSuccess && devices < 1)
        {
            return Err("no HIP device".into());
        }
        if status != hipError_t::hipSuccess {
            return Err(format!(
                "hipGetDeviceCount failed with {status} ({})",
                hip_error_text(&hip, status)
            ));
        }
        if version < MIN_MIOPEN_VERSION {
            return Err(format!(
                "MIOpen {} is too old; {} or newer is needed",
                version_text(version),
                version_text(MIN_MIOPEN_VERSION)
            ));
        }
        // SAFETY: MIOpen's functions have the declared signatures (miopen.h).
        let miopen = unsafe { MiopenApi::resolve(miopen_lib) }.map_err(|symbol| {
            format!(
                "{} (MIOpen {}) lacks {symbol}: a newer MIOpen is needed",
                miopen_path.display(),
                version_text(version)
            )
        })?;
        Ok(Self {
            hip,
            miopen,
            miopen_path,
            hip_path,
            miopen_version: version,
            devices,
        })
    }

    /// MIOpen's version as text.
    pub fn version_text(&self) -> String {
        version_text(self.miopen_version)
    }
}

/// `hipGetErrorString`'s text for `status`.
pub fn hip_error_text(hip: &HipApi, status: hipError_t) -> String {
    // SAFETY: takes any value; returns a static string or null.
    let text = unsafe { (hip.hipGetErrorString)(status) };
    c_text(text)
}

/// A C string the library owns, copied (empty for null).
pub(crate) fn c_text(text: *const std::ffi::c_char) -> String {
    if text.is_null() {
        return String::new();
    }
    // SAFETY: non-null, NUL-terminated, static per the libraries' documentation.
    unsafe { CStr::from_ptr(text) }
        .to_string_lossy()
        .into_owned()
}

/// Whether the environment points the plugin at particular libraries (for messages).
pub fn overridden() -> Option<String> {
    let show = |env: &str| {
        std::env::var_os(env)
            .filter(|v| !v.is_empty())
            .map(|v| format!("{env}={}", Path::new(OsStr::new(&v)).display()))
    };
    let set: Vec<String> = [MIOPEN_LIBRARY_ENV, HIP_LIBRARY_ENV]
        .iter()
        .filter_map(|e| show(e))
        .collect();
    (!set.is_empty()).then(|| set.join(" "))
}
