//! From a graph to an executable plan: applicability, fusion, workspace layout and
//! execution.
//!
//! A plan is a list of *stages* run in order. A stage is one producer (a convolution,
//! matmul, normalization, reduction, or the first pointwise op of a chain) followed by
//! an epilogue: the pointwise ops that consume its output (and batch-norm inference,
//! folded into a scale-and-shift), applied while the producer's values are still in
//! registers or cache. A virtual tensor inside a chain is never stored; one read by
//! several nodes is materialised in the workspace as `f32`.

use std::collections::HashMap;
use std::ffi::c_void;

use hipdnn_data_sdk::DataType;
use hipdnn_flatbuffers_sdk::model::{self, ConvGeometryRef, NodeAttributes};
use hipdnn_flatbuffers_sdk::wire::{ConvMode as WireConvMode, NormFwdPhase, ReductionMode};
use hipdnn_flatbuffers_sdk::{GraphView, TensorValue};
use hipdnn_plugin_sdk::{Buffers, PluginError, PluginResult};

use crate::kernels::conv::{ConvAlgo, ConvGeometry, ConvMode, ConvParams, FpropImpl, FpropPlan};
use crate::kernels::conv_bwd::{self, BwdImpl};
use crate::kernels::elementwise::{Epilogue, Operand, Step, broadcast, elementwise};
use crate::kernels::exec::Exec;
use crate::kernels::matmul::MatmulPlan;
use crate::kernels::norm::{self, ReduceOp};
use crate::kernels::pointwise::{PwOp, PwParams};
use crate::tensor::{DType, RawIn, RawOut, Shape};

/// How plans run (read from the knobs; see the crate docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuSettings {
    /// Worker threads (0: one per core).
    pub threads: usize,
    /// Convolution algorithm.
    pub conv_algo: ConvAlgo,
    /// Bitwise reproducible results (every kernel already is; kept for reporting).
    pub deterministic: bool,
    /// Largest workspace the plan may ask for, in bytes.
    pub workspace_limit: Option<usize>,
}

impl Default for CpuSettings {
    fn default() -> Self {
        Self {
            threads: 0,
            conv_algo: ConvAlgo::Auto,
            deterministic: false,
            workspace_limit: None,
        }
    }
}

/// Where a tensor lives during execution.
#[derive(Debug, Clone, PartialEq)]
enum Loc {
    /// A buffer the host passes (looked up by uid).
    User,
    /// Dense `f32` in the workspace at this byte offset.
    Ws(usize),
    /// A pass-by-value scalar.
    Value(f32),
    /// A virtual tensor that a fused stage never stores.
    Virtual,
}

#[derive(Debug, Clone)]
struct TInfo {
    name: String,
    dtype: DType,
    shape: Shape,
    loc: Loc,
}

/// An operand of an epilogue step, resolved at execution.
#[derive(Debug, Clone)]
enum Src {
    T(i64),
    Scalar(f32),
    /// An `f32` array in the stage's scratch (byte offset) with this shape.
    Scratch(usize, Shape),
}

#[derive(Debug, Clone)]
struct StepSpec {
    op: PwOp,
    chain_input: usize,
    others: [Option<Src>; 3],
    store: Option<i64>,
}

#[derive(Debug, Clone, Default)]
struct EpSpec {
    store: Option<i64>,
    steps: Vec<StepSpec>,
}

/// Batch-norm inference folded to `y = x·a + b`: how to compute `a`, `b`.
#[derive(Debug, Clone)]
struct BnFold {
    c: usize,
    mean: i64,
    inv_var: Option<i64>,
    var_eps: Option<(i64, Src)>,
    scale: i64,
    bias: i64,
    a_off: usize,
    b_off: usize,
}

#[derive(Debug, Clone)]
enum Producer {
    Elementwise {
        init: Src,
    },
    GenIndex {
        axis: usize,
        off: usize,
    },
    Conv {
        plan: FpropPlan,
        x: i64,
        w: i64,
    },
    Dgrad {
        geo: ConvGeometry,
        imp: BwdImpl,
        dy: i64,
        w: i64,
    },
    Wgrad {
        geo: ConvGeometry,
        imp: BwdImpl,
        x: i64,
        dy: i64,
    },
    Matmul {
        plan: MatmulPlan,
        a: i64,
        b: i64,
    },
    BnTrain(Box<BnTrain>),
    BnBwd(Box<BnBwd>),
    Norm(Box<NormSpec>),
    Reduce {
        x: i64,
        op: ReduceOp,
        off: usize,
    },
}

#[derive(Debug, Clone)]
struct BnTrain {
    x: i64,
    c: usize,
    scale: i64,
    bias: i64,
    eps: Src,
    momentum: Option<Src>,
    prev_mean: Option<i64>,
    prev_var: Option<i64>,
    mean_out: Option<i64>,
    inv_out: Option<i64>,
    next_mean: Option<i64>,
    next_var: Option<i64>,
    a_off: usize,
    b_off: usize,
}

#[derive(Debug, Clone)]
struct BnBwd {
    x: i64,
    dy: i64,
    mean: Option<i64>,
    inv_var: Option<i64>,
    scale: i64,
    dx: i64,
    dscale: i64,
    dbias: i64,
}

#[derive(Debug, Clone)]
struct NormSpec {
    rms: bool,
    x: i64,
    keep: Vec<bool>,
    eps: Src,
    mean_out: Option<i64>,
    inv_out: Option<i64>,
    /// Scratch offsets of the per-row `a` (inv) and `b` (−mean·inv) arrays.
    a_off: usize,
    b_off: usize,
}

#[derive(Debug, Clone)]
struct Stage {
    nodes: Vec<String>,
    producer: Producer,
    dims: Vec<usize>,
    folds: Vec<BnFold>,
    ep: EpSpec,
    /// Bytes of internal arrays at the start of the stage scratch.
    arrays: usize,
    /// `f32` elements of kernel workspace after the arrays.
    kernel_ws: usize,
}

/// An executable plan for one graph (built by [`plan_for`] or [`Plan::build`]).
#[derive(Debug)]
pub struct Plan {
    tensors: HashMap<i64, TInfo>,
    stages: Vec<Stage>,
    scratch_at: usize,
    workspace: usize,
    exec: Exec,
    settings: CpuSettings,
}

const ALIGN: usize = 64;

fn align(v: usize) -> usize {
    v.div_ceil(ALIGN) * ALIGN
}

fn dims_of(t: &model::TensorAttributes) -> Vec<usize> {
    t.dims.iter().map(|&d| d as usize).collect()
}

fn strides_of(t: &model::TensorAttributes) -> Vec<usize> {
    t.strides.iter().map(|&d| d as usize).collect()
}

/// Builds a plan for `graph` under `settings`.
///
/// # Errors
/// `NOT_APPLICABLE` naming the node (or tensor) this engine cannot run and why;
/// `BAD_PARAM` when the workspace limit is below what the graph needs.
pub fn plan_for(graph: &GraphView<'_>, settings: &CpuSettings) -> PluginResult<Plan> {
    Plan::build(graph, settings)
}

/// Why this engine cannot run `graph`, if it cannot.
pub fn unsupported_reason(graph: &GraphView<'_>) -> Option<String> {
    match graph.to_model() {
        Ok(g) => Builder::new(&g, &CpuSettings::default())
            .and_then(|mut b| b.run())
            .err(),
        Err(e) => Some(e.to_string()),
    }
}

impl Plan {
    /// Builds a plan for `graph` under `settings`.
    ///
    /// # Errors
    /// As [`plan_for`].
    pub fn build(graph: &GraphView<'_>, settings: &CpuSettings) -> PluginResult<Self> {
        let g = graph
            .to_model()
            .map_err(|e| PluginError::bad_param(e.to_string()))?;
        Self::from_model(&g, settings)
    }

    /// Builds a plan from an owned (validated) graph.
    ///
    /// # Errors
    /// As [`plan_for`].
    pub fn from_model(g: &model::Graph, settings: &CpuSettings) -> PluginResult<Self> {
        let mut b = Builder::new(g, settings).map_err(PluginError::not_applicable)?;
        b.run().map_err(PluginError::not_applicable)?;
        let mut plan = b.finish();
        if let Some(limit) = settings.workspace_limit
            && plan.workspace > limit
        {
            // Retry with the leanest algorithms before giving up.
            let lean = CpuSettings {
                conv_algo: ConvAlgo::Direct,
                ..settings.clone()
            };
            let mut b = Builder::new(g, &lean).map_err(PluginError::not_applicable)?;
            b.run().map_err(PluginError::not_applicable)?;
            plan = b.finish();
            plan.settings = settings.clone();
            if plan.workspace > limit {
                return Err(PluginError::bad_param(format!(
                    "global.workspace_size_limit is {limit} bytes but graph \"{}\" needs at least {} bytes on the CPU engine",
                    g.name, plan.workspace
                )));
            }
        }
        tracing::debug!(
            stages = plan.stages.len(),
            workspace = plan.workspace,
            "cpu plan built"
        );
        Ok(plan)
    }

    /// Workspace bytes [`Plan::execute`] needs.
    pub fn workspace_size(&self) -> usize {
        self.workspace
    }

    /// Number of stages (fused kernels) the plan runs.
    pub fn stage_count(&self) -> usize {
        self.stages.len()
    }

    /// Which node names each stage runs, and the convolution implementation if any
    /// (diagnostics, tests).
    pub fn describe(&self) -> Vec<String> {
        self.stages
            .iter()
            .map(|s| {
                let what = match &s.producer {
                    Producer::Conv { plan, .. } => format!("conv {:?}", plan.imp),
                    Producer::Dgrad { imp, .. } => format!("dgrad {imp:?}"),
                    Producer::Wgrad { imp, .. } => format!("wgrad {imp:?}"),
                    Producer::Matmul { .. } => "matmul".into(),
                    Producer::Elementwise { .. } => "elementwise".into(),
                    Producer::BnTrain(_) => "batchnorm training".into(),
                    Producer::BnBwd(_) => "batchnorm backward".into(),
                    Producer::Norm(n) => if n.rms { "rmsnorm" } else { "layernorm" }.into(),
                    Producer::Reduce { .. } => "reduction".into(),
                    Producer::GenIndex { .. } => "gen_index".into(),
                };
                format!("{what}: {}", s.nodes.join(" -> "))
            })
            .collect()
    }

    /// The settings the plan was built with.
    pub fn settings(&self) -> &CpuSettings {
        &self.settings
    }

    /// Runs the plan on host buffers passed the hipDNN way.
    ///
    /// # Errors
    /// A missing or null buffer (naming the uid), a workspace smaller than
    /// [`Plan::workspace_size`], an output overlapping another tensor.
    ///
    /// # Safety
    /// Every buffer must be host memory holding its tensor (dims, strides and type as in
    /// the graph), live and not accessed by anyone else for the duration of the call;
    /// the workspace must be host memory of `workspace.size` bytes.
    pub unsafe fn execute(
        &self,
        buffers: &Buffers<'_>,
        workspace: *mut c_void,
        ws_size: usize,
    ) -> PluginResult<()> {
        let mut ptrs = HashMap::new();
        for (&uid, t) in &self.tensors {
            if t.loc == Loc::User {
                ptrs.insert(uid, (buffers.require(uid)?.cast::<u8>(), usize::MAX));
            }
        }
        // SAFETY: the caller's contract.
        unsafe { self.execute_resolved(&ptrs, workspace.cast(), ws_size) }
    }

    /// Runs the plan on tensors borrowed from Rust slices (allocates the workspace).
    ///
    /// # Errors
    /// A missing tensor, a slice of the wrong type or too short for its tensor, an
    /// output overlapping another tensor.
    pub fn run(&self, tensors: &mut HostTensors<'_>) -> PluginResult<()> {
        let mut ws = vec![0u8; self.workspace];
        self.run_in(tensors, &mut ws)
    }

    /// As [`Plan::run`] with a caller-owned workspace of at least
    /// [`Plan::workspace_size`] bytes (reused across runs).
    ///
    /// # Errors
    /// As [`Plan::run`], and a workspace that is too small.
    pub fn run_in(&self, tensors: &mut HostTensors<'_>, ws: &mut [u8]) -> PluginResult<()> {
        let mut ptrs = HashMap::new();
        for (&uid, t) in &self.tensors {
            if t.loc != Loc::User {
                continue;
            }
            let Some(&(ptr, len, dtype, _)) = tensors.map.get(&uid) else {
                return Err(PluginError::bad_param(format!(
                    "no buffer for tensor uid {uid} (\"{}\")",
                    t.name
                )));
            };
            if dtype != t.dtype {
                return Err(PluginError::bad_param(format!(
                    "tensor uid {uid} (\"{}\") is {:?} but its buffer holds {dtype:?}",
                    t.name, t.dtype
                )));
            }
            ptrs.insert(uid, (ptr, len));
        }
        // SAFETY: every pointer comes from a live borrowed slice of `len` bytes
        // (`HostTensors` holds the borrows; outputs were borrowed mutably); the extents
        // are checked against the shapes in `execute_resolved`; the workspace is ours.
        unsafe { self.execute_resolved(&ptrs, ws.as_mut_ptr(), ws.len()) }
    }

    /// # Safety
    /// As [`Plan::execute`]; `len` bytes (or `usize::MAX` when unknown) per pointer.
    unsafe fn execute_resolved(
        &self,
        ptrs: &HashMap<i64, (*mut u8, usize)>,
        ws: *mut u8,
        ws_size: usize,
    ) -> PluginResult<()> {
        if ws_size < self.workspace || (self.workspace > 0 && ws.is_null()) {
            return Err(PluginError::bad_param(format!(
                "workspace of {ws_size} bytes is smaller than the {} bytes the plan needs",
                self.workspace
            )));
        }
        // Extents and overlap.
        let mut ranges: Vec<(usize, usize, i64, bool)> = Vec::new();
        for (&uid, &(p, len)) in ptrs {
            let t = &self.tensors[&uid];
            let bytes = t.shape.span() * t.dtype.size();
            if len != usize::MAX && bytes > len {
                return Err(PluginError::bad_param(format!(
                    "buffer of tensor uid {uid} (\"{}\") holds {len} bytes, its shape needs {bytes}",
                    t.name
                )));
            }
            if !(p as usize).is_multiple_of(t.dtype.size()) {
                return Err(PluginError::bad_param(format!(
                    "buffer of tensor uid {uid} (\"{}\") at {p:p} is not aligned for {:?}",
                    t.name, t.dtype
                )));
            }
            ranges.push((p as usize, p as usize + bytes, uid, self.is_output(uid)));
        }
        for a in &ranges {
            for b in &ranges {
                if a.2 != b.2 && (a.3 || b.3) && a.0 < b.1 && b.0 < a.1 {
                    let (o, other) = if a.3 { (a.2, b.2) } else { (b.2, a.2) };
                    return Err(PluginError::bad_param(format!(
                        "output tensor uid {o} overlaps tensor uid {other}: in-place execution is not supported by CPU_ENGINE"
                    )));
                }
            }
        }
        let base = if ws.is_null() {
            0
        } else {
            (ws as usize).div_ceil(ALIGN) * ALIGN - ws as usize
        };
        let ctx = Ctx {
            plan: self,
            ptrs,
            ws: if ws.is_null() {
                std::ptr::null_mut()
            } else {
                // SAFETY: `base` < ALIGN <= the slack included in `workspace`.
                unsafe { ws.add(base) }
            },
        };
        for stage in &self.stages {
            ctx.run_stage(stage)?;
        }
        Ok(())
    }

    fn is_output(&self, uid: i64) -> bool {
        self.stages.iter().any(|s| {
            let mut outs = Vec::new();
            stage_outputs(s, &mut outs);
            outs.contains(&uid)
        })
    }
}

fn stage_outputs(s: &Stage, outs: &mut Vec<i64>) {
    outs.extend(s.ep.store);
    outs.extend(s.ep.steps.iter().filter_map(|st| st.store));
    match &s.producer {
        Producer::BnTrain(b) => outs.extend(
            [b.mean_out, b.inv_out, b.next_mean, b.next_var]
                .into_iter()
                .flatten(),
        ),
        Producer::BnBwd(b) => outs.extend([b.dx, b.dscale, b.dbias]),
        Producer::Norm(n) => outs.extend([n.mean_out, n.inv_out].into_iter().flatten()),
        _ => {}
    }
}

/// Tensors borrowed from Rust slices, by uid, for [`Plan::run`].
#[derive(Debug, Default)]
pub struct HostTensors<'a> {
    map: HashMap<i64, (*mut u8, usize, DType, bool)>,
    _borrow: std::marker::PhantomData<&'a mut [u8]>,
}

impl<'a> HostTensors<'a> {
    /// No tensors yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// An input tensor.
    pub fn input<T: crate::tensor::Elem>(mut self, uid: i64, data: &'a [T]) -> Self {
        self.map.insert(
            uid,
            (
                data.as_ptr().cast_mut().cast(),
                std::mem::size_of_val(data),
                T::DTYPE,
                false,
            ),
        );
        self
    }

    /// An output tensor (written by the plan).
    pub fn output<T: crate::tensor::Elem>(mut self, uid: i64, data: &'a mut [T]) -> Self {
        self.map.insert(
            uid,
            (
                data.as_mut_ptr().cast(),
                std::mem::size_of_val(data),
                T::DTYPE,
                true,
            ),
        );
        self
    }
}

/// Execution context of one `execute`.
struct Ctx<'a> {
    plan: &'a Plan,
    ptrs: &'a HashMap<i64, (*mut u8, usize)>,
    ws: *mut u8,
}

impl Ctx<'_> {
    fn info(&self, uid: i64) -> &TInfo {
        &self.plan.tensors[&uid]
    }

    fn ptr(&self, uid: i64) -> *mut u8 {
        let t = self.info(uid);
        match t.loc {
            Loc::User => self.ptrs[&uid].0,
            // SAFETY: offsets are inside the workspace (laid out by the builder).
            Loc::Ws(off) => unsafe { self.ws.add(off) },
            Loc::Value(_) | Loc::Virtual => unreachable!("tensor uid {uid} has no memory"),
        }
    }

    fn input(&self, uid: i64) -> RawIn {
        let t = self.info(uid);
        // SAFETY: user buffers per the execute contract (extent checked when known);
        // workspace tensors are inside the workspace.
        unsafe { RawIn::from_parts(self.ptr(uid), t.dtype, t.shape.clone()) }
    }

    fn output(&self, uid: i64) -> RawOut {
        let t = self.info(uid);
        // SAFETY: as `input`; outputs do not overlap other tensors (checked).
        unsafe { RawOut::from_parts(self.ptr(uid), t.dtype, t.shape.clone()) }
    }

    fn scalar(&self, s: &Src) -> f32 {
        match s {
            Src::Scalar(v) => *v,
            Src::T(uid) => match self.info(*uid).loc {
                Loc::Value(v) => v,
                // SAFETY: a one-element tensor.
                _ => unsafe { self.input(*uid).load(0) },
            },
            Src::Scratch(..) => unreachable!("scratch arrays are not scalars"),
        }
    }

    #[expect(
        clippy::mut_from_ref,
        reason = "disjoint scratch regions of the workspace, one user each"
    )]
    fn scratch_f32(&self, off: usize, len: usize) -> &mut [f32] {
        // SAFETY: the builder laid out disjoint scratch regions inside the workspace;
        // each is used by one stage at a time, from the thread running the plan.
        unsafe {
            std::slice::from_raw_parts_mut(
                self.ws.add(self.plan.scratch_at + off).cast::<f32>(),
                len,
            )
        }
    }

    fn operand(&self, s: &Src, dims: &[usize]) -> Operand {
        match s {
            Src::Scalar(v) => Operand::Scalar(*v),
            Src::T(uid) => match self.info(*uid).loc {
                Loc::Value(v) => Operand::Scalar(v),
                _ => {
                    let t = self.input(*uid);
                    let shape = broadcast(t.shape(), dims);
                    Operand::Tensor(t.with_shape(shape))
                }
            },
            Src::Scratch(off, shape) => {
                let buf = self.scratch_f32(*off, shape.span());
                // SAFETY: a scratch array of `span` floats, only read during the stage.
                let t =
                    unsafe { RawIn::from_parts(buf.as_ptr().cast(), DType::F32, shape.clone()) };
                Operand::Tensor(t.with_shape(broadcast(shape, dims)))
            }
        }
    }

    fn epilogue(&self, stage: &Stage) -> Epilogue {
        let dims = &stage.dims;
        let out = |uid: i64| {
            let o = self.output(uid);
            assert_eq!(
                o.shape().dims,
                *dims,
                "stored tensor outside the index space"
            );
            o
        };
        Epilogue {
            store: stage.ep.store.map(out),
            steps: stage
                .ep
                .steps
                .iter()
                .map(|s| Step {
                    op: s.op,
                    chain_input: s.chain_input,
                    others: std::array::from_fn(|i| {
                        s.others[i].as_ref().map(|o| self.operand(o, dims))
                    }),
                    store: s.store.map(out),
                })
                .collect(),
        }
    }

    fn run_stage(&self, stage: &Stage) -> PluginResult<()> {
        let exec = &self.plan.exec;
        for f in &stage.folds {
            self.fold_bn(f);
        }
        let ep = self.epilogue(stage);
        let kws_at = stage.arrays;
        let kws = || self.scratch_f32(kws_at, stage.kernel_ws);
        match &stage.producer {
            Producer::Elementwise { init } => {
                let init = self.operand(init, &stage.dims);
                elementwise(&init, &ep, &stage.dims, exec);
            }
            Producer::Conv { plan, x, w } => {
                plan.run(&self.input(*x), &self.input(*w), &ep, exec, kws());
            }
            Producer::Dgrad { geo, imp, dy, w } => {
                conv_bwd::dgrad(
                    geo,
                    &self.input(*dy),
                    &self.input(*w),
                    &stage.dims,
                    &ep,
                    *imp,
                    exec,
                    kws(),
                );
            }
            Producer::Wgrad { geo, imp, x, dy } => {
                conv_bwd::wgrad(
                    geo,
                    &self.input(*x),
                    &self.input(*dy),
                    &stage.dims,
                    &ep,
                    *imp,
                    exec,
                    kws(),
                );
            }
            Producer::Matmul { plan, a, b } => {
                plan.run(&self.input(*a), &self.input(*b), &ep, exec, kws());
            }
            Producer::BnTrain(b) => self.bn_train(b, stage, &ep),
            Producer::BnBwd(b) => self.bn_bwd(b),
            Producer::Norm(n) => self.norm(n, stage, &ep),
            Producer::GenIndex { axis, off } => {
                let d = &stage.dims;
                let n: usize = d.iter().product();
                let buf = self.scratch_f32(*off, n);
                let inner: usize = d[axis + 1..].iter().product();
                for (i, v) in buf.iter_mut().enumerate() {
                    *v = ((i / inner) % d[*axis]) as f32;
                }
                // SAFETY: `buf` holds the dense result and is only read from here on.
                let t =
                    unsafe { RawIn::from_parts(buf.as_ptr().cast(), DType::F32, Shape::packed(d)) };
                elementwise(&Operand::Tensor(t), &ep, d, exec);
            }
            Producer::Reduce { x, op, off } => {
                let n: usize = stage.dims.iter().product();
                let buf = self.scratch_f32(*off, n);
                norm::reduce(&self.input(*x), &stage.dims, *op, buf, exec);
                // SAFETY: `buf` holds the dense result and is only read from here on.
                let t = unsafe {
                    RawIn::from_parts(buf.as_ptr().cast(), DType::F32, Shape::packed(&stage.dims))
                };
                elementwise(&Operand::Tensor(t), &ep, &stage.dims, exec);
            }
        }
        Ok(())
    }

    fn fold_bn(&self, f: &BnFold) {
        let mean = norm::per_channel(&self.input(f.mean), f.c);
        let inv: Vec<f64> = match (&f.inv_var, &f.var_eps) {
            (Some(iv), _) => norm::per_channel(&self.input(*iv), f.c),
            (None, Some((var, eps))) => {
                let eps = f64::from(self.scalar(eps));
                norm::per_channel(&self.input(*var), f.c)
                    .into_iter()
                    .map(|v| 1.0 / (v + eps).sqrt())
                    .collect()
            }
            (None, None) => unreachable!("checked when built"),
        };
        let scale = norm::per_channel(&self.input(f.scale), f.c);
        let bias = norm::per_channel(&self.input(f.bias), f.c);
        let a = self.scratch_f32(f.a_off, f.c);
        for i in 0..f.c {
            a[i] = (scale[i] * inv[i]) as f32;
        }
        let b = self.scratch_f32(f.b_off, f.c);
        for i in 0..f.c {
            b[i] = (bias[i] - mean[i] * scale[i] * inv[i]) as f32;
        }
    }

    fn bn_train(&self, b: &BnTrain, stage: &Stage, ep: &Epilogue) {
        let exec = &self.plan.exec;
        let x = self.input(b.x);
        let mut keep = vec![false; x.shape().rank()];
        keep[1] = true;
        let (mean, var) = norm::moments(&x, &keep, exec);
        let eps = f64::from(self.scalar(&b.eps));
        let inv: Vec<f64> = var.iter().map(|v| 1.0 / (v + eps).sqrt()).collect();
        let scale = norm::per_channel(&self.input(b.scale), b.c);
        let bias = norm::per_channel(&self.input(b.bias), b.c);
        if let Some(o) = b.mean_out {
            norm::write_per_channel(&self.output(o), &mean);
        }
        if let Some(o) = b.inv_out {
            norm::write_per_channel(&self.output(o), &inv);
        }
        if let Some(m) = &b.momentum {
            let m = f64::from(self.scalar(m));
            let count = (x.shape().numel() / b.c) as f64;
            let unbias = if count > 1.0 {
                count / (count - 1.0)
            } else {
                1.0
            };
            if let (Some(p), Some(o)) = (b.prev_mean, b.next_mean) {
                let prev = norm::per_channel(&self.input(p), b.c);
                let next: Vec<f64> = prev
                    .iter()
                    .zip(&mean)
                    .map(|(p, mu)| (1.0 - m) * p + m * mu)
                    .collect();
                norm::write_per_channel(&self.output(o), &next);
            }
            if let (Some(p), Some(o)) = (b.prev_var, b.next_var) {
                let prev = norm::per_channel(&self.input(p), b.c);
                let next: Vec<f64> = prev
                    .iter()
                    .zip(&var)
                    .map(|(p, v)| (1.0 - m) * p + m * v * unbias)
                    .collect();
                norm::write_per_channel(&self.output(o), &next);
            }
        }
        let a = self.scratch_f32(b.a_off, b.c);
        for i in 0..b.c {
            a[i] = (scale[i] * inv[i]) as f32;
        }
        let bb = self.scratch_f32(b.b_off, b.c);
        for i in 0..b.c {
            bb[i] = (bias[i] - mean[i] * scale[i] * inv[i]) as f32;
        }
        elementwise(
            &Operand::Tensor(x.with_shape(broadcast(x.shape(), &stage.dims))),
            ep,
            &stage.dims,
            exec,
        );
    }

    fn bn_bwd(&self, b: &BnBwd) {
        let exec = &self.plan.exec;
        let x = self.input(b.x);
        let c = x.shape().dims[1];
        let (mean, inv) = match (b.mean, b.inv_var) {
            (Some(m), Some(iv)) => (
                norm::per_channel(&self.input(m), c),
                norm::per_channel(&self.input(iv), c),
            ),
            _ => {
                let mut keep = vec![false; x.shape().rank()];
                keep[1] = true;
                let (m, v) = norm::moments(&x, &keep, exec);
                // Without saved statistics there is no epsilon either: use the
                // batch variance as is (hipDNN graphs pass saved statistics).
                (m, v.iter().map(|v| 1.0 / v.max(1e-30).sqrt()).collect())
            }
        };
        let scale = norm::per_channel(&self.input(b.scale), c);
        let (ds, db) = norm::batchnorm_backward(
            &x,
            &self.input(b.dy),
            &mean,
            &inv,
            &scale,
            &self.output(b.dx),
            exec,
        );
        norm::write_per_channel(&self.output(b.dscale), &ds);
        norm::write_per_channel(&self.output(b.dbias), &db);
    }

    fn norm(&self, n: &NormSpec, stage: &Stage, ep: &Epilogue) {
        let exec = &self.plan.exec;
        let x = self.input(n.x);
        let eps = f64::from(self.scalar(&n.eps));
        let rows: usize = x
            .shape()
            .dims
            .iter()
            .zip(&n.keep)
            .filter(|(_, k)| **k)
            .map(|(d, _)| d)
            .product();
        let (mean, inv): (Vec<f64>, Vec<f64>) = if n.rms {
            let ms = norm::mean_square(&x, &n.keep, exec);
            (
                vec![0.0; rows],
                ms.iter().map(|m| 1.0 / (m + eps).sqrt()).collect(),
            )
        } else {
            let (m, v) = norm::moments(&x, &n.keep, exec);
            let inv = v.iter().map(|v| 1.0 / (v + eps).sqrt()).collect();
            (m, inv)
        };
        let stats_dims: Vec<usize> = x
            .shape()
            .dims
            .iter()
            .zip(&n.keep)
            .map(|(d, k)| if *k { *d } else { 1 })
            .collect();
        let write = |uid: i64, vals: &[f64]| {
            let o = self.output(uid);
            let s = broadcast(o.shape(), &stats_dims);
            let dense = Shape::packed(&stats_dims);
            let mut idx = vec![0; stats_dims.len()];
            for (i, v) in vals.iter().enumerate() {
                let mut rem = i;
                for d in (0..idx.len()).rev() {
                    idx[d] = rem % stats_dims[d];
                    rem /= stats_dims[d];
                }
                let _ = &dense;
                // SAFETY: inside the output's shape; single-threaded.
                unsafe { o.store(s.offset(&idx), *v as f32) };
            }
        };
        if let Some(o) = n.mean_out {
            write(o, &mean);
        }
        if let Some(o) = n.inv_out {
            write(o, &inv);
        }
        let a = self.scratch_f32(n.a_off, rows);
        for i in 0..rows {
            a[i] = inv[i] as f32;
        }
        let b = self.scratch_f32(n.b_off, rows);
        for i in 0..rows {
            b[i] = (-mean[i] * inv[i]) as f32;
        }
        elementwise(
            &Operand::Tensor(x.with_shape(broadcast(x.shape(), &stage.dims))),
            ep,
            &stage.dims,
            exec,
        );
    }
}

/// Graph analysis and fusion.
struct Builder<'g> {
    g: &'g model::Graph,
    settings: CpuSettings,
    tensors: HashMap<i64, TInfo>,
    consumers: HashMap<i64, Vec<usize>>,
    producer: HashMap<i64, usize>,
    stage_of: Vec<Option<usize>>,
    stages: Vec<Stage>,
    ws_next: usize,
    threads: usize,
    pending_first_step: Option<StepSpec>,
    pending_steps: Vec<StepSpec>,
}

type R<T> = Result<T, String>;

/// A stage's producer, its main output, index-space dims, folds and scratch bytes.
type Produced = (Producer, Option<i64>, Vec<usize>, Vec<BnFold>, usize);

impl<'g> Builder<'g> {
    fn new(g: &'g model::Graph, settings: &CpuSettings) -> R<Self> {
        if g.nodes.is_empty() {
            return Err("graph has no nodes".into());
        }
        let mut tensors = HashMap::new();
        for t in &g.tensors {
            let what = || format!("tensor uid {} (\"{}\")", t.uid, t.name);
            if t.ragged_offset_tensor_uid.is_some() {
                return Err(format!(
                    "{} is ragged; CPU_ENGINE does not run ragged tensors",
                    what()
                ));
            }
            if t.is_runtime_pass_by_value {
                return Err(format!(
                    "{} is a runtime pass-by-value scalar; CPU_ENGINE needs scalars baked into the graph",
                    what()
                ));
            }
            let dt = match t.data_type {
                DataType::Unset if t.is_virtual => g.intermediate_data_type,
                DataType::Unset => g.io_data_type,
                d => d,
            };
            let dt = if t.is_virtual && dt == DataType::Unset {
                DataType::Float
            } else {
                dt
            };
            let loc = match &t.value {
                Some(v) => Loc::Value(v.as_f64() as f32),
                None if t.is_virtual => Loc::Virtual,
                None => Loc::User,
            };
            let dtype = match (DType::from_data_type(dt), &t.value) {
                (Some(d), _) => d,
                (
                    None,
                    Some(
                        TensorValue::Float64(_)
                        | TensorValue::Int32(_)
                        | TensorValue::Int64(_)
                        | TensorValue::Bool(_),
                    ),
                ) => DType::F32,
                (None, _) => {
                    return Err(format!(
                        "{} has data type {}; CPU_ENGINE handles FLOAT, HALF and BFLOAT16",
                        what(),
                        dt.name()
                    ));
                }
            };
            if t.dims.len() != t.strides.len()
                || t.dims.is_empty()
                || t.dims.iter().any(|&d| d <= 0)
                || t.strides.iter().any(|&s| s < 0)
            {
                return Err(format!(
                    "{} has invalid dims {:?} / strides {:?}",
                    what(),
                    t.dims,
                    t.strides
                ));
            }
            tensors.insert(
                t.uid,
                TInfo {
                    name: t.name.clone(),
                    dtype,
                    shape: Shape::new(&dims_of(t), &strides_of(t)),
                    loc,
                },
            );
        }
        let mut consumers: HashMap<i64, Vec<usize>> = HashMap::new();
        let mut producer = HashMap::new();
        for (i, n) in g.nodes.iter().enumerate() {
            let (mut ins, mut outs) = (Vec::new(), Vec::new());
            n.attributes.tensor_uids(&mut ins, &mut outs);
            for u in ins {
                if !tensors.contains_key(&u) {
                    return Err(format!(
                        "node \"{}\" reads tensor uid {u}, which the graph does not declare",
                        n.name
                    ));
                }
                let c = consumers.entry(u).or_default();
                if !c.contains(&i) {
                    c.push(i);
                }
            }
            for u in outs {
                if !tensors.contains_key(&u) {
                    return Err(format!(
                        "node \"{}\" writes tensor uid {u}, which the graph does not declare",
                        n.name
                    ));
                }
                producer.insert(u, i);
            }
            let ct = if n.compute_data_type == DataType::Unset {
                g.compute_data_type
            } else {
                n.compute_data_type
            };
            if !matches!(ct, DataType::Unset | DataType::Float) {
                return Err(format!(
                    "node \"{}\" asks for compute type {}; CPU_ENGINE computes in FLOAT",
                    n.name,
                    ct.name()
                ));
            }
        }
        let threads = Exec::new(settings.threads).threads();
        Ok(Self {
            g,
            settings: settings.clone(),
            tensors,
            consumers,
            producer,
            stage_of: vec![None; g.nodes.len()],
            stages: Vec::new(),
            ws_next: 0,
            threads,
            pending_first_step: None,
            pending_steps: Vec::new(),
        })
    }

    fn t(&self, uid: i64) -> &TInfo {
        &self.tensors[&uid]
    }

    fn dims(&self, uid: i64) -> Vec<usize> {
        self.t(uid).shape.dims.clone()
    }

    fn is_virtual(&self, uid: i64) -> bool {
        self.g.tensors.iter().any(|t| t.uid == uid && t.is_virtual)
    }

    fn no_value(&self, node: &str, uid: i64, role: &str) -> R<()> {
        if matches!(self.t(uid).loc, Loc::Value(_)) {
            return Err(format!(
                "node \"{node}\": {role} tensor uid {uid} is a pass-by-value scalar"
            ));
        }
        Ok(())
    }

    fn scalar_src(&self, node: &str, uid: i64, role: &str) -> R<Src> {
        let t = self.t(uid);
        match t.loc {
            Loc::Value(v) => Ok(Src::Scalar(v)),
            _ if t.shape.numel() == 1 => Ok(Src::T(uid)),
            _ => Err(format!(
                "node \"{node}\": {role} tensor uid {uid} must hold one value, has dims {:?}",
                t.shape.dims
            )),
        }
    }

    fn per_channel_ok(&self, node: &str, uid: i64, c: usize, role: &str) -> R<()> {
        let t = self.t(uid);
        let d = &t.shape.dims;
        let ok = t.shape.numel() == c && (d.len() < 2 || d[1] == c || c == 1);
        if !ok {
            return Err(format!(
                "node \"{node}\": {role} tensor uid {uid} has dims {d:?}, expected [1, {c}, 1, ...]"
            ));
        }
        self.no_value(node, uid, role)
    }

    /// Reserves `bytes` of stage scratch (offset relative to the stage's scratch).
    fn array(off: &mut usize, elems: usize) -> usize {
        let at = *off;
        *off = align(*off + elems * 4);
        at
    }

    fn conv_params(g: ConvGeometryRef<'_>) -> R<ConvParams> {
        let u = |v: &[i64], what: &str| -> R<Vec<usize>> {
            v.iter()
                .map(|&x| usize::try_from(x).map_err(|_| format!("negative {what} {x}")))
                .collect()
        };
        let mode = match g.conv_mode {
            WireConvMode::CONVOLUTION => ConvMode::Convolution,
            WireConvMode::CROSS_CORRELATION | WireConvMode::UNSET => ConvMode::CrossCorrelation,
            m => return Err(format!("unknown convolution mode {}", m.0)),
        };
        Ok(ConvParams {
            pre_padding: u(g.pre_padding, "padding")?,
            post_padding: u(g.post_padding, "padding")?,
            stride: u(g.stride, "stride")?,
            dilation: u(g.dilation, "dilation")?,
            mode,
        })
    }

    /// The producer of node `i`: `(producer, main output, index-space dims, folds, arrays)`.
    fn producer_for(&mut self, i: usize) -> R<Produced> {
        let node = &self.g.nodes[i];
        let name = node.name.as_str();
        let mut arrays = 0usize;
        let algo = self.settings.conv_algo;
        let threads = self.threads;
        let err = |e: String| format!("node \"{name}\": {e}");
        Ok(match &node.attributes {
            NodeAttributes::ConvolutionFwdAttributes(a) => {
                let (x, w, y) = (a.x_tensor_uid, a.w_tensor_uid, a.y_tensor_uid);
                for (u, r) in [(x, "x"), (w, "w"), (y, "y")] {
                    self.no_value(name, u, r)?;
                }
                let p = Self::conv_params(a.geometry()).map_err(err)?;
                let geo = ConvGeometry::new(&self.dims(x), &self.dims(w), &self.dims(y), &p)
                    .map_err(err)?;
                let (xt, wt) = (self.t(x), self.t(w));
                let plan = FpropPlan::new(
                    geo,
                    (&xt.shape, xt.dtype),
                    (&wt.shape, wt.dtype),
                    algo,
                    threads,
                );
                let d = self.dims(y);
                (Producer::Conv { plan, x, w }, Some(y), d, vec![], 0)
            }
            NodeAttributes::ConvolutionBwdAttributes(a) => {
                let (dy, w, dx) = (a.dy_tensor_uid, a.w_tensor_uid, a.dx_tensor_uid);
                for (u, r) in [(dy, "dy"), (w, "w"), (dx, "dx")] {
                    self.no_value(name, u, r)?;
                }
                let p = Self::conv_params(a.geometry()).map_err(err)?;
                let geo = ConvGeometry::new(&self.dims(dx), &self.dims(w), &self.dims(dy), &p)
                    .map_err(err)?;
                let imp = if algo == ConvAlgo::Direct {
                    BwdImpl::Direct
                } else {
                    BwdImpl::Gemm
                };
                let d = self.dims(dx);
                (Producer::Dgrad { geo, imp, dy, w }, Some(dx), d, vec![], 0)
            }
            NodeAttributes::ConvolutionWrwAttributes(a) => {
                let (x, dy, dw) = (a.x_tensor_uid, a.dy_tensor_uid, a.dw_tensor_uid);
                for (u, r) in [(x, "x"), (dy, "dy"), (dw, "dw")] {
                    self.no_value(name, u, r)?;
                }
                let p = Self::conv_params(a.geometry()).map_err(err)?;
                let geo = ConvGeometry::new(&self.dims(x), &self.dims(dw), &self.dims(dy), &p)
                    .map_err(err)?;
                let imp = if algo == ConvAlgo::Direct {
                    BwdImpl::Direct
                } else {
                    BwdImpl::Gemm
                };
                let d = self.dims(dw);
                (Producer::Wgrad { geo, imp, x, dy }, Some(dw), d, vec![], 0)
            }
            NodeAttributes::MatmulAttributes(a) => {
                let (x, y, c) = (a.a_tensor_uid, a.b_tensor_uid, a.c_tensor_uid);
                for (u, r) in [(x, "a"), (y, "b"), (c, "c")] {
                    self.no_value(name, u, r)?;
                }
                let plan = MatmulPlan::new(
                    &self.dims(x),
                    &self.dims(y),
                    &self.dims(c),
                    self.t(x).dtype,
                    threads,
                )
                .map_err(err)?;
                let d = self.dims(c);
                (Producer::Matmul { plan, a: x, b: y }, Some(c), d, vec![], 0)
            }
            NodeAttributes::PointwiseAttributes(p)
                if p.operation == hipdnn_flatbuffers_sdk::wire::PointwiseMode::GEN_INDEX =>
            {
                let out = p.out_0_tensor_uid;
                self.no_value(name, out, "out_0")?;
                let d = self.dims(out);
                let rank = d.len() as i64;
                let axis = p
                    .axis_tensor_uid
                    .map(|a| if a < 0 { a + rank } else { a })
                    .filter(|a| (0..rank).contains(a))
                    .ok_or_else(|| {
                        format!(
                            "node \"{name}\": GEN_INDEX needs an axis in -{rank}..{rank}, got {:?}",
                            p.axis_tensor_uid
                        )
                    })?;
                if self
                    .t(p.in_0_tensor_uid)
                    .shape
                    .broadcast_strides(&d)
                    .is_none()
                {
                    return Err(format!(
                        "node \"{name}\": input does not broadcast to the output dims {d:?}"
                    ));
                }
                let off = Self::array(&mut arrays, d.iter().product());
                (
                    Producer::GenIndex {
                        axis: axis as usize,
                        off,
                    },
                    Some(out),
                    d,
                    vec![],
                    arrays,
                )
            }
            NodeAttributes::PointwiseAttributes(p) => {
                let (op, ins) = self.pointwise_op(i)?;
                let out = p.out_0_tensor_uid;
                let d = self.dims(out);
                let init = match ins[0] {
                    Some(u) => {
                        let t = self.t(u);
                        if let Loc::Value(v) = t.loc {
                            Src::Scalar(v)
                        } else {
                            Src::T(u)
                        }
                    }
                    None => return Err(format!("node \"{name}\": pointwise input 0 is missing")),
                };
                let step = StepSpec {
                    op,
                    chain_input: 0,
                    others: [
                        None,
                        ins[1].map(|u| self.src(u)),
                        ins[2].map(|u| self.src(u)),
                    ],
                    store: None,
                };
                // The first step is part of the producer: push it into the epilogue.
                self.pending_first_step = Some(step);
                (Producer::Elementwise { init }, Some(out), d, vec![], 0)
            }
            NodeAttributes::BatchnormInferenceAttributes(_)
            | NodeAttributes::BatchnormInferenceAttributesVarianceExt(_) => {
                let (x, y, fold) = self.bn_fold(i, &mut arrays)?;
                let d = self.dims(y);
                let step = StepSpec {
                    op: PwOp::ScaleShift,
                    chain_input: 0,
                    others: [
                        None,
                        Some(Src::Scratch(fold.a_off, bn_shape(&d, fold.c))),
                        Some(Src::Scratch(fold.b_off, bn_shape(&d, fold.c))),
                    ],
                    store: None,
                };
                self.pending_first_step = Some(step);
                (
                    Producer::Elementwise { init: Src::T(x) },
                    Some(y),
                    d,
                    vec![fold],
                    arrays,
                )
            }
            NodeAttributes::BatchnormAttributes(a) => {
                if !a.peer_stats_tensor_uid.is_empty() {
                    return Err(format!(
                        "node \"{name}\": peer statistics (multi-device batch norm) are not supported"
                    ));
                }
                let (x, y) = (a.x_tensor_uid, a.y_tensor_uid);
                self.no_value(name, x, "x")?;
                let xd = self.dims(x);
                if xd.len() < 2 || self.dims(y) != xd {
                    return Err(format!(
                        "node \"{name}\": x and y must share dims of rank >= 2"
                    ));
                }
                let c = xd[1];
                self.per_channel_ok(name, a.scale_tensor_uid, c, "scale")?;
                self.per_channel_ok(name, a.bias_tensor_uid, c, "bias")?;
                for (u, r) in [
                    (a.prev_running_mean_tensor_uid, "prev_running_mean"),
                    (a.prev_running_variance_tensor_uid, "prev_running_variance"),
                    (a.mean_tensor_uid, "mean"),
                    (a.inv_variance_tensor_uid, "inv_variance"),
                    (a.next_running_mean_tensor_uid, "next_running_mean"),
                    (a.next_running_variance_tensor_uid, "next_running_variance"),
                ] {
                    if let Some(u) = u {
                        self.per_channel_ok(name, u, c, r)?;
                    }
                }
                let running = [
                    a.prev_running_mean_tensor_uid,
                    a.prev_running_variance_tensor_uid,
                    a.next_running_mean_tensor_uid,
                    a.next_running_variance_tensor_uid,
                ];
                let any = running.iter().any(Option::is_some);
                if any && (running.iter().any(Option::is_none) || a.momentum_tensor_uid.is_none()) {
                    return Err(format!(
                        "node \"{name}\": running statistics need prev/next mean and variance and a momentum"
                    ));
                }
                let eps = self.scalar_src(name, a.epsilon_tensor_uid, "epsilon")?;
                let momentum = a
                    .momentum_tensor_uid
                    .map(|m| self.scalar_src(name, m, "momentum"))
                    .transpose()?;
                let a_off = Self::array(&mut arrays, c);
                let b_off = Self::array(&mut arrays, c);
                let step = StepSpec {
                    op: PwOp::ScaleShift,
                    chain_input: 0,
                    others: [
                        None,
                        Some(Src::Scratch(a_off, bn_shape(&xd, c))),
                        Some(Src::Scratch(b_off, bn_shape(&xd, c))),
                    ],
                    store: None,
                };
                self.pending_first_step = Some(step);
                let spec = BnTrain {
                    x,
                    c,
                    scale: a.scale_tensor_uid,
                    bias: a.bias_tensor_uid,
                    eps,
                    momentum,
                    prev_mean: a.prev_running_mean_tensor_uid,
                    prev_var: a.prev_running_variance_tensor_uid,
                    mean_out: a.mean_tensor_uid,
                    inv_out: a.inv_variance_tensor_uid,
                    next_mean: a.next_running_mean_tensor_uid,
                    next_var: a.next_running_variance_tensor_uid,
                    a_off,
                    b_off,
                };
                (
                    Producer::BnTrain(Box::new(spec)),
                    Some(y),
                    xd,
                    vec![],
                    arrays,
                )
            }
            NodeAttributes::BatchnormBackwardAttributes(a) => {
                if !a.peer_stats_tensor_uid.is_empty() {
                    return Err(format!(
                        "node \"{name}\": peer statistics (multi-device batch norm) are not supported"
                    ));
                }
                let (x, dy, dx) = (a.x_tensor_uid, a.dy_tensor_uid, a.dx_tensor_uid);
                let xd = self.dims(x);
                if xd.len() < 2 || self.dims(dy) != xd || self.dims(dx) != xd {
                    return Err(format!(
                        "node \"{name}\": x, dy and dx must share dims of rank >= 2"
                    ));
                }
                for (u, r) in [(x, "x"), (dy, "dy"), (dx, "dx")] {
                    self.no_value(name, u, r)?;
                }
                let c = xd[1];
                for (u, r) in [
                    (Some(a.scale_tensor_uid), "scale"),
                    (a.mean_tensor_uid, "mean"),
                    (a.inv_variance_tensor_uid, "inv_variance"),
                    (Some(a.dscale_tensor_uid), "dscale"),
                    (Some(a.dbias_tensor_uid), "dbias"),
                ] {
                    if let Some(u) = u {
                        self.per_channel_ok(name, u, c, r)?;
                    }
                }
                if a.mean_tensor_uid.is_some() != a.inv_variance_tensor_uid.is_some() {
                    return Err(format!(
                        "node \"{name}\": mean and inv_variance must be given together"
                    ));
                }
                if a.mean_tensor_uid.is_none() {
                    return Err(format!(
                        "node \"{name}\": batch-norm backward needs the saved mean and inv_variance"
                    ));
                }
                let spec = BnBwd {
                    x,
                    dy,
                    mean: a.mean_tensor_uid,
                    inv_var: a.inv_variance_tensor_uid,
                    scale: a.scale_tensor_uid,
                    dx,
                    dscale: a.dscale_tensor_uid,
                    dbias: a.dbias_tensor_uid,
                };
                (Producer::BnBwd(Box::new(spec)), None, xd, vec![], 0)
            }
            NodeAttributes::LayernormAttributes(a) => {
                let (x, y) = (a.x_tensor_uid, a.y_tensor_uid);
                self.no_value(name, x, "x")?;
                let xd = self.dims(x);
                if self.dims(y) != xd {
                    return Err(format!("node \"{name}\": x and y must share dims"));
                }
                let r = xd.len();
                let count = if a.normalized_dim_count > 0 {
                    a.normalized_dim_count as usize
                } else {
                    r.saturating_sub(1)
                };
                if count == 0 || count > r {
                    return Err(format!(
                        "node \"{name}\": cannot normalize {count} of {r} dims"
                    ));
                }
                let keep: Vec<bool> = (0..r).map(|d| d < r - count).collect();
                let (spec, steps, arrays) = self.norm_spec(
                    i,
                    false,
                    x,
                    &keep,
                    a.epsilon_tensor_uid,
                    a.mean_tensor_uid,
                    a.inv_variance_tensor_uid,
                    Some(a.scale_tensor_uid),
                    Some(a.bias_tensor_uid),
                    a.forward_phase,
                )?;
                self.pending_steps = steps;
                (Producer::Norm(Box::new(spec)), Some(y), xd, vec![], arrays)
            }
            NodeAttributes::RMSNormAttributes(a) => {
                let (x, y) = (a.x_tensor_uid, a.y_tensor_uid);
                self.no_value(name, x, "x")?;
                let xd = self.dims(x);
                if self.dims(y) != xd {
                    return Err(format!("node \"{name}\": x and y must share dims"));
                }
                let r = xd.len();
                if r < 2 {
                    return Err(format!("node \"{name}\": RMS norm needs rank >= 2"));
                }
                let keep: Vec<bool> = (0..r).map(|d| d == 0).collect();
                let (spec, steps, arrays) = self.norm_spec(
                    i,
                    true,
                    x,
                    &keep,
                    a.epsilon_tensor_uid,
                    None,
                    a.inv_rms_tensor_uid,
                    Some(a.scale_tensor_uid),
                    a.bias_tensor_uid,
                    a.forward_phase,
                )?;
                self.pending_steps = steps;
                (Producer::Norm(Box::new(spec)), Some(y), xd, vec![], arrays)
            }
            NodeAttributes::ReductionAttributes(a) => {
                let (x, y) = (a.in_tensor_uid, a.out_tensor_uid);
                self.no_value(name, x, "in")?;
                let (xd, yd) = (self.dims(x), self.dims(y));
                if xd.len() != yd.len() || xd.iter().zip(&yd).any(|(a, b)| a != b && *b != 1) {
                    return Err(format!(
                        "node \"{name}\": output dims {yd:?} are not a reduction of {xd:?}"
                    ));
                }
                let op = match a.mode {
                    ReductionMode::ADD => ReduceOp::Add,
                    ReductionMode::MUL => ReduceOp::Mul,
                    ReductionMode::MIN_OP => ReduceOp::Min,
                    ReductionMode::MAX_OP => ReduceOp::Max,
                    ReductionMode::AMAX => ReduceOp::Amax,
                    ReductionMode::AVG => ReduceOp::Avg,
                    ReductionMode::NORM1 => ReduceOp::Norm1,
                    ReductionMode::NORM2 => ReduceOp::Norm2,
                    ReductionMode::MUL_NO_ZEROS => ReduceOp::MulNoZeros,
                    m => {
                        return Err(format!(
                            "node \"{name}\": reduction mode {} is not supported",
                            m.0
                        ));
                    }
                };
                let off = Self::array(&mut arrays, yd.iter().product());
                (Producer::Reduce { x, op, off }, Some(y), yd, vec![], arrays)
            }
            other => {
                return Err(format!(
                    "node \"{name}\" is a {}, which CPU_ENGINE does not run",
                    other.type_name()
                ));
            }
        })
    }

    fn src(&self, uid: i64) -> Src {
        match self.t(uid).loc {
            Loc::Value(v) => Src::Scalar(v),
            _ => Src::T(uid),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn norm_spec(
        &self,
        i: usize,
        rms: bool,
        x: i64,
        keep: &[bool],
        eps: i64,
        mean_out: Option<i64>,
        inv_out: Option<i64>,
        scale: Option<i64>,
        bias: Option<i64>,
        phase: NormFwdPhase,
    ) -> R<(NormSpec, Vec<StepSpec>, usize)> {
        let name = &self.g.nodes[i].name;
        if phase == NormFwdPhase::INFERENCE && (mean_out.is_some() || inv_out.is_some()) {
            tracing::debug!(node = %name, "inference-phase norm with statistics outputs: writing them anyway");
        }
        let xd = self.dims(x);
        let stats_dims: Vec<usize> = xd
            .iter()
            .zip(keep)
            .map(|(d, k)| if *k { *d } else { 1 })
            .collect();
        for (u, r) in [(mean_out, "mean"), (inv_out, "inv_variance")] {
            if let Some(u) = u {
                let t = self.t(u);
                if t.shape.broadcast_strides(&stats_dims).is_none()
                    || t.shape.numel() != stats_dims.iter().product::<usize>()
                {
                    return Err(format!(
                        "node \"{name}\": {r} tensor uid {u} has dims {:?}, expected {stats_dims:?}",
                        t.shape.dims
                    ));
                }
            }
        }
        let eps = self.scalar_src(name, eps, "epsilon")?;
        let rows: usize = stats_dims.iter().product();
        let mut arrays = 0;
        let a_off = Self::array(&mut arrays, rows);
        let b_off = Self::array(&mut arrays, rows);
        let stat_shape = Shape::packed(&stats_dims);
        let mut steps = vec![StepSpec {
            op: PwOp::ScaleShift,
            chain_input: 0,
            others: [
                None,
                Some(Src::Scratch(a_off, stat_shape.clone())),
                Some(Src::Scratch(b_off, stat_shape)),
            ],
            store: None,
        }];
        for (u, op, r) in [(scale, PwOp::Mul, "scale"), (bias, PwOp::Add, "bias")] {
            if let Some(u) = u {
                if self.t(u).shape.broadcast_strides(&xd).is_none() {
                    return Err(format!(
                        "node \"{name}\": {r} tensor uid {u} does not broadcast to x dims {xd:?}"
                    ));
                }
                steps.push(StepSpec {
                    op,
                    chain_input: 0,
                    others: [None, Some(self.src(u)), None],
                    store: None,
                });
            }
        }
        Ok((
            NormSpec {
                rms,
                x,
                keep: keep.to_vec(),
                eps,
                mean_out,
                inv_out,
                a_off,
                b_off,
            },
            steps,
            arrays,
        ))
    }

    fn bn_fold(&self, i: usize, arrays: &mut usize) -> R<(i64, i64, BnFold)> {
        let node = &self.g.nodes[i];
        let name = node.name.as_str();
        let (x, y, mean, inv, var_eps, scale, bias) = match &node.attributes {
            NodeAttributes::BatchnormInferenceAttributes(a) => (
                a.x_tensor_uid,
                a.y_tensor_uid,
                a.mean_tensor_uid,
                Some(a.inv_variance_tensor_uid),
                None,
                a.scale_tensor_uid,
                a.bias_tensor_uid,
            ),
            NodeAttributes::BatchnormInferenceAttributesVarianceExt(a) => {
                let eps = self.scalar_src(name, a.epsilon_tensor_uid, "epsilon")?;
                (
                    a.x_tensor_uid,
                    a.y_tensor_uid,
                    a.mean_tensor_uid,
                    None,
                    Some((a.variance_tensor_uid, eps)),
                    a.scale_tensor_uid,
                    a.bias_tensor_uid,
                )
            }
            _ => unreachable!("called for batch-norm inference nodes"),
        };
        let xd = self.dims(x);
        if xd.len() < 2 || self.dims(y) != xd {
            return Err(format!(
                "node \"{name}\": x and y must share dims of rank >= 2"
            ));
        }
        let c = xd[1];
        for (u, r) in [(mean, "mean"), (scale, "scale"), (bias, "bias")] {
            self.per_channel_ok(name, u, c, r)?;
        }
        if let Some(u) = inv {
            self.per_channel_ok(name, u, c, "inv_variance")?;
        }
        if let Some((u, _)) = &var_eps {
            self.per_channel_ok(name, *u, c, "variance")?;
        }
        let a_off = Self::array(arrays, c);
        let b_off = Self::array(arrays, c);
        Ok((
            x,
            y,
            BnFold {
                c,
                mean,
                inv_var: inv,
                var_eps,
                scale,
                bias,
                a_off,
                b_off,
            },
        ))
    }

    /// The function and inputs of pointwise node `i`, checked.
    fn pointwise_op(&self, i: usize) -> R<(PwOp, [Option<i64>; 3])> {
        let node = &self.g.nodes[i];
        let NodeAttributes::PointwiseAttributes(p) = &node.attributes else {
            unreachable!("called for pointwise nodes")
        };
        let name = &node.name;
        let params = PwParams {
            relu_lower_clip: p.relu_lower_clip,
            relu_upper_clip: p.relu_upper_clip,
            relu_lower_clip_slope: p.relu_lower_clip_slope,
            swish_beta: p.swish_beta,
            elu_alpha: p.elu_alpha,
            softplus_beta: p.softplus_beta,
        };
        let op = PwOp::from_mode(p.operation, &params).ok_or_else(|| {
            format!(
                "node \"{name}\": pointwise mode {:?} is not supported",
                p.operation
            )
        })?;
        let ins = [
            Some(p.in_0_tensor_uid),
            p.in_1_tensor_uid,
            p.in_2_tensor_uid,
        ];
        let arity = op.arity();
        for (k, u) in ins.iter().enumerate() {
            if k < arity && u.is_none() {
                return Err(format!("node \"{name}\": {op:?} needs input {k}"));
            }
        }
        let out = p.out_0_tensor_uid;
        self.no_value(name, out, "out_0")?;
        let od = self.dims(out);
        for u in ins.iter().take(arity).flatten() {
            if self.t(*u).shape.broadcast_strides(&od).is_none() {
                return Err(format!(
                    "node \"{name}\": input tensor uid {u} with dims {:?} does not broadcast to the output dims {od:?}",
                    self.t(*u).shape.dims
                ));
            }
        }
        let mut used = ins;
        for u in used.iter_mut().skip(arity) {
            *u = None;
        }
        Ok((op, used))
    }

    /// Whether tensor `uid` is available before the stage being built.
    fn ready(&self, uid: i64) -> bool {
        match self.producer.get(&uid) {
            None => true,
            Some(&n) => self.stage_of[n].is_some_and(|s| s < self.stages.len()),
        }
    }

    /// Tries to fuse a consumer of `cur` into the stage: a step (and folds).
    fn fusable(
        &self,
        cur: i64,
        dims: &[usize],
        node: usize,
        arrays: &mut usize,
    ) -> Option<(Vec<StepSpec>, Vec<BnFold>, i64)> {
        if self.stage_of[node].is_some() {
            return None;
        }
        match &self.g.nodes[node].attributes {
            NodeAttributes::PointwiseAttributes(p) => {
                let (op, ins) = self.pointwise_op(node).ok()?;
                let slots: Vec<usize> = (0..3).filter(|&k| ins[k] == Some(cur)).collect();
                if slots.len() != 1 || self.dims(p.out_0_tensor_uid) != dims {
                    return None;
                }
                let slot = slots[0];
                let mut others: [Option<Src>; 3] = [None, None, None];
                for k in 0..3 {
                    if k == slot {
                        continue;
                    }
                    if let Some(u) = ins[k] {
                        if !self.ready(u) {
                            return None;
                        }
                        others[k] = Some(self.src(u));
                    }
                }
                Some((
                    vec![StepSpec {
                        op,
                        chain_input: slot,
                        others,
                        store: None,
                    }],
                    vec![],
                    p.out_0_tensor_uid,
                ))
            }
            NodeAttributes::BatchnormInferenceAttributes(_)
            | NodeAttributes::BatchnormInferenceAttributesVarianceExt(_) => {
                let mut local = *arrays;
                let (x, y, fold) = self.bn_fold(node, &mut local).ok()?;
                let mut params = vec![fold.mean, fold.scale, fold.bias];
                params.extend(fold.inv_var);
                if let Some((v, Src::T(e))) = &fold.var_eps {
                    params.extend([*v, *e]);
                } else if let Some((v, _)) = &fold.var_eps {
                    params.push(*v);
                }
                if x != cur || self.dims(y) != dims || !params.iter().all(|&u| self.ready(u)) {
                    return None;
                }
                *arrays = local;
                let shape = bn_shape(dims, fold.c);
                let step = StepSpec {
                    op: PwOp::ScaleShift,
                    chain_input: 0,
                    others: [
                        None,
                        Some(Src::Scratch(fold.a_off, shape.clone())),
                        Some(Src::Scratch(fold.b_off, shape)),
                    ],
                    store: None,
                };
                Some((vec![step], vec![fold], y))
            }
            _ => None,
        }
    }

    fn run(&mut self) -> R<()> {
        for i in 0..self.g.nodes.len() {
            if self.stage_of[i].is_some() {
                continue;
            }
            self.pending_first_step = None;
            self.pending_steps = Vec::new();
            let (producer, main, dims, mut folds, mut arrays) = self.producer_for(i)?;
            let sid = self.stages.len();
            self.stage_of[i] = Some(sid);
            let mut nodes = vec![self.g.nodes[i].name.clone()];
            let mut ep = EpSpec::default();
            if let Some(s) = self.pending_first_step.take() {
                ep.steps.push(s);
            }
            ep.steps.append(&mut self.pending_steps);
            if let Some(mut cur) = main {
                loop {
                    let cons: Vec<usize> = self.consumers.get(&cur).cloned().unwrap_or_default();
                    let pick = cons.iter().find_map(|&n| {
                        let mut a = arrays;
                        self.fusable(cur, &dims, n, &mut a).map(|f| (n, f, a))
                    });
                    let needs_store =
                        !self.is_virtual(cur) || cons.len() > usize::from(pick.is_some());
                    if needs_store {
                        if self.is_virtual(cur) {
                            self.materialize(cur);
                        }
                        match ep.steps.last_mut() {
                            Some(s) => s.store = Some(cur),
                            None => ep.store = Some(cur),
                        }
                    }
                    let Some((n, (mut steps, mut f, out), a)) = pick else {
                        break;
                    };
                    // A tensor this stage stored may not be read by a step of the same
                    // stage other than as the running value (it is not stored yet).
                    arrays = a;
                    self.stage_of[n] = Some(sid);
                    nodes.push(self.g.nodes[n].name.clone());
                    ep.steps.append(&mut steps);
                    folds.append(&mut f);
                    cur = out;
                }
            }
            let kernel_ws = match &producer {
                Producer::Conv { plan, .. } => plan.workspace_len(),
                Producer::Matmul { plan, .. } => plan.workspace_len(),
                Producer::Dgrad { geo, imp, .. } => conv_bwd::dgrad_workspace_len(geo, *imp),
                Producer::Wgrad { geo, imp, .. } => conv_bwd::wgrad_workspace_len(geo, *imp),
                _ => 0,
            };
            self.stages.push(Stage {
                nodes,
                producer,
                dims,
                folds,
                ep,
                arrays: align(arrays),
                kernel_ws,
            });
        }
        Ok(())
    }

    fn materialize(&mut self, uid: i64) {
        let t = self.tensors.get_mut(&uid).expect("known tensor");
        if t.loc != Loc::Virtual {
            return;
        }
        t.dtype = DType::F32;
        t.shape = Shape::packed(&t.shape.dims);
        t.loc = Loc::Ws(self.ws_next);
        self.ws_next = align(self.ws_next + t.shape.numel() * 4);
    }

    fn finish(self) -> Plan {
        let scratch_at = self.ws_next;
        let scratch = self
            .stages
            .iter()
            .map(|s| s.arrays + s.kernel_ws * 4)
            .max()
            .unwrap_or(0);
        let total = scratch_at + align(scratch);
        Plan {
            tensors: self.tensors,
            stages: self.stages,
            scratch_at,
            workspace: if total > 0 { total + ALIGN } else { 0 },
            exec: Exec::new(self.settings.threads),
            settings: self.settings,
        }
    }
}

/// `[1, C, 1, ...]` packed, in the rank of `dims`.
fn bn_shape(dims: &[usize], c: usize) -> Shape {
    let mut d = vec![1; dims.len()];
    d[1] = c;
    Shape::packed(&d)
}

#[allow(dead_code)]
fn _impl_check(_: FpropImpl) {}
