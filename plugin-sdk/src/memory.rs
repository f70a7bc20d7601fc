//! What a plan's `execute` receives: the tensors' buffers, the workspace and the
//! stream, as views typed by the memory the engine declared.
//!
//! Every engine declares where its buffers live ([`MemoryKind`], with
//! [`Engine::with_memory_kind`](crate::Engine::with_memory_kind); device memory unless
//! it says otherwise). The host learns it from the engine's details (a host engine's
//! behavior notes carry [`HOST_MEMORY_BEHAVIOR_NOTE_EXT`](hipdnn_data_sdk::HOST_MEMORY_BEHAVIOR_NOTE_EXT))
//! and passes pointers of that kind. The views here keep the two apart:
//!
//! * a **device engine** reads [`DevicePtr`]s ([`Buffers::device`],
//!   [`WorkspaceView::device`]): addresses to hand to its vendor library, never
//!   dereferenced on the host, and enqueues its work on [`Execution::stream`];
//! * a **host engine** may also borrow its buffers as slices ([`Buffers::host`],
//!   [`Buffers::host_mut`], [`WorkspaceView::host_mut`]); a device engine asking for a
//!   host slice gets an `INTERNAL_ERROR` naming the tensor instead of undefined
//!   behaviour.

use std::ffi::c_void;

use hipdnn_data_sdk::MemoryKind;

use crate::abi::{hipStream_t, hipdnnPluginDeviceBuffer_t};
use crate::error::{PluginError, PluginResult};

/// A device address: passed to vendor libraries, never dereferenced on the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(transparent)]
pub struct DevicePtr(*mut c_void);

impl DevicePtr {
    /// Wraps an address the host passed.
    pub fn new(ptr: *mut c_void) -> Self {
        Self(ptr)
    }

    /// The address as a pointer (e.g. for `void*` parameters of HIP or MIOpen).
    pub fn as_ptr(self) -> *mut c_void {
        self.0
    }

    /// The address as an integer (e.g. CUDA's `CUdeviceptr`).
    pub fn addr(self) -> u64 {
        self.0 as usize as u64
    }

    /// Whether the address is null.
    pub fn is_null(self) -> bool {
        self.0.is_null()
    }
}

// SAFETY: an address is plain data; `DevicePtr` offers no access to the memory.
unsafe impl Send for DevicePtr {}
// SAFETY: as above.
unsafe impl Sync for DevicePtr {}

/// The tensors' buffers for one execution, looked up by uid.
#[derive(Debug, Clone, Copy)]
pub struct Buffers<'a> {
    buffers: &'a [hipdnnPluginDeviceBuffer_t],
    memory: MemoryKind,
}

impl<'a> Buffers<'a> {
    /// Wraps the host's array for an engine taking `memory`.
    pub fn new(buffers: &'a [hipdnnPluginDeviceBuffer_t], memory: MemoryKind) -> Self {
        Self { buffers, memory }
    }

    /// The memory the buffers are in.
    pub fn memory_kind(&self) -> MemoryKind {
        self.memory
    }

    /// The raw pointer for tensor `uid`, if the host passed one (null included).
    #[inline]
    pub fn get(&self, uid: i64) -> Option<*mut c_void> {
        self.buffers.iter().find(|b| b.uid == uid).map(|b| b.ptr)
    }

    /// The non-null pointer for tensor `uid`.
    ///
    /// # Errors
    /// `BAD_PARAM` naming the uid when the host passed no (or a null) pointer for it.
    #[inline]
    pub fn require(&self, uid: i64) -> PluginResult<*mut c_void> {
        match self.get(uid) {
            Some(ptr) if !ptr.is_null() => Ok(ptr),
            found => Err(missing_buffer(uid, found.is_some())),
        }
    }

    /// The address of tensor `uid` (device engines; a host engine's address is a host
    /// address).
    ///
    /// # Errors
    /// As [`Buffers::require`].
    #[inline]
    pub fn device(&self, uid: i64) -> PluginResult<DevicePtr> {
        self.require(uid).map(DevicePtr)
    }

    /// The pointer behind a host slice, checked: host memory, non-null, aligned for `T`.
    /// This runs for every tensor of every execution of a host engine, so the checks
    /// inline into the caller and cost a few instructions; which one failed is worked out
    /// out of line. (`len` needs no check: the caller vouches that `len` elements are
    /// there, and no object is larger than `isize::MAX` bytes.)
    #[inline(always)]
    fn host_ptr<T>(&self, uid: i64) -> PluginResult<*mut T> {
        let ptr = self.get(uid).unwrap_or(std::ptr::null_mut()).cast::<T>();
        // `&`, not `&&`: three cheap tests the compiler may order or fold as it likes.
        if (self.memory == MemoryKind::Host) & !ptr.is_null() & ptr.is_aligned() {
            Ok(ptr)
        } else {
            Err(self.host_slice_error(uid, align_of::<T>()))
        }
    }

    /// Why [`Buffers::host_ptr`] refused tensor `uid`, in the order the checks are
    /// documented.
    #[cold]
    #[inline(never)]
    fn host_slice_error(&self, uid: i64, align: usize) -> PluginError {
        if self.memory != MemoryKind::Host {
            return not_host_memory(&format!("tensor uid {uid}"), self.memory);
        }
        match self.get(uid) {
            None => missing_buffer(uid, false),
            Some(ptr) if ptr.is_null() => missing_buffer(uid, true),
            Some(ptr) => misaligned(uid, ptr, align),
        }
    }

    /// The buffer of tensor `uid` as `len` elements in host memory (host engines).
    ///
    /// # Safety
    /// The pointer passed for `uid` must address `len` initialised `T`s in host memory,
    /// not written by anyone else during the returned borrow.
    ///
    /// # Errors
    /// As [`Buffers::require`]; `BAD_PARAM` for a misaligned pointer;
    /// `INTERNAL_ERROR` when the engine declared device memory.
    #[inline]
    pub unsafe fn host<T>(&self, uid: i64, len: usize) -> PluginResult<&'a [T]> {
        let ptr = self.host_ptr::<T>(uid)?;
        // SAFETY: non-null and aligned (checked); `len` initialised `T`s of host memory
        // (so at most `isize::MAX` bytes) per this function's contract.
        Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
    }

    /// The buffer of tensor `uid` as `len` writable elements in host memory.
    ///
    /// # Safety
    /// As [`Buffers::host`], and no other borrow of the same memory may be alive (in
    /// particular, `uid` must not alias another tensor being read).
    ///
    /// # Errors
    /// As [`Buffers::host`].
    #[inline]
    pub unsafe fn host_mut<T>(&self, uid: i64, len: usize) -> PluginResult<&'a mut [T]> {
        let ptr = self.host_ptr::<T>(uid)?;
        // SAFETY: as in `host`, and unaliased per this function's contract.
        Ok(unsafe { std::slice::from_raw_parts_mut(ptr, len) })
    }

    /// All (uid, pointer) pairs, in the host's order.
    pub fn as_slice(&self) -> &'a [hipdnnPluginDeviceBuffer_t] {
        self.buffers
    }
}

#[cold]
#[inline(never)]
fn missing_buffer(uid: i64, null: bool) -> PluginError {
    if null {
        PluginError::bad_param(format!("buffer for tensor uid {uid} is null"))
    } else {
        PluginError::bad_param(format!("no buffer for tensor uid {uid}"))
    }
}

#[cold]
#[inline(never)]
fn not_host_memory(what: &str, memory: MemoryKind) -> PluginError {
    PluginError::internal(format!(
        "{what}: host slices are only for host-memory engines; this engine declared {memory} memory"
    ))
}

#[cold]
#[inline(never)]
fn misaligned(uid: i64, ptr: *const c_void, align: usize) -> PluginError {
    PluginError::bad_param(format!(
        "buffer for tensor uid {uid} at {ptr:p} is not aligned to {align} bytes"
    ))
}

/// Scratch memory for one execution: the size the plan asked for, in the engine's
/// memory (null when the size is 0).
#[derive(Debug, Clone, Copy)]
pub struct WorkspaceView {
    ptr: *mut c_void,
    size: usize,
    memory: MemoryKind,
}

impl WorkspaceView {
    /// Wraps `size` bytes at `ptr` in `memory`.
    pub fn new(ptr: *mut c_void, size: usize, memory: MemoryKind) -> Self {
        Self { ptr, size, memory }
    }

    /// Bytes available (the plan's workspace size).
    pub fn size(&self) -> usize {
        self.size
    }

    /// The address (null when the plan needs no workspace).
    pub fn device(&self) -> DevicePtr {
        DevicePtr(self.ptr)
    }

    /// The raw pointer.
    pub fn as_ptr(&self) -> *mut c_void {
        self.ptr
    }

    /// The workspace as host bytes (host engines; empty when the size is 0).
    ///
    /// # Safety
    /// The workspace must be host memory of at least [`WorkspaceView::size`] bytes that
    /// nothing else uses during the borrow (the host's contract for one execution).
    ///
    /// # Errors
    /// `INTERNAL_ERROR` when the engine declared device memory.
    pub unsafe fn host_mut<'a>(&self) -> PluginResult<&'a mut [u8]> {
        if self.memory != MemoryKind::Host {
            return Err(not_host_memory("workspace", self.memory));
        }
        if self.size == 0 {
            return Ok(&mut []);
        }
        if self.ptr.is_null() {
            return Err(PluginError::bad_param(format!(
                "workspace is null but the plan needs {} bytes",
                self.size
            )));
        }
        // SAFETY: non-null, `size` bytes of unshared host memory per the contract.
        Ok(unsafe { std::slice::from_raw_parts_mut(self.ptr.cast::<u8>(), self.size) })
    }
}

/// Everything one execution of a plan gets: buffers, workspace and the stream of the
/// plugin handle at the time of the call.
#[derive(Debug, Clone, Copy)]
pub struct Execution<'a> {
    buffers: Buffers<'a>,
    workspace: WorkspaceView,
    stream: hipStream_t,
}

impl<'a> Execution<'a> {
    /// Bundles one execution's arguments (the SDK makes these; tests and benchmarks
    /// may too).
    pub fn new(buffers: Buffers<'a>, workspace: WorkspaceView, stream: hipStream_t) -> Self {
        Self {
            buffers,
            workspace,
            stream,
        }
    }

    /// The tensors' buffers.
    pub fn buffers(&self) -> &Buffers<'a> {
        &self.buffers
    }

    /// The workspace.
    pub fn workspace(&self) -> &WorkspaceView {
        &self.workspace
    }

    /// The stream to enqueue work on (null: the default stream). Host engines ignore
    /// it.
    pub fn stream(&self) -> hipStream_t {
        self.stream
    }

    /// The memory of the buffers and workspace.
    pub fn memory_kind(&self) -> MemoryKind {
        self.buffers.memory
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_engines_get_addresses_not_slices() {
        let mut x = [1.0f32, 2.0];
        let raw = [hipdnnPluginDeviceBuffer_t {
            uid: 7,
            ptr: x.as_mut_ptr().cast(),
        }];
        let device = Buffers::new(&raw, MemoryKind::Device);
        assert_eq!(device.device(7).unwrap().as_ptr(), raw[0].ptr);
        // SAFETY: `x` is host memory of two floats, unshared during the borrow.
        let err = unsafe { device.host::<f32>(7, 2) }.unwrap_err();
        assert!(err.message.contains("tensor uid 7"), "{}", err.message);
        assert!(err.message.contains("device memory"), "{}", err.message);
        let host = Buffers::new(&raw, MemoryKind::Host);
        // SAFETY: as above.
        assert_eq!(unsafe { host.host::<f32>(7, 2) }.unwrap(), &[1.0, 2.0]);
        assert!(host.device(8).unwrap_err().message.contains("uid 8"));
    }

    #[test]
    fn host_slice_errors_say_which_check_failed() {
        let mut x = [0.0f32; 2];
        let raw = [
            hipdnnPluginDeviceBuffer_t {
                uid: 1,
                ptr: x.as_mut_ptr().cast(),
            },
            hipdnnPluginDeviceBuffer_t {
                uid: 2,
                ptr: std::ptr::null_mut(),
            },
        ];
        let host = Buffers::new(&raw, MemoryKind::Host);
        // SAFETY: each call below fails its checks before any access.
        let message = |uid| unsafe { host.host::<f32>(uid, 2) }.unwrap_err().message;
        assert_eq!(message(3), "no buffer for tensor uid 3");
        assert_eq!(message(2), "buffer for tensor uid 2 is null");
        // A device engine hears about the memory kind first, even for a missing buffer.
        let device = Buffers::new(&raw, MemoryKind::Device);
        // SAFETY: as above.
        let err = unsafe { device.host_mut::<f32>(3, 2) }.unwrap_err();
        assert!(err.message.contains("device memory"), "{}", err.message);
    }

    #[test]
    fn host_slices_check_alignment_and_the_workspace_kind() {
        let mut bytes = [0u8; 16];
        let misaligned = bytes.as_mut_ptr().wrapping_add(1).cast::<c_void>();
        let raw = [hipdnnPluginDeviceBuffer_t {
            uid: 1,
            ptr: misaligned,
        }];
        let host = Buffers::new(&raw, MemoryKind::Host);
        // SAFETY: the check fails before any access.
        let err = unsafe { host.host::<f32>(1, 2) }.unwrap_err();
        assert!(err.message.contains("not aligned"), "{}", err.message);
        let ws = WorkspaceView::new(bytes.as_mut_ptr().cast(), 16, MemoryKind::Device);
        // SAFETY: the check fails before any access.
        assert!(unsafe { ws.host_mut() }.is_err());
        let ws = WorkspaceView::new(bytes.as_mut_ptr().cast(), 16, MemoryKind::Host);
        // SAFETY: `bytes` is 16 unshared host bytes.
        assert_eq!(unsafe { ws.host_mut() }.unwrap().len(), 16);
    }
}
