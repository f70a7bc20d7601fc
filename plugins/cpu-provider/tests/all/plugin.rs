//! plugin tests.
