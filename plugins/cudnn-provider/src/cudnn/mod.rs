//! Our thin layer over cuDNN's graph (backend) API, in three layers:
//!
//! * `sys`: cudarc's raw bindings, loaded at run time (every symbol resolved on first
//!   use; [`crate::probe`] checks them all before anything calls them, because a
//!   missing symbol panics inside cudarc);
//! * [`result`]: one function per C call we make, returning [`CudnnError`] with the
//!   call's name instead of a status code;
//! * [`safe`]: RAII descriptors and the typed builders the plan uses (tensors,
//!   operations, operation graphs, heuristics, engine configs, execution plans,
//!   variant packs).

pub use cudarc::cudnn::sys;

pub mod result;
pub mod safe;

pub use result::CudnnError;
