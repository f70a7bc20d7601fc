//! The plugin's CUDA state: the device's primary context (the one the CUDA runtime,
//! cuDNN and host applications share) and the cuDNN handle, behind one lock.

use std::ffi::c_void;
use std::sync::Mutex;

use cudarc::driver::{result as cu, sys as cuda};

use crate::cudnn::safe::CudnnHandle;
use crate::probe::Available;

/// What a plugin handle holds: one device's context and a cuDNN handle bound to the
/// stream last used.
#[derive(Debug)]
pub struct DeviceState {
    // Fields drop in order: the cuDNN handle before the context it lives in.
    cudnn: Mutex<Bound>,
    context: Context,
    /// What the probe found.
    pub found: Available,
}

/// The cuDNN handle and the stream it is set to.
#[derive(Debug)]
pub struct Bound {
    handle: CudnnHandle,
    stream: usize,
}

impl Bound {
    /// The handle, set to `stream` (a CUDA stream, or null for the default one).
    ///
    /// # Safety
    /// `stream` is a live CUDA stream of the device, or null.
    ///
    /// # Errors
    /// cuDNN's.
    pub unsafe fn on_stream(&mut self, stream: *mut c_void) -> Result<&CudnnHandle, String> {
        if self.stream != stream as usize {
            // SAFETY: per the contract.
            unsafe { self.handle.set_stream(stream) }.map_err(|e| e.to_string())?;
            self.stream = stream as usize;
        }
        Ok(&self.handle)
    }

    /// The handle on whatever stream it was last set to.
    pub fn handle(&self) -> &CudnnHandle {
        &self.handle
    }
}

/// A retained primary context.
#[derive(Debug)]
struct Context {
    raw: cuda::CUcontext,
    device: cuda::CUdevice,
}

// SAFETY: a CUDA context may be made current on any thread; we only pass it to
// cuCtxSetCurrent and cuDevicePrimaryCtxRelease.
unsafe impl Send for Context {}
// SAFETY: as above.
unsafe impl Sync for Context {}

impl Drop for Context {
    fn drop(&mut self) {
        // SAFETY: retained in `DeviceState::open`, released once here.
        let _ = unsafe { cu::primary_ctx::release(self.device) };
    }
}

fn driver(call: &str, e: cu::DriverError) -> String {
    format!("{call} failed: {e:?}")
}

impl DeviceState {
    /// Retains device 0's primary context, makes it current and creates a cuDNN
    /// handle on it. Call only after [`crate::probe::probe`] succeeded.
    ///
    /// # Errors
    /// The driver's or cuDNN's, as a sentence.
    pub fn open(found: Available) -> Result<Self, String> {
        let device = cu::device::get(0).map_err(|e| driver("cuDeviceGet", e))?;
        // SAFETY: `device` is a valid ordinal's device (the probe saw one).
        let raw = unsafe { cu::primary_ctx::retain(device) }
            .map_err(|e| driver("cuDevicePrimaryCtxRetain", e))?;
        let context = Context { raw, device };
        context.make_current()?;
        let handle = CudnnHandle::new().map_err(|e| e.to_string())?;
        Ok(Self {
            context,
            cudnn: Mutex::new(Bound { handle, stream: 0 }),
            found,
        })
    }

    /// Makes the device's context current on the calling thread (cheap when it is).
    ///
    /// # Errors
    /// The driver's.
    pub fn make_current(&self) -> Result<(), String> {
        self.context.make_current()
    }

    /// The cuDNN handle, locked (cuDNN handles are not for concurrent use).
    pub fn lock(&self) -> std::sync::MutexGuard<'_, Bound> {
        self.cudnn.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Context {
    fn make_current(&self) -> Result<(), String> {
        // SAFETY: `raw` is a retained primary context.
        unsafe { cu::ctx::set_current(self.raw) }.map_err(|e| driver("cuCtxSetCurrent", e))
    }
}

/// Device memory for benchmarking candidate plans, freed on drop.
#[derive(Debug)]
pub struct Scratch {
    ptr: cuda::CUdeviceptr,
}

impl Scratch {
    /// `bytes` of zeroed device memory (at least one byte).
    ///
    /// # Errors
    /// The driver's.
    pub fn zeroed(bytes: usize) -> Result<Self, String> {
        let bytes = bytes.max(1);
        // SAFETY: a plain allocation on the current context.
        let ptr = unsafe { cu::malloc_sync(bytes) }.map_err(|e| driver("cuMemAlloc", e))?;
        let scratch = Self { ptr };
        // SAFETY: `ptr` holds `bytes` bytes.
        unsafe { cu::memset_d8_sync(ptr, 0, bytes) }.map_err(|e| driver("cuMemsetD8", e))?;
        Ok(scratch)
    }

    /// The address.
    pub fn ptr(&self) -> *mut c_void {
        self.ptr as usize as *mut c_void
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        // SAFETY: allocated by `zeroed`, freed once.
        let _ = unsafe { cu::free_sync(self.ptr) };
    }
}

/// Times `run` on `stream` with CUDA events: the fastest of `repeats` runs after one
/// warm-up, in milliseconds.
///
/// # Errors
/// `run`'s, or the driver's.
pub fn time_on_stream(
    stream: *mut c_void,
    repeats: usize,
    mut run: impl FnMut() -> Result<(), String>,
) -> Result<f32, String> {
    let flags = cuda::CUevent_flags::CU_EVENT_DEFAULT;
    let start = cu::event::create(flags).map_err(|e| driver("cuEventCreate", e))?;
    let end = match cu::event::create(flags) {
        Ok(end) => end,
        Err(e) => {
            // SAFETY: created above.
            let _ = unsafe { cu::event::destroy(start) };
            return Err(driver("cuEventCreate", e));
        }
    };
    let stream = stream as cuda::CUstream;
    let timed = (|| {
        run()?;
        let mut best = f32::INFINITY;
        for _ in 0..repeats.max(1) {
            // SAFETY: live events and the handle's stream.
            unsafe { cu::event::record(start, stream) }.map_err(|e| driver("cuEventRecord", e))?;
            run()?;
            // SAFETY: as above.
            unsafe { cu::event::record(end, stream) }.map_err(|e| driver("cuEventRecord", e))?;
            // SAFETY: a recorded event.
            unsafe { cu::event::synchronize(end) }.map_err(|e| driver("cuEventSynchronize", e))?;
            // SAFETY: both recorded and complete.
            let ms = unsafe { cu::event::elapsed(start, end) }
                .map_err(|e| driver("cuEventElapsedTime", e))?;
            best = best.min(ms);
        }
        Ok(best)
    })();
    // SAFETY: created above, no longer used.
    unsafe {
        let _ = cu::event::destroy(start);
        let _ = cu::event::destroy(end);
    }
    timed
}
