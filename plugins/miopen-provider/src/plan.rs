//! Plans: a [`Pattern`] with its MIOpen descriptors made, its algorithm chosen and its
//! kernels compiled, ready to run on the handle's stream.
//!
//! # Convolutions
//! MIOpen's immediate mode: the solutions it lists for the problem (best first), the
//! first whose workspace fits `global.workspace_size_limit` is compiled when the plan
//! is built and run by id. With `global.benchmarking`, the plan first runs MIOpen's
//! Find with an exhaustive search on scratch buffers of the problem's sizes, so the
//! solutions come back ordered by measured time. With `global.deterministic` (and
//! always on `MIOPEN_ENGINE_DETERMINISTIC`) the convolution descriptor restricts MIOpen
//! to deterministic kernels.
//!
//! # Fused convolution + bias + activation
//! A compiled fusion plan; its workspace is reserved as the input, filter and output
//! sizes each rounded up to 256 bytes (the bound MIOpen's fused kernels stay within;
//! its own query under-reports it).
//!
//! # Everything else
//! One MIOpen call per execution with `alpha = 1, beta = 0`, no workspace.

use std::ffi::c_void;
use std::sync::Arc;

use hipdnn_plugin_sdk::prelude::*;

use crate::graph::{Pattern, Tensor};
use crate::miopen::safe::{
    Activation, ActivationDesc, Bound, ConvDesc, ConvDirection, ConvProblem, FusionPlan, HipBuffer,
    Miopen, TensorDesc,
};
use crate::miopen::sys::{miopenBatchNormMode_t, miopenTensorOp_t};

/// The knobs a plan honours.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MiopenSettings {
    /// Deterministic convolution kernels only.
    pub deterministic: bool,
    /// The largest workspace the plan may use.
    pub workspace_limit: Option<usize>,
    /// Choose convolution algorithms by timing them (MIOpen's Find).
    pub benchmarking: bool,
}

/// A tensor's uid and descriptor.
#[derive(Debug)]
struct Bind {
    uid: i64,
    desc: TensorDesc,
}

impl Bind {
    fn new(miopen: &Arc<Miopen>, t: &Tensor) -> PluginResult<Self> {
        Ok(Self {
            uid: t.uid,
            desc: TensorDesc::new(miopen, t.dtype, &t.dims, &t.strides)
                .map_err(|e| PluginError::internal(format!("tensor {}: {e}", t.uid)))?,
        })
    }
}

#[derive(Debug)]
enum Step {
    Conv {
        direction: ConvDirection,
        a: Bind,
        b: Bind,
        out: Bind,
        conv: ConvDesc,
        solution: u64,
    },
    Fused {
        x: Bind,
        w: i64,
        bias: Option<i64>,
        y: Bind,
        plan: FusionPlan,
        activation: Activation,
        // MIOpen copies the descriptors it needs; kept for the plan's lifetime anyway.
        _keep: (ConvDesc, TensorDesc, Option<TensorDesc>),
    },
    BnInference {
        x: Bind,
        y: Bind,
        params: [i64; 4],
        param: TensorDesc,
        epsilon: Option<f64>,
        activation: Option<ActivationDesc>,
    },
    BnTraining {
        x: Bind,
        y: Bind,
        scale: i64,
        bias: i64,
        param: TensorDesc,
        saved: (Option<i64>, Option<i64>),
        running: Option<(i64, i64, i64, i64, f64)>,
        epsilon: f64,
        activation: Option<ActivationDesc>,
    },
    BnBackward {
        x: Bind,
        dy: Bind,
        dx: Bind,
        scale: i64,
        param: TensorDesc,
        saved: (i64, i64),
        grads: (i64, i64),
        activation: Option<(i64, ActivationDesc)>,
    },
    Activation {
        x: Bind,
        y: Bind,
        desc: ActivationDesc,
    },
    Binary {
        op: miopenTensorOp_t,
        a: Bind,
        b: Bind,
        alpha2: f32,
        y: Bind,
    },
}

/// A built plan.
#[derive(Debug)]
pub struct MiopenPlan {
    miopen: Arc<Miopen>,
    label: &'static str,
    step: Step,
    workspace: usize,
}

fn mio(label: &str) -> impl Fn(crate::miopen::MiopenError) -> PluginError + '_ {
    move |e| PluginError::internal(format!("{label}: {e}"))
}

fn round256(n: usize) -> usize {
    n.div_ceil(256) * 256
}

/// Spatial batch norm (the only mode the engine claims).
const BN_SPATIAL: miopenBatchNormMode_t = miopenBatchNormMode_t::miopenBNSpatial;
/// MIOpen's epsilon argument where the saved inverse variance makes it unused.
const UNUSED_EPSILON: f64 = 1e-5;

impl MiopenPlan {
    /// Makes the descriptors, chooses and compiles the algorithm.
    ///
    /// # Errors
    /// MIOpen's refusals, naming the call; no solution within the workspace limit.
    pub fn build(
        miopen: &Arc<Miopen>,
        pattern: &Pattern,
        settings: &MiopenSettings,
    ) -> PluginResult<Self> {
        let label = pattern.label();
        let err = mio(label);
        let bind = |t: &Tensor| Bind::new(miopen, t);
        let param_desc = |t: &Tensor| {
            TensorDesc::new(miopen, t.dtype, &t.dims, &t.strides)
                .map_err(|e| PluginError::internal(format!("{label}: tensor {}: {e}", t.uid)))
        };
        let activation_desc = |a: &Activation| ActivationDesc::new(miopen, *a).map_err(&err);
        let mut workspace = 0;
        let step = match pattern {
            Pattern::Conv {
                direction,
                a,
                b,
                out,
                geometry,
            } => {
                let conv = ConvDesc::new(miopen, geometry, settings.deterministic)
                    .map_err(|e| PluginError::internal(format!("{label}: {e}")))?;
                let (a, b, out) = (bind(a)?, bind(b)?, bind(out)?);
                let problem = ConvProblem {
                    direction: *direction,
                    a: &a.desc,
                    b: &b.desc,
                    conv: &conv,
                    out: &out.desc,
                };
                let bound = miopen.lock();
                let (solution, ws) =
                    choose_solution(miopen, &bound, &problem, pattern, settings, label)?;
                bound.compile(&problem, solution).map_err(&err)?;
                workspace = ws;
                drop(bound);
                Step::Conv {
                    direction: *direction,
                    a,
                    b,
                    out,
                    conv,
                    solution,
                }
            }
            Pattern::ConvBiasActivation {
                x,
                w,
                bias,
                y,
                geometry,
                activation,
            } => {
                let conv = ConvDesc::new(miopen, geometry, settings.deterministic)
                    .map_err(|e| PluginError::internal(format!("{label}: {e}")))?;
                let (xb, yb) = (bind(x)?, bind(y)?);
                let wd = param_desc(w)?;
                let bd = bias.as_ref().map(param_desc).transpose()?;
                let bound = miopen.lock();
                let plan = FusionPlan::conv_bias_activation(
                    &bound,
                    miopen,
                    &xb.desc,
                    &conv,
                    &wd,
                    bd.as_ref(),
                    activation.mode,
                )
                .map_err(&err)?;
                drop(bound);
                workspace = round256(x.byte_extent())
                    + round256(w.byte_extent())
                    + round256(y.byte_extent());
                Step::Fused {
                    x: xb,
                    w: w.uid,
                    bias: bias.as_ref().map(|b| b.uid),
                    y: yb,
                    plan,
                    activation: *activation,
                    _keep: (conv, wd, bd),
                }
            }
            Pattern::BnInference {
                x,
                y,
                params,
                epsilon,
                activation,
            } => Step::BnInference {
                x: bind(x)?,
                y: bind(y)?,
                params: [params[0].uid, params[1].uid, params[2].uid, params[3].uid],
                param: param_desc(&params[0])?,
                epsilon: *epsilon,
                activation: activation.as_ref().map(activation_desc).transpose()?,
            },
            Pattern::BnTraining {
                x,
                y,
                scale,
                bias,
                saved,
                running,
                epsilon,
                activation,
            } => Step::BnTraining {
                x: bind(x)?,
                y: bind(y)?,
                scale: scale.uid,
                bias: bias.uid,
                param: param_desc(scale)?,
                saved: *saved,
                running: *running,
                epsilon: *epsilon,
                activation: activation.as_ref().map(activation_desc).transpose()?,
            },
            Pattern::BnBackward {
                x,
                dy,
                dx,
                scale,
                saved,
                dscale,
                dbias,
                activation,
            } => Step::BnBackward {
                x: bind(x)?,
                dy: bind(dy)?,
                dx: bind(dx)?,
                scale: scale.uid,
                param: param_desc(scale)?,
                saved: *saved,
                grads: (*dscale, *dbias),
                activation: activation
                    .as_ref()
                    .map(|(bias, a)| activation_desc(a).map(|d| (*bias, d)))
                    .transpose()?,
            },
            Pattern::Activation { x, y, activation } => Step::Activation {
                x: bind(x)?,
                y: bind(y)?,
                desc: activation_desc(activation)?,
            },
            Pattern::Binary {
                op,
                a,
                b,
                alpha2,
                y,
            } => Step::Binary {
                op: *op,
                a: bind(a)?,
                b: bind(b)?,
                alpha2: *alpha2,
                y: bind(y)?,
            },
        };
        if let Some(limit) = settings.workspace_limit
            && workspace > limit
        {
            return Err(PluginError::bad_param(format!(
                "{label}: the plan needs {workspace} bytes of workspace, over the limit of {limit}"
            )));
        }
        Ok(Self {
            miopen: Arc::clone(miopen),
            label,
            step,
            workspace,
        })
    }

    /// What the plan runs.
    pub fn label(&self) -> &'static str {
        self.label
    }

    /// The chosen convolution solution, if the plan is a convolution.
    pub fn solution(&self) -> Option<u64> {
        match &self.step {
            Step::Conv { solution, .. } => Some(*solution),
            _ => None,
        }
    }
}

/// Whether MIOpen lists a solution for the convolution `pattern` (restricted to
/// deterministic kernels when `deterministic`): part of the applicability decision.
///
/// # Errors
/// MIOpen's refusal of the descriptors.
pub fn has_solution(
    miopen: &Arc<Miopen>,
    pattern: &Pattern,
    deterministic: bool,
) -> PluginResult<bool> {
    let Pattern::Conv {
        direction,
        a,
        b,
        out,
        geometry,
    } = pattern
    else {
        return Ok(true);
    };
    let label = pattern.label();
    let conv = ConvDesc::new(miopen, geometry, deterministic)
        .map_err(|e| PluginError::internal(format!("{label}: {e}")))?;
    let (a, b, out) = (
        Bind::new(miopen, a)?,
        Bind::new(miopen, b)?,
        Bind::new(miopen, out)?,
    );
    let problem = ConvProblem {
        direction: *direction,
        a: &a.desc,
        b: &b.desc,
        conv: &conv,
        out: &out.desc,
    };
    let solutions = miopen.lock().solutions(&problem).map_err(mio(label))?;
    Ok(!solutions.is_empty())
}

/// The first solution within the workspace limit (after a Find when benchmarking).
fn choose_solution(
    miopen: &Arc<Miopen>,
    bound: &Bound<'_>,
    problem: &ConvProblem<'_>,
    pattern: &Pattern,
    settings: &MiopenSettings,
    label: &str,
) -> PluginResult<(u64, usize)> {
    let err = mio(label);
    let fits = |ws: usize| settings.workspace_limit.is_none_or(|l| ws <= l);
    let mut solutions = bound.solutions(problem).map_err(&err)?;
    if settings.benchmarking && !solutions.is_empty() {
        let Pattern::Conv { a, b, out, .. } = pattern else {
            unreachable!("a convolution")
        };
        let ws = solutions
            .iter()
            .map(|s| s.workspace_size)
            .filter(|&w| fits(w))
            .max()
            .unwrap_or(0);
        let hip = &miopen.runtime.hip;
        let alloc = |n: usize| {
            HipBuffer::new(hip, n)
                .map_err(|e| PluginError::internal(format!("{label}: scratch for Find: {e}")))
        };
        let (ab, bb, ob, wb) = (
            alloc(a.byte_extent())?,
            alloc(b.byte_extent())?,
            alloc(out.byte_extent())?,
            alloc(ws)?,
        );
        // SAFETY: scratch device buffers of each tensor's extent and of `ws` bytes,
        // alive across the (synchronous) search.
        let found =
            unsafe { bound.find(problem, ab.ptr(), bb.ptr(), ob.ptr(), wb.ptr(), ws, true) }
                .map_err(&err)?;
        tracing::debug!(label, ?found, "MIOpen Find");
        solutions = bound.solutions(problem).map_err(&err)?;
    }
    match solutions.iter().find(|s| fits(s.workspace_size)) {
        Some(s) => Ok((s.solution_id, s.workspace_size)),
        None if solutions.is_empty() => Err(PluginError::not_applicable(format!(
            "{label}: MIOpen lists no solution for this convolution{}",
            if settings.deterministic {
                " with deterministic kernels"
            } else {
                ""
            }
        ))),
        None => Err(PluginError::bad_param(format!(
            "{label}: every MIOpen solution needs more workspace than the limit of {} bytes (the smallest needs {})",
            settings.workspace_limit.unwrap_or(0),
            solutions
                .iter()
                .map(|s| s.workspace_size)
                .min()
                .unwrap_or(0)
        ))),
    }
}

/// The device pointer of `uid` (null allowed only where MIOpen takes an optional
/// output).
fn ptr(exec: &Execution<'_>, uid: i64) -> PluginResult<*mut c_void> {
    exec.buffers().require(uid)
}

fn opt_ptr(exec: &Execution<'_>, uid: Option<i64>) -> PluginResult<*mut c_void> {
    uid.map_or(Ok(std::ptr::null_mut()), |u| ptr(exec, u))
}

/// `$plain(args…)`, or with an activation `$fused(args…, activation)` (MIOpen's fused
/// batch-norm entry points take the plain one's arguments and the activation last), and
/// the name of the function called.
macro_rules! with_activation {
    ($api:ident, $act:expr, $plain:ident, $fused:ident, ($($arg:expr),* $(,)?)) => {
        match $act {
            None => (($api.$plain)($($arg),*), stringify!($plain)),
            Some(a) => (($api.$fused)($($arg),*, a.raw()), stringify!($fused)),
        }
    };
}

impl IPlan<Arc<Miopen>> for MiopenPlan {
    fn workspace_size(&self) -> usize {
        self.workspace
    }

    fn execute(&self, _: &Handle<Arc<Miopen>>, exec: &Execution<'_>) -> PluginResult<()> {
        let err = mio(self.label);
        let workspace = exec.workspace().as_ptr();
        if self.workspace > 0 && (workspace.is_null() || exec.workspace().size() < self.workspace) {
            return Err(PluginError::bad_param(format!(
                "{}: the plan needs {} bytes of workspace, got {} at {workspace:p}",
                self.label,
                self.workspace,
                exec.workspace().size()
            )));
        }
        let bound = self.miopen.lock();
        let (mut one, mut zero) = (1f32, 0f32);
        let (alpha, beta): (*mut c_void, *mut c_void) =
            ((&raw mut one).cast(), (&raw mut zero).cast());
        let (h, api) = bound.raw_parts();
        // SAFETY: the pointers are the host's device buffers for the
        // tensors the descriptors describe (the backend checked the uids and
        // alignment), and the workspace holds `self.workspace` bytes; MIOpen enqueues
        // on the handle's stream and the host keeps the buffers alive until it is done.
        unsafe {
            match &self.step {
                Step::Conv {
                    direction,
                    a,
                    b,
                    out,
                    conv,
                    solution,
                } => {
                    let problem = ConvProblem {
                        direction: *direction,
                        a: &a.desc,
                        b: &b.desc,
                        conv,
                        out: &out.desc,
                    };
                    {
                        bound.run_conv(
                            &problem,
                            *solution,
                            ptr(exec, a.uid)?,
                            ptr(exec, b.uid)?,
                            ptr(exec, out.uid)?,
                            workspace,
                            self.workspace,
                        )
                    }
                    .map_err(&err)
                }
                Step::Fused {
                    x,
                    w,
                    bias,
                    y,
                    plan,
                    activation,
                    ..
                } => {
                    plan.execute(
                        &bound,
                        &x.desc,
                        ptr(exec, x.uid)?,
                        ptr(exec, *w)?,
                        opt_ptr(exec, *bias)?,
                        *activation,
                        &y.desc,
                        ptr(exec, y.uid)?,
                        workspace,
                        self.workspace,
                    )
                }
                .map_err(&err),
                Step::BnInference {
                    x,
                    y,
                    params,
                    param,
                    epsilon,
                    activation,
                } => {
                    let [s, b, m, v] = params.map(|u| ptr(exec, u));
                    let (s, b, m, v) = (s?, b?, m?, v?);
                    let (xd, xp) = (x.desc.raw(), ptr(exec, x.uid)?);
                    let (yd, yp) = (y.desc.raw(), ptr(exec, y.uid)?);
                    let p = param.raw();
                    let (status, call) = match epsilon {
                        None => with_activation!(
                            api,
                            activation,
                            miopenBatchNormalizationForwardInferenceInvVariance,
                            miopenBatchNormForwardInferenceActivationInvVariance,
                            (
                                h, BN_SPATIAL, alpha, beta, xd, xp, yd, yp, p, p, p, p, s, b, m, v
                            )
                        ),
                        Some(eps) => with_activation!(
                            api,
                            activation,
                            miopenBatchNormalizationForwardInference_V2,
                            miopenBatchNormForwardInferenceActivation,
                            (
                                h, BN_SPATIAL, alpha, beta, xd, xp, yd, yp, p, p, p, p, s, b, m, v,
                                *eps
                            )
                        ),
                    };
                    bound.checked(status, call).map_err(&err)
                }
                Step::BnTraining {
                    x,
                    y,
                    scale,
                    bias,
                    param,
                    saved,
                    running,
                    epsilon,
                    activation,
                } => {
                    let (xd, xp) = (x.desc.raw(), ptr(exec, x.uid)?);
                    let (yd, yp) = (y.desc.raw(), ptr(exec, y.uid)?);
                    let (sp, bp) = (ptr(exec, *scale)?, ptr(exec, *bias)?);
                    let (mean, inv) = (opt_ptr(exec, saved.0)?, opt_ptr(exec, saved.1)?);
                    let null = std::ptr::null_mut();
                    let (pm, pv, nm, nv, factor) = match running {
                        Some((pm, pv, nm, nv, m)) => (
                            ptr(exec, *pm)?,
                            ptr(exec, *pv)?,
                            ptr(exec, *nm)?,
                            ptr(exec, *nv)?,
                            *m,
                        ),
                        None => (null, null, null, null, 0.0),
                    };
                    let (p, eps) = (param.raw(), *epsilon);
                    let (status, call) = with_activation!(
                        api,
                        activation,
                        miopenBatchNormalizationForwardTraining_V3,
                        miopenBatchNormForwardTrainingActivation_V2,
                        (
                            h, BN_SPATIAL, alpha, beta, xd, xp, yd, yp, p, p, p, p, sp, bp, factor,
                            pm, pv, nm, nv, eps, mean, inv
                        )
                    );
                    bound.checked(status, call).map_err(&err)
                }
                Step::BnBackward {
                    x,
                    dy,
                    dx,
                    scale,
                    param,
                    saved,
                    grads,
                    activation,
                } => {
                    let (xp, dyp, dxp) =
                        (ptr(exec, x.uid)?, ptr(exec, dy.uid)?, ptr(exec, dx.uid)?);
                    let sp = ptr(exec, *scale)?;
                    let (mean, inv) = (ptr(exec, saved.0)?, ptr(exec, saved.1)?);
                    let (ds, db) = (ptr(exec, grads.0)?, ptr(exec, grads.1)?);
                    let p = param.raw();
                    let (status, call) = match activation {
                        None => (
                            {
                                (api.miopenBatchNormalizationBackward_V2)(
                                    h,
                                    BN_SPATIAL,
                                    alpha,
                                    beta,
                                    alpha,
                                    beta,
                                    x.desc.raw(),
                                    xp,
                                    dy.desc.raw(),
                                    dyp,
                                    dx.desc.raw(),
                                    dxp,
                                    p,
                                    p,
                                    p,
                                    p,
                                    sp,
                                    ds,
                                    db,
                                    UNUSED_EPSILON,
                                    mean,
                                    inv,
                                )
                            },
                            "miopenBatchNormalizationBackward_V2",
                        ),
                        Some((bias, act)) => {
                            let bp = ptr(exec, *bias)?;
                            (
                                {
                                    (api.miopenBatchNormBackwardActivation)(
                                        h,
                                        BN_SPATIAL,
                                        alpha,
                                        beta,
                                        alpha,
                                        beta,
                                        x.desc.raw(),
                                        xp,
                                        dy.desc.raw(),
                                        dyp,
                                        dx.desc.raw(),
                                        dxp,
                                        p,
                                        p,
                                        p,
                                        p,
                                        sp,
                                        bp,
                                        ds,
                                        db,
                                        UNUSED_EPSILON,
                                        mean,
                                        inv,
                                        act.raw(),
                                    )
                                },
                                "miopenBatchNormBackwardActivation",
                            )
                        }
                    };
                    bound.checked(status, call).map_err(&err)
                }
                Step::Activation { x, y, desc } => {
                    bound.activation(desc, &x.desc, ptr(exec, x.uid)?, &y.desc, ptr(exec, y.uid)?)
                }
                .map_err(&err),
                Step::Binary {
                    op,
                    a,
                    b,
                    alpha2,
                    y,
                } => {
                    bound.op_tensor(
                        *op,
                        1.0,
                        &a.desc,
                        ptr(exec, a.uid)?,
                        *alpha2,
                        &b.desc,
                        ptr(exec, b.uid)?,
                        &y.desc,
                        ptr(exec, y.uid)?,
                    )
                }
                .map_err(&err),
            }
        }
    }
}
