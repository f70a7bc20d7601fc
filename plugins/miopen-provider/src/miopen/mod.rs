//! Our thin layer over HIP and MIOpen, in one place:
//!
//! * [`sys`]: the C declarations, as tables of function pointers;
//! * [`load`]: finding and opening the libraries (search order, overrides), checking
//!   the machine, resolving every symbol up front;
//! * [`result`]: status codes as errors that name the call;
//! * [`safe`]: RAII descriptors and the typed calls the plans make.

pub mod load;
pub mod result;
pub mod safe;
pub use hipdnn_rocm_sys as sys;

pub use load::Runtime;
pub use result::{HipError, MiopenError};
