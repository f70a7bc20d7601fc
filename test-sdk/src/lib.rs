//! CPU references, tolerances, seeded data and the conformance suite for hipDNN providers.
#![deny(missing_docs)]

pub mod conformance;
pub mod data;
pub mod executor;
pub mod graphs;
pub mod reference;
pub mod skip;
pub mod tensor;
pub mod tolerance;
