//! From checked chains to stages: each chain becomes one stage, a producer kernel with
//! the rest of the chain as its epilogue. Here the engine picks kernel implementations
//! and lays out memory; everything about the graph was settled by the analysis.

use std::collections::HashMap;

use super::analysis::{Analysis, CheckedChain, TensorInfo};
use super::ops::{BatchNormInference, ConvPass, EpilogueOp, EpilogueStep, HeadOp, ValueSource};
use super::workspace::{Placement, StageArrays, WorkspaceLayout};
use super::{CpuSettings, Plan};
use crate::kernels::conv::{ConvAlgo, FpropPlan};
use crate::kernels::conv_bwd::{self, BwdImpl};
use crate::kernels::exec::Exec;
use crate::kernels::matmul::MatmulPlan;
use crate::kernels::pointwise::PwOp;
use crate::tensor::{DType, Shape};

/// What a stage does with its producer's values.
#[derive(Debug, Clone, Default)]
pub(super) struct EpilogueSpec {
    /// Store of the producer's value itself.
    pub store: Option<i64>,
    pub steps: Vec<EpilogueStep>,
}

/// Scratch offsets of two `f32` arrays `a`, `b` with which a stage computes `x·a + b`
/// (per channel or per row).
#[derive(Debug, Clone, Copy)]
pub(super) struct ScaleShift {
    pub scale_at: usize,
    pub shift_at: usize,
}

impl ScaleShift {
    fn reserve(arrays: &mut StageArrays, elems: usize) -> Self {
        Self {
            scale_at: arrays.reserve(elems),
            shift_at: arrays.reserve(elems),
        }
    }

    /// The epilogue step applying it; `shape` is the arrays' shape.
    fn step(self, shape: Shape) -> EpilogueStep {
        let array = |offset| {
            let shape = shape.clone();
            Some(ValueSource::Scratch { offset, shape })
        };
        EpilogueStep {
            op: PwOp::ScaleShift,
            chain_input: 0,
            others: [None, array(self.scale_at), array(self.shift_at)],
            store: None,
        }
    }
}

/// A batch-norm inference folded into a scale and shift computed before the stage runs.
#[derive(Debug, Clone)]
pub(super) struct BatchNormFold {
    pub bn: BatchNormInference,
    pub arrays: ScaleShift,
}

/// What plan building chose to run a stage's head with.
#[derive(Debug, Clone)]
pub(super) enum Kernel {
    /// Nothing to choose: an elementwise head is its epilogue, batch-norm backward
    /// writes its three outputs itself.
    Direct,
    Convolution(FpropPlan),
    /// Data or filter gradient.
    ConvolutionGradient(BwdImpl),
    Matmul(MatmulPlan),
    /// Batch-norm training and normalizations: statistics into these arrays, then `x`
    /// through the epilogue.
    Statistics(ScaleShift),
    /// Generated indices or a reduction, densely into the scratch at this offset, then
    /// through the epilogue.
    Scratch(usize),
}

/// One fused kernel: a head and its epilogue over one index space.
#[derive(Debug, Clone)]
pub(super) struct Stage {
    /// Names of the nodes it runs, head first.
    pub nodes: Vec<String>,
    pub head: HeadOp,
    pub kernel: Kernel,
    /// The index space (the dims of the head's output; none for batch-norm backward).
    pub dims: Vec<usize>,
    /// Batch norms folded into scale-and-shift arrays before the head runs.
    pub folds: Vec<BatchNormFold>,
    pub epilogue: EpilogueSpec,
    /// The `f32` arrays at the start of the stage's scratch.
    pub arrays: StageArrays,
    /// `f32` elements of kernel workspace after the arrays.
    pub kernel_workspace: usize,
}

impl Stage {
    /// Appends an operation of the chain to the epilogue.
    fn append(&mut self, op: &EpilogueOp) {
        match op {
            EpilogueOp::Pointwise(step) => self.epilogue.steps.push(step.clone()),
            EpilogueOp::BatchNormInference(bn) => {
                let arrays = ScaleShift::reserve(&mut self.arrays, bn.channels);
                let shape = channel_shape(&self.dims, bn.channels);
                self.epilogue.steps.push(arrays.step(shape));
                self.folds.push(BatchNormFold {
                    bn: bn.clone(),
                    arrays,
                });
            }
        }
    }

    /// What the stage runs (diagnostics).
    pub fn describe(&self) -> String {
        let what = match (&self.head, &self.kernel) {
            (_, Kernel::Convolution(plan)) => format!("conv {:?}", plan.imp),
            (HeadOp::Convolution { pass, .. }, Kernel::ConvolutionGradient(a))
                if *pass == ConvPass::DataGradient =>
            {
                format!("dgrad {a:?}")
            }
            (_, Kernel::ConvolutionGradient(a)) => format!("wgrad {a:?}"),
            (HeadOp::Matmul { .. }, _) => "matmul".into(),
            (HeadOp::Elementwise { .. }, _) => "elementwise".into(),
            (HeadOp::BatchNormTraining(_), _) => "batchnorm training".into(),
            (HeadOp::BatchNormBackward(_), _) => "batchnorm backward".into(),
            (HeadOp::Normalization(n), _) => if n.rms { "rmsnorm" } else { "layernorm" }.into(),
            (HeadOp::Reduction { .. }, _) => "reduction".into(),
            _ => "gen_index".into(),
        };
        format!("{what}: {}", self.nodes.join(" -> "))
    }
}

/// Builds the plan of an analysed graph under `settings`.
pub(super) fn build(analysis: &Analysis<'_>, settings: &CpuSettings) -> Plan {
    let mut tensors = analysis.tensors.clone();
    let exec = Exec::new(settings.threads);
    let mut layout = WorkspaceLayout::default();
    let mut stages = Vec::with_capacity(analysis.chains.len());
    let mut outputs = Vec::new();
    for checked in &analysis.chains {
        let chain = &checked.chain;
        let mut stage = head_stage(analysis, &tensors, checked, settings, exec.threads());
        stage.nodes = chain
            .nodes()
            .map(|n| analysis.node_name(n).to_owned())
            .collect();
        // Store each chain tensor the chain must store, after the operation that
        // computes it.
        let mut ops = checked.steps.iter();
        for uid in chain.chain_tensors() {
            if chain.is_stored(uid) {
                let t = tensors.get_mut(&uid).expect("a declared tensor");
                if t.placement == Placement::Virtual {
                    t.dtype = DType::F32;
                    t.shape = Shape::packed(&t.shape.dims);
                    t.placement = Placement::Workspace(layout.materialise(t.shape.numel()));
                }
                match stage.epilogue.steps.last_mut() {
                    Some(s) => s.store = Some(uid),
                    None => stage.epilogue.store = Some(uid),
                }
            }
            if let Some(op) = ops.next() {
                stage.append(op);
            }
        }
        layout.stage_scratch(stage.arrays.bytes(), stage.kernel_workspace);
        outputs.extend(&chain.outputs);
        stages.push(stage);
    }
    Plan {
        tensors,
        stages,
        outputs,
        scratch_at: layout.scratch_at(),
        workspace: layout.size(),
        exec,
        settings: settings.clone(),
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
) -> Stage {
    let tensor = |uid: i64| &tensors[&uid];
    let dims = checked
        .chain
        .head_output
        .map_or_else(Vec::new, |uid| tensor(uid).shape.dims.clone());
    let mut stage = Stage {
        nodes: Vec::new(),
        head: checked.head.clone(),
        kernel: Kernel::Direct,
        dims,
        folds: Vec::new(),
        epilogue: EpilogueSpec::default(),
        arrays: StageArrays::default(),
        kernel_workspace: 0,
    };
    let kernel = match &checked.head {
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
            stage.kernel_workspace = plan.workspace_len();
            Kernel::Convolution(plan)
        }
        HeadOp::Convolution { pass, geometry, .. } => {
            let algorithm = match settings.conv_algo {
                ConvAlgo::Direct => BwdImpl::Direct,
                _ => BwdImpl::Gemm,
            };
            stage.kernel_workspace = match pass {
                ConvPass::DataGradient => conv_bwd::dgrad_workspace_len(geometry, algorithm),
                _ => conv_bwd::wgrad_workspace_len(geometry, algorithm),
            };
            Kernel::ConvolutionGradient(algorithm)
        }
        HeadOp::Matmul { a, b, c } => {
            let dims = |uid| &tensor(uid).shape.dims;
            let plan = MatmulPlan::new(dims(*a), dims(*b), dims(*c), tensor(*a).dtype, threads)
                .expect("checked by the analysis");
            stage.kernel_workspace = plan.workspace_len();
            Kernel::Matmul(plan)
        }
        HeadOp::GenIndex { .. } | HeadOp::Reduction { .. } => {
            Kernel::Scratch(stage.arrays.reserve(stage.dims.iter().product()))
        }
        HeadOp::Elementwise { first, .. } => {
            stage.append(first);
            Kernel::Direct
        }
        HeadOp::BatchNormTraining(spec) => {
            let arrays = ScaleShift::reserve(&mut stage.arrays, spec.channels);
            let shape = channel_shape(&stage.dims, spec.channels);
            stage.epilogue.steps.push(arrays.step(shape));
            Kernel::Statistics(arrays)
        }
        HeadOp::BatchNormBackward(_) => Kernel::Direct,
        HeadOp::Normalization(spec) => {
            let stats_dims = spec.stats_dims(&stage.dims);
            let arrays = ScaleShift::reserve(&mut stage.arrays, stats_dims.iter().product());
            stage
                .epilogue
                .steps
                .push(arrays.step(Shape::packed(&stats_dims)));
            for (u, op) in [(spec.scale, PwOp::Mul), (spec.bias, PwOp::Add)] {
                if let Some(u) = u {
                    stage.epilogue.steps.push(EpilogueStep {
                        op,
                        chain_input: 0,
                        others: [None, Some(analysis.source(u)), None],
                        store: None,
                    });
                }
            }
            Kernel::Statistics(arrays)
        }
    };
    stage.kernel = kernel;
    stage
}
