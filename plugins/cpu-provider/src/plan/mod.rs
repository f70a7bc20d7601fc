//! From a graph to an executable plan.
//!
//! A plan is a list of *stages* run in order. A stage is one producer (a convolution,
//! matmul, normalization, reduction, pooling, or the first pointwise op of a chain) followed by
//! an epilogue: the pointwise ops that consume its output (and batch-norm inference,
//! folded into a scale-and-shift), applied while the producer's values are still in
//! registers or cache. A virtual tensor inside a chain is never stored; one read by
//! several nodes is materialised in the workspace as `f32`. Either way a HALF or
//! BFLOAT16 intermediate is rounded to its type (an epilogue step) before anything reads
//! it, so that its values are the ones the graph declares, as the reference computes
//! them.
//!
//! Building goes in two steps. The analysis (`analysis.rs`, with the per-node checks in
//! `ops.rs`) settles everything about the graph: which chains fuse (the SDK's chain
//! partition under this engine's policy), whether every node is supported, and what
//! each node becomes in its stage (the head's operation; the epilogue steps with their
//! operands). It is also the whole applicability check ([`unsupported_reason`]). The
//! stage builder (`stages.rs`) then picks kernel implementations and lays out the
//! workspace (`workspace.rs`); `execute.rs` runs the stages.

mod analysis;
mod execute;
mod ops;
mod profile;
mod stages;
mod workspace;

use std::collections::HashMap;
use std::ffi::c_void;

use hipdnn_flatbuffers_sdk::GraphView;
use hipdnn_flatbuffers_sdk::model;
use hipdnn_plugin_sdk::{Buffers, PluginError, PluginResult};

use self::analysis::{Analysis, TensorInfo};
use self::execute::HostBuffer;
use self::profile::Profile;
use self::stages::Stage;
use self::workspace::Placement;
use crate::kernels::conv::ConvAlgo;
use crate::kernels::exec::Exec;
use crate::tensor::{DType, Elem};

/// How plans run (read from the knobs; see the crate docs).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CpuSettings {
    /// Worker threads (0: one per core).
    pub threads: usize,
    /// Convolution algorithm.
    pub conv_algo: ConvAlgo,
    /// Bitwise reproducible results (every kernel already is; kept for reporting).
    pub deterministic: bool,
    /// Largest workspace the plan may ask for, in bytes.
    pub workspace_limit: Option<usize>,
    /// The filter tensors of the plan's convolutions keep their address and values
    /// from one execution to the next (`cpu.constant_weights`): their packed form is
    /// kept by the plan and reused.
    pub constant_weights: bool,
}

/// An executable plan for one graph (built by [`plan_for`] or [`Plan::from_model`]).
#[derive(Debug)]
pub struct Plan {
    tensors: HashMap<i64, TensorInfo>,
    stages: Vec<Stage>,
    /// Every tensor a stage writes that is visible outside its chain.
    outputs: Vec<i64>,
    /// Byte offset of the scratch region in the (aligned) workspace.
    scratch_at: usize,
    workspace: usize,
    exec: Exec,
    settings: CpuSettings,
    /// Stage times of every execution (`HIPDNN_CPU_PROFILE=1`), printed at drop.
    profile: Option<Profile>,
    /// The (aligned) workspace address huge pages were last asked for, 0 for none:
    /// asked once per workspace, not per execution.
    advised: std::sync::atomic::AtomicUsize,
    /// The host buffers the stages' epilogues read or write (by uid).
    epilogue_buffers: Vec<i64>,
    /// The last execution's epilogues, for the next one with the same buffers.
    epilogues: execute::EpilogueCache,
}

/// Builds a plan for `graph` under `settings`.
///
/// # Errors
/// `NOT_APPLICABLE` naming the node (or tensor) this engine cannot run and why;
/// `BAD_PARAM` when the workspace limit is below what the graph needs.
pub fn plan_for(graph: &GraphView<'_>, settings: &CpuSettings) -> PluginResult<Plan> {
    let g = graph
        .to_model()
        .map_err(|e| PluginError::bad_param(e.to_string()))?;
    Plan::from_model(&g, settings)
}

/// Why this engine cannot run `graph`, if it cannot. An analysis of the graph only: no
/// kernel is planned and no memory laid out. The graph must have passed validation (as
/// every graph reaching a plugin has).
pub fn unsupported_reason(graph: &GraphView<'_>) -> Option<String> {
    match graph.to_model() {
        Ok(g) => Analysis::new(&g).err(),
        Err(e) => Some(e.to_string()),
    }
}

impl Plan {
    /// Builds a plan from an owned (validated) graph.
    ///
    /// # Errors
    /// As [`plan_for`].
    pub fn from_model(g: &model::Graph, settings: &CpuSettings) -> PluginResult<Self> {
        let analysis = Analysis::new(g).map_err(PluginError::not_applicable)?;
        let mut plan = stages::build(&analysis, settings);
        if let Some(limit) = settings.workspace_limit
            && plan.workspace > limit
        {
            // Retry with the leanest algorithms before giving up.
            let lean = CpuSettings {
                conv_algo: ConvAlgo::Direct,
                ..settings.clone()
            };
            plan = stages::build(&analysis, &lean);
            plan.settings = settings.clone();
            if plan.workspace > limit {
                return Err(PluginError::bad_param(format!(
                    "global.workspace_size_limit is {limit} bytes but graph \"{}\" needs at least {} bytes on the CPU engine",
                    g.name, plan.workspace
                )));
            }
        }
        plan.profile = Profile::from_env(
            plan.stages
                .iter()
                .map(|s| format!("{} over {:?}", s.description, s.dims))
                .collect(),
        );
        // Once per plan: which kernel runs each stage (HIPDNN_LOG_LEVEL=info shows it).
        tracing::info!(
            graph = %g.name,
            workspace = plan.workspace,
            stages = ?plan.describe(),
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
        self.stages.iter().map(|s| s.description.clone()).collect()
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
        // Buffers passed through the C ABI come without a length.
        let len = usize::MAX;
        let host = self.host_buffers(|uid, _| {
            Ok(HostBuffer {
                ptr: buffers.require(uid)?.cast(),
                len,
            })
        })?;
        // SAFETY: the caller's contract.
        unsafe { execute::run(self, &host, workspace.cast(), ws_size) }
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
        let host = self.host_buffers(|uid, t| match tensors.map.get(&uid) {
            Some(slice) if slice.dtype == t.dtype => Ok(slice.buffer),
            Some(slice) => Err(PluginError::bad_param(format!(
                "tensor uid {uid} (\"{}\") is {:?} but its buffer holds {:?}",
                t.name, t.dtype, slice.dtype
            ))),
            None => Err(PluginError::bad_param(format!(
                "no buffer for tensor uid {uid} (\"{}\")",
                t.name
            ))),
        })?;
        // SAFETY: every pointer comes from a live borrowed slice of `len` bytes
        // (`HostTensors` holds the borrows; outputs were borrowed mutably); the extents
        // are checked against the shapes before any access; the workspace is ours.
        unsafe { execute::run(self, &host, ws.as_mut_ptr(), ws.len()) }
    }

    /// The buffer of each tensor the host passes, by uid.
    fn host_buffers(
        &self,
        buffer: impl Fn(i64, &TensorInfo) -> PluginResult<HostBuffer>,
    ) -> PluginResult<HashMap<i64, HostBuffer>> {
        let host = self
            .tensors
            .iter()
            .filter(|(_, t)| t.placement == Placement::Host);
        host.map(|(&uid, t)| Ok((uid, buffer(uid, t)?))).collect()
    }
}

/// A slice lent to [`HostTensors`].
#[derive(Debug, Clone, Copy)]
struct LentSlice {
    buffer: HostBuffer,
    dtype: DType,
}

/// Tensors borrowed from Rust slices, by uid, for [`Plan::run`].
#[derive(Debug, Default)]
pub struct HostTensors<'a> {
    map: HashMap<i64, LentSlice>,
    _borrow: std::marker::PhantomData<&'a mut [u8]>,
}

impl<'a> HostTensors<'a> {
    /// No tensors yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// An input tensor.
    pub fn input<T: Elem>(self, uid: i64, data: &'a [T]) -> Self {
        let len = size_of_val(data);
        self.lend::<T>(uid, data.as_ptr().cast_mut().cast(), len)
    }

    /// An output tensor (written by the plan).
    pub fn output<T: Elem>(self, uid: i64, data: &'a mut [T]) -> Self {
        let len = size_of_val(data);
        self.lend::<T>(uid, data.as_mut_ptr().cast(), len)
    }

    fn lend<T: Elem>(mut self, uid: i64, ptr: *mut u8, len: usize) -> Self {
        let (buffer, dtype) = (HostBuffer { ptr, len }, T::DTYPE);
        self.map.insert(uid, LentSlice { buffer, dtype });
        self
    }
}
