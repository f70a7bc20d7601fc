//! "Device" memory: host allocations made by `hipMalloc`, recorded so that every data
//! pointer MIOpen receives can be checked (inside a live allocation, large enough for
//! what is read or written) before it is touched, and tensor reads and writes by
//! descriptor.

use std::alloc::Layout;
use std::collections::BTreeMap;
use std::ffi::c_void;

use hipdnn_reference::data::decode;
use hipdnn_reference::tensor::{HostTensor, for_each_index};

use crate::objects::TensorDesc;
use crate::state::{R, bad};
use crate::sys::miopenDataType_t;

/// Alignment of every allocation (as HIP's, at least 256 bytes).
pub(crate) const ALIGN: usize = 256;
/// The byte new allocations are filled with, so that reading memory nobody wrote
/// shows up as garbage rather than as plausible zeros.
pub(crate) const GARBAGE: u8 = 0xCD;

#[derive(Debug)]
struct Allocation {
    /// 1-based, in `hipMalloc` order (what the log shows).
    index: u64,
    len: usize,
}

/// The live allocations, by start address.
#[derive(Debug, Default)]
pub(crate) struct Memory {
    allocs: BTreeMap<usize, Allocation>,
    next_index: u64,
}

impl Memory {
    /// A new allocation of `len > 0` bytes filled with [`GARBAGE`]; `None` when the
    /// host allocator fails.
    pub(crate) fn alloc(&mut self, len: usize) -> Option<*mut u8> {
        let layout = Layout::from_size_align(len, ALIGN).ok()?;
        // SAFETY: `layout` has a non-zero size (callers pass `len > 0`).
        let p = unsafe { std::alloc::alloc(layout) };
        if p.is_null() {
            return None;
        }
        // SAFETY: `p` is a fresh allocation of `len` bytes.
        unsafe { std::ptr::write_bytes(p, GARBAGE, len) };
        self.next_index += 1;
        self.allocs.insert(
            p as usize,
            Allocation {
                index: self.next_index,
                len,
            },
        );
        Some(p)
    }

    /// Frees the allocation starting at `p`.
    pub(crate) fn free(&mut self, p: *mut c_void) -> Result<(), String> {
        let addr = p as usize;
        let Some(a) = self.allocs.remove(&addr) else {
            return Err(match self.locate(addr) {
                Some((start, a)) => format!(
                    "{} is inside allocation @{} (at offset {}), not its start",
                    self.render(p),
                    a.index,
                    addr - start
                ),
                None => "pointer is not a live hipMalloc allocation".to_owned(),
            });
        };
        let layout = Layout::from_size_align(a.len, ALIGN).expect("made by alloc");
        // SAFETY: `addr` was returned by `alloc` with this layout and is removed from the
        // registry, so it is freed once.
        unsafe { std::alloc::dealloc(addr as *mut u8, layout) };
        Ok(())
    }

    /// The allocation holding byte `addr`: its start and record.
    fn locate(&self, addr: usize) -> Option<(usize, &Allocation)> {
        let (&start, a) = self.allocs.range(..=addr).next_back()?;
        (addr < start + a.len).then_some((start, a))
    }

    /// `@<allocation>+<offset>`, `null`, or `host` for a pointer outside every
    /// allocation.
    pub(crate) fn render(&self, p: *const c_void) -> String {
        if p.is_null() {
            return "null".to_owned();
        }
        match self.locate(p as usize) {
            Some((start, a)) => format!("@{}+{}", a.index, p as usize - start),
            None => "host".to_owned(),
        }
    }

    /// Checks that `bytes` bytes from `p` lie inside one live allocation.
    pub(crate) fn check(&self, p: *const c_void, bytes: usize, what: &str) -> Result<(), String> {
        if p.is_null() {
            return Err(format!("{what} is null"));
        }
        let addr = p as usize;
        let Some((start, a)) = self.locate(addr) else {
            return Err(format!("{what} is not inside a live hipMalloc allocation"));
        };
        let offset = addr - start;
        if bytes > a.len - offset {
            return Err(format!(
                "{what} ({}) needs {bytes} bytes but allocation @{} has {} bytes from offset {offset}",
                self.render(p),
                a.index,
                a.len - offset
            ));
        }
        Ok(())
    }

    /// [`check`](Self::check) as a MIOpen `BadParm`.
    pub(crate) fn check_bad(&self, p: *const c_void, bytes: usize, what: &str) -> R<()> {
        self.check(p, bytes, what).map_err(bad)
    }

    /// Checks that `p` can hold a tensor of `desc`.
    pub(crate) fn check_tensor(&self, desc: &TensorDesc, p: *const c_void, what: &str) -> R<()> {
        self.check_bad(p, desc.bytes(), what)
    }

    /// Whether `p` points into a live allocation.
    pub(crate) fn is_device(&self, p: *const c_void) -> bool {
        self.locate(p as usize).is_some()
    }

    /// The tensor `desc` describes at `p`, as `f32` values.
    pub(crate) fn read(&self, desc: &TensorDesc, p: *const c_void, what: &str) -> R<HostTensor> {
        self.check_tensor(desc, p, what)?;
        let len = desc.bytes();
        // SAFETY: `check_tensor` proved `len` bytes from `p` lie in a live allocation,
        // which only this module frees (not during this call: the state is locked).
        let bytes = unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len) };
        decode(desc.data_type(), bytes, &desc.dims, &desc.strides)
            .map_err(|e| bad(format!("{what}: {e}")))
    }

    /// Writes the logical elements of `t` (dims of `desc`, any strides) as `desc`
    /// lays them out at `p`, rounding to its type. Bytes between addressed elements
    /// (padded strides) are left as they are.
    pub(crate) fn write(
        &self,
        desc: &TensorDesc,
        p: *mut c_void,
        t: &HostTensor,
        what: &str,
    ) -> R<()> {
        self.check_tensor(desc, p, what)?;
        if t.dims != desc.dims {
            return Err(bad(format!(
                "{what}: internal shape mismatch {:?} vs {:?}",
                t.dims, desc.dims
            )));
        }
        let size = desc.elem_size();
        let base = p.cast::<u8>();
        let mut result = Ok(());
        for_each_index(&desc.dims, |idx| {
            let off: usize = idx.iter().zip(&desc.strides).map(|(i, s)| i * s).sum();
            let bytes = encode_one(desc.dtype, t.at(idx));
            match bytes {
                Some(b) => {
                    // SAFETY: `off < span(dims, strides)`, so the element's bytes lie
                    // inside the range `check_tensor` proved live.
                    unsafe { std::ptr::copy_nonoverlapping(b.as_ptr(), base.add(off * size), size) }
                }
                None => result = Err(bad(format!("{what}: type {} has no encoding", desc.dtype))),
            }
        });
        result
    }

    /// Overwrites `bytes` bytes at `p` (checked) with `byte`.
    pub(crate) fn scribble(&self, p: *mut c_void, bytes: usize, byte: u8, what: &str) -> R<()> {
        if bytes == 0 {
            return Ok(());
        }
        self.check_bad(p, bytes, what)?;
        // SAFETY: checked to lie inside a live allocation.
        unsafe { std::ptr::write_bytes(p.cast::<u8>(), byte, bytes) };
        Ok(())
    }
}

impl Drop for Memory {
    fn drop(&mut self) {
        for (addr, a) in std::mem::take(&mut self.allocs) {
            let layout = Layout::from_size_align(a.len, ALIGN).expect("made by alloc");
            // SAFETY: every registered address came from `alloc` with this layout.
            unsafe { std::alloc::dealloc(addr as *mut u8, layout) };
        }
    }
}

/// One element of `dtype`, rounded, as little-endian bytes (up to 4).
fn encode_one(dtype: miopenDataType_t, v: f32) -> Option<Vec<u8>> {
    match dtype {
        miopenDataType_t::miopenFloat => Some(v.to_le_bytes().to_vec()),
        miopenDataType_t::miopenHalf => Some(half::f16::from_f32(v).to_le_bytes().to_vec()),
        miopenDataType_t::miopenBFloat16 => Some(half::bf16::from_f32(v).to_le_bytes().to_vec()),
        _ => None,
    }
}
