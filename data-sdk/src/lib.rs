//! Plain data shared by every hipdnn-rs crate: element types, tensor shapes
//! and engine ids.
//!
//! This crate sits at the bottom of the workspace. It knows nothing about
//! FlatBuffers, plugins or devices, and depends only on `half`, `serde`,
//! `thiserror` and `tracing`, so the backend, the plugin SDK and every plugin
//! can share it without pulling anything heavy in.
//!
//! # Design
//!
//! * **Wire values are the Rust values.** [`DataType`] is `#[repr(i8)]` with
//!   the discriminants of the FlatBuffers schema, so converting to the wire is
//!   a cast and converting from it is a bounds check ([`DataType::from_wire`]).
//!   hipDNN's frontend numbers its own enum differently; that numbering has no
//!   place here.
//! * **Storage types, not number types.** The [`fp8`] types wrap one byte and
//!   convert exactly to `f32` and, with documented rounding, back. Arithmetic
//!   is done in `f32`. [`Element`] ties each storage type to its `DataType` at
//!   compile time, so typed buffers cannot be described with the wrong tag.
//! * **Validate once, then trust.** [`check_dims_strides`] is what a graph
//!   validator runs on every tensor it reads from the wire; [`TensorDesc`]
//!   runs the same checks in its constructor and keeps its fields private, so
//!   code holding a `TensorDesc` never re-checks for negative extents or
//!   overflowing spans. All integer arithmetic on shapes is overflow-checked:
//!   shapes come from other processes and must not be able to cause a panic.
//! * **Ids are constants.** [`engine_name_to_id`] is a `const fn`, so
//!   [`engine_names`] holds every known engine name next to its id, and the
//!   registration macro rejects a hash collision when the crate compiles
//!   rather than when a program starts.
//!
//! # Example
//!
//! ```
//! use hipdnn_data_sdk::{
//!     engine_id_to_hex, engine_name_or_id_to_id, engine_names, DataType, Element,
//!     F8E4M3, TensorDesc, TensorLayout,
//! };
//!
//! // A half-precision NHWC activation tensor.
//! let x = TensorDesc::packed([8, 64, 56, 56], TensorLayout::Nhwc, DataType::Half)?;
//! assert_eq!(x.strides(), [200_704, 1, 3_584, 64]);
//! assert_eq!(x.byte_size()?, 8 * 64 * 56 * 56 * 2);
//! assert_eq!(x.layout(), Some(TensorLayout::Nhwc));
//!
//! // Wire values and names.
//! assert_eq!(DataType::Bfloat16.to_wire(), 3);
//! assert_eq!("fp8_e4m3".parse::<DataType>()?, <F8E4M3 as Element>::DATA_TYPE);
//!
//! // FP8 storage: 448 is the largest E4M3 value; larger inputs saturate.
//! assert_eq!(F8E4M3::from_f32(1e6).to_f32(), 448.0);
//!
//! // Engine ids, from a name or from what a user typed.
//! let id = engine_names::MIOPEN_ENGINE_ID;
//! assert_eq!(engine_id_to_hex(id), "0x15B46865C717A122");
//! assert_eq!(engine_name_or_id_to_id("MIOPEN_ENGINE"), id);
//! assert_eq!(engine_name_or_id_to_id("0x15B46865C717A122"), id);
//! # Ok::<(), hipdnn_data_sdk::DataSdkError>(())
//! ```

#![deny(missing_docs)]

pub mod data_type;
pub mod engine;
pub mod engine_names;
pub mod error;
pub mod fp8;
pub mod memory;
mod panic;
pub mod tensor;

pub use half;

pub use data_type::{DataType, Element};
pub use engine::{
    all_engine_names, engine_id_for_name_checked, engine_id_to_hex, engine_name_from_id,
    engine_name_or_id_to_id, engine_name_to_id, fnv1a_64, is_registered_engine_name,
};
pub use error::DataSdkError;
pub use fp8::{F8E4M3, F8E4M3Fnuz, F8E5M2, F8E5M2Fnuz, F8E8M0};
pub use memory::{HOST_MEMORY_BEHAVIOR_NOTE_EXT, MemoryKind};
pub use panic::panic_message;
pub use tensor::{
    TensorDesc, TensorLayout, check_dims_strides, element_count, overlapping_dim, packed_strides,
};
