//! A software MIOpen and HIP runtime, for testing only.
//!
//! This library implements, on host memory, exactly the HIP runtime and MIOpen C
//! functions the MIOpen provider calls (the tables `HipApi` and `MiopenApi` of
//! `hipdnn-rocm-sys`, the declarations both sides share; every export is checked
//! against its declared signature at compile time). With it, the provider's whole translation
//! (descriptors, solution choice, workspaces, fusion plans) runs through the
//! conformance suite on machines without an AMD GPU, CI included.
//!
//! It is a stand-in for tests: it is never installed, and it is neither a performance
//! model nor a numerical model of a GPU. Results come from the CPU reference kernels
//! of `hipdnn-reference` (accumulation in `f64`, outputs rounded to the tensor's
//! type); solution timings are fixed numbers chosen to exercise the caller's choices.
//!
//! # What it checks
//!
//! It fails loudly: anything it does not implement, or that MIOpen would reject,
//! returns a non-success status, prints `soft MIOpen: <function>: <reason>` to
//! stderr, and is recorded in the call log. That covers unknown enum values, null
//! pointers where data is needed, handles and descriptors not created here or already
//! destroyed, data pointers outside a live `hipMalloc` allocation large enough for the
//! descriptor's extent (largest offset + 1 elements), type and shape mismatches (the
//! message names the tensor), workspaces smaller than a solution needs, and immediate
//! mode without a compile of the same problem and solution. A panic inside a call
//! becomes `miopenStatusInternalError` (`hipErrorUnknown` for HIP functions). Two
//! statuses are answers rather than misuse and are logged but not printed:
//! `miopenStatusUnsupportedOp` from a fusion compile and `hipErrorNoDevice`.
//!
//! # Functions
//!
//! * HIP ([`hip`]): `hipGetDeviceCount`, `hipRuntimeGetVersion` (60443483, HIP 6.4),
//!   `hipGetErrorString`, `hipMalloc` (256-byte aligned host memory filled with
//!   `0xCD`), `hipFree`, `hipMemcpy` (kinds checked against the allocations),
//!   `hipDeviceSynchronize`, `hipStreamSynchronize` (everything is synchronous).
//! * MIOpen ([`descriptors`]): version, error strings, handles, tensor descriptors
//!   (half, float, bfloat16; rank 1 to 5; any strides ≥ 1), convolution descriptors
//!   (2 or 3 spatial dims, cross-correlation, groups, deterministic and fp16-alt
//!   attributes), activation descriptors.
//! * Convolutions ([`conv`]): immediate mode (count, solutions, compile, run) and
//!   Find, forward, backward data, backward weights, over a small documented
//!   catalogue of solutions.
//! * [`pointwise`]: `miopenActivationForward` (all eleven modes) and `miopenOpTensor`
//!   (add, mul, min, max; B broadcasts), float and half (as MIOpen's kernels).
//! * [`batchnorm`]: spatial batch norm inference, training, backward, and their
//!   activation-fused variants.
//! * [`fusion`]: vertical fusion plans of convolution, bias and activation.
//!
//! # Environment
//!
//! * `HIPDNN_SOFT_HIP_DEVICES`: the device count (default 1; 0 makes
//!   `hipGetDeviceCount` return `hipErrorNoDevice`, as on a machine without GPUs).
//! * `HIPDNN_SOFT_MIOPEN_VERSION`: the version `miopenGetVersion` reports
//!   (`major.minor.patch`, default 3.5.0).
//!
//! # Test hooks
//!
//! Not part of HIP or MIOpen: `hipdnnSoftMiopenTakeCallLog()` returns every call
//! recorded since the last take (one line per call, see [`log`] for the format) as a
//! NUL-terminated string to free with `hipdnnSoftMiopenFreeString`, and clears the
//! log. Rust code linking the rlib can use [`log::take_call_log`].
//!
//! # Use
//!
//! Build the library and point the provider at it, for both libraries:
//!
//! ```text
//! cargo build -p hipdnn-soft-miopen
//! HIPDNN_MIOPEN_LIBRARY=target/debug/libhipdnn_soft_miopen.so \
//! HIPDNN_HIP_LIBRARY=target/debug/libhipdnn_soft_miopen.so \
//!     hipdnn engines
//! ```
//!
//! # Safety
//!
//! Every export is an `unsafe extern "C" fn` whose contract is that of its declaration
//! in HIP's and MIOpen's headers: out-pointers are writable, scalar pointers point to
//! host floats, arrays hold the counts given. Device pointers are not trusted: they are
//! checked against the allocation registry before any access. Handles are never
//! dereferenced: they are looked up in a registry.

// The exports' contracts are the C headers' (see "Safety" above), not per-function
// docs; their signatures are MIOpen's, argument counts included.
#![allow(clippy::missing_safety_doc, clippy::too_many_arguments)]

/// The shared declarations (`hipdnn-rocm-sys`).
pub use hipdnn_rocm_sys as sys;

pub mod batchnorm;
pub mod conv;
pub mod descriptors;
pub mod fusion;
pub mod hip;
pub mod log;
mod memory;
mod objects;
pub mod pointwise;
mod state;

#[cfg(test)]
mod tests;
