//! VARIANT_PACK: the tensor pointers and the workspace of one execution.

use std::ffi::c_void;

use super::attributes::SetValue;
use super::unsupported_attribute;
use super::{
    HIPDNN_ATTR_VARIANT_PACK_DATA_POINTERS, HIPDNN_ATTR_VARIANT_PACK_UNIQUE_IDS,
    HIPDNN_ATTR_VARIANT_PACK_WORKSPACE, HIPDNN_TYPE_INT64, HIPDNN_TYPE_VOID_PTR,
};
use crate::execution::VariantPack;
use crate::status::*;

/// A variant pack descriptor. The pointers are the caller's; nothing is owned.
#[derive(Debug)]
pub(super) struct VariantPackDescriptor {
    uids: Vec<i64>,
    pointers: Vec<*mut c_void>,
    workspace: *mut c_void,
}

impl Default for VariantPackDescriptor {
    fn default() -> Self {
        Self {
            uids: Vec::new(),
            pointers: Vec::new(),
            workspace: std::ptr::null_mut(),
        }
    }
}

impl VariantPackDescriptor {
    pub(super) const TYPE_NAME: &str = "VARIANT_PACK";

    pub(super) fn set(&mut self, value: SetValue) -> BackendResult<()> {
        match value.name {
            HIPDNN_ATTR_VARIANT_PACK_UNIQUE_IDS => {
                value.expect_type(HIPDNN_TYPE_INT64)?;
                // SAFETY: the type is checked: int64s.
                self.uids = unsafe { value.elements::<i64>() }?.to_vec();
            }
            HIPDNN_ATTR_VARIANT_PACK_DATA_POINTERS => {
                value.expect_type(HIPDNN_TYPE_VOID_PTR)?;
                // SAFETY: the type is checked: pointers.
                self.pointers = unsafe { value.elements::<*mut c_void>() }?.to_vec();
            }
            HIPDNN_ATTR_VARIANT_PACK_WORKSPACE => {
                value.expect_type(HIPDNN_TYPE_VOID_PTR)?;
                // SAFETY: the type is checked: one pointer.
                self.workspace = unsafe { value.one::<*mut c_void>() }?;
            }
            other => return Err(unsupported_attribute(Self::TYPE_NAME, other)),
        }
        Ok(())
    }

    pub(super) fn finalize(&mut self) -> BackendResult<()> {
        if self.uids.len() != self.pointers.len() {
            return Err(BackendError::bad_param(format!(
                "the VARIANT_PACK descriptor has {} uids but {} data pointers",
                self.uids.len(),
                self.pointers.len()
            )));
        }
        Ok(())
    }

    /// The pack for [`Plan::execute`](crate::Plan::execute) and the workspace.
    ///
    /// # Errors
    /// A uid given twice.
    pub(super) fn pack(&self) -> BackendResult<(VariantPack, *mut c_void)> {
        let mut pack = VariantPack::new();
        for (&uid, &pointer) in self.uids.iter().zip(&self.pointers) {
            if pack.buffers().contains_key(&uid) {
                return Err(BackendError::bad_param(format!(
                    "variant pack: uid {uid} appears twice"
                )));
            }
            pack.set(uid, pointer);
        }
        Ok((pack, self.workspace))
    }
}
