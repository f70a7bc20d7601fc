//! [`Gpu`]: one CUDA device's primary context, opened after probing the driver.

use std::ffi::c_int;
use std::fmt;
use std::sync::Arc;

use cudarc::driver::sys::{CUcontext, CUdevice};

use crate::driver::{Driver, guarded};
use crate::error::{GpuError, GpuResult};
use crate::memory::DeviceBuffer;
use crate::stream::{Event, Stream};

/// One CUDA device, through its primary context: the context the CUDA runtime, cuDNN
/// and cuBLAS use, so memory and streams made here are theirs too.
///
/// Cheap to clone (the clones share the context); buffers, streams and events keep it
/// alive. It may be used from any thread: every operation first makes the context
/// current on the calling thread (a driver query, and a set only when another context
/// is current there).
///
/// ```no_run
/// use hipdnn_gpu::Gpu;
///
/// # fn main() -> Result<(), hipdnn_gpu::GpuError> {
/// let gpu = Gpu::open_default()?;
/// println!("{} ({} MiB)", gpu.name(), gpu.total_memory() >> 20);
/// let mut x = gpu.alloc(16)?;
/// x.copy_from_host(&[1u8; 16])?;
/// let mut back = [0u8; 16];
/// x.copy_to_host(&mut back)?;
/// assert_eq!(back, [1u8; 16]);
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct Gpu {
    inner: Arc<Inner>,
}

struct Inner {
    driver: Driver,
    ordinal: usize,
    device: CUdevice,
    context: CUcontext,
    name: String,
    total_memory: usize,
    driver_version: i32,
}

// SAFETY: the primary context may be made current on, and used from, any thread; the
// other fields are plain data.
unsafe impl Send for Inner {}
// SAFETY: as above; nothing in `Inner` is mutated after `open`.
unsafe impl Sync for Inner {}

impl Drop for Inner {
    fn drop(&mut self) {
        // SAFETY: pairs with the retain in `Gpu::open`; every buffer, stream and event
        // holds a `Gpu`, so none is left to use the context.
        let _ = unsafe { self.driver.release_primary_context(self.device) };
    }
}

impl Gpu {
    /// Opens device `ordinal` (as the driver numbers them, after
    /// `CUDA_VISIBLE_DEVICES`).
    ///
    /// In order: the driver library loads ([`GpuError::LibraryNotFound`]), it has every
    /// function this crate calls ([`GpuError::MissingSymbol`]), `cuInit` succeeds
    /// ([`GpuError::NoDevice`] for `CUDA_ERROR_NO_DEVICE`, else [`GpuError::Driver`]),
    /// a device exists ([`GpuError::NoDevice`], [`GpuError::NoSuchDevice`]); then the
    /// device's primary context is retained and made current on the calling thread.
    /// Nothing panics: a panic inside `cudarc` is caught ([`GpuError::LoadPanicked`]).
    ///
    /// # Errors
    /// As listed; all but a failing retain are [`GpuError::is_unavailable`].
    pub fn open(ordinal: usize) -> GpuResult<Self> {
        guarded(|| {
            let driver = Driver::probe()?;
            driver.init()?;
            let count = driver.device_count()?;
            if count == 0 {
                return Err(GpuError::NoDevice { detail: None });
            }
            if ordinal >= count {
                return Err(GpuError::NoSuchDevice { ordinal, count });
            }
            let device = driver.device(ordinal as c_int)?;
            let name = driver.device_name(device)?;
            let total_memory = driver.total_memory(device)?;
            let driver_version = driver.driver_version()?;
            let context = driver.retain_primary_context(device)?;
            let gpu = Self {
                inner: Arc::new(Inner {
                    driver,
                    ordinal,
                    device,
                    context,
                    name,
                    total_memory,
                    driver_version,
                }),
            };
            gpu.make_current()?;
            Ok(gpu)
        })
    }

    /// Opens device 0 ([`open`](Self::open)); `CUDA_VISIBLE_DEVICES` picks which
    /// physical device that is.
    ///
    /// # Errors
    /// As [`open`](Self::open).
    pub fn open_default() -> GpuResult<Self> {
        Self::open(0)
    }

    /// How many devices the driver sees (probing and initializing it first).
    ///
    /// # Errors
    /// As [`open`](Self::open) up to the device count; no device is 0, not an error.
    pub fn device_count() -> GpuResult<usize> {
        guarded(|| {
            let driver = Driver::probe()?;
            match driver.init() {
                Err(GpuError::NoDevice { .. }) => Ok(0),
                Err(e) => Err(e),
                Ok(()) => driver.device_count(),
            }
        })
    }

    /// Makes the device's primary context current on the calling thread (every
    /// operation does this itself; call it before handing the thread to code that
    /// uses the current context, such as a plugin on the driver API).
    ///
    /// # Errors
    /// [`GpuError::Driver`] from `cuCtxGetCurrent` / `cuCtxSetCurrent`.
    pub fn make_current(&self) -> GpuResult<()> {
        self.inner.driver.make_current(self.inner.context)
    }

    /// The ordinal it was opened with.
    pub fn ordinal(&self) -> usize {
        self.inner.ordinal
    }

    /// The device's name, e.g. `NVIDIA H200`.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The device's memory in bytes.
    pub fn total_memory(&self) -> usize {
        self.inner.total_memory
    }

    /// The CUDA version of the driver, as (major, minor): `(13, 0)`.
    pub fn driver_version(&self) -> (u32, u32) {
        let v = u32::try_from(self.inner.driver_version).unwrap_or(0);
        (v / 1000, (v % 1000) / 10)
    }

    /// Waits until all work on the device's context (every stream) is done.
    ///
    /// # Errors
    /// [`GpuError::Driver`] from `cuCtxSynchronize`, e.g. a kernel that faulted earlier
    /// (`CUDA_ERROR_ILLEGAL_ADDRESS`).
    pub fn synchronize(&self) -> GpuResult<()> {
        self.make_current()?;
        self.inner.driver.synchronize_context()
    }

    /// `len` bytes of device memory (uninitialized), 256-byte aligned or more.
    ///
    /// # Errors
    /// [`GpuError::Driver`] from `cuMemAlloc_v2` (`CUDA_ERROR_OUT_OF_MEMORY`).
    pub fn alloc(&self, len: usize) -> GpuResult<DeviceBuffer> {
        DeviceBuffer::new(self, len)
    }

    /// `len` zero bytes of device memory.
    ///
    /// # Errors
    /// As [`alloc`](Self::alloc) and [`DeviceBuffer::fill`].
    pub fn alloc_zeroed(&self, len: usize) -> GpuResult<DeviceBuffer> {
        let mut buffer = self.alloc(len)?;
        buffer.fill(0)?;
        Ok(buffer)
    }

    /// A copy of `bytes` in device memory.
    ///
    /// # Errors
    /// As [`alloc`](Self::alloc) and [`DeviceBuffer::copy_from_host`].
    pub fn copy_from_host(&self, bytes: &[u8]) -> GpuResult<DeviceBuffer> {
        let mut buffer = self.alloc(bytes.len())?;
        buffer.copy_from_host(bytes)?;
        Ok(buffer)
    }

    /// A new non-blocking stream.
    ///
    /// # Errors
    /// [`GpuError::Driver`] from `cuStreamCreate`.
    pub fn stream(&self) -> GpuResult<Stream> {
        Stream::new(self)
    }

    /// A new event with timing.
    ///
    /// # Errors
    /// [`GpuError::Driver`] from `cuEventCreate`.
    pub fn event(&self) -> GpuResult<Event> {
        Event::new(self)
    }

    /// The driver proof, for the other safe types.
    pub(crate) fn driver(&self) -> Driver {
        self.inner.driver
    }
}

impl fmt::Debug for Gpu {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (major, minor) = self.driver_version();
        f.debug_struct("Gpu")
            .field("ordinal", &self.inner.ordinal)
            .field("name", &self.inner.name)
            .field("total_memory", &self.inner.total_memory)
            .field("driver", &format_args!("{major}.{minor}"))
            .finish()
    }
}

impl fmt::Display for Gpu {
    /// `CUDA device 0 (NVIDIA H200)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "CUDA device {} ({})",
            self.inner.ordinal, self.inner.name
        )
    }
}
