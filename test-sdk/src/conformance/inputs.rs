//! How each input of a case is drawn: a distribution per op and tensor name that keeps
//! the references well-conditioned (positive variances, divisors away from zero,
//! booleans for logical ops, ties for comparisons).

use hipdnn_data_sdk::DataType;
use hipdnn_flatbuffers_sdk::wire::{PointwiseMode, ReductionMode};

use super::Op;
use crate::data::{DataGen, round_to};

impl Op {
    /// How the input tensor called `name` is drawn.
    pub(super) fn distribution(&self, name: &str) -> Dist {
        use PointwiseMode as M;
        match (self, name) {
            (_, "inv_variance" | "variance" | "prev_running_variance") => Dist::Uniform(0.5, 2.0),
            (_, "scale") => Dist::Uniform(0.5, 1.5),
            (_, "mean" | "prev_running_mean") => Dist::Uniform(-0.5, 0.5),
            (Op::Pointwise { params, .. }, _) => match (params.mode, name) {
                (M::LOG | M::SQRT | M::RSQRT | M::RECIPROCAL, "in_0") | (M::DIV, "in_1") => {
                    Dist::Uniform(0.5, 2.0)
                }
                (M::LOGICAL_AND | M::LOGICAL_OR | M::LOGICAL_NOT, _)
                | (M::BINARY_SELECT, "in_2") => Dist::Bool,
                (M::CMP_EQ | M::CMP_GE | M::CMP_GT | M::CMP_LE | M::CMP_LT | M::CMP_NEQ, _) => {
                    Dist::Grid
                }
                _ => Dist::Uniform(-2.0, 2.0),
            },
            (Op::Reduction { mode, .. }, _) => match *mode {
                ReductionMode::MUL => Dist::Uniform(0.5, 1.5),
                ReductionMode::MUL_NO_ZEROS => Dist::SparseUniform(0.5, 1.5),
                _ => Dist::Uniform(-1.0, 1.0),
            },
            _ => Dist::Uniform(-1.0, 1.0),
        }
    }
}

/// How an input is drawn.
#[derive(Debug, Clone, Copy)]
pub(super) enum Dist {
    Uniform(f32, f32),
    /// 0 or 1.
    Bool,
    /// One of −1, −0.5, 0, 0.5, 1 (so comparisons see ties).
    Grid,
    /// Uniform, with about a quarter of the values 0.
    SparseUniform(f32, f32),
}

impl Dist {
    pub(super) fn draw(self, g: &mut DataGen, dtype: DataType) -> f32 {
        let v = match self {
            Dist::Uniform(lo, hi) => g.uniform(lo, hi),
            Dist::Bool => g.uniform(0.0, 2.0).floor(),
            Dist::Grid => (g.uniform(0.0, 5.0).floor() - 2.0) / 2.0,
            Dist::SparseUniform(lo, hi) => {
                if g.uniform(0.0, 1.0) < 0.25 {
                    0.0
                } else {
                    g.uniform(lo, hi)
                }
            }
        };
        round_to(dtype, v)
    }
}
