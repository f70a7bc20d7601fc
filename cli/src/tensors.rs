//! The tensors a run binds: which are inputs and outputs, their host buffers (aligned,
//! sized by the strides' extent) and the values put in them.

use std::alloc::Layout;
use std::ffi::c_void;
use std::ptr::NonNull;

use hipdnn_data_sdk::DataType;
use hipdnn_flatbuffers_sdk::model::{Graph, NodeAttributes, TensorAttributes};
use hipdnn_flatbuffers_sdk::wire::PointwiseMode;
use hipdnn_reference::data::{DataGen, element_size};

/// Host buffers are aligned to at least this many bytes (a cache line; tensors
/// require 16 by default).
pub const MIN_ALIGNMENT: usize = 64;

/// Whether the graph reads or writes a tensor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Read by a node and written by none: the user supplies it.
    Input,
    /// Written by a node.
    Output,
}

/// A non-virtual tensor that takes a buffer.
#[derive(Debug, Clone)]
pub struct IoTensor {
    /// The uid.
    pub uid: i64,
    /// Its name, for messages.
    pub name: String,
    /// Its effective data type.
    pub dtype: DataType,
    /// Extents.
    pub dims: Vec<usize>,
    /// Strides, in elements.
    pub strides: Vec<usize>,
    /// Buffer bytes: the strides' extent times the element size.
    pub byte_len: usize,
    /// Buffer alignment in bytes (a power of two, at least [`MIN_ALIGNMENT`]).
    pub alignment: usize,
    /// Input or output.
    pub role: Role,
}

impl IoTensor {
    /// `uid 3 ('x')`, for messages.
    pub fn label(&self) -> String {
        format!("uid {} ('{}')", self.uid, self.name)
    }
}

/// A tensor's effective data type (graph defaults applied; a validated graph has none
/// left unset).
pub fn effective_dtype(graph: &Graph, t: &TensorAttributes) -> DataType {
    match t.data_type {
        DataType::Unset if t.is_virtual => graph.intermediate_data_type,
        DataType::Unset => graph.io_data_type,
        dt => dt,
    }
}

/// The uids written by some node.
fn written_uids(graph: &Graph) -> Vec<i64> {
    let (mut ins, mut outs) = (Vec::new(), Vec::new());
    for node in &graph.nodes {
        node.attributes.tensor_uids(&mut ins, &mut outs);
    }
    outs
}

/// Every tensor of a validated `graph` that takes a buffer (non-virtual, not passed by
/// value), in uid order.
///
/// # Errors
/// A tensor whose type has no byte size here (sub-byte types) or whose buffer size
/// overflows; the message names the uid.
pub fn io_tensors(graph: &Graph) -> Result<Vec<IoTensor>, String> {
    let written = written_uids(graph);
    let mut out = Vec::new();
    for t in graph
        .tensors
        .iter()
        .filter(|t| !t.is_virtual && t.value.is_none())
    {
        let dtype = effective_dtype(graph, t);
        let label = format!("tensor uid {} ('{}')", t.uid, t.name);
        let size = element_size(dtype).ok_or_else(|| {
            format!(
                "{label}: data type {} is not supported by hipdnn run",
                dtype.name()
            )
        })?;
        let to_usize = |v: &i64| {
            usize::try_from(*v).map_err(|_| format!("{label}: negative extent or stride {v}"))
        };
        let dims = t.dims.iter().map(to_usize).collect::<Result<Vec<_>, _>>()?;
        let strides = t
            .strides
            .iter()
            .map(to_usize)
            .collect::<Result<Vec<_>, _>>()?;
        let byte_len = extent(&dims, &strides)
            .and_then(|n| n.checked_mul(size))
            .ok_or_else(|| format!("{label}: buffer size overflows"))?;
        let requested = usize::try_from(t.alignment).unwrap_or(0).max(size);
        let alignment = requested
            .checked_next_power_of_two()
            .ok_or_else(|| format!("{label}: alignment {} is too large", t.alignment))?
            .max(MIN_ALIGNMENT);
        out.push(IoTensor {
            uid: t.uid,
            name: t.name.clone(),
            dtype,
            dims,
            strides,
            byte_len,
            alignment,
            role: if written.contains(&t.uid) {
                Role::Output
            } else {
                Role::Input
            },
        });
    }
    out.sort_by_key(|t| t.uid);
    Ok(out)
}

/// Elements addressed by `dims`/`strides` (`1 + Σ (d - 1)·s`), overflow-checked.
fn extent(dims: &[usize], strides: &[usize]) -> Option<usize> {
    if dims.contains(&0) {
        return Some(0);
    }
    dims.iter().zip(strides).try_fold(1usize, |acc, (&d, &s)| {
        (d - 1).checked_mul(s).and_then(|x| acc.checked_add(x))
    })
}

/// How the values of a generated input are drawn, from the role the graph gives it
/// (as the conformance suite draws them): variances positive, scales near one, means
/// small, the domain of `LOG`/`SQRT`/... positive. Forward-convolution filters are
/// drawn from `±√(6 / fan-in)` (at most ±1), so a deep network's activations keep
/// their size from layer to layer and stay finite.
pub fn value_range(graph: &Graph, uid: i64) -> (f32, f32) {
    const VARIANCE: (f32, f32) = (0.5, 2.0);
    const SCALE: (f32, f32) = (0.5, 1.5);
    const MEAN: (f32, f32) = (-0.5, 0.5);
    for node in &graph.nodes {
        if let NodeAttributes::ConvolutionFwdAttributes(a) = &node.attributes
            && a.w_tensor_uid == uid
        {
            let fan_in: i64 = graph
                .tensors
                .iter()
                .find(|t| t.uid == uid)
                .map_or(1, |t| t.dims.iter().skip(1).product());
            let r = (6.0 / fan_in.max(1) as f32).sqrt().min(1.0);
            return (-r, r);
        }
        let found = match &node.attributes {
            NodeAttributes::BatchnormInferenceAttributes(a) => role(
                uid,
                &[a.inv_variance_tensor_uid],
                &[a.scale_tensor_uid],
                &[a.mean_tensor_uid],
            ),
            NodeAttributes::BatchnormInferenceAttributesVarianceExt(a) => role(
                uid,
                &[a.variance_tensor_uid],
                &[a.scale_tensor_uid],
                &[a.mean_tensor_uid],
            ),
            NodeAttributes::BatchnormAttributes(a) => role(
                uid,
                &a.prev_running_variance_tensor_uid
                    .into_iter()
                    .collect::<Vec<_>>(),
                &[a.scale_tensor_uid],
                &a.prev_running_mean_tensor_uid
                    .into_iter()
                    .collect::<Vec<_>>(),
            ),
            NodeAttributes::BatchnormBackwardAttributes(a) => role(
                uid,
                &a.inv_variance_tensor_uid.into_iter().collect::<Vec<_>>(),
                &[a.scale_tensor_uid],
                &a.mean_tensor_uid.into_iter().collect::<Vec<_>>(),
            ),
            NodeAttributes::LayernormAttributes(a) => role(uid, &[], &[a.scale_tensor_uid], &[]),
            NodeAttributes::RMSNormAttributes(a) => role(uid, &[], &[a.scale_tensor_uid], &[]),
            NodeAttributes::PointwiseAttributes(a) => {
                use PointwiseMode as M;
                let positive = match a.operation {
                    M::LOG | M::SQRT | M::RSQRT | M::RECIPROCAL => Some(a.in_0_tensor_uid),
                    M::DIV => a.in_1_tensor_uid,
                    _ => None,
                };
                (positive == Some(uid)).then_some(Range::Variance)
            }
            _ => None,
        };
        match found {
            Some(Range::Variance) => return VARIANCE,
            Some(Range::Scale) => return SCALE,
            Some(Range::Mean) => return MEAN,
            None => {}
        }
    }
    (-1.0, 1.0)
}

enum Range {
    Variance,
    Scale,
    Mean,
}

fn role(uid: i64, variance: &[i64], scale: &[i64], mean: &[i64]) -> Option<Range> {
    if variance.contains(&uid) {
        Some(Range::Variance)
    } else if scale.contains(&uid) {
        Some(Range::Scale)
    } else if mean.contains(&uid) {
        Some(Range::Mean)
    } else {
        None
    }
}

/// The generator of input `uid` under `seed`: each input draws from its own stream, so
/// its values do not depend on which other inputs come from files.
pub fn generator(seed: u64, uid: i64) -> DataGen {
    DataGen::for_case(seed, &format!("uid {uid}"))
}

/// A zero-initialized-then-filled host allocation with a chosen alignment.
#[derive(Debug)]
pub struct AlignedBuffer {
    /// The allocation, and where in it the aligned bytes start.
    base: NonNull<u8>,
    offset: usize,
    len: usize,
    layout: Layout,
}

/// The alignment the allocator's zeroed memory has without being asked (`calloc`'s).
const ZEROED_ALIGN: usize = 16;

impl AlignedBuffer {
    /// `len` bytes aligned to `alignment` (a power of two), each set to `fill`. Zeroed
    /// buffers come from the allocator's zeroed memory (`calloc`, over-allocated by the
    /// alignment and aligned inside), so the pages of a large one are not touched, and
    /// not resident, until something writes them: a tensor whose strides spread few
    /// elements over a large buffer costs the pages they are on. (Asking the allocator
    /// for zeroed memory with a larger alignment writes every byte.)
    ///
    /// # Errors
    /// An invalid layout or a failed allocation.
    pub fn new(len: usize, alignment: usize, fill: u8) -> Result<Self, String> {
        let invalid = |e: std::alloc::LayoutError| {
            format!("cannot lay out {len} bytes aligned to {alignment}: {e}")
        };
        Layout::from_size_align(len.max(1), alignment).map_err(invalid)?;
        let zeroed = fill == 0 && alignment > ZEROED_ALIGN;
        let layout = if zeroed {
            let size = len
                .max(1)
                .checked_add(alignment)
                .ok_or_else(|| format!("cannot allocate {len} bytes"))?;
            Layout::from_size_align(size, ZEROED_ALIGN).map_err(invalid)?
        } else {
            Layout::from_size_align(len.max(1), alignment).map_err(invalid)?
        };
        // SAFETY: `layout` has a non-zero size.
        let raw = unsafe {
            if fill == 0 {
                std::alloc::alloc_zeroed(layout)
            } else {
                std::alloc::alloc(layout)
            }
        };
        let base = NonNull::new(raw).ok_or_else(|| format!("cannot allocate {len} bytes"))?;
        let offset = if zeroed {
            base.as_ptr().align_offset(alignment)
        } else {
            0
        };
        debug_assert!(offset + len <= layout.size());
        if fill != 0 {
            // SAFETY: `base` was just allocated for `layout.size()` bytes.
            unsafe { base.as_ptr().write_bytes(fill, layout.size()) };
        }
        Ok(Self {
            base,
            offset,
            len,
            layout,
        })
    }

    fn ptr(&self) -> *mut u8 {
        // SAFETY: `offset + len` lies within the allocation (see `new`).
        unsafe { self.base.as_ptr().add(self.offset) }
    }

    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: valid and initialized for `len` bytes from `ptr()` while `self` lives.
        unsafe { std::slice::from_raw_parts(self.ptr(), self.len) }
    }

    /// The bytes, writable.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as in `as_slice`, and `&mut self` makes this the only reference.
        unsafe { std::slice::from_raw_parts_mut(self.ptr(), self.len) }
    }

    /// The pointer handed to the engine.
    pub fn as_mut_ptr(&mut self) -> *mut c_void {
        self.ptr().cast()
    }
}

impl Drop for AlignedBuffer {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout, freed once.
        unsafe { std::alloc::dealloc(self.base.as_ptr(), self.layout) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hipdnn_test_sdk::graphs::{Layout as GraphLayout, batchnorm_training, uid_of};

    /// Resident bytes of this process (Linux `/proc/self/statm`, pages × 4 KiB).
    fn resident_bytes() -> usize {
        let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
        let pages: usize = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
        pages * 4096
    }

    /// A zeroed 2 GiB buffer with a 256-byte alignment costs nothing until written, and
    /// writing eight elements 256 MiB apart costs their pages: a graph whose strides
    /// spread few elements over a large buffer is cheap to run.
    #[test]
    fn zeroed_buffers_stay_untouched_until_written() {
        let before = resident_bytes();
        let mut b = AlignedBuffer::new(2 << 30, 256, 0).unwrap();
        assert_eq!(b.as_mut_ptr() as usize % 256, 0);
        for i in 0..8 {
            b.as_mut_slice()[i << 28] = 1;
        }
        let grown = resident_bytes().saturating_sub(before);
        assert!(grown < 64 << 20, "{grown} bytes became resident");
        assert_eq!(b.as_slice()[3 << 28], 1);
        assert_eq!(b.as_slice()[(3 << 28) + 1], 0);
    }

    #[test]
    fn buffers_are_aligned_and_filled() {
        for align in [64, 128, 4096] {
            let mut b = AlignedBuffer::new(10, align, 0xAB).unwrap();
            assert_eq!(b.as_mut_ptr() as usize % align, 0);
            assert_eq!(b.as_slice(), &[0xAB; 10]);
        }
        let empty = AlignedBuffer::new(0, 64, 0).unwrap();
        assert!(empty.as_slice().is_empty());
        assert!(AlignedBuffer::new(1, 3, 0).is_err());
    }

    #[test]
    fn roles_sizes_and_ranges_come_from_the_graph() {
        let g = batchnorm_training(
            &[2, 3, 4, 4],
            1e-5,
            Some(0.1),
            &GraphLayout::Nhwc,
            DataType::Half,
        );
        let io = io_tensors(&g).unwrap();
        let get = |name: &str| io.iter().find(|t| t.name == name).unwrap();
        assert_eq!(get("x").role, Role::Input);
        assert_eq!(get("x").byte_len, 2 * 3 * 4 * 4 * 2);
        assert_eq!(get("x").dtype, DataType::Half);
        assert_eq!(get("y").role, Role::Output);
        assert_eq!(get("next_running_mean").role, Role::Output);
        assert!(
            io.iter().all(|t| t.name != "epsilon"),
            "by-value scalars take no buffer"
        );
        assert_eq!(
            value_range(&g, uid_of(&g, "prev_running_variance")),
            (0.5, 2.0)
        );
        assert_eq!(value_range(&g, uid_of(&g, "scale")), (0.5, 1.5));
        assert_eq!(value_range(&g, uid_of(&g, "x")), (-1.0, 1.0));
        // Filters by fan-in: 3·3·3 inputs per output.
        let spec = hipdnn_test_sdk::graphs::ConvSpec::new(&[1, 3, 8, 8], &[4, 3, 3, 3]);
        let conv = hipdnn_test_sdk::graphs::conv_fprop(&spec, &GraphLayout::Nchw, DataType::Float);
        let r = (6.0f32 / 27.0).sqrt();
        assert_eq!(value_range(&conv, uid_of(&conv, "w")), (-r, r));
        assert_eq!(value_range(&conv, uid_of(&conv, "x")), (-1.0, 1.0));
    }

    #[test]
    fn extent_follows_strides() {
        assert_eq!(extent(&[2, 3], &[3, 1]), Some(6));
        assert_eq!(extent(&[2, 3], &[8, 1]), Some(11));
        assert_eq!(extent(&[2, 0], &[8, 1]), Some(0));
        assert_eq!(extent(&[2, 2], &[usize::MAX, 1]), None);
    }
}
