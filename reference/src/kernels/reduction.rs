//! Reductions over the dimensions where the output has extent 1.

use hipdnn_flatbuffers_sdk::wire::ReductionMode;

use super::{ReferenceError, Result, round_f32, shape_err};
use crate::tensor::{HostTensor, for_each_index};

/// Reduces `input` into `out` over every dimension where `out` has extent 1 and
/// `input` does not.
///
/// | mode | result |
/// |---|---|
/// | `ADD`, `MUL` | sum, product |
/// | `MIN_OP`, `MAX_OP` | minimum, maximum |
/// | `AMAX` | maximum of `|x|` |
/// | `AVG` | mean |
/// | `NORM1`, `NORM2` | `Σ|x|`, `sqrt(Σx²)` |
/// | `MUL_NO_ZEROS` | product of the non-zero elements (1 if all are zero) |
///
/// # Errors
/// `NOT_SET` or unknown modes ([`ReferenceError::Unsupported`]); ranks that differ or
/// output extents that are neither the input's nor 1.
pub fn reduction(mode: ReductionMode, input: &HostTensor, out: &mut HostTensor) -> Result<()> {
    use ReductionMode as R;
    const OP: &str = "reduction";
    let init = match mode {
        R::ADD | R::AVG | R::NORM1 | R::NORM2 | R::AMAX => 0.0,
        R::MUL | R::MUL_NO_ZEROS => 1.0,
        R::MIN_OP => f64::INFINITY,
        R::MAX_OP => f64::NEG_INFINITY,
        other => {
            return Err(ReferenceError::Unsupported(format!(
                "reduction mode {other:?}"
            )));
        }
    };
    if input.rank() != out.rank()
        || input
            .dims
            .iter()
            .zip(&out.dims)
            .any(|(&i, &o)| o != i && o != 1)
    {
        return Err(shape_err(
            OP,
            format!("cannot reduce {:?} to {:?}", input.dims, out.dims),
        ));
    }
    let count = (input.numel() / out.numel().max(1)) as f64;
    let out_dims = out.dims.clone();
    let mut acc = vec![init; out.data.len()];
    let mut oi = vec![0; out_dims.len()];
    for_each_index(&input.dims, |idx| {
        for (d, o) in oi.iter_mut().enumerate() {
            *o = if out_dims[d] == 1 { 0 } else { idx[d] };
        }
        let v = f64::from(input.at(idx));
        let a = &mut acc[out.offset(&oi)];
        match mode {
            R::ADD | R::AVG => *a += v,
            R::MUL => *a *= v,
            R::MUL_NO_ZEROS => {
                if v != 0.0 {
                    *a *= v;
                }
            }
            R::MIN_OP => *a = a.min(v),
            R::MAX_OP => *a = a.max(v),
            R::AMAX => *a = a.max(v.abs()),
            R::NORM1 => *a += v.abs(),
            R::NORM2 => *a += v * v,
            _ => unreachable!("rejected above"),
        }
    });
    for_each_index(&out_dims, |idx| {
        let off = out.offset(idx);
        let v = match mode {
            R::AVG => acc[off] / count,
            R::NORM2 => acc[off].sqrt(),
            _ => acc[off],
        };
        out.data[off] = round_f32(v);
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::test_support::*;

    #[test]
    fn reductions_by_hand() {
        let x = HostTensor::from_vec([2, 3], &[1.0, -2.0, 3.0, -4.0, 5.0, 0.0]);
        let run = |mode| {
            let mut out = HostTensor::packed([2, 1]);
            reduction(mode, &x, &mut out).unwrap();
            out.logical()
        };
        use ReductionMode as R;
        assert_eq!(run(R::ADD), [2.0, 1.0]);
        assert_eq!(run(R::MUL), [-6.0, 0.0]);
        assert_eq!(run(R::MIN_OP), [-2.0, -4.0]);
        assert_eq!(run(R::MAX_OP), [3.0, 5.0]);
        assert_eq!(run(R::AMAX), [3.0, 5.0]);
        assert_all_close(&run(R::AVG), &[2.0 / 3.0, 1.0 / 3.0], 1e-7);
        assert_eq!(run(R::NORM1), [6.0, 9.0]);
        assert_all_close(&run(R::NORM2), &[14f32.sqrt(), 41f32.sqrt()], 1e-7);
        assert_eq!(run(R::MUL_NO_ZEROS), [-6.0, -20.0]);
        let mut col = HostTensor::packed([1, 3]);
        reduction(R::ADD, &x, &mut col).unwrap();
        assert_eq!(col.logical(), [-3.0, 3.0, 3.0]);
        let mut all = HostTensor::packed([1, 1]);
        reduction(R::MAX_OP, &x, &mut all).unwrap();
        assert_eq!(all.logical(), [5.0]);
        assert!(matches!(
            reduction(R::NOT_SET, &x, &mut all),
            Err(ReferenceError::Unsupported(_))
        ));
        let mut bad = HostTensor::packed([2, 2]);
        assert!(reduction(R::ADD, &x, &mut bad).is_err());
    }
}
