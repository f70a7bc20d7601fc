//! Naive CPU references, written to be obviously correct rather than fast.
//!
//! Every function reads its inputs and writes its outputs through [`HostTensor`]s by
//! logical index, so strides are arbitrary (NCHW, NHWC, padded rows...). Outputs are
//! passed in by the caller, already shaped and strided; the reference checks the shapes
//! and fills them. Sums and products accumulate in `f64` and are rounded to `f32` once.
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
//! * **Layer norm** normalizes over the trailing `normalized_dims` dimensions
//!   (`LayernormAttributes.normalized_dim_count`) with the biased variance;
//!   **RMS norm** likewise with `inv_rms = 1 / sqrt(mean(x²) + epsilon)`. Scale and
//!   bias broadcast over the leading dimensions.

use hipdnn_flatbuffers_sdk::model::PointwiseAttributes;
use hipdnn_flatbuffers_sdk::wire::{ConvMode, PointwiseMode, ReductionMode};

use crate::tensor::{HostTensor, for_each_index};

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

// ---------------------------------------------------------------------------------------
// Convolution
// ---------------------------------------------------------------------------------------

/// Convolution parameters, one entry per spatial dimension.
#[derive(Debug, Clone, PartialEq)]
pub struct ConvParams {
    /// Zero padding before each spatial dimension.
    pub pre_padding: Vec<usize>,
    /// Zero padding after each spatial dimension.
    pub post_padding: Vec<usize>,
    /// Output stride.
    pub stride: Vec<usize>,
    /// Filter dilation (1 = dense).
    pub dilation: Vec<usize>,
    /// Filter orientation.
    pub mode: ConvMode,
}

impl ConvParams {
    /// No padding, stride 1, dilation 1, cross-correlation, for `spatial` dimensions.
    pub fn new(spatial: usize) -> Self {
        Self {
            pre_padding: vec![0; spatial],
            post_padding: vec![0; spatial],
            stride: vec![1; spatial],
            dilation: vec![1; spatial],
            mode: ConvMode::CROSS_CORRELATION,
        }
    }

    /// The same padding before and after every spatial dimension.
    pub fn padding(mut self, pad: usize) -> Self {
        self.pre_padding.fill(pad);
        self.post_padding.fill(pad);
        self
    }

    /// The same stride in every spatial dimension.
    pub fn stride(mut self, stride: usize) -> Self {
        self.stride.fill(stride);
        self
    }

    /// The same dilation in every spatial dimension.
    pub fn dilation(mut self, dilation: usize) -> Self {
        self.dilation.fill(dilation);
        self
    }

    /// Sets the filter orientation.
    pub fn mode(mut self, mode: ConvMode) -> Self {
        self.mode = mode;
        self
    }

    /// The output dims of a convolution of `x_dims` with `w_dims`.
    ///
    /// # Errors
    /// Inconsistent ranks, channel counts, parameters, or a filter larger than the
    /// padded input.
    pub fn output_dims(&self, x_dims: &[usize], w_dims: &[usize]) -> Result<Vec<usize>> {
        ConvGeometry::new("convolution", x_dims, w_dims, self).map(|g| g.y_dims)
    }
}

/// Validated sizes of one convolution.
struct ConvGeometry {
    x_dims: Vec<usize>,
    w_dims: Vec<usize>,
    y_dims: Vec<usize>,
    /// Input channels per group (`w.dims[1]`).
    c_per_group: usize,
    /// Output channels per group.
    k_per_group: usize,
    flip: bool,
}

impl ConvGeometry {
    fn new(op: &'static str, x_dims: &[usize], w_dims: &[usize], p: &ConvParams) -> Result<Self> {
        let rank = x_dims.len();
        if !(3..=5).contains(&rank) || w_dims.len() != rank {
            return Err(shape_err(
                op,
                format!("x {x_dims:?} and w {w_dims:?} must both have rank 3 to 5"),
            ));
        }
        let spatial = rank - 2;
        for (name, v) in [
            ("pre_padding", &p.pre_padding),
            ("post_padding", &p.post_padding),
            ("stride", &p.stride),
            ("dilation", &p.dilation),
        ] {
            if v.len() != spatial {
                return Err(shape_err(
                    op,
                    format!("{name} {v:?} needs {spatial} entries"),
                ));
            }
        }
        if p.stride.contains(&0) || p.dilation.contains(&0) {
            return Err(shape_err(op, "stride and dilation must be at least 1"));
        }
        let flip = match p.mode {
            ConvMode::CONVOLUTION => true,
            ConvMode::CROSS_CORRELATION => false,
            other => return Err(ReferenceError::Unsupported(format!("conv_mode {other:?}"))),
        };
        let (c, cg, k) = (x_dims[1], w_dims[1], w_dims[0]);
        if cg == 0 || c % cg != 0 {
            return Err(shape_err(
                op,
                format!("x has {c} channels, not a multiple of w's {cg} input channels"),
            ));
        }
        let groups = c / cg;
        if k % groups != 0 {
            return Err(shape_err(
                op,
                format!("{k} output channels do not split into {groups} groups"),
            ));
        }
        let mut y_dims = vec![x_dims[0], k];
        for i in 0..spatial {
            let padded = x_dims[i + 2] + p.pre_padding[i] + p.post_padding[i];
            let reach = p.dilation[i] * (w_dims[i + 2].max(1) - 1) + 1;
            if w_dims[i + 2] == 0 || padded < reach {
                return Err(shape_err(
                    op,
                    format!(
                        "filter extent {reach} exceeds padded input {padded} in spatial dim {i}"
                    ),
                ));
            }
            y_dims.push((padded - reach) / p.stride[i] + 1);
        }
        Ok(Self {
            x_dims: x_dims.to_vec(),
            w_dims: w_dims.to_vec(),
            y_dims,
            c_per_group: cg,
            k_per_group: k / groups,
            flip,
        })
    }

    /// Calls `f(x_index, w_index, y_index)` for every product `x · w` that contributes
    /// to `y`. Fprop, dgrad and wgrad are this one loop with different accumulators.
    fn visit(&self, p: &ConvParams, mut f: impl FnMut(&[usize], &[usize], &[usize])) {
        let spatial = self.x_dims.len() - 2;
        let kernel = &self.w_dims[2..];
        let mut xi = vec![0; spatial + 2];
        let mut wi = vec![0; spatial + 2];
        let mut yi = vec![0; spatial + 2];
        for n in 0..self.x_dims[0] {
            for k in 0..self.w_dims[0] {
                let group = k / self.k_per_group;
                for c in 0..self.c_per_group {
                    for_each_index(&self.y_dims[2..], |o| {
                        for_each_index(kernel, |r| {
                            for i in 0..spatial {
                                let pos = o[i] * p.stride[i] + r[i] * p.dilation[i];
                                let Some(pos) = pos.checked_sub(p.pre_padding[i]) else {
                                    return;
                                };
                                if pos >= self.x_dims[i + 2] {
                                    return;
                                }
                                xi[i + 2] = pos;
                                wi[i + 2] = if self.flip {
                                    kernel[i] - 1 - r[i]
                                } else {
                                    r[i]
                                };
                                yi[i + 2] = o[i];
                            }
                            xi[0] = n;
                            xi[1] = group * self.c_per_group + c;
                            wi[0] = k;
                            wi[1] = c;
                            yi[0] = n;
                            yi[1] = k;
                            f(&xi, &wi, &yi);
                        });
                    });
                }
            }
        }
    }
}

/// Convolution forward: `y = conv(x, w)`.
///
/// # Errors
/// See [`ConvParams::output_dims`]; `y` must have the computed output dims.
pub fn conv_fprop(
    x: &HostTensor,
    w: &HostTensor,
    y: &mut HostTensor,
    p: &ConvParams,
) -> Result<()> {
    let g = ConvGeometry::new("conv_fprop", &x.dims, &w.dims, p)?;
    check_same_dims("conv_fprop", "y", &y.dims, &g.y_dims)?;
    let mut acc = vec![0f64; y.data.len()];
    g.visit(p, |xi, wi, yi| {
        acc[y.offset(yi)] += f64::from(x.at(xi)) * f64::from(w.at(wi));
    });
    y.data = acc.into_iter().map(round_f32).collect();
    Ok(())
}

/// Convolution data gradient: `dx` such that `<fprop(x, w), dy> = <x, dx>` for all `x`.
///
/// # Errors
/// See [`ConvParams::output_dims`] (computed from `dx` and `w`); `dy` must have the
/// output dims.
pub fn conv_dgrad(
    dy: &HostTensor,
    w: &HostTensor,
    dx: &mut HostTensor,
    p: &ConvParams,
) -> Result<()> {
    let g = ConvGeometry::new("conv_dgrad", &dx.dims, &w.dims, p)?;
    check_same_dims("conv_dgrad", "dy", &dy.dims, &g.y_dims)?;
    let mut acc = vec![0f64; dx.data.len()];
    g.visit(p, |xi, wi, yi| {
        acc[dx.offset(xi)] += f64::from(dy.at(yi)) * f64::from(w.at(wi));
    });
    dx.data = acc.into_iter().map(round_f32).collect();
    Ok(())
}

/// Convolution weight gradient: `dw` such that `<fprop(x, w), dy> = <w, dw>` for all `w`.
///
/// # Errors
/// See [`ConvParams::output_dims`] (computed from `x` and `dw`); `dy` must have the
/// output dims.
pub fn conv_wgrad(
    x: &HostTensor,
    dy: &HostTensor,
    dw: &mut HostTensor,
    p: &ConvParams,
) -> Result<()> {
    let g = ConvGeometry::new("conv_wgrad", &x.dims, &dw.dims, p)?;
    check_same_dims("conv_wgrad", "dy", &dy.dims, &g.y_dims)?;
    let mut acc = vec![0f64; dw.data.len()];
    g.visit(p, |xi, wi, yi| {
        acc[dw.offset(wi)] += f64::from(x.at(xi)) * f64::from(dy.at(yi));
    });
    dw.data = acc.into_iter().map(round_f32).collect();
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Batch normalization
// ---------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------
// Matmul
// ---------------------------------------------------------------------------------------

/// Batched matrix multiplication `c[..., m, n] = Σ_k a[..., m, k] · b[..., k, n]`, with
/// numpy broadcasting of the batch dimensions of `a` and `b` to those of `c`.
///
/// # Errors
/// Rank below 2, mismatched `K`, `M` or `N`, or batch dims that do not broadcast to
/// `c`'s.
pub fn matmul(a: &HostTensor, b: &HostTensor, c: &mut HostTensor) -> Result<()> {
    const OP: &str = "matmul";
    let (ra, rb, rc) = (a.rank(), b.rank(), c.rank());
    if ra < 2 || rb < 2 || rc < 2 {
        return Err(shape_err(OP, "a, b and c need rank ≥ 2"));
    }
    let (m, k) = (a.dims[ra - 2], a.dims[ra - 1]);
    let (k2, n) = (b.dims[rb - 2], b.dims[rb - 1]);
    if k != k2 || c.dims[rc - 2] != m || c.dims[rc - 1] != n {
        return Err(shape_err(
            OP,
            format!(
                "a {:?} · b {:?} does not give c {:?}",
                a.dims, b.dims, c.dims
            ),
        ));
    }
    let batch = c.dims[..rc - 2].to_vec();
    check_broadcast(OP, "a batch", &a.dims[..ra - 2], &batch)?;
    check_broadcast(OP, "b batch", &b.dims[..rb - 2], &batch)?;
    let mut ai = vec![0; ra];
    let mut bi = vec![0; rb];
    let mut ci = vec![0; rc];
    for_each_index(&batch, |bidx| {
        broadcast_into(&a.dims[..ra - 2], bidx, &mut ai);
        broadcast_into(&b.dims[..rb - 2], bidx, &mut bi);
        ci[..rc - 2].copy_from_slice(bidx);
        for mi in 0..m {
            for ni in 0..n {
                let mut acc = 0f64;
                for ki in 0..k {
                    ai[ra - 2] = mi;
                    ai[ra - 1] = ki;
                    bi[rb - 2] = ki;
                    bi[rb - 1] = ni;
                    acc += f64::from(a.at(&ai)) * f64::from(b.at(&bi));
                }
                ci[rc - 2] = mi;
                ci[rc - 1] = ni;
                c.set(&ci, round_f32(acc));
            }
        }
    });
    Ok(())
}

/// Writes into the leading `src_dims.len()` entries of `dst` the index of a tensor with
/// extents `src_dims` that broadcasts to the (right-aligned) output index `out`.
fn broadcast_into(src_dims: &[usize], out: &[usize], dst: &mut [usize]) {
    let lead = out.len() - src_dims.len();
    for (i, &d) in src_dims.iter().enumerate() {
        dst[i] = if d == 1 { 0 } else { out[lead + i] };
    }
}

// ---------------------------------------------------------------------------------------
// Pointwise
// ---------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------
// Reduction
// ---------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------
// Layer norm and RMS norm
// ---------------------------------------------------------------------------------------

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
    use crate::data::DataGen;
    use crate::tensor::layout_strides;
    use hipdnn_data_sdk::TensorLayout;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * (1.0 + b.abs())
    }

    fn assert_all_close(got: &[f32], want: &[f32], tol: f32) {
        assert_eq!(got.len(), want.len(), "lengths: {got:?} vs {want:?}");
        for (i, (g, w)) in got.iter().zip(want).enumerate() {
            assert!(
                (g - w).abs() <= tol * (1.0 + w.abs()),
                "element {i}: got {g}, want {w} (all: {got:?} vs {want:?})"
            );
        }
    }

    /// x[i, j] = 4i + j + 1 on a 4×4 single-channel image.
    fn ramp4() -> HostTensor {
        let v: Vec<f32> = (1..=16).map(|v| v as f32).collect();
        HostTensor::from_vec([1, 1, 4, 4], &v)
    }

    fn kernel3() -> HostTensor {
        HostTensor::from_vec(
            [1, 1, 3, 3],
            &[1.0, 2.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, -1.0],
        )
    }

    #[test]
    fn conv_3x3_on_4x4_by_hand() {
        // y[i,j] = x[i,j] + 2x[i,j+1] + x[i+1,j+1] − x[i+2,j+2]
        let mut y = HostTensor::packed([1, 1, 2, 2]);
        conv_fprop(&ramp4(), &kernel3(), &mut y, &ConvParams::new(2)).unwrap();
        assert_eq!(y.logical(), [0.0, 3.0, 12.0, 15.0]);
    }

    #[test]
    fn conv_padding_and_stride_by_hand() {
        // Windows start at (−1, −1), (−1, 1), (1, −1), (1, 1).
        let p = ConvParams::new(2).padding(1).stride(2);
        assert_eq!(
            p.output_dims(&[1, 1, 4, 4], &[1, 1, 3, 3]).unwrap(),
            [1, 1, 2, 2]
        );
        let mut y = HostTensor::packed([1, 1, 2, 2]);
        conv_fprop(&ramp4(), &kernel3(), &mut y, &p).unwrap();
        assert_eq!(y.logical(), [-5.0, -5.0, 5.0, 15.0]);
    }

    #[test]
    fn convolution_mode_flips_the_filter() {
        // Flipped kernel gives y[i,j] = −x[i,j] + x[i+1,j+1] + 2x[i+2,j+1] + x[i+2,j+2]
        // = 12i + 3j + 36.
        let p = ConvParams::new(2).mode(ConvMode::CONVOLUTION);
        let mut y = HostTensor::packed([1, 1, 2, 2]);
        conv_fprop(&ramp4(), &kernel3(), &mut y, &p).unwrap();
        assert_eq!(y.logical(), [36.0, 39.0, 48.0, 51.0]);
    }

    #[test]
    fn dilation_by_hand() {
        // 2×2 filter [[1,2],[3,4]] at dilation 2: 40i + 10j + 78.
        let w = HostTensor::from_vec([1, 1, 2, 2], &[1.0, 2.0, 3.0, 4.0]);
        let p = ConvParams::new(2).dilation(2);
        let mut y = HostTensor::packed([1, 1, 2, 2]);
        conv_fprop(&ramp4(), &w, &mut y, &p).unwrap();
        assert_eq!(y.logical(), [78.0, 88.0, 118.0, 128.0]);
    }

    #[test]
    fn groups_do_not_mix_channels() {
        let x = HostTensor::from_vec([1, 2, 1, 2], &[1.0, 2.0, 10.0, 20.0]);
        let w = HostTensor::from_vec([2, 1, 1, 1], &[2.0, 3.0]);
        let mut y = HostTensor::packed([1, 2, 1, 2]);
        conv_fprop(&x, &w, &mut y, &ConvParams::new(2)).unwrap();
        assert_eq!(y.logical(), [2.0, 4.0, 30.0, 60.0]);
        // Four output channels over two groups: channels 0,1 read input 0; 2,3 input 1.
        let w = HostTensor::from_vec([4, 1, 1, 1], &[1.0, -1.0, 2.0, -2.0]);
        let mut y = HostTensor::packed([1, 4, 1, 2]);
        conv_fprop(&x, &w, &mut y, &ConvParams::new(2)).unwrap();
        assert_eq!(
            y.logical(),
            [1.0, 2.0, -1.0, -2.0, 20.0, 40.0, -20.0, -40.0]
        );
    }

    #[test]
    fn conv_1d_by_hand() {
        let x = HostTensor::from_vec([1, 1, 5], &[1.0, 2.0, 3.0, 4.0, 5.0]);
        let w = HostTensor::from_vec([1, 1, 2], &[1.0, -1.0]);
        let mut p = ConvParams::new(1);
        p.pre_padding = vec![1];
        p.stride = vec![2];
        // Windows at −1, 1, 3: (0 − 1), (2 − 3), (4 − 5).
        let mut y = HostTensor::packed([1, 1, 3]);
        conv_fprop(&x, &w, &mut y, &p).unwrap();
        assert_eq!(y.logical(), [-1.0, -1.0, -1.0]);
    }

    #[test]
    fn conv_rejects_bad_geometry() {
        let x = HostTensor::packed([1, 3, 4, 4]);
        let w = HostTensor::packed([4, 2, 3, 3]);
        let mut y = HostTensor::packed([1, 4, 2, 2]);
        assert!(matches!(
            conv_fprop(&x, &w, &mut y, &ConvParams::new(2)),
            Err(ReferenceError::Shape { .. })
        ));
        let w = HostTensor::packed([4, 3, 5, 5]);
        assert!(conv_fprop(&x, &w, &mut y, &ConvParams::new(2)).is_err());
        let w = HostTensor::packed([4, 3, 3, 3]);
        assert!(matches!(
            conv_fprop(&x, &w, &mut y, &ConvParams::new(2).mode(ConvMode::UNSET)),
            Err(ReferenceError::Unsupported(_))
        ));
        let mut wrong = HostTensor::packed([1, 4, 3, 3]);
        assert!(conv_fprop(&x, &w, &mut wrong, &ConvParams::new(2)).is_err());
    }

    fn dot(a: &HostTensor, b: &HostTensor) -> f64 {
        a.logical()
            .iter()
            .zip(b.logical())
            .map(|(&p, q)| f64::from(p) * f64::from(q))
            .sum()
    }

    /// `<fprop(x, w), dy> == <x, dgrad(dy, w)> == <w, wgrad(x, dy)>`.
    #[test]
    fn dgrad_and_wgrad_are_adjoints_of_fprop() {
        let mut asym = ConvParams::new(2);
        asym.pre_padding = vec![0, 2];
        asym.post_padding = vec![1, 0];
        asym.stride = vec![2, 1];
        asym.dilation = vec![1, 2];
        let cases: Vec<(Vec<usize>, Vec<usize>, ConvParams)> = vec![
            (
                vec![2, 3, 7, 6],
                vec![4, 3, 3, 3],
                ConvParams::new(2).padding(1),
            ),
            (
                vec![1, 4, 9, 9],
                vec![6, 2, 3, 3],
                ConvParams::new(2).padding(1).stride(2),
            ),
            (
                vec![1, 4, 8, 7],
                vec![4, 1, 3, 3],
                ConvParams::new(2).dilation(2).padding(2),
            ),
            (vec![2, 2, 7, 8], vec![3, 2, 2, 3], asym),
            (
                vec![2, 3, 11],
                vec![2, 3, 3],
                ConvParams::new(1).padding(1).stride(3),
            ),
            (
                vec![1, 2, 4, 5, 5],
                vec![3, 2, 3, 2, 3],
                ConvParams::new(3).padding(1),
            ),
            (
                vec![1, 2, 6, 6],
                vec![2, 2, 3, 3],
                ConvParams::new(2).mode(ConvMode::CONVOLUTION).stride(2),
            ),
        ];
        let mut dg = DataGen::new(7);
        for (xd, wd, p) in cases {
            let yd = p.output_dims(&xd, &wd).unwrap();
            let mut x = HostTensor::packed(xd.clone());
            let mut w = HostTensor::packed(wd.clone());
            let mut dy = HostTensor::packed(yd.clone());
            dg.fill(&mut x, -1.0, 1.0);
            dg.fill(&mut w, -1.0, 1.0);
            dg.fill(&mut dy, -1.0, 1.0);
            let mut y = HostTensor::packed(yd.clone());
            conv_fprop(&x, &w, &mut y, &p).unwrap();
            let mut dx = HostTensor::packed(xd.clone());
            conv_dgrad(&dy, &w, &mut dx, &p).unwrap();
            let mut dw = HostTensor::packed(wd.clone());
            conv_wgrad(&x, &dy, &mut dw, &p).unwrap();
            let (a, b, c) = (dot(&y, &dy), dot(&x, &dx), dot(&w, &dw));
            assert!(a.abs() > 1e-3, "degenerate case {xd:?} {wd:?}");
            assert!(
                close(a, b, 1e-5),
                "{xd:?} {wd:?} {p:?}: <y,dy> {a} vs <x,dx> {b}"
            );
            assert!(
                close(a, c, 1e-5),
                "{xd:?} {wd:?} {p:?}: <y,dy> {a} vs <w,dw> {c}"
            );
        }
    }

    #[test]
    fn nchw_and_nhwc_convolutions_agree() {
        let p = ConvParams::new(2).padding(1).stride(2);
        let (xd, wd) = ([2, 4, 7, 7], [6, 2, 3, 3]);
        let yd = p.output_dims(&xd, &wd).unwrap();
        let mut dg = DataGen::new(3);
        let mut x = HostTensor::packed(xd);
        let mut w = HostTensor::packed(wd);
        dg.fill(&mut x, -1.0, 1.0);
        dg.fill(&mut w, -1.0, 1.0);
        let nhwc = |t: &HostTensor| t.relayout(layout_strides(&t.dims, TensorLayout::Nhwc));
        let mut y1 = HostTensor::packed(yd.clone());
        conv_fprop(&x, &w, &mut y1, &p).unwrap();
        let mut y2 = HostTensor::with_layout(yd.clone(), TensorLayout::Nhwc);
        conv_fprop(&nhwc(&x), &nhwc(&w), &mut y2, &p).unwrap();
        assert_ne!(y1.data, y2.data, "the storage orders differ");
        assert_eq!(y1.logical(), y2.logical());

        let mut dx1 = HostTensor::packed(xd);
        conv_dgrad(&y1, &w, &mut dx1, &p).unwrap();
        let mut dx2 = HostTensor::with_layout(xd, TensorLayout::Nhwc);
        conv_dgrad(&y2, &nhwc(&w), &mut dx2, &p).unwrap();
        assert_eq!(dx1.logical(), dx2.logical());
    }

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

    #[test]
    fn matmul_broadcasts_batch_dims() {
        let a = HostTensor::from_vec([2, 2, 2], &[1.0, 2.0, 3.0, 4.0, 0.0, 1.0, 1.0, 0.0]);
        let b = HostTensor::from_vec([1, 2, 1], &[1.0, 10.0]);
        let mut c = HostTensor::packed([2, 2, 1]);
        matmul(&a, &b, &mut c).unwrap();
        assert_eq!(c.logical(), [21.0, 43.0, 10.0, 1.0]);
        // Rank-2 b against rank-4 c: [2, 1, 2, 2] × [2, 1] → [2, 3, 2, 1] needs a to
        // repeat over dim 1.
        let a4 = HostTensor::from_vec([2, 1, 2, 2], &[1.0, 2.0, 3.0, 4.0, 0.0, 1.0, 1.0, 0.0]);
        let b2 = HostTensor::from_vec([2, 1], &[1.0, 10.0]);
        let mut c4 = HostTensor::packed([2, 3, 2, 1]);
        matmul(&a4, &b2, &mut c4).unwrap();
        assert_eq!(
            c4.logical(),
            [
                21.0, 43.0, 21.0, 43.0, 21.0, 43.0, 10.0, 1.0, 10.0, 1.0, 10.0, 1.0
            ]
        );
        // Transposed storage of b (column-major) gives the same product.
        let bt = HostTensor::from_logical([2, 2], [1, 2], &[1.0, 2.0, 3.0, 4.0]);
        let a2 = HostTensor::from_vec([1, 2], &[1.0, 1.0]);
        let mut c2 = HostTensor::packed([1, 2]);
        matmul(&a2, &bt, &mut c2).unwrap();
        assert_eq!(c2.logical(), [4.0, 6.0]);
        let mut bad = HostTensor::packed([3, 2, 1]);
        assert!(matmul(&a, &b, &mut bad).is_err());
    }

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
