//! Element types and strided tensors, as the kernels see them.
//!
//! Kernels compute in `f32` and read and write `f32`, `f16` and `bf16` storage,
//! converting at the edges. A tensor is a base pointer, an element type and a
//! [`Shape`] (extents and element strides, any order, stride 0 for broadcasting).
//!
//! The safe types ([`TensorRef`], [`TensorMut`]) borrow slices and check that every
//! addressed element lies inside them; the kernels then work on [`RawIn`] / [`RawOut`],
//! raw views that many threads can share. Writes through a [`RawOut`] are sound because
//! every kernel partitions the output so that each element is written by one thread.

use std::marker::PhantomData;

pub(crate) use half::{bf16, f16};
use hipdnn_data_sdk::DataType;

/// Storage element type of a tensor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DType {
    /// IEEE binary32.
    F32,
    /// IEEE binary16.
    F16,
    /// bfloat16.
    BF16,
}

impl DType {
    /// Bytes per element.
    pub const fn size(self) -> usize {
        match self {
            DType::F32 => 4,
            DType::F16 | DType::BF16 => 2,
        }
    }

    /// The storage type for a wire data type, if this engine handles it.
    pub fn from_data_type(dt: DataType) -> Option<Self> {
        match dt {
            DataType::Float => Some(DType::F32),
            DataType::Half => Some(DType::F16),
            DataType::Bfloat16 => Some(DType::BF16),
            _ => None,
        }
    }
}

/// An element type the kernels can read and write (converted through `f32`).
pub trait Elem: Copy + Send + Sync + 'static {
    /// The runtime tag.
    const DTYPE: DType;
    /// Widens to `f32`.
    fn to_f32(self) -> f32;
    /// Rounds from `f32` (to nearest even).
    fn from_f32(v: f32) -> Self;
}

impl Elem for f32 {
    const DTYPE: DType = DType::F32;
    #[inline(always)]
    fn to_f32(self) -> f32 {
        self
    }
    #[inline(always)]
    fn from_f32(v: f32) -> Self {
        v
    }
}

impl Elem for f16 {
    const DTYPE: DType = DType::F16;
    #[inline(always)]
    fn to_f32(self) -> f32 {
        f16::to_f32(self)
    }
    #[inline(always)]
    fn from_f32(v: f32) -> Self {
        f16::from_f32(v)
    }
}

impl Elem for bf16 {
    const DTYPE: DType = DType::BF16;
    #[inline(always)]
    fn to_f32(self) -> f32 {
        bf16::to_f32(self)
    }
    #[inline(always)]
    fn from_f32(v: f32) -> Self {
        bf16::from_f32(v)
    }
}

/// Extents and element strides of a tensor (same rank, strides may be 0).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Shape {
    /// Extent of each dimension (all positive).
    pub dims: Vec<usize>,
    /// Element stride of each dimension.
    pub strides: Vec<usize>,
}

impl Shape {
    /// A shape with explicit strides.
    ///
    /// # Panics
    /// When the ranks differ or an extent is zero (an internal contract: graphs are
    /// validated before shapes are made from them).
    pub fn new(dims: &[usize], strides: &[usize]) -> Self {
        assert_eq!(dims.len(), strides.len(), "dims and strides rank differ");
        assert!(dims.iter().all(|&d| d > 0), "zero extent in {dims:?}");
        Self {
            dims: dims.to_vec(),
            strides: strides.to_vec(),
        }
    }

    /// Row-major packed strides (last dimension contiguous).
    pub fn packed(dims: &[usize]) -> Self {
        let mut strides = vec![0; dims.len()];
        let mut s = 1;
        for (st, &d) in strides.iter_mut().zip(dims).rev() {
            *st = s;
            s *= d;
        }
        Self::new(dims, &strides)
    }

    /// Packed strides with the dimensions stored in `order` (outermost first), e.g.
    /// `[0, 2, 3, 1]` for NHWC storage of NCHW dims.
    pub fn packed_in_order(dims: &[usize], order: &[usize]) -> Self {
        let mut strides = vec![0; dims.len()];
        let mut s = 1;
        for &d in order.iter().rev() {
            strides[d] = s;
            s *= dims[d];
        }
        Self::new(dims, &strides)
    }

    /// Packed strides in the order this shape stores its dimensions (descending stride,
    /// ties in dimension order): the dense layout with the same memory order, e.g. dense
    /// channels-last for a channels-last shape with gaps.
    pub fn packed_like(&self) -> Self {
        Self::packed_in_order(&self.dims, &self.memory_order())
    }

    /// The dimensions from outermost to innermost in memory (descending stride, ties
    /// in dimension order): `[0, 2, 3, 1]` for channels-last `[N, C, H, W]`.
    pub fn memory_order(&self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.rank()).collect();
        order.sort_by(|&a, &b| self.strides[b].cmp(&self.strides[a]));
        order
    }

    /// Channels-last strides for `[N, C, spatial...]` dims.
    pub fn channels_last(dims: &[usize]) -> Self {
        let mut order = vec![0];
        order.extend(2..dims.len());
        order.push(1);
        Self::packed_in_order(dims, &order)
    }

    /// Rank.
    pub fn rank(&self) -> usize {
        self.dims.len()
    }

    /// Number of elements.
    pub fn numel(&self) -> usize {
        self.dims.iter().product()
    }

    /// Elements from the first addressed one to the last, inclusive.
    pub fn span(&self) -> usize {
        1 + self
            .dims
            .iter()
            .zip(&self.strides)
            .map(|(&d, &s)| (d - 1) * s)
            .sum::<usize>()
    }

    /// Offset of the element at `index`.
    #[inline]
    pub fn offset(&self, index: &[usize]) -> usize {
        index.iter().zip(&self.strides).map(|(i, s)| i * s).sum()
    }

    /// Strides of this tensor broadcast to `dims` (right-aligned, numpy rules):
    /// `None` unless every extent equals the target's or is 1.
    pub fn broadcast_strides(&self, dims: &[usize]) -> Option<Vec<usize>> {
        if self.rank() > dims.len() {
            return None;
        }
        let lead = dims.len() - self.rank();
        let mut out = vec![0; dims.len()];
        for (i, (&d, &s)) in self.dims.iter().zip(&self.strides).enumerate() {
            let t = dims[lead + i];
            if d == t {
                out[lead + i] = if d == 1 { 0 } else { s };
            } else if d != 1 {
                return None;
            }
        }
        Some(out)
    }
}

/// Borrowed storage of one of the supported element types.
#[derive(Debug, Clone, Copy)]
pub enum Slice<'a> {
    /// `f32` elements.
    F32(&'a [f32]),
    /// `f16` elements.
    F16(&'a [f16]),
    /// `bf16` elements.
    BF16(&'a [bf16]),
}

/// Mutably borrowed storage.
#[derive(Debug)]
pub enum SliceMut<'a> {
    /// `f32` elements.
    F32(&'a mut [f32]),
    /// `f16` elements.
    F16(&'a mut [f16]),
    /// `bf16` elements.
    BF16(&'a mut [bf16]),
}

impl<'a> From<&'a [f32]> for Slice<'a> {
    fn from(s: &'a [f32]) -> Self {
        Slice::F32(s)
    }
}
impl<'a> From<&'a [f16]> for Slice<'a> {
    fn from(s: &'a [f16]) -> Self {
        Slice::F16(s)
    }
}
impl<'a> From<&'a [bf16]> for Slice<'a> {
    fn from(s: &'a [bf16]) -> Self {
        Slice::BF16(s)
    }
}
impl<'a> From<&'a mut [f32]> for SliceMut<'a> {
    fn from(s: &'a mut [f32]) -> Self {
        SliceMut::F32(s)
    }
}
impl<'a> From<&'a mut [f16]> for SliceMut<'a> {
    fn from(s: &'a mut [f16]) -> Self {
        SliceMut::F16(s)
    }
}
impl<'a> From<&'a mut [bf16]> for SliceMut<'a> {
    fn from(s: &'a mut [bf16]) -> Self {
        SliceMut::BF16(s)
    }
}

/// Error for a shape that addresses elements outside its slice.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("tensor addresses {span} elements but its buffer holds {len}")]
pub struct OutOfBounds {
    /// Elements the shape addresses.
    pub span: usize,
    /// Elements in the slice.
    pub len: usize,
}

/// An input tensor: storage plus shape, checked to fit.
#[derive(Debug, Clone)]
pub struct TensorRef<'a> {
    raw: RawIn,
    _borrow: PhantomData<&'a [u8]>,
}

impl<'a> TensorRef<'a> {
    /// Checks that `shape` stays inside `data`.
    ///
    /// # Errors
    /// [`OutOfBounds`] when it does not.
    pub fn new(data: impl Into<Slice<'a>>, shape: &Shape) -> Result<Self, OutOfBounds> {
        let (ptr, dtype, len) = match data.into() {
            Slice::F32(s) => (s.as_ptr().cast::<u8>(), DType::F32, s.len()),
            Slice::F16(s) => (s.as_ptr().cast::<u8>(), DType::F16, s.len()),
            Slice::BF16(s) => (s.as_ptr().cast::<u8>(), DType::BF16, s.len()),
        };
        let span = shape.span();
        if span > len {
            return Err(OutOfBounds { span, len });
        }
        Ok(Self {
            raw: RawIn {
                ptr,
                dtype,
                shape: shape.clone(),
            },
            _borrow: PhantomData,
        })
    }

    /// The raw view (valid while `self` is borrowed).
    pub fn raw(&self) -> &RawIn {
        &self.raw
    }

    /// Shape.
    pub fn shape(&self) -> &Shape {
        &self.raw.shape
    }

    /// Element type.
    pub fn dtype(&self) -> DType {
        self.raw.dtype
    }
}

/// An output tensor: mutable storage plus shape, checked to fit.
#[derive(Debug)]
pub struct TensorMut<'a> {
    raw: RawOut,
    _borrow: PhantomData<&'a mut [u8]>,
}

impl<'a> TensorMut<'a> {
    /// Checks that `shape` stays inside `data`.
    ///
    /// # Errors
    /// [`OutOfBounds`] when it does not.
    pub fn new(data: impl Into<SliceMut<'a>>, shape: &Shape) -> Result<Self, OutOfBounds> {
        let (ptr, dtype, len) = match data.into() {
            SliceMut::F32(s) => (s.as_mut_ptr().cast::<u8>(), DType::F32, s.len()),
            SliceMut::F16(s) => (s.as_mut_ptr().cast::<u8>(), DType::F16, s.len()),
            SliceMut::BF16(s) => (s.as_mut_ptr().cast::<u8>(), DType::BF16, s.len()),
        };
        let span = shape.span();
        if span > len {
            return Err(OutOfBounds { span, len });
        }
        Ok(Self {
            raw: RawOut {
                ptr,
                dtype,
                shape: shape.clone(),
            },
            _borrow: PhantomData,
        })
    }

    /// The raw view (valid while `self` is borrowed).
    pub fn raw(&self) -> &RawOut {
        &self.raw
    }

    /// Shape.
    pub fn shape(&self) -> &Shape {
        &self.raw.shape
    }
}

/// A shared, unchecked view of an input tensor: base pointer, element type, shape.
///
/// Made from a [`TensorRef`] (or by the plan from host buffers whose extent it
/// checked); every offset a kernel computes from `shape` is inside the buffer.
#[derive(Debug, Clone)]
pub struct RawIn {
    pub(crate) ptr: *const u8,
    pub(crate) dtype: DType,
    pub(crate) shape: Shape,
}

// SAFETY: a `RawIn` is only read through, and only made from memory that stays
// borrowed (or, in plans, alive and unwritten) for as long as the kernels run.
unsafe impl Send for RawIn {}
// SAFETY: as above; concurrent reads are fine.
unsafe impl Sync for RawIn {}

/// A shared, unchecked view of an output tensor.
///
/// Kernels write each element from exactly one thread.
#[derive(Debug, Clone)]
pub struct RawOut {
    pub(crate) ptr: *mut u8,
    pub(crate) dtype: DType,
    pub(crate) shape: Shape,
}

// SAFETY: made from exclusively borrowed memory; kernels partition writes so that no
// element is written by two threads or read while written.
unsafe impl Send for RawOut {}
// SAFETY: as above.
unsafe impl Sync for RawOut {}

impl RawIn {
    /// # Safety
    /// `ptr` must address `shape.span()` elements of `dtype`, readable and not written
    /// while the view is used.
    pub(crate) unsafe fn from_parts(ptr: *const u8, dtype: DType, shape: Shape) -> Self {
        Self { ptr, dtype, shape }
    }

    /// Element `off` widened to `f32`.
    ///
    /// # Safety
    /// `off < shape.span()`.
    #[inline(always)]
    pub(crate) unsafe fn load(&self, off: usize) -> f32 {
        debug_assert!(off < self.shape.span());
        // SAFETY: `off` is in bounds by the caller's contract; the pointer is valid
        // for `span` elements of `dtype` by construction.
        unsafe {
            match self.dtype {
                DType::F32 => *self.ptr.cast::<f32>().add(off),
                DType::F16 => (*self.ptr.cast::<f16>().add(off)).to_f32(),
                DType::BF16 => (*self.ptr.cast::<bf16>().add(off)).to_f32(),
            }
        }
    }

    /// Typed base pointer (the caller knows `dtype`).
    pub(crate) fn ptr_as<T: Elem>(&self) -> *const T {
        debug_assert_eq!(T::DTYPE, self.dtype);
        self.ptr.cast::<T>()
    }

    /// Shape.
    pub fn shape(&self) -> &Shape {
        &self.shape
    }

    /// Element type.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// The same memory with another shape (a reinterpretation the caller checked to
    /// stay inside the original span).
    pub(crate) fn with_shape(&self, shape: Shape) -> Self {
        debug_assert!(shape.span() <= self.shape.span());
        Self {
            ptr: self.ptr,
            dtype: self.dtype,
            shape,
        }
    }
}

impl RawOut {
    /// # Safety
    /// `ptr` must address `shape.span()` elements of `dtype`, writable, and used by
    /// nobody else while the view is used.
    pub(crate) unsafe fn from_parts(ptr: *mut u8, dtype: DType, shape: Shape) -> Self {
        Self { ptr, dtype, shape }
    }

    /// Stores `v` (rounded to the element type) at `off`.
    ///
    /// # Safety
    /// `off < shape.span()`, and no other thread accesses element `off` concurrently.
    #[inline(always)]
    pub(crate) unsafe fn store(&self, off: usize, v: f32) {
        debug_assert!(off < self.shape.span());
        // SAFETY: in bounds and exclusively ours by the caller's contract.
        unsafe {
            match self.dtype {
                DType::F32 => *self.ptr.cast::<f32>().add(off) = v,
                DType::F16 => *self.ptr.cast::<f16>().add(off) = f16::from_f32(v),
                DType::BF16 => *self.ptr.cast::<bf16>().add(off) = bf16::from_f32(v),
            }
        }
    }

    /// Typed base pointer (the caller knows `dtype`).
    pub(crate) fn ptr_as<T: Elem>(&self) -> *mut T {
        debug_assert_eq!(T::DTYPE, self.dtype);
        self.ptr.cast::<T>()
    }

    /// Shape.
    pub fn shape(&self) -> &Shape {
        &self.shape
    }

    /// Element type.
    pub fn dtype(&self) -> DType {
        self.dtype
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_and_broadcasting() {
        let s = Shape::packed(&[2, 3, 4]);
        assert_eq!(s.strides, vec![12, 4, 1]);
        assert_eq!(s.span(), 24);
        let nhwc = Shape::channels_last(&[2, 3, 4, 5]);
        assert_eq!(nhwc.strides, vec![60, 1, 15, 3]);
        let bias = Shape::packed(&[1, 3, 1, 1]);
        assert_eq!(
            bias.broadcast_strides(&[2, 3, 4, 5]),
            Some(vec![0, 1, 0, 0])
        );
        assert_eq!(
            Shape::packed(&[3]).broadcast_strides(&[2, 3]),
            Some(vec![0, 1])
        );
        assert_eq!(Shape::packed(&[2]).broadcast_strides(&[2, 3]), None);
    }

    #[test]
    fn packed_like_keeps_the_memory_order() {
        // Channels-last with a gap after each pixel's channels: dense channels-last.
        let gapped = Shape::new(&[2, 3, 4, 5], &[160, 1, 40, 8]);
        assert_eq!(gapped.packed_like().strides, vec![60, 1, 15, 3]);
        let nchw = Shape::new(&[2, 3, 4, 5], &[100, 25, 5, 1]);
        assert_eq!(nchw.packed_like().strides, vec![60, 20, 5, 1]);
        // Extents of 1 keep their place among equal strides.
        let bias = Shape::new(&[1, 3, 1, 1], &[3, 1, 3, 3]);
        assert_eq!(bias.packed_like().strides, vec![3, 1, 3, 3]);
    }

    #[test]
    fn views_check_their_extent() {
        let data = [0f32; 5];
        assert!(TensorRef::new(&data[..], &Shape::packed(&[6])).is_err());
        let t = TensorRef::new(&data[..], &Shape::packed(&[5])).unwrap();
        assert_eq!(t.dtype(), DType::F32);
    }
}
