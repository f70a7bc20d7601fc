//! [`GraphIndex`]: who writes and who reads each tensor, and the facts about tensors
//! and nodes that every plan builder looks up.

use std::collections::HashMap;
use std::ops::Range;

use hipdnn_data_sdk::DataType;
use hipdnn_flatbuffers_sdk::model::{Graph, Node, TensorAttributes};
use hipdnn_flatbuffers_sdk::{GraphError, TensorValue};

/// A lookup structure over a validated graph: producers and consumers of every tensor,
/// effective data types, pass-by-value scalars, dims and strides as `usize`, and nodes by
/// name or position.
///
/// Build it once per graph and share it between the applicability check and plan
/// building. It borrows the owned [`Graph`]; from a received
/// [`GraphView`](hipdnn_flatbuffers_sdk::GraphView) take `view.to_model()` first (one
/// decode, cheaper than decoding the same tables again on every lookup).
///
/// The graph is expected to have passed validation ([`GraphView::validate`] or
/// [`Graph::validate`]; the plugin entry points validate every graph before plugin
/// code sees it): the index does not check dims, strides, cycles or writers again.
/// Nodes are taken to be in topological order, as the wire contract requires. The only
/// things it refuses are those it cannot index: a graph without nodes and a node naming
/// a uid the graph does not declare.
///
/// [`GraphView::validate`]: hipdnn_flatbuffers_sdk::GraphView::validate
///
/// ```
/// use hipdnn_frontend::samples;
/// use hipdnn_plugin_sdk::graph::GraphIndex;
///
/// let graph = samples::conv_bias_relu();
/// let index = GraphIndex::new(&graph)?;
/// let conv = index.node_named("conv").unwrap();
/// assert_eq!(index.producer(3), Some(conv)); // conv_out
/// assert_eq!(index.consumers(3), &[index.node_named("bias").unwrap()]);
/// assert_eq!(index.dims(6), &[1, 4, 8, 8]);
/// assert_eq!(index.graph_inputs().collect::<Vec<_>>(), [1, 2, 4]);
/// assert_eq!(index.graph_outputs().collect::<Vec<_>>(), [6]);
/// # Ok::<(), hipdnn_flatbuffers_sdk::GraphError>(())
/// ```
#[derive(Debug, Clone)]
pub struct GraphIndex<'g> {
    graph: &'g Graph,
    /// uid → position in `graph.tensors` and `tensors`.
    position: HashMap<i64, usize>,
    tensors: Vec<TensorFacts>,
    nodes: Vec<NodeTensors>,
}

/// What the index keeps per tensor.
#[derive(Debug, Clone)]
struct TensorFacts {
    dims: Vec<usize>,
    strides: Vec<usize>,
    data_type: DataType,
    producer: Option<usize>,
    consumers: Vec<usize>,
}

/// The uids a node reads and writes, in attribute order.
#[derive(Debug, Clone, Default)]
struct NodeTensors {
    inputs: Vec<i64>,
    outputs: Vec<i64>,
}

impl<'g> GraphIndex<'g> {
    /// Indexes `graph`.
    ///
    /// # Errors
    /// [`GraphError::NoNodes`] for an empty graph; [`GraphError::UnknownUid`] for a node
    /// naming an undeclared uid. (Validation finds both first.)
    pub fn new(graph: &'g Graph) -> Result<Self, GraphError> {
        if graph.nodes.is_empty() {
            return Err(GraphError::NoNodes);
        }
        let mut position = HashMap::with_capacity(graph.tensors.len());
        let mut tensors = Vec::with_capacity(graph.tensors.len());
        for (at, t) in graph.tensors.iter().enumerate() {
            position.entry(t.uid).or_insert(at);
            tensors.push(TensorFacts {
                // Validation guarantees positive dims and non-negative strides.
                dims: t.dims.iter().map(|&d| d as usize).collect(),
                strides: t.strides.iter().map(|&s| s as usize).collect(),
                data_type: effective_data_type(graph, t),
                producer: None,
                consumers: Vec::new(),
            });
        }
        let mut nodes = Vec::with_capacity(graph.nodes.len());
        for (i, node) in graph.nodes.iter().enumerate() {
            let mut uids = NodeTensors::default();
            node.attributes
                .tensor_uids(&mut uids.inputs, &mut uids.outputs);
            let unknown = |uid: i64, role: &'static str| GraphError::UnknownUid {
                node: i,
                name: node.name.clone(),
                role,
                uid,
            };
            for &uid in &uids.inputs {
                let at = *position.get(&uid).ok_or_else(|| unknown(uid, "reads"))?;
                let consumers = &mut tensors[at].consumers;
                if consumers.last() != Some(&i) {
                    consumers.push(i);
                }
            }
            for &uid in &uids.outputs {
                let at = *position.get(&uid).ok_or_else(|| unknown(uid, "writes"))?;
                tensors[at].producer = Some(i);
            }
            nodes.push(uids);
        }
        Ok(Self {
            graph,
            position,
            tensors,
            nodes,
        })
    }

    /// The indexed graph.
    pub fn graph(&self) -> &'g Graph {
        self.graph
    }

    /// Number of nodes.
    pub fn node_count(&self) -> usize {
        self.graph.nodes.len()
    }

    /// Node positions in topological order (graphs arrive sorted: `0..node_count`).
    pub fn topological_order(&self) -> Range<usize> {
        0..self.node_count()
    }

    /// The node at position `i`.
    ///
    /// # Panics
    /// `i >= node_count()`.
    pub fn node(&self, i: usize) -> &'g Node {
        &self.graph.nodes[i]
    }

    /// The position of the first node named `name`.
    pub fn node_named(&self, name: &str) -> Option<usize> {
        self.graph.nodes.iter().position(|n| n.name == name)
    }

    /// The uids node `i` reads, in attribute order (a uid read twice appears twice).
    pub fn node_inputs(&self, i: usize) -> &[i64] {
        &self.nodes[i].inputs
    }

    /// The uids node `i` writes, in attribute order.
    pub fn node_outputs(&self, i: usize) -> &[i64] {
        &self.nodes[i].outputs
    }

    /// The compute type of node `i`: its own, else the graph's.
    pub fn compute_data_type(&self, i: usize) -> DataType {
        match self.node(i).compute_data_type {
            DataType::Unset => self.graph.compute_data_type,
            own => own,
        }
    }

    /// Whether the graph declares `uid`.
    pub fn contains(&self, uid: i64) -> bool {
        self.position.contains_key(&uid)
    }

    fn facts(&self, uid: i64) -> &TensorFacts {
        &self.tensors[self.at(uid)]
    }

    fn at(&self, uid: i64) -> usize {
        match self.position.get(&uid) {
            Some(&at) => at,
            None => panic!("tensor uid {uid} is not declared by the graph"),
        }
    }

    /// The declaration of tensor `uid`.
    ///
    /// # Panics
    /// An undeclared uid (every uid a node names is declared: [`GraphIndex::new`]
    /// checked).
    pub fn tensor(&self, uid: i64) -> &'g TensorAttributes {
        &self.graph.tensors[self.at(uid)]
    }

    /// The node that writes `uid`; `None` for graph inputs and pass-by-value scalars.
    ///
    /// # Panics
    /// An undeclared uid.
    pub fn producer(&self, uid: i64) -> Option<usize> {
        self.facts(uid).producer
    }

    /// The distinct nodes that read `uid`, in topological order.
    ///
    /// # Panics
    /// An undeclared uid.
    pub fn consumers(&self, uid: i64) -> &[usize] {
        &self.facts(uid).consumers
    }

    /// The data type of `uid`: its own, else the graph's `intermediate_data_type` (virtual
    /// tensors) or `io_data_type` (the others). `Unset` only where neither is set, which
    /// validation refuses.
    ///
    /// # Panics
    /// An undeclared uid.
    pub fn data_type(&self, uid: i64) -> DataType {
        self.facts(uid).data_type
    }

    /// Whether `uid` is virtual (an intermediate the host passes no buffer for).
    ///
    /// # Panics
    /// An undeclared uid.
    pub fn is_virtual(&self, uid: i64) -> bool {
        self.tensor(uid).is_virtual
    }

    /// The value of a pass-by-value scalar, `None` for tensors in memory.
    ///
    /// # Panics
    /// An undeclared uid.
    pub fn value(&self, uid: i64) -> Option<&'g TensorValue> {
        self.tensor(uid).value.as_ref()
    }

    /// The value of a pass-by-value scalar as `f64` (booleans as 0 or 1).
    ///
    /// # Panics
    /// An undeclared uid.
    pub fn scalar(&self, uid: i64) -> Option<f64> {
        self.value(uid).map(TensorValue::as_f64)
    }

    /// Dims of `uid` as validated (positive).
    ///
    /// # Panics
    /// An undeclared uid.
    pub fn dims(&self, uid: i64) -> &[usize] {
        &self.facts(uid).dims
    }

    /// Strides of `uid` in elements, as validated (non-negative, one per dim).
    ///
    /// # Panics
    /// An undeclared uid.
    pub fn strides(&self, uid: i64) -> &[usize] {
        &self.facts(uid).strides
    }

    /// Number of elements of `uid` (the product of its dims).
    ///
    /// # Panics
    /// An undeclared uid.
    pub fn numel(&self, uid: i64) -> usize {
        self.dims(uid).iter().product()
    }

    /// Tensors the host passes in: not virtual, not pass-by-value, written by no node;
    /// in declaration order.
    pub fn graph_inputs(&self) -> impl Iterator<Item = i64> + '_ {
        self.graph
            .tensors
            .iter()
            .zip(&self.tensors)
            .filter(|(t, f)| !t.is_virtual && t.value.is_none() && f.producer.is_none())
            .map(|(t, _)| t.uid)
    }

    /// Tensors the host receives: not virtual and written by a node; in declaration
    /// order.
    pub fn graph_outputs(&self) -> impl Iterator<Item = i64> + '_ {
        self.graph
            .tensors
            .iter()
            .zip(&self.tensors)
            .filter(|(t, f)| !t.is_virtual && f.producer.is_some())
            .map(|(t, _)| t.uid)
    }
}

fn effective_data_type(graph: &Graph, t: &TensorAttributes) -> DataType {
    match t.data_type {
        DataType::Unset if t.is_virtual => graph.intermediate_data_type,
        DataType::Unset => graph.io_data_type,
        own => own,
    }
}

#[cfg(test)]
mod tests {
    use hipdnn_flatbuffers_sdk::model::{
        ConvolutionFwdAttributes, Node, PointwiseAttributes, TensorAttributes,
    };
    use hipdnn_flatbuffers_sdk::wire::PointwiseMode;
    use hipdnn_frontend::samples;

    use super::*;

    fn tensor(uid: i64, dims: &[i64], is_virtual: bool) -> TensorAttributes {
        let mut strides = vec![1; dims.len()];
        for d in (0..dims.len().saturating_sub(1)).rev() {
            strides[d] = strides[d + 1] * dims[d + 1];
        }
        TensorAttributes {
            uid,
            name: format!("t{uid}"),
            dims: dims.to_vec(),
            strides,
            is_virtual,
            ..TensorAttributes::default()
        }
    }

    #[test]
    fn producers_consumers_and_io() {
        let graph = samples::conv_bias_relu();
        let index = GraphIndex::new(&graph).unwrap();
        let (conv, bias, relu) = (
            index.node_named("conv").unwrap(),
            index.node_named("bias").unwrap(),
            index.node_named("relu").unwrap(),
        );
        assert_eq!((conv, bias, relu), (0, 1, 2));
        assert_eq!(index.topological_order(), 0..3);
        assert_eq!(index.producer(1), None);
        assert_eq!(index.producer(5), Some(bias));
        assert_eq!(index.consumers(1), &[conv]);
        assert_eq!(index.consumers(5), &[relu]);
        assert!(index.consumers(6).is_empty());
        assert_eq!(index.node_inputs(conv), &[1, 2]);
        assert_eq!(index.node_outputs(conv), &[3]);
        assert_eq!(index.strides(1), &[192, 64, 8, 1]);
        assert_eq!(index.numel(2), 4 * 27);
        assert!(index.is_virtual(3) && !index.is_virtual(6));
        assert_eq!(index.node_named("nope"), None);
        assert_eq!(index.tensor(4).name, "bias");
    }

    #[test]
    fn data_types_fall_back_to_the_graph_defaults() {
        let mut graph = samples::pointwise_chain(2);
        graph.io_data_type = DataType::Half;
        graph.intermediate_data_type = DataType::Float;
        graph.compute_data_type = DataType::Float;
        for t in &mut graph.tensors {
            t.data_type = DataType::Unset;
        }
        graph.tensors[0].data_type = DataType::Bfloat16;
        graph.nodes[1].compute_data_type = DataType::Half;
        let index = GraphIndex::new(&graph).unwrap();
        let [first, middle, last] = [0, 1, 2].map(|i| graph.tensors[i].uid);
        assert_eq!(index.data_type(first), DataType::Bfloat16);
        assert_eq!(index.data_type(middle), DataType::Float);
        assert_eq!(index.data_type(last), DataType::Half);
        assert_eq!(index.compute_data_type(0), DataType::Float);
        assert_eq!(index.compute_data_type(1), DataType::Half);
    }

    #[test]
    fn pass_by_value_scalars_and_repeated_reads() {
        let mut graph = Graph {
            name: "scale".into(),
            ..Graph::default()
        };
        graph.tensors.push(tensor(1, &[2, 3], false));
        let mut alpha = tensor(2, &[1], false);
        alpha.value = Some(TensorValue::Float32(0.5));
        graph.tensors.push(alpha);
        graph.tensors.push(tensor(3, &[2, 3], true));
        graph.tensors.push(tensor(4, &[2, 3], false));
        graph.nodes.push(Node::new(
            "mul",
            PointwiseAttributes {
                operation: PointwiseMode::MUL,
                in_0_tensor_uid: 1,
                in_1_tensor_uid: Some(2),
                out_0_tensor_uid: 3,
                ..PointwiseAttributes::default()
            },
        ));
        graph.nodes.push(Node::new(
            "square",
            PointwiseAttributes {
                operation: PointwiseMode::MUL,
                in_0_tensor_uid: 3,
                in_1_tensor_uid: Some(3),
                out_0_tensor_uid: 4,
                ..PointwiseAttributes::default()
            },
        ));
        let index = GraphIndex::new(&graph).unwrap();
        assert_eq!(index.scalar(2), Some(0.5));
        assert_eq!(index.scalar(1), None);
        assert_eq!(index.value(2), Some(&TensorValue::Float32(0.5)));
        // Read twice by one node: one consumer, two inputs.
        assert_eq!(index.consumers(3), &[1]);
        assert_eq!(index.node_inputs(1), &[3, 3]);
        assert_eq!(index.graph_inputs().collect::<Vec<_>>(), [1]);
        assert_eq!(index.graph_outputs().collect::<Vec<_>>(), [4]);
    }

    #[test]
    fn refuses_what_it_cannot_index() {
        let empty = Graph::default();
        assert_eq!(GraphIndex::new(&empty).unwrap_err(), GraphError::NoNodes);
        let mut graph = Graph::default();
        graph.tensors.push(tensor(1, &[1, 1, 1, 1], false));
        graph.nodes.push(Node::new(
            "conv",
            ConvolutionFwdAttributes {
                x_tensor_uid: 1,
                w_tensor_uid: 1,
                y_tensor_uid: 9,
                ..ConvolutionFwdAttributes::default()
            },
        ));
        let err = GraphIndex::new(&graph).unwrap_err();
        assert!(
            matches!(
                err,
                GraphError::UnknownUid {
                    uid: 9,
                    role: "writes",
                    ..
                }
            ),
            "{err}"
        );
        assert!(err.to_string().contains("\"conv\""), "{err}");
    }
}
