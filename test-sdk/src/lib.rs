//! CPU references, tolerances, seeded data and the conformance suite for hipDNN providers.
#![deny(missing_docs)]

pub mod data;
pub mod graphs;
pub mod reference;
pub mod tensor;
pub mod tolerance;
