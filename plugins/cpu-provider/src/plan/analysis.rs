//! Applicability: which graphs CPU_ENGINE runs, decided without planning any kernel.
//!
//! The analysis indexes the graph, checks every tensor (type, storage) and node
//! (compute type), cuts the graph into fusable chains and checks each chain's nodes
//! ([`super::ops`]). What it returns is all that plan building needs about the graph;
//! the cheap applicability check is this analysis and nothing more.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};

use hipdnn_data_sdk::DataType;
use hipdnn_flatbuffers_sdk::TensorValue;
use hipdnn_flatbuffers_sdk::model::{Graph, NodeAttributes};
use hipdnn_flatbuffers_sdk::wire::PointwiseMode;
use hipdnn_plugin_sdk::graph::{
    Chain, ChainStep, FusionPolicy, GraphIndex, partition, primary_output,
};

use super::ops::{self, EpilogueOp, HeadOp, ValueSource};
use super::workspace::Placement;
use crate::tensor::{DType, Shape};

/// What execution needs to know about a tensor.
#[derive(Debug, Clone)]
pub(super) struct TensorInfo {
    pub name: String,
    pub dtype: DType,
    pub shape: Shape,
    pub placement: Placement,
}

/// A chain of nodes with every node checked: the head's operation and the operations of
/// the chain's steps, in order.
#[derive(Debug, Clone)]
pub(super) struct CheckedChain {
    pub chain: Chain,
    pub head: HeadOp,
    pub steps: Vec<EpilogueOp>,
}

/// A graph CPU_ENGINE runs, as far as plan building needs to know it.
#[derive(Debug)]
pub(super) struct Analysis<'g> {
    pub index: GraphIndex<'g>,
    pub tensors: HashMap<i64, TensorInfo>,
    /// Virtual tensors laid out channels-last when stored ([`channels_last_virtuals`]).
    pub channels_last: HashSet<i64>,
    pub chains: Vec<CheckedChain>,
}

impl<'g> Analysis<'g> {
    /// Analyses `graph` (validated, nodes in topological order).
    ///
    /// # Errors
    /// Why CPU_ENGINE cannot run the graph, naming the node or tensor.
    pub fn new(graph: &'g Graph) -> Result<Self, String> {
        let index = GraphIndex::new(graph).map_err(|e| e.to_string())?;
        let mut tensors = HashMap::with_capacity(graph.tensors.len());
        for t in &graph.tensors {
            tensors.insert(t.uid, tensor_info(&index, t.uid)?);
        }
        let channels_last = if channels_last_wanted() {
            channels_last_virtuals(&index, &tensors)
        } else {
            HashSet::new()
        };
        for node in index.topological_order() {
            let compute = index.compute_data_type(node);
            if !matches!(compute, DataType::Unset | DataType::Float) {
                return Err(format!(
                    "node \"{}\" asks for compute type {}; CPU_ENGINE computes in FLOAT",
                    index.node(node).name,
                    compute.name()
                ));
            }
        }
        let mut analysis = Self {
            index,
            tensors,
            channels_last,
            chains: Vec::new(),
        };
        let policy = CpuFusion {
            graph: &analysis,
            accepted: RefCell::default(),
        };
        let mut chains = Vec::new();
        for chain in partition(&analysis.index, &policy) {
            let head = ops::check_head(&analysis, chain.head)?;
            let mut accepted = policy.accepted.borrow_mut();
            let steps = chain
                .steps
                .iter()
                .map(|step| accepted.remove(&step.node).expect("accepted by the policy"))
                .collect();
            chains.push(CheckedChain { chain, head, steps });
        }
        analysis.chains = chains;
        Ok(analysis)
    }

    pub fn tensor(&self, uid: i64) -> &TensorInfo {
        &self.tensors[&uid]
    }

    pub fn dims(&self, uid: i64) -> &[usize] {
        self.index.dims(uid)
    }

    pub fn node_name(&self, node: usize) -> &str {
        &self.index.node(node).name
    }

    /// The source of `uid`'s values as an operand.
    pub fn source(&self, uid: i64) -> ValueSource {
        match self.tensor(uid).placement {
            Placement::Constant(v) => ValueSource::Constant(v),
            _ => ValueSource::Tensor(uid),
        }
    }
}

/// What CPU epilogues fuse: any pointwise op or batch-norm inference the kernels run,
/// after any producer. Keeps what it checked for the steps it accepts.
struct CpuFusion<'a, 'g> {
    graph: &'a Analysis<'g>,
    accepted: RefCell<HashMap<usize, EpilogueOp>>,
}

impl FusionPolicy for CpuFusion<'_, '_> {
    /// The SDK's primary outputs, and a pooling's `y` (pooling heads epilogues here).
    fn chain_output(&self, index: &GraphIndex<'_>, head: usize) -> Option<i64> {
        match &index.node(head).attributes {
            NodeAttributes::ResampleFwdAttributes(a) => Some(a.y_tensor_uid),
            other => primary_output(other),
        }
    }

    fn accepts(&self, _: &GraphIndex<'_>, _: &Chain, step: &ChainStep) -> bool {
        let Ok(op) = ops::check_step(self.graph, step) else {
            return false;
        };
        self.accepted.borrow_mut().insert(step.node, op);
        true
    }
}

/// Whether virtual images declared channels-first are laid out channels-last
/// ([`channels_last_virtuals`]): unless `HIPDNN_CPU_CHANNELS_LAST=0`, read once per
/// process.
fn channels_last_wanted() -> bool {
    static WANTED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *WANTED.get_or_init(|| crate::kernels::env_switch("HIPDNN_CPU_CHANNELS_LAST", || true))
}

/// How a node uses the images among its tensors ([`image_operands`]).
enum ImageUse {
    /// Element by element: its images are one group, stored alike.
    Elementwise,
    /// A convolution or a pooling, and the input it reads faster channels-last (none
    /// for a depthwise convolution): its input and output lie in groups of their own.
    Spatial(Option<i64>),
}

/// The tensors a node reads or writes as images (`[N, C, spatial...]`) through their
/// strides, whatever their layout, with the same values either way, and how: a
/// forward convolution's input and output (not its filters; the input read faster
/// channels-last where a group has at least 8 channels, as the indirect GEMM and
/// Winograd read it), a pooling's input and output (without an index output; the
/// input read faster channels-last), every operand of a pointwise operation (but
/// generating an index), a batch-norm inference's input and output (not its
/// per-channel arrays). `None` for any other node.
fn image_operands(index: &GraphIndex<'_>, node: &NodeAttributes) -> Option<(Vec<i64>, ImageUse)> {
    match node {
        NodeAttributes::ConvolutionFwdAttributes(a) => {
            let group_channels = index.dims(a.w_tensor_uid).get(1).copied().unwrap_or(0);
            let read = (group_channels >= 8).then_some(a.x_tensor_uid);
            Some((
                vec![a.x_tensor_uid, a.y_tensor_uid],
                ImageUse::Spatial(read),
            ))
        }
        NodeAttributes::ResampleFwdAttributes(a) if a.index_tensor_uid.is_none() => {
            let read = Some(a.x_tensor_uid);
            Some((
                vec![a.x_tensor_uid, a.y_tensor_uid],
                ImageUse::Spatial(read),
            ))
        }
        NodeAttributes::PointwiseAttributes(p) if p.operation != PointwiseMode::GEN_INDEX => {
            let mut uids = vec![p.in_0_tensor_uid, p.out_0_tensor_uid];
            uids.extend(p.in_1_tensor_uid);
            uids.extend(p.in_2_tensor_uid);
            Some((uids, ImageUse::Elementwise))
        }
        NodeAttributes::BatchnormInferenceAttributes(a) => {
            Some((vec![a.x_tensor_uid, a.y_tensor_uid], ImageUse::Elementwise))
        }
        NodeAttributes::BatchnormInferenceAttributesVarianceExt(a) => {
            Some((vec![a.x_tensor_uid, a.y_tensor_uid], ImageUse::Elementwise))
        }
        _ => None,
    }
}

/// The virtual tensors stored channels-last whatever their declared strides: images
/// of rank 4 or 5 with more than one channel and more than one pixel that no node
/// reads or writes but as an image ([`image_operands`]), joined through pointwise and
/// batch-norm nodes to an input of a convolution (of at least 8 channels a group) or
/// a pooling (that input itself, a chain's output it adds or computes, a
/// convolution's output that chain starts from).
///
/// A virtual tensor's layout is the engine's to choose: no caller reads or writes it.
/// Channels-last is the layout the engine's convolutions run fastest in (the indirect
/// GEMM, Winograd, channels-last pooling and the epilogues applied to the GEMM's tiles
/// all need it), so a channels-first network (NCHW) runs its activations as a
/// channels-last one does; only its own inputs and outputs stay as declared. Other
/// stored virtual tensors take the memory order of their stage's input
/// (`stages.rs`): where no convolution or pooling reads them channels-last would only
/// transpose.
fn channels_last_virtuals(
    index: &GraphIndex<'_>,
    tensors: &HashMap<i64, TensorInfo>,
) -> HashSet<i64> {
    let operands: Vec<Option<(Vec<i64>, ImageUse)>> = index
        .topological_order()
        .map(|n| image_operands(index, &index.node(n).attributes))
        .collect();
    let as_image = |node: usize, uid: i64| {
        operands[node]
            .as_ref()
            .is_some_and(|(uids, _)| uids.contains(&uid))
    };
    let candidates: Vec<i64> = tensors
        .iter()
        .filter(|&(&uid, info)| {
            let dims = &info.shape.dims;
            matches!(info.placement, Placement::Virtual)
                && (dims.len() == 4 || dims.len() == 5)
                && dims[1] > 1
                && dims[2..].iter().product::<usize>() > 1
                && index.producer(uid).is_some_and(|n| as_image(n, uid))
                && index.consumers(uid).iter().all(|&n| as_image(n, uid))
        })
        .map(|(&uid, _)| uid)
        .collect();
    // Groups of candidates joined by pointwise and batch-norm nodes (union-find).
    let mut parent: HashMap<i64, i64> = candidates.iter().map(|&u| (u, u)).collect();
    fn root(parent: &mut HashMap<i64, i64>, mut u: i64) -> i64 {
        while parent[&u] != u {
            let up = parent[&parent[&u]];
            parent.insert(u, up);
            u = up;
        }
        u
    }
    for (uids, how) in operands.iter().flatten() {
        if !matches!(how, ImageUse::Elementwise) {
            continue;
        }
        let joined: Vec<i64> = uids
            .iter()
            .copied()
            .filter(|u| parent.contains_key(u))
            .collect();
        for pair in joined.windows(2) {
            let (a, b) = (root(&mut parent, pair[0]), root(&mut parent, pair[1]));
            parent.insert(b, a);
        }
    }
    let mut spatial_groups = HashSet::new();
    for (_, how) in operands.iter().flatten() {
        if let ImageUse::Spatial(Some(u)) = *how
            && parent.contains_key(&u)
        {
            let r = root(&mut parent, u);
            spatial_groups.insert(r);
        }
    }
    candidates
        .into_iter()
        .filter(|&u| spatial_groups.contains(&root(&mut parent, u)))
        .collect()
}

/// Type, shape and placement of tensor `uid`, or why the engine cannot hold it.
fn tensor_info(index: &GraphIndex<'_>, uid: i64) -> Result<TensorInfo, String> {
    let t = index.tensor(uid);
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
    let data_type = match index.data_type(uid) {
        DataType::Unset if t.is_virtual => DataType::Float,
        d => d,
    };
    let placement = match index.scalar(uid) {
        Some(v) => Placement::Constant(v as f32),
        None if t.is_virtual => Placement::Virtual,
        None => Placement::Host,
    };
    let dtype = match (DType::from_data_type(data_type), &t.value) {
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
                data_type.name()
            ));
        }
    };
    Ok(TensorInfo {
        name: t.name.clone(),
        dtype,
        shape: Shape::new(index.dims(uid), index.strides(uid)),
        placement,
    })
}

#[cfg(test)]
mod tests {
    use hipdnn_flatbuffers_sdk::GraphView;
    use hipdnn_flatbuffers_sdk::model::{
        BatchnormBackwardAttributes, Node, PointwiseAttributes, SdpaAttributes, TensorAttributes,
    };
    use hipdnn_flatbuffers_sdk::wire::PointwiseMode;
    use hipdnn_frontend::samples;

    use super::*;
    use crate::plan::{CpuSettings, Plan, plan_for, unsupported_reason};

    fn graph(tensors: &[(i64, &[i64])], data_type: DataType, node: Node) -> Graph {
        let mut g = Graph {
            name: "g".into(),
            io_data_type: data_type,
            intermediate_data_type: DataType::Float,
            compute_data_type: DataType::Float,
            ..Graph::default()
        };
        for &(uid, dims) in tensors {
            let mut strides = vec![1; dims.len()];
            for d in (0..dims.len() - 1).rev() {
                strides[d] = strides[d + 1] * dims[d + 1];
            }
            g.tensors.push(TensorAttributes {
                uid,
                name: format!("t{uid}"),
                dims: dims.to_vec(),
                strides,
                ..TensorAttributes::default()
            });
        }
        g.nodes.push(node);
        g
    }

    fn pointwise(mode: PointwiseMode) -> Node {
        Node::new(
            "pw",
            PointwiseAttributes {
                operation: mode,
                in_0_tensor_uid: 1,
                out_0_tensor_uid: 2,
                ..PointwiseAttributes::default()
            },
        )
    }

    /// Accepted graphs and refused ones (type, operation, attribute, missing input).
    fn graphs() -> Vec<Graph> {
        let pair: &[(i64, &[i64])] = &[(1, &[2, 8]), (2, &[2, 8])];
        let mut bn_bwd = BatchnormBackwardAttributes {
            x_tensor_uid: 1,
            dy_tensor_uid: 2,
            dx_tensor_uid: 3,
            scale_tensor_uid: 4,
            dscale_tensor_uid: 5,
            dbias_tensor_uid: 6,
            ..BatchnormBackwardAttributes::default()
        };
        let bn_tensors: &[(i64, &[i64])] = &[
            (1, &[2, 3, 4, 4]),
            (2, &[2, 3, 4, 4]),
            (3, &[2, 3, 4, 4]),
            (4, &[1, 3, 1, 1]),
            (5, &[1, 3, 1, 1]),
            (6, &[1, 3, 1, 1]),
            (7, &[1, 3, 1, 1]),
        ];
        let without_stats = graph(
            bn_tensors,
            DataType::Float,
            Node::new("bwd", bn_bwd.clone()),
        );
        bn_bwd.mean_tensor_uid = Some(7);
        let half_stats = graph(bn_tensors, DataType::Float, Node::new("bwd", bn_bwd));
        vec![
            samples::conv_bias_relu(),
            samples::pointwise_chain(4),
            samples::resnet50(1),
            graph(pair, DataType::Half, pointwise(PointwiseMode::RELU_FWD)),
            graph(pair, DataType::Double, pointwise(PointwiseMode::RELU_FWD)),
            graph(pair, DataType::Float, pointwise(PointwiseMode::GEN_INDEX)),
            graph(pair, DataType::Float, pointwise(PointwiseMode::ADD)),
            graph(
                &[
                    (1, &[1, 1, 4, 8]),
                    (2, &[1, 1, 4, 8]),
                    (3, &[1, 1, 4, 8]),
                    (4, &[1, 1, 4, 8]),
                ],
                DataType::Float,
                Node::new(
                    "attn",
                    SdpaAttributes {
                        q_tensor_uid: 1,
                        k_tensor_uid: 2,
                        v_tensor_uid: 3,
                        o_tensor_uid: 4,
                        ..SdpaAttributes::default()
                    },
                ),
            ),
            without_stats,
            half_stats,
        ]
    }

    #[test]
    fn the_applicability_check_and_plan_building_agree() {
        let mut refused = Vec::new();
        for g in graphs() {
            let bytes = g.to_bytes();
            let view = GraphView::from_bytes(&bytes).unwrap();
            let reason = unsupported_reason(&view);
            let built = plan_for(&view, &CpuSettings::default());
            assert_eq!(
                reason,
                built.as_ref().err().map(|e| e.message.clone()),
                "{}",
                g.name
            );
            refused.extend(reason);
        }
        // Each refusal names its node or tensor.
        let expected = [
            "tensor uid 1 (\"t1\") has data type DOUBLE",
            "node \"pw\": GEN_INDEX needs an axis",
            "node \"pw\": Add needs input 1",
            "node \"attn\" is a SdpaAttributes",
            "node \"bwd\": batch-norm backward needs the saved mean",
            "node \"bwd\": mean and inv_variance must be given together",
        ];
        assert_eq!(refused.len(), expected.len(), "{refused:#?}");
        for (got, want) in refused.iter().zip(expected) {
            assert!(
                got.starts_with(want),
                "{got:?} does not start with {want:?}"
            );
        }
    }

    /// A layer norm over no dims (or a negative count) is refused, as the reference
    /// executor refuses it, instead of being read as "all but the batch dim".
    #[test]
    fn a_layernorm_over_no_dims_is_refused_as_the_reference_refuses_it() {
        use hipdnn_flatbuffers_sdk::model::LayernormAttributes;
        use hipdnn_flatbuffers_sdk::wire::NormFwdPhase;

        let tensors: &[(i64, &[i64])] = &[
            (1, &[2, 8]),
            (2, &[1, 8]),
            (3, &[1, 8]),
            (4, &[1]),
            (5, &[2, 8]),
        ];
        let with_count = |count| {
            let mut g = graph(
                tensors,
                DataType::Float,
                Node::new(
                    "ln",
                    LayernormAttributes {
                        x_tensor_uid: 1,
                        scale_tensor_uid: 2,
                        bias_tensor_uid: 3,
                        epsilon_tensor_uid: 4,
                        y_tensor_uid: 5,
                        normalized_dim_count: count,
                        forward_phase: NormFwdPhase::INFERENCE,
                        ..LayernormAttributes::default()
                    },
                ),
            );
            g.tensors[3].value = Some(TensorValue::Float32(1e-5));
            g.validate().unwrap();
            Analysis::new(&g).err()
        };
        assert_eq!(with_count(1), None);
        for count in [0, -1, 3] {
            let reason = with_count(count).expect("refused");
            assert!(
                reason.starts_with("node \"ln\": cannot normalize"),
                "{reason}"
            );
        }
    }

    /// Layer-norm scale and bias that vary over a dim that is not normalized (here the
    /// batch dim) are refused, as the reference refuses them.
    #[test]
    fn norm_parameters_varying_over_statistics_dims_are_refused() {
        use hipdnn_flatbuffers_sdk::model::LayernormAttributes;
        use hipdnn_flatbuffers_sdk::wire::NormFwdPhase;

        let with_scale = |scale: &'static [i64]| {
            let tensors: &[(i64, &[i64])] = &[
                (1, &[2, 8]),
                (2, scale),
                (3, &[1, 8]),
                (4, &[1]),
                (5, &[2, 8]),
            ];
            let mut g = graph(
                tensors,
                DataType::Float,
                Node::new(
                    "ln",
                    LayernormAttributes {
                        x_tensor_uid: 1,
                        scale_tensor_uid: 2,
                        bias_tensor_uid: 3,
                        epsilon_tensor_uid: 4,
                        y_tensor_uid: 5,
                        normalized_dim_count: 1,
                        forward_phase: NormFwdPhase::INFERENCE,
                        ..LayernormAttributes::default()
                    },
                ),
            );
            g.tensors[3].value = Some(TensorValue::Float32(1e-5));
            g.validate().unwrap();
            Analysis::new(&g).err()
        };
        assert_eq!(with_scale(&[1, 8]), None);
        assert_eq!(with_scale(&[8]), None);
        let reason = with_scale(&[2, 8]).expect("refused");
        assert!(
            reason.contains("scale tensor uid 2 has dims [2, 8], varying over the leading dims"),
            "{reason}"
        );
    }

    #[test]
    fn each_chain_becomes_one_stage() {
        for g in [samples::conv_bias_relu(), samples::pointwise_chain(5)] {
            let analysis = Analysis::new(&g).unwrap();
            let plan = Plan::from_model(&g, &CpuSettings::default()).unwrap();
            assert_eq!(analysis.chains.len(), plan.stage_count(), "{}", g.name);
            for (chain, described) in analysis.chains.iter().zip(plan.describe()) {
                let names: Vec<&str> = chain
                    .chain
                    .nodes()
                    .map(|n| analysis.index.node(n).name.as_str())
                    .collect();
                assert!(described.ends_with(&names.join(" -> ")), "{described}");
            }
        }
        // conv → bias → ReLU: one stage, both intermediates virtual.
        let g = samples::conv_bias_relu();
        let analysis = Analysis::new(&g).unwrap();
        assert_eq!(analysis.chains[0].chain.virtual_intermediates, [3, 5]);
        assert!(matches!(
            analysis.chains[0].head,
            super::ops::HeadOp::Convolution { .. }
        ));
        assert_eq!(analysis.chains[0].steps.len(), 2);
    }

    #[test]
    fn pools_head_chains_and_index_outputs_are_refused() {
        use hipdnn_frontend::{GraphBuilder, PointwiseAttrs, ResampleAttrs, TensorDescriptor};
        let mut b = GraphBuilder::new("pool_relu")
            .io_data_type(DataType::Half)
            .compute_data_type(DataType::Float)
            .intermediate_data_type(DataType::Float);
        let x = b.tensor(TensorDescriptor::new("x", [1, 4, 6, 6])).unwrap();
        let attrs = ResampleAttrs::max_pool([3, 3])
            .stride([2, 2])
            .padding([1, 1]);
        let pooled = b.resample_fwd(x, attrs.name("pool")).unwrap();
        let relu = PointwiseAttrs::new(PointwiseMode::RELU_FWD).name("relu");
        let y = b.pointwise(&[pooled], relu).unwrap();
        b.set_output(y, true).unwrap();
        let mut g = b.build().unwrap().into_graph();
        let plan = Plan::from_model(&g, &CpuSettings::default()).unwrap();
        assert_eq!(plan.describe(), ["pool: pool -> relu"]);
        let resnet =
            samples::resnet50_scaled(1, 32, 2, hipdnn_frontend::TensorLayout::ChannelsLast);
        let plan = Plan::from_model(&resnet, &CpuSettings::default()).unwrap();
        let described = plan.describe();
        // A channels-last network stays channels-last through its materialised
        // intermediates: both pools read NHWC.
        assert!(
            described
                .iter()
                .any(|d| d == "pool channels-last: stem.pool"),
            "{described:#?}"
        );
        assert!(
            described.iter().any(|d| d == "pool channels-last: pool"),
            "{described:#?}"
        );
        let NodeAttributes::ResampleFwdAttributes(a) = &mut g.nodes[0].attributes else {
            panic!()
        };
        a.generate_index = true;
        let bytes = g.to_bytes();
        let reason = unsupported_reason(&GraphView::from_bytes(&bytes).unwrap()).unwrap();
        assert!(reason.contains("generate_index"), "{reason}");
    }

    /// A channels-first network stores its activations channels-last: every
    /// convolution after the stem reads a channels-last image (the indirect GEMM or
    /// Winograd), the stem runs over filter rows of a channels-last copy of the NCHW
    /// image, and both pools run channels-last; the caller's tensors keep NCHW.
    #[test]
    fn a_channels_first_network_stores_its_activations_channels_last() {
        use hipdnn_data_sdk::TensorLayout;
        let g = samples::resnet50_scaled(1, 64, 16, TensorLayout::Nchw);
        let analysis = Analysis::new(&g).unwrap();
        let virtual_images = g
            .tensors
            .iter()
            .filter(|t| t.is_virtual && t.dims.len() == 4 && t.dims[2] * t.dims[3] > 1)
            .count();
        assert!(virtual_images > 100, "{virtual_images}");
        assert_eq!(analysis.channels_last.len(), virtual_images);
        let plan = Plan::from_model(&g, &CpuSettings::default()).unwrap();
        let described = plan.describe();
        assert!(
            described[0].starts_with("conv Indirect: stem.conv"),
            "{described:#?}"
        );
        assert!(
            described.iter().all(|d| !d.contains("ImplicitGemm")),
            "{described:#?}"
        );
        for pool in ["pool channels-last: stem.pool", "pool channels-last: pool"] {
            assert!(described.iter().any(|d| d == pool), "{described:#?}");
        }
        assert!(
            described.iter().any(|d| d.starts_with("conv Winograd")),
            "{described:#?}"
        );
        // A block between the caller's NCHW tensors: the middle convolution reads
        // and writes channels-last (Winograd), the last one writes the caller's NCHW
        // output as rows of output channels (the implicit GEMM), not as pixels.
        let g = samples::resnet_bottleneck(1, 64, 16, DataType::Float, TensorLayout::Nchw);
        let plan = Plan::from_model(&g, &CpuSettings::default()).unwrap();
        let described = plan.describe();
        assert!(
            described[1].starts_with("conv Winograd") && described[1].contains(": conv2 ->"),
            "{described:#?}"
        );
        assert!(
            described[2].starts_with("conv ImplicitGemm: conv3"),
            "{described:#?}"
        );
    }

    /// Only virtual images joined to an input of a convolution or a pooling are stored
    /// channels-last: not one between pointwise nodes alone, nor a convolution's output
    /// that only pointwise nodes read (channels-last would only transpose there), nor
    /// one only a depthwise convolution reads, nor one a matmul reads (its dims are
    /// not an image's).
    #[test]
    fn only_images_joined_to_a_convolution_or_pooling_input_are_stored_channels_last() {
        use hipdnn_frontend::{
            ConvAttrs, GraphBuilder, MatmulAttrs, PointwiseAttrs, Tensor, TensorDescriptor,
        };
        type Make<'a> = &'a dyn Fn(&mut GraphBuilder, Tensor) -> Tensor;
        type Use<'a> = &'a dyn Fn(&mut GraphBuilder, Tensor, Tensor) -> Vec<Tensor>;
        // Whether `a = make(x)` (virtual) is stored channels-last when `uses` read it
        // (with `x`, as a graph input would be) and their results are the outputs.
        let channels_last = |make: Make<'_>, uses: Use<'_>| {
            let mut b = GraphBuilder::new("g")
                .io_data_type(DataType::Float)
                .compute_data_type(DataType::Float)
                .intermediate_data_type(DataType::Float);
            let x = b.tensor(TensorDescriptor::new("x", [1, 8, 6, 6])).unwrap();
            let a = make(&mut b, x);
            for y in uses(&mut b, a, x) {
                b.set_output(y, true).unwrap();
            }
            let built = b.build().unwrap();
            let uid = built.uid(a).unwrap();
            let g = built.into_graph();
            assert!(g.tensors.iter().any(|t| t.uid == uid && t.is_virtual));
            Analysis::new(&g).unwrap().channels_last.contains(&uid)
        };
        let pointwise = |b: &mut GraphBuilder, a, x, mode: PointwiseMode, name: &str| {
            b.pointwise(&[a, x], PointwiseAttrs::new(mode).name(name))
                .unwrap()
        };
        let conv = |b: &mut GraphBuilder, a, name: &str| {
            let w = b.tensor(TensorDescriptor::new(name, [8, 8, 3, 3])).unwrap();
            let attrs = ConvAttrs::new().padding([1, 1]).name(name);
            b.conv_fprop(a, w, attrs).unwrap()
        };
        let relu = |b: &mut GraphBuilder, x| {
            let relu = PointwiseAttrs::new(PointwiseMode::RELU_FWD).name("relu");
            b.pointwise(&[x], relu).unwrap()
        };
        let add_and_mul: Use<'_> = &|b, a, x| {
            vec![
                pointwise(b, a, x, PointwiseMode::ADD, "add"),
                pointwise(b, a, x, PointwiseMode::MUL, "mul"),
            ]
        };
        assert!(channels_last(&relu, &|b, a, x| vec![
            conv(b, a, "conv"),
            pointwise(b, a, x, PointwiseMode::ADD, "add"),
        ]));
        assert!(!channels_last(&relu, add_and_mul));
        // A depthwise convolution (one channel a group) runs the direct loop either
        // way, and a convolution joins no groups: its output read by a convolution
        // does not make its input channels-last.
        let depthwise = |b: &mut GraphBuilder, a| {
            let w = b.tensor(TensorDescriptor::new("dw", [8, 1, 3, 3])).unwrap();
            let attrs = ConvAttrs::new().padding([1, 1]).name("dw");
            b.conv_fprop(a, w, attrs).unwrap()
        };
        assert!(!channels_last(&relu, &|b, a, _| vec![depthwise(b, a)]));
        assert!(!channels_last(&relu, &|b, a, _| {
            let d = depthwise(b, a);
            vec![conv(b, d, "conv")]
        }));
        assert!(!channels_last(&|b, x| conv(b, x, "conv0"), add_and_mul));
        assert!(!channels_last(&relu, &|b, a, _| {
            let m = b.tensor(TensorDescriptor::new("m", [1, 8, 6, 6])).unwrap();
            vec![b.matmul(a, m, MatmulAttrs::new().name("mm")).unwrap()]
        }));
    }
}
