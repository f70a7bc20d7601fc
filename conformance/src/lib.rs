//! The provider conformance suite ([`hipdnn_test_sdk::conformance`]) against any engine
//! plugin's shared library, through the backend, one named test per case.
//!
//! A plugin is tested as applications reach it: the backend loads its `.so` (discovery,
//! handshake, engine admission), and for each case the graph becomes an
//! `OperationGraph`, the engine's details say which memory it takes and which knobs it
//! has, `create_plan` builds a plan with the run's knob settings, and `Plan::execute`
//! runs it on a `VariantPack`. The cases, inputs, expected outputs and tolerances are
//! the test SDK's, so the CPU provider, the GPU providers and plugins written elsewhere
//! run exactly the same suite.
//!
//! # Running it against a plugin
//!
//! From a checkout of this project, on any plugin's shared library:
//!
//! ```text
//! cargo run -p hipdnn-conformance -- --plugin path/to/libmy_plugin.so [--engine NAME] \
//!     [--knob ID=VALUE]... [--skip PATTERN=REASON]... [TEST ARGS]
//! ```
//!
//! Every case is a test named `<engine>/<op>/<shape>/<dtype>/<layout>` (for example
//! `CPU_ENGINE/conv_fprop/3x3_pad1/fp32/nhwc`), so the usual test arguments apply:
//! a filter (`conv_fprop/`, `--exact NAME`, `--skip FILTER` after `--`), `--list`,
//! `--test-threads N`, `--ignored` / `--include-ignored` (also run the skipped cases).
//! Skipped cases show as ignored, with the reason; a failure shows the case's message
//! and the seed to reproduce it (`HIPDNN_TEST_SEED`).
//!
//! From a plugin crate's own tests, a test target with `harness = false` calls
//! [`PluginSuite::main`] (or [`main_for_plugin`]), after building the crate's `.so` with
//! [`cdylib::build_cdylibs`]; `cargo test --test conformance -- conv_fprop/` then runs
//! the convolutions.
//!
//! # Memory
//!
//! Each tensor gets one buffer of the kind its engine declares
//! ([`hipdnn_data_sdk::MemoryKind::from_behavior_notes`] on the engine's details):
//! host engines get host memory aligned to [`MIN_ALIGNMENT`] bytes (or the tensor's
//! larger alignment); device engines get memory of a [`DeviceAllocator`] (allocate, copy
//! in both directions, synchronize after the execution, free): by default
//! [`GpuAllocator`], CUDA device 0 through `hipdnn-gpu` (the CUDA driver loaded at run
//! time), opened when a device engine's first case needs it, or the one given to
//! [`PluginSuite::device_allocator`]. When the GPU does not open, each case of a device
//! engine fails with the reason (`libcuda.so.1 not found`, `no CUDA device`, ...); with
//! [`PluginSuite::without_device_allocator`], saying that no device allocator is
//! available. Either way it neither passes nor disappears.
//!
//! # Where it lives
//!
//! The runner depends on both the backend and the test SDK, and neither depends on it:
//! the backend stays free of test code, and the test SDK of the backend (in-process
//! providers such as [`hipdnn_test_sdk::executor::ReferenceProvider`] still run the
//! suite with [`hipdnn_test_sdk::conformance::run_suite`]).
//!
//! # Modules
//!
//! * [`harness`]: [`PluginSuite`] and [`EngineRun`], the tests and a test binary's `main`.
//! * [`plugin`]: [`PluginUnderTest`] (the `.so` loaded by the backend) and
//!   [`EngineProvider`] (one engine with knob settings as a conformance `Provider`).
//! * [`memory`]: aligned host buffers, the [`DeviceAllocator`] trait, per-tensor memory.
//! * [`gpu`]: [`GpuAllocator`], the allocator of a CUDA GPU.
//! * [`cdylib`]: building a package's `.so` from its tests with a nested cargo.

#![deny(missing_docs)]

pub mod cdylib;
pub mod gpu;
pub mod harness;
pub mod memory;
pub mod plugin;

pub use gpu::GpuAllocator;
pub use harness::{EngineChoice, EngineRun, PluginSuite, main_for_plugin};
pub use memory::{DeviceAllocator, MIN_ALIGNMENT};
pub use plugin::{EngineProvider, PluginUnderTest};
