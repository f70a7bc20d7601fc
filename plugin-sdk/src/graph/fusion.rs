//! Fusable chains: a producer node and the pointwise or batch-norm-inference nodes that
//! consume its output, run as one kernel.
//!
//! [`partition`] walks a graph in topological order and cuts it into [`Chain`]s. Every
//! node is in exactly one chain. A chain starts at the first node not yet taken (its
//! *head*) and grows along the head's output (the *chain tensor*, see
//! [`FusionPolicy::chain_output`]): the next node is the first consumer of the current
//! chain tensor that
//!
//! * is a pointwise node reading the chain tensor in exactly one input slot, or a
//!   batch-norm inference node reading it as `x`;
//! * writes a tensor with the same dims as the head's chain tensor (the chain has one
//!   index space);
//! * reads nothing else that is not available when the chain starts (graph inputs,
//!   pass-by-value scalars and tensors of earlier chains are);
//! * and is accepted by the [`FusionPolicy`], where an engine says what its kernels
//!   can fuse.
//!
//! A chain tensor stays *virtual* (never stored) when the graph marks it virtual and
//! the next node of the chain is its only reader; otherwise the chain stores it.
//!
//! Chains are described in graph terms (nodes, uids, roles such as bias or residual
//! add), so a CPU engine turning them into GEMM epilogues and a GPU engine turning them
//! into fusion plans share the same matcher with different policies.

use std::collections::HashSet;

use hipdnn_flatbuffers_sdk::model::NodeAttributes;
use hipdnn_flatbuffers_sdk::wire::PointwiseMode;

use super::GraphIndex;

/// What kind of node heads a chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeadKind {
    /// A forward convolution.
    Convolution,
    /// A matmul.
    Matmul,
    /// A batch-norm inference node (either variant).
    BatchNormInference,
    /// A pointwise node.
    Pointwise,
    /// Anything else (gradients, normalizations, reductions, ...).
    Other,
}

impl HeadKind {
    /// The kind of `node`.
    pub fn of(node: &NodeAttributes) -> Self {
        match node {
            NodeAttributes::ConvolutionFwdAttributes(_) => Self::Convolution,
            NodeAttributes::MatmulAttributes(_) => Self::Matmul,
            NodeAttributes::BatchnormInferenceAttributes(_)
            | NodeAttributes::BatchnormInferenceAttributesVarianceExt(_) => {
                Self::BatchNormInference
            }
            NodeAttributes::PointwiseAttributes(_) => Self::Pointwise,
            _ => Self::Other,
        }
    }
}

/// What a node that extends a chain does to the chain's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepRole {
    /// `ADD` of a tensor that broadcasts to the chain's dims (fewer elements).
    Bias,
    /// A unary forward activation (see [`is_activation`]).
    Activation,
    /// `ADD` of a tensor with the chain's dims (a skip connection).
    Residual,
    /// Batch-norm inference: a per-channel scale and shift.
    BatchNormInference,
    /// Any other pointwise function.
    Pointwise,
}

/// One node appended to a chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainStep {
    /// The node's position.
    pub node: usize,
    /// The chain tensor it reads.
    pub input: i64,
    /// Which input slot reads it (`0`–`2` for pointwise `in_0`..`in_2`; `0` for a batch
    /// norm's `x`).
    pub slot: usize,
    /// The tensor it writes, the new chain tensor.
    pub output: i64,
    /// What it does.
    pub role: StepRole,
}

/// A maximal run of nodes that one kernel can compute, in graph terms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chain {
    /// The first node.
    pub head: usize,
    /// Its kind.
    pub head_kind: HeadKind,
    /// The head's output the chain grows along; `None` for heads without one (then the
    /// chain is the head alone).
    pub head_output: Option<i64>,
    /// The nodes after the head, in order.
    pub steps: Vec<ChainStep>,
    /// Chain tensors that are never stored: virtual, and read only by the next node of
    /// the chain.
    pub virtual_intermediates: Vec<i64>,
    /// Chain tensors the chain stores: non-virtual, or also read outside the chain (a
    /// virtual one of these needs scratch memory).
    pub stored: Vec<i64>,
    /// Tensors the chain's nodes read that no node of the chain writes, in order of
    /// first use, each once.
    pub inputs: Vec<i64>,
    /// Tensors the chain's nodes write that are visible outside it (stored chain tensors
    /// and the nodes' other outputs), in order.
    pub outputs: Vec<i64>,
}

impl Chain {
    /// The positions of the chain's nodes, head first.
    pub fn nodes(&self) -> impl Iterator<Item = usize> + '_ {
        std::iter::once(self.head).chain(self.steps.iter().map(|s| s.node))
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        1 + self.steps.len()
    }

    /// Always false: a chain has a head.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The chain tensors in order: the head's output, then each step's.
    pub fn chain_tensors(&self) -> impl Iterator<Item = i64> + '_ {
        self.head_output
            .into_iter()
            .chain(self.steps.iter().map(|s| s.output))
    }

    /// Whether the chain stores chain tensor `uid`.
    pub fn is_stored(&self, uid: i64) -> bool {
        self.stored.contains(&uid)
    }

    /// Which standard fusion pattern the chain is, if any.
    pub fn pattern(&self) -> ChainPattern {
        ChainPattern::classify(self.head_kind, self.steps.iter().map(|s| (s.node, s.role)))
    }
}

/// The fusion patterns GPU libraries commonly offer (and CPU epilogues cover).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChainPattern {
    /// A convolution or matmul, then optionally a bias add, an activation and a
    /// residual add, each at most once and in that order (node positions).
    BiasActivationResidual {
        /// The bias-add node.
        bias: Option<usize>,
        /// The activation node.
        activation: Option<usize>,
        /// The residual-add node.
        residual: Option<usize>,
    },
    /// A batch-norm inference, then optionally an activation.
    BatchNormActivation {
        /// The activation node.
        activation: Option<usize>,
    },
    /// Pointwise nodes only.
    Pointwise,
    /// Anything else (a lone non-pointwise head, or steps outside the patterns).
    Other,
}

impl ChainPattern {
    fn classify(head: HeadKind, steps: impl Iterator<Item = (usize, StepRole)>) -> Self {
        let mut steps = steps.peekable();
        match head {
            HeadKind::Convolution | HeadKind::Matmul => {
                let mut slots = [None; 3];
                let mut next = 0;
                for (node, role) in steps {
                    let at = match role {
                        StepRole::Bias => 0,
                        StepRole::Activation => 1,
                        StepRole::Residual => 2,
                        _ => return Self::Other,
                    };
                    if at < next {
                        return Self::Other;
                    }
                    slots[at] = Some(node);
                    next = at + 1;
                }
                Self::BiasActivationResidual {
                    bias: slots[0],
                    activation: slots[1],
                    residual: slots[2],
                }
            }
            HeadKind::BatchNormInference => match (steps.next(), steps.next()) {
                (None, _) => Self::BatchNormActivation { activation: None },
                (Some((node, StepRole::Activation)), None) => Self::BatchNormActivation {
                    activation: Some(node),
                },
                _ => Self::Other,
            },
            HeadKind::Pointwise => {
                if steps.all(|(_, role)| role != StepRole::BatchNormInference) {
                    Self::Pointwise
                } else {
                    Self::Other
                }
            }
            HeadKind::Other => Self::Other,
        }
    }
}

/// What an engine can fuse. [`partition`] proposes only steps the graph allows (see the
/// module docs); the policy vetoes those its kernels cannot run.
pub trait FusionPolicy {
    /// The output a chain headed by node `head` grows along; `None`: nothing fuses after
    /// it. The default is [`primary_output`].
    fn chain_output(&self, index: &GraphIndex<'_>, head: usize) -> Option<i64> {
        primary_output(&index.node(head).attributes)
    }

    /// Whether `step` may extend `chain` (which holds the steps accepted so far).
    fn accepts(&self, index: &GraphIndex<'_>, chain: &Chain, step: &ChainStep) -> bool;
}

/// Fuses whatever keeps a chain inside one of the [`ChainPattern`]s other than `Other`.
#[derive(Debug, Clone, Copy, Default)]
pub struct StandardPatterns;

impl FusionPolicy for StandardPatterns {
    fn accepts(&self, _: &GraphIndex<'_>, chain: &Chain, step: &ChainStep) -> bool {
        let roles = chain
            .steps
            .iter()
            .chain(std::iter::once(step))
            .map(|s| (s.node, s.role));
        ChainPattern::classify(chain.head_kind, roles) != ChainPattern::Other
    }
}

/// Fuses every step the graph allows: any pointwise or batch-norm inference after any
/// producer (an engine with general epilogues).
#[derive(Debug, Clone, Copy, Default)]
pub struct AnyEpilogue;

impl FusionPolicy for AnyEpilogue {
    fn accepts(&self, _: &GraphIndex<'_>, _: &Chain, _: &ChainStep) -> bool {
        true
    }
}

/// The output an epilogue would apply to: `y` of convolutions, batch norms and
/// normalizations, `dx`/`dw` of convolution gradients, `c` of a matmul, `out_0` of a
/// pointwise node, the output of a reduction; `None` for other operations (batch-norm
/// backward and its three gradients, attention, ...).
pub fn primary_output(node: &NodeAttributes) -> Option<i64> {
    use NodeAttributes as A;
    Some(match node {
        A::ConvolutionFwdAttributes(a) => a.y_tensor_uid,
        A::ConvolutionBwdAttributes(a) => a.dx_tensor_uid,
        A::ConvolutionWrwAttributes(a) => a.dw_tensor_uid,
        A::MatmulAttributes(a) => a.c_tensor_uid,
        A::PointwiseAttributes(a) => a.out_0_tensor_uid,
        A::BatchnormInferenceAttributes(a) => a.y_tensor_uid,
        A::BatchnormInferenceAttributesVarianceExt(a) => a.y_tensor_uid,
        A::BatchnormAttributes(a) => a.y_tensor_uid,
        A::LayernormAttributes(a) => a.y_tensor_uid,
        A::RMSNormAttributes(a) => a.y_tensor_uid,
        A::ReductionAttributes(a) => a.out_tensor_uid,
        _ => return None,
    })
}

/// Whether `mode` is a unary forward activation (ReLU, sigmoid, tanh, ELU, GELU and its
/// tanh approximation, swish, softplus).
pub fn is_activation(mode: PointwiseMode) -> bool {
    use PointwiseMode as M;
    matches!(
        mode,
        M::RELU_FWD
            | M::SIGMOID_FWD
            | M::TANH_FWD
            | M::ELU_FWD
            | M::GELU_FWD
            | M::GELU_APPROX_TANH_FWD
            | M::SWISH_FWD
            | M::SOFTPLUS_FWD
    )
}

/// Cuts the graph into chains under `policy`, in topological order of their heads.
///
/// ```
/// use hipdnn_frontend::samples;
/// use hipdnn_plugin_sdk::graph::{ChainPattern, GraphIndex, StandardPatterns, partition};
///
/// let graph = samples::conv_bias_relu();
/// let index = GraphIndex::new(&graph)?;
/// let chains = partition(&index, &StandardPatterns);
/// assert_eq!(chains.len(), 1);
/// let chain = &chains[0];
/// assert_eq!(chain.nodes().collect::<Vec<_>>(), [0, 1, 2]);
/// assert_eq!(
///     chain.pattern(),
///     ChainPattern::BiasActivationResidual { bias: Some(1), activation: Some(2), residual: None }
/// );
/// assert_eq!(chain.virtual_intermediates, [3, 5]); // conv_out, bias_out
/// assert_eq!((chain.inputs.as_slice(), chain.outputs.as_slice()), ([1, 2, 4].as_slice(), [6].as_slice()));
/// # Ok::<(), hipdnn_flatbuffers_sdk::GraphError>(())
/// ```
pub fn partition(index: &GraphIndex<'_>, policy: &dyn FusionPolicy) -> Vec<Chain> {
    let mut chain_of: Vec<Option<usize>> = vec![None; index.node_count()];
    let mut chains = Vec::new();
    for head in index.topological_order() {
        if chain_of[head].is_some() {
            continue;
        }
        let id = chains.len();
        chain_of[head] = Some(id);
        let head_output = policy.chain_output(index, head);
        let mut chain = Chain {
            head,
            head_kind: HeadKind::of(&index.node(head).attributes),
            head_output,
            steps: Vec::new(),
            virtual_intermediates: Vec::new(),
            stored: Vec::new(),
            inputs: Vec::new(),
            outputs: Vec::new(),
        };
        if let Some(mut current) = head_output {
            let dims = index.dims(current);
            loop {
                // Available when the chain starts: written by no node, or by an earlier
                // chain.
                let ready = |uid: i64| {
                    index
                        .producer(uid)
                        .is_none_or(|p| chain_of[p].is_some_and(|c| c < id))
                };
                let consumers = index.consumers(current);
                let next = consumers.iter().find_map(|&node| {
                    if chain_of[node].is_some() {
                        return None;
                    }
                    let step = candidate(index, current, node, dims, &ready)?;
                    policy.accepts(index, &chain, &step).then_some(step)
                });
                let only_reader = next.is_some() && consumers.len() == 1;
                if index.is_virtual(current) && (only_reader || consumers.is_empty()) {
                    chain.virtual_intermediates.push(current);
                } else {
                    chain.stored.push(current);
                }
                let Some(step) = next else { break };
                chain_of[step.node] = Some(id);
                current = step.output;
                chain.steps.push(step);
            }
        }
        describe_boundary(index, &mut chain);
        chains.push(chain);
    }
    chains
}

/// `node` as the next step after chain tensor `current`, if the graph allows it.
fn candidate(
    index: &GraphIndex<'_>,
    current: i64,
    node: usize,
    dims: &[usize],
    ready: &dyn Fn(i64) -> bool,
) -> Option<ChainStep> {
    let attributes = &index.node(node).attributes;
    let (slot, output, role) = match attributes {
        NodeAttributes::PointwiseAttributes(p) => {
            let slots = [
                Some(p.in_0_tensor_uid),
                p.in_1_tensor_uid,
                p.in_2_tensor_uid,
            ];
            let mut reading = (0..3).filter(|&k| slots[k] == Some(current));
            let slot = reading.next()?;
            if reading.next().is_some() {
                return None;
            }
            let others: Vec<i64> = (0..3)
                .filter(|&k| k != slot)
                .filter_map(|k| slots[k])
                .collect();
            let role = match (p.operation, others.as_slice()) {
                (mode, []) if is_activation(mode) => StepRole::Activation,
                (PointwiseMode::ADD, &[other]) if index.dims(other) == dims => StepRole::Residual,
                (PointwiseMode::ADD, &[other]) if index.numel(other) < index.numel(current) => {
                    StepRole::Bias
                }
                _ => StepRole::Pointwise,
            };
            (slot, p.out_0_tensor_uid, role)
        }
        NodeAttributes::BatchnormInferenceAttributes(a) if a.x_tensor_uid == current => {
            (0, a.y_tensor_uid, StepRole::BatchNormInference)
        }
        NodeAttributes::BatchnormInferenceAttributesVarianceExt(a) if a.x_tensor_uid == current => {
            (0, a.y_tensor_uid, StepRole::BatchNormInference)
        }
        _ => return None,
    };
    if index.dims(output) != dims
        || index
            .node_inputs(node)
            .iter()
            .any(|&uid| uid != current && !ready(uid))
    {
        return None;
    }
    Some(ChainStep {
        node,
        input: current,
        slot,
        output,
        role,
    })
}

/// Fills in a chain's external inputs and outputs.
fn describe_boundary(index: &GraphIndex<'_>, chain: &mut Chain) {
    let nodes: Vec<usize> = chain.nodes().collect();
    let written: HashSet<i64> = nodes
        .iter()
        .flat_map(|&n| index.node_outputs(n).iter().copied())
        .collect();
    let mut seen: HashSet<i64> = chain.virtual_intermediates.iter().copied().collect();
    for &node in &nodes {
        for &uid in index.node_inputs(node) {
            if !written.contains(&uid) && seen.insert(uid) {
                chain.inputs.push(uid);
            }
        }
    }
    for &node in &nodes {
        for &uid in index.node_outputs(node) {
            if seen.insert(uid) {
                chain.outputs.push(uid);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use hipdnn_data_sdk::DataType;
    use hipdnn_flatbuffers_sdk::model::{
        BatchnormInferenceAttributes, ConvolutionFwdAttributes, Graph, MatmulAttributes, Node,
        PointwiseAttributes, TensorAttributes,
    };
    use hipdnn_frontend::samples;

    use super::*;

    /// Builds graphs with packed `FLOAT` tensors.
    struct Build(Graph);

    impl Build {
        fn new() -> Self {
            Self(Graph {
                name: "g".into(),
                io_data_type: DataType::Float,
                intermediate_data_type: DataType::Float,
                compute_data_type: DataType::Float,
                ..Graph::default()
            })
        }

        fn tensor(&mut self, uid: i64, dims: &[i64], is_virtual: bool) -> &mut Self {
            let mut strides = vec![1; dims.len()];
            for d in (0..dims.len() - 1).rev() {
                strides[d] = strides[d + 1] * dims[d + 1];
            }
            self.0.tensors.push(TensorAttributes {
                uid,
                name: format!("t{uid}"),
                dims: dims.to_vec(),
                strides,
                is_virtual,
                ..TensorAttributes::default()
            });
            self
        }

        fn pointwise(
            &mut self,
            name: &str,
            mode: PointwiseMode,
            ins: &[i64],
            out: i64,
        ) -> &mut Self {
            self.0.nodes.push(Node::new(
                name,
                PointwiseAttributes {
                    operation: mode,
                    in_0_tensor_uid: ins[0],
                    in_1_tensor_uid: ins.get(1).copied(),
                    in_2_tensor_uid: ins.get(2).copied(),
                    out_0_tensor_uid: out,
                    ..PointwiseAttributes::default()
                },
            ));
            self
        }

        fn node(&mut self, name: &str, attributes: impl Into<NodeAttributes>) -> &mut Self {
            self.0.nodes.push(Node::new(name, attributes));
            self
        }
    }

    fn conv(x: i64, w: i64, y: i64) -> ConvolutionFwdAttributes {
        ConvolutionFwdAttributes {
            x_tensor_uid: x,
            w_tensor_uid: w,
            y_tensor_uid: y,
            pre_padding: vec![0, 0],
            post_padding: vec![0, 0],
            stride: vec![1, 1],
            dilation: vec![1, 1],
            ..ConvolutionFwdAttributes::default()
        }
    }

    fn nodes(chains: &[Chain]) -> Vec<Vec<usize>> {
        chains.iter().map(|c| c.nodes().collect()).collect()
    }

    /// conv → bias → relu → residual add (of the block input) → relu.
    fn residual_block() -> Graph {
        let mut b = Build::new();
        b.tensor(1, &[1, 4, 6, 6], false)
            .tensor(2, &[4, 4, 1, 1], false)
            .tensor(3, &[1, 4, 6, 6], true)
            .tensor(4, &[1, 4, 1, 1], false)
            .tensor(5, &[1, 4, 6, 6], true)
            .tensor(6, &[1, 4, 6, 6], true)
            .tensor(7, &[1, 4, 6, 6], true)
            .tensor(8, &[1, 4, 6, 6], false)
            .node("conv", conv(1, 2, 3))
            .pointwise("bias", PointwiseMode::ADD, &[3, 4], 5)
            .pointwise("relu", PointwiseMode::RELU_FWD, &[5], 6)
            .pointwise("skip", PointwiseMode::ADD, &[1, 6], 7)
            .pointwise("relu2", PointwiseMode::RELU_FWD, &[7], 8);
        b.0
    }

    #[test]
    fn conv_bias_activation_residual_under_both_policies() {
        let graph = residual_block();
        let index = GraphIndex::new(&graph).unwrap();
        let any = partition(&index, &AnyEpilogue);
        assert_eq!(nodes(&any), [vec![0, 1, 2, 3, 4]]);
        let chain = &any[0];
        assert_eq!(chain.pattern(), ChainPattern::Other);
        let roles: Vec<StepRole> = chain.steps.iter().map(|s| s.role).collect();
        use StepRole::*;
        assert_eq!(roles, [Bias, Activation, Residual, Activation]);
        // The residual add reads the chain value in slot 1.
        assert_eq!(chain.steps[2].slot, 1);
        assert_eq!(chain.virtual_intermediates, [3, 5, 6, 7]);
        assert_eq!(chain.stored, [8]);
        assert_eq!(chain.inputs, [1, 2, 4]);
        assert_eq!(chain.outputs, [8]);

        let standard = partition(&index, &StandardPatterns);
        assert_eq!(nodes(&standard), [vec![0, 1, 2, 3], vec![4]]);
        assert_eq!(
            standard[0].pattern(),
            ChainPattern::BiasActivationResidual {
                bias: Some(1),
                activation: Some(2),
                residual: Some(3)
            }
        );
        // The residual add's output is read by the next chain: stored, though virtual.
        assert_eq!(standard[0].stored, [7]);
        assert_eq!(standard[1].pattern(), ChainPattern::Pointwise);
        assert_eq!(standard[1].inputs, [7]);
    }

    #[test]
    fn a_tensor_read_twice_is_stored_and_the_chain_goes_on() {
        let mut b = Build::new();
        b.tensor(1, &[2, 8], false)
            .tensor(2, &[8, 8], false)
            .tensor(3, &[2, 8], true)
            .tensor(4, &[2, 8], true)
            .tensor(5, &[2, 8], false)
            .node(
                "mm",
                MatmulAttributes {
                    a_tensor_uid: 1,
                    b_tensor_uid: 2,
                    c_tensor_uid: 3,
                    ..MatmulAttributes::default()
                },
            )
            .pointwise("relu", PointwiseMode::RELU_FWD, &[3], 4)
            // Reads the matmul output again: not ready for the first chain.
            .pointwise("mul", PointwiseMode::MUL, &[4, 3], 5);
        let index = GraphIndex::new(&b.0).unwrap();
        let chains = partition(&index, &AnyEpilogue);
        // `mul` also reads `3`, which the chain being built writes: not available when
        // the chain starts, so `mul` starts the next chain; `3` is stored for it.
        assert_eq!(nodes(&chains), [vec![0, 1], vec![2]]);
        assert_eq!(chains[0].stored, [3, 4]);
        assert_eq!(chains[0].outputs, [3, 4]);
        assert_eq!(chains[1].inputs, [4, 3]);
    }

    #[test]
    fn batch_norm_then_activation_and_pointwise_chains() {
        let mut b = Build::new();
        b.tensor(1, &[1, 3, 4, 4], false);
        for uid in 2..=5 {
            b.tensor(uid, &[1, 3, 1, 1], false);
        }
        b.tensor(6, &[1, 3, 4, 4], true)
            .tensor(7, &[1, 3, 4, 4], false)
            .node(
                "bn",
                BatchnormInferenceAttributes {
                    x_tensor_uid: 1,
                    mean_tensor_uid: 2,
                    inv_variance_tensor_uid: 3,
                    scale_tensor_uid: 4,
                    bias_tensor_uid: 5,
                    y_tensor_uid: 6,
                },
            )
            .pointwise("relu", PointwiseMode::RELU_FWD, &[6], 7);
        let index = GraphIndex::new(&b.0).unwrap();
        let chains = partition(&index, &StandardPatterns);
        assert_eq!(nodes(&chains), [vec![0, 1]]);
        assert_eq!(
            chains[0].pattern(),
            ChainPattern::BatchNormActivation {
                activation: Some(1)
            }
        );
        assert_eq!(chains[0].inputs, [1, 2, 3, 4, 5]);

        let graph = samples::pointwise_chain(4);
        let index = GraphIndex::new(&graph).unwrap();
        let chains = partition(&index, &StandardPatterns);
        assert_eq!(nodes(&chains), [vec![0, 1, 2, 3]]);
        assert_eq!(chains[0].pattern(), ChainPattern::Pointwise);
        assert_eq!(chains[0].virtual_intermediates.len(), 3);
    }

    #[test]
    fn a_step_must_keep_the_index_space_and_pass_the_policy() {
        // A broadcasting add whose output is larger than the chain value does not fuse.
        let mut b = Build::new();
        b.tensor(1, &[1, 8], false)
            .tensor(2, &[4, 8], false)
            .tensor(3, &[1, 8], true)
            .tensor(4, &[4, 8], false)
            .pointwise("neg", PointwiseMode::NEG, &[1], 3)
            .pointwise("add", PointwiseMode::ADD, &[3, 2], 4);
        let index = GraphIndex::new(&b.0).unwrap();
        let chains = partition(&index, &AnyEpilogue);
        assert_eq!(nodes(&chains), [vec![0], vec![1]]);
        assert_eq!(chains[0].stored, [3]);

        struct NoSigmoid;
        impl FusionPolicy for NoSigmoid {
            fn accepts(&self, index: &GraphIndex<'_>, _: &Chain, step: &ChainStep) -> bool {
                !matches!(
                    &index.node(step.node).attributes,
                    NodeAttributes::PointwiseAttributes(p) if p.operation == PointwiseMode::SIGMOID_FWD
                )
            }
        }
        let graph = samples::pointwise_chain(4); // relu, tanh, sigmoid, relu
        let index = GraphIndex::new(&graph).unwrap();
        assert_eq!(
            nodes(&partition(&index, &NoSigmoid)),
            [vec![0, 1], vec![2, 3]]
        );
    }

    #[test]
    fn heads_without_a_primary_output_stand_alone() {
        assert_eq!(
            primary_output(&NodeAttributes::from(conv(1, 2, 3))),
            Some(3)
        );
        let bwd = hipdnn_flatbuffers_sdk::model::BatchnormBackwardAttributes::default();
        assert_eq!(primary_output(&NodeAttributes::from(bwd)), None);
        assert!(is_activation(PointwiseMode::RELU_FWD));
        assert!(!is_activation(PointwiseMode::RELU_BWD));
    }
}
