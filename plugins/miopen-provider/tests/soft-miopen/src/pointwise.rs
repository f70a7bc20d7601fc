//! Activations (`miopenActivationForward`, and the math the batch norm and fusion
//! calls share) and `miopenOpTensor`.

use std::ffi::c_void;

use hipdnn_reference::tensor::{HostTensor, for_each_index};

use crate::objects::{ActivDesc, TensorDesc, activ_name};
use crate::state::{R, State, bad, miopen_entry, not_impl, render_scalar, scalar};
use crate::sys::{
    miopen_fn, miopenActivationDescriptor_t, miopenActivationMode_t as M, miopenDataType_t,
    miopenHandle_t, miopenStatus_t, miopenTensorDescriptor_t, miopenTensorOp_t,
};

/// MIOpen's activation formulas (`miopen.h`), in `f64`.
pub(crate) fn activate(a: &ActivDesc, x: f64) -> f64 {
    let (alpha, beta, gamma) = (a.alpha, a.beta, a.gamma);
    match a.mode {
        M::miopenActivationPASTHRU => x,
        M::miopenActivationLOGISTIC => 1.0 / (1.0 + (-x).exp()),
        M::miopenActivationTANH => beta * (alpha * x).tanh(),
        M::miopenActivationRELU => x.max(0.0),
        M::miopenActivationSOFTRELU => x.exp().ln_1p(),
        M::miopenActivationABS => x.abs(),
        M::miopenActivationPOWER => (alpha + beta * x).powf(gamma),
        M::miopenActivationCLIPPEDRELU => x.max(0.0).min(alpha),
        M::miopenActivationLEAKYRELU => {
            if x > 0.0 {
                x
            } else {
                alpha * x
            }
        }
        M::miopenActivationELU => {
            if x > 0.0 {
                x
            } else {
                alpha * x.exp_m1()
            }
        }
        M::miopenActivationCLAMP => x.min(beta).max(alpha),
        // Set refuses unknown modes.
        other => unreachable!("activation mode {other} was refused when set"),
    }
}

/// The activations MIOpen fuses with batch norm and convolution: `PASTHRU`, `RELU`,
/// `CLIPPEDRELU`, `CLAMP` (the fusion kernels' "NEURON" set).
pub(crate) fn check_fusable(mode: M, what: &str, pasthru: bool) -> R<()> {
    match mode {
        M::miopenActivationRELU | M::miopenActivationCLIPPEDRELU | M::miopenActivationCLAMP => {
            Ok(())
        }
        M::miopenActivationPASTHRU if pasthru => Ok(()),
        other => Err(not_impl(format!(
            "{what}: activation {} is not fused here (PASTHRU, RELU, CLIPPEDRELU, CLAMP)",
            activ_name(other)
        ))),
    }
}

/// The backward of a fusable activation at its input `z`: `dy` where the forward
/// passes its input through, else 0. The window is `lo < z ≤ hi` (RELU: `0 < z`;
/// CLIPPEDRELU: `0 < z ≤ α`; CLAMP: `α < z ≤ β`), as in MIOpen's fused batch norm
/// backward kernels and hipDNN's `RELU_BWD` reference.
pub(crate) fn activate_backward(a: &ActivDesc, z: f64, dy: f64) -> f64 {
    let (lo, hi) = match a.mode {
        M::miopenActivationPASTHRU => return dy,
        M::miopenActivationRELU => (0.0, f64::INFINITY),
        M::miopenActivationCLIPPEDRELU => (0.0, a.alpha),
        M::miopenActivationCLAMP => (a.alpha, a.beta),
        other => unreachable!("{other} is refused by check_fusable"),
    };
    if z > lo && z <= hi { dy } else { 0.0 }
}

/// MIOpen builds its activation and tensor-op kernels for float and half only
/// (`MIOPEN_USE_FP32` / `MIOPEN_USE_FP16`); bfloat16 is refused here.
fn check_float_or_half(d: &TensorDesc, who: &str) -> R<()> {
    match d.dtype {
        miopenDataType_t::miopenFloat | miopenDataType_t::miopenHalf => Ok(()),
        other => Err(not_impl(format!(
            "{who}: type {} (MIOpen's kernels here take float and half)",
            crate::objects::dtype_name(other)
        ))),
    }
}

/// `y = alpha · result + beta · y_old`, reading `y_old` only when `beta != 0` (as
/// MIOpen: an uninitialised `y` must not leak into the result).
pub(crate) fn blend(
    st: &State,
    result: &mut HostTensor,
    alpha: f32,
    beta: f32,
    y_desc: &TensorDesc,
    y: *const c_void,
) -> R<()> {
    let old = if beta != 0.0 {
        Some(st.mem.read(y_desc, y, "y (beta != 0 reads it)")?)
    } else {
        None
    };
    if alpha == 1.0 && old.is_none() {
        return Ok(());
    }
    let dims = result.dims.clone();
    for_each_index(&dims, |idx| {
        let mut v = f64::from(alpha) * f64::from(result.at(idx));
        if let Some(old) = &old {
            v += f64::from(beta) * f64::from(old.at(idx));
        }
        result.set(idx, v as f32);
    });
    Ok(())
}

/// `y = alpha · f(x) + beta · y` for any of the eleven modes; `x` and `y` have the same
/// dims and type, float or half (strides may differ).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn miopenActivationForward(
    handle: miopenHandle_t,
    desc: miopenActivationDescriptor_t,
    alpha: *const c_void,
    x_desc: miopenTensorDescriptor_t,
    x: *const c_void,
    beta: *const c_void,
    y_desc: miopenTensorDescriptor_t,
    y: *mut c_void,
) -> miopenStatus_t {
    miopen_entry(
        "miopenActivationForward",
        |st| {
            let o = &st.objects;
            // SAFETY: MIOpen's contract: alpha and beta are host floats when non-null.
            let (a, b) = unsafe { (render_scalar(alpha), render_scalar(beta)) };
            format!(
                "{}, {}, {a}, {}, {}, {b}, {}, {}",
                o.render(handle as usize),
                o.render(desc as usize),
                o.render(x_desc as usize),
                st.mem.render(x),
                o.render(y_desc as usize),
                st.mem.render(y)
            )
        },
        |st| {
            st.objects.handle(handle as usize)?;
            let act = st.objects.activation(desc as usize, "activDesc")?;
            // SAFETY: MIOpen's contract: alpha and beta are host floats when non-null.
            let (alpha, beta) = unsafe { (scalar(alpha, "alpha")?, scalar(beta, "beta")?) };
            let xd = st.objects.tensor(x_desc as usize, "xDesc")?.clone();
            let yd = st.objects.tensor(y_desc as usize, "yDesc")?.clone();
            if xd.dims != yd.dims {
                return Err(bad(format!(
                    "yDesc dims {:?} differ from xDesc dims {:?}",
                    yd.dims, xd.dims
                )));
            }
            if xd.dtype != yd.dtype {
                return Err(bad(format!(
                    "yDesc type {} differs from xDesc type {}",
                    yd.dtype, xd.dtype
                )));
            }
            check_float_or_half(&xd, "xDesc")?;
            st.mem.check_tensor(&yd, y, "y")?;
            let xt = st.mem.read(&xd, x, "x")?;
            let mut out = yd.host();
            for_each_index(&xd.dims, |idx| {
                out.set(idx, activate(&act, f64::from(xt.at(idx))) as f32);
            });
            blend(st, &mut out, alpha, beta, &yd, y)?;
            st.mem.write(&yd, y, &out, "y")?;
            Ok(String::new())
        },
    )
}
const _: miopen_fn::miopenActivationForward = miopenActivationForward;

/// `C = op(alpha1·A, alpha2·B) + beta·C` for Add, Mul, Min, Max: A and C have the same
/// dims, each dimension of B is 1 or C's (only B broadcasts), ranks 1 to 5, one type
/// (float or half).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn miopenOpTensor(
    handle: miopenHandle_t,
    op: miopenTensorOp_t,
    alpha1: *const c_void,
    a_desc: miopenTensorDescriptor_t,
    a: *const c_void,
    alpha2: *const c_void,
    b_desc: miopenTensorDescriptor_t,
    b: *const c_void,
    beta: *const c_void,
    c_desc: miopenTensorDescriptor_t,
    c: *mut c_void,
) -> miopenStatus_t {
    miopen_entry(
        "miopenOpTensor",
        |st| {
            let o = &st.objects;
            // SAFETY: MIOpen's contract: the scalars are host floats when non-null.
            let (a1, a2, bt) = unsafe {
                (
                    render_scalar(alpha1),
                    render_scalar(alpha2),
                    render_scalar(beta),
                )
            };
            format!(
                "{}, {op}, {a1}, {}, {}, {a2}, {}, {}, {bt}, {}, {}",
                o.render(handle as usize),
                o.render(a_desc as usize),
                st.mem.render(a),
                o.render(b_desc as usize),
                st.mem.render(b),
                o.render(c_desc as usize),
                st.mem.render(c)
            )
        },
        |st| {
            st.objects.handle(handle as usize)?;
            let f: fn(f64, f64) -> f64 = match op {
                miopenTensorOp_t::miopenTensorOpAdd => |p, q| p + q,
                miopenTensorOp_t::miopenTensorOpMul => |p, q| p * q,
                miopenTensorOp_t::miopenTensorOpMin => f64::min,
                miopenTensorOp_t::miopenTensorOpMax => f64::max,
                other => return Err(bad(format!("unknown tensor op {other}"))),
            };
            // SAFETY: MIOpen's contract: the scalars are host floats when non-null.
            let (alpha1, alpha2, beta) = unsafe {
                (
                    scalar(alpha1, "alpha1")?,
                    scalar(alpha2, "alpha2")?,
                    scalar(beta, "beta")?,
                )
            };
            let ad = st.objects.tensor(a_desc as usize, "aDesc")?.clone();
            let bd = st.objects.tensor(b_desc as usize, "bDesc")?.clone();
            let cd = st.objects.tensor(c_desc as usize, "cDesc")?.clone();
            if ad.dims != cd.dims {
                return Err(bad(format!(
                    "aDesc dims {:?} differ from cDesc dims {:?} (only B broadcasts)",
                    ad.dims, cd.dims
                )));
            }
            if bd.rank() != cd.rank()
                || bd
                    .dims
                    .iter()
                    .zip(&cd.dims)
                    .any(|(&b, &c)| b != 1 && b != c)
            {
                return Err(bad(format!(
                    "bDesc dims {:?} do not broadcast to cDesc dims {:?} (same rank, each 1 or equal)",
                    bd.dims, cd.dims
                )));
            }
            if ad.dtype != cd.dtype || bd.dtype != cd.dtype {
                return Err(bad(format!(
                    "types differ: aDesc {}, bDesc {}, cDesc {}",
                    ad.dtype, bd.dtype, cd.dtype
                )));
            }
            check_float_or_half(&cd, "cDesc")?;
            st.mem.check_tensor(&cd, c, "C")?;
            let at = st.mem.read(&ad, a, "A")?;
            let bt = st.mem.read(&bd, b, "B")?;
            let mut out = cd.host();
            for_each_index(&cd.dims, |idx| {
                let p = f64::from(alpha1) * f64::from(at.at(idx));
                let q = f64::from(alpha2) * f64::from(bt.at_broadcast(idx));
                out.set(idx, f(p, q) as f32);
            });
            blend(st, &mut out, 1.0, beta, &cd, c)?;
            st.mem.write(&cd, c, &out, "C")?;
            Ok(String::new())
        },
    )
}
const _: miopen_fn::miopenOpTensor = miopenOpTensor;
