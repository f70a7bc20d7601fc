//! Graph analysis that plan builders share: an index of who writes and reads each
//! tensor ([`GraphIndex`]) and the fusable chains of a graph ([`partition`]).
//!
//! Plan builders answer two questions about a graph: *can I run it?* (cheaply, for
//! applicability) and *how?* (when building the plan). Both start from the same
//! analysis: index the graph, cut it into chains the engine's kernels can fuse, then
//! check each chain's nodes. Doing that analysis once, with these blocks, keeps the
//! applicability check a fraction of the cost of building a plan.
//!
//! ```
//! use hipdnn_frontend::samples;
//! use hipdnn_plugin_sdk::graph::{GraphIndex, StandardPatterns, partition};
//!
//! let graph = samples::pointwise_chain(3);
//! let index = GraphIndex::new(&graph)?;
//! for chain in partition(&index, &StandardPatterns) {
//!     let names: Vec<&str> = chain.nodes().map(|n| index.node(n).name.as_str()).collect();
//!     assert_eq!(names, ["pw0", "pw1", "pw2"]); // one kernel, two virtual intermediates
//!     assert_eq!(chain.virtual_intermediates.len(), 2);
//! }
//! # Ok::<(), hipdnn_flatbuffers_sdk::GraphError>(())
//! ```

mod fusion;
mod index;

pub use fusion::{
    AnyEpilogue, Chain, ChainPattern, ChainStep, FusionPolicy, HeadKind, StandardPatterns,
    StepRole, is_activation, partition, primary_output,
};
pub use index::GraphIndex;
