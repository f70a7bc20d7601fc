//! Whether this machine can run the engine, asked before anything touches CUDA.
//!
//! cudarc loads libraries and resolves symbols on first use and panics when one is
//! missing, so the plugin never calls it blindly: [`probe`] checks, in order, that the
//! CUDA driver library loads and has every function we call, that a device exists,
//! that the cuDNN library loads and has every function we call, and that its version is
//! new enough. Each failure is a sentence naming what is missing, which becomes the
//! plugin handle's creation error (the backend logs it; other plugins keep serving).
//!
//! Libraries are found by the dynamic loader's usual search (`LD_LIBRARY_PATH`, the
//! loader cache, the system directories) under cudarc's candidate names: for the
//! driver `libcuda.so` then `libcuda.so.1`, for cuDNN `libcudnn.so` then
//! `libcudnn.so.9`.

use std::panic::{AssertUnwindSafe, catch_unwind};

use cudarc::driver::sys as cuda;

use crate::cudnn::{self, sys as cudnn_sys};

/// The oldest cuDNN the engine runs with (9.0.0: the graph API as we use it).
pub const MIN_CUDNN_VERSION: usize = 90000;

/// CUDA driver functions the plugin calls.
pub const CUDA_SYMBOLS: &[&str] = &[
    "cuInit",
    "cuDeviceGetCount",
    "cuDeviceGet",
    "cuDevicePrimaryCtxRetain",
    "cuDevicePrimaryCtxRelease_v2",
    "cuCtxSetCurrent",
    "cuGetErrorString",
    "cuGetErrorName",
    "cuMemAlloc_v2",
    "cuMemFree_v2",
    "cuMemsetD8_v2",
    "cuEventCreate",
    "cuEventRecord",
    "cuEventSynchronize",
    "cuEventElapsedTime_v2",
    "cuEventDestroy_v2",
    "cuStreamSynchronize",
];

/// What the probe found on a machine that can run the engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Available {
    /// CUDA devices visible.
    pub devices: i32,
    /// `cudnnGetVersion()` (e.g. 91400).
    pub cudnn_version: usize,
}

/// `major.minor.patch` of a cuDNN version number.
pub fn version_text(version: usize) -> String {
    format!(
        "{}.{}.{}",
        version / 10000,
        version / 100 % 100,
        version % 100
    )
}

/// Checks the machine (see the module docs); the error says what is missing.
pub fn probe() -> Result<Available, String> {
    catch_unwind(AssertUnwindSafe(probe_inner)).unwrap_or_else(|p| {
        Err(format!(
            "probing CUDA panicked: {}",
            hipdnn_data_sdk::panic_message(&*p)
        ))
    })
}

fn probe_inner() -> Result<Available, String> {
    // SAFETY: tries to dlopen the driver library by cudarc's candidate names.
    if !unsafe { cuda::is_culib_present() } {
        return Err("no NVIDIA driver: libcuda.so.1 not found".into());
    }
    // SAFETY: present (checked just above), so `culib` loads without panicking.
    let driver = unsafe { cuda::culib() };
    // SAFETY: only looks symbols up; nothing is called.
    missing_symbol(CUDA_SYMBOLS, |name| unsafe {
        driver.get::<*const ()>(name).is_ok()
    })
    .map_or(Ok(()), |s| {
        Err(format!(
            "the CUDA driver library lacks {s} (driver too old)"
        ))
    })?;
    cudarc::driver::result::init().map_err(|e| format!("cuInit failed: {e:?}"))?;
    let devices = cudarc::driver::result::device::get_count()
        .map_err(|e| format!("cuDeviceGetCount failed: {e:?}"))?;
    if devices == 0 {
        return Err("no CUDA device".into());
    }
    // SAFETY: as for the driver.
    if !unsafe { cudnn_sys::is_culib_present() } {
        return Err(
            "libcudnn.so.9 not found (install cuDNN 9 or put it on LD_LIBRARY_PATH)".into(),
        );
    }
    // SAFETY: present.
    let library = unsafe { cudnn_sys::culib() };
    // SAFETY: as for the driver.
    missing_symbol(cudnn::result::SYMBOLS, |name| unsafe {
        library.get::<*const ()>(name).is_ok()
    })
    .map_or(Ok(()), |s| Err(format!("the cuDNN library lacks {s}")))?;
    let cudnn_version = cudnn::result::version();
    if cudnn_version < MIN_CUDNN_VERSION {
        return Err(format!(
            "cuDNN {} is too old; {} or newer is needed",
            version_text(cudnn_version),
            version_text(MIN_CUDNN_VERSION)
        ));
    }
    Ok(Available {
        devices,
        cudnn_version,
    })
}

/// The first of `names` that `has` does not find.
fn missing_symbol(names: &[&str], has: impl Fn(&[u8]) -> bool) -> Option<String> {
    names
        .iter()
        .find(|name| !has(name.as_bytes()))
        .map(|name| (*name).to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_read_as_major_minor_patch() {
        assert_eq!(version_text(91400), "9.14.0");
        assert_eq!(version_text(90100), "9.1.0");
        assert_eq!(version_text(MIN_CUDNN_VERSION), "9.0.0");
    }

    #[test]
    fn the_probe_answers_without_panicking() {
        // On a machine without the driver or cuDNN the answer names what is missing;
        // on one with a GPU it reports the devices and the version.
        match probe() {
            Ok(found) => {
                assert!(found.devices > 0);
                assert!(found.cudnn_version >= MIN_CUDNN_VERSION);
            }
            Err(reason) => assert!(
                reason.contains("not found")
                    || reason.contains("no CUDA device")
                    || reason.contains("lacks")
                    || reason.contains("too old")
                    || reason.contains("failed"),
                "{reason}"
            ),
        }
    }
}
