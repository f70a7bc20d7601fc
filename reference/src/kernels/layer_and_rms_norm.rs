//! Layer norm and RMS norm over the trailing dimensions.

use super::{Result, check_broadcast, check_same_dims, round_f32, shape_err};
use crate::tensor::{HostTensor, for_each_index};

/// Checks a normalization's shapes; returns the number of leading (batch-like) dims.
fn norm_layout(
    op: &'static str,
    x: &HostTensor,
    normalized_dims: usize,
    params: &[(&str, &HostTensor)],
    y: &HostTensor,
) -> Result<usize> {
    if normalized_dims == 0 || normalized_dims > x.rank() {
        return Err(shape_err(
            op,
            format!(
                "cannot normalize over the last {normalized_dims} dims of {:?}",
                x.dims
            ),
        ));
    }
    check_same_dims(op, "y", &y.dims, &x.dims)?;
    let lead = x.rank() - normalized_dims;
    for (name, t) in params {
        check_broadcast(op, name, &t.dims, &x.dims)?;
        let t_lead = t.rank().saturating_sub(normalized_dims);
        if t.dims[..t_lead].iter().any(|&d| d != 1) {
            return Err(shape_err(
                op,
                format!(
                    "{name} dims {:?} vary over the leading dims of x {:?}",
                    t.dims, x.dims
                ),
            ));
        }
    }
    Ok(lead)
}

/// Per-row statistics of a normalization, one value per index of the leading
/// (non-normalized) dimensions in row-major order; as tensors they have `x`'s dims with
/// the normalized ones set to 1.
#[derive(Debug, Clone, PartialEq)]
pub struct NormStats {
    /// Mean over the normalized dims (all zeros for RMS norm, which does not center).
    pub mean: Vec<f32>,
    /// `1 / sqrt(variance + epsilon)` for layer norm, `1 / sqrt(mean(x²) + epsilon)`
    /// (`inv_rms`) for RMS norm.
    pub inv: Vec<f32>,
}

#[expect(
    clippy::too_many_arguments,
    reason = "private helper behind layernorm and rmsnorm"
)]
fn norm_impl(
    op: &'static str,
    x: &HostTensor,
    scale: &HostTensor,
    bias: Option<&HostTensor>,
    epsilon: f32,
    normalized_dims: usize,
    center: bool,
    y: &mut HostTensor,
) -> Result<NormStats> {
    let mut params = vec![("scale", scale)];
    if let Some(b) = bias {
        params.push(("bias", b));
    }
    let lead = norm_layout(op, x, normalized_dims, &params, y)?;
    let rows: usize = x.dims[..lead].iter().product();
    let row_len = (x.numel() / rows.max(1)) as f64;
    let row_of = |idx: &[usize]| {
        idx[..lead]
            .iter()
            .zip(&x.dims[..lead])
            .fold(0, |r, (&i, &d)| r * d + i)
    };
    let mut mean = vec![0f64; rows];
    if center {
        for_each_index(&x.dims, |idx| mean[row_of(idx)] += f64::from(x.at(idx)));
        mean.iter_mut().for_each(|m| *m /= row_len);
    }
    let mut sq = vec![0f64; rows];
    for_each_index(&x.dims, |idx| {
        let r = row_of(idx);
        sq[r] += (f64::from(x.at(idx)) - mean[r]).powi(2);
    });
    let inv: Vec<f64> = sq
        .iter()
        .map(|s| 1.0 / (s / row_len + f64::from(epsilon)).sqrt())
        .collect();
    for_each_index(&x.dims.clone(), |idx| {
        let r = row_of(idx);
        let xhat = (f64::from(x.at(idx)) - mean[r]) * inv[r];
        let b = bias.map_or(0.0, |b| f64::from(b.at_broadcast(idx)));
        y.set(
            idx,
            round_f32(xhat * f64::from(scale.at_broadcast(idx)) + b),
        );
    });
    Ok(NormStats {
        mean: mean.into_iter().map(round_f32).collect(),
        inv: inv.into_iter().map(round_f32).collect(),
    })
}

/// Layer norm forward over the trailing `normalized_dims` dims:
/// `y = (x − mean) · inv_variance · scale + bias`, with the biased variance.
/// `scale` and `bias` broadcast to `x` and have extent 1 on the leading dims.
///
/// # Errors
/// A `normalized_dims` of 0 or above the rank, `y` not shaped like `x`, parameters
/// that do not broadcast.
pub fn layernorm(
    x: &HostTensor,
    scale: &HostTensor,
    bias: &HostTensor,
    epsilon: f32,
    normalized_dims: usize,
    y: &mut HostTensor,
) -> Result<NormStats> {
    norm_impl(
        "layernorm",
        x,
        scale,
        Some(bias),
        epsilon,
        normalized_dims,
        true,
        y,
    )
}

/// RMS norm forward over the trailing `normalized_dims` dims:
/// `y = x · inv_rms · scale (+ bias)`, `inv_rms = 1 / sqrt(mean(x²) + epsilon)`.
/// hipDNN's `RMSNormAttributes` has no dim count; the graphs here normalize over every
/// dim but the batch (`normalized_dims = rank − 1`), as cuDNN's frontend does.
///
/// # Errors
/// As [`layernorm`].
pub fn rmsnorm(
    x: &HostTensor,
    scale: &HostTensor,
    bias: Option<&HostTensor>,
    epsilon: f32,
    normalized_dims: usize,
    y: &mut HostTensor,
) -> Result<NormStats> {
    norm_impl(
        "rmsnorm",
        x,
        scale,
        bias,
        epsilon,
        normalized_dims,
        false,
        y,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::test_support::*;

    #[test]
    fn layernorm_and_rmsnorm_by_hand() {
        let x = HostTensor::from_vec([2, 4], &[1.0, 2.0, 3.0, 4.0, 2.0, 2.0, 2.0, 2.0]);
        let scale = HostTensor::from_vec([1, 4], &[2.0, 2.0, 2.0, 2.0]);
        let bias = HostTensor::from_vec([1, 4], &[1.0, 1.0, 1.0, 1.0]);
        let mut y = HostTensor::packed([2, 4]);
        let s = layernorm(&x, &scale, &bias, 0.0, 1, &mut y).unwrap();
        assert_eq!(s.mean, [2.5, 2.0]);
        let k = 1.0 / 1.25f32.sqrt();
        assert_all_close(&s.inv[..1], &[k], 1e-7);
        assert!(s.inv[1].is_infinite(), "zero variance with epsilon 0");
        let mut y = HostTensor::packed([2, 4]);
        let s = layernorm(&x, &scale, &bias, 0.75, 1, &mut y).unwrap();
        // Row 0: var 1.25 + 0.75 = 2; row 1: var 0 + 0.75.
        let k0 = 1.0 / 2f32.sqrt();
        assert_all_close(&s.inv, &[k0, 1.0 / 0.75f32.sqrt()], 1e-7);
        let want: Vec<f32> = [-1.5f32, -0.5, 0.5, 1.5]
            .iter()
            .map(|d| d * k0 * 2.0 + 1.0)
            .chain([1.0; 4])
            .collect();
        assert_all_close(&y.logical(), &want, 1e-6);

        let x = HostTensor::from_vec([1, 2], &[3.0, 4.0]);
        let scale = HostTensor::from_vec([2], &[1.0, 2.0]);
        let mut y = HostTensor::packed([1, 2]);
        let s = rmsnorm(&x, &scale, None, 0.0, 1, &mut y).unwrap();
        let inv = 1.0 / 12.5f32.sqrt();
        assert_all_close(&s.inv, &[inv], 1e-7);
        assert_all_close(&y.logical(), &[3.0 * inv, 8.0 * inv], 1e-6);
        let b = HostTensor::from_vec([1, 2], &[0.5, -0.5]);
        rmsnorm(&x, &scale, Some(&b), 0.0, 1, &mut y).unwrap();
        assert_all_close(&y.logical(), &[3.0 * inv + 0.5, 8.0 * inv - 0.5], 1e-6);
        // Scale varying over a leading dim is rejected.
        let bad = HostTensor::packed([2, 2]);
        let x2 = HostTensor::packed([2, 2]);
        let mut y2 = HostTensor::packed([2, 2]);
        assert!(rmsnorm(&x2, &bad, None, 0.0, 1, &mut y2).is_err());
    }

    #[test]
    fn layernorm_over_trailing_dims() {
        // [2, 2, 2] normalized over the last two dims: each batch row is one group.
        let x = HostTensor::from_vec([2, 2, 2], &[0.0, 2.0, 4.0, 6.0, 1.0, 1.0, 1.0, 5.0]);
        let ones = HostTensor::from_vec([1, 2, 2], &[1.0; 4]);
        let zeros = HostTensor::from_vec([1, 2, 2], &[0.0; 4]);
        let mut y = HostTensor::packed([2, 2, 2]);
        let s = layernorm(&x, &ones, &zeros, 0.0, 2, &mut y).unwrap();
        assert_eq!(s.mean, [3.0, 2.0]);
        // Variances 5 and 3.
        assert_all_close(&s.inv, &[1.0 / 5f32.sqrt(), 1.0 / 3f32.sqrt()], 1e-7);
        let mut row_sum = [0.0f32; 2];
        for (i, v) in y.logical().iter().enumerate() {
            row_sum[i / 4] += v;
        }
        assert!(row_sum.iter().all(|s| s.abs() < 1e-6));
    }
}
