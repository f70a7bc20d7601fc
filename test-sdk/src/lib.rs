//! CPU references, tolerances, seeded data and the conformance suite for hipDNN providers.
//!
//! This crate is to hipdnn-rs what hipDNN's `test_sdk` is to hipDNN: the one place
//! that knows what every operation should compute, and the one suite every provider
//! (the CPU provider, MIOpen, ...) is measured with.
//!
//! The references themselves (kernels, the whole-graph executor, host tensors,
//! tolerances, tensor bytes) live in `hipdnn-reference`, which needs no test harness
//! (the `hipdnn` command checks its runs with them); this crate re-exports them under
//! the same module names and adds what only tests need.
//!
//! # Design
//!
//! * **References see what kernels see.** Inputs are drawn from a seeded ChaCha8
//!   stream and rounded to each tensor's type (fp16, bf16, ...) before the reference
//!   runs; expected outputs are rounded to the output type. The remaining difference
//!   is the kernel's own arithmetic, which the per-op [`tolerance`] tables bound.
//! * **Cases are data.** A [`conformance::Case`] is an op with its attributes and
//!   shapes, a layout and a data type; [`conformance::standard_cases`] lists them all.
//!   Providers differ only in a [`conformance::Provider`] impl and a
//!   [`conformance::SkipList`] whose every entry says why. Skips are reported, never
//!   counted as passes, and so are tests skipped for lack of a device
//!   ([`skip_if_no_device!`]). Engine plugins run the suite as applications reach them,
//!   their `.so` loaded by the backend, with the `hipdnn-conformance` crate
//!   (`cargo run -p hipdnn-conformance -- --plugin PATH`), one named test per case.
//! * **The suite tests itself.** [`executor::ReferenceProvider`] interprets the graphs
//!   with the references (independently of the per-case expected values) and must pass
//!   every case; a provider that perturbs its outputs must fail every case.
//! * **Graphs come from the frontend.** The [`graphs`] are built with
//!   `hipdnn-frontend`'s graph builder, the one applications use.
//!
//! # Modules
//!
//! * [`tensor`] (re-exported): `HostTensor` and index helpers.
//! * [`reference`](mod@reference) (re-exported `hipdnn_reference::kernels`): conv
//!   fprop/dgrad/wgrad, batch norm (inference, training, backward), matmul, every
//!   pointwise and reduction mode, layer norm, RMS norm.
//! * [`tolerance`] (re-exported): hipDNN's tolerance tables and the
//!   `atol + rtol·|expected|` comparison.
//! * [`data`]: the run's seed (`HIPDNN_TEST_SEED`); re-exported: the generator,
//!   rounding, bytes.
//! * [`graphs`]: builders of the common graphs.
//! * [`executor`]: the whole-graph reference interpreter (re-exported) and the
//!   reference provider.
//! * [`conformance`]: the suite.
//! * [`skip`]: reporting tests skipped for lack of a device ([`skip_if_no_device!`]).
//!
//! # Example
//!
//! ```
//! use hipdnn_test_sdk::reference::{conv_fprop, ConvParams};
//! use hipdnn_test_sdk::tensor::HostTensor;
//! use hipdnn_test_sdk::tolerance::{compare, tolerance, OpFamily};
//! use hipdnn_data_sdk::{DataType, TensorLayout};
//!
//! // A 3×3 box filter over a 4×4 image of ones, padded by 1, stored NHWC.
//! let x = HostTensor::from_vec([1, 1, 4, 4], &[1.0; 16]).relayout([16, 1, 4, 1]);
//! let w = HostTensor::from_vec([1, 1, 3, 3], &[1.0; 9]);
//! let p = ConvParams::new(2).padding(1);
//! let mut y = HostTensor::with_layout(p.output_dims(&x.dims, &w.dims)?, TensorLayout::Nhwc);
//! conv_fprop(&x, &w, &mut y, &p)?;
//! let expected = [4.0, 6.0, 6.0, 4.0, 6.0, 9.0, 9.0, 6.0, 6.0, 9.0, 9.0, 6.0, 4.0, 6.0, 6.0, 4.0];
//! assert!(compare(&y.logical(), &expected, tolerance(OpFamily::ConvFprop, DataType::Float)).passed);
//! # Ok::<(), hipdnn_test_sdk::reference::ReferenceError>(())
//! ```

#![deny(missing_docs)]

pub mod conformance;
pub mod data;
pub mod executor;
pub mod graphs;
pub mod skip;

pub use hipdnn_reference::kernels as reference;
pub use hipdnn_reference::{tensor, tolerance};
