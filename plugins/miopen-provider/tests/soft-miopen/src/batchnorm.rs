//! Spatial batch normalization: inference (from a variance or an inverse variance),
//! training with running statistics, backward, each optionally fused with a
//! `PASTHRU`, `RELU`, `CLIPPEDRELU` or `CLAMP` activation, computed by the reference
//! kernels.
//!
//! `x`/`y` (and `dy`/`dx`) have identical dims, rank 4 or 5, one of half, float or
//! bfloat16. Every per-channel tensor (scale, bias, mean, variance, their gradients)
//! is float with dims `[1, C, 1, 1]` (`[1, C, 1, 1, 1]` at rank 5); all descriptors are
//! required, as MIOpen dereferences them. Only `alpha = 1, beta = 0` is implemented
//! for the blending scalars (anything else is `miopenStatusNotImplemented`).
//! `miopenBNPerActivation` is not implemented.

use std::ffi::{c_double, c_void};

use hipdnn_reference::kernels::{
    RunningStats, batchnorm_backward, batchnorm_inference, batchnorm_inference_variance,
    batchnorm_training,
};
use hipdnn_reference::tensor::{HostTensor, for_each_index};

use crate::objects::{ActivDesc, TensorDesc};
use crate::pointwise::{activate, activate_backward, check_fusable};
use crate::state::{
    Arg, R, State, bad, miopen_entry, not_impl, render_args, render_scalar, scalar,
};
use crate::sys::{
    miopen_fn, miopenActivationDescriptor_t, miopenBatchNormMode_t, miopenDataType_t,
    miopenHandle_t, miopenStatus_t, miopenTensorDescriptor_t,
};

type T = miopenTensorDescriptor_t;

fn check_mode(mode: miopenBatchNormMode_t) -> R<()> {
    match mode {
        miopenBatchNormMode_t::miopenBNSpatial => Ok(()),
        miopenBatchNormMode_t::miopenBNPerActivation => Err(not_impl(
            "miopenBNPerActivation (only miopenBNSpatial is implemented)",
        )),
        other => Err(bad(format!("unknown batch norm mode {other}"))),
    }
}

/// Requires `*alpha == 1` and `*beta == 0`.
///
/// # Safety
/// Each pointer, when non-null, points to a host float.
unsafe fn unit_blend(alpha: *const c_void, beta: *const c_void, names: [&str; 2]) -> R<()> {
    // SAFETY: forwarded.
    let (a, b) = unsafe { (scalar(alpha, names[0])?, scalar(beta, names[1])?) };
    if a != 1.0 || b != 0.0 {
        return Err(not_impl(format!(
            "{} = {a}, {} = {b}: only 1 and 0 are implemented",
            names[0], names[1]
        )));
    }
    Ok(())
}

fn check_epsilon(epsilon: f64) -> R<()> {
    if epsilon.is_finite() && epsilon >= 0.0 {
        Ok(())
    } else {
        Err(bad(format!(
            "epsilon {epsilon} must be finite and non-negative"
        )))
    }
}

/// The data tensors: identical dims of rank 4 or 5, one type.
fn data_descs(st: &State, descs: &[(T, &str)]) -> R<Vec<TensorDesc>> {
    let mut out: Vec<TensorDesc> = Vec::new();
    for &(d, name) in descs {
        let t = st.objects.tensor(d as usize, name)?.clone();
        if !(4..=5).contains(&t.rank()) {
            return Err(bad(format!("{name} has rank {}, not 4 or 5", t.rank())));
        }
        if let Some(first) = out.first() {
            let first_name = descs[0].1;
            if t.dims != first.dims {
                return Err(bad(format!(
                    "{name} dims {:?} differ from {first_name} dims {:?}",
                    t.dims, first.dims
                )));
            }
            if t.dtype != first.dtype {
                return Err(bad(format!(
                    "{name} type {} differs from {first_name} type {}",
                    t.dtype, first.dtype
                )));
            }
        }
        out.push(t);
    }
    Ok(out)
}

/// A per-channel descriptor: float, `[1, C, 1, 1(, 1)]` for `x`.
fn param_desc(st: &State, d: T, name: &str, x: &TensorDesc) -> R<TensorDesc> {
    let t = st.objects.tensor(d as usize, name)?.clone();
    let mut want = vec![1; x.rank()];
    want[1] = x.dims[1];
    if t.dims != want {
        return Err(bad(format!(
            "{name} has dims {:?}, expected {want:?}",
            t.dims
        )));
    }
    if t.dtype != miopenDataType_t::miopenFloat {
        return Err(bad(format!("{name} has type {}, expected float", t.dtype)));
    }
    Ok(t)
}

/// Writes per-channel `values` (channel order) as `desc` lays them out.
fn write_param(st: &State, desc: &TensorDesc, p: *mut c_void, values: &[f32], what: &str) -> R<()> {
    let t = HostTensor::from_logical(desc.dims.clone(), desc.strides.clone(), values);
    st.mem.write(desc, p, &t, what)
}

/// The activation of the fused variants (checked fusable).
fn fused_activation(
    st: &State,
    activ: Option<miopenActivationDescriptor_t>,
    who: &str,
) -> R<Option<ActivDesc>> {
    let Some(a) = activ else { return Ok(None) };
    let a = st.objects.activation(a as usize, "activDesc")?;
    check_fusable(a.mode, who, true)?;
    Ok(Some(a))
}

/// Applies `act` to every element of `y`.
fn apply(act: Option<&ActivDesc>, y: &mut HostTensor) {
    if let Some(act) = act {
        let dims = y.dims.clone();
        for_each_index(&dims, |idx| {
            let v = activate(act, f64::from(y.at(idx)));
            y.set(idx, v as f32);
        });
    }
}

fn reference(e: hipdnn_reference::kernels::ReferenceError) -> crate::state::Fail {
    bad(format!("reference: {e}"))
}

/// How inference normalises.
#[derive(Debug, Clone, Copy)]
enum Variance {
    /// `1 / sqrt(variance + epsilon)`.
    Plain(f64),
    /// The inverse is given.
    Inverse,
}

#[derive(Debug, Clone, Copy)]
struct InferenceArgs {
    handle: miopenHandle_t,
    mode: miopenBatchNormMode_t,
    alpha: *mut c_void,
    beta: *mut c_void,
    x_desc: T,
    x: *const c_void,
    y_desc: T,
    y: *mut c_void,
    scale_desc: T,
    bias_desc: T,
    mean_desc: T,
    var_desc: T,
    scale: *mut c_void,
    bias: *mut c_void,
    mean: *mut c_void,
    variance: *mut c_void,
    how: Variance,
    activ: Option<miopenActivationDescriptor_t>,
}

impl InferenceArgs {
    fn render(&self, st: &State) -> String {
        // SAFETY: MIOpen's contract: alpha and beta are host floats when non-null.
        let (a, b) = unsafe { (render_scalar(self.alpha), render_scalar(self.beta)) };
        let mut args = vec![
            Arg::Obj(self.handle as usize),
            Arg::Text(self.mode.to_string()),
            Arg::Text(a),
            Arg::Text(b),
            Arg::Obj(self.x_desc as usize),
            Arg::Ptr(self.x),
            Arg::Obj(self.y_desc as usize),
            Arg::Ptr(self.y),
            Arg::Obj(self.scale_desc as usize),
            Arg::Obj(self.bias_desc as usize),
            Arg::Obj(self.mean_desc as usize),
            Arg::Obj(self.var_desc as usize),
            Arg::Ptr(self.scale),
            Arg::Ptr(self.bias),
            Arg::Ptr(self.mean),
            Arg::Ptr(self.variance),
        ];
        if let Variance::Plain(eps) = self.how {
            args.push(Arg::Text(eps.to_string()));
        }
        if let Some(a) = self.activ {
            args.push(Arg::Obj(a as usize));
        }
        render_args(st, &args)
    }

    fn run(&self, st: &mut State, who: &str) -> R<String> {
        st.objects.handle(self.handle as usize)?;
        check_mode(self.mode)?;
        // SAFETY: MIOpen's contract: alpha and beta are host floats when non-null.
        unsafe { unit_blend(self.alpha, self.beta, ["alpha", "beta"]) }?;
        let var_name = match self.how {
            Variance::Plain(eps) => {
                check_epsilon(eps)?;
                "estimatedVarianceDesc"
            }
            Variance::Inverse => "estimatedInvVarianceDesc",
        };
        let act = fused_activation(st, self.activ, who)?;
        let d = data_descs(st, &[(self.x_desc, "xDesc"), (self.y_desc, "yDesc")])?;
        let (xd, yd) = (&d[0], &d[1]);
        let scale_d = param_desc(st, self.scale_desc, "scaleDesc", xd)?;
        let bias_d = param_desc(st, self.bias_desc, "biasDesc", xd)?;
        let mean_d = param_desc(st, self.mean_desc, "estimatedMeanDesc", xd)?;
        let var_d = param_desc(st, self.var_desc, var_name, xd)?;
        st.mem.check_tensor(yd, self.y, "y")?;
        let xt = st.mem.read(xd, self.x, "x")?;
        let scale = st.mem.read(&scale_d, self.scale, "scale")?;
        let bias = st.mem.read(&bias_d, self.bias, "bias")?;
        let mean = st.mem.read(&mean_d, self.mean, "estimatedMean")?;
        let var = st.mem.read(&var_d, self.variance, "estimatedVariance")?;
        let mut yt = yd.host();
        match self.how {
            Variance::Plain(eps) => {
                batchnorm_inference_variance(&xt, &mean, &var, &scale, &bias, eps as f32, &mut yt)
            }
            Variance::Inverse => batchnorm_inference(&xt, &mean, &var, &scale, &bias, &mut yt),
        }
        .map_err(reference)?;
        apply(act.as_ref(), &mut yt);
        st.mem.write(yd, self.y, &yt, "y")?;
        Ok(String::new())
    }
}

/// `y = scale·(x − mean)/sqrt(variance + epsilon) + bias`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn miopenBatchNormalizationForwardInference_V2(
    handle: miopenHandle_t,
    mode: miopenBatchNormMode_t,
    alpha: *mut c_void,
    beta: *mut c_void,
    x_desc: T,
    x: *const c_void,
    y_desc: T,
    y: *mut c_void,
    scale_desc: T,
    bias_desc: T,
    mean_desc: T,
    var_desc: T,
    scale: *mut c_void,
    bias: *mut c_void,
    mean: *mut c_void,
    variance: *mut c_void,
    epsilon: c_double,
) -> miopenStatus_t {
    let a = InferenceArgs {
        handle,
        mode,
        alpha,
        beta,
        x_desc,
        x,
        y_desc,
        y,
        scale_desc,
        bias_desc,
        mean_desc,
        var_desc,
        scale,
        bias,
        mean,
        variance,
        how: Variance::Plain(epsilon),
        activ: None,
    };
    const NAME: &str = "miopenBatchNormalizationForwardInference_V2";
    miopen_entry(NAME, |st| a.render(st), |st| a.run(st, NAME))
}
const _: miopen_fn::miopenBatchNormalizationForwardInference_V2 =
    miopenBatchNormalizationForwardInference_V2;

/// `y = scale·(x − mean)·invVariance + bias` (no epsilon).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn miopenBatchNormalizationForwardInferenceInvVariance(
    handle: miopenHandle_t,
    mode: miopenBatchNormMode_t,
    alpha: *mut c_void,
    beta: *mut c_void,
    x_desc: T,
    x: *const c_void,
    y_desc: T,
    y: *mut c_void,
    scale_desc: T,
    bias_desc: T,
    mean_desc: T,
    inv_var_desc: T,
    scale: *mut c_void,
    bias: *mut c_void,
    mean: *mut c_void,
    inv_variance: *mut c_void,
) -> miopenStatus_t {
    let a = InferenceArgs {
        handle,
        mode,
        alpha,
        beta,
        x_desc,
        x,
        y_desc,
        y,
        scale_desc,
        bias_desc,
        mean_desc,
        var_desc: inv_var_desc,
        scale,
        bias,
        mean,
        variance: inv_variance,
        how: Variance::Inverse,
        activ: None,
    };
    const NAME: &str = "miopenBatchNormalizationForwardInferenceInvVariance";
    miopen_entry(NAME, |st| a.render(st), |st| a.run(st, NAME))
}
const _: miopen_fn::miopenBatchNormalizationForwardInferenceInvVariance =
    miopenBatchNormalizationForwardInferenceInvVariance;

/// Inference from a variance, then the activation.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn miopenBatchNormForwardInferenceActivation(
    handle: miopenHandle_t,
    mode: miopenBatchNormMode_t,
    alpha: *mut c_void,
    beta: *mut c_void,
    x_desc: T,
    x: *const c_void,
    y_desc: T,
    y: *mut c_void,
    scale_desc: T,
    bias_desc: T,
    mean_desc: T,
    var_desc: T,
    scale: *mut c_void,
    bias: *mut c_void,
    mean: *mut c_void,
    variance: *mut c_void,
    epsilon: c_double,
    activ: miopenActivationDescriptor_t,
) -> miopenStatus_t {
    let a = InferenceArgs {
        handle,
        mode,
        alpha,
        beta,
        x_desc,
        x,
        y_desc,
        y,
        scale_desc,
        bias_desc,
        mean_desc,
        var_desc,
        scale,
        bias,
        mean,
        variance,
        how: Variance::Plain(epsilon),
        activ: Some(activ),
    };
    const NAME: &str = "miopenBatchNormForwardInferenceActivation";
    miopen_entry(NAME, |st| a.render(st), |st| a.run(st, NAME))
}
const _: miopen_fn::miopenBatchNormForwardInferenceActivation =
    miopenBatchNormForwardInferenceActivation;

/// Inference from an inverse variance, then the activation.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn miopenBatchNormForwardInferenceActivationInvVariance(
    handle: miopenHandle_t,
    mode: miopenBatchNormMode_t,
    alpha: *mut c_void,
    beta: *mut c_void,
    x_desc: T,
    x: *const c_void,
    y_desc: T,
    y: *mut c_void,
    scale_desc: T,
    bias_desc: T,
    mean_desc: T,
    inv_var_desc: T,
    scale: *mut c_void,
    bias: *mut c_void,
    mean: *mut c_void,
    inv_variance: *mut c_void,
    activ: miopenActivationDescriptor_t,
) -> miopenStatus_t {
    let a = InferenceArgs {
        handle,
        mode,
        alpha,
        beta,
        x_desc,
        x,
        y_desc,
        y,
        scale_desc,
        bias_desc,
        mean_desc,
        var_desc: inv_var_desc,
        scale,
        bias,
        mean,
        variance: inv_variance,
        how: Variance::Inverse,
        activ: Some(activ),
    };
    const NAME: &str = "miopenBatchNormForwardInferenceActivationInvVariance";
    miopen_entry(NAME, |st| a.render(st), |st| a.run(st, NAME))
}
const _: miopen_fn::miopenBatchNormForwardInferenceActivationInvVariance =
    miopenBatchNormForwardInferenceActivationInvVariance;

// ---------------------------------------------------------------------------------
// Training
// ---------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy)]
struct TrainingArgs {
    handle: miopenHandle_t,
    mode: miopenBatchNormMode_t,
    alpha: *mut c_void,
    beta: *mut c_void,
    x_desc: T,
    x: *const c_void,
    y_desc: T,
    y: *mut c_void,
    scale_desc: T,
    bias_desc: T,
    saved_mean_desc: T,
    saved_var_desc: T,
    scale: *mut c_void,
    bias: *mut c_void,
    exp_avg_factor: f64,
    prev_mean: *const c_void,
    prev_var: *const c_void,
    next_mean: *mut c_void,
    next_var: *mut c_void,
    epsilon: f64,
    saved_mean: *mut c_void,
    saved_inv_var: *mut c_void,
    activ: Option<miopenActivationDescriptor_t>,
}

impl TrainingArgs {
    fn render(&self, st: &State) -> String {
        // SAFETY: MIOpen's contract: alpha and beta are host floats when non-null.
        let (a, b) = unsafe { (render_scalar(self.alpha), render_scalar(self.beta)) };
        let mut args = vec![
            Arg::Obj(self.handle as usize),
            Arg::Text(self.mode.to_string()),
            Arg::Text(a),
            Arg::Text(b),
            Arg::Obj(self.x_desc as usize),
            Arg::Ptr(self.x),
            Arg::Obj(self.y_desc as usize),
            Arg::Ptr(self.y),
            Arg::Obj(self.scale_desc as usize),
            Arg::Obj(self.bias_desc as usize),
            Arg::Obj(self.saved_mean_desc as usize),
            Arg::Obj(self.saved_var_desc as usize),
            Arg::Ptr(self.scale),
            Arg::Ptr(self.bias),
            Arg::Text(self.exp_avg_factor.to_string()),
            Arg::Ptr(self.prev_mean),
            Arg::Ptr(self.prev_var),
            Arg::Ptr(self.next_mean),
            Arg::Ptr(self.next_var),
            Arg::Text(self.epsilon.to_string()),
            Arg::Ptr(self.saved_mean),
            Arg::Ptr(self.saved_inv_var),
        ];
        if let Some(a) = self.activ {
            args.push(Arg::Obj(a as usize));
        }
        render_args(st, &args)
    }

    fn run(&self, st: &mut State, who: &str) -> R<String> {
        st.objects.handle(self.handle as usize)?;
        check_mode(self.mode)?;
        // SAFETY: MIOpen's contract: alpha and beta are host floats when non-null.
        unsafe { unit_blend(self.alpha, self.beta, ["alpha", "beta"]) }?;
        check_epsilon(self.epsilon)?;
        let act = fused_activation(st, self.activ, who)?;
        let d = data_descs(st, &[(self.x_desc, "xDesc"), (self.y_desc, "yDesc")])?;
        let (xd, yd) = (&d[0], &d[1]);
        let scale_d = param_desc(st, self.scale_desc, "scaleDesc", xd)?;
        let bias_d = param_desc(st, self.bias_desc, "biasDesc", xd)?;
        let mean_d = param_desc(st, self.saved_mean_desc, "savedMeanDesc", xd)?;
        let var_d = param_desc(st, self.saved_var_desc, "savedVarDesc", xd)?;
        let running = [
            self.prev_mean.is_null(),
            self.prev_var.is_null(),
            self.next_mean.is_null(),
            self.next_var.is_null(),
        ];
        let running = match running {
            [true, true, true, true] => false,
            [false, false, false, false] => true,
            _ => {
                return Err(bad(
                    "prevRunningMean, prevRunningVariance, nextRunningMean and nextRunningVariance \
                     must be all null (no running statistics) or all non-null",
                ));
            }
        };
        if running && !(0.0..=1.0).contains(&self.exp_avg_factor) {
            return Err(bad(format!(
                "expAvgFactor {} is not in [0, 1]",
                self.exp_avg_factor
            )));
        }
        // Every output checked before anything is written.
        st.mem.check_tensor(yd, self.y, "y")?;
        if running {
            st.mem
                .check_tensor(&mean_d, self.next_mean, "nextRunningMean")?;
            st.mem
                .check_tensor(&var_d, self.next_var, "nextRunningVariance")?;
        }
        if !self.saved_mean.is_null() {
            st.mem.check_tensor(&mean_d, self.saved_mean, "savedMean")?;
        }
        if !self.saved_inv_var.is_null() {
            st.mem
                .check_tensor(&var_d, self.saved_inv_var, "savedInvVariance")?;
        }
        let xt = st.mem.read(xd, self.x, "x")?;
        let scale = st.mem.read(&scale_d, self.scale, "scale")?;
        let bias = st.mem.read(&bias_d, self.bias, "bias")?;
        let prev = if running {
            Some((
                st.mem.read(&mean_d, self.prev_mean, "prevRunningMean")?,
                st.mem.read(&var_d, self.prev_var, "prevRunningVariance")?,
            ))
        } else {
            None
        };
        let stats_in = prev.as_ref().map(|(m, v)| RunningStats {
            mean: m,
            variance: v,
            momentum: self.exp_avg_factor as f32,
        });
        let mut yt = yd.host();
        let stats = batchnorm_training(&xt, &scale, &bias, self.epsilon as f32, stats_in, &mut yt)
            .map_err(reference)?;
        apply(act.as_ref(), &mut yt);
        st.mem.write(yd, self.y, &yt, "y")?;
        if let (Some(m), Some(v)) = (&stats.next_running_mean, &stats.next_running_variance) {
            write_param(st, &mean_d, self.next_mean, m, "nextRunningMean")?;
            write_param(st, &var_d, self.next_var, v, "nextRunningVariance")?;
        }
        if !self.saved_mean.is_null() {
            write_param(st, &mean_d, self.saved_mean, &stats.mean, "savedMean")?;
        }
        if !self.saved_inv_var.is_null() {
            write_param(
                st,
                &var_d,
                self.saved_inv_var,
                &stats.inv_variance,
                "savedInvVariance",
            )?;
        }
        Ok(String::new())
    }
}

/// Training forward: batch statistics (biased variance to normalise), running
/// statistics `next = (1 − f)·prev + f·batch` with the unbiased variance `·M/(M − 1)`
/// (all four running pointers null, or all non-null; prev and next may be the same),
/// saved mean and inverse variance when their pointers are non-null.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn miopenBatchNormalizationForwardTraining_V3(
    handle: miopenHandle_t,
    mode: miopenBatchNormMode_t,
    alpha: *mut c_void,
    beta: *mut c_void,
    x_desc: T,
    x: *const c_void,
    y_desc: T,
    y: *mut c_void,
    scale_desc: T,
    bias_desc: T,
    saved_mean_desc: T,
    saved_var_desc: T,
    scale: *mut c_void,
    bias: *mut c_void,
    exp_avg_factor: c_double,
    prev_running_mean: *const c_void,
    prev_running_variance: *const c_void,
    next_running_mean: *mut c_void,
    next_running_variance: *mut c_void,
    epsilon: c_double,
    saved_mean: *mut c_void,
    saved_inv_variance: *mut c_void,
) -> miopenStatus_t {
    let a = TrainingArgs {
        handle,
        mode,
        alpha,
        beta,
        x_desc,
        x,
        y_desc,
        y,
        scale_desc,
        bias_desc,
        saved_mean_desc,
        saved_var_desc,
        scale,
        bias,
        exp_avg_factor,
        prev_mean: prev_running_mean,
        prev_var: prev_running_variance,
        next_mean: next_running_mean,
        next_var: next_running_variance,
        epsilon,
        saved_mean,
        saved_inv_var: saved_inv_variance,
        activ: None,
    };
    const NAME: &str = "miopenBatchNormalizationForwardTraining_V3";
    miopen_entry(NAME, |st| a.render(st), |st| a.run(st, NAME))
}
const _: miopen_fn::miopenBatchNormalizationForwardTraining_V3 =
    miopenBatchNormalizationForwardTraining_V3;

/// Training forward, then the activation on `y`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn miopenBatchNormForwardTrainingActivation_V2(
    handle: miopenHandle_t,
    mode: miopenBatchNormMode_t,
    alpha: *mut c_void,
    beta: *mut c_void,
    x_desc: T,
    x: *const c_void,
    y_desc: T,
    y: *mut c_void,
    scale_desc: T,
    bias_desc: T,
    saved_mean_desc: T,
    saved_var_desc: T,
    scale: *mut c_void,
    bias: *mut c_void,
    exp_avg_factor: c_double,
    prev_running_mean: *const c_void,
    prev_running_variance: *const c_void,
    next_running_mean: *mut c_void,
    next_running_variance: *mut c_void,
    epsilon: c_double,
    saved_mean: *mut c_void,
    saved_inv_variance: *mut c_void,
    activ: miopenActivationDescriptor_t,
) -> miopenStatus_t {
    let a = TrainingArgs {
        handle,
        mode,
        alpha,
        beta,
        x_desc,
        x,
        y_desc,
        y,
        scale_desc,
        bias_desc,
        saved_mean_desc,
        saved_var_desc,
        scale,
        bias,
        exp_avg_factor,
        prev_mean: prev_running_mean,
        prev_var: prev_running_variance,
        next_mean: next_running_mean,
        next_var: next_running_variance,
        epsilon,
        saved_mean,
        saved_inv_var: saved_inv_variance,
        activ: Some(activ),
    };
    const NAME: &str = "miopenBatchNormForwardTrainingActivation_V2";
    miopen_entry(NAME, |st| a.render(st), |st| a.run(st, NAME))
}
const _: miopen_fn::miopenBatchNormForwardTrainingActivation_V2 =
    miopenBatchNormForwardTrainingActivation_V2;

// ---------------------------------------------------------------------------------
// Backward
// ---------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy)]
struct BackwardArgs {
    handle: miopenHandle_t,
    mode: miopenBatchNormMode_t,
    alpha_data: *const c_void,
    beta_data: *const c_void,
    alpha_param: *const c_void,
    beta_param: *const c_void,
    x_desc: T,
    x: *const c_void,
    dy_desc: T,
    dy: *const c_void,
    dx_desc: T,
    dx: *mut c_void,
    scale_desc: T,
    bias_desc: T,
    saved_mean_desc: T,
    saved_var_desc: T,
    scale: *const c_void,
    /// Only for the activation variant (the forward output is recomputed).
    bias: Option<*const c_void>,
    dscale: *mut c_void,
    dbias: *mut c_void,
    epsilon: f64,
    saved_mean: *const c_void,
    saved_inv_var: *const c_void,
    activ: Option<miopenActivationDescriptor_t>,
}

impl BackwardArgs {
    fn render(&self, st: &State) -> String {
        // SAFETY: MIOpen's contract: the four scalars are host floats when non-null.
        let s = unsafe {
            [
                render_scalar(self.alpha_data),
                render_scalar(self.beta_data),
                render_scalar(self.alpha_param),
                render_scalar(self.beta_param),
            ]
        };
        let mut args = vec![
            Arg::Obj(self.handle as usize),
            Arg::Text(self.mode.to_string()),
        ];
        args.extend(s.into_iter().map(Arg::Text));
        args.extend([
            Arg::Obj(self.x_desc as usize),
            Arg::Ptr(self.x),
            Arg::Obj(self.dy_desc as usize),
            Arg::Ptr(self.dy),
            Arg::Obj(self.dx_desc as usize),
            Arg::Ptr(self.dx),
            Arg::Obj(self.scale_desc as usize),
            Arg::Obj(self.bias_desc as usize),
            Arg::Obj(self.saved_mean_desc as usize),
            Arg::Obj(self.saved_var_desc as usize),
            Arg::Ptr(self.scale),
        ]);
        if let Some(b) = self.bias {
            args.push(Arg::Ptr(b));
        }
        args.extend([
            Arg::Ptr(self.dscale),
            Arg::Ptr(self.dbias),
            Arg::Text(self.epsilon.to_string()),
            Arg::Ptr(self.saved_mean),
            Arg::Ptr(self.saved_inv_var),
        ]);
        if let Some(a) = self.activ {
            args.push(Arg::Obj(a as usize));
        }
        render_args(st, &args)
    }

    fn run(&self, st: &mut State, who: &str) -> R<String> {
        st.objects.handle(self.handle as usize)?;
        check_mode(self.mode)?;
        // SAFETY: MIOpen's contract: the four scalars are host floats when non-null.
        unsafe {
            unit_blend(
                self.alpha_data,
                self.beta_data,
                ["alphaDataDiff", "betaDataDiff"],
            )?;
            unit_blend(
                self.alpha_param,
                self.beta_param,
                ["alphaParamDiff", "betaParamDiff"],
            )?;
        }
        check_epsilon(self.epsilon)?;
        let act = fused_activation(st, self.activ, who)?;
        let d = data_descs(
            st,
            &[
                (self.x_desc, "xDesc"),
                (self.dy_desc, "dyDesc"),
                (self.dx_desc, "dxDesc"),
            ],
        )?;
        let (xd, dyd, dxd) = (&d[0], &d[1], &d[2]);
        let scale_d = param_desc(st, self.scale_desc, "scaleDesc", xd)?;
        let bias_d = param_desc(st, self.bias_desc, "biasDesc", xd)?;
        let mean_d = param_desc(st, self.saved_mean_desc, "savedMeanDesc", xd)?;
        let var_d = param_desc(st, self.saved_var_desc, "savedVarDesc", xd)?;
        let saved = match (self.saved_mean.is_null(), self.saved_inv_var.is_null()) {
            (false, false) => true,
            (true, true) => false,
            _ => {
                return Err(bad(
                    "savedMean and savedInvVariance must be both null (recomputed from x) or both non-null",
                ));
            }
        };
        st.mem.check_tensor(dxd, self.dx, "dx")?;
        st.mem
            .check_tensor(&scale_d, self.dscale, "resultBnScaleDiff")?;
        st.mem
            .check_tensor(&bias_d, self.dbias, "resultBnBiasDiff")?;
        let xt = st.mem.read(xd, self.x, "x")?;
        let dy = st.mem.read(dyd, self.dy, "dy")?;
        let scale = st.mem.read(&scale_d, self.scale, "bnScale")?;
        let (mean, inv) = if saved {
            (
                st.mem.read(&mean_d, self.saved_mean, "savedMean")?,
                st.mem
                    .read(&var_d, self.saved_inv_var, "savedInvVariance")?,
            )
        } else {
            let c = xd.dims[1];
            let ones = HostTensor::from_vec([c], &vec![1.0; c]);
            let zeros = HostTensor::from_vec([c], &vec![0.0; c]);
            let mut scratch = xd.host();
            let s = batchnorm_training(&xt, &ones, &zeros, self.epsilon as f32, None, &mut scratch)
                .map_err(reference)?;
            (
                HostTensor::from_vec([c], &s.mean),
                HostTensor::from_vec([c], &s.inv_variance),
            )
        };
        let grad = match (act, self.bias) {
            (Some(act), Some(bias_p)) => {
                let bias = st.mem.read(&bias_d, bias_p, "bnBias")?;
                let (m, iv, sc, b) = (
                    mean.logical(),
                    inv.logical(),
                    scale.logical(),
                    bias.logical(),
                );
                let mut dz = dy.clone();
                for_each_index(&xd.dims, |idx| {
                    let ch = idx[1];
                    let xhat = (f64::from(xt.at(idx)) - f64::from(m[ch])) * f64::from(iv[ch]);
                    let z = f64::from(sc[ch]) * xhat + f64::from(b[ch]);
                    dz.set(
                        idx,
                        activate_backward(&act, z, f64::from(dy.at(idx))) as f32,
                    );
                });
                dz
            }
            _ => dy,
        };
        let mut dx = dxd.host();
        let g = batchnorm_backward(&grad, &xt, &mean, &inv, &scale, &mut dx).map_err(reference)?;
        st.mem.write(dxd, self.dx, &dx, "dx")?;
        write_param(st, &scale_d, self.dscale, &g.dscale, "resultBnScaleDiff")?;
        write_param(st, &bias_d, self.dbias, &g.dbias, "resultBnBiasDiff")?;
        Ok(String::new())
    }
}

/// Backward: `dx`, `dscale`, `dbias` from the saved mean and inverse variance (both
/// non-null), or from statistics recomputed from `x` with `epsilon` (both null).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn miopenBatchNormalizationBackward_V2(
    handle: miopenHandle_t,
    mode: miopenBatchNormMode_t,
    alpha_data: *const c_void,
    beta_data: *const c_void,
    alpha_param: *const c_void,
    beta_param: *const c_void,
    x_desc: T,
    x: *const c_void,
    dy_desc: T,
    dy: *const c_void,
    dx_desc: T,
    dx: *mut c_void,
    scale_desc: T,
    bias_desc: T,
    saved_mean_desc: T,
    saved_var_desc: T,
    scale: *const c_void,
    dscale: *mut c_void,
    dbias: *mut c_void,
    epsilon: c_double,
    saved_mean: *const c_void,
    saved_inv_variance: *const c_void,
) -> miopenStatus_t {
    let a = BackwardArgs {
        handle,
        mode,
        alpha_data,
        beta_data,
        alpha_param,
        beta_param,
        x_desc,
        x,
        dy_desc,
        dy,
        dx_desc,
        dx,
        scale_desc,
        bias_desc,
        saved_mean_desc,
        saved_var_desc,
        scale,
        bias: None,
        dscale,
        dbias,
        epsilon,
        saved_mean,
        saved_inv_var: saved_inv_variance,
        activ: None,
    };
    const NAME: &str = "miopenBatchNormalizationBackward_V2";
    miopen_entry(NAME, |st| a.render(st), |st| a.run(st, NAME))
}
const _: miopen_fn::miopenBatchNormalizationBackward_V2 = miopenBatchNormalizationBackward_V2;

/// Backward through the activation: the forward output `z = scale·x̂ + bias` is
/// recomputed, `dy` is passed where the activation passes `z` through (`lo < z ≤ hi`:
/// RELU `0 < z`, CLIPPEDRELU `0 < z ≤ α`, CLAMP `α < z ≤ β`, PASTHRU everywhere; as
/// MIOpen's fused kernels) and 0 elsewhere, then the batch norm backward runs on that
/// gradient.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn miopenBatchNormBackwardActivation(
    handle: miopenHandle_t,
    mode: miopenBatchNormMode_t,
    alpha_data: *const c_void,
    beta_data: *const c_void,
    alpha_param: *const c_void,
    beta_param: *const c_void,
    x_desc: T,
    x: *const c_void,
    dy_desc: T,
    dy: *const c_void,
    dx_desc: T,
    dx: *mut c_void,
    scale_desc: T,
    bias_desc: T,
    saved_mean_desc: T,
    saved_var_desc: T,
    scale: *const c_void,
    bias: *const c_void,
    dscale: *mut c_void,
    dbias: *mut c_void,
    epsilon: c_double,
    saved_mean: *const c_void,
    saved_inv_variance: *const c_void,
    activ: miopenActivationDescriptor_t,
) -> miopenStatus_t {
    let a = BackwardArgs {
        handle,
        mode,
        alpha_data,
        beta_data,
        alpha_param,
        beta_param,
        x_desc,
        x,
        dy_desc,
        dy,
        dx_desc,
        dx,
        scale_desc,
        bias_desc,
        saved_mean_desc,
        saved_var_desc,
        scale,
        bias: Some(bias),
        dscale,
        dbias,
        epsilon,
        saved_mean,
        saved_inv_var: saved_inv_variance,
        activ: Some(activ),
    };
    const NAME: &str = "miopenBatchNormBackwardActivation";
    miopen_entry(NAME, |st| a.render(st), |st| a.run(st, NAME))
}
const _: miopen_fn::miopenBatchNormBackwardActivation = miopenBatchNormBackwardActivation;
