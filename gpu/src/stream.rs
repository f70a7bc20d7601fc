//! [`Stream`] (a non-blocking CUDA stream) and [`Event`] (timing on a stream).

use std::ffi::c_void;
use std::fmt;

use cudarc::driver::sys::{CUevent, CUstream};

use crate::device::Gpu;
use crate::error::GpuResult;

/// A non-blocking CUDA stream (`CU_STREAM_NON_BLOCKING`: no implicit synchronization
/// with the legacy default stream), destroyed on drop.
///
/// [`as_raw`](Self::as_raw) is the `CUstream`, which is what a CUDA plugin takes as the
/// backend's `hipStream_t`:
///
/// ```no_run
/// # fn main() -> Result<(), hipdnn_gpu::GpuError> {
/// # unsafe fn set_stream(_: *mut std::ffi::c_void) {}
/// let gpu = hipdnn_gpu::Gpu::open_default()?;
/// let stream = gpu.stream()?;
/// // With the backend: `unsafe { handle.set_stream(stream.as_raw().cast()) }`, the
/// // stream outliving the handle's use of it.
/// unsafe { set_stream(stream.as_raw()) };
/// // ... plan.execute(...) enqueues on `stream` ...
/// stream.synchronize()?;
/// # Ok(())
/// # }
/// ```
pub struct Stream {
    gpu: Gpu,
    raw: CUstream,
}

// SAFETY: CUDA streams may be used from any thread; each operation makes the context
// current on the calling thread first.
unsafe impl Send for Stream {}
// SAFETY: as above; the driver synchronizes concurrent use of a stream.
unsafe impl Sync for Stream {}

impl Stream {
    pub(crate) fn new(gpu: &Gpu) -> GpuResult<Self> {
        gpu.make_current()?;
        let raw = gpu.driver().create_stream()?;
        Ok(Self {
            gpu: gpu.clone(),
            raw,
        })
    }

    /// The `CUstream` as an untyped pointer (a `hipStream_t` for a CUDA plugin). It
    /// stays valid while `self` lives.
    pub fn as_raw(&self) -> *mut c_void {
        self.raw.cast()
    }

    /// Waits until the work queued on the stream is done.
    ///
    /// # Errors
    /// [`GpuError::Driver`](crate::GpuError::Driver) from `cuStreamSynchronize`,
    /// including the error of a kernel that faulted on the stream.
    pub fn synchronize(&self) -> GpuResult<()> {
        self.gpu.make_current()?;
        self.gpu.driver().synchronize_stream(self.raw)
    }

    /// The device it belongs to.
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        if self.gpu.make_current().is_ok() {
            // SAFETY: created in `new`, destroyed once; queued work still completes.
            let _ = unsafe { self.gpu.driver().destroy_stream(self.raw) };
        }
    }
}

impl fmt::Debug for Stream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Stream")
            .field("device", &self.gpu.ordinal())
            .field("raw", &self.raw)
            .finish()
    }
}

/// A CUDA event with timing, destroyed on drop: record it on a stream before and after
/// some work, and [`elapsed_ms`](Self::elapsed_ms) is the device time between.
///
/// ```no_run
/// # fn main() -> Result<(), hipdnn_gpu::GpuError> {
/// let gpu = hipdnn_gpu::Gpu::open_default()?;
/// let stream = gpu.stream()?;
/// let (start, end) = (gpu.event()?, gpu.event()?);
/// start.record(&stream)?;
/// // ... enqueue work on `stream` ...
/// end.record(&stream)?;
/// println!("{:.3} ms", start.elapsed_ms(&end)?);
/// # Ok(())
/// # }
/// ```
pub struct Event {
    gpu: Gpu,
    raw: CUevent,
}

// SAFETY: CUDA events may be used from any thread; each operation makes the context
// current on the calling thread first.
unsafe impl Send for Event {}
// SAFETY: as above.
unsafe impl Sync for Event {}

impl Event {
    pub(crate) fn new(gpu: &Gpu) -> GpuResult<Self> {
        gpu.make_current()?;
        let raw = gpu.driver().create_event()?;
        Ok(Self {
            gpu: gpu.clone(),
            raw,
        })
    }

    /// Records the event on `stream`: it completes when the work queued there before it
    /// is done.
    ///
    /// # Errors
    /// [`GpuError::Driver`](crate::GpuError::Driver) from `cuEventRecord` (e.g. a
    /// stream of another device).
    pub fn record(&self, stream: &Stream) -> GpuResult<()> {
        self.gpu.make_current()?;
        // SAFETY: both are live objects of this crate (borrowed for the call).
        unsafe { self.gpu.driver().record_event(self.raw, stream.raw) }
    }

    /// Waits until the event's last record has completed.
    ///
    /// # Errors
    /// [`GpuError::Driver`](crate::GpuError::Driver) from `cuEventSynchronize`.
    pub fn synchronize(&self) -> GpuResult<()> {
        self.gpu.make_current()?;
        // SAFETY: `self.raw` is live.
        unsafe { self.gpu.driver().synchronize_event(self.raw) }
    }

    /// Milliseconds of device time from this event to `end` (both recorded; waits for
    /// `end` to complete first). Resolution is about half a microsecond.
    ///
    /// # Errors
    /// [`GpuError::Driver`](crate::GpuError::Driver): `CUDA_ERROR_INVALID_HANDLE` when
    /// either was never recorded.
    pub fn elapsed_ms(&self, end: &Event) -> GpuResult<f32> {
        end.synchronize()?;
        // SAFETY: both events are live (borrowed for the call).
        unsafe { self.gpu.driver().elapsed_ms(self.raw, end.raw) }
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        if self.gpu.make_current().is_ok() {
            // SAFETY: created in `new`, destroyed once.
            let _ = unsafe { self.gpu.driver().destroy_event(self.raw) };
        }
    }
}

impl fmt::Debug for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Event")
            .field("device", &self.gpu.ordinal())
            .field("raw", &self.raw)
            .finish()
    }
}
