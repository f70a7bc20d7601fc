//! kernels tests.
