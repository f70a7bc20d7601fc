//! EXECUTION_PLAN: the plugin's plan for an engine config, which the descriptor owns
//! together with (a reference to) the handle the plan was built on; and
//! `hipdnnBackendExecute`.

use std::sync::Arc;

use hipdnn_flatbuffers_sdk::model::KnobSetting;

use super::attributes::{GetTarget, SetValue};
use super::graph::GraphRef;
use super::{EngineConfigDescriptor, Kind, hipdnnBackendDescriptor_t, referenced};
use super::{
    HIPDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, HIPDNN_ATTR_EXECUTION_PLAN_HANDLE,
    HIPDNN_ATTR_EXECUTION_PLAN_TENSOR_UIDS_EXT, HIPDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
    HIPDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, HIPDNN_TYPE_HANDLE, HIPDNN_TYPE_INT64,
};
use super::{in_attribute, unsupported_attribute, wrong_kind};
use crate::capi::{Object, SharedHandle, boundary, check_live, handle_arc, hipdnnHandle_t, null};
use crate::execution::{OperationGraph, Plan};
use crate::handle::Handle;
use crate::status::*;

/// A built plan and the handle it borrows.
///
/// The plan borrows the [`Handle`] inside `handle`'s allocation: `plan` is declared
/// first, so it is dropped (its execution context destroyed through the handle) before
/// the reference that keeps the handle alive is released.
#[derive(Debug)]
struct BuiltPlan {
    plan: Plan<'static>,
    handle: Arc<SharedHandle>,
}

impl BuiltPlan {
    fn build(
        handle: Arc<SharedHandle>,
        graph: &OperationGraph,
        engine: i64,
        knobs: &[KnobSetting],
    ) -> BackendResult<Self> {
        // SAFETY: the reference points into the `Arc` allocation that `handle` keeps
        // alive and that never moves; the plan borrowing it is stored next to `handle`
        // in `Self`, which drops the plan first (field order) and never hands `handle`
        // out for replacement, so the borrow ends before the `Arc` can be released. Only
        // shared references to a shared handle exist (`SharedHandle`).
        let h: &'static Handle = unsafe { &*std::ptr::from_ref(handle.handle()) };
        let plan = h.create_plan(graph, engine, knobs)?;
        Ok(Self { plan, handle })
    }
}

/// An execution plan descriptor.
#[derive(Debug, Default)]
pub(super) struct PlanDescriptor {
    /// Set by `HIPDNN_ATTR_EXECUTION_PLAN_HANDLE`; the graph's handle when absent.
    handle: Option<Arc<SharedHandle>>,
    config: Option<(GraphRef, i64, Vec<KnobSetting>)>,
    /// Set by finalize.
    built: Option<BuiltPlan>,
}

impl PlanDescriptor {
    pub(super) const TYPE_NAME: &str = "EXECUTION_PLAN";

    pub(super) fn set(&mut self, value: SetValue) -> BackendResult<()> {
        match value.name {
            HIPDNN_ATTR_EXECUTION_PLAN_HANDLE => {
                value.expect_type(HIPDNN_TYPE_HANDLE)?;
                // SAFETY: the type is checked: one handle.
                let h = unsafe { value.one::<hipdnnHandle_t>() }?;
                self.handle = if h.is_null() {
                    None
                } else {
                    // SAFETY: the registry checks the pointer; a live handle is not
                    // destroyed during the call.
                    Some(unsafe { handle_arc(h) }.map_err(|e| in_attribute(value.name, e))?)
                };
            }
            HIPDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG => {
                let d = value.descriptor()?;
                let Kind::EngineConfig(EngineConfigDescriptor {
                    engine: Some((graph, id)),
                    knobs,
                    ..
                }) = &d.kind
                else {
                    return Err(wrong_kind(value.name, "ENGINECFG", &d.kind));
                };
                self.config = Some((graph.clone(), *id, knobs.clone()));
            }
            other => return Err(unsupported_attribute(Self::TYPE_NAME, other)),
        }
        Ok(())
    }

    /// Builds the plugin's plan on the plan's handle, which must be the graph's.
    pub(super) fn finalize(&mut self) -> BackendResult<()> {
        let (g, id, knobs) = self.config.as_ref().ok_or_else(|| {
            BackendError::bad_param("the EXECUTION_PLAN descriptor has no engine config")
        })?;
        let handle = match &self.handle {
            None => Arc::clone(&g.handle),
            Some(handle) if Arc::ptr_eq(handle, &g.handle) => Arc::clone(handle),
            Some(_) => {
                return Err(BackendError::bad_param(
                    "the EXECUTION_PLAN descriptor's handle is not its graph's handle",
                ));
            }
        };
        self.handle = Some(Arc::clone(&handle));
        self.built = Some(BuiltPlan::build(handle, &g.graph, *id, knobs)?);
        Ok(())
    }

    pub(super) fn get(&self, target: GetTarget) -> BackendResult<()> {
        match (&self.built, target.name) {
            (Some(built), HIPDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE) => {
                target.expect_type(HIPDNN_TYPE_INT64)?;
                let size = i64::try_from(built.plan.workspace_size()).unwrap_or(i64::MAX);
                // SAFETY: the type is checked: int64s.
                unsafe { target.put(&[size]) }
            }
            (Some(built), HIPDNN_ATTR_EXECUTION_PLAN_TENSOR_UIDS_EXT) => {
                target.expect_type(HIPDNN_TYPE_INT64)?;
                let uids: Vec<i64> = built.plan.required_uids().collect();
                // SAFETY: the type is checked: int64s.
                unsafe { target.put(&uids) }
            }
            (_, other) => Err(unsupported_attribute(Self::TYPE_NAME, other)),
        }
    }
}

/// Runs a finalized execution plan with a finalized variant pack on `handle` (the
/// plan's handle). The pack is checked against the graph first (a pointer for every
/// non-virtual tensor, aligned; a workspace when one is needed): on any mismatch
/// nothing runs. A plan whose handle was destroyed cannot run: the destroyed handle is
/// `BAD_PARAM` (not a live handle) and no live handle is the plan's; the plan can still
/// be queried and destroyed, which releases its execution context, its plugin handle
/// and its reference to the plugin, once.
///
/// # Safety
/// The handle and descriptors are null or any pointers (checked against the live ones);
/// the pack's pointers are valid for the tensors their uids name and the workspace for
/// the plan's workspace size.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipdnnBackendExecute(
    handle: hipdnnHandle_t,
    execution_plan: hipdnnBackendDescriptor_t,
    variant_pack: hipdnnBackendDescriptor_t,
) -> hipdnnStatus_t {
    boundary("hipdnnBackendExecute", || {
        if handle.is_null() {
            return Err(null("handle"));
        }
        // A destroyed handle is refused here even when a plan still keeps its object.
        check_live(handle.cast_const().cast(), Object::Handle)?;
        // SAFETY: the registry checks the pointers; live descriptors are not destroyed
        // during the call.
        let plan_desc =
            unsafe { referenced(execution_plan, HIPDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG) }?;
        let Kind::Plan(PlanDescriptor {
            built: Some(built), ..
        }) = &plan_desc.kind
        else {
            return Err(BackendError::bad_param(format!(
                "expected an EXECUTION_PLAN descriptor, not {}",
                plan_desc.kind.type_name()
            )));
        };
        // Comparing addresses only: the plan's handle is alive (the plan holds it), so no
        // other live handle can have its address.
        if SharedHandle::as_raw(&built.handle) != handle {
            return Err(BackendError::bad_param(
                "the plan was built on another handle",
            ));
        }
        // SAFETY: per the contract.
        let pack_desc = unsafe { referenced(variant_pack, HIPDNN_ATTR_VARIANT_PACK_UNIQUE_IDS) }?;
        let Kind::VariantPack(pack) = &pack_desc.kind else {
            return Err(BackendError::bad_param(format!(
                "expected a VARIANT_PACK descriptor, not {}",
                pack_desc.kind.type_name()
            )));
        };
        let (pack, workspace) = pack.pack()?;
        // SAFETY: the pointers are valid per the contract; `execute` checks them against
        // the graph before the plugin runs.
        unsafe { built.plan.execute(&pack, workspace) }
    })
}
