//! Plans: stages of cuDNN execution plans, chosen once, executed on the handle's stream.
//!
//! Building tries the whole graph as one cuDNN operation graph first. Where cuDNN has
//! no engine for that (e.g. several convolutions in a row), the graph is cut into
//! fusable chains (a convolution or matmul and its pointwise epilogue: bias,
//! activation, residual add, batch-norm inference, in any order cuDNN's runtime fusion
//! takes), and a chain cuDNN still refuses into single nodes. Tensors that the graph
//! marks virtual but that cross stages live in the plan's workspace, next to cuDNN's own
//! workspace.
//!
//! For each stage, cuDNN's heuristics propose engine configurations, best first; those
//! the knobs rule out are skipped (TF32 tensor cores for FLOAT convolutions and matmuls
//! unless `cudnn.allow_tf32`; non-deterministic ones under `global.deterministic`; a
//! workspace over `global.workspace_size_limit`), and the first that finalizes wins —
//! or, under `global.benchmarking`, the fastest of those that finalize, timed on the
//! device once.

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::{Arc, Mutex};

use hipdnn_flatbuffers_sdk::model::Graph;
use hipdnn_plugin_sdk::prelude::*;

use crate::cudnn::safe::{self, CudnnHandle, Descriptor, VariantPack};
use crate::cudnn::sys::{
    cudnnBackendAttributeName_t as Attr, cudnnBackendDescriptorType_t as Kind,
    cudnnBackendHeurMode_t, cudnnBackendNumericalNote_t as Note, cudnnDataType_t,
};
use crate::device::{DeviceState, Scratch, time_on_stream};
use crate::graph::{OpSpec, Stage, TensorSpec, Translation};

/// Device memory alignment of the plan's workspace regions.
const ALIGN: usize = 256;

/// How many engine configurations are asked of the heuristics per stage.
const MAX_CANDIDATES: usize = 16;

/// How many finalized candidates `global.benchmarking` times per stage.
const MAX_TIMED: usize = 8;

/// What the knobs ask of plan building.
#[derive(Debug, Clone, PartialEq)]
pub struct CudnnSettings {
    /// Allow TF32 tensor-core math for FLOAT convolutions and matmuls.
    pub allow_tf32: bool,
    /// Only deterministic engines.
    pub deterministic: bool,
    /// Largest workspace (bytes) cuDNN may use per stage; `None`: no limit.
    pub workspace_limit: Option<usize>,
    /// Time the candidates and keep the fastest.
    pub benchmarking: bool,
    /// The heuristics mode.
    pub heuristic: cudnnBackendHeurMode_t,
}

impl Default for CudnnSettings {
    fn default() -> Self {
        Self {
            allow_tf32: false,
            deterministic: false,
            workspace_limit: None,
            benchmarking: false,
            heuristic: cudnnBackendHeurMode_t::CUDNN_HEUR_MODE_A,
        }
    }
}

/// Where a stage's pointer comes from at execution.
#[derive(Debug, Clone, Copy)]
enum Source {
    /// The host's buffer for this uid.
    Buffer(i64),
    /// The plan's workspace at this offset.
    Scratch(usize),
    /// The plan's scalar at this index (host memory, by value).
    Scalar(usize),
}

/// One finalized cuDNN execution plan and how to feed it.
#[derive(Debug)]
struct StagePlan {
    plan: Descriptor,
    uids: Vec<i64>,
    sources: Vec<Source>,
    workspace: usize,
    label: String,
    /// The last execution's variant pack, reused while the pointers stay the same (an
    /// application running a plan on the same buffers pays for one pack).
    last_pack: Mutex<Option<VariantPack>>,
}

/// A built plan.
#[derive(Debug)]
pub struct CudnnPlan {
    // Fields drop in order: the cuDNN plans before the handle they were finalized on.
    stages: Vec<StagePlan>,
    /// Pass-by-value scalars, at stable addresses.
    scalars: Box<[f32]>,
    /// Bytes of inter-stage tensors at the start of the workspace.
    scratch_bytes: usize,
    state: Arc<DeviceState>,
}

fn round_up(n: usize) -> usize {
    n.div_ceil(ALIGN) * ALIGN
}

impl CudnnPlan {
    /// How many cuDNN execution plans run per execution (kernels, roughly).
    pub fn stage_count(&self) -> usize {
        self.stages.len()
    }

    /// Builds the plan for `graph`.
    ///
    /// # Errors
    /// Why no cuDNN engine runs the graph under `settings`.
    pub fn build(
        state: &Arc<DeviceState>,
        graph: &Graph,
        settings: &CudnnSettings,
    ) -> PluginResult<Self> {
        let translation = Translation::new(graph).map_err(PluginError::not_applicable)?;
        state.make_current().map_err(PluginError::internal)?;
        let bound = state.lock();
        let handle = bound.handle();
        let mut builder = Builder {
            handle,
            settings,
            translation: &translation,
            scalars: Vec::new(),
            failures: Vec::new(),
        };
        let all: Vec<usize> = (0..translation.nodes.len()).collect();
        let mut stages = Vec::new();
        if let Some(whole) = builder.try_stage(&all)? {
            stages.push(whole);
        } else {
            for nodes in &translation.chains {
                // The whole graph was one chain: already refused as a whole.
                let tried = *nodes == all;
                builder.cover(nodes, tried, &mut stages)?;
            }
        }
        // Scratch for virtual tensors passed between stages.
        let specs: Vec<Stage> = stages.iter().map(|(stage, _)| stage.clone()).collect();
        let mut offsets = HashMap::new();
        let mut scratch_bytes = 0;
        for (uid, bytes) in translation.scratch(&specs) {
            offsets.insert(uid, scratch_bytes);
            scratch_bytes += round_up(bytes);
        }
        let scalars: Box<[f32]> = builder.scalars.clone().into_boxed_slice();
        let stages = stages
            .into_iter()
            .map(|(stage, chosen)| {
                let mut uids = Vec::new();
                let mut sources = Vec::new();
                for t in stage.bound() {
                    uids.push(t.uid);
                    sources.push(if let Some(at) = chosen.scalar_slots.get(&t.uid) {
                        Source::Scalar(*at)
                    } else if let Some(&offset) = offsets.get(&t.uid) {
                        Source::Scratch(offset)
                    } else {
                        Source::Buffer(t.uid)
                    });
                }
                StagePlan {
                    plan: chosen.plan,
                    uids,
                    sources,
                    workspace: chosen.workspace,
                    label: stage.describe(&translation),
                    last_pack: Mutex::new(None),
                }
            })
            .collect::<Vec<_>>();
        for s in &stages {
            tracing::debug!(stage = %s.label, workspace = s.workspace, "cuDNN stage");
        }
        tracing::info!(
            "cuDNN plan for graph \"{}\": {} stage(s), {} bytes of workspace",
            graph.name,
            stages.len(),
            scratch_bytes
                + stages
                    .iter()
                    .map(|s| round_up(s.workspace))
                    .max()
                    .unwrap_or(0)
        );
        drop(bound);
        Ok(Self {
            state: Arc::clone(state),
            stages,
            scalars,
            scratch_bytes,
        })
    }
}

impl IPlan<Arc<DeviceState>> for CudnnPlan {
    fn workspace_size(&self) -> usize {
        self.scratch_bytes
            + self
                .stages
                .iter()
                .map(|s| round_up(s.workspace))
                .max()
                .unwrap_or(0)
    }

    fn execute(&self, _: &Handle<Arc<DeviceState>>, exec: &Execution<'_>) -> PluginResult<()> {
        let mut bound = self.state.lock();
        // SAFETY: the host's stream for this handle (a CUDA stream here, or null).
        let handle =
            unsafe { bound.on_stream(exec.stream().cast()) }.map_err(PluginError::internal)?;
        let mut pointers: Vec<*mut c_void> = Vec::with_capacity(16);
        for stage in &self.stages {
            let workspace = self.pointers(stage, exec, &mut pointers)?;
            let mut cached = stage.last_pack.lock().unwrap_or_else(|e| e.into_inner());
            if !cached
                .as_ref()
                .is_some_and(|p| p.binds(&pointers, workspace))
            {
                let pack = VariantPack::new(&stage.uids, &pointers, workspace)
                    .map_err(|e| PluginError::internal(format!("{}: {e}", stage.label)))?;
                *cached = Some(pack);
            }
            let pack = cached.as_ref().expect("just made");
            // SAFETY: the plan was finalized on this handle; the pack holds the host's
            // device buffers for the stage's tensors, the plan's workspace and its
            // scalars (at stable addresses in the plan), alive for the call (the host
            // keeps buffers alive until the stream's work completes).
            unsafe { safe::execute_pack(handle, &stage.plan, pack) }
                .map_err(|e| PluginError::internal(format!("{}: {e}", stage.label)))?;
        }
        Ok(())
    }
}

impl CudnnPlan {
    /// The pointers of `stage` for one execution, into `out`; returns the stage's
    /// workspace pointer.
    fn pointers(
        &self,
        stage: &StagePlan,
        exec: &Execution<'_>,
        out: &mut Vec<*mut c_void>,
    ) -> PluginResult<*mut c_void> {
        let buffers = exec.buffers();
        let base = exec.workspace().as_ptr().cast::<u8>();
        if base.is_null() && self.workspace_size() > 0 {
            return Err(PluginError::bad_param(format!(
                "workspace is null but the plan needs {} bytes",
                self.workspace_size()
            )));
        }
        out.clear();
        for source in &stage.sources {
            out.push(match *source {
                Source::Buffer(uid) => buffers.device(uid)?.as_ptr(),
                // SAFETY: within the workspace the plan asked for (checked non-null).
                Source::Scratch(offset) => unsafe { base.add(offset) }.cast(),
                Source::Scalar(at) => (&raw const self.scalars[at]).cast_mut().cast(),
            });
        }
        Ok(if stage.workspace == 0 {
            std::ptr::null_mut()
        } else {
            // SAFETY: the stage's region follows the scratch, within the workspace.
            unsafe { base.add(self.scratch_bytes) }.cast()
        })
    }

    /// The cuDNN calls of executions on `exec`'s buffers alone: variant packs made
    /// once, then each call of the returned closure enqueues every stage with
    /// `cudnnBackendExecute` on the handle's current stream. For measuring what the
    /// plugin and the host add around cuDNN.
    ///
    /// # Safety
    /// As `IPlan::execute` for every call of the closure: the buffers stay valid.
    ///
    /// # Errors
    /// Missing buffers; cuDNN's.
    pub unsafe fn cudnn_calls_only(
        &self,
        exec: &Execution<'_>,
    ) -> PluginResult<impl FnMut() -> PluginResult<()> + '_> {
        let mut packs = Vec::new();
        let mut pointers = Vec::new();
        for stage in &self.stages {
            let workspace = self.pointers(stage, exec, &mut pointers)?;
            packs.push(
                VariantPack::new(&stage.uids, &pointers, workspace)
                    .map_err(|e| PluginError::internal(e.to_string()))?,
            );
        }
        Ok(move || {
            let bound = self.state.lock();
            for (stage, pack) in self.stages.iter().zip(&packs) {
                // SAFETY: per this function's contract.
                unsafe { safe::execute_pack(bound.handle(), &stage.plan, pack) }
                    .map_err(|e| PluginError::internal(e.to_string()))?;
            }
            Ok(())
        })
    }
}

/// A finalized plan for one stage.
struct Chosen {
    plan: Descriptor,
    workspace: usize,
    scalar_slots: HashMap<i64, usize>,
}

struct Builder<'a> {
    handle: &'a CudnnHandle,
    settings: &'a CudnnSettings,
    translation: &'a Translation,
    scalars: Vec<f32>,
    /// Why stages failed, for the final error.
    failures: Vec<String>,
}

impl Builder<'_> {
    /// Covers the chain `nodes` with stages: the longest prefix cuDNN runs, then the
    /// rest the same way (`tried`: the whole chain was refused already).
    fn cover(
        &mut self,
        nodes: &[usize],
        tried: bool,
        stages: &mut Vec<(Stage, Chosen)>,
    ) -> PluginResult<()> {
        let mut start = 0;
        let mut end = if tried { nodes.len() - 1 } else { nodes.len() };
        while start < nodes.len() {
            if end > start
                && let Some(stage) = self.try_stage(&nodes[start..end])?
            {
                stages.push(stage);
                start = end;
                end = nodes.len();
                continue;
            }
            if end <= start + 1 {
                let node = nodes[start];
                return Err(PluginError::not_applicable(format!(
                    "cuDNN has no engine for node \"{}\" under these knobs ({})",
                    self.translation.nodes[node].0,
                    self.failures.last().map_or("no candidates", String::as_str)
                )));
            }
            end -= 1;
        }
        Ok(())
    }

    /// The stage for `nodes` if cuDNN runs it under the settings.
    fn try_stage(&mut self, nodes: &[usize]) -> PluginResult<Option<(Stage, Chosen)>> {
        let stage = self.translation.stage(nodes);
        match self.finalize(&stage) {
            Ok(chosen) => Ok(Some((stage, chosen))),
            Err(reason) => {
                let label = stage.describe(self.translation);
                tracing::debug!("cuDNN stage {label} refused: {reason}");
                self.failures.push(format!("{label}: {reason}"));
                Ok(None)
            }
        }
    }

    fn finalize(&mut self, stage: &Stage) -> Result<Chosen, String> {
        let graph = operation_graph(self.handle, stage).map_err(|e| e.to_string())?;
        let is_float = |uid: &i64| {
            stage
                .tensors
                .iter()
                .any(|t| t.uid == *uid && t.data_type == cudnnDataType_t::CUDNN_DATA_FLOAT)
        };
        // FLOAT math on tensor cores is TF32: allowed by the knob only.
        let float_math = stage.ops.iter().any(|op| match op {
            OpSpec::ConvForward { w, .. } | OpSpec::ConvBackwardData { w, .. } => is_float(w),
            OpSpec::ConvBackwardFilter { dw, .. } => is_float(dw),
            OpSpec::Matmul { a, .. } => is_float(a),
            OpSpec::Pointwise { .. } | OpSpec::NormForward(_) | OpSpec::NormBackward(_) => false,
        });
        // The chosen mode's proposals first; cuDNN's fallback list when none of them
        // suits the knobs (e.g. FP32 without TF32, where mode A proposes tensor-core
        // engines only).
        let mut modes = vec![self.settings.heuristic];
        if self.settings.heuristic != cudnnBackendHeurMode_t::CUDNN_HEUR_MODE_FALLBACK {
            modes.push(cudnnBackendHeurMode_t::CUDNN_HEUR_MODE_FALLBACK);
        }
        let mut finalized = Vec::new();
        let mut last_error = String::from("the heuristics proposed no configuration");
        for mode in modes {
            if !finalized.is_empty() {
                break;
            }
            let configs =
                safe::heuristics(&graph, mode, MAX_CANDIDATES).map_err(|e| e.to_string())?;
            for config in &configs {
                let engine = safe::engine_of(config).map_err(|e| e.to_string())?;
                let notes = engine.numerical_notes().map_err(|e| e.to_string())?;
                let reduced_precision = notes.iter().any(|n| {
                    matches!(
                        n,
                        Note::CUDNN_NUMERICAL_NOTE_TENSOR_CORE
                            | Note::CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS
                    )
                });
                if float_math && !self.settings.allow_tf32 && reduced_precision {
                    last_error = "only TF32 engines (set cudnn.allow_tf32=1)".into();
                    continue;
                }
                if self.settings.deterministic
                    && notes.contains(&Note::CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC)
                {
                    last_error = "only non-deterministic engines".into();
                    continue;
                }
                let plan = match safe::execution_plan(self.handle, config) {
                    Ok(plan) => plan,
                    Err(e) => {
                        last_error = e.to_string();
                        continue;
                    }
                };
                let workspace = plan
                    .get_i64(Attr::CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE)
                    .map_err(|e| e.to_string())?;
                let workspace = usize::try_from(workspace).unwrap_or(0);
                if self
                    .settings
                    .workspace_limit
                    .is_some_and(|limit| workspace > limit)
                {
                    last_error =
                        format!("workspace {workspace} bytes is over global.workspace_size_limit");
                    continue;
                }
                let index = engine
                    .get_i64(Attr::CUDNN_ATTR_ENGINE_GLOBAL_INDEX)
                    .unwrap_or(-1);
                tracing::info!(
                    "cuDNN {}: engine {index} ({mode:?}) with notes {notes:?}, {workspace} bytes of workspace",
                    stage.describe(self.translation)
                );
                finalized.push((plan, workspace));
                if !self.settings.benchmarking || finalized.len() >= MAX_TIMED {
                    break;
                }
            }
        }
        if finalized.is_empty() {
            return Err(last_error);
        }
        let mut scalar_slots = HashMap::new();
        for t in stage.bound() {
            if let Some(v) = t.value {
                scalar_slots.insert(t.uid, self.scalars.len());
                self.scalars.push(v);
            }
        }
        let (plan, workspace) = if finalized.len() > 1 {
            self.fastest(stage, finalized, &scalar_slots)?
        } else {
            finalized.pop().expect("one candidate")
        };
        Ok(Chosen {
            plan,
            workspace,
            scalar_slots,
        })
    }

    /// Times each candidate once on scratch memory and keeps the fastest.
    fn fastest(
        &self,
        stage: &Stage,
        candidates: Vec<(Descriptor, usize)>,
        scalar_slots: &HashMap<i64, usize>,
    ) -> Result<(Descriptor, usize), String> {
        let mut memory = Vec::new();
        let mut uids = Vec::new();
        let mut pointers = Vec::new();
        for t in stage.bound() {
            uids.push(t.uid);
            if let Some(&at) = scalar_slots.get(&t.uid) {
                pointers.push((&raw const self.scalars[at]).cast_mut().cast());
            } else {
                let bytes = t.dims.iter().product::<i64>() as usize
                    * crate::graph::element_size(t.data_type);
                let buffer = Scratch::zeroed(bytes)?;
                pointers.push(buffer.ptr());
                memory.push(buffer);
            }
        }
        let largest = candidates.iter().map(|(_, w)| *w).max().unwrap_or(0);
        let workspace = Scratch::zeroed(largest)?;
        let mut best: Option<(f32, usize)> = None;
        for (i, (plan, _)) in candidates.iter().enumerate() {
            let ms = time_on_stream(std::ptr::null_mut(), 3, || {
                // SAFETY: scratch buffers of each tensor's size and a workspace of the
                // largest candidate's, alive until `time_on_stream` synchronizes.
                unsafe { safe::execute(self.handle, plan, &uids, &pointers, workspace.ptr()) }
                    .map_err(|e| e.to_string())
            });
            match ms {
                Ok(ms) => {
                    tracing::debug!(candidate = i, ms, "cuDNN candidate timed");
                    if best.is_none_or(|(b, _)| ms < b) {
                        best = Some((ms, i));
                    }
                }
                Err(e) => tracing::debug!(candidate = i, "cuDNN candidate failed to run: {e}"),
            }
        }
        let (_, at) = best.ok_or("no candidate ran")?;
        Ok(candidates.into_iter().nth(at).expect("timed candidate"))
    }
}

/// Descriptor for one tensor of a stage.
fn tensor(t: &TensorSpec) -> Result<Descriptor, crate::cudnn::CudnnError> {
    let mut d = Descriptor::new(Kind::CUDNN_BACKEND_TENSOR_DESCRIPTOR)?;
    d.set_data_type(Attr::CUDNN_ATTR_TENSOR_DATA_TYPE, t.data_type)?
        .set_i64s(Attr::CUDNN_ATTR_TENSOR_DIMENSIONS, &t.dims)?
        .set_i64s(Attr::CUDNN_ATTR_TENSOR_STRIDES, &t.strides)?
        .set_i64(Attr::CUDNN_ATTR_TENSOR_UNIQUE_ID, t.uid)?
        .set_i64(Attr::CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, 16)?
        .set_bool(Attr::CUDNN_ATTR_TENSOR_IS_VIRTUAL, t.is_virtual)?;
    if t.value.is_some() {
        d.set_bool(Attr::CUDNN_ATTR_TENSOR_IS_BY_VALUE, true)?;
    }
    d.finalize()?;
    Ok(d)
}

/// The finalized operation graph of a stage.
fn operation_graph(
    handle: &CudnnHandle,
    stage: &Stage,
) -> Result<Descriptor, crate::cudnn::CudnnError> {
    let mut tensors = HashMap::new();
    for t in &stage.tensors {
        tensors.insert(t.uid, tensor(t)?);
    }
    let mut ops = Vec::new();
    // Parameter descriptors must outlive the graph's finalization.
    let mut keep = Vec::new();
    for op in &stage.ops {
        ops.push(operation(op, &tensors, &mut keep)?);
    }
    let refs: Vec<&Descriptor> = ops.iter().collect();
    let mut graph = Descriptor::new(Kind::CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR)?;
    graph
        .set_handle(Attr::CUDNN_ATTR_OPERATIONGRAPH_HANDLE, handle)?
        .set_descriptors(Attr::CUDNN_ATTR_OPERATIONGRAPH_OPS, &refs)?
        .finalize()?;
    Ok(graph)
}

fn operation(
    op: &OpSpec,
    t: &HashMap<i64, Descriptor>,
    keep: &mut Vec<Descriptor>,
) -> Result<Descriptor, crate::cudnn::CudnnError> {
    let conv_desc = |c: &crate::graph::ConvSpec| -> Result<Descriptor, crate::cudnn::CudnnError> {
        let mut d = Descriptor::new(Kind::CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR)?;
        d.set_data_type(Attr::CUDNN_ATTR_CONVOLUTION_COMP_TYPE, c.compute)?
            .set_conv_mode(Attr::CUDNN_ATTR_CONVOLUTION_CONV_MODE, c.mode)?
            .set_i64(
                Attr::CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS,
                c.stride.len() as i64,
            )?
            .set_i64s(Attr::CUDNN_ATTR_CONVOLUTION_DILATIONS, &c.dilation)?
            .set_i64s(Attr::CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, &c.stride)?
            .set_i64s(Attr::CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, &c.pre_padding)?
            .set_i64s(Attr::CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, &c.post_padding)?
            .finalize()?;
        Ok(d)
    };
    let mut d;
    match op {
        OpSpec::ConvForward { x, w, y, conv } => {
            let c = conv_desc(conv)?;
            d = Descriptor::new(Kind::CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR)?;
            d.set_descriptor(Attr::CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, &t[x])?
                .set_descriptor(Attr::CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, &t[w])?
                .set_descriptor(Attr::CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, &t[y])?
                .set_descriptor(Attr::CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, &c)?
                .set_f32(Attr::CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, 1.0)?
                .set_f32(Attr::CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, 0.0)?;
            keep.push(c);
        }
        OpSpec::ConvBackwardData { dy, w, dx, conv } => {
            let c = conv_desc(conv)?;
            d = Descriptor::new(
                Kind::CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
            )?;
            d.set_descriptor(Attr::CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY, &t[dy])?
                .set_descriptor(Attr::CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W, &t[w])?
                .set_descriptor(Attr::CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX, &t[dx])?
                .set_descriptor(
                    Attr::CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC,
                    &c,
                )?
                .set_f32(Attr::CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA, 1.0)?
                .set_f32(Attr::CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA, 0.0)?;
            keep.push(c);
        }
        OpSpec::ConvBackwardFilter { x, dy, dw, conv } => {
            let c = conv_desc(conv)?;
            d = Descriptor::new(
                Kind::CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR,
            )?;
            d.set_descriptor(Attr::CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X, &t[x])?
                .set_descriptor(Attr::CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY, &t[dy])?
                .set_descriptor(Attr::CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW, &t[dw])?
                .set_descriptor(
                    Attr::CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC,
                    &c,
                )?
                .set_f32(Attr::CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA, 1.0)?
                .set_f32(Attr::CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA, 0.0)?;
            keep.push(c);
        }
        OpSpec::Matmul { a, b, c, compute } => {
            let mut m = Descriptor::new(Kind::CUDNN_BACKEND_MATMUL_DESCRIPTOR)?;
            m.set_data_type(Attr::CUDNN_ATTR_MATMUL_COMP_TYPE, *compute)?
                .finalize()?;
            d = Descriptor::new(Kind::CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR)?;
            d.set_descriptor(Attr::CUDNN_ATTR_OPERATION_MATMUL_ADESC, &t[a])?
                .set_descriptor(Attr::CUDNN_ATTR_OPERATION_MATMUL_BDESC, &t[b])?
                .set_descriptor(Attr::CUDNN_ATTR_OPERATION_MATMUL_CDESC, &t[c])?
                .set_descriptor(Attr::CUDNN_ATTR_OPERATION_MATMUL_DESC, &m)?;
            keep.push(m);
        }
        OpSpec::NormForward(n) => {
            d = Descriptor::new(Kind::CUDNN_BACKEND_OPERATION_NORM_FORWARD_DESCRIPTOR)?;
            d.set_norm_mode(Attr::CUDNN_ATTR_OPERATION_NORM_FWD_MODE, n.mode)?
                .set_norm_phase(Attr::CUDNN_ATTR_OPERATION_NORM_FWD_PHASE, n.phase)?
                .set_descriptor(Attr::CUDNN_ATTR_OPERATION_NORM_FWD_XDESC, &t[&n.x])?
                .set_descriptor(Attr::CUDNN_ATTR_OPERATION_NORM_FWD_SCALE_DESC, &t[&n.scale])?
                .set_descriptor(
                    Attr::CUDNN_ATTR_OPERATION_NORM_FWD_EPSILON_DESC,
                    &t[&n.epsilon],
                )?
                .set_descriptor(Attr::CUDNN_ATTR_OPERATION_NORM_FWD_YDESC, &t[&n.y])?;
            if let Some(b) = n.bias {
                d.set_descriptor(Attr::CUDNN_ATTR_OPERATION_NORM_FWD_BIAS_DESC, &t[&b])?;
            }
            if let Some(m) = n.mean {
                d.set_descriptor(Attr::CUDNN_ATTR_OPERATION_NORM_FWD_MEAN_DESC, &t[&m])?;
            }
            if let Some(v) = n.inv_variance {
                d.set_descriptor(
                    Attr::CUDNN_ATTR_OPERATION_NORM_FWD_INV_VARIANCE_DESC,
                    &t[&v],
                )?;
            }
            if let Some([momentum, prev_mean, prev_var, next_mean, next_var]) = n.running {
                d.set_descriptor(
                    Attr::CUDNN_ATTR_OPERATION_NORM_FWD_EXP_AVG_FACTOR_DESC,
                    &t[&momentum],
                )?
                .set_descriptor(
                    Attr::CUDNN_ATTR_OPERATION_NORM_FWD_INPUT_RUNNING_MEAN_DESC,
                    &t[&prev_mean],
                )?
                .set_descriptor(
                    Attr::CUDNN_ATTR_OPERATION_NORM_FWD_INPUT_RUNNING_VAR_DESC,
                    &t[&prev_var],
                )?
                .set_descriptor(
                    Attr::CUDNN_ATTR_OPERATION_NORM_FWD_OUTPUT_RUNNING_MEAN_DESC,
                    &t[&next_mean],
                )?
                .set_descriptor(
                    Attr::CUDNN_ATTR_OPERATION_NORM_FWD_OUTPUT_RUNNING_VAR_DESC,
                    &t[&next_var],
                )?;
            }
        }
        OpSpec::NormBackward(n) => {
            d = Descriptor::new(Kind::CUDNN_BACKEND_OPERATION_NORM_BACKWARD_DESCRIPTOR)?;
            d.set_norm_mode(
                Attr::CUDNN_ATTR_OPERATION_NORM_BWD_MODE,
                crate::cudnn::sys::cudnnBackendNormMode_t::CUDNN_BATCH_NORM,
            )?
            .set_descriptor(Attr::CUDNN_ATTR_OPERATION_NORM_BWD_XDESC, &t[&n.x])?
            .set_descriptor(Attr::CUDNN_ATTR_OPERATION_NORM_BWD_DYDESC, &t[&n.dy])?
            .set_descriptor(Attr::CUDNN_ATTR_OPERATION_NORM_BWD_MEAN_DESC, &t[&n.mean])?
            .set_descriptor(
                Attr::CUDNN_ATTR_OPERATION_NORM_BWD_INV_VARIANCE_DESC,
                &t[&n.inv_variance],
            )?
            .set_descriptor(Attr::CUDNN_ATTR_OPERATION_NORM_BWD_SCALE_DESC, &t[&n.scale])?
            .set_descriptor(Attr::CUDNN_ATTR_OPERATION_NORM_BWD_DXDESC, &t[&n.dx])?
            .set_descriptor(
                Attr::CUDNN_ATTR_OPERATION_NORM_BWD_DSCALE_DESC,
                &t[&n.dscale],
            )?
            .set_descriptor(Attr::CUDNN_ATTR_OPERATION_NORM_BWD_DBIAS_DESC, &t[&n.dbias])?;
        }
        OpSpec::Pointwise {
            mode,
            x,
            b,
            y,
            compute,
            params,
        } => {
            let mut p = Descriptor::new(Kind::CUDNN_BACKEND_POINTWISE_DESCRIPTOR)?;
            p.set_pointwise_mode(Attr::CUDNN_ATTR_POINTWISE_MODE, *mode)?
                .set_data_type(Attr::CUDNN_ATTR_POINTWISE_MATH_PREC, *compute)?;
            for (attr, value) in [
                (
                    Attr::CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP,
                    params.relu_lower_clip,
                ),
                (
                    Attr::CUDNN_ATTR_POINTWISE_RELU_UPPER_CLIP,
                    params.relu_upper_clip,
                ),
                (
                    Attr::CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP_SLOPE,
                    params.relu_lower_clip_slope,
                ),
                (Attr::CUDNN_ATTR_POINTWISE_ELU_ALPHA, params.elu_alpha),
                (
                    Attr::CUDNN_ATTR_POINTWISE_SOFTPLUS_BETA,
                    params.softplus_beta,
                ),
                (Attr::CUDNN_ATTR_POINTWISE_SWISH_BETA, params.swish_beta),
            ] {
                if let Some(v) = value {
                    p.set_f64(attr, v)?;
                }
            }
            p.finalize()?;
            d = Descriptor::new(Kind::CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR)?;
            d.set_descriptor(Attr::CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, &p)?
                .set_descriptor(Attr::CUDNN_ATTR_OPERATION_POINTWISE_XDESC, &t[x])?
                .set_descriptor(Attr::CUDNN_ATTR_OPERATION_POINTWISE_YDESC, &t[y])?;
            if let Some(b) = b {
                d.set_descriptor(Attr::CUDNN_ATTR_OPERATION_POINTWISE_BDESC, &t[b])?;
            }
            keep.push(p);
        }
    }
    d.finalize()?;
    Ok(d)
}
