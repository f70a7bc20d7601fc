//! The whole-graph reference interpreter ([`execute_graph`], from `hipdnn-reference`) and
//! the [`ReferenceProvider`] the conformance suite tests itself with.

use std::collections::BTreeMap;

use hipdnn_flatbuffers_sdk::model::Graph;

pub use hipdnn_reference::executor::*;

use crate::conformance::Provider;

/// The references as a [`Provider`]: what every other provider is measured against,
/// and the conformance suite's self-test.
#[derive(Debug, Default, Clone, Copy)]
pub struct ReferenceProvider;

impl Provider for ReferenceProvider {
    fn name(&self) -> &str {
        "reference"
    }

    fn execute(&self, graph: &Graph, buffers: &mut BTreeMap<i64, Vec<u8>>) -> Result<(), String> {
        execute_graph(graph, buffers)
    }
}
