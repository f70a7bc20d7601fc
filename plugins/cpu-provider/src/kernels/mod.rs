//! The CPU kernels: `f32` compute over `f32`/`f16`/`bf16` storage with arbitrary
//! strides, multi-threaded on the engine's own thread pools ([`Exec`]).
//!
//! Every kernel that produces values hands them to an [`Epilogue`]: a store, optionally
//! preceded by a chain of pointwise steps. That is how fused graphs run without
//! materialising their virtual intermediates.

pub mod conv;
pub mod elementwise;
pub mod exec;
pub mod gemm;
pub mod kept;
pub mod pointwise;

pub use conv::{ConvAlgo, ConvGeometry, ConvMode, ConvParams, FpropImpl, FpropPlan};
pub use elementwise::{Epilogue, Operand, Step, elementwise};
pub use exec::Exec;
pub use pointwise::{PwOp, PwParams};
pub mod conv_bwd;
pub mod matmul;
pub mod norm;
pub mod pool;
pub(crate) mod skinny;

/// `1` or `0` from the environment variable `var`, else `default()` (with a warning
/// for any other non-empty value).
pub(crate) fn env_switch(var: &str, default: impl FnOnce() -> bool) -> bool {
    let value = std::env::var(var).unwrap_or_default();
    match value.trim() {
        "1" => true,
        "0" => false,
        other => {
            if !other.is_empty() {
                tracing::warn!("{var}={value:?} is not 0 or 1: ignored");
            }
            default()
        }
    }
}
