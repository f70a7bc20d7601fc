//! From checked chains to stages: each chain becomes one stage, a producer kernel with
//! the rest of the chain as its epilogue. Here the engine picks kernel implementations
//! and lays out memory; everything about the graph was settled by the analysis.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Arc;

use super::analysis::{Analysis, CheckedChain, TensorInfo};
use super::ops::{BatchNormInference, ConvPass, EpilogueOp, EpilogueStep, HeadOp, ValueSource};
use super::workspace::{F32Arrays, Lifetime, Placement, WorkspaceLayout, assign_offsets};
use super::{CpuSettings, Plan};
use crate::kernels::conv::{ConvAlgo, FpropPlan, WeightCache};
use crate::kernels::conv_bwd::{self, BwdImpl};
use crate::kernels::exec::Exec;
use crate::kernels::matmul::MatmulPlan;
use crate::kernels::pointwise::PwOp;
use crate::kernels::pool;
use crate::tensor::{DType, Shape};

/// Scratch offsets of two `f32` arrays `a`, `b` with which a stage computes `x·a + b`
/// (per channel or per row).
#[derive(Debug, Clone, Copy)]
pub(super) struct ScaleShift {
    pub scale_at: usize,
    pub shift_at: usize,
}

/// A batch-norm inference folded into a scale and shift, computed at the start of each
/// execution for every stage at once (in one parallel section: their parameters are
/// read as one stream rather than one stage's at a time, between its kernel's
/// sections), or, when an earlier stage computes one of its parameters, just before its
/// stage. Its arrays lie in the plan's fold region, which no stage's scratch overlaps.
#[derive(Debug, Clone)]
pub(super) struct BatchNormFold {
    pub bn: BatchNormInference,
    pub arrays: ScaleShift,
    /// The stage's epilogue step that applies the arrays.
    pub step: usize,
}

impl BatchNormFold {
    /// The tensors its scale and shift are computed from (the epsilon's too, when it is
    /// a tensor).
    pub fn param_tensors(&self) -> impl Iterator<Item = i64> + '_ {
        let bn = &self.bn;
        let eps = bn.variance_epsilon.as_ref().map(|(var, eps)| {
            let eps = match eps {
                ValueSource::Tensor(uid) => Some(*uid),
                _ => None,
            };
            [Some(*var), eps]
        });
        [
            Some(bn.mean),
            Some(bn.scale),
            Some(bn.bias),
            bn.inv_variance,
        ]
        .into_iter()
        .chain(eps.into_iter().flatten())
        .flatten()
    }
}

/// What plan building chose to run a stage's head with.
#[derive(Debug, Clone)]
pub(super) enum Kernel {
    /// Nothing to choose: an elementwise head is its epilogue, batch-norm backward
    /// writes its three outputs itself.
    Direct,
    /// With the packed filters it keeps, when they are declared constant.
    Convolution(FpropPlan, Option<Arc<WeightCache>>),
    /// Data or filter gradient.
    ConvolutionGradient(BwdImpl),
    Matmul(MatmulPlan),
    /// Batch-norm training and normalizations: statistics into these arrays, then `x`
    /// through the epilogue.
    Statistics(ScaleShift),
    /// Generated indices or a reduction, densely into the scratch at this offset, then
    /// through the epilogue.
    Scratch(usize),
    /// Pooling densely into the scratch at `at`, channels-last when the input is (the
    /// channel-vectorised loop), row-major otherwise; then through the epilogue.
    Pool {
        at: usize,
        channels_last: bool,
    },
}

/// One fused kernel: a head and its epilogue over one index space.
#[derive(Debug, Clone)]
pub(super) struct Stage {
    /// What it runs: the kernel and the names of the nodes, head first (diagnostics).
    pub description: String,
    pub head: HeadOp,
    pub kernel: Kernel,
    /// The index space (the dims of the head's output; none for batch-norm backward).
    pub dims: Vec<usize>,
    /// Batch norms folded into scale-and-shift arrays before the head runs.
    pub folds: Vec<BatchNormFold>,
    /// Store of the head's value itself.
    pub store: Option<i64>,
    /// The epilogue: steps applied to the head's values, in order.
    pub steps: Vec<EpilogueStep>,
    /// The `f32` arrays at the start of the stage's scratch.
    pub arrays: F32Arrays,
    /// `f32` elements of kernel workspace after the arrays.
    pub kernel_workspace: usize,
}

impl Stage {
    /// Appends an operation of the chain to the epilogue; a batch-norm fold's arrays
    /// are reserved in `folds` (offsets within the fold region, placed by [`build`]).
    fn append(&mut self, op: &EpilogueOp, folds: &mut F32Arrays) {
        match op {
            EpilogueOp::Pointwise(step) => self.steps.push(step.clone()),
            EpilogueOp::BatchNormInference(bn) => {
                let shape = channel_shape(&self.dims, bn.channels);
                let arrays = Self::scale_shift_in(&mut self.steps, shape, folds);
                let bn = bn.clone();
                let step = self.steps.len() - 1;
                self.folds.push(BatchNormFold { bn, arrays, step });
            }
        }
    }

    /// Reserves scale and shift arrays of `shape` in the stage's scratch and appends
    /// the step applying them.
    fn scale_shift(&mut self, shape: Shape) -> ScaleShift {
        Self::scale_shift_in(&mut self.steps, shape, &mut self.arrays)
    }

    /// Reserves scale and shift arrays of `shape` in `arrays` and appends the step
    /// applying them to `steps`.
    fn scale_shift_in(
        steps: &mut Vec<EpilogueStep>,
        shape: Shape,
        arrays: &mut F32Arrays,
    ) -> ScaleShift {
        let numel = shape.numel();
        let arrays = ScaleShift {
            scale_at: arrays.reserve(numel),
            shift_at: arrays.reserve(numel),
        };
        let array = |offset| {
            let shape = shape.clone();
            Some(ValueSource::Scratch { offset, shape })
        };
        steps.push(EpilogueStep {
            op: PwOp::ScaleShift,
            chain_input: 0,
            others: [None, array(arrays.scale_at), array(arrays.shift_at)],
            store: None,
        });
        arrays
    }

    /// Moves the stage's fold arrays from offsets within the fold region to offsets
    /// within the scratch region, the fold region starting `base` bytes into it.
    fn place_folds(&mut self, base: usize) {
        for fold in &mut self.folds {
            fold.arrays.scale_at += base;
            fold.arrays.shift_at += base;
            for other in self.steps[fold.step].others.iter_mut().flatten() {
                if let ValueSource::Scratch { offset, .. } = other {
                    *offset += base;
                }
            }
        }
    }
}

/// Builds the plan of an analysed graph under `settings`.
pub(super) fn build(analysis: &Analysis<'_>, settings: &CpuSettings) -> Plan {
    let mut tensors = analysis.tensors.clone();
    let exec = Exec::new(settings.threads);
    let mut layout = WorkspaceLayout::default();
    let mut stages = Vec::with_capacity(analysis.chains.len());
    let mut outputs = Vec::new();
    // Every stage's batch-norm folds, in a region of their own.
    let mut folds = F32Arrays::default();
    // Tensors stored in the workspace, with the stage that stores them.
    let mut materialised: Vec<(i64, usize)> = Vec::new();
    // Per stage, the (output, residual) pair that may share bytes.
    let mut in_place: Vec<Option<(i64, i64)>> = Vec::new();
    for checked in &analysis.chains {
        let chain = &checked.chain;
        let mut stage = head_stage(
            analysis,
            &tensors,
            checked,
            settings,
            exec.threads(),
            &mut folds,
        );
        let names: Vec<&str> = chain.nodes().map(|n| analysis.node_name(n)).collect();
        stage.description = format!("{}: {}", stage.description, names.join(" -> "));
        // Store each chain tensor the chain must store, after the operation that
        // computes it. A HALF or BFLOAT16 tensor read on in registers (by the next step,
        // or materialised as f32 for another stage) is rounded to its type first, as
        // the graph says its values are.
        let order = layout_source(&checked.head).map(|uid| tensors[&uid].shape.memory_order());
        let mut ops = checked.steps.iter();
        for uid in chain.chain_tensors() {
            let t = &tensors[&uid];
            let round = match t.dtype {
                DType::F16 => Some(PwOp::RoundF16),
                DType::BF16 => Some(PwOp::RoundBf16),
                DType::F32 => None,
            };
            if let Some(op) = round
                && (ops.len() > 0 || t.placement == Placement::Virtual)
            {
                stage.steps.push(EpilogueStep {
                    op,
                    chain_input: 0,
                    others: [None, None, None],
                    store: None,
                });
            }
            if chain.is_stored(uid) {
                let t = tensors.get_mut(&uid).expect("a declared tensor");
                if t.placement == Placement::Virtual {
                    t.dtype = DType::F32;
                    // Dense: channels-last where the analysis says so (images
                    // between convolutions and poolings), else in the memory order of
                    // the stage's input. A virtual tensor's strides are never
                    // observed; the next convolution reads channels-last fastest.
                    t.shape = match &order {
                        _ if analysis.channels_last.contains(&uid) => {
                            Shape::channels_last(&t.shape.dims)
                        }
                        Some(order) if order.len() == t.shape.rank() => {
                            Shape::packed_in_order(&t.shape.dims, order)
                        }
                        _ => t.shape.packed_like(),
                    };
                    // Its offset is assigned once every stage is known (by lifetime).
                    t.placement = Placement::Workspace(usize::MAX);
                    materialised.push((uid, stages.len()));
                }
                match stage.steps.last_mut() {
                    Some(s) => s.store = Some(uid),
                    None => stage.store = Some(uid),
                }
            }
            if let Some(op) = ops.next() {
                stage.append(op, &mut folds);
            }
        }
        layout.stage_scratch(stage.arrays.bytes(), stage.kernel_workspace);
        outputs.extend(&chain.outputs);
        in_place.push(in_place_residual(
            analysis,
            &tensors,
            checked,
            &stage,
            &materialised,
            stages.len(),
        ));
        stages.push(stage);
    }
    // A materialised tensor lives from the stage that stores it to the last stage
    // whose nodes read it; tensors whose lifetimes do not overlap share bytes, so the
    // workspace a network touches per execution stays small (and in cache).
    let mut last_read: HashMap<i64, usize> = HashMap::new();
    for (s, checked) in analysis.chains.iter().enumerate() {
        for node in checked.chain.nodes() {
            for &uid in analysis.index.node_inputs(node) {
                last_read.insert(uid, s);
            }
        }
    }
    let mut lives: Vec<Lifetime> = materialised
        .iter()
        .map(|&(uid, birth)| Lifetime {
            birth,
            death: last_read.get(&uid).copied().unwrap_or(birth).max(birth),
            bytes: tensors[&uid].shape.numel() * 4,
            reuse: None,
        })
        .collect();
    // A stage's output takes the bytes of the residual it adds where it is that
    // residual's last reader: the add then reads and writes the same cache lines (no
    // second stream, and no lines fetched only to be overwritten).
    let index: HashMap<i64, usize> = materialised
        .iter()
        .enumerate()
        .map(|(i, &(uid, _))| (uid, i))
        .collect();
    for (s, pair) in in_place.iter().enumerate() {
        if let &Some((y, r)) = pair
            && lives[index[&r]].death == s
        {
            lives[index[&y]].reuse = Some(index[&r]);
            let name = &tensors[&r].name;
            write!(stages[s].description, " (in place of '{name}')").expect("to a String");
        }
    }
    let (offsets, bytes) = assign_offsets(&lives);
    for (&(uid, _), offset) in materialised.iter().zip(offsets) {
        let t = tensors.get_mut(&uid).expect("a declared tensor");
        t.placement = Placement::Workspace(offset);
    }
    layout.materialised_bytes(bytes);
    let base = layout.fold_region(folds.bytes());
    for stage in &mut stages {
        stage.place_folds(base);
    }
    // The host buffers the epilogues address (the others are in the workspace).
    let mut epilogue_buffers: Vec<i64> = stages
        .iter()
        .flat_map(|s| {
            let operands = s.steps.iter().flat_map(|step| {
                step.others.iter().flatten().filter_map(|o| match o {
                    ValueSource::Tensor(uid) => Some(*uid),
                    _ => None,
                })
            });
            let stores = s.steps.iter().filter_map(|step| step.store);
            s.store.into_iter().chain(stores).chain(operands)
        })
        .filter(|uid| tensors[uid].placement == Placement::Host)
        .collect();
    epilogue_buffers.sort_unstable();
    epilogue_buffers.dedup();
    Plan {
        tensors,
        stages,
        outputs,
        scratch_at: layout.scratch_at(),
        workspace: layout.size(),
        exec,
        settings: settings.clone(),
        profile: None,
        advised: Default::default(),
        epilogue_buffers,
        epilogues: Default::default(),
    }
}

/// The one tensor a convolution or matmul stage stores and the residual whose bytes it
/// may take, if the stage is that residual's last reader (checked by the caller): a
/// materialised tensor of the same shape, read by the chain once, by an epilogue step
/// at or before the step that stores the output. Every convolution and matmul kernel
/// finishes an output element's value in registers or a local buffer, reading the
/// residual's element at the same index as it goes, and then stores it; nothing else
/// reads the residual, so each of its elements is read before the output's element
/// over it is written. `materialised` holds the tensors stored so far, with their stages; `stage`
/// is stage number `s`.
fn in_place_residual(
    analysis: &Analysis<'_>,
    tensors: &HashMap<i64, TensorInfo>,
    checked: &CheckedChain,
    stage: &Stage,
    materialised: &[(i64, usize)],
    s: usize,
) -> Option<(i64, i64)> {
    if !matches!(
        checked.head,
        HeadOp::Convolution {
            pass: ConvPass::Forward,
            ..
        } | HeadOp::Matmul { .. }
    ) || stage.store.is_some()
    {
        return None;
    }
    let mut stores = stage
        .steps
        .iter()
        .enumerate()
        .filter(|(_, st)| st.store.is_some());
    let (at, y) = match (stores.next(), stores.next()) {
        (Some((at, st)), None) => (at, st.store?),
        _ => return None,
    };
    let born_before = |uid: i64| materialised.iter().any(|&(u, b)| u == uid && b < s);
    if !materialised.contains(&(y, s)) {
        return None;
    }
    let reads = |uid: i64| -> usize {
        checked
            .chain
            .nodes()
            .map(|n| {
                analysis
                    .index
                    .node_inputs(n)
                    .iter()
                    .filter(|&&u| u == uid)
                    .count()
            })
            .sum()
    };
    stage.steps[..=at]
        .iter()
        .flat_map(|st| st.others.iter().flatten())
        .find_map(|src| match *src {
            ValueSource::Tensor(r)
                if born_before(r)
                    && tensors[&r].shape == tensors[&y].shape
                    && tensors[&r].dtype == tensors[&y].dtype
                    && reads(r) == 1 =>
            {
                Some((y, r))
            }
            _ => None,
        })
}

/// The input whose memory order a stage's materialised tensors follow: the activation
/// a convolution or pooling reads, or an elementwise chain's first tensor.
fn layout_source(head: &HeadOp) -> Option<i64> {
    match head {
        HeadOp::Convolution {
            pass: ConvPass::Forward,
            x,
            ..
        }
        | HeadOp::Pool { x, .. } => Some(*x),
        HeadOp::Elementwise {
            init: ValueSource::Tensor(uid),
            ..
        } => Some(*uid),
        _ => None,
    }
}

/// `[1, C, 1, ...]` packed, in the rank of `dims`.
fn channel_shape(dims: &[usize], c: usize) -> Shape {
    let mut d = vec![1; dims.len()];
    d[1] = c;
    Shape::packed(&d)
}

/// The stage of a chain's head, its epilogue holding the head's own steps. `tensors`
/// are as placed by the stages before.
fn head_stage(
    analysis: &Analysis<'_>,
    tensors: &HashMap<i64, TensorInfo>,
    checked: &CheckedChain,
    settings: &CpuSettings,
    threads: usize,
    folds: &mut F32Arrays,
) -> Stage {
    let tensor = |uid: i64| &tensors[&uid];
    let dims = checked
        .chain
        .head_output
        .map_or_else(Vec::new, |uid| tensor(uid).shape.dims.clone());
    let mut stage = Stage {
        description: String::new(),
        head: checked.head.clone(),
        kernel: Kernel::Direct,
        dims,
        folds: Vec::new(),
        store: None,
        steps: Vec::new(),
        arrays: F32Arrays::default(),
        kernel_workspace: 0,
    };
    let (what, kernel) = match &checked.head {
        HeadOp::Convolution {
            pass: ConvPass::Forward,
            x,
            w,
            geometry,
            ..
        } => {
            let (x, w) = (tensor(*x), tensor(*w));
            let plan = FpropPlan::new(
                geometry.clone(),
                (&x.shape, x.dtype),
                (&w.shape, w.dtype),
                settings.conv_algo,
                threads,
            );
            // A channels-last input, and a caller's image stored channels-first (NCHW)
            // by the chain.
            let channels_first_out = x.shape.strides[1] == 1
                && checked.chain.stored.iter().any(|&uid| {
                    let t = tensor(uid);
                    let dims = &t.shape.dims;
                    t.placement == Placement::Host
                        && dims.len() >= 3
                        && dims[1] > 1
                        && dims[2..].iter().product::<usize>() > 1
                        && t.shape.strides[1] != 1
                });
            let plan = if channels_first_out {
                plan.for_channels_first_output()
            } else {
                plan
            };
            let plan = if settings.constant_weights {
                plan.for_constant_weights()
            } else {
                plan
            };
            stage.kernel_workspace = plan.workspace_len();
            let cache = settings
                .constant_weights
                .then(|| Arc::new(WeightCache::default()));
            let name = match plan.winograd_tile() {
                Some(m) if plan.geo.stride[1] == 2 => {
                    format!("conv Winograd F({m}×{m}, 3×3) stride 2")
                }
                Some(m) if plan.winograd_streamed() => {
                    format!("conv Winograd F({m}×{m}, 3×3) streamed")
                }
                Some(m) => format!("conv Winograd F({m}×{m}, 3×3)"),
                None => format!("conv {:?}", plan.imp),
            };
            (name, Kernel::Convolution(plan, cache))
        }
        HeadOp::Convolution { pass, geometry, .. } => {
            let algorithm = match settings.conv_algo {
                ConvAlgo::Direct => BwdImpl::Direct,
                _ => BwdImpl::Gemm,
            };
            let (what, workspace) = match pass {
                ConvPass::DataGradient => {
                    ("dgrad", conv_bwd::dgrad_workspace_len(geometry, algorithm))
                }
                _ => ("wgrad", conv_bwd::wgrad_workspace_len(geometry, algorithm)),
            };
            stage.kernel_workspace = workspace;
            let what = format!("{what} {algorithm:?}");
            (what, Kernel::ConvolutionGradient(algorithm))
        }
        HeadOp::Matmul { a, b } => {
            let (a, b) = (tensor(*a), tensor(*b));
            let plan = MatmulPlan::new(&a.shape.dims, &b.shape.dims, &stage.dims, a.dtype, threads)
                .expect("checked by the analysis");
            stage.kernel_workspace = plan.workspace_len();
            ("matmul".into(), Kernel::Matmul(plan))
        }
        HeadOp::GenIndex { .. } | HeadOp::Reduction { .. } => {
            let what = match checked.head {
                HeadOp::GenIndex { .. } => "gen_index",
                _ => "reduction",
            };
            let at = stage.arrays.reserve(stage.dims.iter().product());
            (what.into(), Kernel::Scratch(at))
        }
        HeadOp::Pool { x, .. } => {
            let channels_last = pool::is_channels_last(&tensor(*x).shape);
            let at = stage.arrays.reserve(stage.dims.iter().product());
            let what = if channels_last {
                "pool channels-last"
            } else {
                "pool"
            };
            (what.into(), Kernel::Pool { at, channels_last })
        }
        HeadOp::Elementwise { first, .. } => {
            stage.append(first, folds);
            ("elementwise".into(), Kernel::Direct)
        }
        HeadOp::BatchNormTraining(spec) => {
            let arrays = stage.scale_shift(channel_shape(&stage.dims, spec.channels));
            ("batchnorm training".into(), Kernel::Statistics(arrays))
        }
        HeadOp::BatchNormBackward(_) => ("batchnorm backward".into(), Kernel::Direct),
        HeadOp::Normalization(spec) => {
            let arrays = stage.scale_shift(Shape::packed(&spec.stats_dims(&stage.dims)));
            for (u, op) in [(spec.scale, PwOp::Mul), (spec.bias, PwOp::Add)] {
                if let Some(u) = u {
                    stage.steps.push(EpilogueStep {
                        op,
                        chain_input: 0,
                        others: [None, Some(analysis.source(u)), None],
                        store: None,
                    });
                }
            }
            let what = if spec.rms { "rmsnorm" } else { "layernorm" };
            (what.into(), Kernel::Statistics(arrays))
        }
    };
    (stage.description, stage.kernel) = (what, kernel);
    stage
}
