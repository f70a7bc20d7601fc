//! Element-wise operations: every pointwise mode, with numpy broadcasting.

use hipdnn_flatbuffers_sdk::model::PointwiseAttributes;
use hipdnn_flatbuffers_sdk::wire::PointwiseMode;

use super::{ReferenceError, Result, check_broadcast, round_f32, shape_err};
use crate::tensor::{HostTensor, for_each_index};

/// A pointwise operation and its optional attributes (`PointwiseAttributes` minus the
/// tensor uids). `None` takes the default noted on each field.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PointwiseParams {
    /// The function.
    pub mode: PointwiseMode,
    /// ReLU lower clip (default 0).
    pub relu_lower_clip: Option<f32>,
    /// ReLU upper clip (default +∞).
    pub relu_upper_clip: Option<f32>,
    /// ReLU slope below the lower clip (default 0; leaky ReLU when set).
    pub relu_lower_clip_slope: Option<f32>,
    /// Axis for `GEN_INDEX` (required there).
    pub axis: Option<i64>,
    /// Swish β (default 1).
    pub swish_beta: Option<f32>,
    /// ELU α (default 1).
    pub elu_alpha: Option<f32>,
    /// Softplus β (default 1).
    pub softplus_beta: Option<f32>,
}

impl PointwiseParams {
    /// `mode` with every attribute at its default.
    pub fn new(mode: PointwiseMode) -> Self {
        Self {
            mode,
            relu_lower_clip: None,
            relu_upper_clip: None,
            relu_lower_clip_slope: None,
            axis: None,
            swish_beta: None,
            elu_alpha: None,
            softplus_beta: None,
        }
    }

    /// The parameters of a graph node.
    pub fn from_attributes(a: &PointwiseAttributes) -> Self {
        Self {
            mode: a.operation,
            relu_lower_clip: a.relu_lower_clip,
            relu_upper_clip: a.relu_upper_clip,
            relu_lower_clip_slope: a.relu_lower_clip_slope,
            axis: a.axis_tensor_uid,
            swish_beta: a.swish_beta,
            elu_alpha: a.elu_alpha,
            softplus_beta: a.softplus_beta,
        }
    }

    /// Copies the attributes into a node's table (tensor uids untouched).
    pub fn apply_to(&self, a: &mut PointwiseAttributes) {
        a.operation = self.mode;
        a.relu_lower_clip = self.relu_lower_clip;
        a.relu_upper_clip = self.relu_upper_clip;
        a.relu_lower_clip_slope = self.relu_lower_clip_slope;
        a.axis_tensor_uid = self.axis;
        a.swish_beta = self.swish_beta;
        a.elu_alpha = self.elu_alpha;
        a.softplus_beta = self.softplus_beta;
    }
}

/// How many inputs `mode` takes (1, 2 or 3).
///
/// # Errors
/// [`ReferenceError::Unsupported`] for `UNSET` and values unknown to the schema.
pub fn pointwise_arity(mode: PointwiseMode) -> Result<usize> {
    hipdnn_flatbuffers_sdk::pointwise_arity(mode)
        .ok_or_else(|| ReferenceError::Unsupported(format!("pointwise mode {mode:?}")))
}

/// The error function (`libm`'s, a port of musl's: correctly rounded to within 1 ulp).
pub fn erf(x: f64) -> f64 {
    libm::erf(x)
}

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

const SQRT_2_OVER_PI: f64 = 0.797_884_560_802_865_4;
const GELU_TANH_C: f64 = 0.044_715;

/// One element of a pointwise op. `a`, `b`, `c` are `in_0`, `in_1`, `in_2` (unused
/// ones are ignored); `GEN_INDEX` has no element form and is rejected here.
///
/// Definitions (β, α default 1; backward modes take `a = x`, `b = dy`):
///
/// | mode | result |
/// |---|---|
/// | `ABS`, `NEG`, `CEIL`, `FLOOR`, `EXP`, `LOG`, `SIN`, `TAN`, `SQRT`, `ERF`, `IDENTITY` | the usual function of `a` |
/// | `RECIPROCAL`, `RSQRT` | `1/a`, `1/√a` |
/// | `ADD`, `SUB`, `MUL`, `DIV`, `MAX_OP`, `MIN_OP` | `a ∘ b` |
/// | `ADD_SQUARE` | `a + b²` |
/// | `CMP_*` | 1 if `a ∘ b` holds, else 0 |
/// | `LOGICAL_AND`, `LOGICAL_OR`, `LOGICAL_NOT` | on `value ≠ 0`, giving 1 or 0 |
/// | `BINARY_SELECT` | `c ≠ 0 ? a : b` |
/// | `RELU_FWD` | `a < lo: lo + slope·(a − lo)`; `a > hi: hi`; else `a` (lo 0, hi +∞, slope 0) |
/// | `RELU_BWD` | `b ·` (`a ≤ lo: slope`; `a > hi: 0`; else 1) |
/// | `SIGMOID_FWD` / `_BWD` | `σ(a)` / `b·σ(a)(1 − σ(a))` |
/// | `TANH_FWD` / `_BWD` | `tanh a` / `b·(1 − tanh² a)` |
/// | `ELU_FWD` / `_BWD` | `a > 0 ? a : α(eᵃ − 1)` / `b·(a > 0 ? 1 : α eᵃ)` |
/// | `GELU_FWD` / `_BWD` | `a·Φ(a)` (erf form) / `b·(Φ(a) + a·φ(a))` |
/// | `GELU_APPROX_TANH_FWD` / `_BWD` | `a/2·(1 + tanh u)`, `u = √(2/π)(a + 0.044715a³)` / `b·` its derivative |
/// | `SOFTPLUS_FWD` / `_BWD` | `ln(1 + e^(βa))/β` / `b·σ(βa)` |
/// | `SWISH_FWD` / `_BWD` | `a·σ(βa)` / `b·(σ(βa) + βa·σ(βa)(1 − σ(βa)))` |
///
/// # Errors
/// [`ReferenceError::Unsupported`] for `UNSET`, `GEN_INDEX` and unknown modes.
pub fn pointwise_scalar(p: &PointwiseParams, a: f64, b: f64, c: f64) -> Result<f64> {
    use PointwiseMode as M;
    let bit = |v: bool| if v { 1.0 } else { 0.0 };
    let beta = |v: Option<f32>| v.map_or(1.0, f64::from);
    Ok(match p.mode {
        M::ABS => a.abs(),
        M::ADD => a + b,
        M::ADD_SQUARE => a + b * b,
        M::BINARY_SELECT => {
            if c != 0.0 {
                a
            } else {
                b
            }
        }
        M::CEIL => a.ceil(),
        M::CMP_EQ => bit(a == b),
        M::CMP_GE => bit(a >= b),
        M::CMP_GT => bit(a > b),
        M::CMP_LE => bit(a <= b),
        M::CMP_LT => bit(a < b),
        M::CMP_NEQ => bit(a != b),
        M::DIV => a / b,
        M::ELU_FWD => {
            if a > 0.0 {
                a
            } else {
                beta(p.elu_alpha) * a.exp_m1()
            }
        }
        M::ELU_BWD => {
            b * if a > 0.0 {
                1.0
            } else {
                beta(p.elu_alpha) * a.exp()
            }
        }
        M::ERF => erf(a),
        M::EXP => a.exp(),
        M::FLOOR => a.floor(),
        M::GELU_FWD => 0.5 * a * (1.0 + erf(a / std::f64::consts::SQRT_2)),
        M::GELU_BWD => {
            let cdf = 0.5 * (1.0 + erf(a / std::f64::consts::SQRT_2));
            let pdf = (-0.5 * a * a).exp() / (2.0 * std::f64::consts::PI).sqrt();
            b * (cdf + a * pdf)
        }
        M::GELU_APPROX_TANH_FWD => {
            let u = SQRT_2_OVER_PI * (a + GELU_TANH_C * a * a * a);
            0.5 * a * (1.0 + u.tanh())
        }
        M::GELU_APPROX_TANH_BWD => {
            let u = SQRT_2_OVER_PI * (a + GELU_TANH_C * a * a * a);
            let t = u.tanh();
            let du = SQRT_2_OVER_PI * (1.0 + 3.0 * GELU_TANH_C * a * a);
            b * (0.5 * (1.0 + t) + 0.5 * a * (1.0 - t * t) * du)
        }
        M::IDENTITY => a,
        M::LOG => a.ln(),
        M::LOGICAL_AND => bit(a != 0.0 && b != 0.0),
        M::LOGICAL_NOT => bit(a == 0.0),
        M::LOGICAL_OR => bit(a != 0.0 || b != 0.0),
        M::MAX_OP => a.max(b),
        M::MIN_OP => a.min(b),
        M::MUL => a * b,
        M::NEG => -a,
        M::RECIPROCAL => 1.0 / a,
        M::RELU_FWD => {
            let lo = p.relu_lower_clip.map_or(0.0, f64::from);
            let hi = p.relu_upper_clip.map_or(f64::INFINITY, f64::from);
            let slope = p.relu_lower_clip_slope.map_or(0.0, f64::from);
            if a < lo {
                lo + slope * (a - lo)
            } else if a > hi {
                hi
            } else {
                a
            }
        }
        M::RELU_BWD => {
            let lo = p.relu_lower_clip.map_or(0.0, f64::from);
            let hi = p.relu_upper_clip.map_or(f64::INFINITY, f64::from);
            let slope = p.relu_lower_clip_slope.map_or(0.0, f64::from);
            b * if a <= lo {
                slope
            } else if a > hi {
                0.0
            } else {
                1.0
            }
        }
        M::RSQRT => 1.0 / a.sqrt(),
        M::SIGMOID_FWD => sigmoid(a),
        M::SIGMOID_BWD => {
            let s = sigmoid(a);
            b * s * (1.0 - s)
        }
        M::SIN => a.sin(),
        M::SOFTPLUS_FWD => {
            let bt = beta(p.softplus_beta);
            let z = bt * a;
            // ln(1 + e^z) = max(z, 0) + ln(1 + e^(−|z|)), stable for large |z|.
            (z.max(0.0) + (-z.abs()).exp().ln_1p()) / bt
        }
        M::SOFTPLUS_BWD => b * sigmoid(beta(p.softplus_beta) * a),
        M::SQRT => a.sqrt(),
        M::SUB => a - b,
        M::SWISH_FWD => a * sigmoid(beta(p.swish_beta) * a),
        M::SWISH_BWD => {
            let bt = beta(p.swish_beta);
            let s = sigmoid(bt * a);
            b * (s + bt * a * s * (1.0 - s))
        }
        M::TAN => a.tan(),
        M::TANH_FWD => a.tanh(),
        M::TANH_BWD => {
            let t = a.tanh();
            b * (1.0 - t * t)
        }
        other => {
            return Err(ReferenceError::Unsupported(format!(
                "pointwise mode {other:?}"
            )));
        }
    })
}

/// Applies a pointwise op: `out[i] = f(in_0[i], in_1[i], in_2[i])` with every input
/// broadcast (numpy rules) to `out`'s shape. `GEN_INDEX` writes, at each output index,
/// that index's coordinate along `axis` (negative axes count from the end); its input
/// only provides the shape.
///
/// # Errors
/// An input count that does not match [`pointwise_arity`], inputs that do not
/// broadcast to `out`, `GEN_INDEX` without a valid axis, and the errors of
/// [`pointwise_scalar`].
pub fn pointwise(p: &PointwiseParams, inputs: &[&HostTensor], out: &mut HostTensor) -> Result<()> {
    const OP: &str = "pointwise";
    let arity = pointwise_arity(p.mode)?;
    if inputs.len() != arity {
        return Err(shape_err(
            OP,
            format!("{:?} takes {arity} inputs, {} given", p.mode, inputs.len()),
        ));
    }
    let out_dims = out.dims.clone();
    for (i, t) in inputs.iter().enumerate() {
        check_broadcast(OP, &format!("in_{i}"), &t.dims, &out_dims)?;
    }
    if p.mode == PointwiseMode::GEN_INDEX {
        let rank = out_dims.len() as i64;
        let axis = p
            .axis
            .map(|a| if a < 0 { a + rank } else { a })
            .filter(|a| (0..rank).contains(a))
            .ok_or_else(|| {
                shape_err(
                    OP,
                    format!(
                        "GEN_INDEX needs an axis in -{rank}..{rank}, got {:?}",
                        p.axis
                    ),
                )
            })?;
        for_each_index(&out_dims, |idx| out.set(idx, idx[axis as usize] as f32));
        return Ok(());
    }
    let mut err = None;
    for_each_index(&out_dims, |idx| {
        let arg = |i: usize| {
            inputs
                .get(i)
                .map_or(0.0, |t| f64::from(t.at_broadcast(idx)))
        };
        match pointwise_scalar(p, arg(0), arg(1), arg(2)) {
            Ok(v) => out.set(idx, round_f32(v)),
            Err(e) => err = Some(e),
        }
    });
    err.map_or(Ok(()), Err)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::test_support::*;
    use hipdnn_data_sdk::TensorLayout;

    #[test]
    fn erf_matches_tabulated_values() {
        for (x, want) in [
            (0.0, 0.0),
            (0.5, 0.520_499_877_813_046_5),
            (1.0, 0.842_700_792_949_714_9),
            (2.0, 0.995_322_265_018_952_7),
            (2.9, 0.999_958_902_121_900_5),
            (3.5, 0.999_999_256_901_627_7),
            (-1.0, -0.842_700_792_949_714_9),
        ] {
            assert!(
                (erf(x) - want).abs() < 1e-12,
                "erf({x}) = {} ≠ {want}",
                erf(x)
            );
        }
    }

    #[test]
    fn pointwise_by_hand() {
        let p = |mode| PointwiseParams::new(mode);
        let s = |mode, a, b, c| pointwise_scalar(&p(mode), a, b, c).unwrap();
        use PointwiseMode as M;
        assert_eq!(s(M::ADD_SQUARE, 1.0, 3.0, 0.0), 10.0);
        assert_eq!(s(M::BINARY_SELECT, 1.0, 2.0, 1.0), 1.0);
        assert_eq!(s(M::BINARY_SELECT, 1.0, 2.0, 0.0), 2.0);
        assert_eq!(s(M::CMP_GE, 2.0, 2.0, 0.0), 1.0);
        assert_eq!(s(M::CMP_GT, 2.0, 2.0, 0.0), 0.0);
        assert_eq!(s(M::LOGICAL_OR, 0.0, 3.0, 0.0), 1.0);
        assert_eq!(s(M::LOGICAL_AND, 0.0, 3.0, 0.0), 0.0);
        assert_eq!(s(M::LOGICAL_NOT, 0.0, 0.0, 0.0), 1.0);
        assert_eq!(s(M::RELU_FWD, -2.0, 0.0, 0.0), 0.0);
        assert_eq!(s(M::RELU_FWD, 2.5, 0.0, 0.0), 2.5);
        assert_eq!(s(M::RELU_BWD, -2.0, 3.0, 0.0), 0.0);
        assert_eq!(s(M::RELU_BWD, 2.0, 3.0, 0.0), 3.0);
        assert_eq!(s(M::SOFTPLUS_FWD, 0.0, 0.0, 0.0), std::f64::consts::LN_2);
        assert_eq!(s(M::SWISH_FWD, 2.0, 0.0, 0.0), 2.0 * sigmoid(2.0));
        assert!(close(
            s(M::GELU_FWD, 1.0, 0.0, 0.0),
            0.841_344_746_068_543,
            1e-12
        ));
        assert!(close(
            s(M::GELU_APPROX_TANH_FWD, 1.0, 0.0, 0.0),
            0.841_191_990_608_276_8,
            1e-12
        ));
        assert!(close(
            s(M::ELU_FWD, -1.0, 0.0, 0.0),
            (-1f64).exp() - 1.0,
            1e-15
        ));

        // Clipped and leaky ReLU, as hipDNN's CPU reference defines them.
        let clip = PointwiseParams {
            relu_lower_clip: Some(-2.0),
            relu_upper_clip: Some(4.0),
            relu_lower_clip_slope: Some(0.1),
            ..p(M::RELU_FWD)
        };
        let r = |v| pointwise_scalar(&clip, v, 0.0, 0.0).unwrap();
        assert!(close(r(-5.0), -2.3, 1e-7));
        assert_eq!(r(-1.0), -1.0);
        assert_eq!(r(5.0), 4.0);
        let clip_bwd = PointwiseParams {
            mode: M::RELU_BWD,
            ..clip
        };
        let rb = |v| pointwise_scalar(&clip_bwd, v, 2.0, 0.0).unwrap();
        assert!(close(rb(-5.0), 0.2, 1e-7));
        assert_eq!(rb(1.0), 2.0);
        assert_eq!(rb(5.0), 0.0);

        for mode in [M::UNSET, M(99)] {
            assert!(matches!(
                pointwise_scalar(&p(mode), 1.0, 1.0, 1.0),
                Err(ReferenceError::Unsupported(_))
            ));
            assert!(pointwise_arity(mode).is_err());
        }
    }

    /// Every backward activation equals `dy` times the derivative of its forward mode.
    #[test]
    fn backward_modes_are_derivatives_of_forward_modes() {
        use PointwiseMode as M;
        let pairs = [
            (M::RELU_FWD, M::RELU_BWD),
            (M::SIGMOID_FWD, M::SIGMOID_BWD),
            (M::TANH_FWD, M::TANH_BWD),
            (M::ELU_FWD, M::ELU_BWD),
            (M::GELU_FWD, M::GELU_BWD),
            (M::GELU_APPROX_TANH_FWD, M::GELU_APPROX_TANH_BWD),
            (M::SOFTPLUS_FWD, M::SOFTPLUS_BWD),
            (M::SWISH_FWD, M::SWISH_BWD),
        ];
        for (fwd, bwd) in pairs {
            let mut pf = PointwiseParams::new(fwd);
            pf.elu_alpha = Some(0.7);
            pf.swish_beta = Some(1.5);
            pf.softplus_beta = Some(2.0);
            pf.relu_lower_clip_slope = Some(0.2);
            pf.relu_upper_clip = Some(1.0);
            let pb = PointwiseParams { mode: bwd, ..pf };
            for x in [-2.1, -0.7, -0.2, 0.3, 0.8, 1.9] {
                let h = 1e-6;
                let f = |v| pointwise_scalar(&pf, v, 0.0, 0.0).unwrap();
                let fd = (f(x + h) - f(x - h)) / (2.0 * h);
                let got = pointwise_scalar(&pb, x, 1.5, 0.0).unwrap();
                assert!(
                    close(got, 1.5 * fd, 1e-6),
                    "{bwd:?}({x}) = {got}, expected {}",
                    1.5 * fd
                );
            }
        }
    }

    #[test]
    fn pointwise_broadcasts_and_gen_index() {
        let a = HostTensor::from_vec([2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        let b = HostTensor::from_vec([1, 3], &[10.0, 20.0, 30.0]);
        let mut out = HostTensor::with_layout([2, 3], TensorLayout::ChannelsLast);
        pointwise(
            &PointwiseParams::new(PointwiseMode::SUB),
            &[&a, &b],
            &mut out,
        )
        .unwrap();
        assert_eq!(out.logical(), [-9.0, -18.0, -27.0, -6.0, -15.0, -24.0]);
        let col = HostTensor::from_vec([2, 1], &[1.0, 0.0]);
        pointwise(
            &PointwiseParams::new(PointwiseMode::BINARY_SELECT),
            &[&a, &b, &col],
            &mut out,
        )
        .unwrap();
        assert_eq!(out.logical(), [1.0, 2.0, 3.0, 10.0, 20.0, 30.0]);
        let mut gi = PointwiseParams::new(PointwiseMode::GEN_INDEX);
        gi.axis = Some(1);
        pointwise(&gi, &[&a], &mut out).unwrap();
        assert_eq!(out.logical(), [0.0, 1.0, 2.0, 0.0, 1.0, 2.0]);
        gi.axis = None;
        assert!(pointwise(&gi, &[&a], &mut out).is_err());
        let wrong = HostTensor::packed([3, 2]);
        assert!(
            pointwise(
                &PointwiseParams::new(PointwiseMode::ADD),
                &[&a, &wrong],
                &mut out
            )
            .is_err()
        );
        assert!(pointwise(&PointwiseParams::new(PointwiseMode::ADD), &[&a], &mut out).is_err());
    }
}
