//! What the tests share: the libraries (the provider's `.so` and the software MIOpen)
//! and device memory through HIP.
//!
//! The libraries are the ones named by `HIPDNN_MIOPEN_PLUGIN` and `HIPDNN_SOFT_MIOPEN`
//! when set (prebuilt, e.g. an installed provider), else built here with a nested
//! cargo.

#![allow(dead_code)]

use std::ffi::c_void;
use std::path::{Path, PathBuf};
use std::ptr::NonNull;

use hipdnn_conformance::DeviceAllocator;
use hipdnn_miopen_provider::miopen::load::{HIP_LIBRARY_ENV, MIOPEN_LIBRARY_ENV};
use hipdnn_miopen_provider::miopen::sys::{HipApi, hipError_t, hipMemcpyKind};

/// `[the provider's .so, the software MIOpen's .so]`.
pub fn libraries() -> [PathBuf; 2] {
    if let (Some(plugin), Some(soft)) = (
        std::env::var_os("HIPDNN_MIOPEN_PLUGIN"),
        std::env::var_os("HIPDNN_SOFT_MIOPEN"),
    ) {
        return [plugin.into(), soft.into()];
    }
    let libs = hipdnn_conformance::cdylib::build_cdylibs(
        env!("CARGO_MANIFEST_DIR"),
        &["hipdnn-miopen-provider", "hipdnn-soft-miopen"],
        "miopen-plugin-test",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    [libs[0].clone(), libs[1].clone()]
}

/// Points the provider at the software MIOpen and HIP in `soft` (the same run-time
/// loading path as the real libraries).
///
/// # Safety
/// Call before any other thread runs (it sets environment variables).
pub unsafe fn use_soft_miopen(soft: &Path) {
    // SAFETY: the caller runs this before starting threads.
    unsafe {
        std::env::set_var(MIOPEN_LIBRARY_ENV, soft);
        std::env::set_var(HIP_LIBRARY_ENV, soft);
    }
}

/// Device memory through a HIP runtime's `hipMalloc`/`hipMemcpy` (the software HIP's
/// host memory, or a real device's).
#[derive(Debug)]
pub struct HipAllocator {
    hip: HipApi,
    label: String,
}

impl HipAllocator {
    /// The HIP runtime at `path`.
    ///
    /// # Errors
    /// When it does not load or lacks a function.
    pub fn open(path: &Path, label: &str) -> Result<Self, String> {
        use libloading::os::unix::{Library, RTLD_LOCAL, RTLD_NOW};
        // SAFETY: loading a HIP runtime (or its software stand-in) runs its initialisers.
        let lib = unsafe { Library::open(Some(path), RTLD_NOW | RTLD_LOCAL) }
            .map_err(|e| format!("{}: {e}", path.display()))?;
        // SAFETY: the library exports HIP's functions with HIP's signatures.
        let hip =
            unsafe { HipApi::resolve(lib) }.map_err(|s| format!("{}: no {s}", path.display()))?;
        Ok(Self {
            hip,
            label: label.to_owned(),
        })
    }

    fn check(&self, status: hipError_t, call: &str) -> Result<(), String> {
        if status == hipError_t::hipSuccess {
            Ok(())
        } else {
            Err(format!("{call} failed with {status}"))
        }
    }
}

impl DeviceAllocator for HipAllocator {
    fn name(&self) -> &str {
        &self.label
    }

    fn allocate(&self, len: usize) -> Result<NonNull<c_void>, String> {
        let mut ptr = std::ptr::null_mut();
        // SAFETY: a valid out-pointer.
        let status = unsafe { (self.hip.hipMalloc)(&mut ptr, len.max(1)) };
        self.check(status, "hipMalloc")?;
        let ptr = NonNull::new(ptr).ok_or("hipMalloc returned null")?;
        Ok(ptr)
    }

    unsafe fn free(&self, ptr: NonNull<c_void>) {
        // SAFETY: from hipMalloc of this runtime, freed once.
        let _ = unsafe { (self.hip.hipFree)(ptr.as_ptr()) };
    }

    unsafe fn copy_to_device(&self, dst: NonNull<c_void>, src: &[u8]) -> Result<(), String> {
        // SAFETY: the caller vouches `dst` holds `src.len()` bytes.
        let status = unsafe {
            (self.hip.hipMemcpy)(
                dst.as_ptr(),
                src.as_ptr().cast(),
                src.len(),
                hipMemcpyKind::hipMemcpyHostToDevice,
            )
        };
        self.check(status, "hipMemcpy")
    }

    unsafe fn copy_to_host(&self, dst: &mut [u8], src: NonNull<c_void>) -> Result<(), String> {
        // SAFETY: the caller vouches `src` holds `dst.len()` bytes.
        let status = unsafe {
            (self.hip.hipMemcpy)(
                dst.as_mut_ptr().cast(),
                src.as_ptr(),
                dst.len(),
                hipMemcpyKind::hipMemcpyDeviceToHost,
            )
        };
        self.check(status, "hipMemcpy")
    }

    fn synchronize(&self) -> Result<(), String> {
        // SAFETY: no arguments.
        let status = unsafe { (self.hip.hipDeviceSynchronize)() };
        self.check(status, "hipDeviceSynchronize")
    }
}
