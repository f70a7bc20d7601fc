//! [`GpuAllocator`]: the [`DeviceAllocator`] of a real GPU, over `hipdnn-gpu` (the CUDA
//! driver, loaded at run time), opened on first use.
//!
//! [`PluginSuite`](crate::PluginSuite) gives one to device engines unless told
//! otherwise, so on a machine with a GPU a device engine's cases run on device memory,
//! and on one without, they fail with [`Gpu::open`]'s reason (`libcuda.so.1 not found`,
//! `no CUDA device`, …). A host plugin never touches the driver: nothing is opened
//! until a device engine's case asks.

use std::collections::HashMap;
use std::ffi::c_void;
use std::ptr::NonNull;
use std::sync::{Arc, Mutex, OnceLock};

use hipdnn_gpu::{DeviceBuffer as GpuBuffer, Gpu};

use crate::memory::{DeviceAllocator, MIN_ALIGNMENT};

/// Device memory of CUDA device `ordinal` (through its primary context, the one a cuDNN
/// plugin uses), opened on the first call that needs it.
///
/// Buffers are `hipdnn_gpu` [`DeviceBuffer`](GpuBuffer)s kept by address until freed;
/// copies are blocking; [`synchronize`](DeviceAllocator::synchronize) waits for the
/// whole context (the runner executes on the handle's default stream).
#[derive(Debug)]
pub struct GpuAllocator {
    ordinal: usize,
    label: String,
    gpu: OnceLock<Result<Opened, String>>,
    live: Mutex<HashMap<usize, Arc<Mutex<GpuBuffer>>>>,
}

#[derive(Debug)]
struct Opened {
    gpu: Gpu,
    name: String,
}

impl GpuAllocator {
    /// Device `ordinal`, opened when first needed.
    pub fn new(ordinal: usize) -> Self {
        Self {
            ordinal,
            label: format!("CUDA device {ordinal}"),
            gpu: OnceLock::new(),
            live: Mutex::new(HashMap::new()),
        }
    }

    /// The GPU, opening it on the first call.
    ///
    /// # Errors
    /// [`Gpu::open`]'s reason, the same on every call.
    pub fn gpu(&self) -> Result<&Gpu, String> {
        self.opened().map(|o| &o.gpu)
    }

    fn opened(&self) -> Result<&Opened, String> {
        self.gpu
            .get_or_init(|| {
                Gpu::open(self.ordinal)
                    .map(|gpu| Opened {
                        name: gpu.to_string(),
                        gpu,
                    })
                    .map_err(|e| e.to_string())
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// The live buffer at `ptr`.
    fn buffer(&self, ptr: NonNull<c_void>) -> Result<Arc<Mutex<GpuBuffer>>, String> {
        let live = self.live.lock().unwrap_or_else(|e| e.into_inner());
        live.get(&(ptr.as_ptr() as usize))
            .cloned()
            .ok_or_else(|| format!("{ptr:p} is not an allocation of {}", self.name()))
    }
}

impl Default for GpuAllocator {
    /// Device 0.
    fn default() -> Self {
        Self::new(0)
    }
}

impl DeviceAllocator for GpuAllocator {
    fn name(&self) -> &str {
        match self.gpu.get() {
            Some(Ok(opened)) => &opened.name,
            _ => &self.label,
        }
    }

    fn available(&self) -> Result<(), String> {
        self.opened().map(|_| ())
    }

    fn allocate(&self, len: usize) -> Result<NonNull<c_void>, String> {
        let buffer = self.gpu()?.alloc(len).map_err(|e| e.to_string())?;
        let ptr = NonNull::new(buffer.as_ptr()).ok_or("the driver returned a null pointer")?;
        if !(ptr.as_ptr() as usize).is_multiple_of(MIN_ALIGNMENT) {
            return Err(format!("{ptr:p} is not aligned to {MIN_ALIGNMENT} bytes"));
        }
        self.live
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(ptr.as_ptr() as usize, Arc::new(Mutex::new(buffer)));
        Ok(ptr)
    }

    unsafe fn free(&self, ptr: NonNull<c_void>) {
        // Dropping the last reference frees the memory (`cuMemFree`).
        self.live
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&(ptr.as_ptr() as usize));
    }

    unsafe fn copy_to_device(&self, dst: NonNull<c_void>, src: &[u8]) -> Result<(), String> {
        let buffer = self.buffer(dst)?;
        let mut buffer = buffer.lock().unwrap_or_else(|e| e.into_inner());
        buffer.copy_from_host(src).map_err(|e| e.to_string())
    }

    unsafe fn copy_to_host(&self, dst: &mut [u8], src: NonNull<c_void>) -> Result<(), String> {
        let buffer = self.buffer(src)?;
        let buffer = buffer.lock().unwrap_or_else(|e| e.into_inner());
        buffer.copy_to_host(dst).map_err(|e| e.to_string())
    }

    fn synchronize(&self) -> Result<(), String> {
        self.gpu()?.synchronize().map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_gpu_every_call_gives_the_open_reason() {
        let allocator = GpuAllocator::new(0);
        assert_eq!(allocator.name(), "CUDA device 0");
        let Err(reason) = allocator.available() else {
            // A machine with a GPU: the allocator works (the round trip is below).
            let ptr = allocator.allocate(8).unwrap();
            // SAFETY: `ptr` holds 8 bytes of this allocator.
            unsafe {
                allocator.copy_to_device(ptr, &[3; 8]).unwrap();
                let mut back = [0; 8];
                allocator.copy_to_host(&mut back, ptr).unwrap();
                assert_eq!(back, [3; 8]);
                allocator.synchronize().unwrap();
                allocator.free(ptr);
            }
            assert!(allocator.name().starts_with("CUDA device 0 ("));
            return;
        };
        assert!(
            reason.contains("libcuda") || reason.contains("CUDA device"),
            "{reason}"
        );
        assert_eq!(allocator.allocate(8).unwrap_err(), reason);
        assert_eq!(allocator.synchronize().unwrap_err(), reason);
        assert_eq!(allocator.name(), "CUDA device 0");
    }
}
