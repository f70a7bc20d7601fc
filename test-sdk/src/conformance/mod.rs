//! The provider conformance suite: one list of cases, run against any [`Provider`].
//!
//! A [`Case`] is data: an [`Op`] with its shapes and attributes, a
//! [`Layout`](crate::graphs::Layout) and an I/O
//! [`DataType`](hipdnn_data_sdk::DataType). For each case the suite builds the graph
//! ([`crate::graphs`]), draws seeded inputs rounded to each tensor's type
//! ([`crate::data`]), computes the expected outputs with the references
//! ([`crate::reference`]), hands the graph and the buffers to the provider, and compares
//! what it wrote under the op's tolerance ([`crate::tolerance`]) plus one unit in the
//! last place of the output type.
//!
//! # Running a provider
//!
//! ```
//! use std::collections::BTreeMap;
//! use hipdnn_flatbuffers_sdk::model::Graph;
//! use hipdnn_test_sdk::conformance::{run_suite, Provider, SkipList};
//! use hipdnn_test_sdk::executor::execute_graph;
//!
//! struct MyProvider;
//! impl Provider for MyProvider {
//!     fn name(&self) -> &str { "mine" }
//!     fn execute(&self, graph: &Graph, buffers: &mut BTreeMap<i64, Vec<u8>>) -> Result<(), String> {
//!         if graph.name == "matmul" {
//!             return Err("no matmul yet".into());
//!         }
//!         execute_graph(graph, buffers) // a real provider runs its own kernels here
//!     }
//! }
//!
//! let skips = SkipList::new()
//!     .pattern("matmul/*", "matmul kernels are not written yet")
//!     .predicate("3-D convolutions need NCDHW support", |c| c.name.contains("/3d_"));
//! let report = run_suite(&MyProvider, &skips);
//! report.print_summary();
//! report.assert_passed();
//! ```
//!
//! # Running an engine plugin
//!
//! A plugin's shared library runs this suite through the backend with the
//! `hipdnn-conformance` crate, which makes each case a named test (filters, `--list`,
//! skips shown as ignored with their reason):
//!
//! ```text
//! cargo run -p hipdnn-conformance -- --plugin path/to/libmy_plugin.so [--engine NAME] \
//!     [--knob ID=VALUE]... [--skip PATTERN=REASON]... [conv_fprop/ ...]
//! ```
//!
//! It is a [`Provider`] like the others: for each case it builds a plan on the engine
//! and executes it with buffers of the memory the engine declares (aligned host memory,
//! or device memory from an allocator a GPU build supplies).
//!
//! # Buffers
//!
//! `buffers` maps the uid of every non-virtual tensor that is not a pass-by-value
//! scalar to its bytes: the tensor's data type, little-endian, laid out by its strides
//! (element at offset `o` occupies bytes `o·size .. (o+1)·size`). Inputs hold the
//! data; outputs are pre-allocated and filled with `0xFF` bytes (NaN in every float
//! type), so an output the provider does not write fails. A provider must not resize
//! buffers or change inputs.
//!
//! # Outcomes
//!
//! A case is skipped when a [`SkipList`] rule matches it (the reason is reported);
//! otherwise it fails when the provider returns an error, panics, changes an input,
//! or writes an output outside tolerance, and passes otherwise. Skips are reported as
//!
//! # Modules
//!
//! * [`op`]: what a case runs ([`Op`]): its graph and tolerance table.
//! * [`cases`]: [`Case`] and the suite's lists, [`standard_cases`] and
//!   [`extended_cases`] (fusions some engines run as one call).
//! * [`inputs`]: how each input is drawn.
//! * [`prepare`]: a case's graph, buffers and expected outputs ([`Prepared`]), the
//!   expected outputs computed in [`expected`].
//! * [`skip_list`]: [`SkipList`], the cases a provider does not support and why.
//! * [`run`]: the [`Provider`] interface and [`run_case`] / [`run_cases`] /
//!   [`run_suite`].
//! * [`report`]: [`Outcome`]s and the [`Report`] of a run.

pub mod cases;
pub mod expected;
pub mod inputs;
pub mod op;
pub mod prepare;
pub mod report;
pub mod run;
pub mod skip_list;

pub use cases::{Case, conv_shapes, dtype_tag, extended_cases, pointwise_variants, standard_cases};
pub use op::Op;
pub use prepare::Prepared;
pub use report::{CaseResult, Outcome, Report};
pub use run::{Provider, run_case, run_cases, run_suite};
pub use skip_list::{SkipList, glob_match};
