//! Preparing a case: its graph, seeded inputs rounded to each tensor's type, the
//! buffers a provider receives, and the expected outputs.

use std::collections::{BTreeMap, BTreeSet};

use hipdnn_data_sdk::DataType;
use hipdnn_flatbuffers_sdk::model::{Graph, TensorAttributes};

use super::Case;
use crate::data::{DataGen, encode, round_to};
use crate::reference::ReferenceError;
use crate::tensor::{HostTensor, dims_usize};

/// A case's inputs, expected outputs and buffers, ready to hand to a provider.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The graph, validated.
    pub graph: Graph,
    /// Input values by uid (already rounded to each tensor's type).
    pub inputs: BTreeMap<i64, HostTensor>,
    /// Expected outputs by uid, rounded to each output's type.
    pub expected: BTreeMap<i64, HostTensor>,
    /// Every buffer: inputs encoded, outputs filled with `0xFF`.
    pub buffers: BTreeMap<i64, Vec<u8>>,
}

impl Case {
    /// Builds the graph, draws the inputs from the case's own stream under `seed`
    /// ([`DataGen::for_case`]) and computes the expected outputs.
    ///
    /// # Errors
    /// When the references cannot compute the case (a bad case definition).
    pub fn prepare(&self, seed: u64) -> Result<Prepared, ReferenceError> {
        let graph = self.graph();
        let mut dg = DataGen::for_case(seed, &self.name);
        let written: BTreeSet<i64> = {
            let (mut ins, mut outs) = (Vec::new(), Vec::new());
            for n in &graph.nodes {
                n.attributes.tensor_uids(&mut ins, &mut outs);
            }
            outs.into_iter().collect()
        };
        let mut inputs = BTreeMap::new();
        let mut buffers = BTreeMap::new();
        for t in &graph.tensors {
            if t.is_virtual || t.value.is_some() {
                continue;
            }
            let mut h = HostTensor::zeros(dims_usize(&t.dims), dims_usize(&t.strides));
            if written.contains(&t.uid) {
                buffers.insert(t.uid, vec![0xFF; encode_len(t.data_type, &h)]);
            } else {
                let dist = self.op.distribution(&t.name);
                h.map_inplace(|_| dist.draw(&mut dg, t.data_type));
                buffers.insert(
                    t.uid,
                    encode(t.data_type, &h).expect("conformance types are encodable"),
                );
                inputs.insert(t.uid, h);
            }
        }
        let mut expected = self.expected_outputs(&graph, &inputs)?;
        for (uid, h) in &mut expected {
            let t = tensor_attrs(&graph, *uid);
            let dt = t.data_type;
            h.map_inplace(|v| round_to(dt, v));
        }
        Ok(Prepared {
            graph,
            inputs,
            expected,
            buffers,
        })
    }
}

/// The attributes of tensor `uid` of `graph` (a uid taken from the same graph).
pub(super) fn tensor_attrs(graph: &Graph, uid: i64) -> &TensorAttributes {
    graph
        .tensors
        .iter()
        .find(|t| t.uid == uid)
        .expect("uid from the same graph")
}

fn encode_len(dtype: DataType, h: &HostTensor) -> usize {
    h.data.len() * crate::data::element_size(dtype).expect("conformance types are encodable")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conformance::standard_cases;
    use crate::graphs::uid_of;

    #[test]
    fn prepared_inputs_are_seeded_and_rounded() {
        let case = standard_cases()
            .into_iter()
            .find(|c| c.name == "conv_fprop/3x3_pad1/bf16/nhwc")
            .unwrap();
        let a = case.prepare(5).unwrap();
        let b = case.prepare(5).unwrap();
        let c = case.prepare(6).unwrap();
        assert_eq!(a.buffers, b.buffers);
        assert_ne!(a.buffers, c.buffers);
        let x = &a.inputs[&uid_of(&a.graph, "x")];
        assert!(x.data.iter().all(|&v| round_to(DataType::Bfloat16, v) == v));
        let y = uid_of(&a.graph, "y");
        assert!(a.buffers[&y].iter().all(|&b| b == 0xFF));
        assert_eq!(a.buffers[&y].len(), 2 * 6 * 8 * 8 * 2);
    }
}
