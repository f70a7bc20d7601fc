//! Tolerances per op family and data type, and the element-wise comparison.
//!
//! # Semantics
//!
//! An element passes when `|actual − expected| ≤ atol + rtol · |expected|` (hipDNN's
//! `allClose`). Non-finite values must agree in kind: both NaN, or the same infinity,
//! pass (hipDNN skips elements where both are non-finite); a non-finite value on one
//! side only fails. A length mismatch fails the whole comparison.
//!
//! [`compare_rounded`] adds `ulps` units in the last place of the output type at
//! `|expected|` to the bound. The conformance suite uses one: the reference is
//! computed in `f64` and rounded once, and a kernel whose exact result lies within its
//! own (tiny) error of a rounding midpoint may legitimately round the other way.
//!
//! # Tables
//!
//! [`tolerance`] returns hipDNN's static per-op tolerances (`TestTolerances.hpp`);
//! where hipDNN gives a single number it is used for both `atol` and `rtol`.
//! `DOUBLE` uses 1e-7 for pointwise (hipDNN's value) and the `FLOAT` entry
//! otherwise; integer types compare exactly. RMS norm is validated by hipDNN with a
//! relative-RMS metric; here its numbers are used as element-wise `atol`/`rtol`.
//! hipDNN has no pooling entry: max pooling selects an input value and is compared
//! exactly; average pooling gets the reduction's fp32 bound and about one unit of the
//! narrow types' precision.

use std::fmt;

use hipdnn_data_sdk::DataType;

use crate::data::ulp;

/// The op families that have their own tolerance table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OpFamily {
    /// Batch norm inference from `inv_variance`.
    BatchnormInference,
    /// Batch norm inference from a variance and epsilon.
    BatchnormInferenceVariance,
    /// Batch norm training forward.
    BatchnormTraining,
    /// Batch norm backward.
    BatchnormBackward,
    /// Convolution forward.
    ConvFprop,
    /// Convolution data gradient.
    ConvDgrad,
    /// Convolution weight gradient.
    ConvWgrad,
    /// Matrix multiplication.
    Matmul,
    /// Reductions.
    Reduction,
    /// Element-wise operations.
    Pointwise,
    /// Layer norm.
    Layernorm,
    /// RMS norm.
    Rmsnorm,
    /// Max pooling: a selection of input values, exact in every type.
    MaxPool,
    /// Average pooling: one sum and one division per output.
    AvgPool,
}

/// An absolute and a relative tolerance (see the [module docs](self)).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tolerance {
    /// Absolute part of the bound.
    pub atol: f64,
    /// Relative part of the bound, times `|expected|`.
    pub rtol: f64,
}

impl Tolerance {
    /// `atol` and `rtol`.
    pub const fn new(atol: f64, rtol: f64) -> Self {
        Self { atol, rtol }
    }

    /// The same value for both parts.
    pub const fn both(tol: f64) -> Self {
        Self::new(tol, tol)
    }

    /// Exact equality.
    pub const EXACT: Self = Self::new(0.0, 0.0);
}

/// hipDNN's tolerance for `family` with outputs of type `dtype`.
pub fn tolerance(family: OpFamily, dtype: DataType) -> Tolerance {
    use DataType as D;
    use OpFamily as F;
    #[derive(Clone, Copy)]
    enum W {
        F32,
        F16,
        Bf16,
    }
    let width = match dtype {
        D::Float => W::F32,
        D::Half => W::F16,
        D::Bfloat16 => W::Bf16,
        D::Double if family == F::Pointwise => return Tolerance::both(1e-7),
        D::Double => W::F32,
        d if d.is_integer() => return Tolerance::EXACT,
        // FP8 and other narrow float types: as loose as bf16.
        _ => W::Bf16,
    };
    let t = Tolerance::both;
    match (family, width) {
        (F::BatchnormInference, W::F32) => t(2e-4),
        (F::BatchnormInference, W::F16) => t(5e-4),
        (F::BatchnormInference, W::Bf16) => t(5e-3),
        (F::BatchnormInferenceVariance, W::F32) => t(2e-4),
        (F::BatchnormInferenceVariance, W::F16) => t(8e-4),
        (F::BatchnormInferenceVariance, W::Bf16) => t(7e-3),
        (F::BatchnormTraining, W::F32 | W::F16) => t(4e-3),
        (F::BatchnormTraining, W::Bf16) => t(8e-3),
        (F::BatchnormBackward, W::F32) => t(2e-3),
        (F::BatchnormBackward, W::F16) => t(4e-4),
        (F::BatchnormBackward, W::Bf16) => t(3e-3),
        (F::ConvFprop, W::F32) => t(1e-5),
        (F::ConvFprop, W::F16) => Tolerance::new(1e-1, 1e-2),
        (F::ConvFprop, W::Bf16) => Tolerance::new(1e-1, 2e-2),
        (F::ConvDgrad, W::F32) => t(8.5e-6),
        (F::ConvDgrad, W::F16 | W::Bf16) => t(2e-2),
        (F::ConvWgrad, W::F32) => t(2e-4),
        (F::ConvWgrad, W::F16 | W::Bf16) => t(2e-1),
        (F::Matmul, W::F32) => t(1e-5),
        (F::Matmul, W::F16 | W::Bf16) => t(1e-2),
        (F::Reduction, W::F32) => t(1e-5),
        (F::Reduction, W::F16) => t(1e-2),
        (F::Reduction, W::Bf16) => t(5e-2),
        (F::Pointwise, W::F32) => t(1e-5),
        (F::Pointwise, W::F16) => t(1e-3),
        (F::Pointwise, W::Bf16) => t(1e-2),
        (F::Layernorm, W::F32) => t(1e-4),
        (F::Layernorm, W::F16) => t(1e-3),
        (F::Layernorm, W::Bf16) => t(1e-2),
        (F::Rmsnorm, W::F32 | W::F16) => t(4e-3),
        (F::Rmsnorm, W::Bf16) => t(8e-3),
        (F::MaxPool, _) => Tolerance::EXACT,
        (F::AvgPool, W::F32) => t(1e-5),
        (F::AvgPool, W::F16) => t(1e-3),
        (F::AvgPool, W::Bf16) => t(8e-3),
    }
}

/// The result of comparing two sequences element by element.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// Largest `|actual − expected|` over elements where both are finite.
    pub max_abs: f64,
    /// Largest `|actual − expected| / |expected|` over finite elements with a non-zero
    /// expected value.
    pub max_rel: f64,
    /// Number of elements outside the bound.
    pub mismatches: usize,
    /// Index of the first element outside the bound.
    pub first_mismatch_index: Option<usize>,
    /// No mismatch and equal lengths.
    pub passed: bool,
    /// Elements compared (the shorter length when they differ).
    pub len: usize,
    /// `(actual, expected)` at the first mismatch.
    pub first_mismatch: Option<(f32, f32)>,
    /// Set when the lengths differ: `(actual, expected)`.
    pub length_mismatch: Option<(usize, usize)>,
}

impl fmt::Display for Comparison {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some((a, e)) = self.length_mismatch {
            return write!(f, "length mismatch: {a} actual vs {e} expected elements");
        }
        write!(
            f,
            "{}/{} mismatches, max abs err {:.3e}, max rel err {:.3e}",
            self.mismatches, self.len, self.max_abs, self.max_rel
        )?;
        if let (Some(i), Some((a, e))) = (self.first_mismatch_index, self.first_mismatch) {
            write!(f, ", first at [{i}]: got {a}, expected {e}")?;
        }
        Ok(())
    }
}

/// Compares `actual` with `expected` under `tol` (see the [module docs](self)).
pub fn compare(actual: &[f32], expected: &[f32], tol: Tolerance) -> Comparison {
    compare_impl(actual, expected, tol, |_| 0.0)
}

/// As [`compare`], with `ulps` units in the last place of `dtype` at `|expected|`
/// added to the bound.
pub fn compare_rounded(
    actual: &[f32],
    expected: &[f32],
    tol: Tolerance,
    dtype: DataType,
    ulps: f64,
) -> Comparison {
    compare_impl(actual, expected, tol, |e| ulps * ulp(dtype, e))
}

fn compare_impl(
    actual: &[f32],
    expected: &[f32],
    tol: Tolerance,
    slack: impl Fn(f32) -> f64,
) -> Comparison {
    let mut c = Comparison {
        max_abs: 0.0,
        max_rel: 0.0,
        mismatches: 0,
        first_mismatch_index: None,
        passed: false,
        len: actual.len().min(expected.len()),
        first_mismatch: None,
        length_mismatch: (actual.len() != expected.len()).then_some((actual.len(), expected.len())),
    };
    for (i, (&a, &e)) in actual.iter().zip(expected).enumerate() {
        let ok = if a.is_finite() && e.is_finite() {
            let (a64, e64) = (f64::from(a), f64::from(e));
            let err = (a64 - e64).abs();
            c.max_abs = c.max_abs.max(err);
            if e64 != 0.0 {
                c.max_rel = c.max_rel.max(err / e64.abs());
            }
            err <= tol.atol + tol.rtol * e64.abs() + slack(e)
        } else {
            (a.is_nan() && e.is_nan()) || a == e
        };
        if !ok {
            c.mismatches += 1;
            if c.first_mismatch_index.is_none() {
                c.first_mismatch_index = Some(i);
                c.first_mismatch = Some((a, e));
            }
        }
    }
    c.passed = c.mismatches == 0 && c.length_mismatch.is_none();
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_follow_hipdnn() {
        use DataType as D;
        use OpFamily as F;
        assert_eq!(
            tolerance(F::BatchnormInference, D::Half),
            Tolerance::both(5e-4)
        );
        assert_eq!(tolerance(F::ConvFprop, D::Float), Tolerance::both(1e-5));
        assert_eq!(tolerance(F::ConvFprop, D::Half), Tolerance::new(0.1, 0.01));
        assert_eq!(
            tolerance(F::ConvFprop, D::Bfloat16),
            Tolerance::new(0.1, 0.02)
        );
        assert_eq!(tolerance(F::ConvDgrad, D::Float), Tolerance::both(8.5e-6));
        assert_eq!(tolerance(F::ConvWgrad, D::Bfloat16), Tolerance::both(0.2));
        assert_eq!(tolerance(F::Reduction, D::Bfloat16), Tolerance::both(5e-2));
        assert_eq!(tolerance(F::Pointwise, D::Double), Tolerance::both(1e-7));
        assert_eq!(tolerance(F::Matmul, D::Double), Tolerance::both(1e-5));
        assert_eq!(tolerance(F::Rmsnorm, D::Bfloat16), Tolerance::both(8e-3));
        assert_eq!(tolerance(F::Pointwise, D::Int8), Tolerance::EXACT);
        assert_eq!(tolerance(F::MaxPool, D::Bfloat16), Tolerance::EXACT);
        assert_eq!(tolerance(F::AvgPool, D::Half), Tolerance::both(1e-3));
        // Narrower types are never stricter than wider ones, except where hipDNN's
        // own table says so (batch norm backward fp16).
        let families = [
            F::BatchnormInference,
            F::BatchnormInferenceVariance,
            F::BatchnormTraining,
            F::ConvFprop,
            F::ConvDgrad,
            F::ConvWgrad,
            F::Matmul,
            F::Reduction,
            F::Pointwise,
            F::Layernorm,
            F::Rmsnorm,
            F::MaxPool,
            F::AvgPool,
        ];
        for f in families {
            let (a, b, c) = (
                tolerance(f, D::Float),
                tolerance(f, D::Half),
                tolerance(f, D::Bfloat16),
            );
            assert!(a.atol <= b.atol && b.atol <= c.atol, "{f:?}");
            assert!(a.rtol <= b.rtol && b.rtol <= c.rtol, "{f:?}");
        }
    }

    #[test]
    fn atol_plus_rtol_bound() {
        let tol = Tolerance::new(0.1, 0.01);
        // Bound at expected 10 is 0.1 + 0.1 = 0.2.
        assert!(compare(&[10.19], &[10.0], tol).passed);
        let c = compare(&[10.21, 0.0], &[10.0, 0.0], tol);
        assert!(!c.passed);
        assert_eq!(c.mismatches, 1);
        assert_eq!(c.first_mismatch_index, Some(0));
        assert!((c.max_abs - 0.21).abs() < 1e-5);
        assert!((c.max_rel - 0.021).abs() < 1e-6);
        // Pure atol near zero.
        assert!(compare(&[0.099], &[0.0], tol).passed);
        assert!(!compare(&[0.101], &[0.0], tol).passed);
        assert!(compare(&[1.0, 2.0], &[1.0, 2.0], Tolerance::EXACT).passed);
        assert!(!compare(&[1.0, 2.0], &[1.0, 2.000_001], Tolerance::EXACT).passed);
    }

    #[test]
    fn non_finite_values_must_agree() {
        let tol = Tolerance::both(1e-3);
        assert!(compare(&[f32::NAN, f32::INFINITY], &[f32::NAN, f32::INFINITY], tol).passed);
        assert!(!compare(&[f32::NAN], &[1.0], tol).passed);
        assert!(!compare(&[1.0], &[f32::NAN], tol).passed);
        assert!(!compare(&[f32::NEG_INFINITY], &[f32::INFINITY], tol).passed);
    }

    #[test]
    fn length_mismatch_fails() {
        let c = compare(&[1.0], &[1.0, 2.0], Tolerance::both(1.0));
        assert!(!c.passed);
        assert_eq!(c.mismatches, 0);
        assert!(c.to_string().contains("length mismatch"));
    }

    #[test]
    fn rounded_comparison_allows_one_output_ulp() {
        let tol = Tolerance::both(1e-4);
        let e = 3.0f32;
        let next = half::f16::from_f32(e).to_f32() + 2f32.powi(-9);
        assert!(!compare(&[next], &[e], tol).passed);
        assert!(compare_rounded(&[next], &[e], tol, DataType::Half, 1.0).passed);
        assert!(
            !compare_rounded(
                &[e + 2.0 * 2f32.powi(-9) + 1e-3],
                &[e],
                tol,
                DataType::Half,
                1.0
            )
            .passed
        );
    }
}
