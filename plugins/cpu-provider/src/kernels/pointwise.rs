//! Element-wise functions: the pointwise modes of the graph API, evaluated on short
//! `f32` runs (the chunks the elementwise engine and the GEMM epilogues hand over).

use hipdnn_flatbuffers_sdk::wire::PointwiseMode;

/// One element-wise function with its parameters.
///
/// Backward modes take `in_0 = x` (the forward input) and `in_1 = dy` and return
/// `dx = dy * f'(x)` (the convention of hipdnn-test-sdk's references).
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum PwOp {
    /// `|a|`.
    Abs,
    /// `a + b`.
    Add,
    /// `a + b²`.
    AddSquare,
    /// `c != 0 ? a : b`.
    BinarySelect,
    /// `ceil(a)`.
    Ceil,
    /// `a == b` as 1 or 0.
    CmpEq,
    /// `a >= b`.
    CmpGe,
    /// `a > b`.
    CmpGt,
    /// `a <= b`.
    CmpLe,
    /// `a < b`.
    CmpLt,
    /// `a != b`.
    CmpNeq,
    /// `a / b`.
    Div,
    /// ELU gradient: `dy · (x > 0 ? 1 : alpha·e^x)`.
    EluBwd {
        /// α.
        alpha: f32,
    },
    /// `x > 0 ? x : alpha·(e^x − 1)`.
    EluFwd {
        /// α.
        alpha: f32,
    },
    /// `erf(a)`.
    Erf,
    /// `e^a`.
    Exp,
    /// `floor(a)`.
    Floor,
    /// Gradient of the tanh approximation of GELU.
    GeluApproxTanhBwd,
    /// `0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))`.
    GeluApproxTanhFwd,
    /// Gradient of the exact GELU.
    GeluBwd,
    /// `0.5·x·(1 + erf(x/√2))`.
    GeluFwd,
    /// `a`.
    Identity,
    /// `ln(a)`.
    Log,
    /// `a != 0 && b != 0`.
    LogicalAnd,
    /// `a == 0`.
    LogicalNot,
    /// `a != 0 || b != 0`.
    LogicalOr,
    /// `max(a, b)`.
    Max,
    /// `min(a, b)`.
    Min,
    /// `a · b`.
    Mul,
    /// `−a`.
    Neg,
    /// `1 / a`.
    Reciprocal,
    /// ReLU gradient: `dy` where the forward ReLU passed `x` through, `slope·dy` at or
    /// below the lower clip, 0 above the upper clip.
    ReluBwd {
        /// Lower clip (0 by default).
        lower: f32,
        /// Upper clip (+∞ by default).
        upper: f32,
        /// Slope below the lower clip (0 by default).
        slope: f32,
    },
    /// `x < lower ? lower + slope·(x − lower) : min(x, upper)` (plain ReLU with the
    /// defaults 0, +∞, 0; leaky ReLU with a slope; clipped ReLU with an upper clip).
    ReluFwd {
        /// Lower clip.
        lower: f32,
        /// Upper clip.
        upper: f32,
        /// Slope below the lower clip.
        slope: f32,
    },
    /// `1 / √a`.
    Rsqrt,
    /// Sigmoid gradient `dy · s(x)(1 − s(x))`.
    SigmoidBwd,
    /// `1 / (1 + e^−a)`.
    SigmoidFwd,
    /// `sin(a)`.
    Sin,
    /// Softplus gradient `dy · s(β·x)`.
    SoftplusBwd {
        /// β.
        beta: f32,
    },
    /// `ln(1 + e^(β·x)) / β`.
    SoftplusFwd {
        /// β.
        beta: f32,
    },
    /// `√a`.
    Sqrt,
    /// `a − b`.
    Sub,
    /// Swish gradient `dy · (s + β·x·s·(1 − s))`, `s = s(β·x)`.
    SwishBwd {
        /// β.
        beta: f32,
    },
    /// `x · s(β·x)`.
    SwishFwd {
        /// β.
        beta: f32,
    },
    /// `tan(a)`.
    Tan,
    /// Tanh gradient `dy · (1 − tanh²(x))`.
    TanhBwd,
    /// `tanh(a)`.
    TanhFwd,
    /// `a · b + c` (the engine's own scale-and-shift, used for normalizations), a
    /// multiply and an add: a fused multiply-add is a library call per element where
    /// the crate is built for the baseline instruction set.
    ScaleShift,
    /// `a` rounded to the nearest `f16` (the engine's own rounding of a HALF
    /// intermediate that stays in registers).
    RoundF16,
    /// `a` rounded to the nearest `bf16`.
    RoundBf16,
}

/// The optional scalar attributes of a pointwise node.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PwParams {
    /// `relu_lower_clip`.
    pub relu_lower_clip: Option<f32>,
    /// `relu_upper_clip`.
    pub relu_upper_clip: Option<f32>,
    /// `relu_lower_clip_slope`.
    pub relu_lower_clip_slope: Option<f32>,
    /// `swish_beta`.
    pub swish_beta: Option<f32>,
    /// `elu_alpha`.
    pub elu_alpha: Option<f32>,
    /// `softplus_beta`.
    pub softplus_beta: Option<f32>,
}

impl PwOp {
    /// The function for a wire mode, or `None` for modes that are no function of their
    /// inputs (`GEN_INDEX`, which the plan runs as a producer) and unknown values.
    pub fn from_mode(mode: PointwiseMode, p: &PwParams) -> Option<Self> {
        let relu = (
            p.relu_lower_clip.unwrap_or(0.0),
            p.relu_upper_clip.unwrap_or(f32::INFINITY),
            p.relu_lower_clip_slope.unwrap_or(0.0),
        );
        Some(match mode {
            PointwiseMode::ABS => PwOp::Abs,
            PointwiseMode::ADD => PwOp::Add,
            PointwiseMode::ADD_SQUARE => PwOp::AddSquare,
            PointwiseMode::BINARY_SELECT => PwOp::BinarySelect,
            PointwiseMode::CEIL => PwOp::Ceil,
            PointwiseMode::CMP_EQ => PwOp::CmpEq,
            PointwiseMode::CMP_GE => PwOp::CmpGe,
            PointwiseMode::CMP_GT => PwOp::CmpGt,
            PointwiseMode::CMP_LE => PwOp::CmpLe,
            PointwiseMode::CMP_LT => PwOp::CmpLt,
            PointwiseMode::CMP_NEQ => PwOp::CmpNeq,
            PointwiseMode::DIV => PwOp::Div,
            PointwiseMode::ELU_BWD => PwOp::EluBwd {
                alpha: p.elu_alpha.unwrap_or(1.0),
            },
            PointwiseMode::ELU_FWD => PwOp::EluFwd {
                alpha: p.elu_alpha.unwrap_or(1.0),
            },
            PointwiseMode::ERF => PwOp::Erf,
            PointwiseMode::EXP => PwOp::Exp,
            PointwiseMode::FLOOR => PwOp::Floor,
            PointwiseMode::GELU_APPROX_TANH_BWD => PwOp::GeluApproxTanhBwd,
            PointwiseMode::GELU_APPROX_TANH_FWD => PwOp::GeluApproxTanhFwd,
            PointwiseMode::GELU_BWD => PwOp::GeluBwd,
            PointwiseMode::GELU_FWD => PwOp::GeluFwd,
            PointwiseMode::IDENTITY => PwOp::Identity,
            PointwiseMode::LOG => PwOp::Log,
            PointwiseMode::LOGICAL_AND => PwOp::LogicalAnd,
            PointwiseMode::LOGICAL_NOT => PwOp::LogicalNot,
            PointwiseMode::LOGICAL_OR => PwOp::LogicalOr,
            PointwiseMode::MAX_OP => PwOp::Max,
            PointwiseMode::MIN_OP => PwOp::Min,
            PointwiseMode::MUL => PwOp::Mul,
            PointwiseMode::NEG => PwOp::Neg,
            PointwiseMode::RECIPROCAL => PwOp::Reciprocal,
            PointwiseMode::RELU_BWD => PwOp::ReluBwd {
                lower: relu.0,
                upper: relu.1,
                slope: relu.2,
            },
            PointwiseMode::RELU_FWD => PwOp::ReluFwd {
                lower: relu.0,
                upper: relu.1,
                slope: relu.2,
            },
            PointwiseMode::RSQRT => PwOp::Rsqrt,
            PointwiseMode::SIGMOID_BWD => PwOp::SigmoidBwd,
            PointwiseMode::SIGMOID_FWD => PwOp::SigmoidFwd,
            PointwiseMode::SIN => PwOp::Sin,
            PointwiseMode::SOFTPLUS_BWD => PwOp::SoftplusBwd {
                beta: p.softplus_beta.unwrap_or(1.0),
            },
            PointwiseMode::SOFTPLUS_FWD => PwOp::SoftplusFwd {
                beta: p.softplus_beta.unwrap_or(1.0),
            },
            PointwiseMode::SQRT => PwOp::Sqrt,
            PointwiseMode::SUB => PwOp::Sub,
            PointwiseMode::SWISH_BWD => PwOp::SwishBwd {
                beta: p.swish_beta.unwrap_or(1.0),
            },
            PointwiseMode::SWISH_FWD => PwOp::SwishFwd {
                beta: p.swish_beta.unwrap_or(1.0),
            },
            PointwiseMode::TAN => PwOp::Tan,
            PointwiseMode::TANH_BWD => PwOp::TanhBwd,
            PointwiseMode::TANH_FWD => PwOp::TanhFwd,
            _ => return None,
        })
    }

    /// Number of inputs (1, 2 or 3).
    pub fn arity(&self) -> usize {
        use PwOp::*;
        match self {
            Abs
            | Ceil
            | EluFwd { .. }
            | Erf
            | Exp
            | Floor
            | GeluApproxTanhFwd
            | GeluFwd
            | Identity
            | Log
            | LogicalNot
            | Neg
            | Reciprocal
            | ReluFwd { .. }
            | Rsqrt
            | SigmoidFwd
            | Sin
            | SoftplusFwd { .. }
            | Sqrt
            | SwishFwd { .. }
            | Tan
            | TanhFwd
            | RoundF16
            | RoundBf16 => 1,
            BinarySelect | ScaleShift => 3,
            _ => 2,
        }
    }

    /// Applies the function to one element (`b`, `c` ignored when unused).
    #[inline(always)]
    pub fn eval1(&self, a: f32, b: f32, c: f32) -> f32 {
        use PwOp::*;
        let bool = |v: bool| if v { 1.0 } else { 0.0 };
        match *self {
            Abs => a.abs(),
            Add => a + b,
            AddSquare => a + b * b,
            BinarySelect => {
                if c != 0.0 {
                    a
                } else {
                    b
                }
            }
            Ceil => a.ceil(),
            CmpEq => bool(a == b),
            CmpGe => bool(a >= b),
            CmpGt => bool(a > b),
            CmpLe => bool(a <= b),
            CmpLt => bool(a < b),
            CmpNeq => bool(a != b),
            Div => a / b,
            EluBwd { alpha } => {
                if a > 0.0 {
                    b
                } else {
                    b * alpha * a.exp()
                }
            }
            EluFwd { alpha } => {
                if a > 0.0 {
                    a
                } else {
                    alpha * a.exp_m1()
                }
            }
            Erf => erf(a),
            Exp => a.exp(),
            Floor => a.floor(),
            GeluApproxTanhBwd => {
                let x = a;
                let k = SQRT_2_OVER_PI;
                let inner = k * (x + 0.044_715 * x * x * x);
                let t = inner.tanh();
                let d_inner = k * (1.0 + 3.0 * 0.044_715 * x * x);
                b * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * d_inner)
            }
            GeluApproxTanhFwd => {
                let x = a;
                0.5 * x * (1.0 + (SQRT_2_OVER_PI * (x + 0.044_715 * x * x * x)).tanh())
            }
            GeluBwd => {
                let x = a;
                let cdf = 0.5 * (1.0 + erf(x * std::f32::consts::FRAC_1_SQRT_2));
                let pdf = (-0.5 * x * x).exp() * INV_SQRT_2PI;
                b * (cdf + x * pdf)
            }
            GeluFwd => 0.5 * a * (1.0 + erf(a * std::f32::consts::FRAC_1_SQRT_2)),
            Identity => a,
            Log => a.ln(),
            LogicalAnd => bool(a != 0.0 && b != 0.0),
            LogicalNot => bool(a == 0.0),
            LogicalOr => bool(a != 0.0 || b != 0.0),
            Max => a.max(b),
            Min => a.min(b),
            Mul => a * b,
            Neg => -a,
            Reciprocal => 1.0 / a,
            ReluBwd {
                lower,
                upper,
                slope,
            } => {
                if a <= lower {
                    slope * b
                } else if a > upper {
                    0.0
                } else {
                    b
                }
            }
            ReluFwd {
                lower,
                upper,
                slope,
            } => {
                if a < lower {
                    lower + slope * (a - lower)
                } else {
                    a.min(upper)
                }
            }
            Rsqrt => 1.0 / a.sqrt(),
            SigmoidBwd => {
                let s = sigmoid(a);
                b * s * (1.0 - s)
            }
            SigmoidFwd => sigmoid(a),
            Sin => a.sin(),
            SoftplusBwd { beta } => b * sigmoid(beta * a),
            SoftplusFwd { beta } => softplus(beta * a) / beta,
            Sqrt => a.sqrt(),
            Sub => a - b,
            SwishBwd { beta } => {
                let s = sigmoid(beta * a);
                b * (s + beta * a * s * (1.0 - s))
            }
            SwishFwd { beta } => a * sigmoid(beta * a),
            Tan => a.tan(),
            TanhBwd => {
                let t = a.tanh();
                b * (1.0 - t * t)
            }
            TanhFwd => a.tanh(),
            ScaleShift => a * b + c,
            RoundF16 => half::f16::from_f32(a).to_f32(),
            RoundBf16 => half::bf16::from_f32(a).to_f32(),
        }
    }

    /// `out[i] = f(a[i], b[i], c[i])` over a run; `b` and `c` may be empty when the
    /// function does not read them. The hot modes get their own loops so they
    /// vectorize.
    pub fn eval(&self, out: &mut [f32], a: &[f32], b: &[f32], c: &[f32]) {
        let n = out.len();
        let a = &a[..n];
        match *self {
            PwOp::Add => {
                let b = &b[..n];
                for i in 0..n {
                    out[i] = a[i] + b[i];
                }
            }
            PwOp::Mul => {
                let b = &b[..n];
                for i in 0..n {
                    out[i] = a[i] * b[i];
                }
            }
            PwOp::Sub => {
                let b = &b[..n];
                for i in 0..n {
                    out[i] = a[i] - b[i];
                }
            }
            PwOp::ScaleShift => {
                let (b, c) = (&b[..n], &c[..n]);
                for i in 0..n {
                    out[i] = a[i] * b[i] + c[i];
                }
            }
            PwOp::ReluFwd {
                lower,
                upper,
                slope,
            } if lower == 0.0 && slope == 0.0 && upper == f32::INFINITY => {
                for i in 0..n {
                    out[i] = a[i].max(0.0);
                }
            }
            op if op.arity() == 1 => {
                for i in 0..n {
                    out[i] = op.eval1(a[i], 0.0, 0.0);
                }
            }
            op if op.arity() == 2 => {
                let b = &b[..n];
                for i in 0..n {
                    out[i] = op.eval1(a[i], b[i], 0.0);
                }
            }
            op => {
                let (b, c) = (&b[..n], &c[..n]);
                for i in 0..n {
                    out[i] = op.eval1(a[i], b[i], c[i]);
                }
            }
        }
    }
}

const SQRT_2_OVER_PI: f32 = 0.797_884_6;
const INV_SQRT_2PI: f32 = 0.398_942_3;

#[inline(always)]
fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

#[inline(always)]
fn softplus(x: f32) -> f32 {
    // ln(1 + e^x) without overflow for large x.
    if x > 20.0 { x } else { x.exp().ln_1p() }
}

/// The error function (`libm`'s `erff`, a port of musl's, within 1 ulp).
#[inline]
pub fn erf(x: f32) -> f32 {
    libm::erff(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erf_matches_known_values() {
        for (x, e) in [
            (0.0f32, 0.0f32),
            (0.5, 0.520_499_9),
            (1.0, 0.842_700_8),
            (2.0, 0.995_322_3),
            (-1.0, -0.842_700_8),
        ] {
            assert!((erf(x) - e).abs() < 2e-7, "erf({x}) = {} vs {e}", erf(x));
        }
    }

    #[test]
    fn relu_variants() {
        let p = PwParams::default();
        let relu = PwOp::from_mode(PointwiseMode::RELU_FWD, &p).unwrap();
        assert_eq!(relu.eval1(-2.0, 0.0, 0.0), 0.0);
        assert_eq!(relu.eval1(3.0, 0.0, 0.0), 3.0);
        let leaky = PwOp::from_mode(
            PointwiseMode::RELU_FWD,
            &PwParams {
                relu_lower_clip_slope: Some(0.1),
                ..p
            },
        )
        .unwrap();
        assert!((leaky.eval1(-2.0, 0.0, 0.0) + 0.2).abs() < 1e-7);
        let clipped = PwOp::from_mode(
            PointwiseMode::RELU_FWD,
            &PwParams {
                relu_upper_clip: Some(6.0),
                ..p
            },
        )
        .unwrap();
        assert_eq!(clipped.eval1(9.0, 0.0, 0.0), 6.0);
        let bwd = PwOp::from_mode(PointwiseMode::RELU_BWD, &p).unwrap();
        assert_eq!(bwd.eval1(-1.0, 5.0, 0.0), 0.0);
        assert_eq!(bwd.eval1(1.0, 5.0, 0.0), 5.0);
        assert!(PwOp::from_mode(PointwiseMode::GEN_INDEX, &p).is_none());
    }

    #[test]
    fn backward_modes_match_finite_differences() {
        let p = PwParams::default();
        let pairs = [
            (PointwiseMode::SIGMOID_FWD, PointwiseMode::SIGMOID_BWD),
            (PointwiseMode::TANH_FWD, PointwiseMode::TANH_BWD),
            (PointwiseMode::GELU_FWD, PointwiseMode::GELU_BWD),
            (
                PointwiseMode::GELU_APPROX_TANH_FWD,
                PointwiseMode::GELU_APPROX_TANH_BWD,
            ),
            (PointwiseMode::ELU_FWD, PointwiseMode::ELU_BWD),
            (PointwiseMode::SOFTPLUS_FWD, PointwiseMode::SOFTPLUS_BWD),
            (PointwiseMode::SWISH_FWD, PointwiseMode::SWISH_BWD),
        ];
        for (f, b) in pairs {
            let (f, b) = (
                PwOp::from_mode(f, &p).unwrap(),
                PwOp::from_mode(b, &p).unwrap(),
            );
            for x in [-1.7f32, -0.3, 0.4, 1.2] {
                let h = 1e-3f64;
                let xf = f64::from(x);
                let num = (f64::from(f.eval1((xf + h) as f32, 0.0, 0.0))
                    - f64::from(f.eval1((xf - h) as f32, 0.0, 0.0)))
                    / (2.0 * h);
                let got = f64::from(b.eval1(x, 2.0, 0.0));
                assert!(
                    (got - 2.0 * num).abs() < 2e-3,
                    "{b:?} at {x}: {got} vs {}",
                    2.0 * num
                );
            }
        }
    }
}
