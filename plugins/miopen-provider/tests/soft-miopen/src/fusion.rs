//! Vertical fusion plans: convolution forward, optionally a bias, then an activation.
//!
//! Ops are appended in creation order and copy the descriptors they are given (as
//! MIOpen does: destroying the caller's descriptors afterwards is fine). A compile
//! accepts exactly `conv → activ` and `conv → bias → activ` with a `RELU`,
//! `CLIPPEDRELU` or `CLAMP` activation on rank-4 or rank-5 tensors; any other plan
//! returns `miopenStatusUnsupportedOp`, which is MIOpen's answer for "this fusion is
//! not supported" (logged, not printed). Descriptors that do not fit together are
//! `miopenStatusBadParm`. The ops' alpha/beta scalars may be null (1 and 0); only 1
//! and 0 are implemented. Execution needs a compiled plan, the plan's input
//! descriptor (same contents), an output of the convolution's output dims and type,
//! and arguments bound for every op; it computes the convolution in `f64`, adds the
//! bias, applies the activation and rounds once to the output type. No workspace is
//! needed (null with size 0 is fine).

use std::ffi::{c_double, c_int, c_void};

use hipdnn_reference::kernels::conv_fprop;
use hipdnn_reference::tensor::{HostTensor, for_each_index};

use crate::conv::{output_dims, params};
use crate::objects::{ActivDesc, Object, Op, OpArgs, OpKind, Plan, TensorDesc, activ_name};
use crate::pointwise::{activate, check_fusable};
use crate::state::{
    Arg, Fail, R, State, bad, miopen_entry, not_impl, out, render_args, render_scalar, scalar,
};
use crate::sys::{
    miopen_fn, miopenActivationMode_t, miopenConvolutionDescriptor_t, miopenFusionDirection_t,
    miopenFusionOpDescriptor_t, miopenFusionPlanDescriptor_t, miopenHandle_t, miopenOperatorArgs_t,
    miopenStatus_t, miopenTensorDescriptor_t,
};

type PlanT = miopenFusionPlanDescriptor_t;
type OpT = miopenFusionOpDescriptor_t;
type ArgsT = miopenOperatorArgs_t;

fn unsupported(message: impl Into<String>) -> Fail {
    Fail::miopen(miopenStatus_t::miopenStatusUnsupportedOp, message).quiet()
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn miopenCreateFusionPlan(
    plan: *mut PlanT,
    direction: miopenFusionDirection_t,
    input_desc: miopenTensorDescriptor_t,
) -> miopenStatus_t {
    miopen_entry(
        "miopenCreateFusionPlan",
        |st| format!("{direction}, {}", st.objects.render(input_desc as usize)),
        |st| {
            // SAFETY: MIOpen's contract: `plan` is writable when non-null.
            let plan = unsafe { out(plan, "fusePlanDesc") }?;
            match direction {
                miopenFusionDirection_t::miopenVerticalFusion => {}
                miopenFusionDirection_t::miopenHorizontalFusion => {
                    return Err(not_impl("horizontal fusion"));
                }
                other => return Err(bad(format!("unknown fusion direction {other}"))),
            }
            let input = st.objects.tensor(input_desc as usize, "inputDesc")?.clone();
            *plan = st.objects.create(Object::Plan(Plan {
                input,
                ops: Vec::new(),
                compiled: false,
            })) as PlanT;
            Ok(String::new())
        },
    )
}
const _: miopen_fn::miopenCreateFusionPlan = miopenCreateFusionPlan;

/// Destroys the plan and its ops (null is a no-op).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn miopenDestroyFusionPlan(plan: PlanT) -> miopenStatus_t {
    miopen_entry(
        "miopenDestroyFusionPlan",
        |st| st.objects.render(plan as usize),
        |st| {
            if plan.is_null() {
                return Ok(String::new());
            }
            if let Object::Plan(p) =
                st.objects
                    .destroy(plan as usize, "fusion plan", "fusePlanDesc")?
            {
                for op in p.ops {
                    st.objects.kill(op);
                }
            }
            Ok(String::new())
        },
    )
}
const _: miopen_fn::miopenDestroyFusionPlan = miopenDestroyFusionPlan;

/// What a compiled plan computes.
struct Fused {
    conv: (crate::objects::ConvDesc, TensorDesc),
    bias: Option<TensorDesc>,
    mode: miopenActivationMode_t,
    out_dims: Vec<usize>,
}

/// Checks that the plan is a supported fusion whose descriptors fit together.
fn analyse(st: &State, plan: &Plan) -> R<Fused> {
    let kinds: Vec<OpKind> = plan
        .ops
        .iter()
        .map(|&p| st.objects.op(p, "op").map(|o| o.kind.clone()))
        .collect::<R<_>>()?;
    let names: Vec<&str> = kinds.iter().map(OpKind::name).collect();
    let (conv, bias, mode) = match kinds.as_slice() {
        [OpKind::Conv { conv, w }, OpKind::Activation { mode }] => {
            ((conv.clone(), w.clone()), None, *mode)
        }
        [
            OpKind::Conv { conv, w },
            OpKind::Bias { bias },
            OpKind::Activation { mode },
        ] => ((conv.clone(), w.clone()), Some(bias.clone()), *mode),
        _ => {
            return Err(unsupported(format!(
                "op sequence [{}] is not fused (supported: conv→activ, conv→bias→activ)",
                names.join("→")
            )));
        }
    };
    check_fusable(mode, "fusion", false).map_err(|f| unsupported(f.message))?;
    let x = &plan.input;
    if !(4..=5).contains(&x.rank()) {
        return Err(unsupported(format!(
            "input rank {} (fusion takes rank 4 or 5)",
            x.rank()
        )));
    }
    let (_, out_dims) = output_dims(x, &conv.1, &conv.0, ["inputDesc", "op0:conv wDesc"])?;
    if let Some(b) = &bias {
        let mut want = vec![1; x.rank()];
        want[1] = out_dims[1];
        if b.dims != want {
            return Err(bad(format!(
                "op1:bias biasDesc has dims {:?}, expected {want:?}",
                b.dims
            )));
        }
        if b.dtype != x.dtype {
            return Err(bad(format!(
                "op1:bias biasDesc has type {}, the input {}",
                b.dtype, x.dtype
            )));
        }
    }
    Ok(Fused {
        conv,
        bias,
        mode,
        out_dims,
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn miopenCompileFusionPlan(
    handle: miopenHandle_t,
    plan: PlanT,
) -> miopenStatus_t {
    miopen_entry(
        "miopenCompileFusionPlan",
        |st| render_args(st, &[Arg::Obj(handle as usize), Arg::Obj(plan as usize)]),
        |st| {
            st.objects.handle(handle as usize)?;
            let p = st.objects.plan(plan as usize, "fusePlanDesc")?.clone();
            analyse(st, &p)?;
            st.objects.plan_mut(plan as usize, "fusePlanDesc")?.compiled = true;
            Ok(String::new())
        },
    )
}
const _: miopen_fn::miopenCompileFusionPlan = miopenCompileFusionPlan;

#[unsafe(no_mangle)]
pub unsafe extern "C" fn miopenFusionPlanGetOp(
    plan: PlanT,
    index: c_int,
    op: *mut OpT,
) -> miopenStatus_t {
    miopen_entry(
        "miopenFusionPlanGetOp",
        |st| format!("{}, {index}", st.objects.render(plan as usize)),
        |st| {
            // SAFETY: MIOpen's contract: `op` is writable when non-null.
            let op = unsafe { out(op, "op") }?;
            let p = st.objects.plan(plan as usize, "fusePlanDesc")?;
            let handle = usize::try_from(index)
                .ok()
                .and_then(|i| p.ops.get(i).copied())
                .ok_or_else(|| bad(format!("op index {index} is not in 0..{}", p.ops.len())))?;
            *op = handle as OpT;
            Ok(st.objects.render(handle))
        },
    )
}
const _: miopen_fn::miopenFusionPlanGetOp = miopenFusionPlanGetOp;

/// Appends an op to the plan and returns its handle (the plan must be compiled again).
fn add_op(st: &mut State, plan: PlanT, op: *mut OpT, kind: OpKind) -> R<String> {
    // SAFETY: MIOpen's contract: `op` is writable when non-null.
    let op = unsafe { out(op, "op") }?;
    let index = st.objects.plan(plan as usize, "fusePlanDesc")?.ops.len();
    let handle = st.objects.create(Object::Op(Op { index, kind }));
    let p = st.objects.plan_mut(plan as usize, "fusePlanDesc")?;
    p.ops.push(handle);
    p.compiled = false;
    *op = handle as OpT;
    Ok(st.objects.render(handle))
}

/// A convolution op (the descriptors' contents are copied).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn miopenCreateOpConvForward(
    plan: PlanT,
    op: *mut OpT,
    conv: miopenConvolutionDescriptor_t,
    w_desc: miopenTensorDescriptor_t,
) -> miopenStatus_t {
    miopen_entry(
        "miopenCreateOpConvForward",
        |st| {
            render_args(
                st,
                &[
                    Arg::Obj(plan as usize),
                    Arg::Obj(conv as usize),
                    Arg::Obj(w_desc as usize),
                ],
            )
        },
        |st| {
            st.objects.plan(plan as usize, "fusePlanDesc")?;
            let c = st.objects.conv(conv as usize, "convDesc")?.clone();
            if c.geometry.is_none() {
                return Err(bad(
                    "convDesc was never initialised (miopenInitConvolutionNdDescriptor)",
                ));
            }
            let w = st.objects.tensor(w_desc as usize, "wDesc")?.clone();
            add_op(st, plan, op, OpKind::Conv { conv: c, w })
        },
    )
}
const _: miopen_fn::miopenCreateOpConvForward = miopenCreateOpConvForward;

/// A bias op (`[1, K, 1, 1]`, checked at compile).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn miopenCreateOpBiasForward(
    plan: PlanT,
    op: *mut OpT,
    bias_desc: miopenTensorDescriptor_t,
) -> miopenStatus_t {
    miopen_entry(
        "miopenCreateOpBiasForward",
        |st| render_args(st, &[Arg::Obj(plan as usize), Arg::Obj(bias_desc as usize)]),
        |st| {
            st.objects.plan(plan as usize, "fusePlanDesc")?;
            let bias = st.objects.tensor(bias_desc as usize, "bDesc")?.clone();
            add_op(st, plan, op, OpKind::Bias { bias })
        },
    )
}
const _: miopen_fn::miopenCreateOpBiasForward = miopenCreateOpBiasForward;

/// An activation op (any known mode; the compile decides what fuses).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn miopenCreateOpActivationForward(
    plan: PlanT,
    op: *mut OpT,
    mode: miopenActivationMode_t,
) -> miopenStatus_t {
    miopen_entry(
        "miopenCreateOpActivationForward",
        |st| format!("{}, {}", st.objects.render(plan as usize), activ_name(mode)),
        |st| {
            st.objects.plan(plan as usize, "fusePlanDesc")?;
            if mode.name().is_none() {
                return Err(bad(format!("unknown activation mode {mode}")));
            }
            add_op(st, plan, op, OpKind::Activation { mode })
        },
    )
}
const _: miopen_fn::miopenCreateOpActivationForward = miopenCreateOpActivationForward;

#[unsafe(no_mangle)]
pub unsafe extern "C" fn miopenCreateOperatorArgs(args: *mut ArgsT) -> miopenStatus_t {
    miopen_entry(
        "miopenCreateOperatorArgs",
        |_| String::new(),
        |st| {
            // SAFETY: MIOpen's contract: `args` is writable when non-null.
            let args = unsafe { out(args, "args") }?;
            *args = st.objects.create(Object::Args(Default::default())) as ArgsT;
            Ok(String::new())
        },
    )
}
const _: miopen_fn::miopenCreateOperatorArgs = miopenCreateOperatorArgs;

#[unsafe(no_mangle)]
pub unsafe extern "C" fn miopenDestroyOperatorArgs(args: ArgsT) -> miopenStatus_t {
    miopen_entry(
        "miopenDestroyOperatorArgs",
        |st| st.objects.render(args as usize),
        |st| {
            if !args.is_null() {
                st.objects
                    .destroy(args as usize, "operator argument set", "args")?;
            }
            Ok(String::new())
        },
    )
}
const _: miopen_fn::miopenDestroyOperatorArgs = miopenDestroyOperatorArgs;

/// Null alpha/beta mean 1 and 0; only those values are implemented.
///
/// # Safety
/// Each pointer, when non-null, points to a host float.
unsafe fn op_blend(alpha: *const c_void, beta: *const c_void) -> R<()> {
    // SAFETY: the caller's promise, forwarded (null is not read).
    let (a, b) = unsafe {
        (
            if alpha.is_null() {
                1.0
            } else {
                scalar(alpha, "alpha")?
            },
            if beta.is_null() {
                0.0
            } else {
                scalar(beta, "beta")?
            },
        )
    };
    if a != 1.0 || b != 0.0 {
        return Err(not_impl(format!(
            "alpha = {a}, beta = {b}: only 1 and 0 are implemented for fusion ops"
        )));
    }
    Ok(())
}

/// The op at `op`, of the wanted kind.
fn op_of(st: &State, op: OpT, want: &str) -> R<Op> {
    let o = st.objects.op(op as usize, "op")?.clone();
    if o.kind.name() != want {
        return Err(bad(format!("op is {}, not a {want} op", o.render())));
    }
    Ok(o)
}

fn bind(st: &mut State, args: ArgsT, op: OpT, a: OpArgs) -> R<String> {
    st.objects
        .args_mut(args as usize, "args")?
        .insert(op as usize, a);
    Ok(String::new())
}

/// Binds the filter (checked against the op's `wDesc` now).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn miopenSetOpArgsConvForward(
    args: ArgsT,
    op: OpT,
    alpha: *const c_void,
    beta: *const c_void,
    w: *const c_void,
) -> miopenStatus_t {
    miopen_entry(
        "miopenSetOpArgsConvForward",
        |st| {
            // SAFETY: MIOpen's contract: alpha and beta are host floats when non-null.
            let (a, b) = unsafe { (render_scalar(alpha), render_scalar(beta)) };
            render_args(
                st,
                &[
                    Arg::Obj(args as usize),
                    Arg::Obj(op as usize),
                    Arg::Text(a),
                    Arg::Text(b),
                    Arg::Ptr(w),
                ],
            )
        },
        |st| {
            st.objects.args(args as usize, "args")?;
            let o = op_of(st, op, "conv")?;
            // SAFETY: MIOpen's contract: alpha and beta are host floats when non-null.
            unsafe { op_blend(alpha, beta) }?;
            if let OpKind::Conv { w: wd, .. } = &o.kind {
                st.mem.check_tensor(wd, w, "w")?;
            }
            bind(st, args, op, OpArgs::Conv { w: w as usize })
        },
    )
}
const _: miopen_fn::miopenSetOpArgsConvForward = miopenSetOpArgsConvForward;

/// Binds the bias (checked against the op's `bDesc` now).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn miopenSetOpArgsBiasForward(
    args: ArgsT,
    op: OpT,
    alpha: *const c_void,
    beta: *const c_void,
    bias: *const c_void,
) -> miopenStatus_t {
    miopen_entry(
        "miopenSetOpArgsBiasForward",
        |st| {
            // SAFETY: MIOpen's contract: alpha and beta are host floats when non-null.
            let (a, b) = unsafe { (render_scalar(alpha), render_scalar(beta)) };
            render_args(
                st,
                &[
                    Arg::Obj(args as usize),
                    Arg::Obj(op as usize),
                    Arg::Text(a),
                    Arg::Text(b),
                    Arg::Ptr(bias),
                ],
            )
        },
        |st| {
            st.objects.args(args as usize, "args")?;
            let o = op_of(st, op, "bias")?;
            // SAFETY: MIOpen's contract: alpha and beta are host floats when non-null.
            unsafe { op_blend(alpha, beta) }?;
            if let OpKind::Bias { bias: bd } = &o.kind {
                st.mem.check_tensor(bd, bias, "bias")?;
            }
            bind(
                st,
                args,
                op,
                OpArgs::Bias {
                    bias: bias as usize,
                },
            )
        },
    )
}
const _: miopen_fn::miopenSetOpArgsBiasForward = miopenSetOpArgsBiasForward;

/// Binds the activation's parameters (finite).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn miopenSetOpArgsActivForward(
    args: ArgsT,
    op: OpT,
    alpha: *const c_void,
    beta: *const c_void,
    activ_alpha: c_double,
    activ_beta: c_double,
    activ_gamma: c_double,
) -> miopenStatus_t {
    miopen_entry(
        "miopenSetOpArgsActivForward",
        |st| {
            // SAFETY: MIOpen's contract: alpha and beta are host floats when non-null.
            let (a, b) = unsafe { (render_scalar(alpha), render_scalar(beta)) };
            render_args(
                st,
                &[
                    Arg::Obj(args as usize),
                    Arg::Obj(op as usize),
                    Arg::Text(a),
                    Arg::Text(b),
                    Arg::Text(format!("{activ_alpha}, {activ_beta}, {activ_gamma}")),
                ],
            )
        },
        |st| {
            st.objects.args(args as usize, "args")?;
            op_of(st, op, "activ")?;
            // SAFETY: MIOpen's contract: alpha and beta are host floats when non-null.
            unsafe { op_blend(alpha, beta) }?;
            if ![activ_alpha, activ_beta, activ_gamma]
                .iter()
                .all(|v| v.is_finite())
            {
                return Err(bad("activation parameters must be finite"));
            }
            bind(
                st,
                args,
                op,
                OpArgs::Activation {
                    alpha: activ_alpha,
                    beta: activ_beta,
                    gamma: activ_gamma,
                },
            )
        },
    )
}
const _: miopen_fn::miopenSetOpArgsActivForward = miopenSetOpArgsActivForward;

#[allow(clippy::too_many_arguments)]
fn execute(
    st: &mut State,
    handle: miopenHandle_t,
    plan: PlanT,
    input_desc: miopenTensorDescriptor_t,
    input: *const c_void,
    output_desc: miopenTensorDescriptor_t,
    output: *mut c_void,
    args: ArgsT,
    workspace: *mut c_void,
    workspace_size: usize,
) -> R<()> {
    st.objects.handle(handle as usize)?;
    let p = st.objects.plan(plan as usize, "fusePlanDesc")?.clone();
    if !p.compiled {
        return Err(bad("the plan was not compiled (miopenCompileFusionPlan)"));
    }
    let f = analyse(st, &p)?;
    let xd = st.objects.tensor(input_desc as usize, "inputDesc")?.clone();
    if xd != p.input {
        return Err(bad(format!(
            "inputDesc {} differs from the plan's input {}",
            xd.render(),
            p.input.render()
        )));
    }
    let yd = st
        .objects
        .tensor(output_desc as usize, "outputDesc")?
        .clone();
    if yd.dims != f.out_dims || yd.dtype != xd.dtype {
        return Err(bad(format!(
            "outputDesc {} must have the convolution's output dims {:?} and type {}",
            yd.render(),
            f.out_dims,
            crate::objects::dtype_name(xd.dtype)
        )));
    }
    let bound = st.objects.args(args as usize, "args")?;
    let mut w_ptr = 0;
    let mut bias_ptr = 0;
    let mut act = ActivDesc {
        mode: f.mode,
        alpha: 0.0,
        beta: 0.0,
        gamma: 0.0,
    };
    for &op in &p.ops {
        let o = st.objects.op(op, "op")?;
        match (&o.kind, bound.get(&op)) {
            (OpKind::Conv { .. }, Some(OpArgs::Conv { w })) => w_ptr = *w,
            (OpKind::Bias { .. }, Some(OpArgs::Bias { bias })) => bias_ptr = *bias,
            (OpKind::Activation { .. }, Some(&OpArgs::Activation { alpha, beta, gamma })) => {
                (act.alpha, act.beta, act.gamma) = (alpha, beta, gamma);
            }
            _ => {
                return Err(bad(format!(
                    "{} has no arguments bound in args (miopenSetOpArgs…)",
                    o.render()
                )));
            }
        }
    }
    if workspace_size > 0 {
        st.mem.check_bad(workspace, workspace_size, "workspace")?;
    }
    st.mem.check_tensor(&yd, output, "output")?;
    let (conv, wd) = &f.conv;
    let xt = st.mem.read(&xd, input, "input")?;
    let wt = st.mem.read(wd, w_ptr as *const c_void, "op0:conv w")?;
    let bias = match &f.bias {
        Some(bd) => Some(
            st.mem
                .read(bd, bias_ptr as *const c_void, "op1:bias bias")?
                .logical(),
        ),
        None => None,
    };
    let g = conv.geometry.as_ref().expect("checked by analyse");
    let mut acc = HostTensor::packed(f.out_dims.clone());
    conv_fprop(&xt, &wt, &mut acc, &params(g)).map_err(|e| bad(format!("reference: {e}")))?;
    let mut yt = yd.host();
    for_each_index(&f.out_dims, |idx| {
        let mut v = f64::from(acc.at(idx));
        if let Some(b) = &bias {
            v += f64::from(b[idx[1]]);
        }
        yt.set(idx, activate(&act, v) as f32);
    });
    st.mem.write(&yd, output, &yt, "output")
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn miopenExecuteFusionPlan_v2(
    handle: miopenHandle_t,
    plan: PlanT,
    input_desc: miopenTensorDescriptor_t,
    input: *const c_void,
    output_desc: miopenTensorDescriptor_t,
    output: *mut c_void,
    args: ArgsT,
    workspace: *mut c_void,
    workspace_size: usize,
) -> miopenStatus_t {
    miopen_entry(
        "miopenExecuteFusionPlan_v2",
        |st| {
            render_args(
                st,
                &[
                    Arg::Obj(handle as usize),
                    Arg::Obj(plan as usize),
                    Arg::Obj(input_desc as usize),
                    Arg::Ptr(input),
                    Arg::Obj(output_desc as usize),
                    Arg::Ptr(output),
                    Arg::Obj(args as usize),
                    Arg::Ptr(workspace),
                    Arg::Text(workspace_size.to_string()),
                ],
            )
        },
        |st| {
            execute(
                st,
                handle,
                plan,
                input_desc,
                input,
                output_desc,
                output,
                args,
                workspace,
                workspace_size,
            )?;
            Ok(String::new())
        },
    )
}
const _: miopen_fn::miopenExecuteFusionPlan_v2 = miopenExecuteFusionPlan_v2;
