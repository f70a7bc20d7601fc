//! Naive CPU reference kernels, written to be obviously correct rather than fast: one
//! file per family (convolution, batch norm, layer and RMS norm, matmul, pointwise,
//! reduction, resample), everything re-exported here.
//!
//! Every function reads its inputs and writes its outputs through
//! [`HostTensor`](crate::tensor::HostTensor)s by logical index, so strides are arbitrary
//! (NCHW, NHWC, padded rows...). Outputs are passed in by the caller, already shaped and
//! strided; the reference checks the shapes and fills them. Sums and products accumulate
//! in `f64` and are rounded to `f32` once.
//!
//! # Semantics (hipDNN's, from the schema attribute tables)
//!
//! * **Convolution** (`x: [N, C, spatial…]`, `w: [K, C/G, kernel…]`, `y: [N, K, out…]`,
//!   1 to 3 spatial dimensions). The group count `G = C / w.dims[1]` is inferred, and
//!   output channel `k` belongs to group `k / (K / G)`. Output extents are
//!   `(in + pre + post − dilation·(kernel − 1) − 1) / stride + 1`; padding is zeros
//!   before (`pre_padding`) and after (`post_padding`) each spatial dimension.
//!   `CROSS_CORRELATION` uses the filter as is (the deep-learning convention);
//!   `CONVOLUTION` flips it in every spatial dimension; `UNSET` is rejected.
//!   Dgrad and wgrad are the exact adjoints of fprop (they visit the same
//!   `(x, w, y)` index triples).
//! * **Batch norm** statistics are per channel (dimension 1) over every other
//!   dimension; per-channel tensors may have any shape with `C` elements (e.g.
//!   `[1, C, 1, 1]`). `inv_variance` always means `1 / sqrt(variance + epsilon)`.
//!   Training uses the biased batch variance to normalize and the unbiased one
//!   (`· M / (M − 1)`) to update the running variance:
//!   `next = (1 − momentum) · prev + momentum · batch` (hipDNN's CPU reference).
//! * **Matmul**: `c[..., m, n] = Σ_k a[..., m, k] · b[..., k, n]`; batch dimensions
//!   broadcast numpy-style (right-aligned, extent 1 repeats) to `c`'s.
//! * **Pointwise**: inputs broadcast numpy-style to the output shape. Backward
//!   activations take the forward input `x` as `in_0` and the incoming gradient `dy`
//!   as `in_1` (hipDNN's CPU reference), and return `dy · f'(x)`. See [`pointwise`]
//!   for each mode.
//! * **Reduction**: reduces the dimensions where the output has extent 1 and the
//!   input does not.
//! * **Resample forward (pooling)** (`x: [N, C, spatial…]`, 1 to 3 spatial dims):
//!   output extents are `(in + pre + post − window) / stride + 1`, padding below the
//!   window. `MAXPOOL` ignores padded positions (`NEG_INF_PAD`; `ZERO_PAD` makes them
//!   0), `AVGPOOL_EXCLUDE_PADDING` divides by the in-bounds count,
//!   `AVGPOOL_INCLUDE_PADDING` by the window size. The index output is not produced.
//! * **Layer norm** normalizes over the trailing `normalized_dims` dimensions
//!   (`LayernormAttributes.normalized_dim_count`) with the biased variance;
//!   **RMS norm** likewise with `inv_rms = 1 / sqrt(mean(x²) + epsilon)`. Scale and
//!   bias broadcast over the leading dimensions.

mod batch_norm;
mod convolution;
mod layer_and_rms_norm;
mod matmul;
mod pointwise;
mod reduction;
mod resample;

pub use batch_norm::{
    BatchnormGrads, BatchnormTrainingStats, RunningStats, batchnorm_backward, batchnorm_inference,
    batchnorm_inference_variance, batchnorm_training,
};
pub use convolution::{ConvParams, conv_dgrad, conv_fprop, conv_wgrad};
pub use layer_and_rms_norm::{NormStats, layernorm, rmsnorm};
pub use matmul::matmul;
pub use pointwise::{PointwiseParams, erf, pointwise, pointwise_arity, pointwise_scalar};
pub use reduction::reduction;
pub use resample::{ResampleParams, resample_fwd};

/// Why a reference cannot compute a result.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ReferenceError {
    /// A mode or attribute combination the references do not define (named in the
    /// message, e.g. `"pointwise mode UNSET"`).
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// Inconsistent shapes or parameters.
    #[error("{op}: {message}")]
    Shape {
        /// The operation.
        op: &'static str,
        /// What does not fit.
        message: String,
    },
}

type Result<T> = std::result::Result<T, ReferenceError>;

fn shape_err(op: &'static str, message: impl Into<String>) -> ReferenceError {
    ReferenceError::Shape {
        op,
        message: message.into(),
    }
}

fn check_same_dims(op: &'static str, name: &str, got: &[usize], want: &[usize]) -> Result<()> {
    if got == want {
        Ok(())
    } else {
        Err(shape_err(
            op,
            format!("{name} has dims {got:?}, expected {want:?}"),
        ))
    }
}

/// Checks that `dims` broadcasts (numpy rules, right-aligned) to exactly `out`.
fn check_broadcast(op: &'static str, name: &str, dims: &[usize], out: &[usize]) -> Result<()> {
    let ok = dims.len() <= out.len()
        && dims
            .iter()
            .zip(&out[out.len() - dims.len()..])
            .all(|(&d, &o)| d == o || d == 1);
    if ok {
        Ok(())
    } else {
        Err(shape_err(
            op,
            format!("{name} dims {dims:?} do not broadcast to {out:?}"),
        ))
    }
}

fn round_f32(v: f64) -> f32 {
    v as f32
}

#[cfg(test)]
mod test_support {
    use crate::tensor::HostTensor;

    pub(super) fn dot(a: &HostTensor, b: &HostTensor) -> f64 {
        a.logical()
            .iter()
            .zip(b.logical())
            .map(|(&p, q)| f64::from(p) * f64::from(q))
            .sum()
    }

    pub(super) fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * (1.0 + b.abs())
    }

    pub(super) fn assert_all_close(got: &[f32], want: &[f32], tol: f32) {
        assert_eq!(got.len(), want.len(), "lengths: {got:?} vs {want:?}");
        for (i, (g, w)) in got.iter().zip(want).enumerate() {
            assert!(
                (g - w).abs() <= tol * (1.0 + w.abs()),
                "element {i}: got {g}, want {w} (all: {got:?} vs {want:?})"
            );
        }
    }
}
