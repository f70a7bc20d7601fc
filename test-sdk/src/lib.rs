//! CPU references, tolerances, seeded data and the conformance suite for hipDNN providers.
