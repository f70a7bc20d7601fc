//! Where a case's tensors live while an engine runs: aligned host storage for host
//! engines, memory from a [`DeviceAllocator`] for device engines.
//!
//! The suite hands every provider plain byte vectors ([`hipdnn_test_sdk::conformance`]);
//! this module is the one place that turns them into what an engine may be given: each
//! tensor copied once into storage aligned to at least [`MIN_ALIGNMENT`] bytes (and to
//! the tensor's own declared alignment), and copied back after the run.

use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::ffi::c_void;
use std::fmt;
use std::ptr::NonNull;

use hipdnn_data_sdk::MemoryKind;

/// The alignment every buffer has at least: what device allocators give (CUDA and HIP
/// allocations are 256-byte aligned) and more than any vector load needs.
pub const MIN_ALIGNMENT: usize = 256;

/// Host memory for one tensor, zero-initialized and aligned to [`MIN_ALIGNMENT`] bytes
/// or more.
pub struct HostBuffer {
    ptr: NonNull<u8>,
    len: usize,
    layout: Layout,
}

// SAFETY: the buffer owns its allocation exclusively (like a `Box<[u8]>`); nothing in it
// is tied to a thread.
unsafe impl Send for HostBuffer {}
// SAFETY: shared references only read the bytes.
unsafe impl Sync for HostBuffer {}

impl HostBuffer {
    /// `len` zero bytes aligned to `alignment` (raised to [`MIN_ALIGNMENT`], rounded up
    /// to a power of two).
    ///
    /// # Panics
    /// When the size overflows `isize` or the allocation fails (as `Vec` does).
    pub fn zeroed(len: usize, alignment: usize) -> Self {
        let align = alignment.max(MIN_ALIGNMENT).next_power_of_two();
        let layout = Layout::from_size_align(len.max(1), align).expect("a valid buffer layout");
        // SAFETY: `layout` has a non-zero size.
        let raw = unsafe { alloc_zeroed(layout) };
        let ptr = NonNull::new(raw).unwrap_or_else(|| std::alloc::handle_alloc_error(layout));
        Self { ptr, len, layout }
    }

    /// A copy of `bytes` aligned as [`HostBuffer::zeroed`] says.
    pub fn from_bytes(bytes: &[u8], alignment: usize) -> Self {
        let mut buffer = Self::zeroed(bytes.len(), alignment);
        buffer.as_bytes_mut().copy_from_slice(bytes);
        buffer
    }

    /// The bytes.
    pub fn as_bytes(&self) -> &[u8] {
        // SAFETY: the allocation holds at least `len` initialized bytes and lives as
        // long as `self`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// The bytes, writable.
    pub fn as_bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `as_bytes`, and `&mut self` makes the access exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }

    /// The pointer an engine is given.
    pub fn as_mut_ptr(&mut self) -> *mut c_void {
        self.ptr.as_ptr().cast()
    }

    /// Its length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds no byte.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Drop for HostBuffer {
    fn drop(&mut self) {
        // SAFETY: allocated in `zeroed` with this layout, freed once.
        unsafe { dealloc(self.ptr.as_ptr(), self.layout) };
    }
}

impl fmt::Debug for HostBuffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HostBuffer")
            .field("ptr", &self.ptr)
            .field("len", &self.len)
            .field("align", &self.layout.align())
            .finish()
    }
}

/// Device memory for engines that take device pointers: [`GpuAllocator`](crate::gpu::GpuAllocator)
/// for a CUDA GPU, or a stand-in in tests.
///
/// For each case of a device engine the runner asks [`available`](Self::available),
/// allocates every tensor and the workspace, copies the inputs (and the
/// `0xFF`-filled outputs) to the device, runs the plan on the handle's default stream,
/// calls [`synchronize`](Self::synchronize) (kernels run asynchronously: the outputs
/// are only there once it returns), copies everything back and frees it. Failures are
/// reported in the allocator's own words and fail the case.
pub trait DeviceAllocator: Send + Sync {
    /// What the memory is, for messages (e.g. `"CUDA device 0 (NVIDIA H200)"`).
    fn name(&self) -> &str;

    /// Whether the device can be used at all; the reason when not (e.g. `libcuda.so.1
    /// not found`), which fails the case before a plan is built. Available unless
    /// overridden.
    ///
    /// # Errors
    /// Why the device cannot be used.
    fn available(&self) -> Result<(), String> {
        Ok(())
    }

    /// Allocates `len` bytes (at least one) aligned to [`MIN_ALIGNMENT`] bytes.
    ///
    /// # Errors
    /// When the device cannot give the memory.
    fn allocate(&self, len: usize) -> Result<NonNull<c_void>, String>;

    /// Frees memory from [`allocate`](Self::allocate).
    ///
    /// # Safety
    /// `ptr` came from `allocate` of this allocator and is not used afterwards.
    unsafe fn free(&self, ptr: NonNull<c_void>);

    /// Copies `src` to device memory at `dst`, complete when it returns.
    ///
    /// # Safety
    /// `dst` is memory of this allocator valid for `src.len()` bytes.
    ///
    /// # Errors
    /// When the copy fails.
    unsafe fn copy_to_device(&self, dst: NonNull<c_void>, src: &[u8]) -> Result<(), String>;

    /// Copies device memory at `src` into `dst`, complete when it returns.
    ///
    /// # Safety
    /// `src` is memory of this allocator valid for `dst.len()` bytes.
    ///
    /// # Errors
    /// When the copy fails.
    unsafe fn copy_to_host(&self, dst: &mut [u8], src: NonNull<c_void>) -> Result<(), String>;

    /// Waits until the work enqueued on the device (the plan's execution, on the
    /// handle's stream) is done; the runner calls it after `Plan::execute` and before
    /// copying the outputs back.
    ///
    /// # Errors
    /// When the device reports an error (e.g. a faulting kernel).
    fn synchronize(&self) -> Result<(), String>;
}

/// Device memory from a [`DeviceAllocator`], freed on drop.
pub struct DeviceBuffer<'a> {
    allocator: &'a dyn DeviceAllocator,
    ptr: NonNull<c_void>,
    len: usize,
}

impl<'a> DeviceBuffer<'a> {
    /// Allocates `len` bytes.
    ///
    /// # Errors
    /// The allocator's.
    pub fn allocate(allocator: &'a dyn DeviceAllocator, len: usize) -> Result<Self, String> {
        let ptr = allocator
            .allocate(len.max(1))
            .map_err(|e| format!("{}: cannot allocate {len} bytes: {e}", allocator.name()))?;
        Ok(Self {
            allocator,
            ptr,
            len,
        })
    }
}

impl Drop for DeviceBuffer<'_> {
    fn drop(&mut self) {
        // SAFETY: allocated by this allocator in `allocate`, freed once.
        unsafe { self.allocator.free(self.ptr) };
    }
}

impl fmt::Debug for DeviceBuffer<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeviceBuffer")
            .field("allocator", &self.allocator.name())
            .field("ptr", &self.ptr)
            .field("len", &self.len)
            .finish()
    }
}

/// One tensor's (or the workspace's) memory of the kind an engine takes.
#[derive(Debug)]
pub enum Memory<'a> {
    /// For host engines.
    Host(HostBuffer),
    /// For device engines.
    Device(DeviceBuffer<'a>),
}

impl<'a> Memory<'a> {
    /// `len` bytes of `kind`, holding a copy of `bytes` when given (which then has
    /// `len` bytes), aligned to `alignment` (raised to [`MIN_ALIGNMENT`]) on the host.
    ///
    /// # Errors
    /// Device memory without an allocator; the allocator's failures.
    pub fn with_contents(
        kind: MemoryKind,
        device: Option<&'a dyn DeviceAllocator>,
        len: usize,
        alignment: usize,
        bytes: Option<&[u8]>,
    ) -> Result<Self, String> {
        match kind {
            MemoryKind::Host => Ok(Memory::Host(match bytes {
                Some(bytes) => HostBuffer::from_bytes(bytes, alignment),
                None => HostBuffer::zeroed(len, alignment),
            })),
            MemoryKind::Device => {
                let allocator = device.ok_or_else(|| NO_DEVICE_ALLOCATOR.to_owned())?;
                let buffer = DeviceBuffer::allocate(allocator, len)?;
                if let Some(bytes) = bytes {
                    // SAFETY: `buffer` is this allocator's memory of `len` bytes.
                    unsafe { allocator.copy_to_device(buffer.ptr, bytes) }.map_err(|e| {
                        format!("{}: copy to the device failed: {e}", allocator.name())
                    })?;
                }
                Ok(Memory::Device(buffer))
            }
        }
    }

    /// The pointer an engine is given.
    pub fn as_mut_ptr(&mut self) -> *mut c_void {
        match self {
            Memory::Host(buffer) => buffer.as_mut_ptr(),
            Memory::Device(buffer) => buffer.ptr.as_ptr(),
        }
    }

    /// Copies the contents into `out` (of the memory's length).
    ///
    /// # Errors
    /// The allocator's failures.
    pub fn read_into(&self, out: &mut [u8]) -> Result<(), String> {
        match self {
            Memory::Host(buffer) => {
                out.copy_from_slice(buffer.as_bytes());
                Ok(())
            }
            Memory::Device(buffer) => {
                assert_eq!(out.len(), buffer.len, "read with the buffer's length");
                // SAFETY: `buffer` is this allocator's memory of `out.len()` bytes.
                unsafe { buffer.allocator.copy_to_host(out, buffer.ptr) }.map_err(|e| {
                    format!(
                        "{}: copy from the device failed: {e}",
                        buffer.allocator.name()
                    )
                })
            }
        }
    }
}

/// What a device engine's case fails with when the runner was given no allocator.
pub const NO_DEVICE_ALLOCATOR: &str = "no device allocator is available: this run was given none \
     (PluginSuite::without_device_allocator, or an EngineProvider made without one), so it \
     cannot give device memory to an engine that takes device pointers";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_buffers_are_aligned_copies() {
        for (len, align) in [(0, 1), (3, 2), (1000, 16), (64, 4096)] {
            let bytes: Vec<u8> = (0..len).map(|i| i as u8).collect();
            let mut b = HostBuffer::from_bytes(&bytes, align);
            assert_eq!(b.as_bytes(), &bytes[..]);
            assert_eq!(b.len(), len);
            let p = b.as_mut_ptr() as usize;
            assert_eq!(p % align.max(MIN_ALIGNMENT), 0, "len {len} align {align}");
        }
    }

    #[test]
    fn device_memory_without_an_allocator_is_refused() {
        let error =
            Memory::with_contents(MemoryKind::Device, None, 4, 4, Some(&[0; 4])).unwrap_err();
        assert!(error.contains("no device allocator"), "{error}");
        let host = Memory::with_contents(MemoryKind::Host, None, 4, 4, Some(&[7; 4])).unwrap();
        let mut out = [0; 4];
        host.read_into(&mut out).unwrap();
        assert_eq!(out, [7; 4]);
    }
}
