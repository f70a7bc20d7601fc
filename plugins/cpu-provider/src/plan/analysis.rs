//! Applicability: which graphs CPU_ENGINE runs, decided without planning any kernel.
//!
//! The analysis indexes the graph, checks every tensor (type, storage) and node
//! (compute type), cuts the graph into fusable chains and checks each chain's nodes
//! ([`super::ops`]). What it returns is all that plan building needs about the graph;
//! the cheap applicability check is this analysis and nothing more.

use std::collections::HashMap;

use hipdnn_data_sdk::DataType;
use hipdnn_flatbuffers_sdk::TensorValue;
use hipdnn_flatbuffers_sdk::model::Graph;
use hipdnn_plugin_sdk::graph::{Chain, ChainStep, FusionPolicy, GraphIndex, partition};

use super::ops::{self, EpilogueOp, HeadOp};
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

/// A chain of nodes with every node checked: the head's operation and the epilogue
/// operations after it.
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
        let facts = Facts {
            index: &index,
            tensors: &tensors,
        };
        let mut chains = Vec::new();
        for chain in partition(&index, &CpuFusion(facts)) {
            let head = ops::check_head(&facts, chain.head)?;
            let steps = chain
                .steps
                .iter()
                .map(|step| ops::check_step(&facts, step))
                .collect::<Result<_, _>>()?;
            chains.push(CheckedChain { chain, head, steps });
        }
        Ok(Self {
            index,
            tensors,
            chains,
        })
    }
}

/// The index and the tensor facts, as the op checks read them.
#[derive(Debug, Clone, Copy)]
pub(super) struct Facts<'a, 'g> {
    pub index: &'a GraphIndex<'g>,
    pub tensors: &'a HashMap<i64, TensorInfo>,
}

impl Facts<'_, '_> {
    pub fn tensor(&self, uid: i64) -> &TensorInfo {
        &self.tensors[&uid]
    }

    pub fn dims(&self, uid: i64) -> &[usize] {
        self.index.dims(uid)
    }

    pub fn node_name(&self, node: usize) -> &str {
        &self.index.node(node).name
    }
}

/// What CPU epilogues fuse: any pointwise op or batch-norm inference the kernels run,
/// after any producer.
struct CpuFusion<'a, 'g>(Facts<'a, 'g>);

impl FusionPolicy for CpuFusion<'_, '_> {
    fn accepts(&self, _: &GraphIndex<'_>, _: &Chain, step: &ChainStep) -> bool {
        ops::check_step(&self.0, step).is_ok()
    }
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
