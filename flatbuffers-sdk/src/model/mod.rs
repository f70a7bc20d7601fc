//! Owned forms of every table, for building buffers and for the JSON form.
//!
//! Each type mirrors one schema table field for field (JSON uses the schema's field
//! names). `pack` writes it with the generated builders; `from_view` copies it out of
//! a verified buffer; the root types (`Graph`, `EngineConfig`, `EngineDetails`,
//! `EnginePrediction`, `SerializedGraphAndPlan`) also have `to_bytes`.
//! Optional scalars (`= null` in the schema) are `Option`s: `None` is absent on the
//! wire, never zero.
//!
//! Graphs also read and write upstream hipDNN's JSON dialect
//! ([`Graph::to_upstream_json`], [`Graph::from_upstream_json`]); [`Graph::from_json`]
//! takes either dialect ([`JsonDialect::detect`]).

mod attributes;
mod engine;
pub(crate) mod enum_name;
mod field;
mod graph;
pub(crate) mod json;
pub mod knob;
pub(crate) mod macros;
mod node;
mod upstream;

pub use attributes::*;
pub use engine::*;
pub use field::WireField;
pub use graph::*;
pub use node::{NodeAttributes, NodeAttributesRef};
pub use upstream::JsonDialect;
