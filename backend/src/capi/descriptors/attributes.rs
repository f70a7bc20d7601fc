//! Reading and writing attribute arrays: the `(type, count, array)` triples of
//! `hipdnnBackendSetAttribute` and the `(type, requested, count, array)` quadruples of
//! `hipdnnBackendGetAttribute`.

use std::ffi::c_void;

use super::{Descriptor, Kind, desc_mut, hipdnnBackendDescriptor_t, into_raw, referenced};
use super::{HIPDNN_TYPE_BACKEND_DESCRIPTOR, hipdnnBackendAttributeType_t};
use crate::capi::{null, write};
use crate::status::*;

/// Most elements one attribute array may hold. Every attribute array is copied, so a
/// count is bounded before anything is allocated: no graph has anywhere near this many
/// tensors, and a larger count is a caller's mistake (or an array that is not there).
pub(crate) const MAX_ELEMENTS: usize = 1 << 24;

/// The value array of one `hipdnnBackendSetAttribute` call.
#[derive(Debug, Clone, Copy)]
pub(super) struct SetValue {
    /// The descriptor being set, which no attribute may refer to.
    owner: hipdnnBackendDescriptor_t,
    /// The attribute name.
    pub(super) name: i32,
    ty: hipdnnBackendAttributeType_t,
    count: i64,
    array: *const c_void,
}

impl SetValue {
    /// # Safety
    /// `array` is null or valid for `count` elements of the type `ty` names.
    pub(super) unsafe fn new(
        owner: hipdnnBackendDescriptor_t,
        name: i32,
        ty: hipdnnBackendAttributeType_t,
        count: i64,
        array: *const c_void,
    ) -> Self {
        Self {
            owner,
            name,
            ty,
            count,
            array,
        }
    }

    /// Checks that the declared attribute type is `want`.
    pub(super) fn expect_type(&self, want: hipdnnBackendAttributeType_t) -> BackendResult<()> {
        expect_type(self.name, self.ty, want)
    }

    /// The declared attribute type.
    pub(super) fn ty(&self) -> hipdnnBackendAttributeType_t {
        self.ty
    }

    /// The elements, read as `T`.
    ///
    /// # Safety
    /// `T` is the element type of the declared attribute type (checked by the caller).
    pub(super) unsafe fn elements<'a, T>(&self) -> BackendResult<&'a [T]> {
        let name = self.name;
        let count = usize::try_from(self.count).map_err(|_| {
            BackendError::bad_param(format!(
                "attribute {name}: negative element count {}",
                self.count
            ))
        })?;
        if count == 0 {
            return Ok(&[]);
        }
        if count > MAX_ELEMENTS {
            return Err(BackendError::bad_param(format!(
                "attribute {name}: element count {count} is more than the {MAX_ELEMENTS} accepted"
            )));
        }
        if self.array.is_null() {
            return Err(null(&format!("attribute {name} array")));
        }
        // SAFETY: non-null and valid for `count` `T`s per `new`'s contract and this one;
        // `count` elements of at most 8 bytes are far below `isize::MAX` bytes.
        Ok(unsafe { std::slice::from_raw_parts(self.array.cast::<T>(), count) })
    }

    /// Exactly one element.
    ///
    /// # Safety
    /// As [`SetValue::elements`].
    pub(super) unsafe fn one<T: Copy>(&self) -> BackendResult<T> {
        // SAFETY: forwarded.
        match unsafe { self.elements::<T>() }? {
            [value] => Ok(*value),
            other => Err(BackendError::bad_param(format!(
                "attribute {} takes 1 element, not {}",
                self.name,
                other.len()
            ))),
        }
    }

    /// A descriptor this attribute refers to: live (the registry checks it), not the
    /// one being set, finalized.
    fn referred<'a>(&self, desc: hipdnnBackendDescriptor_t) -> BackendResult<&'a Descriptor> {
        if desc == self.owner {
            return Err(BackendError::bad_param(format!(
                "attribute {}: a descriptor cannot refer to itself",
                self.name
            )));
        }
        // SAFETY: the registry checks the pointer; the C API's contract is that a
        // descriptor is not destroyed while a call uses it.
        unsafe { referenced(desc, self.name) }
    }

    /// One finalized descriptor (a `BACKEND_DESCRIPTOR` attribute).
    pub(super) fn descriptor<'a>(&self) -> BackendResult<&'a Descriptor> {
        self.expect_type(HIPDNN_TYPE_BACKEND_DESCRIPTOR)?;
        // SAFETY: the type is checked: one descriptor pointer.
        let desc = unsafe { self.one::<hipdnnBackendDescriptor_t>() }?;
        self.referred(desc)
    }

    /// Finalized descriptors (a `BACKEND_DESCRIPTOR` array), each checked as it is
    /// reached.
    pub(super) fn descriptors<'a>(
        &self,
    ) -> BackendResult<impl Iterator<Item = BackendResult<&'a Descriptor>> + use<'a>> {
        self.expect_type(HIPDNN_TYPE_BACKEND_DESCRIPTOR)?;
        // SAFETY: the type is checked: descriptor pointers.
        let all = unsafe { self.elements::<hipdnnBackendDescriptor_t>() }?;
        let this = *self;
        Ok(all.iter().map(move |&desc| this.referred(desc)))
    }

    /// The characters, up to the first NUL, as UTF-8 text.
    pub(super) fn text(&self, bytes: &[u8]) -> BackendResult<String> {
        let bytes = bytes.split(|&b| b == 0).next().unwrap_or_default();
        String::from_utf8(bytes.to_vec()).map_err(|e| {
            BackendError::bad_param(format!("attribute {}: not UTF-8: {e}", self.name))
        })
    }
}

/// The output of one `hipdnnBackendGetAttribute` call.
#[derive(Debug, Clone, Copy)]
pub(super) struct GetTarget {
    /// The descriptor being read, which the array may not hold.
    owner: hipdnnBackendDescriptor_t,
    /// The attribute name.
    pub(super) name: i32,
    ty: hipdnnBackendAttributeType_t,
    /// Elements the caller has room for.
    pub(super) requested: usize,
    count: *mut i64,
    array: *mut c_void,
}

impl GetTarget {
    /// # Safety
    /// `count` is null or writable; `array` is null or valid for `requested` elements of
    /// the type `ty` names.
    pub(super) unsafe fn new(
        owner: hipdnnBackendDescriptor_t,
        name: i32,
        ty: hipdnnBackendAttributeType_t,
        requested: usize,
        count: *mut i64,
        array: *mut c_void,
    ) -> Self {
        Self {
            owner,
            name,
            ty,
            requested,
            count,
            array,
        }
    }

    /// Checks that the declared attribute type is `want`.
    pub(super) fn expect_type(&self, want: hipdnnBackendAttributeType_t) -> BackendResult<()> {
        expect_type(self.name, self.ty, want)
    }

    /// The declared attribute type.
    pub(super) fn ty(&self) -> hipdnnBackendAttributeType_t {
        self.ty
    }

    /// Whether the caller asked for the count only.
    pub(super) fn count_only(&self) -> bool {
        self.array.is_null()
    }

    /// Writes the available count.
    pub(super) fn write_count(&self, available: usize) -> BackendResult<()> {
        // SAFETY: null or writable per `new`'s contract.
        unsafe { write(self.count, "element count", available as i64) }
    }

    /// Writes `values` with the get-attribute convention: the count, and
    /// `min(requested, available)` elements when there is an array.
    ///
    /// # Safety
    /// `T` is the element type of the declared attribute type (checked by the caller).
    pub(super) unsafe fn put<T: Copy>(&self, values: &[T]) -> BackendResult<()> {
        self.write_count(values.len())?;
        if !self.array.is_null() {
            let n = self.requested.min(values.len());
            // SAFETY: room for `requested >= n` elements of `T` per the contracts.
            unsafe { std::ptr::copy_nonoverlapping(values.as_ptr(), self.array.cast::<T>(), n) };
        }
        Ok(())
    }

    /// Hands out new descriptors, as hipDNN does for a descriptor-valued attribute read
    /// that is not filled in place (an operation's TENSOR attributes, a graph's
    /// operations): the array holds `hipdnnBackendDescriptor_t`s, whose first
    /// `min(requested, available)` are overwritten with new, finalized descriptors, the
    /// `i`th made by `make(i)`, each owned by the caller (freed with
    /// `hipdnnBackendDestroyDescriptor`). A null array or `requested` 0 asks for the
    /// count (`available`), which then must have somewhere to go; otherwise the count,
    /// where given, is `available` too. With `all`, an array with room for fewer than
    /// `available` is `BAD_PARAM` and nothing is made.
    pub(super) fn put_new_descriptors(
        &self,
        available: usize,
        all: bool,
        make: impl FnMut(usize) -> Kind,
    ) -> BackendResult<()> {
        self.expect_type(HIPDNN_TYPE_BACKEND_DESCRIPTOR)?;
        if self.count_only() || self.requested == 0 {
            return self.write_count(available);
        }
        if all && self.requested < available {
            return Err(BackendError::bad_param(format!(
                "attribute {}: {available} descriptors to read, the array has room for {}",
                self.name, self.requested
            )));
        }
        if !self.count.is_null() {
            self.write_count(available)?;
        }
        // Nothing below fails: the descriptors made are all handed out.
        let made: Vec<hipdnnBackendDescriptor_t> = (0..self.requested.min(available))
            .map(make)
            .map(|kind| into_raw(kind, true))
            .collect();
        // SAFETY: the type is checked: the array holds `requested >= made.len()`
        // descriptor pointers per `new`'s contract.
        unsafe {
            std::ptr::copy_nonoverlapping(
                made.as_ptr(),
                self.array.cast::<hipdnnBackendDescriptor_t>(),
                made.len(),
            );
        }
        Ok(())
    }

    /// The first `min(requested, available)` of the caller's descriptors (a
    /// `BACKEND_DESCRIPTOR` array to fill), each checked live (and not the one being
    /// read) when iterated to, and used before the next; none when the array is null.
    pub(super) fn descriptors<'a>(
        &self,
        available: usize,
    ) -> impl Iterator<Item = BackendResult<&'a mut Descriptor>> + use<'a> {
        let targets: &[hipdnnBackendDescriptor_t] = if self.array.is_null() {
            &[]
        } else {
            // SAFETY: the caller's array holds `requested` descriptor pointers per
            // `new`'s contract (the caller checked the type); no more than that is read.
            unsafe {
                std::slice::from_raw_parts(
                    self.array.cast::<hipdnnBackendDescriptor_t>(),
                    self.requested.min(available),
                )
            }
        };
        let (owner, name) = (self.owner, self.name);
        targets.iter().map(move |&target| {
            if target == owner {
                return Err(BackendError::bad_param(format!(
                    "attribute {name}: the array holds the descriptor being read"
                )));
            }
            // SAFETY: the registry checks the pointer; each target is used before the
            // next is reached, and it is not the descriptor being read.
            unsafe { desc_mut(target) }
        })
    }
}

fn expect_type(
    name: i32,
    got: hipdnnBackendAttributeType_t,
    want: hipdnnBackendAttributeType_t,
) -> BackendResult<()> {
    if got == want {
        Ok(())
    } else {
        Err(BackendError::bad_param(format!(
            "attribute {name} takes attribute type {want}, not {got}"
        )))
    }
}
