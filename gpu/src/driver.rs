//! The result layer: the CUDA driver functions this crate calls, as thin wrappers over
//! `cudarc`'s raw `sys` bindings that return [`GpuResult`] with the function's name.
//!
//! `cudarc` resolves each `sys` function on its first call and **panics** when the
//! library or the symbol is missing. [`Driver::probe`] therefore loads the library and
//! resolves every name in [`SYMBOLS`] first, returning an error instead; a [`Driver`]
//! exists only after that succeeded, so every wrapper here (methods of `Driver`) calls a
//! function known to be present. A unit test checks that every `sys::cu…` call in this
//! file is in [`SYMBOLS`].

use std::ffi::{c_int, c_void};
use std::mem::MaybeUninit;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::OnceLock;

use cudarc::driver::sys::{
    self, CUcontext, CUdevice, CUdeviceptr, CUevent, CUevent_flags, CUresult, CUstream,
    CUstream_flags,
};

use crate::error::{Call, GpuError, GpuResult};

/// Every driver function the wrappers below call, by the name `cudarc` resolves.
///
/// `cuEventElapsedTime_v2` (CUDA 12.8) is the newest; a driver without it is too old.
pub const SYMBOLS: &[&str] = &[
    "cuInit",
    "cuDriverGetVersion",
    "cuDeviceGetCount",
    "cuDeviceGet",
    "cuDeviceGetName",
    "cuDeviceTotalMem_v2",
    "cuDevicePrimaryCtxRetain",
    "cuDevicePrimaryCtxRelease_v2",
    "cuCtxGetCurrent",
    "cuCtxSetCurrent",
    "cuCtxSynchronize",
    "cuMemAlloc_v2",
    "cuMemFree_v2",
    "cuMemcpyHtoD_v2",
    "cuMemcpyDtoH_v2",
    "cuMemsetD8_v2",
    "cuStreamCreate",
    "cuStreamDestroy_v2",
    "cuStreamSynchronize",
    "cuEventCreate",
    "cuEventDestroy_v2",
    "cuEventRecord",
    "cuEventSynchronize",
    "cuEventElapsedTime_v2",
];

/// The names `cudarc` tries for the driver library, in order (the dynamic loader
/// searches each: `LD_LIBRARY_PATH`, the `ld.so` cache, the default directories),
/// without repeats.
pub fn library_candidates() -> Vec<String> {
    let mut names = cudarc::get_lib_name_candidates("cuda");
    let mut seen = std::collections::HashSet::new();
    names.retain(|n| seen.insert(n.clone()));
    names
}

/// Proof that the driver library is loaded and has every function of [`SYMBOLS`]:
/// the only way to call the wrappers.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Driver(());

/// The message of a caught panic.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_owned())
}

/// Runs `f`, turning a panic (from `cudarc`) into [`GpuError::LoadPanicked`].
pub(crate) fn guarded<T>(f: impl FnOnce() -> GpuResult<T>) -> GpuResult<T> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|payload| {
        Err(GpuError::LoadPanicked {
            message: panic_message(&*payload),
        })
    })
}

impl Driver {
    /// Loads the driver library and resolves every symbol of [`SYMBOLS`], once per
    /// process (the answer is kept).
    ///
    /// # Errors
    /// [`GpuError::LibraryNotFound`], [`GpuError::MissingSymbol`], or
    /// [`GpuError::LoadPanicked`] should `cudarc` panic all the same.
    pub(crate) fn probe() -> GpuResult<Self> {
        static PROBE: OnceLock<GpuResult<()>> = OnceLock::new();
        PROBE
            .get_or_init(|| guarded(probe_uncached))
            .clone()
            .map(|()| Self(()))
    }

    /// `cuInit(0)`; `CUDA_ERROR_NO_DEVICE` is [`GpuError::NoDevice`].
    pub(crate) fn init(self) -> GpuResult<()> {
        // SAFETY: the symbol resolves (`self` proves the probe); no pointer arguments.
        match unsafe { sys::cuInit(0) } {
            CUresult::CUDA_SUCCESS => Ok(()),
            CUresult::CUDA_ERROR_NO_DEVICE => Err(GpuError::NoDevice {
                detail: Some("cuInit: CUDA_ERROR_NO_DEVICE".to_owned()),
            }),
            code => Err(GpuError::Driver {
                call: "cuInit",
                code,
            }),
        }
    }

    /// The driver's CUDA version, e.g. `13000` for 13.0.
    pub(crate) fn driver_version(self) -> GpuResult<i32> {
        let mut v: c_int = 0;
        // SAFETY: the symbol resolves; `v` is a valid out-pointer.
        unsafe { sys::cuDriverGetVersion(&mut v) }
            .result()
            .call("cuDriverGetVersion")?;
        Ok(v)
    }

    /// How many devices the driver sees (after [`init`](Self::init)).
    pub(crate) fn device_count(self) -> GpuResult<usize> {
        let mut n: c_int = 0;
        // SAFETY: the symbol resolves; `n` is a valid out-pointer.
        unsafe { sys::cuDeviceGetCount(&mut n) }
            .result()
            .call("cuDeviceGetCount")?;
        Ok(usize::try_from(n).unwrap_or(0))
    }

    /// The device of `ordinal` (below [`device_count`](Self::device_count)).
    pub(crate) fn device(self, ordinal: c_int) -> GpuResult<CUdevice> {
        let mut d = MaybeUninit::uninit();
        // SAFETY: the symbol resolves; `d` is a valid out-pointer, written on success.
        unsafe { sys::cuDeviceGet(d.as_mut_ptr(), ordinal) }
            .result()
            .call("cuDeviceGet")?;
        // SAFETY: written by the successful call.
        Ok(unsafe { d.assume_init() })
    }

    /// The device's name (`NVIDIA H200`).
    pub(crate) fn device_name(self, device: CUdevice) -> GpuResult<String> {
        let mut buf = [0u8; 256];
        // SAFETY: the symbol resolves; `buf` holds `buf.len()` bytes.
        unsafe { sys::cuDeviceGetName(buf.as_mut_ptr().cast(), buf.len() as c_int, device) }
            .result()
            .call("cuDeviceGetName")?;
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        Ok(String::from_utf8_lossy(&buf[..end]).into_owned())
    }

    /// The device's memory in bytes.
    pub(crate) fn total_memory(self, device: CUdevice) -> GpuResult<usize> {
        let mut bytes = 0usize;
        // SAFETY: the symbol resolves; `bytes` is a valid out-pointer.
        unsafe { sys::cuDeviceTotalMem_v2(&mut bytes, device) }
            .result()
            .call("cuDeviceTotalMem_v2")?;
        Ok(bytes)
    }

    /// Retains the device's primary context (the CUDA runtime's and cuDNN's).
    pub(crate) fn retain_primary_context(self, device: CUdevice) -> GpuResult<CUcontext> {
        let mut ctx = std::ptr::null_mut();
        // SAFETY: the symbol resolves; `ctx` is a valid out-pointer.
        unsafe { sys::cuDevicePrimaryCtxRetain(&mut ctx, device) }
            .result()
            .call("cuDevicePrimaryCtxRetain")?;
        Ok(ctx)
    }

    /// Releases a retain of the device's primary context.
    ///
    /// # Safety
    /// Pairs with one [`retain_primary_context`](Self::retain_primary_context); nothing
    /// of this retain uses the context afterwards.
    pub(crate) unsafe fn release_primary_context(self, device: CUdevice) -> GpuResult<()> {
        // SAFETY: the symbol resolves; the caller pairs the release with a retain.
        unsafe { sys::cuDevicePrimaryCtxRelease_v2(device) }
            .result()
            .call("cuDevicePrimaryCtxRelease_v2")
    }

    /// Makes `ctx` current on the calling thread unless it is already (a thread-local
    /// read in the driver in the common case).
    pub(crate) fn make_current(self, ctx: CUcontext) -> GpuResult<()> {
        let mut current = std::ptr::null_mut();
        // SAFETY: the symbol resolves; `current` is a valid out-pointer.
        unsafe { sys::cuCtxGetCurrent(&mut current) }
            .result()
            .call("cuCtxGetCurrent")?;
        if current == ctx {
            return Ok(());
        }
        // SAFETY: the symbol resolves; `ctx` is a retained primary context.
        unsafe { sys::cuCtxSetCurrent(ctx) }
            .result()
            .call("cuCtxSetCurrent")
    }

    /// Waits for all work of the current context.
    pub(crate) fn synchronize_context(self) -> GpuResult<()> {
        // SAFETY: the symbol resolves; no arguments.
        unsafe { sys::cuCtxSynchronize() }
            .result()
            .call("cuCtxSynchronize")
    }

    /// `len` bytes (at least 1) of device memory in the current context.
    pub(crate) fn alloc(self, len: usize) -> GpuResult<CUdeviceptr> {
        let mut ptr: CUdeviceptr = 0;
        // SAFETY: the symbol resolves; `ptr` is a valid out-pointer.
        unsafe { sys::cuMemAlloc_v2(&mut ptr, len.max(1)) }
            .result()
            .call("cuMemAlloc_v2")?;
        Ok(ptr)
    }

    /// Frees device memory.
    ///
    /// # Safety
    /// `ptr` came from [`alloc`](Self::alloc), is freed once and not used afterwards.
    pub(crate) unsafe fn free(self, ptr: CUdeviceptr) -> GpuResult<()> {
        // SAFETY: the symbol resolves; the caller owns `ptr`.
        unsafe { sys::cuMemFree_v2(ptr) }
            .result()
            .call("cuMemFree_v2")
    }

    /// Copies `src` to `dst` and waits until the bytes are on the device.
    ///
    /// # Safety
    /// `dst` is device memory valid for `src.len()` bytes.
    pub(crate) unsafe fn copy_to_device(self, dst: CUdeviceptr, src: &[u8]) -> GpuResult<()> {
        // SAFETY: the symbol resolves; `src` is readable for its length, `dst` writable
        // for as many bytes (the caller's contract).
        unsafe { sys::cuMemcpyHtoD_v2(dst, src.as_ptr().cast::<c_void>(), src.len()) }
            .result()
            .call("cuMemcpyHtoD_v2")?;
        // From pageable memory the copy returns once the bytes are staged, not landed;
        // the legacy default stream it ran on is done when they have.
        self.synchronize_stream(std::ptr::null_mut())
    }

    /// Copies device memory at `src` into `dst`; complete when it returns.
    ///
    /// # Safety
    /// `src` is device memory valid for `dst.len()` bytes.
    pub(crate) unsafe fn copy_to_host(self, dst: &mut [u8], src: CUdeviceptr) -> GpuResult<()> {
        // SAFETY: the symbol resolves; `dst` is writable for its length, `src` readable
        // for as many bytes (the caller's contract).
        unsafe { sys::cuMemcpyDtoH_v2(dst.as_mut_ptr().cast::<c_void>(), src, dst.len()) }
            .result()
            .call("cuMemcpyDtoH_v2")
    }

    /// Sets `len` bytes at `dst` to `value` and waits until done.
    ///
    /// # Safety
    /// `dst` is device memory valid for `len` bytes.
    pub(crate) unsafe fn fill(self, dst: CUdeviceptr, value: u8, len: usize) -> GpuResult<()> {
        // SAFETY: the symbol resolves; `dst` is writable for `len` bytes.
        unsafe { sys::cuMemsetD8_v2(dst, value, len) }
            .result()
            .call("cuMemsetD8_v2")?;
        // The memset is asynchronous to the host: wait on the stream it ran on.
        self.synchronize_stream(std::ptr::null_mut())
    }

    /// A stream that does not synchronize with the legacy default stream.
    pub(crate) fn create_stream(self) -> GpuResult<CUstream> {
        let mut stream = std::ptr::null_mut();
        let flags = CUstream_flags::CU_STREAM_NON_BLOCKING as u32;
        // SAFETY: the symbol resolves; `stream` is a valid out-pointer.
        unsafe { sys::cuStreamCreate(&mut stream, flags) }
            .result()
            .call("cuStreamCreate")?;
        Ok(stream)
    }

    /// Destroys a stream (its pending work still completes).
    ///
    /// # Safety
    /// `stream` came from [`create_stream`](Self::create_stream), is destroyed once and
    /// not used afterwards.
    pub(crate) unsafe fn destroy_stream(self, stream: CUstream) -> GpuResult<()> {
        // SAFETY: the symbol resolves; the caller owns `stream`.
        unsafe { sys::cuStreamDestroy_v2(stream) }
            .result()
            .call("cuStreamDestroy_v2")
    }

    /// Waits for the work of `stream` (null: the legacy default stream).
    pub(crate) fn synchronize_stream(self, stream: CUstream) -> GpuResult<()> {
        // SAFETY: the symbol resolves; `stream` is null or a live stream of this crate.
        unsafe { sys::cuStreamSynchronize(stream) }
            .result()
            .call("cuStreamSynchronize")
    }

    /// An event with timing.
    pub(crate) fn create_event(self) -> GpuResult<CUevent> {
        let mut event = std::ptr::null_mut();
        let flags = CUevent_flags::CU_EVENT_DEFAULT as u32;
        // SAFETY: the symbol resolves; `event` is a valid out-pointer.
        unsafe { sys::cuEventCreate(&mut event, flags) }
            .result()
            .call("cuEventCreate")?;
        Ok(event)
    }

    /// Destroys an event.
    ///
    /// # Safety
    /// `event` came from [`create_event`](Self::create_event), is destroyed once and not
    /// used afterwards.
    pub(crate) unsafe fn destroy_event(self, event: CUevent) -> GpuResult<()> {
        // SAFETY: the symbol resolves; the caller owns `event`.
        unsafe { sys::cuEventDestroy_v2(event) }
            .result()
            .call("cuEventDestroy_v2")
    }

    /// Records `event` on `stream`.
    ///
    /// # Safety
    /// `event` and `stream` are live objects of the current context.
    pub(crate) unsafe fn record_event(self, event: CUevent, stream: CUstream) -> GpuResult<()> {
        // SAFETY: the symbol resolves; both handles are live (the caller's contract).
        unsafe { sys::cuEventRecord(event, stream) }
            .result()
            .call("cuEventRecord")
    }

    /// Waits until the work before the event's last record is done.
    ///
    /// # Safety
    /// `event` is live.
    pub(crate) unsafe fn synchronize_event(self, event: CUevent) -> GpuResult<()> {
        // SAFETY: the symbol resolves; `event` is live.
        unsafe { sys::cuEventSynchronize(event) }
            .result()
            .call("cuEventSynchronize")
    }

    /// Milliseconds between two completed events.
    ///
    /// # Safety
    /// Both events are live.
    pub(crate) unsafe fn elapsed_ms(self, start: CUevent, end: CUevent) -> GpuResult<f32> {
        let mut ms = 0f32;
        // SAFETY: the symbol resolves; both events are live; `ms` is a valid out-pointer.
        unsafe { sys::cuEventElapsedTime_v2(&mut ms, start, end) }
            .result()
            .call("cuEventElapsedTime_v2")?;
        Ok(ms)
    }
}

/// The probe itself: the library, then each symbol.
fn probe_uncached() -> GpuResult<()> {
    // SAFETY: tries `dlopen` on each candidate name; loading libcuda runs only its own
    // initializers.
    if !unsafe { sys::is_culib_present() } {
        return Err(GpuError::LibraryNotFound {
            searched: library_candidates(),
        });
    }
    // SAFETY: as above; a candidate loaded just now, so `culib` finds one (a panic
    // regardless is caught by the caller's guard).
    let lib = unsafe { sys::culib() };
    for &symbol in SYMBOLS {
        // SAFETY: only looks the symbol up; the pointer is not called here (cudarc
        // resolves it again, with its real type, on the first call).
        let found = unsafe { lib.get::<unsafe extern "C" fn()>(symbol.as_bytes()) };
        if found.is_err() {
            return Err(GpuError::MissingSymbol {
                symbol: symbol.to_owned(),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_driver_call_is_probed() {
        let source = include_str!("driver.rs");
        let mut called = Vec::new();
        for (i, _) in source.match_indices("sys::cu") {
            let name: String = source[i + 5..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            // `sys::cuInit(…)`, not `sys::culib` or this test's own pattern.
            if name.chars().nth(2).is_some_and(|c| c.is_ascii_uppercase()) {
                called.push(name);
            }
        }
        assert!(called.len() > 20, "{called:?}");
        for name in &called {
            assert!(
                SYMBOLS.contains(&name.as_str()),
                "{name} is called but not probed"
            );
        }
        for name in SYMBOLS {
            assert!(
                called.iter().any(|c| c == name),
                "{name} is probed but not called"
            );
        }
    }

    #[test]
    fn the_candidates_start_with_libcuda_so() {
        let names = library_candidates();
        assert_eq!(names.first().map(String::as_str), Some("libcuda.so"));
        assert!(names.iter().any(|n| n == "libcuda.so.1"), "{names:?}");
    }
}
