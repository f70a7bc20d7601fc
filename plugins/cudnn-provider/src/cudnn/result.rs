//! One wrapper per cuDNN call: the status code becomes a [`CudnnError`] naming the call.

use std::ffi::{CStr, c_void};

use super::sys::{
    self, cudnnBackendAttributeName_t as Attr, cudnnBackendAttributeType_t as AttrType,
    cudnnBackendDescriptorType_t as DescKind, cudnnStatus_t,
};

/// A cuDNN call that failed: the call, the status and cuDNN's text for it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{call} failed with {status:?} ({text}){context}")]
pub struct CudnnError {
    /// The C function (and, for attributes, which attribute).
    pub call: String,
    /// The status it returned.
    pub status: cudnnStatus_t,
    /// `cudnnGetErrorString`'s text.
    pub text: String,
    /// What we were doing, when known (`": while ..."`).
    pub context: String,
}

impl CudnnError {
    /// Adds what we were doing to the message.
    pub fn context(mut self, what: impl std::fmt::Display) -> Self {
        self.context = format!(": {what}");
        self
    }

    /// Whether cuDNN said the configuration is not supported (as opposed to an error).
    pub fn is_not_supported(&self) -> bool {
        let code = self.status as u32;
        // CUDNN_STATUS_NOT_SUPPORTED (3000) and its sub-codes (3001–3099), and
        // BAD_PARAM sub-codes cuDNN uses for unsupported graphs.
        (3000..3100).contains(&code)
    }
}

/// `Ok` for success, else the error for `call`.
#[inline]
pub fn check(status: cudnnStatus_t, call: impl FnOnce() -> String) -> Result<(), CudnnError> {
    if status == cudnnStatus_t::CUDNN_STATUS_SUCCESS {
        return Ok(());
    }
    Err(error(status, call()))
}

#[cold]
#[inline(never)]
fn error(status: cudnnStatus_t, call: String) -> CudnnError {
    // SAFETY: cudnnGetErrorString takes any status and returns a static string (or
    // null); the probe checked the symbol.
    let text = unsafe { sys::cudnnGetErrorString(status) };
    let text = if text.is_null() {
        String::new()
    } else {
        // SAFETY: non-null, NUL-terminated and static per cuDNN's documentation.
        unsafe { CStr::from_ptr(text) }
            .to_string_lossy()
            .into_owned()
    };
    CudnnError {
        call,
        status,
        text,
        context: String::new(),
    }
}

/// `cudnnGetVersion`: e.g. 91400 for 9.14.0.
pub fn version() -> usize {
    // SAFETY: no arguments; the probe checked the symbol.
    unsafe { sys::cudnnGetVersion() }
}

/// `cudnnCreate`.
pub fn create_handle() -> Result<sys::cudnnHandle_t, CudnnError> {
    let mut handle = std::ptr::null_mut();
    // SAFETY: `handle` is a valid out-pointer.
    check(unsafe { sys::cudnnCreate(&mut handle) }, || {
        "cudnnCreate".into()
    })?;
    Ok(handle)
}

/// `cudnnDestroy`.
///
/// # Safety
/// `handle` came from [`create_handle`] and is not used afterwards.
pub unsafe fn destroy_handle(handle: sys::cudnnHandle_t) -> Result<(), CudnnError> {
    // SAFETY: per the contract.
    check(unsafe { sys::cudnnDestroy(handle) }, || {
        "cudnnDestroy".into()
    })
}

/// `cudnnSetStream`.
///
/// # Safety
/// `handle` is live; `stream` is a CUDA stream of the handle's device (or null).
pub unsafe fn set_stream(
    handle: sys::cudnnHandle_t,
    stream: sys::cudaStream_t,
) -> Result<(), CudnnError> {
    // SAFETY: per the contract.
    check(unsafe { sys::cudnnSetStream(handle, stream) }, || {
        "cudnnSetStream".into()
    })
}

/// `cudnnBackendCreateDescriptor`.
pub fn create_descriptor(kind: DescKind) -> Result<sys::cudnnBackendDescriptor_t, CudnnError> {
    let mut desc = std::ptr::null_mut();
    // SAFETY: `desc` is a valid out-pointer.
    let status = unsafe { sys::cudnnBackendCreateDescriptor(kind, &mut desc) };
    check(status, || format!("cudnnBackendCreateDescriptor({kind:?})"))?;
    Ok(desc)
}

/// `cudnnBackendDestroyDescriptor`.
///
/// # Safety
/// `desc` came from [`create_descriptor`] and is not used afterwards.
pub unsafe fn destroy_descriptor(desc: sys::cudnnBackendDescriptor_t) {
    // SAFETY: per the contract. A failure here leaks at worst; nothing to report to.
    let _ = unsafe { sys::cudnnBackendDestroyDescriptor(desc) };
}

/// `cudnnBackendSetAttribute` with `count` elements of `kind` at `values`.
///
/// # Safety
/// `desc` is live and unfinalized; `values` points to `count` elements of the C type
/// `kind` names.
pub unsafe fn set_attribute(
    desc: sys::cudnnBackendDescriptor_t,
    name: Attr,
    kind: AttrType,
    count: i64,
    values: *const c_void,
) -> Result<(), CudnnError> {
    // SAFETY: per the contract.
    check(
        unsafe { sys::cudnnBackendSetAttribute(desc, name, kind, count, values) },
        || format!("cudnnBackendSetAttribute({name:?})"),
    )
}

/// `cudnnBackendGetAttribute`: up to `capacity` elements into `values`; returns how
/// many cuDNN has.
///
/// # Safety
/// `desc` is live (finalized where cuDNN requires); `values` has room for `capacity`
/// elements of the C type `kind` names (or is null with `capacity` 0).
pub unsafe fn get_attribute(
    desc: sys::cudnnBackendDescriptor_t,
    name: Attr,
    kind: AttrType,
    capacity: i64,
    values: *mut c_void,
) -> Result<i64, CudnnError> {
    let mut count = 0i64;
    // SAFETY: per the contract; `count` is a valid out-pointer.
    let status =
        unsafe { sys::cudnnBackendGetAttribute(desc, name, kind, capacity, &mut count, values) };
    check(status, || format!("cudnnBackendGetAttribute({name:?})"))?;
    Ok(count)
}

/// `cudnnBackendFinalize`.
///
/// # Safety
/// `desc` is live.
pub unsafe fn finalize(desc: sys::cudnnBackendDescriptor_t) -> Result<(), CudnnError> {
    // SAFETY: per the contract.
    check(unsafe { sys::cudnnBackendFinalize(desc) }, || {
        "cudnnBackendFinalize".into()
    })
}

/// `cudnnBackendExecute`.
///
/// # Safety
/// All three are live and finalized; the variant pack's pointers address device memory
/// of the sizes the plan's tensors need, alive until the work on the handle's stream
/// completes.
pub unsafe fn execute(
    handle: sys::cudnnHandle_t,
    plan: sys::cudnnBackendDescriptor_t,
    variant_pack: sys::cudnnBackendDescriptor_t,
) -> Result<(), CudnnError> {
    // SAFETY: per the contract.
    check(
        unsafe { sys::cudnnBackendExecute(handle, plan, variant_pack) },
        || "cudnnBackendExecute".into(),
    )
}

/// Every cuDNN function this layer calls: the probe resolves each before first use.
pub const SYMBOLS: &[&str] = &[
    "cudnnGetVersion",
    "cudnnGetErrorString",
    "cudnnCreate",
    "cudnnDestroy",
    "cudnnSetStream",
    "cudnnBackendCreateDescriptor",
    "cudnnBackendDestroyDescriptor",
    "cudnnBackendSetAttribute",
    "cudnnBackendGetAttribute",
    "cudnnBackendFinalize",
    "cudnnBackendExecute",
];
