//! Tensor shapes: layouts, packed strides and validated descriptors.
//!
//! Shapes follow the hipDNN wire format: `dims` and `strides` are `i64`, one
//! per dimension, strides counted in elements (not bytes), dimension 0 is the
//! batch and dimension 1 the channels. A stride of 0 is legal (broadcast); a
//! negative one is not.

use crate::data_type::DataType;
use crate::error::DataSdkError;

/// How the dimensions of a dense tensor are ordered in memory.
///
/// `Nchw`/`Ncdhw` are [`Packed`](TensorLayout::Packed) (row-major) fixed to
/// rank 4/5, and `Nhwc`/`Ndhwc` are
/// [`ChannelsLast`](TensorLayout::ChannelsLast) fixed to rank 4/5. The
/// fixed-rank names exist because kernels and users speak in them; the generic
/// ones cover 3-d (NWC) and higher-rank tensors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TensorLayout {
    /// Row-major, any rank: the last dimension is innermost.
    Packed,
    /// Channels-last, rank ≥ 2: dimension 1 is innermost, then the spatial
    /// dimensions from last to first, then dimension 0 outermost.
    ChannelsLast,
    /// Rank-4 row-major: N, C, H, W.
    Nchw,
    /// Rank-4 channels-last: memory order N, H, W, C.
    Nhwc,
    /// Rank-5 row-major: N, C, D, H, W.
    Ncdhw,
    /// Rank-5 channels-last: memory order N, D, H, W, C.
    Ndhwc,
}

impl TensorLayout {
    /// True for the layouts that put dimension 1 innermost.
    pub const fn is_channels_last(self) -> bool {
        matches!(self, Self::ChannelsLast | Self::Nhwc | Self::Ndhwc)
    }

    /// The only rank this layout accepts, if it fixes one.
    pub const fn fixed_rank(self) -> Option<usize> {
        match self {
            Self::Nchw | Self::Nhwc => Some(4),
            Self::Ncdhw | Self::Ndhwc => Some(5),
            Self::Packed | Self::ChannelsLast => None,
        }
    }

    /// Checks that a shape of rank `rank` can have this layout.
    ///
    /// # Errors
    ///
    /// [`DataSdkError::LayoutRank`] if `rank` differs from
    /// [`fixed_rank`](Self::fixed_rank), or is below 2 for
    /// [`ChannelsLast`](Self::ChannelsLast).
    pub fn check_rank(self, rank: usize) -> Result<(), DataSdkError> {
        let expected = match self {
            Self::Nchw | Self::Nhwc => "4",
            Self::Ncdhw | Self::Ndhwc => "5",
            Self::ChannelsLast => "at least 2",
            Self::Packed => return Ok(()),
        };
        let ok = match self.fixed_rank() {
            Some(r) => rank == r,
            None => rank >= 2,
        };
        if ok {
            Ok(())
        } else {
            Err(DataSdkError::LayoutRank {
                layout: self,
                expected,
                rank,
            })
        }
    }

    /// Dimension indices from innermost to outermost.
    fn innermost_first(self, rank: usize) -> impl Iterator<Item = usize> {
        let channels_last = self.is_channels_last() && rank >= 2;
        // Row-major: r-1, ..., 1, 0. Channels-last: 1, r-1, ..., 2, 0.
        let head = channels_last.then_some(1);
        let middle = (usize::from(channels_last)..rank)
            .rev()
            .filter(move |&i| !(channels_last && (i == 1 || i == 0)));
        let tail = channels_last.then_some(0);
        head.into_iter().chain(middle).chain(tail)
    }

    /// The layouts [`TensorDesc::layout`] tries for a rank, most specific first.
    fn candidates(rank: usize) -> &'static [TensorLayout] {
        match rank {
            4 => &[Self::Nchw, Self::Nhwc],
            5 => &[Self::Ncdhw, Self::Ndhwc],
            _ => &[Self::Packed, Self::ChannelsLast],
        }
    }
}

/// Strides of a dense tensor of shape `dims` in `layout`, in elements.
///
/// A zero extent counts as 1 when computing the strides of outer dimensions,
/// so every stride stays positive even for an empty tensor.
///
/// # Errors
///
/// * [`DataSdkError::LayoutRank`] if `layout` does not allow this rank;
/// * [`DataSdkError::NegativeDim`] for a negative extent;
/// * [`DataSdkError::Overflow`] if a stride does not fit in an `i64`.
///
/// # Example
///
/// ```
/// use hipdnn_data_sdk::{packed_strides, TensorLayout};
///
/// assert_eq!(packed_strides(&[2, 3, 4, 5], TensorLayout::Nchw)?, [60, 20, 5, 1]);
/// assert_eq!(packed_strides(&[2, 3, 4, 5], TensorLayout::Nhwc)?, [60, 1, 15, 3]);
/// # Ok::<(), hipdnn_data_sdk::DataSdkError>(())
/// ```
pub fn packed_strides(dims: &[i64], layout: TensorLayout) -> Result<Vec<i64>, DataSdkError> {
    layout.check_rank(dims.len())?;
    if let Some((index, &value)) = dims.iter().enumerate().find(|&(_, &d)| d < 0) {
        return Err(DataSdkError::NegativeDim { index, value });
    }
    let mut strides = vec![0; dims.len()];
    let mut order = layout.innermost_first(dims.len()).peekable();
    let mut running: i64 = 1;
    while let Some(index) = order.next() {
        strides[index] = running;
        // The outermost extent only matters for the size, not for any stride.
        if order.peek().is_some() {
            running = running
                .checked_mul(dims[index].max(1))
                .ok_or(DataSdkError::Overflow {
                    quantity: "packed stride",
                    index,
                })?;
        }
    }
    Ok(strides)
}

/// Number of elements of a tensor of shape `dims`: the product of the extents,
/// 1 for rank 0 (a scalar) and 0 if any extent is 0.
///
/// # Errors
///
/// [`DataSdkError::NegativeDim`] for a negative extent, and
/// [`DataSdkError::Overflow`] if the product does not fit in a `u64`.
pub fn element_count(dims: &[i64]) -> Result<u64, DataSdkError> {
    let mut count: u64 = 1;
    for (index, &value) in dims.iter().enumerate() {
        let d = u64::try_from(value).map_err(|_| DataSdkError::NegativeDim { index, value })?;
        count = count.checked_mul(d).ok_or(DataSdkError::Overflow {
            quantity: "element count",
            index,
        })?;
    }
    Ok(count)
}

/// Checks a `dims`/`strides` pair as found in a graph: same non-zero rank,
/// every extent positive, every stride non-negative, and the largest element
/// offset `Σ (dims[i] - 1) · strides[i]` representable as an `i64`.
///
/// Errors are reported for the lowest offending index.
///
/// # Errors
///
/// [`DataSdkError::RankMismatch`], [`DataSdkError::EmptyShape`],
/// [`DataSdkError::NonPositiveDim`], [`DataSdkError::NegativeStride`] or
/// [`DataSdkError::Overflow`] (quantity `"addressable span"`).
pub fn check_dims_strides(dims: &[i64], strides: &[i64]) -> Result<(), DataSdkError> {
    span_elements(dims, strides).map(|_| ())
}

/// The dimension through which two different indices of a tensor reach the same
/// element, if any: `None` when every index of `dims` has an address of its own.
///
/// The test is the usual one for strided layouts, exact for every layout made of
/// nested dimensions (packed, permuted, padded): ignoring extents of 1, sort the
/// dimensions by stride; each stride must exceed the largest offset the dimensions
/// inside it reach, `Σ (dims[j] - 1) · strides[j]` over the smaller strides. A stride
/// of 0 on an extent above 1 (a broadcast) always fails it. Interleaved layouts that
/// happen not to collide (dims `[3, 2]`, strides `[2, 3]`) fail it too: no library
/// produces them, and an output laid out so is refused rather than guessed at.
///
/// Expects dims and strides that pass [`check_dims_strides`] (then no sum overflows);
/// others give `None` for what it cannot judge.
pub fn overlapping_dim(dims: &[i64], strides: &[i64]) -> Option<usize> {
    let mut order: Vec<usize> = (0..dims.len().min(strides.len()))
        .filter(|&i| dims[i] > 1)
        .collect();
    order.sort_by_key(|&i| (strides[i], i));
    let mut reach: i64 = 0;
    for i in order {
        if strides[i] <= reach {
            return Some(i);
        }
        reach = reach.checked_add((dims[i] - 1).checked_mul(strides[i])?)?;
    }
    None
}

/// Validates like [`check_dims_strides`] and returns
/// `1 + Σ (dims[i] - 1) · strides[i]`, the number of elements from the first
/// addressed one to the last.
fn span_elements(dims: &[i64], strides: &[i64]) -> Result<u64, DataSdkError> {
    if dims.len() != strides.len() {
        return Err(DataSdkError::RankMismatch {
            dims: dims.len(),
            strides: strides.len(),
        });
    }
    if dims.is_empty() {
        return Err(DataSdkError::EmptyShape);
    }
    for (index, (&d, &s)) in dims.iter().zip(strides).enumerate() {
        if d <= 0 {
            return Err(DataSdkError::NonPositiveDim { index, value: d });
        }
        if s < 0 {
            return Err(DataSdkError::NegativeStride { index, value: s });
        }
    }
    let overflow = |index| DataSdkError::Overflow {
        quantity: "addressable span",
        index,
    };
    let mut last_offset: i64 = 0;
    for (index, (&d, &s)) in dims.iter().zip(strides).enumerate() {
        last_offset = (d - 1)
            .checked_mul(s)
            .and_then(|reach| last_offset.checked_add(reach))
            .ok_or_else(|| overflow(index))?;
    }
    let span = last_offset
        .checked_add(1)
        .ok_or_else(|| overflow(dims.len() - 1))?;
    // `span` is at least 1, so the conversion cannot fail.
    Ok(span.unsigned_abs())
}

/// A validated tensor shape and element type.
///
/// Construction guarantees: rank ≥ 1, `dims.len() == strides.len()`, every
/// extent positive, every stride non-negative, the addressed span and the
/// element count fit their integer types, and the data type is set. The fields
/// are private so those guarantees hold for every value; read them through
/// [`dims`](Self::dims), [`strides`](Self::strides) and
/// [`data_type`](Self::data_type). Deserialising goes through the same checks.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "RawTensorDesc")]
pub struct TensorDesc {
    dims: Vec<i64>,
    strides: Vec<i64>,
    data_type: DataType,
    #[serde(skip)]
    element_count: u64,
    #[serde(skip)]
    span: u64,
}

#[derive(serde::Deserialize)]
struct RawTensorDesc {
    dims: Vec<i64>,
    strides: Vec<i64>,
    data_type: DataType,
}

impl TryFrom<RawTensorDesc> for TensorDesc {
    type Error = DataSdkError;

    fn try_from(raw: RawTensorDesc) -> Result<Self, Self::Error> {
        Self::new(raw.dims, raw.strides, raw.data_type)
    }
}

impl TensorDesc {
    /// Validates and builds a descriptor.
    ///
    /// # Errors
    ///
    /// Everything [`check_dims_strides`] rejects, an element count that
    /// overflows `u64`, and [`DataSdkError::UnsetDataType`].
    pub fn new(
        dims: impl Into<Vec<i64>>,
        strides: impl Into<Vec<i64>>,
        data_type: DataType,
    ) -> Result<Self, DataSdkError> {
        let (dims, strides) = (dims.into(), strides.into());
        let span = span_elements(&dims, &strides)?;
        let element_count = element_count(&dims)?;
        if data_type == DataType::Unset {
            return Err(DataSdkError::UnsetDataType);
        }
        Ok(Self {
            dims,
            strides,
            data_type,
            element_count,
            span,
        })
    }

    /// A dense descriptor with the strides of `layout`.
    ///
    /// # Errors
    ///
    /// As [`packed_strides`] and [`TensorDesc::new`] (so zero extents are
    /// rejected here).
    pub fn packed(
        dims: impl Into<Vec<i64>>,
        layout: TensorLayout,
        data_type: DataType,
    ) -> Result<Self, DataSdkError> {
        let dims = dims.into();
        let strides = packed_strides(&dims, layout)?;
        Self::new(dims, strides, data_type)
    }

    /// Extent of each dimension.
    pub fn dims(&self) -> &[i64] {
        &self.dims
    }

    /// Stride of each dimension, in elements.
    pub fn strides(&self) -> &[i64] {
        &self.strides
    }

    /// Element type.
    pub fn data_type(&self) -> DataType {
        self.data_type
    }

    /// Number of dimensions (at least 1).
    pub fn rank(&self) -> usize {
        self.dims.len()
    }

    /// Gives back the parts.
    pub fn into_parts(self) -> (Vec<i64>, Vec<i64>, DataType) {
        (self.dims, self.strides, self.data_type)
    }

    /// Number of logical elements (product of the extents).
    pub fn element_count(&self) -> u64 {
        self.element_count
    }

    /// Elements from the first addressed one to the last,
    /// `1 + Σ (dims[i] - 1) · strides[i]`. Smaller than
    /// [`element_count`](Self::element_count) when strides broadcast, larger
    /// when they leave gaps.
    pub fn span_elements(&self) -> u64 {
        self.span
    }

    /// Bytes a buffer must have to hold every addressed element:
    /// [`span_elements`](Self::span_elements) × the element width, rounded up
    /// to whole bytes for sub-byte types.
    ///
    /// # Errors
    ///
    /// [`DataSdkError::ByteSizeOverflow`] if that does not fit in a `u64`.
    pub fn byte_size(&self) -> Result<u64, DataSdkError> {
        // `new` rejects Unset, so the width is always known.
        let bits = u64::from(self.data_type.size_bits().unwrap_or(0));
        self.span
            .checked_mul(bits)
            .map(|b| b.div_ceil(8))
            .ok_or(DataSdkError::ByteSizeOverflow {
                elements: self.span,
                data_type: self.data_type,
            })
    }

    /// True if the elements fill a contiguous block with no gaps and no
    /// overlap, in any dimension order (not only the named layouts).
    /// Dimensions of extent 1 are ignored: their stride is never used.
    pub fn is_packed(&self) -> bool {
        let mut used: Vec<(i64, i64)> = self
            .dims
            .iter()
            .zip(&self.strides)
            .filter(|&(&d, _)| d > 1)
            .map(|(&d, &s)| (s, d))
            .collect();
        used.sort_unstable();
        let mut expected: i64 = 1;
        for (s, d) in used {
            if s != expected {
                return false;
            }
            // While the prefix is dense this product is the prefix's span, which
            // `new` bounded; checked anyway so no input can make this panic.
            match s.checked_mul(d) {
                Some(next) => expected = next,
                None => return false,
            }
        }
        true
    }

    /// The named layout whose packed strides these are, if any.
    ///
    /// Strides of extent-1 dimensions are ignored. When several layouts match
    /// (e.g. NCHW and NHWC when C = 1) the row-major one is returned. Rank 4
    /// reports `Nchw`/`Nhwc` and rank 5 `Ncdhw`/`Ndhwc`, never the generic
    /// names.
    pub fn layout(&self) -> Option<TensorLayout> {
        TensorLayout::candidates(self.rank())
            .iter()
            .copied()
            .find(|&layout| {
                packed_strides(&self.dims, layout).is_ok_and(|packed| {
                    self.dims
                        .iter()
                        .zip(self.strides.iter().zip(&packed))
                        .all(|(&d, (s, p))| d == 1 || s == p)
                })
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn packed_strides_of_named_layouts() {
        let dims = [2, 3, 4, 5];
        assert_eq!(
            packed_strides(&dims, TensorLayout::Nchw).unwrap(),
            [60, 20, 5, 1]
        );
        assert_eq!(
            packed_strides(&dims, TensorLayout::Packed).unwrap(),
            [60, 20, 5, 1]
        );
        assert_eq!(
            packed_strides(&dims, TensorLayout::Nhwc).unwrap(),
            [60, 1, 15, 3]
        );
        assert_eq!(
            packed_strides(&dims, TensorLayout::ChannelsLast).unwrap(),
            [60, 1, 15, 3]
        );
        let dims5 = [2, 3, 4, 5, 6];
        assert_eq!(
            packed_strides(&dims5, TensorLayout::Ncdhw).unwrap(),
            [360, 120, 30, 6, 1]
        );
        assert_eq!(
            packed_strides(&dims5, TensorLayout::Ndhwc).unwrap(),
            [360, 1, 90, 18, 3]
        );
        // NWC.
        assert_eq!(
            packed_strides(&[2, 3, 7], TensorLayout::ChannelsLast).unwrap(),
            [21, 1, 3]
        );
        // Rank 2 channels-last is row-major.
        assert_eq!(
            packed_strides(&[4, 3], TensorLayout::ChannelsLast).unwrap(),
            [3, 1]
        );
        assert_eq!(packed_strides(&[7], TensorLayout::Packed).unwrap(), [1]);
        assert!(
            packed_strides(&[], TensorLayout::Packed)
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn packed_strides_treat_zero_extent_as_one() {
        assert_eq!(
            packed_strides(&[2, 0, 4], TensorLayout::Packed).unwrap(),
            [4, 4, 1]
        );
    }

    #[test]
    fn packed_strides_errors() {
        let err = packed_strides(&[1, 2, 3], TensorLayout::Nchw).unwrap_err();
        assert_eq!(err.to_string(), "layout Nchw needs rank 4, got rank 3");
        assert!(packed_strides(&[5], TensorLayout::ChannelsLast).is_err());
        assert!(packed_strides(&[1, 2, 3, 4], TensorLayout::Ndhwc).is_err());
        assert_eq!(
            packed_strides(&[1, -2, 3], TensorLayout::Packed),
            Err(DataSdkError::NegativeDim {
                index: 1,
                value: -2
            })
        );
        let err = packed_strides(&[2, i64::MAX, 3], TensorLayout::Packed).unwrap_err();
        assert_eq!(
            err,
            DataSdkError::Overflow {
                quantity: "packed stride",
                index: 1
            }
        );
        // The outermost extent does not enter any stride.
        assert_eq!(
            packed_strides(&[i64::MAX, 3], TensorLayout::Packed).unwrap(),
            [3, 1]
        );
    }

    #[test]
    fn element_count_cases() {
        assert_eq!(element_count(&[]), Ok(1));
        assert_eq!(element_count(&[2, 3, 4]), Ok(24));
        assert_eq!(element_count(&[2, 0, 4]), Ok(0));
        assert_eq!(
            element_count(&[2, -1]),
            Err(DataSdkError::NegativeDim {
                index: 1,
                value: -1
            })
        );
        assert_eq!(element_count(&[i64::MAX, 2]), Ok(u64::MAX - 1));
        assert_eq!(
            element_count(&[i64::MAX, 2, 2]),
            Err(DataSdkError::Overflow {
                quantity: "element count",
                index: 2
            })
        );
    }

    #[test]
    fn check_dims_strides_errors_name_the_index() {
        assert_eq!(check_dims_strides(&[2, 3], &[3, 1]), Ok(()));
        assert_eq!(check_dims_strides(&[5], &[0]), Ok(()));
        let msg = |d: &[i64], s: &[i64]| check_dims_strides(d, s).unwrap_err().to_string();
        assert_eq!(msg(&[2, 3], &[1]), "rank mismatch: 2 dims but 1 strides");
        assert_eq!(
            msg(&[], &[]),
            "tensor has rank 0, at least one dimension is required"
        );
        assert_eq!(
            msg(&[2, 0, 3], &[3, 3, 1]),
            "dimension 1 is 0, expected a positive extent"
        );
        assert_eq!(
            msg(&[2, 3, -4], &[12, 4, 1]),
            "dimension 2 is -4, expected a positive extent"
        );
        assert_eq!(
            msg(&[2, 3], &[3, -1]),
            "stride 1 is -1, expected a non-negative stride"
        );
        assert_eq!(
            msg(&[2, 3], &[i64::MAX, 1]),
            "addressable span overflows at dimension 1"
        );
        assert_eq!(
            msg(&[3, 2], &[i64::MAX / 2 + 1, 1]),
            "addressable span overflows at dimension 0"
        );
        // Offset i64::MAX - 1 is the largest whose span still fits.
        assert_eq!(check_dims_strides(&[2], &[i64::MAX - 1]), Ok(()));
        assert_eq!(
            msg(&[2], &[i64::MAX]),
            "addressable span overflows at dimension 0"
        );
    }

    #[test]
    fn overlapping_dims_are_found_for_aliasing_strides_only() {
        // Packed, channels-last, padded, transposed: every index has its own address.
        assert_eq!(overlapping_dim(&[2, 1, 8, 8], &[64, 64, 8, 1]), None);
        assert_eq!(overlapping_dim(&[2, 3, 4, 5], &[60, 1, 15, 3]), None);
        assert_eq!(overlapping_dim(&[3, 4], &[8, 1]), None);
        assert_eq!(overlapping_dim(&[4, 3], &[1, 4]), None);
        // Extents of 1 take any stride.
        assert_eq!(overlapping_dim(&[1, 5], &[0, 1]), None);
        assert_eq!(overlapping_dim(&[1, 1], &[7, 7]), None);
        // Both batches written to the same place.
        assert_eq!(overlapping_dim(&[2, 1, 8, 8], &[0, 64, 8, 1]), Some(0));
        // Rows overlapping by one element.
        assert_eq!(overlapping_dim(&[3, 4], &[3, 1]), Some(0));
        // Equal strides on two dimensions.
        assert_eq!(overlapping_dim(&[2, 2], &[1, 1]), Some(1));
        // Interleaved, collision-free but not nested: refused too.
        assert_eq!(overlapping_dim(&[3, 2], &[2, 3]), Some(1));
    }

    #[test]
    fn descriptor_basics() {
        let t = TensorDesc::packed([2, 3, 4, 5], TensorLayout::Nhwc, DataType::Half).unwrap();
        assert_eq!(t.dims(), [2, 3, 4, 5]);
        assert_eq!(t.strides(), [60, 1, 15, 3]);
        assert_eq!(t.rank(), 4);
        assert_eq!(t.element_count(), 120);
        assert_eq!(t.byte_size(), Ok(240));
        assert!(t.is_packed());
        assert_eq!(t.layout(), Some(TensorLayout::Nhwc));
        assert_eq!(
            TensorDesc::new([2, 3], [3, 1], DataType::Unset),
            Err(DataSdkError::UnsetDataType)
        );
        assert!(TensorDesc::packed([2, 0, 3], TensorLayout::Packed, DataType::Float).is_err());
        let (d, s, dt) = t.into_parts();
        assert_eq!((d.len(), s.len(), dt), (4, 4, DataType::Half));
    }

    #[test]
    fn byte_size_uses_the_addressed_span() {
        // Padded rows: 3 rows of 4 elements, row pitch 8. Last element is at
        // offset 2*8 + 3 = 19, so 20 elements are addressed.
        let t = TensorDesc::new([3, 4], [8, 1], DataType::Float).unwrap();
        assert_eq!(t.element_count(), 12);
        assert_eq!(t.span_elements(), 20);
        assert_eq!(t.byte_size(), Ok(80));
        assert!(!t.is_packed());
        assert_eq!(t.layout(), None);
        // Broadcast: one row read 5 times.
        let b = TensorDesc::new([5, 4], [0, 1], DataType::Double).unwrap();
        assert_eq!(b.byte_size(), Ok(32));
        assert!(!b.is_packed());
        // Sub-byte types round up to whole bytes.
        let i4 = TensorDesc::packed([3], TensorLayout::Packed, DataType::Int4).unwrap();
        assert_eq!(i4.byte_size(), Ok(2));
        let f6 = TensorDesc::packed([5], TensorLayout::Packed, DataType::Fp6E2m3).unwrap();
        assert_eq!(f6.byte_size(), Ok(4)); // 30 bits
        // Bytes overflow even though the element span fits.
        let big = TensorDesc::new([2], [i64::MAX / 2], DataType::Int64).unwrap();
        assert!(matches!(
            big.byte_size(),
            Err(DataSdkError::ByteSizeOverflow { .. })
        ));
    }

    #[test]
    fn is_packed_accepts_any_dense_permutation() {
        // Dimension order (innermost first): 0, 2, 1.
        let t = TensorDesc::new([2, 3, 4], [1, 8, 2], DataType::Float).unwrap();
        assert!(t.is_packed());
        assert_eq!(t.layout(), None);
        // Extent-1 dimensions may carry any stride.
        let t = TensorDesc::new([2, 1, 4], [4, 999, 1], DataType::Float).unwrap();
        assert!(t.is_packed());
        assert_eq!(t.layout(), Some(TensorLayout::Packed));
        // Overlap.
        let t = TensorDesc::new([2, 3], [1, 1], DataType::Float).unwrap();
        assert!(!t.is_packed());
    }

    #[test]
    fn layout_detection_prefers_row_major() {
        // C = 1: NCHW and NHWC strides coincide on every dimension that matters.
        let t = TensorDesc::packed([2, 1, 4, 5], TensorLayout::Nhwc, DataType::Float).unwrap();
        assert_eq!(t.layout(), Some(TensorLayout::Nchw));
        let t = TensorDesc::packed([2, 3, 4, 5, 6], TensorLayout::Ndhwc, DataType::Float).unwrap();
        assert_eq!(t.layout(), Some(TensorLayout::Ndhwc));
        let t = TensorDesc::packed([2, 3, 7], TensorLayout::ChannelsLast, DataType::Float).unwrap();
        assert_eq!(t.layout(), Some(TensorLayout::ChannelsLast));
    }

    #[test]
    fn serde_validates() {
        let t = TensorDesc::packed([2, 3], TensorLayout::Packed, DataType::Bfloat16).unwrap();
        let json = serde_json::to_string(&t).unwrap();
        assert_eq!(
            json,
            r#"{"dims":[2,3],"strides":[3,1],"data_type":"BFLOAT16"}"#
        );
        assert_eq!(serde_json::from_str::<TensorDesc>(&json).unwrap(), t);
        let bad = r#"{"dims":[2,3],"strides":[3,-1],"data_type":"FLOAT"}"#;
        let err = serde_json::from_str::<TensorDesc>(bad).unwrap_err();
        assert!(err.to_string().contains("stride 1 is -1"), "{err}");
    }

    fn layout_for_rank(rank: usize) -> impl Strategy<Value = TensorLayout> {
        let mut layouts = vec![TensorLayout::Packed];
        if rank >= 2 {
            layouts.push(TensorLayout::ChannelsLast);
        }
        match rank {
            4 => layouts.extend([TensorLayout::Nchw, TensorLayout::Nhwc]),
            5 => layouts.extend([TensorLayout::Ncdhw, TensorLayout::Ndhwc]),
            _ => {}
        }
        proptest::sample::select(layouts)
    }

    fn packed_case() -> impl Strategy<Value = (Vec<i64>, TensorLayout, DataType)> {
        proptest::collection::vec(1i64..=9, 1..=6).prop_flat_map(|dims| {
            let rank = dims.len();
            (
                Just(dims),
                layout_for_rank(rank),
                proptest::sample::select(DataType::ALL[1..].to_vec()),
            )
        })
    }

    proptest! {
        /// Whatever `overlapping_dim` accepts has no two indices at one address, and
        /// every layout it refuses either collides or interleaves its dimensions.
        #[test]
        fn accepted_layouts_never_collide(
            shape in proptest::collection::vec((1i64..4, 0i64..12), 1..4)
        ) {
            let (dims, strides): (Vec<i64>, Vec<i64>) = shape.into_iter().unzip();
            let mut offsets = Vec::new();
            let mut idx = vec![0i64; dims.len()];
            'all: loop {
                offsets.push(idx.iter().zip(&strides).map(|(i, s)| i * s).sum::<i64>());
                for d in (0..dims.len()).rev() {
                    idx[d] += 1;
                    if idx[d] < dims[d] {
                        continue 'all;
                    }
                    idx[d] = 0;
                }
                break;
            }
            offsets.sort_unstable();
            let collides = offsets.windows(2).any(|w| w[0] == w[1]);
            if overlapping_dim(&dims, &strides).is_none() {
                prop_assert!(!collides, "dims {:?} strides {:?}", dims, strides);
            }
        }
    }

    proptest! {
        #[test]
        fn packed_descriptors_are_packed((dims, layout, dt) in packed_case()) {
            let t = TensorDesc::packed(dims.clone(), layout, dt).unwrap();
            prop_assert!(t.is_packed());
            prop_assert_eq!(t.span_elements(), t.element_count());
            let bits = u64::from(dt.size_bits().unwrap());
            prop_assert_eq!(t.byte_size().unwrap(), (t.element_count() * bits).div_ceil(8));
            if let Some(bytes) = dt.size_bytes() {
                prop_assert_eq!(t.byte_size().unwrap(), t.element_count() * bytes as u64);
            }
            let found = t.layout();
            prop_assert!(found.is_some());
            let again = TensorDesc::packed(dims, found.unwrap(), dt).unwrap();
            prop_assert_eq!(again.layout(), found);
        }

        #[test]
        fn validation_never_panics(
            dims in proptest::collection::vec(any::<i64>(), 0..5),
            strides in proptest::collection::vec(any::<i64>(), 0..5),
        ) {
            let ok = check_dims_strides(&dims, &strides).is_ok();
            let _ = element_count(&dims);
            let _ = packed_strides(&dims, TensorLayout::Packed);
            if let Ok(t) = TensorDesc::new(dims.clone(), strides.clone(), DataType::Float) {
                prop_assert!(ok);
                let _ = (t.byte_size(), t.is_packed(), t.layout());
            }
        }
    }
}
