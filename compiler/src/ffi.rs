//! The C++ shim (`shim/shim.cpp`, built by build.rs): what MLIR's and LLVM's C APIs lack.

use llvm_sys::prelude::LLVMModuleRef;
use mlir_sys::{MlirOpPassManager, MlirPass, MlirStringRef};
use std::ffi::c_void;

/// Creates a new pass instance owned by the caller.
pub(crate) type PassFactory = unsafe extern "C" fn(user: *mut c_void) -> MlirPass;
/// Reports one error line of a pipeline builder.
pub(crate) type ReportFn = unsafe extern "C" fn(report_ctx: *mut c_void, message: MlirStringRef);
/// Adds a pipeline's passes; false after reporting an error.
pub(crate) type PipelineBuilderFn = unsafe extern "C" fn(
    user: *mut c_void,
    pm: MlirOpPassManager,
    options: MlirStringRef,
    report: ReportFn,
    report_ctx: *mut c_void,
) -> bool;

unsafe extern "C" {
    /// True when `name` is a pass or pipeline in MLIR's global registry.
    pub(crate) fn hip_ep_mlir_name_registered(name: MlirStringRef) -> bool;
    /// Registers the factory's pass under the argument its passes carry; `user` must live for
    /// the rest of the process. The name must be free (MLIR aborts otherwise).
    pub(crate) fn hip_ep_register_pass(user: *mut c_void, factory: PassFactory);
    /// Registers a pipeline; `user` must live for the rest of the process.
    pub(crate) fn hip_ep_register_pipeline(
        argument: MlirStringRef,
        description: MlirStringRef,
        user: *mut c_void,
        builder: PipelineBuilderFn,
    );
    /// Links `src` into `dst`, consuming `src`; false on failure.
    pub(crate) fn hip_ep_link_modules(
        dst: LLVMModuleRef,
        src: LLVMModuleRef,
        override_from_src: bool,
    ) -> bool;
}

/// A borrowed `MlirStringRef` over a Rust string (valid while `s` is).
pub(crate) fn string_ref(s: &str) -> MlirStringRef {
    MlirStringRef {
        data: s.as_ptr().cast(),
        length: s.len(),
    }
}

/// Copies an `MlirStringRef` into a `String` (lossy on invalid UTF-8).
///
/// # Safety
/// `s` must point at `s.length` readable bytes (or have length 0).
pub(crate) unsafe fn to_string(s: MlirStringRef) -> String {
    if s.length == 0 || s.data.is_null() {
        return String::new();
    }
    // SAFETY: the caller guarantees `data` points at `length` bytes.
    let bytes = unsafe { std::slice::from_raw_parts(s.data.cast::<u8>(), s.length) };
    String::from_utf8_lossy(bytes).into_owned()
}

/// True when `name` is already a pass or pipeline in MLIR's registry.
pub(crate) fn mlir_name_registered(name: &str) -> bool {
    // SAFETY: the string ref is valid for the call; the shim only reads it.
    unsafe { hip_ep_mlir_name_registered(string_ref(name)) }
}
