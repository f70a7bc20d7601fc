//! The one error type of this crate.

use crate::data_type::DataType;
use crate::tensor::TensorLayout;

/// Everything that can go wrong in `hipdnn-data-sdk`.
///
/// Each variant names the value (and, for shapes, the dimension index) that was
/// rejected, so a message read in a log is enough to find the faulty tensor.
/// Messages are lowercase and carry no trailing period.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DataSdkError {
    /// A string is not the schema name of any [`DataType`].
    #[error("unknown data type name {0:?}")]
    UnknownDataTypeName(String),

    /// An `i8` is not the wire value of any [`DataType`].
    #[error("unknown data type wire value {0}")]
    UnknownDataTypeWire(i8),

    /// A tensor descriptor was given [`DataType::Unset`].
    #[error("tensor data type is unset")]
    UnsetDataType,

    /// `dims` and `strides` have different lengths.
    #[error("rank mismatch: {dims} dims but {strides} strides")]
    RankMismatch {
        /// Number of dimensions given.
        dims: usize,
        /// Number of strides given.
        strides: usize,
    },

    /// A tensor was described with no dimensions at all.
    #[error("tensor has rank 0, at least one dimension is required")]
    EmptyShape,

    /// A dimension is zero or negative where a positive extent is required.
    #[error("dimension {index} is {value}, expected a positive extent")]
    NonPositiveDim {
        /// Position of the dimension.
        index: usize,
        /// The rejected extent.
        value: i64,
    },

    /// A dimension is negative.
    #[error("dimension {index} is {value}, expected a non-negative extent")]
    NegativeDim {
        /// Position of the dimension.
        index: usize,
        /// The rejected extent.
        value: i64,
    },

    /// A stride is negative.
    #[error("stride {index} is {value}, expected a non-negative stride")]
    NegativeStride {
        /// Position of the stride.
        index: usize,
        /// The rejected stride.
        value: i64,
    },

    /// A layout that fixes the rank was used with a shape of another rank.
    #[error("layout {layout:?} needs rank {expected}, got rank {rank}")]
    LayoutRank {
        /// The layout asked for.
        layout: TensorLayout,
        /// The rank it needs, in words (`"4"`, `"at least 2"`).
        expected: &'static str,
        /// The rank that was given.
        rank: usize,
    },

    /// An integer computed from a shape does not fit its type.
    #[error("{quantity} overflows at dimension {index}")]
    Overflow {
        /// What was being computed: `"element count"`, `"packed stride"`,
        /// `"addressable span"`.
        quantity: &'static str,
        /// The dimension whose contribution overflowed.
        index: usize,
    },

    /// The byte size of a tensor does not fit in a `u64`.
    #[error("byte size of {elements} elements of {data_type} overflows u64")]
    ByteSizeOverflow {
        /// Number of addressed elements.
        elements: u64,
        /// The element type.
        data_type: DataType,
    },
}
