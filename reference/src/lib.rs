//! CPU references for hipDNN graphs: what every operation should compute.
//!
//! The kernels here are the measure every provider is held to, and the `hipdnn`
//! command's `--check`. They need only the wire crates; the test harness built on them
//! (seeded test runs, the conformance suite) is `hipdnn-test-sdk`, which re-exports
//! this crate's modules under the same names.
//!
//! # Design
//!
//! * **Obviously correct over fast.** The [`kernels`] are direct loops over logical
//!   indices with `f64` accumulation. Convolution fprop, dgrad and wgrad share one loop
//!   over contributing `(x, w, y)` index triples, so the gradients are the exact
//!   adjoints of the forward pass, and the tests prove it with the dot-product
//!   identity. The other kernels are checked against hand-computed cases and finite
//!   differences.
//! * **Layouts are strides.** A [`tensor::HostTensor`] is dims + strides + `f32`
//!   storage; every kernel reads it by logical index, so NCHW, NHWC and padded layouts
//!   need no special cases, and the bytes a provider receives are the storage
//!   re-encoded in the tensor's type ([`data::encode`]).
//! * **References see what kernels see.** Values are drawn from a seeded ChaCha8
//!   stream ([`data::DataGen`]) and rounded to each tensor's type (fp16, bf16, ...)
//!   before a reference runs, and the [`executor`] rounds every tensor a node writes to
//!   its type. The remaining difference is a kernel's own arithmetic, which the per-op
//!   [`tolerance`] tables bound.
//!
//! # Modules
//!
//! * [`tensor`]: `HostTensor` and index helpers.
//! * [`kernels`]: conv fprop/dgrad/wgrad, batch norm (inference, training, backward),
//!   matmul, every pointwise and reduction mode, layer norm, RMS norm, pooling
//!   (resample forward).
//! * [`executor`]: a whole-graph interpreter over the kernels.
//! * [`tolerance`]: hipDNN's tolerance tables and the `atol + rtol·|expected|`
//!   comparison.
//! * [`data`]: the seeded generator, rounding to a type, tensor bytes.
//!
//! # Example
//!
//! ```
//! use hipdnn_reference::kernels::{conv_fprop, ConvParams};
//! use hipdnn_reference::tensor::HostTensor;
//! use hipdnn_reference::tolerance::{compare, tolerance, OpFamily};
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
//! # Ok::<(), hipdnn_reference::kernels::ReferenceError>(())
//! ```

#![deny(missing_docs)]

pub mod data;
pub mod executor;
pub mod kernels;
pub mod tensor;
pub mod tolerance;
