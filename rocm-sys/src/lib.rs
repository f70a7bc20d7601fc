//! The HIP runtime and MIOpen C functions hipDNN calls, declared as tables of function
//! pointers resolved from libraries loaded at run time, so nothing here needs ROCm to
//! build and a machine without it gets a reason instead of a loader error.
//!
//! * The declarations ([`HipApi`], [`MiopenApi`], their types and enumerations) follow
//!   HIP's `hip_runtime_api.h` and MIOpen's `miopen/miopen.h`.
//! * [`hip`] finds and opens the HIP runtime (search order, the `HIPDNN_HIP_LIBRARY`
//!   override); the MIOpen provider finds MIOpen the same way.
//!
//! Users: the MIOpen engine plugin, its tests' device memory, and `hipdnn run` on HIP
//! devices.

mod sys;

pub mod hip;

pub use sys::*;
