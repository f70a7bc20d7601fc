//! Finding and opening HIP and MIOpen at run time, and deciding whether this machine
//! can run the engine.
//!
//! # Search order
//! MIOpen: the path in `HIPDNN_MIOPEN_LIBRARY` if set (and nothing else); otherwise
//! `libMIOpen.so.1` then `libMIOpen.so` through the dynamic loader's usual search
//! (`LD_LIBRARY_PATH`, the loader cache, the system directories), then the same names in
//! `$ROCM_PATH/lib` and `/opt/rocm/lib`.
//!
//! HIP: as [`hipdnn_rocm_sys::hip`] finds it (`HIPDNN_HIP_LIBRARY`, else the HIP
//! runtime MIOpen already brought into the process, so the plugin never talks to a
//! second one, else the same search as MIOpen's).
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

use std::path::PathBuf;

use hipdnn_rocm_sys::hip::{self, Hip, open_library};

use super::sys::{self, HipApi, MiopenApi};

pub use hipdnn_rocm_sys::hip::{HIP_LIBRARY_ENV, HIP_NAMES};

/// Environment variable naming the MIOpen library to use instead of searching.
pub const MIOPEN_LIBRARY_ENV: &str = "HIPDNN_MIOPEN_LIBRARY";
/// MIOpen's library names, in search order.
pub const MIOPEN_NAMES: &[&str] = &["libMIOpen.so.1", "libMIOpen.so"];
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

fn version_text((a, b, c): (usize, usize, usize)) -> String {
    format!("{a}.{b}.{c}")
}

impl Runtime {
    /// Loads MIOpen and HIP and checks the machine (see the module docs).
    ///
    /// # Errors
    /// One sentence naming what is missing.
    pub fn open() -> Result<Self, String> {
        let (miopen_lib, miopen_path) = open_library(MIOPEN_LIBRARY_ENV, MIOPEN_NAMES)?;
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
        let Hip {
            api: hip,
            path: hip_path,
            devices,
        } = Hip::open()?;
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
pub fn hip_error_text(api: &HipApi, status: sys::hipError_t) -> String {
    hip::error_text(api, status)
}

pub(crate) use hipdnn_rocm_sys::hip::c_text;
