//! Integration tests of the CPU engine (one binary: shared link time).

mod fusion;
mod kernels;
mod plugin;
mod support;
