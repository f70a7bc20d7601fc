//! Execution: checking the buffers a run receives and running the stages on them.

use std::collections::HashMap;
use std::sync::Mutex;

use hipdnn_flatbuffers_sdk::model::BatchnormBackwardAttributes;
use hipdnn_plugin_sdk::{PluginError, PluginResult};

use super::Plan;
use super::analysis::TensorInfo;
use super::ops::{BatchNormTraining, ConvPass, HeadOp, Normalization, ValueSource};
use super::profile::StageClock;
use super::stages::{BatchNormFold, Kernel, ScaleShift, Stage};
use super::workspace::{ALIGN, Placement};
use crate::kernels::conv_bwd;
use crate::kernels::elementwise::{Epilogue, Operand, Step, broadcast, elementwise, load_run};
use crate::kernels::gemm;
use crate::kernels::norm;
use crate::kernels::pool;
use crate::tensor::{DType, RawIn, RawOut, Shape};

/// A host buffer of a run: its address and length in bytes (`usize::MAX`: unknown, as
/// for buffers passed through the C ABI).
#[derive(Debug, Clone, Copy)]
pub(super) struct HostBuffer {
    pub ptr: *mut u8,
    pub len: usize,
}

/// Asks for transparent huge pages on the workspace's whole 2 MiB pages
/// ([`advise_huge_pages`](crate::kernels::kept::advise_huge_pages)) when a plan meets
/// it at a new address `at` (`len` bytes from there are the plan's). The stages'
/// activations live there; at batch 8 ResNet-50's are up to 25.7 MB a tensor, each
/// streamed through by the next layer, one address translation per 4 KiB page
/// otherwise. Pages the caller touched before the first execution keep their size.
/// ResNet-50 at batch 8 on two threads of a Xeon VM: the max pool 9–13% faster, the
/// first 56² layers 2–8%, the sums of stage minimums about 1.2% lower.
fn advise_workspace(plan: &Plan, at: *mut u8, len: usize) {
    use std::sync::atomic::Ordering;
    if plan.advised.swap(at as usize, Ordering::Relaxed) != at as usize {
        // SAFETY: the workspace is the caller's, lent to this execution (`run`'s
        // contract), and `len` bytes from `at` lie inside it.
        unsafe { crate::kernels::kept::advise_huge_pages(at, len) };
    }
}

/// Checks extents, alignment and overlap of `buffers`, then runs every stage.
///
/// # Safety
/// Every buffer is host memory of `len` bytes (when known) holding its tensor, live and
/// not accessed by anyone else during the call; `workspace` is null or host memory of
/// `workspace_size` bytes.
pub(super) unsafe fn run(
    plan: &Plan,
    buffers: &HashMap<i64, HostBuffer>,
    workspace: *mut u8,
    workspace_size: usize,
) -> PluginResult<()> {
    if workspace_size < plan.workspace || (plan.workspace > 0 && workspace.is_null()) {
        return Err(PluginError::bad_param(format!(
            "workspace of {workspace_size} bytes is smaller than the {} bytes the plan needs",
            plan.workspace
        )));
    }
    check_buffers(plan, buffers)?;
    let workspace = if workspace.is_null() {
        workspace
    } else {
        let skip = (workspace as usize).div_ceil(ALIGN) * ALIGN - workspace as usize;
        // SAFETY: `skip` < ALIGN <= the slack the plan's workspace size includes.
        let aligned = unsafe { workspace.add(skip) };
        // The plan's bytes from `aligned` (none when it needs no workspace but was
        // given one).
        advise_workspace(plan, aligned, plan.workspace.saturating_sub(skip));
        aligned
    };
    let runner = StageRunner {
        plan,
        buffers,
        workspace,
    };
    // Every stage's batch-norm folds whose parameters the host passes first, in one
    // parallel section, while the plan's tensor table and the buffers are warm from
    // the check above: the parameters stream in one after another. Folded stage by
    // stage, after a convolution had flushed them from the caches, ResNet-50's 53 folds
    // (about 26 000 channels) cost 0.3 ms of each execution at first, and still 90 µs
    // with each stage's parameters prefetched a stage ahead, on the thread running the
    // plan while the others waited. A fold with a parameter an earlier stage computes
    // runs just before its stage.
    let mut early = Vec::new();
    let mut late = Vec::new();
    for (s, stage) in plan.stages.iter().enumerate() {
        for fold in &stage.folds {
            let c = fold.bn.channels;
            let job = FoldJob {
                params: runner.fold_params(fold),
                scale: runner.scratch(fold.arrays.scale_at, c).as_mut_ptr(),
                shift: runner.scratch(fold.arrays.shift_at, c).as_mut_ptr(),
                channels: c,
                _workspace: std::marker::PhantomData,
            };
            let computed = fold
                .param_tensors()
                .any(|uid| matches!(runner.info(uid).placement, Placement::Workspace(_)));
            if computed {
                late.push((s, job));
            } else {
                early.push(job);
            }
        }
    }
    // Profiled, the folds count as part of the first stage.
    let mut clock = StageClock::new(plan.profile.as_ref(), &plan.exec, plan.stages.len());
    plan.exec.for_each(early.len(), |i| early[i].run());
    let key = epilogue_key(plan, buffers, workspace);
    let epilogues = plan
        .epilogues
        .take(&key)
        .unwrap_or_else(|| plan.stages.iter().map(|s| runner.epilogue(s)).collect());
    let mut late = late.iter().peekable();
    for (s, (stage, ep)) in plan.stages.iter().zip(&epilogues).enumerate() {
        while let Some((_, job)) = late.next_if(|(at, _)| *at == s) {
            job.run();
        }
        runner.run(stage, ep);
        clock.lap();
    }
    clock.finish();
    plan.epilogues.put(key, epilogues);
    Ok(())
}

/// The addresses a plan's epilogues are built from: the (aligned) workspace and the
/// host buffers they read or write.
fn epilogue_key(plan: &Plan, buffers: &HashMap<i64, HostBuffer>, workspace: *mut u8) -> Vec<usize> {
    std::iter::once(workspace as usize)
        .chain(
            plan.epilogue_buffers
                .iter()
                .map(|uid| buffers[uid].ptr as usize),
        )
        .collect()
}

/// The stages' epilogues of the last execution, with the addresses they were built
/// from ([`epilogue_key`]): an execution with the same buffers and workspace takes
/// them instead of building them again. Building them (tensors looked up, shapes
/// cloned and broadcast) took about 70 µs of each ResNet-50 execution, 1.3 µs a stage,
/// on the thread running the plan while the others waited. An execution takes the
/// epilogues out while it runs, so one running at the same time on other buffers
/// builds its own.
#[derive(Debug, Default)]
pub(super) struct EpilogueCache(Mutex<Option<(Vec<usize>, Vec<Epilogue>)>>);

impl EpilogueCache {
    fn take(&self, key: &[usize]) -> Option<Vec<Epilogue>> {
        let mut slot = self.0.lock().unwrap_or_else(|e| e.into_inner());
        match slot.take() {
            Some((k, e)) if k == key => Some(e),
            other => {
                *slot = other;
                None
            }
        }
    }

    fn put(&self, key: Vec<usize>, epilogues: Vec<Epilogue>) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some((key, epilogues));
    }
}

/// One batch-norm fold of an execution: its parameters, and its scale and shift arrays
/// (`channels` floats each) in the workspace's fold region.
struct FoldJob<'a> {
    params: FoldParams,
    scale: *mut f32,
    shift: *mut f32,
    channels: usize,
    _workspace: std::marker::PhantomData<&'a mut [f32]>,
}

// SAFETY: each job's arrays are its own (disjoint regions of the fold region), written
// by the one part that runs the job; the parameters are only read.
unsafe impl Sync for FoldJob<'_> {}

impl FoldJob<'_> {
    /// Writes the scale `γ·σ⁻¹` and shift `β − μ·γ·σ⁻¹` of every channel, in runs of
    /// channels read as `f32` (whatever the dtype and stride).
    fn run(&self) {
        let (c, p) = (self.channels, &self.params);
        // SAFETY: the arrays are `c` floats each in the workspace, this job's alone
        // (see the `Sync` impl).
        let (a, b) = unsafe {
            (
                std::slice::from_raw_parts_mut(self.scale, c),
                std::slice::from_raw_parts_mut(self.shift, c),
            )
        };
        const RUN: usize = 256;
        let mut vals = [[0f32; RUN]; 4];
        for start in (0..c).step_by(RUN) {
            let n = RUN.min(c - start);
            for (v, (t, stride)) in vals.iter_mut().zip([&p.mean, &p.scale, &p.bias, &p.spread]) {
                load_run(t, start * stride, *stride, &mut v[..n]);
            }
            let [m, g, beta, v] = &vals;
            let run = (&m[..n], &g[..n], &beta[..n], &v[..n]);
            let out = (&mut a[start..start + n], &mut b[start..start + n]);
            fold_run(run, out, p.eps);
        }
    }
}

/// Each buffer large enough and aligned for its tensor; no output overlapping another
/// tensor.
fn check_buffers(plan: &Plan, buffers: &HashMap<i64, HostBuffer>) -> PluginResult<()> {
    let mut extents = Vec::with_capacity(buffers.len());
    for (&uid, buffer) in buffers {
        let t = &plan.tensors[&uid];
        let bytes = t.shape.span() * t.dtype.size();
        if buffer.len != usize::MAX && bytes > buffer.len {
            return Err(PluginError::bad_param(format!(
                "buffer of tensor uid {uid} (\"{}\") holds {} bytes, its shape needs {bytes}",
                t.name, buffer.len
            )));
        }
        if !(buffer.ptr as usize).is_multiple_of(t.dtype.size()) {
            return Err(PluginError::bad_param(format!(
                "buffer of tensor uid {uid} (\"{}\") at {:p} is not aligned for {:?}",
                t.name, buffer.ptr, t.dtype
            )));
        }
        let start = buffer.ptr as usize;
        extents.push(Extent {
            start,
            end: start + bytes,
            uid,
            is_output: plan.outputs.contains(&uid),
        });
    }
    match output_overlap(&mut extents) {
        Some((output, other)) => Err(PluginError::bad_param(format!(
            "output tensor uid {output} overlaps tensor uid {other}: in-place execution is not supported by CPU_ENGINE"
        ))),
        None => Ok(()),
    }
}

/// The bytes `start..end` of a run's buffer for tensor `uid`.
#[derive(Debug, Clone, Copy)]
struct Extent {
    start: usize,
    end: usize,
    uid: i64,
    is_output: bool,
}

/// An output and another tensor whose extents overlap (empty extents overlap nothing),
/// as (output uid, other uid); inputs may overlap each other. Sorts `extents`.
///
/// Sorted by start, an extent overlaps an earlier one exactly when one of those ends
/// past its start: one pass tracks the farthest end of any earlier extent and of any
/// earlier output (O(n log n): a network passes hundreds of buffers per run).
fn output_overlap(extents: &mut [Extent]) -> Option<(i64, i64)> {
    extents.sort_unstable_by_key(|e| (e.start, e.uid));
    let mut reach: Option<(usize, i64)> = None;
    let mut output_reach: Option<(usize, i64)> = None;
    for e in extents.iter().filter(|e| e.end > e.start) {
        match (e.is_output, reach, output_reach) {
            (true, Some((end, uid)), _) if end > e.start => return Some((e.uid, uid)),
            (false, _, Some((end, uid))) if end > e.start => return Some((uid, e.uid)),
            _ => {}
        }
        if reach.is_none_or(|(end, _)| e.end > end) {
            reach = Some((e.end, e.uid));
        }
        if e.is_output && output_reach.is_none_or(|(end, _)| e.end > end) {
            output_reach = Some((e.end, e.uid));
        }
    }
    None
}

/// A folded batch norm's parameters in one run: each tensor with the stride between
/// its channels; `eps` when the spread is a variance (else an inverse deviation).
struct FoldParams {
    mean: (RawIn, usize),
    scale: (RawIn, usize),
    bias: (RawIn, usize),
    spread: (RawIn, usize),
    eps: Option<f64>,
}

/// A normalization's per-channel scale `γ·σ⁻¹` and shift `β − μ·γ·σ⁻¹`, worked out in
/// `f64` and stored as `f32` (a missing scale is 1, a missing mean or bias 0).
#[inline(always)]
fn scale_shift(
    inv_std: f64,
    mean: Option<f64>,
    scale: Option<f64>,
    bias: Option<f64>,
) -> (f32, f32) {
    let scale = scale.unwrap_or(1.0);
    let centre = mean.unwrap_or(0.0) * scale * inv_std;
    (
        (scale * inv_std) as f32,
        bias.map_or(-centre, |b| b - centre) as f32,
    )
}

/// [`scale_shift`] over a run of channels' `(mean, scale, bias, spread)` into
/// `(scale, shift)`, the spread being `σ⁻¹` or, with `eps`, the variance: the same
/// arithmetic (each operation rounds the same in a vector lane), in loops without
/// branches, with AVX2 where the CPU has it. ResNet-50's 53 folds (about 26 000
/// channels) took 39 µs of each execution one channel at a time with their parameters
/// in cache.
fn fold_run(
    run: (&[f32], &[f32], &[f32], &[f32]),
    out: (&mut [f32], &mut [f32]),
    eps: Option<f64>,
) {
    #[cfg(target_arch = "x86_64")]
    if gemm::pair_isa().is_some() {
        // SAFETY: the CPU has AVX2 (checked by `pair_isa`).
        unsafe { fold_run_avx2(run, out, eps) };
        return;
    }
    fold_run_any(run, out, eps);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn fold_run_avx2(
    run: (&[f32], &[f32], &[f32], &[f32]),
    out: (&mut [f32], &mut [f32]),
    eps: Option<f64>,
) {
    fold_run_any(run, out, eps);
}

#[inline(always)]
fn fold_run_any(
    run: (&[f32], &[f32], &[f32], &[f32]),
    out: (&mut [f32], &mut [f32]),
    eps: Option<f64>,
) {
    match eps {
        None => fold_loop(run, out, |v| v),
        Some(eps) => fold_loop(run, out, |v| 1.0 / (v + eps).sqrt()),
    }
}

#[inline(always)]
fn fold_loop(
    (mean, scale, bias, spread): (&[f32], &[f32], &[f32], &[f32]),
    (a, b): (&mut [f32], &mut [f32]),
    inv_std: impl Fn(f64) -> f64,
) {
    let params = mean.iter().zip(scale).zip(bias).zip(spread);
    for ((a, b), (((&m, &g), &beta), &v)) in a.iter_mut().zip(b.iter_mut()).zip(params) {
        let [m, g, beta] = [m, g, beta].map(|x| Some(f64::from(x)));
        (*a, *b) = scale_shift(inv_std(f64::from(v)), m, g, beta);
    }
}

/// Runs stages against one run's buffers and workspace.
struct StageRunner<'a> {
    plan: &'a Plan,
    buffers: &'a HashMap<i64, HostBuffer>,
    /// The workspace, aligned to [`ALIGN`].
    workspace: *mut u8,
}

impl StageRunner<'_> {
    fn info(&self, uid: i64) -> &TensorInfo {
        &self.plan.tensors[&uid]
    }

    fn ptr(&self, uid: i64) -> *mut u8 {
        match self.info(uid).placement {
            Placement::Host => self.buffers[&uid].ptr,
            // SAFETY: offsets are inside the workspace (laid out when the plan was built).
            Placement::Workspace(offset) => unsafe { self.workspace.add(offset) },
            Placement::Constant(_) | Placement::Virtual => {
                unreachable!("tensor uid {uid} has no memory")
            }
        }
    }

    fn input(&self, uid: i64) -> RawIn {
        let t = self.info(uid);
        // SAFETY: host buffers per the execute contract (extent checked when known);
        // workspace tensors are inside the workspace.
        unsafe { RawIn::from_parts(self.ptr(uid), t.dtype, t.shape.clone()) }
    }

    fn output(&self, uid: i64) -> RawOut {
        let t = self.info(uid);
        // SAFETY: as `input`; outputs do not overlap other tensors (checked).
        unsafe { RawOut::from_parts(self.ptr(uid), t.dtype, t.shape.clone()) }
    }

    fn scalar(&self, source: &ValueSource) -> f32 {
        match source {
            ValueSource::Constant(v) => *v,
            ValueSource::Tensor(uid) => match self.info(*uid).placement {
                Placement::Constant(v) => v,
                // SAFETY: a one-element tensor.
                _ => unsafe { self.input(*uid).load(0) },
            },
            ValueSource::Scratch { .. } => unreachable!("scratch arrays are not scalars"),
        }
    }

    #[expect(
        clippy::mut_from_ref,
        reason = "disjoint scratch regions of the workspace, one user each"
    )]
    fn scratch(&self, offset: usize, len: usize) -> &mut [f32] {
        // SAFETY: the plan laid out disjoint scratch arrays inside the workspace; each is
        // used by one stage at a time, from the thread running the plan.
        unsafe {
            std::slice::from_raw_parts_mut(
                self.workspace
                    .add(self.plan.scratch_at + offset)
                    .cast::<f32>(),
                len,
            )
        }
    }

    /// A dense scratch result as an operand of the stage's index space.
    fn scratch_tensor(&self, offset: usize, dims: &[usize]) -> Operand {
        let buf = self.scratch(offset, dims.iter().product());
        // SAFETY: `buf` holds the dense values and is only read from here on.
        Operand::Tensor(unsafe {
            RawIn::from_parts(buf.as_ptr().cast(), DType::F32, Shape::packed(dims))
        })
    }

    fn operand(&self, source: &ValueSource, dims: &[usize]) -> Operand {
        match source {
            ValueSource::Constant(v) => Operand::Scalar(*v),
            ValueSource::Tensor(uid) => match self.info(*uid).placement {
                Placement::Constant(v) => Operand::Scalar(v),
                _ => {
                    let t = self.input(*uid);
                    let shape = broadcast(t.shape(), dims);
                    Operand::Tensor(t.with_shape(shape))
                }
            },
            ValueSource::Scratch { offset, shape } => {
                let buf = self.scratch(*offset, shape.span());
                // SAFETY: a scratch array of `span` floats, only read during the stage.
                let t =
                    unsafe { RawIn::from_parts(buf.as_ptr().cast(), DType::F32, shape.clone()) };
                Operand::Tensor(t.with_shape(broadcast(shape, dims)))
            }
        }
    }

    fn epilogue(&self, stage: &Stage) -> Epilogue {
        let dims = stage.dims.as_slice();
        let out = |uid: i64| {
            let o = self.output(uid);
            assert_eq!(
                o.shape().dims,
                dims,
                "stored tensor outside the index space"
            );
            o
        };
        Epilogue {
            store: stage.store.map(out),
            steps: stage
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

    /// Runs `stage` (its batch-norm folds are done: see [`run`]).
    fn run(&self, stage: &Stage, ep: &Epilogue) {
        let exec = &self.plan.exec;
        let dims = &stage.dims;
        let kernel_workspace = || self.scratch(stage.arrays.bytes(), stage.kernel_workspace);
        match (&stage.head, &stage.kernel) {
            (HeadOp::Elementwise { init, .. }, _) => {
                elementwise(&self.operand(init, dims), ep, dims, exec);
            }
            (HeadOp::Convolution { x, w, .. }, Kernel::Convolution(plan, cache)) => plan
                .run_cached(
                    &self.input(*x),
                    &self.input(*w),
                    ep,
                    exec,
                    kernel_workspace(),
                    cache.as_deref(),
                ),
            (
                HeadOp::Convolution {
                    pass,
                    x,
                    w,
                    y,
                    geometry,
                },
                Kernel::ConvolutionGradient(a),
            ) => {
                let gradient = if *pass == ConvPass::DataGradient {
                    conv_bwd::dgrad
                } else {
                    conv_bwd::wgrad
                };
                // dgrad reads (dy, w), wgrad reads (x, dy).
                let (first, second) = if *pass == ConvPass::DataGradient {
                    (y, w)
                } else {
                    (x, y)
                };
                gradient(
                    geometry,
                    &self.input(*first),
                    &self.input(*second),
                    dims,
                    ep,
                    *a,
                    exec,
                    kernel_workspace(),
                );
            }
            (HeadOp::Matmul { a, b, .. }, Kernel::Matmul(plan)) => plan.run(
                &self.input(*a),
                &self.input(*b),
                ep,
                exec,
                kernel_workspace(),
            ),
            (HeadOp::BatchNormBackward(spec), _) => self.batch_norm_backward(spec),
            (HeadOp::BatchNormTraining(spec), Kernel::Statistics(arrays)) => {
                self.batch_norm_training(spec, *arrays);
                self.normalize(spec.node.x_tensor_uid, ep, dims);
            }
            (HeadOp::Normalization(spec), Kernel::Statistics(arrays)) => {
                self.normalization(spec, *arrays);
                self.normalize(spec.x, ep, dims);
            }
            (HeadOp::GenIndex { axis, .. }, Kernel::Scratch(at)) => {
                let n: usize = dims.iter().product();
                let inner: usize = dims[axis + 1..].iter().product();
                for (i, v) in self.scratch(*at, n).iter_mut().enumerate() {
                    *v = ((i / inner) % dims[*axis]) as f32;
                }
                elementwise(&self.scratch_tensor(*at, dims), ep, dims, exec);
            }
            (HeadOp::Reduction { x, op, .. }, Kernel::Scratch(at)) => {
                let n: usize = dims.iter().product();
                norm::reduce(&self.input(*x), dims, *op, self.scratch(*at, n), exec);
                elementwise(&self.scratch_tensor(*at, dims), ep, dims, exec);
            }
            (HeadOp::Pool { x, geometry }, Kernel::Pool { at, channels_last }) => {
                let n: usize = dims.iter().product();
                let x = self.input(*x);
                let shape = if *channels_last {
                    Shape::channels_last(dims)
                } else {
                    Shape::packed(dims)
                };
                // A plain fp32 store to a tensor laid out as the pool writes: straight
                // there, without the scratch pass.
                match (&ep.store, ep.steps.is_empty()) {
                    (Some(o), true) if o.dtype() == DType::F32 && *o.shape() == shape => {
                        // SAFETY: the stage's output, `n` dense floats (its shape),
                        // written by this stage only and overlapping none of its inputs.
                        let out = unsafe { std::slice::from_raw_parts_mut(o.ptr_as::<f32>(), n) };
                        pool::pool(&x, geometry, *channels_last, out, exec);
                    }
                    _ => {
                        pool::pool(&x, geometry, *channels_last, self.scratch(*at, n), exec);
                        let values = ValueSource::Scratch { offset: *at, shape };
                        elementwise(&self.operand(&values, dims), ep, dims, exec);
                    }
                }
            }
            _ => unreachable!("the stage builder pairs each head with its kernel"),
        }
    }

    /// Runs `x` through the epilogue (whose first step applies the statistics).
    fn normalize(&self, x: i64, ep: &Epilogue, dims: &[usize]) {
        let x = self.input(x);
        let x = Operand::Tensor(x.with_shape(broadcast(x.shape(), dims)));
        elementwise(&x, ep, dims, &self.plan.exec);
    }

    /// Writes `a = scale·inv_std` and `b = bias − mean·scale·inv_std` to the stage's
    /// arrays (a missing scale is 1, a missing mean or bias 0).
    fn write_scale_shift(
        &self,
        arrays: ScaleShift,
        inv_std: &[f64],
        mean: Option<&[f64]>,
        scale: Option<&[f64]>,
        bias: Option<&[f64]>,
    ) {
        let n = inv_std.len();
        let a = self.scratch(arrays.scale_at, n);
        let b = self.scratch(arrays.shift_at, n);
        for i in 0..n {
            let at = |v: Option<&[f64]>| v.map(|v| v[i]);
            (a[i], b[i]) = scale_shift(inv_std[i], at(mean), at(scale), at(bias));
        }
    }

    /// A folded batch norm's parameters for this run.
    fn fold_params(&self, fold: &BatchNormFold) -> FoldParams {
        let bn = &fold.bn;
        let c = bn.channels;
        let param = |uid: i64| {
            let t = self.input(uid);
            let stride = norm::channel_stride(t.shape(), c);
            (t, stride)
        };
        let (spread, eps) = match (&bn.inv_variance, &bn.variance_epsilon) {
            (Some(iv), _) => (param(*iv), None),
            (None, Some((var, eps))) => (param(*var), Some(f64::from(self.scalar(eps)))),
            (None, None) => unreachable!("checked by the analysis"),
        };
        FoldParams {
            mean: param(bn.mean),
            scale: param(bn.scale),
            bias: param(bn.bias),
            spread,
            eps,
        }
    }

    fn batch_norm_training(&self, b: &BatchNormTraining, arrays: ScaleShift) {
        let exec = &self.plan.exec;
        let (c, n) = (b.channels, &b.node);
        let x = self.input(n.x_tensor_uid);
        let mut keep = vec![false; x.shape().rank()];
        keep[1] = true;
        let (mean, var) = norm::moments(&x, &keep, exec);
        let eps = f64::from(self.scalar(&b.epsilon));
        let inv: Vec<f64> = var.iter().map(|v| 1.0 / (v + eps).sqrt()).collect();
        if let Some(o) = n.mean_tensor_uid {
            norm::write_per_channel(&self.output(o), &mean);
        }
        if let Some(o) = n.inv_variance_tensor_uid {
            norm::write_per_channel(&self.output(o), &inv);
        }
        if let Some(m) = &b.momentum {
            let m = f64::from(self.scalar(m));
            let count = (x.shape().numel() / c) as f64;
            let unbias = if count > 1.0 {
                count / (count - 1.0)
            } else {
                1.0
            };
            let update = |prev: Option<i64>, next: Option<i64>, batch: &[f64], factor: f64| {
                if let (Some(p), Some(o)) = (prev, next) {
                    let prev = norm::per_channel(&self.input(p), c);
                    let next: Vec<f64> = prev
                        .iter()
                        .zip(batch)
                        .map(|(p, v)| (1.0 - m) * p + m * v * factor)
                        .collect();
                    norm::write_per_channel(&self.output(o), &next);
                }
            };
            let (prev_mean, next_mean) = (
                n.prev_running_mean_tensor_uid,
                n.next_running_mean_tensor_uid,
            );
            update(prev_mean, next_mean, &mean, 1.0);
            let (prev_var, next_var) = (
                n.prev_running_variance_tensor_uid,
                n.next_running_variance_tensor_uid,
            );
            update(prev_var, next_var, &var, unbias);
        }
        let scale = norm::per_channel(&self.input(n.scale_tensor_uid), c);
        let bias = norm::per_channel(&self.input(n.bias_tensor_uid), c);
        self.write_scale_shift(arrays, &inv, Some(&mean), Some(&scale), Some(&bias));
    }

    fn batch_norm_backward(&self, b: &BatchnormBackwardAttributes) {
        let x = self.input(b.x_tensor_uid);
        let c = x.shape().dims[1];
        let saved = b.mean_tensor_uid.zip(b.inv_variance_tensor_uid);
        let (mean, inv) = saved.expect("checked by the analysis");
        let mean = norm::per_channel(&self.input(mean), c);
        let inv = norm::per_channel(&self.input(inv), c);
        let scale = norm::per_channel(&self.input(b.scale_tensor_uid), c);
        let (ds, db) = norm::batchnorm_backward(
            &x,
            &self.input(b.dy_tensor_uid),
            &mean,
            &inv,
            &scale,
            &self.output(b.dx_tensor_uid),
            &self.plan.exec,
        );
        norm::write_per_channel(&self.output(b.dscale_tensor_uid), &ds);
        norm::write_per_channel(&self.output(b.dbias_tensor_uid), &db);
    }

    fn normalization(&self, n: &Normalization, arrays: ScaleShift) {
        let exec = &self.plan.exec;
        let x = self.input(n.x);
        let eps = f64::from(self.scalar(&n.epsilon));
        let stats_dims = n.stats_dims(&x.shape().dims);
        let rows: usize = stats_dims.iter().product();
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
        let write = |uid: i64, vals: &[f64]| {
            let o = self.output(uid);
            let s = broadcast(o.shape(), &stats_dims);
            let mut idx = vec![0; stats_dims.len()];
            for (i, v) in vals.iter().enumerate() {
                let mut rem = i;
                for d in (0..idx.len()).rev() {
                    idx[d] = rem % stats_dims[d];
                    rem /= stats_dims[d];
                }
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
        self.write_scale_shift(arrays, &inv, Some(&mean), None, None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against every pair on random extents: an overlap is found exactly when an
    /// output shares a byte with another tensor, and the pair it names does.
    #[test]
    fn output_overlaps_are_found_exactly_when_there_are_some() {
        let mut rng = crate::XorShift(0x9e37_79b9_7f4a_7c15);
        let mut next = |n: usize| rng.below(n);
        let shares = |a: &Extent, b: &Extent| {
            a.end > a.start && b.end > b.start && a.start < b.end && b.start < a.end
        };
        let mut found = 0;
        for round in 0..4000 {
            let n = 1 + round % 12;
            let mut extents: Vec<Extent> = (0..n)
                .map(|i| {
                    let start = next(200);
                    Extent {
                        start,
                        end: start + next(if i % 3 == 0 { 4 } else { 40 }),
                        uid: i as i64,
                        is_output: next(4) == 0,
                    }
                })
                .collect();
            let expected = extents.iter().any(|a| {
                extents
                    .iter()
                    .any(|b| a.uid != b.uid && (a.is_output || b.is_output) && shares(a, b))
            });
            let by_uid = extents.clone();
            match output_overlap(&mut extents) {
                Some((output, other)) => {
                    let (o, t) = (&by_uid[output as usize], &by_uid[other as usize]);
                    assert!(o.is_output && output != other && shares(o, t), "{by_uid:?}");
                    assert!(expected);
                    found += 1;
                }
                None => assert!(!expected, "{by_uid:?}"),
            }
        }
        assert!(
            found > 500 && found < 3500,
            "{found} of 4000 rounds overlap"
        );
    }
}
