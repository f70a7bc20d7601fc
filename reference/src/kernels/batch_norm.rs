//! Batch normalization: inference (from an inverse variance or a variance), training
//! forward with running statistics, and backward.

use super::{Result, check_same_dims, round_f32, shape_err};
use crate::tensor::{HostTensor, for_each_index};

fn channels(op: &'static str, x: &HostTensor) -> Result<usize> {
    if x.rank() < 2 {
        return Err(shape_err(op, format!("x {:?} needs rank ≥ 2", x.dims)));
    }
    Ok(x.dims[1])
}

/// The `C` values of a per-channel tensor, in channel order.
fn per_channel(op: &'static str, name: &str, t: &HostTensor, c: usize) -> Result<Vec<f64>> {
    if t.numel() != c {
        return Err(shape_err(
            op,
            format!(
                "{name} has dims {:?}, expected {c} per-channel values",
                t.dims
            ),
        ));
    }
    Ok(t.logical().into_iter().map(f64::from).collect())
}

/// Per-channel sums `Σ f(x, other)` over every dimension but 1.
fn channel_sums(x: &HostTensor, c: usize, mut f: impl FnMut(usize, &[usize]) -> f64) -> Vec<f64> {
    let mut sums = vec![0f64; c];
    for_each_index(&x.dims, |idx| sums[idx[1]] += f(idx[1], idx));
    sums
}

/// Batch norm inference: `y = scale · (x − mean) · inv_variance + bias`, per channel.
///
/// # Errors
/// Rank below 2, per-channel tensors without `C` elements, `y` not shaped like `x`.
pub fn batchnorm_inference(
    x: &HostTensor,
    mean: &HostTensor,
    inv_variance: &HostTensor,
    scale: &HostTensor,
    bias: &HostTensor,
    y: &mut HostTensor,
) -> Result<()> {
    const OP: &str = "batchnorm_inference";
    let c = channels(OP, x)?;
    check_same_dims(OP, "y", &y.dims, &x.dims)?;
    let mean = per_channel(OP, "mean", mean, c)?;
    let inv = per_channel(OP, "inv_variance", inv_variance, c)?;
    let scale = per_channel(OP, "scale", scale, c)?;
    let bias = per_channel(OP, "bias", bias, c)?;
    for_each_index(&x.dims.clone(), |idx| {
        let ch = idx[1];
        let v = scale[ch] * (f64::from(x.at(idx)) - mean[ch]) * inv[ch] + bias[ch];
        y.set(idx, round_f32(v));
    });
    Ok(())
}

/// Batch norm inference from a variance (`BatchnormInferenceAttributesVarianceExt`):
/// `y = scale · (x − mean) / sqrt(variance + epsilon) + bias`.
///
/// # Errors
/// As [`batchnorm_inference`].
pub fn batchnorm_inference_variance(
    x: &HostTensor,
    mean: &HostTensor,
    variance: &HostTensor,
    scale: &HostTensor,
    bias: &HostTensor,
    epsilon: f32,
    y: &mut HostTensor,
) -> Result<()> {
    let c = channels("batchnorm_inference_variance", x)?;
    let var = per_channel("batchnorm_inference_variance", "variance", variance, c)?;
    let inv: Vec<f32> = var
        .iter()
        .map(|v| round_f32(1.0 / (v + f64::from(epsilon)).sqrt()))
        .collect();
    let inv = HostTensor::from_vec([c], &inv);
    // Exact in f64 up to the one rounding of 1/sqrt to f32; the error is far below the
    // batch norm tolerances.
    batchnorm_inference(x, mean, &inv, scale, bias, y)
}

/// Running statistics for [`batchnorm_training`]: the previous running mean and
/// variance and the momentum (hipDNN's default momentum is 0.1).
#[derive(Debug, Clone, Copy)]
pub struct RunningStats<'a> {
    /// `prev_running_mean`, `C` values.
    pub mean: &'a HostTensor,
    /// `prev_running_variance`, `C` values.
    pub variance: &'a HostTensor,
    /// Weight of the batch statistics in the update.
    pub momentum: f32,
}

/// Per-channel outputs of [`batchnorm_training`].
#[derive(Debug, Clone, PartialEq)]
pub struct BatchnormTrainingStats {
    /// Batch mean (`mean` output).
    pub mean: Vec<f32>,
    /// `1 / sqrt(biased batch variance + epsilon)` (`inv_variance` output).
    pub inv_variance: Vec<f32>,
    /// `(1 − momentum) · prev_mean + momentum · mean`, when running stats were given.
    pub next_running_mean: Option<Vec<f32>>,
    /// `(1 − momentum) · prev_variance + momentum · unbiased batch variance`.
    pub next_running_variance: Option<Vec<f32>>,
}

/// Batch norm training forward: normalizes `x` with its own per-channel statistics,
/// writes `y = scale · x̂ + bias` and returns the statistics.
///
/// # Errors
/// As [`batchnorm_inference`].
pub fn batchnorm_training(
    x: &HostTensor,
    scale: &HostTensor,
    bias: &HostTensor,
    epsilon: f32,
    running: Option<RunningStats<'_>>,
    y: &mut HostTensor,
) -> Result<BatchnormTrainingStats> {
    const OP: &str = "batchnorm_training";
    let c = channels(OP, x)?;
    check_same_dims(OP, "y", &y.dims, &x.dims)?;
    let scale = per_channel(OP, "scale", scale, c)?;
    let bias = per_channel(OP, "bias", bias, c)?;
    let m = (x.numel() / c.max(1)) as f64;
    let mean: Vec<f64> = channel_sums(x, c, |_, i| f64::from(x.at(i)))
        .into_iter()
        .map(|s| s / m)
        .collect();
    let var: Vec<f64> = channel_sums(x, c, |ch, i| (f64::from(x.at(i)) - mean[ch]).powi(2))
        .into_iter()
        .map(|s| s / m)
        .collect();
    let inv: Vec<f64> = var
        .iter()
        .map(|v| 1.0 / (v + f64::from(epsilon)).sqrt())
        .collect();
    for_each_index(&x.dims.clone(), |idx| {
        let ch = idx[1];
        let xhat = (f64::from(x.at(idx)) - mean[ch]) * inv[ch];
        y.set(idx, round_f32(scale[ch] * xhat + bias[ch]));
    });
    let (next_mean, next_var) = match running {
        Some(r) => {
            let prev_mean = per_channel(OP, "prev_running_mean", r.mean, c)?;
            let prev_var = per_channel(OP, "prev_running_variance", r.variance, c)?;
            let mom = f64::from(r.momentum);
            let bessel = if m > 1.0 { m / (m - 1.0) } else { 1.0 };
            let nm = (0..c)
                .map(|i| round_f32((1.0 - mom) * prev_mean[i] + mom * mean[i]))
                .collect();
            let nv = (0..c)
                .map(|i| round_f32((1.0 - mom) * prev_var[i] + mom * var[i] * bessel))
                .collect();
            (Some(nm), Some(nv))
        }
        None => (None, None),
    };
    Ok(BatchnormTrainingStats {
        mean: mean.into_iter().map(round_f32).collect(),
        inv_variance: inv.into_iter().map(round_f32).collect(),
        next_running_mean: next_mean,
        next_running_variance: next_var,
    })
}

/// Per-channel parameter gradients of [`batchnorm_backward`].
#[derive(Debug, Clone, PartialEq)]
pub struct BatchnormGrads {
    /// `Σ dy · x̂` per channel.
    pub dscale: Vec<f32>,
    /// `Σ dy` per channel.
    pub dbias: Vec<f32>,
}

/// Batch norm backward from the saved `mean` and `inv_variance` of the forward pass:
/// with `x̂ = (x − mean) · inv_variance` and `M` elements per channel,
/// `dx = scale · inv_variance · (dy − Σdy / M − x̂ · Σ(dy · x̂) / M)`.
///
/// # Errors
/// As [`batchnorm_inference`]; `dy` and `dx` shaped like `x`.
pub fn batchnorm_backward(
    dy: &HostTensor,
    x: &HostTensor,
    mean: &HostTensor,
    inv_variance: &HostTensor,
    scale: &HostTensor,
    dx: &mut HostTensor,
) -> Result<BatchnormGrads> {
    const OP: &str = "batchnorm_backward";
    let c = channels(OP, x)?;
    check_same_dims(OP, "dy", &dy.dims, &x.dims)?;
    check_same_dims(OP, "dx", &dx.dims, &x.dims)?;
    let mean = per_channel(OP, "mean", mean, c)?;
    let inv = per_channel(OP, "inv_variance", inv_variance, c)?;
    let scale = per_channel(OP, "scale", scale, c)?;
    let m = (x.numel() / c.max(1)) as f64;
    let xhat = |ch: usize, i: &[usize]| (f64::from(x.at(i)) - mean[ch]) * inv[ch];
    let dbias = channel_sums(x, c, |_, i| f64::from(dy.at(i)));
    let dscale = channel_sums(x, c, |ch, i| f64::from(dy.at(i)) * xhat(ch, i));
    for_each_index(&x.dims.clone(), |idx| {
        let ch = idx[1];
        let v = scale[ch]
            * inv[ch]
            * (f64::from(dy.at(idx)) - dbias[ch] / m - xhat(ch, idx) * dscale[ch] / m);
        dx.set(idx, round_f32(v));
    });
    Ok(BatchnormGrads {
        dscale: dscale.into_iter().map(round_f32).collect(),
        dbias: dbias.into_iter().map(round_f32).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::DataGen;
    use crate::kernels::test_support::*;

    fn bn_x() -> HostTensor {
        // Two channels of [2, 2, 1, 2]: channel 0 = {1, 2, 3, 6}, channel 1 = {0, 0, 4, 4}.
        HostTensor::from_vec([2, 2, 1, 2], &[1.0, 2.0, 0.0, 0.0, 3.0, 6.0, 4.0, 4.0])
    }

    #[test]
    fn batchnorm_inference_by_hand() {
        let x = bn_x();
        let c = |a: f32, b: f32| HostTensor::from_vec([1, 2, 1, 1], &[a, b]);
        let mut y = HostTensor::packed([2, 2, 1, 2]);
        batchnorm_inference(
            &x,
            &c(1.0, 2.0),
            &c(0.5, 2.0),
            &c(2.0, 1.0),
            &c(0.0, -1.0),
            &mut y,
        )
        .unwrap();
        // ch0: 2·(x − 1)·0.5 = x − 1; ch1: (x − 2)·2 − 1 = 2x − 5.
        assert_eq!(y.logical(), [0.0, 1.0, -5.0, -5.0, 2.0, 5.0, 3.0, 3.0]);
        let mut y2 = HostTensor::packed([2, 2, 1, 2]);
        // variance 4 and 0.25 with epsilon 0 give the same inverse std.
        batchnorm_inference_variance(
            &x,
            &c(1.0, 2.0),
            &c(4.0, 0.25),
            &c(2.0, 1.0),
            &c(0.0, -1.0),
            0.0,
            &mut y2,
        )
        .unwrap();
        assert_eq!(y2.logical(), y.logical());
    }

    #[test]
    fn batchnorm_training_stats_by_hand() {
        let x = bn_x();
        let ones = HostTensor::from_vec([1, 2, 1, 1], &[1.0, 1.0]);
        let zeros = HostTensor::from_vec([1, 2, 1, 1], &[0.0, 0.0]);
        let prev_var = HostTensor::from_vec([1, 2, 1, 1], &[1.0, 2.0]);
        let mut y = HostTensor::packed([2, 2, 1, 2]);
        let running = RunningStats {
            mean: &zeros,
            variance: &prev_var,
            momentum: 0.1,
        };
        let s = batchnorm_training(&x, &ones, &zeros, 0.0, Some(running), &mut y).unwrap();
        // ch0: mean 3, biased var (4+1+0+9)/4 = 3.5, unbiased 14/3.
        // ch1: mean 2, biased var 4, unbiased 16/3.
        assert_all_close(&s.mean, &[3.0, 2.0], 1e-7);
        assert_all_close(&s.inv_variance, &[1.0 / 3.5f32.sqrt(), 0.5], 1e-7);
        let nm = s.next_running_mean.unwrap();
        assert_all_close(&nm, &[0.3, 0.2], 1e-7);
        let nv = s.next_running_variance.unwrap();
        assert_all_close(&nv, &[0.9 + 0.1 * 14.0 / 3.0, 1.8 + 0.1 * 16.0 / 3.0], 1e-6);
        let k = 1.0 / 3.5f32.sqrt();
        assert_all_close(
            &y.logical(),
            &[-2.0 * k, -k, -1.0, -1.0, 0.0, 3.0 * k, 1.0, 1.0],
            1e-6,
        );
    }

    #[test]
    fn batchnorm_backward_matches_finite_differences() {
        // L(x) = Σ dy · y(x) with y the training forward (batch statistics). Its gradient
        // is what the backward pass computes from the saved mean and inv_variance.
        let mut dg = DataGen::new(11);
        let dims = [3, 2, 2, 2];
        let mut x = HostTensor::packed(dims);
        let mut dy = HostTensor::packed(dims);
        let mut scale = HostTensor::packed([1, 2, 1, 1]);
        let mut bias = HostTensor::packed([1, 2, 1, 1]);
        dg.fill(&mut x, -1.0, 1.0);
        dg.fill(&mut dy, -1.0, 1.0);
        dg.fill(&mut scale, 0.5, 1.5);
        dg.fill(&mut bias, -0.5, 0.5);
        let eps = 1e-3;
        let loss = |x: &HostTensor| {
            let mut y = HostTensor::packed(dims);
            batchnorm_training(x, &scale, &bias, eps, None, &mut y).unwrap();
            dot(&y, &dy)
        };
        let mut y = HostTensor::packed(dims);
        let s = batchnorm_training(&x, &scale, &bias, eps, None, &mut y).unwrap();
        let mean = HostTensor::from_vec([1, 2, 1, 1], &s.mean);
        let inv = HostTensor::from_vec([1, 2, 1, 1], &s.inv_variance);
        let mut dx = HostTensor::packed(dims);
        let g = batchnorm_backward(&dy, &x, &mean, &inv, &scale, &mut dx).unwrap();
        let h = 1e-2;
        for i in 0..x.data.len() {
            let mut xp = x.clone();
            xp.data[i] += h;
            let mut xm = x.clone();
            xm.data[i] -= h;
            let fd = (loss(&xp) - loss(&xm)) / (2.0 * f64::from(h));
            assert!(
                close(f64::from(dx.data[i]), fd, 5e-3),
                "dx[{i}] = {} vs finite difference {fd}",
                dx.data[i]
            );
        }
        // dbias = Σ dy; dscale = Σ dy · x̂ = ∂L/∂scale.
        let sums = channel_sums(&dy, 2, |_, i| f64::from(dy.at(i)));
        assert_all_close(&g.dbias, &[sums[0] as f32, sums[1] as f32], 1e-6);
        let mut sp = scale.clone();
        sp.data[1] += h;
        let mut sm = scale.clone();
        sm.data[1] -= h;
        let lp = {
            let mut y = HostTensor::packed(dims);
            batchnorm_training(&x, &sp, &bias, eps, None, &mut y).unwrap();
            dot(&y, &dy)
        };
        let lm = {
            let mut y = HostTensor::packed(dims);
            batchnorm_training(&x, &sm, &bias, eps, None, &mut y).unwrap();
            dot(&y, &dy)
        };
        let fd = (lp - lm) / (2.0 * f64::from(h));
        assert!(
            close(f64::from(g.dscale[1]), fd, 1e-3),
            "{} vs {fd}",
            g.dscale[1]
        );
    }
}
