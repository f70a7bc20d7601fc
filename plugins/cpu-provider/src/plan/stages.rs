//! From checked chains to stages: each chain becomes one stage, a producer kernel with
//! the rest of the chain as its epilogue. Here the engine picks kernel implementations
//! and lays out memory; everything about the graph was settled by the analysis.

use std::collections::HashMap;

use super::CpuSettings;
use super::analysis::{Analysis, CheckedChain, TensorInfo};
use super::ops::{BatchNormInference, ConvPass, EpilogueOp, HeadOp, ValueSource};
use super::workspace::{Placement, StageArrays, WorkspaceLayout};
use crate::kernels::conv::{ConvAlgo, FpropPlan};
use crate::kernels::conv_bwd::{self, BwdImpl};
use crate::kernels::exec::Exec;
use crate::kernels::matmul::MatmulPlan;
use crate::kernels::pointwise::PwOp;
use crate::tensor::{DType, Shape};

/// One pointwise step of a stage's epilogue, with operands still by uid.
#[derive(Debug, Clone)]
pub(super) struct EpilogueStep {
    pub op: PwOp,
    /// Which input slot reads the running value.
    pub chain_input: usize,
    pub others: [Option<ValueSource>; 3],
    /// The tensor to store the step's result to, if any.
    pub store: Option<i64>,
}

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
        EpilogueStep {
            op: PwOp::ScaleShift,
            chain_input: 0,
            others: [
                None,
                Some(ValueSource::Scratch {
                    offset: self.scale_at,
                    shape: shape.clone(),
                }),
                Some(ValueSource::Scratch {
                    offset: self.shift_at,
                    shape,
                }),
            ],
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
    /// The values of a tensor or scalar (pointwise and batch-norm inference heads)
    /// through the epilogue.
    Elementwise {
        init: ValueSource,
    },
    Convolution(FpropPlan),
    /// Data or filter gradient.
    ConvolutionGradient(BwdImpl),
    Matmul(MatmulPlan),
    /// Batch-norm training and normalizations: statistics into these arrays, then `x`
    /// through the epilogue.
    Statistics(ScaleShift),
    /// Batch-norm backward: writes its three outputs itself.
    BatchNormBackward,
    /// Generated indices or a reduction, densely into the scratch at this offset, then
    /// through the epilogue.
    Scratch(usize),
}

impl Stage {
    /// Workspace of the head's kernel, in `f32` elements.
    fn kernel_workspace(&self) -> usize {
        match (&self.head, &self.kernel) {
            (_, Kernel::Convolution(plan)) => plan.workspace_len(),
            (_, Kernel::Matmul(plan)) => plan.workspace_len(),
            (HeadOp::Convolution { pass, geometry, .. }, Kernel::ConvolutionGradient(a)) => {
                if *pass == ConvPass::DataGradient {
                    conv_bwd::dgrad_workspace_len(geometry, *a)
                } else {
                    conv_bwd::wgrad_workspace_len(geometry, *a)
                }
            }
            _ => 0,
        }
    }

    /// Every tensor the stage writes.
    pub fn outputs(&self, outs: &mut Vec<i64>) {
        outs.extend(self.epilogue.store);
        outs.extend(self.epilogue.steps.iter().filter_map(|s| s.store));
        match &self.head {
            HeadOp::BatchNormTraining(spec) => {
                let n = &spec.node;
                outs.extend(
                    [
                        n.mean_tensor_uid,
                        n.inv_variance_tensor_uid,
                        n.next_running_mean_tensor_uid,
                        n.next_running_variance_tensor_uid,
                    ]
                    .into_iter()
                    .flatten(),
                );
            }
            HeadOp::BatchNormBackward(b) => {
                outs.extend([b.dx_tensor_uid, b.dscale_tensor_uid, b.dbias_tensor_uid]);
            }
            HeadOp::Normalization(spec) => {
                outs.extend([spec.mean_out, spec.inv_out].into_iter().flatten());
            }
            _ => {}
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
            (_, Kernel::Matmul(_)) => "matmul".into(),
            (_, Kernel::Elementwise { .. }) => "elementwise".into(),
            (HeadOp::BatchNormTraining(_), _) => "batchnorm training".into(),
            (HeadOp::BatchNormBackward(_), _) => "batchnorm backward".into(),
            (HeadOp::Normalization(n), _) => if n.rms { "rmsnorm" } else { "layernorm" }.into(),
            (HeadOp::Reduction { .. }, _) => "reduction".into(),
            _ => "gen_index".into(),
        };
        format!("{what}: {}", self.nodes.join(" -> "))
    }
}

/// One fused kernel: a head and its epilogue over one index space.
#[derive(Debug, Clone)]
pub(super) struct Stage {
    /// Names of the nodes it runs, head first.
    pub nodes: Vec<String>,
    pub head: HeadOp,
    pub kernel: Kernel,
    /// The index space (the dims of the head's output).
    pub dims: Vec<usize>,
    /// Batch norms folded into scale-and-shift arrays before the head runs.
    pub folds: Vec<BatchNormFold>,
    pub epilogue: EpilogueSpec,
    /// Bytes of `f32` arrays at the start of the stage's scratch.
    pub arrays: usize,
    /// `f32` elements of kernel workspace after the arrays.
    pub kernel_workspace: usize,
}

/// The stages of a plan, the tensors as placed, and the workspace layout.
pub(super) struct Stages {
    pub stages: Vec<Stage>,
    pub tensors: HashMap<i64, TensorInfo>,
    pub layout: WorkspaceLayout,
}

/// Builds the stages of an analysed graph.
pub(super) fn build(analysis: &Analysis<'_>, settings: &CpuSettings) -> Stages {
    let Analysis {
        index,
        tensors,
        chains,
    } = analysis;
    let mut tensors = tensors.clone();
    let threads = Exec::new(settings.threads).threads();
    let mut layout = WorkspaceLayout::default();
    let mut stages = Vec::with_capacity(chains.len());
    for chain in chains {
        let builder = StageBuilder {
            tensors: &tensors,
            algo: settings.conv_algo,
            threads,
        };
        let mut stage = builder.stage(chain);
        stage.nodes = chain
            .chain
            .nodes()
            .map(|n| index.node(n).name.clone())
            .collect();
        // Store each chain tensor the chain must store, after the step that computes it.
        let mut chain_steps = chain.steps.iter();
        for uid in chain.chain.chain_tensors() {
            if chain.chain.is_stored(uid) {
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
            if let Some(op) = chain_steps.next() {
                append_epilogue_op(&tensors, &mut stage, op);
            }
        }
        layout.stage_scratch(stage.arrays, stage.kernel_workspace);
        stages.push(stage);
    }
    Stages {
        stages,
        tensors,
        layout,
    }
}

/// Appends an epilogue operation of the chain to `stage`.
fn append_epilogue_op(tensors: &HashMap<i64, TensorInfo>, stage: &mut Stage, op: &EpilogueOp) {
    let mut arrays = StageArrays::resume(stage.arrays);
    match op {
        EpilogueOp::Pointwise { op, chain_input } => {
            let mut others = op.inputs.map(|u| u.map(|u| source(tensors, u)));
            others[*chain_input] = None;
            stage.epilogue.steps.push(EpilogueStep {
                op: op.op,
                chain_input: *chain_input,
                others,
                store: None,
            });
        }
        EpilogueOp::BatchNormInference(bn) => {
            let fold = BatchNormFold {
                bn: bn.clone(),
                arrays: ScaleShift::reserve(&mut arrays, bn.channels),
            };
            stage
                .epilogue
                .steps
                .push(fold.arrays.step(channel_shape(&stage.dims, bn.channels)));
            stage.folds.push(fold);
        }
    }
    stage.arrays = arrays.bytes();
}

/// The source of `uid`'s values as an operand.
fn source(tensors: &HashMap<i64, TensorInfo>, uid: i64) -> ValueSource {
    match tensors[&uid].placement {
        Placement::Constant(v) => ValueSource::Constant(v),
        _ => ValueSource::Tensor(uid),
    }
}

/// `[1, C, 1, ...]` packed, in the rank of `dims`.
fn channel_shape(dims: &[usize], c: usize) -> Shape {
    let mut d = vec![1; dims.len()];
    d[1] = c;
    Shape::packed(&d)
}

/// Builds the stage of one chain's head.
struct StageBuilder<'a> {
    tensors: &'a HashMap<i64, TensorInfo>,
    algo: ConvAlgo,
    threads: usize,
}

impl StageBuilder<'_> {
    fn tensor(&self, uid: i64) -> &TensorInfo {
        &self.tensors[&uid]
    }

    fn dims(&self, uid: i64) -> Vec<usize> {
        self.tensor(uid).shape.dims.clone()
    }

    /// The stage of `chain`'s head, its epilogue holding the head's own steps.
    fn stage(&self, chain: &CheckedChain) -> Stage {
        let mut arrays = StageArrays::default();
        let mut steps = Vec::new();
        let mut head_step = None;
        let (kernel, dims) = match &chain.head {
            HeadOp::Convolution {
                pass: ConvPass::Forward,
                x,
                w,
                y,
                geometry,
            } => {
                let (xt, wt) = (self.tensor(*x), self.tensor(*w));
                let plan = FpropPlan::new(
                    geometry.clone(),
                    (&xt.shape, xt.dtype),
                    (&wt.shape, wt.dtype),
                    self.algo,
                    self.threads,
                );
                (Kernel::Convolution(plan), self.dims(*y))
            }
            HeadOp::Convolution { pass, x, w, .. } => {
                let algorithm = if self.algo == ConvAlgo::Direct {
                    BwdImpl::Direct
                } else {
                    BwdImpl::Gemm
                };
                let out = if *pass == ConvPass::DataGradient {
                    x
                } else {
                    w
                };
                (Kernel::ConvolutionGradient(algorithm), self.dims(*out))
            }
            HeadOp::Matmul { a, b, c } => {
                let plan = MatmulPlan::new(
                    &self.dims(*a),
                    &self.dims(*b),
                    &self.dims(*c),
                    self.tensor(*a).dtype,
                    self.threads,
                )
                .expect("checked by the analysis");
                (Kernel::Matmul(plan), self.dims(*c))
            }
            HeadOp::GenIndex { output: out, .. } | HeadOp::Reduction { y: out, .. } => {
                let d = self.dims(*out);
                (Kernel::Scratch(arrays.reserve(d.iter().product())), d)
            }
            // The node's function is the first epilogue step, on its (first) input.
            HeadOp::Pointwise(op) => {
                let init = source(self.tensors, op.inputs[0].expect("in_0 is always given"));
                head_step = Some(EpilogueOp::Pointwise {
                    op: op.clone(),
                    chain_input: 0,
                });
                (Kernel::Elementwise { init }, self.dims(op.output))
            }
            HeadOp::BatchNormInference(bn) => {
                let init = ValueSource::Tensor(bn.x);
                head_step = Some(EpilogueOp::BatchNormInference(bn.clone()));
                (Kernel::Elementwise { init }, self.dims(bn.y))
            }
            HeadOp::BatchNormTraining(spec) => {
                let xd = self.dims(spec.node.x_tensor_uid);
                let scale_shift = ScaleShift::reserve(&mut arrays, spec.channels);
                steps.push(scale_shift.step(channel_shape(&xd, spec.channels)));
                (Kernel::Statistics(scale_shift), xd)
            }
            HeadOp::BatchNormBackward(spec) => {
                (Kernel::BatchNormBackward, self.dims(spec.x_tensor_uid))
            }
            HeadOp::Normalization(spec) => {
                let xd = self.dims(spec.x);
                let stats_dims = spec.stats_dims(&xd);
                let scale_shift = ScaleShift::reserve(&mut arrays, stats_dims.iter().product());
                steps.push(scale_shift.step(Shape::packed(&stats_dims)));
                for (u, op) in [(spec.scale, PwOp::Mul), (spec.bias, PwOp::Add)] {
                    if let Some(u) = u {
                        steps.push(EpilogueStep {
                            op,
                            chain_input: 0,
                            others: [None, Some(source(self.tensors, u)), None],
                            store: None,
                        });
                    }
                }
                (Kernel::Statistics(scale_shift), xd)
            }
        };
        let mut stage = Stage {
            nodes: Vec::new(),
            head: chain.head.clone(),
            kernel,
            dims,
            folds: Vec::new(),
            epilogue: EpilogueSpec { store: None, steps },
            arrays: arrays.bytes(),
            kernel_workspace: 0,
        };
        if let Some(op) = head_step {
            append_epilogue_op(self.tensors, &mut stage, &op);
        }
        stage.kernel_workspace = stage.kernel_workspace();
        stage
    }
}
