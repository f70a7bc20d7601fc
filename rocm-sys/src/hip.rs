//! Finding and opening the HIP runtime.
//!
//! # Search order
//! The path in `HIPDNN_HIP_LIBRARY` if set (and nothing else); otherwise a HIP runtime
//! already in the process (`libamdhip64.so.7`, `.so.6`, `.so.5`, `.so`, asked without
//! loading anything new: a process must not talk to two HIP runtimes, and MIOpen brings
//! its own), else the same names through the dynamic loader's usual search
//! (`LD_LIBRARY_PATH`, the loader cache, the system directories), then in
//! `$ROCM_PATH/lib` and `/opt/rocm/lib`. Libraries are opened with
//! `RTLD_NOW | RTLD_LOCAL` and every function of [`HipApi`] is resolved up front.

use std::ffi::{CStr, c_char, c_int};
use std::path::{Path, PathBuf};

use libloading::os::unix::{Library, RTLD_LOCAL, RTLD_NOW};

use crate::{HipApi, hipError_t};

/// Environment variable naming the HIP runtime library to use instead of searching.
pub const HIP_LIBRARY_ENV: &str = "HIPDNN_HIP_LIBRARY";
/// The HIP runtime's library names, in search order.
pub const HIP_NAMES: &[&str] = &[
    "libamdhip64.so.7",
    "libamdhip64.so.6",
    "libamdhip64.so.5",
    "libamdhip64.so",
];

/// A HIP runtime with at least one device.
#[derive(Debug)]
pub struct Hip {
    /// Its functions.
    pub api: HipApi,
    /// Where it was loaded from.
    pub path: PathBuf,
    /// Devices visible.
    pub devices: i32,
}

/// The directories searched after the dynamic loader's own search.
pub fn rocm_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(root) = std::env::var_os("ROCM_PATH").filter(|v| !v.is_empty()) {
        dirs.push(Path::new(&root).join("lib"));
    }
    dirs.push(PathBuf::from("/opt/rocm/lib"));
    dirs
}

fn open_with(path: &Path, flags: c_int) -> Result<Library, String> {
    // SAFETY: loading a shared library runs its initialisers; the HIP runtime (or the
    // library the override names) is trusted like any library the host links.
    unsafe { Library::open(Some(path.as_os_str()), flags) }.map_err(|e| e.to_string())
}

/// Opens the library `env` names, or the first of `names` that loads (bare, then in
/// [`rocm_dirs`]); the error names the first name and every other path tried.
///
/// # Errors
/// Nothing loads: the names tried and the loader's last message.
pub fn open_library(env: &str, names: &[&str]) -> Result<(Library, PathBuf), String> {
    if let Some(path) = std::env::var_os(env).filter(|v| !v.is_empty()) {
        let path = PathBuf::from(path);
        return open_with(&path, RTLD_NOW | RTLD_LOCAL)
            .map(|lib| (lib, path.clone()))
            .map_err(|e| format!("{env}={}: cannot load it: {e}", path.display()));
    }
    let mut tried: Vec<PathBuf> = names.iter().map(PathBuf::from).collect();
    for dir in rocm_dirs() {
        tried.extend(names.iter().map(|n| dir.join(n)));
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
fn loaded() -> Option<(Library, PathBuf)> {
    HIP_NAMES.iter().find_map(|name| {
        let path = PathBuf::from(name);
        open_with(&path, RTLD_NOW | RTLD_LOCAL | libc::RTLD_NOLOAD)
            .ok()
            .map(|lib| (lib, path))
    })
}

impl Hip {
    /// Opens the HIP runtime (see the module docs) and counts its devices.
    ///
    /// # Errors
    /// One sentence: the library is missing or incomplete, or there is no HIP device.
    pub fn open() -> Result<Self, String> {
        let overridden = std::env::var_os(HIP_LIBRARY_ENV).is_some_and(|v| !v.is_empty());
        let found = if overridden { None } else { loaded() };
        let (lib, path) = match found {
            Some(found) => found,
            None => open_library(HIP_LIBRARY_ENV, HIP_NAMES)?,
        };
        // SAFETY: the HIP runtime's functions have the declared signatures.
        let api = unsafe { HipApi::resolve(lib) }.map_err(|symbol| {
            format!(
                "{} lacks {symbol}: it is not a usable HIP runtime",
                path.display()
            )
        })?;
        let mut devices: c_int = 0;
        // SAFETY: a valid out-pointer.
        let status = unsafe { (api.hipGetDeviceCount)(&mut devices) };
        if status == hipError_t::hipErrorNoDevice
            || (status == hipError_t::hipSuccess && devices < 1)
        {
            return Err("no HIP device".into());
        }
        if status != hipError_t::hipSuccess {
            return Err(format!(
                "hipGetDeviceCount failed with {status} ({})",
                error_text(&api, status)
            ));
        }
        Ok(Self { api, path, devices })
    }

    /// `Ok` for success, else `"<call> failed with <status> (<text>)"`.
    ///
    /// # Errors
    /// The failure, as text.
    pub fn check(&self, status: hipError_t, call: &str) -> Result<(), String> {
        if status == hipError_t::hipSuccess {
            Ok(())
        } else {
            Err(format!(
                "{call} failed with {status} ({})",
                error_text(&self.api, status)
            ))
        }
    }
}

/// `hipGetErrorString`'s text for `status`.
pub fn error_text(api: &HipApi, status: hipError_t) -> String {
    // SAFETY: takes any value; returns a static string or null.
    unsafe { c_text((api.hipGetErrorString)(status)) }
}

/// A C string the library owns, copied (empty for null).
///
/// # Safety
/// `text` is null or a NUL-terminated string valid for the call (HIP's and MIOpen's
/// error strings are static).
pub unsafe fn c_text(text: *const c_char) -> String {
    if text.is_null() {
        return String::new();
    }
    // SAFETY: non-null and NUL-terminated per the caller.
    unsafe { CStr::from_ptr(text) }
        .to_string_lossy()
        .into_owned()
}
