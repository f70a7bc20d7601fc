//! [`HostTensor`]: a logical tensor over `f32` storage laid out by arbitrary strides.
//!
//! Every reference in [`crate::kernels`] reads and writes `HostTensor`s by logical
//! index, so the same reference serves NCHW, NHWC and any other stride pattern: the
//! layout only decides where in `data` an element lives.

use hipdnn_data_sdk::{TensorLayout, packed_strides};
use hipdnn_flatbuffers_sdk::model::TensorAttributes;

/// A tensor of `f32` values: `dims` (extents), `strides` (in elements) and the storage.
///
/// Element `idx` lives at `data[Σ idx[i] · strides[i]]`. `data` covers the addressed
/// span (`1 + Σ (dims[i] - 1) · strides[i]` elements); gaps between addressed elements
/// (padded strides) are storage too, and stay 0 unless written.
#[derive(Debug, Clone, PartialEq)]
pub struct HostTensor {
    /// Extents, one per dimension (dimension 0 is the batch, 1 the channels).
    pub dims: Vec<usize>,
    /// Strides in elements, one per dimension.
    pub strides: Vec<usize>,
    /// Storage, laid out by `strides`.
    pub data: Vec<f32>,
}

/// Number of elements addressed by `dims`/`strides`: `1 + Σ (dims[i] - 1) · strides[i]`,
/// or 0 when an extent is 0.
pub fn span(dims: &[usize], strides: &[usize]) -> usize {
    if dims.contains(&0) {
        return 0;
    }
    1 + dims
        .iter()
        .zip(strides)
        .map(|(&d, &s)| (d - 1) * s)
        .sum::<usize>()
}

/// Row-major (packed, last dimension innermost) strides of `dims`.
pub fn row_major_strides(dims: &[usize]) -> Vec<usize> {
    let mut strides = vec![0; dims.len()];
    let mut running = 1;
    for i in (0..dims.len()).rev() {
        strides[i] = running;
        running *= dims[i].max(1);
    }
    strides
}

/// Packed strides of `dims` in `layout`: channels-first (row-major) or channels-last
/// (dimension 1 innermost, then the spatial dimensions, dimension 0 outermost).
///
/// # Panics
/// If `layout` does not allow the rank of `dims` (e.g. `Nhwc` with rank 3).
pub fn layout_strides(dims: &[usize], layout: TensorLayout) -> Vec<usize> {
    let dims_i64: Vec<i64> = dims.iter().map(|&d| to_i64(d)).collect();
    packed_strides(&dims_i64, layout)
        .unwrap_or_else(|e| panic!("layout {layout:?} for dims {dims:?}: {e}"))
        .into_iter()
        .map(to_usize)
        .collect()
}

/// Calls `f` with every index of a tensor of extents `dims`, in row-major order (the
/// last index varies fastest). Rank 0 yields one empty index; a zero extent yields none.
pub fn for_each_index(dims: &[usize], mut f: impl FnMut(&[usize])) {
    if dims.contains(&0) {
        return;
    }
    let mut idx = vec![0; dims.len()];
    loop {
        f(&idx);
        let mut d = dims.len();
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            idx[d] += 1;
            if idx[d] < dims[d] {
                break;
            }
            idx[d] = 0;
        }
    }
}

impl HostTensor {
    /// A zero-filled tensor with the given extents and strides.
    ///
    /// # Panics
    /// If `dims` and `strides` differ in rank.
    pub fn zeros(dims: impl Into<Vec<usize>>, strides: impl Into<Vec<usize>>) -> Self {
        let (dims, strides) = (dims.into(), strides.into());
        assert_eq!(
            dims.len(),
            strides.len(),
            "dims {dims:?} and strides {strides:?} differ in rank"
        );
        let data = vec![0.0; span(&dims, &strides)];
        Self {
            dims,
            strides,
            data,
        }
    }

    /// [`HostTensor::zeros`] that reports a failed allocation instead of aborting the
    /// process, for tensors whose size comes from untrusted graphs.
    ///
    /// # Errors
    /// The allocator could not provide [`span`] `f32`s.
    ///
    /// # Panics
    /// If `dims` and `strides` differ in rank.
    pub fn try_zeros(
        dims: impl Into<Vec<usize>>,
        strides: impl Into<Vec<usize>>,
    ) -> Result<Self, std::collections::TryReserveError> {
        let (dims, strides) = (dims.into(), strides.into());
        assert_eq!(
            dims.len(),
            strides.len(),
            "dims {dims:?} and strides {strides:?} differ in rank"
        );
        let len = span(&dims, &strides);
        let mut data = Vec::new();
        data.try_reserve_exact(len)?;
        data.resize(len, 0.0);
        Ok(Self {
            dims,
            strides,
            data,
        })
    }

    /// A zero-filled tensor with a graph tensor's dims and strides.
    ///
    /// # Panics
    /// On negative dims or strides (a validated graph has none).
    pub fn for_tensor(t: &TensorAttributes) -> Self {
        Self::zeros(dims_usize(&t.dims), dims_usize(&t.strides))
    }

    /// A zero-filled row-major tensor.
    pub fn packed(dims: impl Into<Vec<usize>>) -> Self {
        let dims = dims.into();
        let strides = row_major_strides(&dims);
        Self::zeros(dims, strides)
    }

    /// A zero-filled packed tensor in `layout` (see [`layout_strides`]).
    pub fn with_layout(dims: impl Into<Vec<usize>>, layout: TensorLayout) -> Self {
        let dims = dims.into();
        let strides = layout_strides(&dims, layout);
        Self::zeros(dims, strides)
    }

    /// A tensor with the given strides whose elements, in row-major logical order, are
    /// `values`.
    ///
    /// # Panics
    /// If `values.len()` is not the element count of `dims`.
    pub fn from_logical(
        dims: impl Into<Vec<usize>>,
        strides: impl Into<Vec<usize>>,
        values: &[f32],
    ) -> Self {
        let mut t = Self::zeros(dims, strides);
        assert_eq!(
            values.len(),
            t.numel(),
            "{} values for dims {:?}",
            values.len(),
            t.dims
        );
        let mut it = values.iter();
        let strides = t.strides.clone();
        for_each_index(&t.dims.clone(), |idx| {
            let off = offset_of(&strides, idx);
            t.data[off] = *it.next().expect("counted above");
        });
        t
    }

    /// A row-major tensor holding `values` (row-major logical order).
    pub fn from_vec(dims: impl Into<Vec<usize>>, values: &[f32]) -> Self {
        let dims = dims.into();
        let strides = row_major_strides(&dims);
        Self::from_logical(dims, strides, values)
    }

    /// The rank.
    pub fn rank(&self) -> usize {
        self.dims.len()
    }

    /// Number of logical elements (the product of the extents).
    pub fn numel(&self) -> usize {
        self.dims.iter().product()
    }

    /// Storage offset of the element at `idx`.
    ///
    /// # Panics
    /// If `idx` has the wrong rank or is out of bounds.
    pub fn offset(&self, idx: &[usize]) -> usize {
        assert_eq!(idx.len(), self.dims.len(), "index rank");
        debug_assert!(
            idx.iter().zip(&self.dims).all(|(&i, &d)| i < d),
            "index {idx:?} out of bounds for {:?}",
            self.dims
        );
        offset_of(&self.strides, idx)
    }

    /// The element at `idx`.
    pub fn at(&self, idx: &[usize]) -> f32 {
        self.data[self.offset(idx)]
    }

    /// Writes the element at `idx`.
    pub fn set(&mut self, idx: &[usize], value: f32) {
        let off = self.offset(idx);
        self.data[off] = value;
    }

    /// The element at `idx` of the output shape `out_dims` after numpy-style
    /// broadcasting of `self` (dimensions right-aligned; extent-1 dimensions repeat).
    ///
    /// # Panics
    /// If `self` does not broadcast to an index of that rank.
    pub fn at_broadcast(&self, idx: &[usize]) -> f32 {
        let lead = idx.len() - self.rank();
        let mut off = 0;
        for (i, (&d, &s)) in self.dims.iter().zip(&self.strides).enumerate() {
            let j = idx[lead + i];
            off += if d == 1 { 0 } else { j * s };
        }
        self.data[off]
    }

    /// The elements in row-major logical order (independent of the strides).
    pub fn logical(&self) -> Vec<f32> {
        let mut out = Vec::with_capacity(self.numel());
        for_each_index(&self.dims, |idx| {
            out.push(self.data[offset_of(&self.strides, idx)])
        });
        out
    }

    /// Applies `f` to every logical element in place.
    pub fn map_inplace(&mut self, mut f: impl FnMut(f32) -> f32) {
        let strides = self.strides.clone();
        let dims = self.dims.clone();
        for_each_index(&dims, |idx| {
            let off = offset_of(&strides, idx);
            self.data[off] = f(self.data[off]);
        });
    }

    /// The same logical values re-laid out with `strides`.
    pub fn relayout(&self, strides: impl Into<Vec<usize>>) -> Self {
        Self::from_logical(self.dims.clone(), strides, &self.logical())
    }

    /// Extents as `i64`, as the wire format stores them.
    pub fn dims_i64(&self) -> Vec<i64> {
        self.dims.iter().map(|&d| to_i64(d)).collect()
    }

    /// Strides as `i64`, as the wire format stores them.
    pub fn strides_i64(&self) -> Vec<i64> {
        self.strides.iter().map(|&s| to_i64(s)).collect()
    }
}

fn offset_of(strides: &[usize], idx: &[usize]) -> usize {
    idx.iter().zip(strides).map(|(&i, &s)| i * s).sum()
}

/// `usize` → `i64` for shapes (which are far below `i64::MAX`).
pub(crate) fn to_i64(v: usize) -> i64 {
    i64::try_from(v).expect("extent fits in i64")
}

/// `i64` → `usize` for shapes read from a graph.
///
/// # Panics
/// On a negative value.
pub(crate) fn to_usize(v: i64) -> usize {
    usize::try_from(v).unwrap_or_else(|_| panic!("negative extent or stride {v}"))
}

/// Converts a wire shape (`i64`) into `usize`s.
///
/// # Panics
/// On a negative value.
pub fn dims_usize(dims: &[i64]) -> Vec<usize> {
    dims.iter().map(|&d| to_usize(d)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nchw_and_nhwc_hold_the_same_logical_values() {
        let values: Vec<f32> = (0..24).map(|v| v as f32).collect();
        let nchw = HostTensor::from_vec([1, 2, 3, 4], &values);
        let nhwc = nchw.relayout(layout_strides(&[1, 2, 3, 4], TensorLayout::Nhwc));
        assert_eq!(nhwc.strides, [24, 1, 8, 2]);
        assert_eq!(nhwc.logical(), values);
        // Channel 1, h 2, w 3 is the last NCHW element; in NHWC it is the last too.
        assert_eq!(nhwc.at(&[0, 1, 2, 3]), 23.0);
        assert_eq!(nhwc.data[23], 23.0);
        // Channel 1, h 0, w 0: NCHW offset 12, NHWC offset 1.
        assert_eq!(nhwc.data[1], 12.0);
    }

    #[test]
    fn padded_strides_leave_gaps() {
        let t = HostTensor::from_logical([2, 2], [3, 1], &[1.0, 2.0, 3.0, 4.0]);
        assert_eq!(t.data, [1.0, 2.0, 0.0, 3.0, 4.0]);
        assert_eq!(t.logical(), [1.0, 2.0, 3.0, 4.0]);
    }

    #[test]
    fn index_iteration_is_row_major() {
        let mut seen = Vec::new();
        for_each_index(&[2, 3], |i| seen.push((i[0], i[1])));
        assert_eq!(seen, [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]);
        let mut n = 0;
        for_each_index(&[], |_| n += 1);
        assert_eq!(n, 1);
        for_each_index(&[3, 0], |_| n += 1);
        assert_eq!(n, 1);
    }

    #[test]
    fn broadcast_reads_repeat_extent_one_dims() {
        let b = HostTensor::from_vec([1, 3, 1], &[10.0, 20.0, 30.0]);
        assert_eq!(b.at_broadcast(&[1, 2, 5]), 30.0);
        let r = HostTensor::from_vec([3, 1], &[1.0, 2.0, 3.0]);
        assert_eq!(r.at_broadcast(&[4, 1, 7]), 2.0);
    }
}
