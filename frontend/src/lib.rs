//! The application-facing graph API (the role of hipDNN's frontend).
//!
//! A [`GraphBuilder`] collects tensors and operations the way hipDNN's and cuDNN's
//! frontends do: describe the graph inputs, call one method per operation (it returns the
//! output tensors, with their dims and strides inferred), mark the tensors the
//! application wants back as outputs, then [`build`](GraphBuilder::build) the
//! [`Graph`](hipdnn_flatbuffers_sdk::model::Graph) that plugins receive as FlatBuffer
//! bytes.
//!
//! The crate needs only the wire crates (`hipdnn-data-sdk`, `hipdnn-flatbuffers-sdk`), so
//! anything that makes graphs (applications, tests, tools) can use it without the
//! backend; `hipdnn-backend` re-exports it as `hipdnn_backend::frontend`.
//!
//! # Design
//!
//! * **Handles, not shared pointers.** cuDNN hands out `shared_ptr<Tensor_attributes>`
//!   that the application mutates. Here a [`Tensor`] is a copyable index into its
//!   builder; changes go through the builder ([`set_output`](GraphBuilder::set_output),
//!   [`set_uid`](GraphBuilder::set_uid), …), which keeps uids unique as they are set. A
//!   handle used with another builder is an error, not a wrong tensor.
//! * **Shapes are checked when an operation is added.** Each operation checks its
//!   operands (ranks, per-channel parameter dims, broadcasting, convolution geometry) and
//!   infers its outputs, so a mistake is reported at the call that made it, naming the
//!   node and the tensor with the dims involved ([`FrontendError`]). What only the whole
//!   graph shows (an unused tensor, a virtual output nobody reads, a data type left unset
//!   with no default) is found at build by the wire format's own
//!   [`Graph::validate`](hipdnn_flatbuffers_sdk::model::Graph::validate), the same check
//!   plugins run, so the two cannot disagree.
//! * **Uids are assigned at build.** A uid set by the application is kept (and checked for
//!   collisions when set); the others get the smallest free positive uids in creation
//!   order, so setting a uid late never collides with an assigned one.
//!   [`BuiltGraph::uid`] gives every tensor's uid for binding buffers.
//! * **Outputs follow their inputs' layout.** An operation's outputs are virtual and
//!   packed in the layout family (row-major or channels-last) of their main input, so an
//!   NHWC graph stays NHWC; matmul outputs are row-major.
//!   [`set_strides`](GraphBuilder::set_strides) overrides.
//! * **Data types default from the graph**, as the schema defines: `io_data_type` for
//!   non-virtual tensors, `intermediate_data_type` for virtual ones, `compute_data_type`
//!   for nodes; build fills in what is left unset.
//!
//! # What each operation infers
//!
//! | op | output dims |
//! |---|---|
//! | [`conv_fprop`](GraphBuilder::conv_fprop) | `[N, K, (in + pre + post − (dil·(k−1)+1)) / stride + 1 …]`, groups = `C / w[1]` |
//! | [`conv_dgrad`](GraphBuilder::conv_dgrad), [`conv_wgrad`](GraphBuilder::conv_wgrad) | given (`ConvAttrs::output_dims`), checked against `dy` |
//! | [`batchnorm_inference`](GraphBuilder::batchnorm_inference) | `y` = `x`'s dims |
//! | [`batchnorm_inference_variance`](GraphBuilder::batchnorm_inference_variance) | `y` = `x`'s dims |
//! | [`batchnorm`](GraphBuilder::batchnorm) | `y`; `mean`, `inv_variance` (and running stats) `[1, C, 1, …]` |
//! | [`batchnorm_backward`](GraphBuilder::batchnorm_backward) | `dx` = `x`'s dims; `dscale`, `dbias` `[1, C, 1, …]` |
//! | [`pointwise`](GraphBuilder::pointwise) | numpy broadcast of the inputs |
//! | [`matmul`](GraphBuilder::matmul) | `[broadcast(batch…), m, n]` |
//! | [`reduction`](GraphBuilder::reduction) | given (`ReductionAttrs::output_dims`), checked |
//! | [`resample_fwd`](GraphBuilder::resample_fwd) | `[N, C, (in + pre + post − window) / stride + 1 …]` |
//! | [`layernorm`](GraphBuilder::layernorm) | `y` = `x`'s dims; stats `[leading…, 1, …]` |
//! | [`rmsnorm`](GraphBuilder::rmsnorm) | `y` = `x`'s dims; `inv_rms` = `x`'s dims, 1 where normalized |
//!
//! # Example
//!
//! A convolution, a bias add and a ReLU on NHWC tensors, with the application's uids on
//! the tensors it binds:
//!
//! ```
//! use hipdnn_frontend::{
//!     ConvAttrs, DataType, GraphBuilder, PointwiseAttrs, PointwiseMode, TensorDescriptor,
//!     TensorLayout,
//! };
//! use hipdnn_flatbuffers_sdk::GraphView;
//!
//! let mut g = GraphBuilder::new("conv_bias_relu")
//!     .io_data_type(DataType::Half)
//!     .intermediate_data_type(DataType::Float)
//!     .compute_data_type(DataType::Float)
//!     .preferred_engine("MIOPEN_ENGINE");
//!
//! // Dims are always [N, C, H, W]; the layout only sets the strides (NHWC in memory).
//! let nhwc = TensorLayout::ChannelsLast;
//! let x = g.tensor(TensorDescriptor::new("x", [4, 64, 56, 56]).layout(nhwc).uid(1))?;
//! let w = g.tensor(TensorDescriptor::new("w", [128, 64, 3, 3]).layout(nhwc).uid(2))?;
//! let bias = g.tensor(TensorDescriptor::new("bias", [1, 128, 1, 1]).uid(3))?;
//!
//! let conv = g.conv_fprop(x, w, ConvAttrs::new().name("conv").padding([1, 1]).stride([2, 2]))?;
//! let biased = g.pointwise(&[conv, bias], PointwiseAttrs::new(PointwiseMode::ADD).name("bias"))?;
//! let y = g.pointwise(&[biased], PointwiseAttrs::new(PointwiseMode::RELU_FWD).name("relu"))?;
//! g.set_output(y, true)?.set_uid(y, 4)?;
//!
//! // Inferred: (56 + 1 + 1 - 3) / 2 + 1 = 28, laid out NHWC like x.
//! let info = g.tensor_info(y)?;
//! assert_eq!(info.dims(), [4, 128, 28, 28]);
//! assert_eq!(info.strides(), [100_352, 1, 3_584, 128]);
//!
//! let built = g.build()?;
//! assert_eq!(built.uid(y), Some(4));
//! assert_eq!(built.uid(conv), Some(5)); // intermediates take the free uids
//! let bytes = built.to_bytes();
//!
//! // What a plugin receives.
//! let view = GraphView::from_bytes(&bytes)?;
//! view.validate()?;
//! assert_eq!(view.node_count(), 3);
//! assert_eq!(view.tensor(4).unwrap().data_type(), DataType::Half); // io type
//! assert_eq!(view.tensor(5).unwrap().data_type(), DataType::Float); // intermediate type
//! assert!(view.tensor(5).unwrap().is_virtual());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![deny(missing_docs)]

mod attrs;
mod error;
mod graph;
mod op;
pub mod samples;
mod shape;
mod tensor;

pub use attrs::{
    BatchnormAttrs, BatchnormBackwardAttrs, BatchnormBackwardOutputs, BatchnormInferenceAttrs,
    BatchnormInferenceVarianceAttrs, BatchnormOutputs, ConvAttrs, LayernormAttrs, LayernormOutputs,
    MatmulAttrs, PointwiseAttrs, ReductionAttrs, ResampleAttrs, RmsnormAttrs, RmsnormOutputs,
};
pub use error::{FrontendError, TensorLabel};
pub use graph::{BuiltGraph, GraphBuilder};
pub use tensor::{Tensor, TensorDescriptor, TensorInfo};

/// Re-exported so a frontend user needs no other import for the common cases.
pub use hipdnn_data_sdk::{DataType, TensorLayout};
/// Re-exported so a frontend user needs no other import for the common cases.
pub use hipdnn_flatbuffers_sdk::TensorValue;
/// Re-exported so a frontend user needs no other import for the common cases.
pub use hipdnn_flatbuffers_sdk::wire::{
    ConvMode, NormFwdPhase, PaddingMode, PointwiseMode, ReductionMode, ResampleMode,
};

#[cfg(test)]
mod tests;
