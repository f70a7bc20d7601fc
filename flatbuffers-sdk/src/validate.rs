//! Graph validation and topological sort.
//!
//! One analysis serves both forms of a graph: the owned [`model::Graph`] (which it
//! sorts and whose unset data types it fills in) and a received [`GraphView`] (which
//! must already be sorted, as the wire contract requires). Errors name the node and
//! the tensor uid at fault.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use hipdnn_data_sdk::{DataType, check_dims_strides, overlapping_dim};

use crate::limits::{
    GraphLimits, MAX_GRAPH_ELEMENTS_ENV, MAX_TENSOR_ELEMENTS_ENV, MAX_TENSOR_RANK_ENV,
};
use crate::model::{self, NodeAttributes, NodeAttributesRef};
use crate::view::GraphView;
use crate::wire;

/// Why a graph is not a valid operation graph.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum GraphError {
    /// The graph has no nodes.
    #[error("graph has no nodes")]
    NoNodes,
    /// Two tensors share a uid.
    #[error("tensor uid {uid} is declared twice (\"{first}\" and \"{second}\")")]
    DuplicateUid {
        /// The uid.
        uid: i64,
        /// Name of the first tensor with it.
        first: String,
        /// Name of the second tensor with it.
        second: String,
    },
    /// A node refers to a uid that no tensor has.
    #[error("node {node} (\"{name}\") {role} tensor uid {uid}, which the graph does not declare")]
    UnknownUid {
        /// Index of the node.
        node: usize,
        /// Name of the node.
        name: String,
        /// `"reads"` or `"writes"`.
        role: &'static str,
        /// The uid.
        uid: i64,
    },
    /// A tensor no node reads or writes.
    #[error("tensor uid {uid} (\"{name}\") is declared but no node uses it")]
    DanglingTensor {
        /// The uid.
        uid: i64,
        /// Tensor name.
        name: String,
    },
    /// Two nodes write the same tensor.
    #[error(
        "tensor uid {uid} (\"{tensor}\") is written by node \"{first}\" and by node \"{second}\""
    )]
    MultipleWriters {
        /// The uid.
        uid: i64,
        /// Tensor name.
        tensor: String,
        /// First writer.
        first: String,
        /// Second writer.
        second: String,
    },
    /// A node writes a pass-by-value scalar.
    #[error(
        "node \"{node}\" writes tensor uid {uid} (\"{tensor}\"), which is a pass-by-value scalar"
    )]
    WritesScalar {
        /// The writer.
        node: String,
        /// The uid.
        uid: i64,
        /// Tensor name.
        tensor: String,
    },
    /// A virtual tensor that no node writes.
    #[error(
        "virtual tensor uid {uid} (\"{tensor}\") is read by node \"{node}\" but no node writes it"
    )]
    VirtualWithoutWriter {
        /// The uid.
        uid: i64,
        /// Tensor name.
        tensor: String,
        /// A reader.
        node: String,
    },
    /// A virtual tensor that no node reads: its value would be lost.
    #[error(
        "virtual tensor uid {uid} (\"{tensor}\") is written by node \"{node}\" but no node reads it; \
         make it non-virtual to get it as an output"
    )]
    VirtualWithoutReader {
        /// The uid.
        uid: i64,
        /// Tensor name.
        tensor: String,
        /// The writer.
        node: String,
    },
    /// Nodes depend on each other in a loop.
    #[error("nodes form a cycle: {}", quoted(nodes))]
    Cycle {
        /// Names of the nodes on the cycle, the first repeated at the end.
        nodes: Vec<String>,
    },
    /// A node shares no tensor with the rest of the graph.
    #[error(
        "node {node} (\"{name}\") is not connected to node 0 (\"{first}\"); a graph must be connected"
    )]
    Disconnected {
        /// Index of the node.
        node: usize,
        /// Its name.
        name: String,
        /// Name of node 0.
        first: String,
    },
    /// A received graph whose nodes are not in topological order.
    #[error(
        "node {node} (\"{name}\") reads tensor uid {uid} before node {writer} (\"{writer_name}\") \
         writes it; nodes must be in topological order"
    )]
    NotSorted {
        /// Index of the reader.
        node: usize,
        /// Its name.
        name: String,
        /// The uid.
        uid: i64,
        /// Index of the writer.
        writer: usize,
        /// Its name.
        writer_name: String,
    },
    /// A tensor whose type is unset with no graph default to take.
    #[error("tensor uid {uid} (\"{name}\") has data type UNSET and the graph sets no {default}")]
    UnresolvedDataType {
        /// The uid.
        uid: i64,
        /// Tensor name.
        name: String,
        /// The default that would apply: `io_data_type` or `intermediate_data_type`.
        default: &'static str,
    },
    /// Dims and strides that do not describe a tensor.
    #[error("tensor uid {uid} (\"{name}\"): {reason}")]
    InvalidTensor {
        /// The uid.
        uid: i64,
        /// Tensor name.
        name: String,
        /// What is wrong (rank, extents, strides).
        reason: String,
    },
    /// A tensor with more dimensions than [`GraphLimits::max_rank`].
    #[error(
        "tensor uid {uid} (\"{name}\") has rank {rank}, above the limit of {limit} dimensions \
         ({MAX_TENSOR_RANK_ENV})"
    )]
    RankTooHigh {
        /// The uid.
        uid: i64,
        /// Tensor name.
        name: String,
        /// Its rank.
        rank: usize,
        /// The limit.
        limit: usize,
    },
    /// A tensor with more logical elements than [`GraphLimits::max_tensor_elements`].
    #[error(
        "tensor uid {uid} (\"{name}\") has {} elements (dims {dims:?}), above the limit of \
         {limit} per tensor ({MAX_TENSOR_ELEMENTS_ENV})",
        count_text(*elements)
    )]
    TensorTooLarge {
        /// The uid.
        uid: i64,
        /// Tensor name.
        name: String,
        /// Its dims.
        dims: Vec<i64>,
        /// The product of the dims; `u64::MAX` when it does not fit a `u64`.
        elements: u64,
        /// The limit.
        limit: u64,
    },
    /// A tensor with a buffer whose strides address more elements than
    /// [`GraphLimits::max_tensor_elements`]: its buffer would be that large, whatever
    /// its element count.
    #[error(
        "tensor uid {uid} (\"{name}\") has strides that address {span} elements (its buffer's \
         extent), above the limit of {limit} per tensor ({MAX_TENSOR_ELEMENTS_ENV})"
    )]
    SpanTooLarge {
        /// The uid.
        uid: i64,
        /// Tensor name.
        name: String,
        /// `1 + Σ (dims[i] - 1) · strides[i]`.
        span: u64,
        /// The limit.
        limit: u64,
    },
    /// Tensors holding more logical elements together than
    /// [`GraphLimits::max_graph_elements`].
    #[error(
        "the graph's tensors hold {} elements together, above the limit of {limit} per graph \
         ({MAX_GRAPH_ELEMENTS_ENV})",
        count_text(*elements)
    )]
    GraphTooLarge {
        /// The sum over the tensors up to the first that crossed the limit; `u64::MAX`
        /// when it does not fit a `u64`.
        elements: u64,
        /// The limit.
        limit: u64,
    },
    /// A tensor's `alignment` that is not a positive power of two.
    #[error(
        "tensor uid {uid} (\"{name}\") has alignment {alignment}; an alignment is a positive \
         power of two (bytes)"
    )]
    InvalidAlignment {
        /// The uid.
        uid: i64,
        /// Tensor name.
        name: String,
        /// The alignment given.
        alignment: i64,
    },
    /// A non-virtual tensor a node writes whose strides give two elements one address.
    #[error(
        "tensor uid {uid} (\"{tensor}\"), written by node \"{node}\", has {layout}: dimension \
         {dim} reaches addresses its inner dimensions already use, so two elements would be \
         written to one place; an output needs an address per element (only inputs may \
         broadcast with zero strides)"
    )]
    AliasingOutput {
        /// The uid.
        uid: i64,
        /// Tensor name.
        tensor: String,
        /// The writer.
        node: String,
        /// `dims [..] and strides [..]`.
        layout: String,
        /// The dimension at fault.
        dim: usize,
    },
    /// A node that reads the tensor it writes.
    #[error(
        "node {node} (\"{name}\") reads and writes tensor uid {uid} (\"{tensor}\"): an operation \
         writes a tensor of its own (in-place operation is not part of the graph model)"
    )]
    InPlace {
        /// Index of the node.
        node: usize,
        /// Its name.
        name: String,
        /// The uid.
        uid: i64,
        /// Tensor name.
        tensor: String,
    },
    /// A node whose attributes are unset, unknown, or inconsistent with its operation
    /// (a mode left UNSET, an operand its mode does not take or lacks).
    #[error("node {node} (\"{name}\"): {reason}")]
    InvalidNode {
        /// Index of the node.
        node: usize,
        /// Its name.
        name: String,
        /// What is wrong.
        reason: String,
    },
}

/// An element count, `u64::MAX` standing for one that does not fit.
fn count_text(elements: u64) -> String {
    if elements == u64::MAX {
        "more than 2^64".to_owned()
    } else {
        elements.to_string()
    }
}

fn quoted(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("\"{n}\""))
        .collect::<Vec<_>>()
        .join(" -> ")
}

/// What the analysis needs from a graph, whichever form it is in.
trait Source {
    fn tensor_count(&self) -> usize;
    fn tensor_uid(&self, i: usize) -> i64;
    fn tensor(&self, i: usize) -> (i64, &str, bool, bool);
    fn node_count(&self) -> usize;
    fn node_name(&self, i: usize) -> &str;
    fn node_uids(&self, i: usize, ins: &mut Vec<i64>, outs: &mut Vec<i64>);
    /// Copies tensor `i`'s dims and strides into the buffers; returns its alignment.
    fn tensor_layout(&self, i: usize, dims: &mut Vec<i64>, strides: &mut Vec<i64>) -> i64;
    fn node_modes(&self, i: usize) -> Modes;
}

impl Source for model::Graph {
    fn tensor_count(&self) -> usize {
        self.tensors.len()
    }
    fn tensor_uid(&self, i: usize) -> i64 {
        self.tensors[i].uid
    }
    fn tensor(&self, i: usize) -> (i64, &str, bool, bool) {
        let t = &self.tensors[i];
        (t.uid, &t.name, t.is_virtual, t.value.is_some())
    }
    fn node_count(&self) -> usize {
        self.nodes.len()
    }
    fn node_name(&self, i: usize) -> &str {
        &self.nodes[i].name
    }
    fn node_uids(&self, i: usize, ins: &mut Vec<i64>, outs: &mut Vec<i64>) {
        self.nodes[i].attributes.tensor_uids(ins, outs);
    }
    fn tensor_layout(&self, i: usize, dims: &mut Vec<i64>, strides: &mut Vec<i64>) -> i64 {
        let t = &self.tensors[i];
        dims.clear();
        dims.extend_from_slice(&t.dims);
        strides.clear();
        strides.extend_from_slice(&t.strides);
        t.alignment
    }
    fn node_modes(&self, i: usize) -> Modes {
        Modes::of_model(&self.nodes[i].attributes)
    }
}

struct ViewSource<'a> {
    tensors: Vec<crate::TensorView<'a>>,
    nodes: Vec<crate::NodeView<'a>>,
}

impl Source for ViewSource<'_> {
    fn tensor_count(&self) -> usize {
        self.tensors.len()
    }
    fn tensor_uid(&self, i: usize) -> i64 {
        self.tensors[i].uid()
    }
    fn tensor(&self, i: usize) -> (i64, &str, bool, bool) {
        let t = &self.tensors[i];
        (
            t.uid(),
            t.name(),
            t.is_virtual(),
            t.raw().value_type().0 != 0,
        )
    }
    fn node_count(&self) -> usize {
        self.nodes.len()
    }
    fn node_name(&self, i: usize) -> &str {
        self.nodes[i].name()
    }
    fn node_uids(&self, i: usize, ins: &mut Vec<i64>, outs: &mut Vec<i64>) {
        self.nodes[i].attributes().tensor_uids(ins, outs);
    }
    fn tensor_layout(&self, i: usize, dims: &mut Vec<i64>, strides: &mut Vec<i64>) -> i64 {
        let t = &self.tensors[i];
        dims.clear();
        dims.extend(t.dims().iter());
        strides.clear();
        strides.extend(t.strides().iter());
        t.alignment()
    }
    fn node_modes(&self, i: usize) -> Modes {
        Modes::of_view(&self.nodes[i].attributes())
    }
}

/// The enumerated attributes of a node that select what it computes, and the optional
/// operands whose presence depends on them.
enum Modes {
    Convolution(wire::ConvMode),
    Pointwise {
        mode: wire::PointwiseMode,
        in_1: Option<i64>,
        in_2: Option<i64>,
    },
    Reduction(wire::ReductionMode),
    NormForward(wire::NormFwdPhase),
    Resample(wire::ResampleMode, wire::PaddingMode),
    Attention(
        wire::DiagonalAlignment,
        Option<wire::AttentionImplementation>,
    ),
    GroupedMatmul(wire::MoeGroupedMatmulMode),
    Other,
}

impl Modes {
    fn of_model(a: &NodeAttributes) -> Self {
        use NodeAttributes as N;
        match a {
            N::ConvolutionFwdAttributes(a) => Self::Convolution(a.conv_mode),
            N::ConvolutionBwdAttributes(a) => Self::Convolution(a.conv_mode),
            N::ConvolutionWrwAttributes(a) => Self::Convolution(a.conv_mode),
            N::PointwiseAttributes(a) => Self::Pointwise {
                mode: a.operation,
                in_1: a.in_1_tensor_uid,
                in_2: a.in_2_tensor_uid,
            },
            N::ReductionAttributes(a) => Self::Reduction(a.mode),
            N::LayernormAttributes(a) => Self::NormForward(a.forward_phase),
            N::RMSNormAttributes(a) => Self::NormForward(a.forward_phase),
            N::ResampleFwdAttributes(a) => Self::Resample(a.resample_mode, a.padding_mode),
            N::ResampleBwdAttributes(a) => Self::Resample(a.resample_mode, a.padding_mode),
            N::SdpaAttributes(a) => Self::Attention(a.diagonal_alignment, Some(a.implementation)),
            N::SdpaBackwardAttributes(a) => Self::Attention(a.diagonal_alignment, None),
            N::MoeGroupedMatmulAttributes(a) => Self::GroupedMatmul(a.mode),
            _ => Self::Other,
        }
    }

    fn of_view(a: &NodeAttributesRef<'_>) -> Self {
        use NodeAttributesRef as N;
        match a {
            N::ConvolutionFwdAttributes(a) => Self::Convolution(a.conv_mode()),
            N::ConvolutionBwdAttributes(a) => Self::Convolution(a.conv_mode()),
            N::ConvolutionWrwAttributes(a) => Self::Convolution(a.conv_mode()),
            N::PointwiseAttributes(a) => Self::Pointwise {
                mode: a.operation(),
                in_1: a.in_1_tensor_uid(),
                in_2: a.in_2_tensor_uid(),
            },
            N::ReductionAttributes(a) => Self::Reduction(a.mode()),
            N::LayernormAttributes(a) => Self::NormForward(a.forward_phase()),
            N::RMSNormAttributes(a) => Self::NormForward(a.forward_phase()),
            N::ResampleFwdAttributes(a) => Self::Resample(a.resample_mode(), a.padding_mode()),
            N::ResampleBwdAttributes(a) => Self::Resample(a.resample_mode(), a.padding_mode()),
            N::SdpaAttributes(a) => {
                Self::Attention(a.diagonal_alignment(), Some(a.implementation()))
            }
            N::SdpaBackwardAttributes(a) => Self::Attention(a.diagonal_alignment(), None),
            N::MoeGroupedMatmulAttributes(a) => Self::GroupedMatmul(a.mode()),
            _ => Self::Other,
        }
    }

    /// What is wrong with the modes and operands, if anything.
    fn check(&self) -> Result<(), String> {
        /// `Ok` for a named value other than the unset one; else what is wrong.
        fn named(
            field: &str,
            enum_name: &str,
            value: i8,
            name: Option<&'static str>,
            unset: Option<i8>,
            choices: &str,
        ) -> Result<(), String> {
            match name {
                Some(n) if Some(value) == unset => {
                    Err(format!("{field} is {n}; set it to one of {choices}"))
                }
                Some(_) => Ok(()),
                None => Err(format!(
                    "{field} is {value}, which is not a {enum_name} value (one of {choices})"
                )),
            }
        }
        match *self {
            Self::Convolution(m) => named(
                "conv_mode",
                "ConvMode",
                m.0,
                m.variant_name(),
                Some(wire::ConvMode::UNSET.0),
                "CONVOLUTION, CROSS_CORRELATION",
            ),
            Self::Pointwise { mode, in_1, in_2 } => {
                let Some(arity) = crate::pointwise_arity(mode) else {
                    return named(
                        "operation",
                        "PointwiseMode",
                        mode.0,
                        mode.variant_name(),
                        Some(wire::PointwiseMode::UNSET.0),
                        "the PointwiseMode values but UNSET",
                    );
                };
                let op = mode.variant_name().unwrap_or("?");
                let takes = match arity {
                    1 => "1 input (in_0)",
                    2 => "2 inputs (in_0, in_1)",
                    _ => "3 inputs (in_0, in_1, in_2)",
                };
                for (slot, uid, wanted) in [("in_1", in_1, arity >= 2), ("in_2", in_2, arity >= 3)]
                {
                    match (uid, wanted) {
                        (Some(uid), false) => {
                            return Err(format!(
                                "{op} takes {takes}, but {slot} is set (uid {uid})"
                            ));
                        }
                        (None, true) => {
                            return Err(format!("{op} takes {takes}, but {slot} is missing"));
                        }
                        _ => {}
                    }
                }
                Ok(())
            }
            Self::Reduction(m) => named(
                "mode",
                "ReductionMode",
                m.0,
                m.variant_name(),
                Some(wire::ReductionMode::NOT_SET.0),
                "ADD, MUL, MIN_OP, MAX_OP, AMAX, AVG, NORM1, NORM2, MUL_NO_ZEROS",
            ),
            Self::NormForward(p) => named(
                "forward_phase",
                "NormFwdPhase",
                p.0,
                p.variant_name(),
                Some(wire::NormFwdPhase::NOT_SET.0),
                "INFERENCE, TRAINING",
            ),
            Self::Resample(m, p) => {
                named(
                    "resample_mode",
                    "ResampleMode",
                    m.0,
                    m.variant_name(),
                    Some(wire::ResampleMode::NOT_SET.0),
                    "MAXPOOL, AVGPOOL_EXCLUDE_PADDING, AVGPOOL_INCLUDE_PADDING",
                )?;
                // An unset padding mode is how a window without padding is written.
                named(
                    "padding_mode",
                    "PaddingMode",
                    p.0,
                    p.variant_name(),
                    None,
                    "PADDING_NOT_SET, NEG_INF_PAD, ZERO_PAD",
                )
            }
            Self::Attention(d, i) => {
                named(
                    "diagonal_alignment",
                    "DiagonalAlignment",
                    d.0,
                    d.variant_name(),
                    None,
                    "TOP_LEFT, BOTTOM_RIGHT",
                )?;
                match i {
                    Some(i) => named(
                        "implementation",
                        "AttentionImplementation",
                        i.0,
                        i.variant_name(),
                        None,
                        "AUTO, COMPOSITE, UNIFIED",
                    ),
                    None => Ok(()),
                }
            }
            Self::GroupedMatmul(m) => named(
                "mode",
                "MoeGroupedMatmulMode",
                m.0,
                m.variant_name(),
                None,
                "NONE, GATHER, SCATTER",
            ),
            Self::Other => Ok(()),
        }
    }
}

/// Rows of small integer lists stored back to back (compressed sparse rows).
struct Rows {
    start: Vec<u32>,
    items: Vec<u32>,
}

impl Rows {
    fn with_capacity(rows: usize, items: usize) -> Self {
        let mut start = Vec::with_capacity(rows + 1);
        start.push(0);
        Self {
            start,
            items: Vec::with_capacity(items),
        }
    }

    fn end_row(&mut self) {
        self.start.push(self.items.len() as u32);
    }

    fn row(&self, i: usize) -> &[u32] {
        &self.items[self.start[i] as usize..self.start[i + 1] as usize]
    }

    fn len(&self) -> usize {
        self.start.len() - 1
    }
}

/// The dependency structure of a graph.
struct Analysis {
    /// Per node, the tensors it reads.
    inputs: Rows,
    /// Per node, the distinct nodes that write what it reads.
    preds: Rows,
    /// Per tensor, the node that writes it (`NO_WRITER` for graph inputs).
    writer: Vec<u32>,
}

const NO_WRITER: u32 = u32::MAX;

fn analyze<S: Source>(src: &S) -> Result<Analysis, GraphError> {
    let n_nodes = src.node_count();
    if n_nodes == 0 {
        return Err(GraphError::NoNodes);
    }
    let n_tensors = src.tensor_count();
    // uid -> tensor index, as a sorted table: no hashing, and duplicates end up adjacent.
    let mut by_uid: Vec<(i64, u32)> = (0..n_tensors)
        .map(|i| (src.tensor_uid(i), i as u32))
        .collect();
    by_uid.sort_unstable();
    if let Some(pair) = by_uid.windows(2).find(|w| w[0].0 == w[1].0) {
        return Err(GraphError::DuplicateUid {
            uid: pair[0].0,
            first: src.tensor(pair[0].1 as usize).1.to_owned(),
            second: src.tensor(pair[1].1 as usize).1.to_owned(),
        });
    }
    let lookup = |uid: i64| {
        by_uid
            .binary_search_by_key(&uid, |&(u, _)| u)
            .ok()
            .map(|at| by_uid[at].1)
    };

    // Resolve every node's uids to tensor indexes, recording writers and first readers.
    let mut writer = vec![NO_WRITER; n_tensors];
    let mut first_reader = vec![NO_WRITER; n_tensors];
    let mut inputs = Rows::with_capacity(n_nodes, 2 * n_nodes);
    let (mut ins, mut outs) = (Vec::new(), Vec::new());
    for node in 0..n_nodes {
        ins.clear();
        outs.clear();
        src.node_uids(node, &mut ins, &mut outs);
        let resolve = |uid: i64, role: &'static str| {
            lookup(uid).ok_or_else(|| GraphError::UnknownUid {
                node,
                name: src.node_name(node).to_owned(),
                role,
                uid,
            })
        };
        for &uid in &ins {
            let t = resolve(uid, "reads")?;
            if first_reader[t as usize] == NO_WRITER {
                first_reader[t as usize] = node as u32;
            }
            inputs.items.push(t);
        }
        inputs.end_row();
        for &uid in &outs {
            let t = resolve(uid, "writes")?;
            if ins.contains(&uid) {
                return Err(GraphError::InPlace {
                    node,
                    name: src.node_name(node).to_owned(),
                    uid,
                    tensor: src.tensor(t as usize).1.to_owned(),
                });
            }
            let (_, tensor, _, is_scalar) = src.tensor(t as usize);
            if is_scalar {
                return Err(GraphError::WritesScalar {
                    node: src.node_name(node).to_owned(),
                    uid,
                    tensor: tensor.to_owned(),
                });
            }
            let w = &mut writer[t as usize];
            if *w != NO_WRITER {
                return Err(GraphError::MultipleWriters {
                    uid,
                    tensor: tensor.to_owned(),
                    first: src.node_name(*w as usize).to_owned(),
                    second: src.node_name(node).to_owned(),
                });
            }
            *w = node as u32;
        }
    }

    for t in 0..n_tensors {
        let (w, r) = (writer[t], first_reader[t]);
        if w != NO_WRITER && r != NO_WRITER {
            continue;
        }
        let (uid, name, is_virtual, _) = src.tensor(t);
        if w == NO_WRITER && r == NO_WRITER {
            return Err(GraphError::DanglingTensor {
                uid,
                name: name.to_owned(),
            });
        }
        if is_virtual && w == NO_WRITER {
            return Err(GraphError::VirtualWithoutWriter {
                uid,
                tensor: name.to_owned(),
                node: src.node_name(r as usize).to_owned(),
            });
        }
        if is_virtual && r == NO_WRITER {
            return Err(GraphError::VirtualWithoutReader {
                uid,
                tensor: name.to_owned(),
                node: src.node_name(w as usize).to_owned(),
            });
        }
    }

    let mut preds = Rows::with_capacity(n_nodes, inputs.items.len());
    for node in 0..n_nodes {
        let row_start = preds.items.len();
        for &t in inputs.row(node) {
            let w = writer[t as usize];
            if w != NO_WRITER && !preds.items[row_start..].contains(&w) {
                preds.items.push(w);
            }
        }
        preds.end_row();
    }
    let analysis = Analysis {
        inputs,
        preds,
        writer,
    };
    analysis.check_connected(src)?;
    Ok(analysis)
}

impl Analysis {
    /// Union-find over nodes: a node joins the writer of each tensor it reads (or, for
    /// graph inputs, the tensor's first reader).
    fn check_connected<S: Source>(&self, src: &S) -> Result<(), GraphError> {
        fn find(parent: &mut [u32], mut x: u32) -> u32 {
            while parent[x as usize] != x {
                parent[x as usize] = parent[parent[x as usize] as usize];
                x = parent[x as usize];
            }
            x
        }
        let n = self.inputs.len();
        let mut parent: Vec<u32> = (0..n as u32).collect();
        let mut anchor = self.writer.clone();
        for node in 0..n {
            for &t in self.inputs.row(node) {
                let a = &mut anchor[t as usize];
                if *a == NO_WRITER {
                    *a = node as u32;
                    continue;
                }
                let (x, y) = (find(&mut parent, *a), find(&mut parent, node as u32));
                if x != y {
                    parent[x as usize] = y;
                }
            }
        }
        let root = find(&mut parent, 0);
        for node in 1..n {
            if find(&mut parent, node as u32) != root {
                return Err(GraphError::Disconnected {
                    node,
                    name: src.node_name(node).to_owned(),
                    first: src.node_name(0).to_owned(),
                });
            }
        }
        Ok(())
    }

    /// Kahn's algorithm, always taking the lowest-index ready node: an already sorted
    /// graph keeps its order, and any other order is deterministic.
    fn topological_order<S: Source>(&self, src: &S) -> Result<Vec<usize>, GraphError> {
        let n = self.preds.len();
        let mut pending: Vec<u32> = (0..n).map(|i| self.preds.row(i).len() as u32).collect();
        // Successor rows, by counting sort over the predecessor lists.
        let mut succ_start = vec![0u32; n + 1];
        for &p in &self.preds.items {
            succ_start[p as usize + 1] += 1;
        }
        for i in 0..n {
            succ_start[i + 1] += succ_start[i];
        }
        let mut fill = succ_start.clone();
        let mut succ = vec![0u32; self.preds.items.len()];
        for node in 0..n {
            for &p in self.preds.row(node) {
                succ[fill[p as usize] as usize] = node as u32;
                fill[p as usize] += 1;
            }
        }
        let mut ready: BinaryHeap<Reverse<u32>> = (0..n as u32)
            .filter(|&i| pending[i as usize] == 0)
            .map(Reverse)
            .collect();
        let mut order = Vec::with_capacity(n);
        while let Some(Reverse(node)) = ready.pop() {
            order.push(node as usize);
            for &s in
                &succ[succ_start[node as usize] as usize..succ_start[node as usize + 1] as usize]
            {
                pending[s as usize] -= 1;
                if pending[s as usize] == 0 {
                    ready.push(Reverse(s));
                }
            }
        }
        if order.len() == n {
            return Ok(order);
        }
        // Every node left has a predecessor that is also left: walk back until a repeat.
        let mut seen = vec![usize::MAX; n];
        let mut node = (0..n).find(|&i| pending[i] > 0).expect("a node is left");
        let mut path = Vec::new();
        while seen[node] == usize::MAX {
            seen[node] = path.len();
            path.push(node);
            node = self
                .preds
                .row(node)
                .iter()
                .map(|&p| p as usize)
                .find(|&p| pending[p] > 0)
                .expect("a left node has a left predecessor");
        }
        let mut cycle: Vec<String> = path[seen[node]..]
            .iter()
            .rev()
            .map(|&i| src.node_name(i).to_owned())
            .collect();
        cycle.push(cycle[0].clone());
        Err(GraphError::Cycle { nodes: cycle })
    }

    /// For a node that reads from a later node: that uid and writer.
    fn later_dependency<S: Source>(&self, src: &S, node: usize) -> (i64, usize) {
        self.inputs
            .row(node)
            .iter()
            .find_map(|&t| {
                let w = self.writer[t as usize];
                (w != NO_WRITER && w as usize > node)
                    .then(|| (src.tensor_uid(t as usize), w as usize))
            })
            .expect("an unsorted node reads from a later node")
    }
}

/// Everything about the tensors and nodes that does not depend on the order of the
/// nodes: shapes and their limits, alignments, outputs that alias, modes and operands.
fn check_contents<S: Source>(
    src: &S,
    analysis: &Analysis,
    limits: &GraphLimits,
) -> Result<(), GraphError> {
    let (mut dims, mut strides) = (Vec::new(), Vec::new());
    let mut total: u64 = 0;
    for t in 0..src.tensor_count() {
        let alignment = src.tensor_layout(t, &mut dims, &mut strides);
        let (uid, name, is_virtual, is_scalar) = src.tensor(t);
        if dims.len() > limits.max_rank {
            return Err(GraphError::RankTooHigh {
                uid,
                name: name.to_owned(),
                rank: dims.len(),
                limit: limits.max_rank,
            });
        }
        check_dims_strides(&dims, &strides).map_err(|e| GraphError::InvalidTensor {
            uid,
            name: name.to_owned(),
            reason: e.to_string(),
        })?;
        // Extents are positive (checked above); a product that overflows saturates.
        let elements = dims
            .iter()
            .try_fold(1u64, |n, &d| n.checked_mul(d.unsigned_abs()))
            .unwrap_or(u64::MAX);
        if elements > limits.max_tensor_elements {
            return Err(GraphError::TensorTooLarge {
                uid,
                name: name.to_owned(),
                dims: dims.clone(),
                elements,
                limit: limits.max_tensor_elements,
            });
        }
        // A tensor with a buffer (neither virtual nor a pass-by-value scalar) also
        // takes the extent its strides address.
        let mut footprint = elements;
        if !is_virtual && !is_scalar {
            let span = dims.iter().zip(&strides).fold(1u64, |n, (&d, &s)| {
                n.saturating_add((d - 1).unsigned_abs().saturating_mul(s.unsigned_abs()))
            });
            if span > limits.max_tensor_elements {
                return Err(GraphError::SpanTooLarge {
                    uid,
                    name: name.to_owned(),
                    span,
                    limit: limits.max_tensor_elements,
                });
            }
            footprint = footprint.max(span);
        }
        total = total.saturating_add(footprint);
        if total > limits.max_graph_elements {
            return Err(GraphError::GraphTooLarge {
                elements: total,
                limit: limits.max_graph_elements,
            });
        }
        if alignment <= 0 || (alignment & (alignment - 1)) != 0 {
            return Err(GraphError::InvalidAlignment {
                uid,
                name: name.to_owned(),
                alignment,
            });
        }
        let writer = analysis.writer[t];
        // Virtual tensors have no memory: their strides only describe a layout.
        if writer != NO_WRITER
            && !is_virtual
            && let Some(dim) = overlapping_dim(&dims, &strides)
        {
            return Err(GraphError::AliasingOutput {
                uid,
                tensor: name.to_owned(),
                node: src.node_name(writer as usize).to_owned(),
                layout: format!("dims {dims:?} and strides {strides:?}"),
                dim,
            });
        }
    }
    for node in 0..src.node_count() {
        src.node_modes(node)
            .check()
            .map_err(|reason| GraphError::InvalidNode {
                node,
                name: src.node_name(node).to_owned(),
                reason,
            })?;
    }
    Ok(())
}

fn resolve_data_type(
    data_type: DataType,
    is_virtual: bool,
    graph: (DataType, DataType),
    uid: i64,
    name: &str,
) -> Result<DataType, GraphError> {
    if data_type != DataType::Unset {
        return Ok(data_type);
    }
    let (default, which) = if is_virtual {
        (graph.1, "intermediate_data_type")
    } else {
        (graph.0, "io_data_type")
    };
    if default == DataType::Unset {
        return Err(GraphError::UnresolvedDataType {
            uid,
            name: name.to_owned(),
            default: which,
        });
    }
    Ok(default)
}

impl model::Graph {
    /// Validates the graph and puts it in the form plugins expect: nodes sorted
    /// topologically (ties keep their current order), unset tensor data types taken from
    /// the graph's io/intermediate defaults, unset node compute types from its compute
    /// default.
    ///
    /// Tensors are bounded by [`GraphLimits::current`] (see [`Graph::validate_with_limits`]).
    ///
    /// # Errors
    /// The first problem found; see [`GraphError`]. The graph is left unchanged.
    ///
    /// [`Graph::validate_with_limits`]: model::Graph::validate_with_limits
    pub fn validate(&mut self) -> Result<(), GraphError> {
        self.validate_with_limits(GraphLimits::current())
    }

    /// [`validate`](model::Graph::validate) under explicit limits: every tensor's rank
    /// and element count, and the elements of all tensors together, are checked against
    /// `limits` before anything is computed from them.
    ///
    /// # Errors
    /// As `validate`.
    pub fn validate_with_limits(&mut self, limits: &GraphLimits) -> Result<(), GraphError> {
        let analysis = analyze(self)?;
        let order = analysis.topological_order(self)?;
        check_contents(self, &analysis, limits)?;
        let defaults = (self.io_data_type, self.intermediate_data_type);
        let mut resolved = Vec::with_capacity(self.tensors.len());
        for t in &self.tensors {
            resolved.push(resolve_data_type(
                t.data_type,
                t.is_virtual,
                defaults,
                t.uid,
                &t.name,
            )?);
        }
        for (t, data_type) in self.tensors.iter_mut().zip(resolved) {
            t.data_type = data_type;
        }
        for node in &mut self.nodes {
            if node.compute_data_type == DataType::Unset {
                node.compute_data_type = self.compute_data_type;
            }
        }
        if order.iter().enumerate().any(|(i, &n)| i != n) {
            let mut nodes: Vec<Option<model::Node>> = self.nodes.drain(..).map(Some).collect();
            self.nodes = order
                .iter()
                .map(|&i| nodes[i].take().expect("a permutation"))
                .collect();
        }
        Ok(())
    }
}

impl GraphView<'_> {
    /// Checks a received graph: everything [`model::Graph::validate`] checks, and that
    /// the nodes are already in topological order (the wire contract). Unset data types
    /// are accepted where a graph default covers them.
    ///
    /// Tensors are bounded by [`GraphLimits::current`].
    ///
    /// # Errors
    /// The first problem found; see [`GraphError`].
    pub fn validate(&self) -> Result<(), GraphError> {
        self.validate_with_limits(GraphLimits::current())
    }

    /// [`validate`](GraphView::validate) under explicit limits.
    ///
    /// # Errors
    /// As `validate`.
    pub fn validate_with_limits(&self, limits: &GraphLimits) -> Result<(), GraphError> {
        let src = ViewSource {
            tensors: self.tensors().collect(),
            nodes: self.nodes().collect(),
        };
        let analysis = analyze(&src)?;
        let order = analysis.topological_order(&src)?;
        if let Some(node) = order
            .iter()
            .enumerate()
            .find(|(i, n)| i != *n)
            .map(|(i, _)| i)
        {
            // `node` is the first position whose node is not ready: it reads a later writer.
            let (uid, writer) = analysis.later_dependency(&src, node);
            return Err(GraphError::NotSorted {
                node,
                name: src.node_name(node).to_owned(),
                uid,
                writer,
                writer_name: src.node_name(writer).to_owned(),
            });
        }
        check_contents(&src, &analysis, limits)?;
        let defaults = (self.io_data_type(), self.intermediate_data_type());
        for t in &src.tensors {
            resolve_data_type(t.data_type(), t.is_virtual(), defaults, t.uid(), t.name())?;
        }
        Ok(())
    }
}
