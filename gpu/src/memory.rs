//! [`DeviceBuffer`]: device memory freed on drop, with blocking copies.

use std::ffi::c_void;
use std::fmt;

use cudarc::driver::sys::CUdeviceptr;

use crate::device::Gpu;
use crate::error::{GpuError, GpuResult};

/// `len` bytes of device memory (`cuMemAlloc`), freed on drop (`cuMemFree`).
///
/// The copies and [`fill`](Self::fill) are blocking: complete when they return. They
/// run on the legacy default stream, which does **not** wait for work on the
/// non-blocking [`Stream`](crate::Stream)s of this crate: synchronize the stream that
/// writes a buffer before reading it back, and do not overwrite a buffer that queued
/// work still reads.
///
/// ```no_run
/// # fn main() -> Result<(), hipdnn_gpu::GpuError> {
/// let gpu = hipdnn_gpu::Gpu::open_default()?;
/// let x = gpu.copy_from_host(&[7u8; 1024])?;
/// let ptr = x.as_ptr(); // for a variant pack
/// assert!(!ptr.is_null());
/// assert_eq!(x.to_host_vec()?, vec![7u8; 1024]);
/// # Ok(())
/// # }
/// ```
pub struct DeviceBuffer {
    gpu: Gpu,
    ptr: CUdeviceptr,
    len: usize,
}

// SAFETY: the buffer owns its device allocation; driver calls on it are thread-safe and
// each makes the context current on the calling thread first.
unsafe impl Send for DeviceBuffer {}
// SAFETY: shared references only read the memory (copies to the host).
unsafe impl Sync for DeviceBuffer {}

impl DeviceBuffer {
    pub(crate) fn new(gpu: &Gpu, len: usize) -> GpuResult<Self> {
        gpu.make_current()?;
        let ptr = gpu.driver().alloc(len)?;
        Ok(Self {
            gpu: gpu.clone(),
            ptr,
            len,
        })
    }

    /// Its length in bytes (an empty buffer still has a one-byte allocation, so its
    /// pointer is not null).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds no byte.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The device address as a pointer (what a variant pack or kernel is given; not
    /// dereferenceable on the host).
    pub fn as_ptr(&self) -> *mut c_void {
        self.ptr as usize as *mut c_void
    }

    /// The device address (`CUdeviceptr`).
    pub fn device_ptr(&self) -> u64 {
        self.ptr
    }

    /// The device it lives on.
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    fn check_len(&self, op: &'static str, host: usize) -> GpuResult<()> {
        if host == self.len {
            Ok(())
        } else {
            Err(GpuError::SizeMismatch {
                op,
                host,
                device: self.len,
            })
        }
    }

    /// Copies `src` (of the buffer's length) to the device; the bytes have landed when
    /// it returns.
    ///
    /// # Errors
    /// [`GpuError::SizeMismatch`]; [`GpuError::Driver`] from the copy.
    pub fn copy_from_host(&mut self, src: &[u8]) -> GpuResult<()> {
        self.check_len("copy to the device", src.len())?;
        self.gpu.make_current()?;
        // SAFETY: `self.ptr` is this buffer's allocation of `self.len == src.len()` bytes.
        unsafe { self.gpu.driver().copy_to_device(self.ptr, src) }
    }

    /// Copies the buffer into `dst` (of the buffer's length); complete when it returns.
    ///
    /// # Errors
    /// [`GpuError::SizeMismatch`]; [`GpuError::Driver`] from the copy (which also
    /// reports an earlier kernel fault).
    pub fn copy_to_host(&self, dst: &mut [u8]) -> GpuResult<()> {
        self.check_len("copy to the host", dst.len())?;
        self.gpu.make_current()?;
        // SAFETY: `self.ptr` is this buffer's allocation of `self.len == dst.len()` bytes.
        unsafe { self.gpu.driver().copy_to_host(dst, self.ptr) }
    }

    /// The buffer's bytes.
    ///
    /// # Errors
    /// As [`copy_to_host`](Self::copy_to_host).
    pub fn to_host_vec(&self) -> GpuResult<Vec<u8>> {
        let mut out = vec![0; self.len];
        self.copy_to_host(&mut out)?;
        Ok(out)
    }

    /// Sets every byte to `value`; done when it returns.
    ///
    /// # Errors
    /// [`GpuError::Driver`] from `cuMemsetD8_v2`.
    pub fn fill(&mut self, value: u8) -> GpuResult<()> {
        self.gpu.make_current()?;
        // SAFETY: `self.ptr` is this buffer's allocation of `self.len` bytes.
        unsafe { self.gpu.driver().fill(self.ptr, value, self.len) }
    }

    /// Sets every byte to zero.
    ///
    /// # Errors
    /// As [`fill`](Self::fill).
    pub fn zero(&mut self) -> GpuResult<()> {
        self.fill(0)
    }
}

impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        // Freeing needs the context current; if even that fails, leaking is all that
        // is left (a destructor has no one to report to).
        if self.gpu.make_current().is_ok() {
            // SAFETY: allocated in `new`, freed once here; `cuMemFree` waits for
            // nothing, so work still reading it must be done (the type's docs).
            let _ = unsafe { self.gpu.driver().free(self.ptr) };
        }
    }
}

impl fmt::Debug for DeviceBuffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeviceBuffer")
            .field("device", &self.gpu.ordinal())
            .field("ptr", &format_args!("{:#x}", self.ptr))
            .field("len", &self.len)
            .finish()
    }
}
