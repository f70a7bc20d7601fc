//! Backend descriptors (`hipdnnBackend*`): the cuDNN-backend-shaped C path from a
//! serialized graph to an executed plan.
//!
//! ```text
//! TENSOR       set UNIQUE_ID, DATA_TYPE, DIMENSIONS, STRIDES (…); finalize
//! OPERATION_CONVOLUTION_FORWARD / _BACKWARD_DATA / _BACKWARD_FILTER, OPERATION_POINTWISE,
//! OPERATION_BATCHNORM_INFERENCE_EXT (and _VARIANCE_), OPERATION_BATCHNORM_EXT,
//! OPERATION_BATCHNORM_BACKWARD_EXT, OPERATION_MATMUL, OPERATION_REDUCTION,
//! OPERATION_LAYERNORM_EXT / _BACKWARD_EXT, OPERATION_RMSNORM_EXT / _BACKWARD_EXT,
//! OPERATION_RESAMPLE_FWD, OPERATION_SDPA_FWD, OPERATION_SDPA_BWD_EXT,
//! OPERATION_BLOCK_SCALE_QUANTIZE / _DEQUANTIZE, OPERATION_CUSTOM_OP_EXT,
//! OPERATION_MOE_GROUPED_MATMUL / _BWD
//!              set the TENSORs and parameters, OPERATION_NAME_EXT; finalize;
//!              get them back (a TENSOR attribute as a new, caller-owned TENSOR)
//! OPERATIONGRAPH set OPS (and data types, name, preferred engine), HANDLE; finalize
//!              builds and validates the graph; get OPS (new, caller-owned operation
//!              descriptors; before finalize too, as the graph's other attributes)
//! hipdnnBackendCreateAndDeserializeGraph_ext  → OPERATIONGRAPH (set HANDLE, finalize;
//!              get OPS: an operation descriptor per node)
//! ENGINEHEUR   set OPERATION_GRAPH, MODE (required: HIPDNN_HEUR_MODE_FALLBACK, another is
//!              NOT_SUPPORTED), FIND_FIRST_EXT; finalize ranks the engines (with FIND_FIRST_EXT
//!              only the best one); get RESULTS fills caller-created ENGINECFG descriptors,
//!              best first; get MODE, FIND_FIRST_EXT
//! ENGINE       set OPERATION_GRAPH, GLOBAL_INDEX (the engine id); get NAME_EXT, BEHAVIOR_NOTE,
//!              KNOB_INFO
//! KNOB_INFO    made by ENGINE's get KNOB_INFO (caller-owned, finalized); get TYPE,
//!              DEFAULT_VALUE(_TYPE), MINIMUM/MAXIMUM_VALUE, STRIDE, VALID_VALUES_*, …
//! KNOB_CHOICE  set KNOB_TYPE (the knob id, CHAR), KNOB_VALUE (INT64, DOUBLE or CHAR)
//! ENGINECFG    set ENGINE, KNOB_CHOICES; finalize checks the settings against the engine
//!              and asks the plugin for the workspace; get WORKSPACE_SIZE
//! EXECUTION_PLAN set ENGINE_CONFIG (and HANDLE); finalize builds the plugin's plan;
//!              get WORKSPACE_SIZE, TENSOR_UIDS_EXT
//! VARIANT_PACK set UNIQUE_IDS, DATA_POINTERS, WORKSPACE
//! hipdnnBackendExecute(handle, plan, variant pack)
//! ```
//!
//! Setting a descriptor attribute copies what it refers to, so the referenced
//! descriptor may be destroyed afterwards. A finalized descriptor cannot change
//! (`NOT_INITIALIZED`, hipDNN's status for it); a descriptor must be finalized before
//! its attributes are read or it is used by another one.
//!
//! Every descriptor and handle pointer that comes in is looked up among the live ones
//! (`capi::LIVE`) and every descriptor's kind checked where it is used, so a destroyed
//! descriptor, a handle passed as a descriptor (or the reverse) or a descriptor of the
//! wrong kind is `BAD_PARAM` naming what was expected, not a crash later.
//!
//! Descriptors own what they use. An operation graph set to a handle keeps a reference
//! to it, and so does everything made from that graph, down to the execution plan,
//! which also owns the plugin's plan: destroying the handle first is safe, and the
//! handle goes with the last descriptor that refers to it (see `hipdnnDestroy`).
//!
//! Each kind of descriptor lives in its own module (`tensor`, `operation`, `graph`,
//! `engine` for the heuristic, engine and engine config, `knob_choice`, `plan`,
//! `variant_pack`) with
//! its attributes and its finalization; this module holds what they share and the five
//! generic functions that dispatch to them.

use std::ffi::c_void;

use super::enums::tables::*;
use super::{Object, boundary, check_live, null, register, unregister};
use crate::status::*;

mod attributes;
mod engine;
mod graph;
mod knob_choice;
mod knob_info;
mod operation;
mod plan;
mod tensor;
mod variant_pack;

use attributes::{GetTarget, SetValue};
use engine::{EngineConfigDescriptor, EngineDescriptor, HeuristicDescriptor};
use graph::GraphDescriptor;
use knob_choice::KnobChoiceDescriptor;
use knob_info::KnobInfoDescriptor;
use operation::OperationDescriptor;
use plan::PlanDescriptor;
use tensor::TensorDescriptor;
use variant_pack::VariantPackDescriptor;

pub use graph::{
    hipdnnBackendCreateAndDeserializeGraph_ext, hipdnnBackendCreateAndDeserializeJsonGraph_ext,
    hipdnnBackendGetSerializedBinaryGraph_ext, hipdnnBackendGetSerializedJsonGraph_ext,
};
pub use plan::hipdnnBackendExecute;

/// Opaque target of [`hipdnnBackendDescriptor_t`] (declared, never defined, in C; the
/// struct tag is hipDNN's).
#[derive(Debug)]
pub struct HipdnnBackendDescriptor {
    _private: [u8; 0],
}

/// A backend descriptor, created by [`hipdnnBackendCreateDescriptor`] (or a
/// deserializing constructor) and freed by [`hipdnnBackendDestroyDescriptor`].
pub type hipdnnBackendDescriptor_t = *mut HipdnnBackendDescriptor;

/// What a descriptor holds, by kind.
#[derive(Debug)]
enum Kind {
    Graph(GraphDescriptor),
    Heuristic(HeuristicDescriptor),
    Engine(EngineDescriptor),
    EngineConfig(EngineConfigDescriptor),
    KnobChoice(KnobChoiceDescriptor),
    KnobInfo(KnobInfoDescriptor),
    Plan(PlanDescriptor),
    VariantPack(VariantPackDescriptor),
    Tensor(TensorDescriptor),
    Operation(OperationDescriptor),
}

/// The object behind a [`hipdnnBackendDescriptor_t`].
#[derive(Debug)]
struct Descriptor {
    kind: Kind,
    finalized: bool,
}

impl Kind {
    fn type_name(&self) -> &'static str {
        match self {
            Kind::Graph(_) => GraphDescriptor::TYPE_NAME,
            Kind::Heuristic(_) => HeuristicDescriptor::TYPE_NAME,
            Kind::Engine(_) => EngineDescriptor::TYPE_NAME,
            Kind::EngineConfig(_) => EngineConfigDescriptor::TYPE_NAME,
            Kind::KnobChoice(_) => KnobChoiceDescriptor::TYPE_NAME,
            Kind::KnobInfo(_) => KnobInfoDescriptor::TYPE_NAME,
            Kind::Plan(_) => PlanDescriptor::TYPE_NAME,
            Kind::VariantPack(_) => VariantPackDescriptor::TYPE_NAME,
            Kind::Tensor(_) => TensorDescriptor::TYPE_NAME,
            Kind::Operation(o) => o.type_name(),
        }
    }
}

/// The descriptor behind `desc`, once the registry says it is a live one.
///
/// # Safety
/// A live descriptor is used by one thread at a time and not destroyed while the
/// reference is used; no other reference to it is alive.
unsafe fn desc_mut<'a>(desc: hipdnnBackendDescriptor_t) -> BackendResult<&'a mut Descriptor> {
    if desc.is_null() {
        return Err(null("descriptor"));
    }
    check_live(desc.cast_const().cast(), Object::Descriptor)?;
    // SAFETY: checked live: the Box made by `into_raw`, not yet freed.
    Ok(unsafe { &mut *desc.cast::<Descriptor>() })
}

/// The type name of a live descriptor ("ENGINEHEUR", …), for messages.
///
/// # Safety
/// `desc` is a live descriptor (the registry says so), not being mutated.
pub(crate) unsafe fn kind_name(desc: hipdnnBackendDescriptor_t) -> &'static str {
    // SAFETY: per the contract, the Box made by `into_raw`, not yet freed.
    unsafe { &*desc.cast::<Descriptor>() }.kind.type_name()
}

fn into_raw(kind: Kind, finalized: bool) -> hipdnnBackendDescriptor_t {
    let raw: hipdnnBackendDescriptor_t =
        Box::into_raw(Box::new(Descriptor { kind, finalized })).cast();
    register(raw.cast_const().cast(), Object::Descriptor);
    raw
}

/// Attribute `name` on a descriptor of `type_name`, which has no such attribute.
fn unsupported_attribute(type_name: &str, name: hipdnnBackendAttributeName_t) -> BackendError {
    BackendError::not_supported(format!(
        "attribute {name} is not supported on a {type_name} descriptor"
    ))
}

/// A finalized descriptor, referenced by attribute `name`.
///
/// # Safety
/// A live descriptor is not destroyed or mutated while the reference is used.
unsafe fn referenced<'a>(
    desc: hipdnnBackendDescriptor_t,
    name: i32,
) -> BackendResult<&'a Descriptor> {
    if desc.is_null() {
        return Err(null("descriptor"));
    }
    check_live(desc.cast_const().cast(), Object::Descriptor)?;
    // SAFETY: checked live: the Box made by `into_raw`, not yet freed; shared use only.
    let d = unsafe { &*desc.cast_const().cast::<Descriptor>() };
    if !d.finalized {
        return Err(BackendError::new(
            HIPDNN_STATUS_BAD_PARAM_NOT_FINALIZED,
            format!(
                "attribute {name}: the {} descriptor is not finalized",
                d.kind.type_name()
            ),
        ));
    }
    Ok(d)
}

/// `error`, as the error of attribute `name`.
fn in_attribute(name: i32, error: BackendError) -> BackendError {
    BackendError::new(error.status, format!("attribute {name}: {}", error.message))
}

fn wrong_kind(name: i32, want: &str, got: &Kind) -> BackendError {
    BackendError::bad_param(format!(
        "attribute {name} takes {} {want} descriptor, not {} {}",
        super::article(want),
        super::article(got.type_name()),
        got.type_name()
    ))
}

/// Creates an empty descriptor of `descriptor_type`; free it with
/// [`hipdnnBackendDestroyDescriptor`]. Implemented: ENGINEHEUR, ENGINE, ENGINECFG,
/// KNOB_CHOICE, EXECUTION_PLAN, VARIANT_PACK, and for building a graph TENSOR, the
/// operations (OPERATION_CONVOLUTION_FORWARD, _BACKWARD_DATA and _BACKWARD_FILTER,
/// OPERATION_POINTWISE, OPERATION_BATCHNORM_INFERENCE_DESCRIPTOR_EXT and its _VARIANCE_
/// form, OPERATION_BATCHNORM_DESCRIPTOR_EXT, OPERATION_BATCHNORM_BACKWARD_DESCRIPTOR_EXT,
/// OPERATION_MATMUL, OPERATION_REDUCTION, OPERATION_LAYERNORM_DESCRIPTOR_EXT and its
/// _BACKWARD_ form, OPERATION_RMSNORM_DESCRIPTOR_EXT and its _BACKWARD_ form,
/// OPERATION_RESAMPLE_FWD, OPERATION_SDPA_FWD, OPERATION_SDPA_BWD_DESCRIPTOR_EXT,
/// OPERATION_BLOCK_SCALE_QUANTIZE and _DEQUANTIZE, OPERATION_CUSTOM_OP_DESCRIPTOR_EXT,
/// OPERATION_MOE_GROUPED_MATMUL and its _BWD_ form) and OPERATIONGRAPH (from `HIPDNN_ATTR_OPERATIONGRAPH_OPS`); any
/// other kind is `NOT_SUPPORTED`. An operation
/// graph can also be made from bytes ([`hipdnnBackendCreateAndDeserializeGraph_ext`]).
///
/// # Safety
/// `descriptor` is null or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipdnnBackendCreateDescriptor(
    descriptor_type: hipdnnBackendDescriptorType_t,
    descriptor: *mut hipdnnBackendDescriptor_t,
) -> hipdnnStatus_t {
    boundary("hipdnnBackendCreateDescriptor", || {
        if descriptor.is_null() {
            return Err(null("descriptor"));
        }
        let kind = match descriptor_type {
            HIPDNN_BACKEND_ENGINEHEUR_DESCRIPTOR => Kind::Heuristic(HeuristicDescriptor::default()),
            HIPDNN_BACKEND_ENGINE_DESCRIPTOR => Kind::Engine(EngineDescriptor::default()),
            HIPDNN_BACKEND_ENGINECFG_DESCRIPTOR => {
                Kind::EngineConfig(EngineConfigDescriptor::default())
            }
            HIPDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR => {
                Kind::KnobChoice(KnobChoiceDescriptor::default())
            }
            HIPDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR => Kind::Plan(PlanDescriptor::default()),
            HIPDNN_BACKEND_VARIANT_PACK_DESCRIPTOR => {
                Kind::VariantPack(VariantPackDescriptor::default())
            }
            HIPDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR => {
                Kind::Graph(GraphDescriptor::from_operations())
            }
            HIPDNN_BACKEND_TENSOR_DESCRIPTOR => Kind::Tensor(TensorDescriptor::default()),
            other => match OperationDescriptor::new(other) {
                Some(op) => Kind::Operation(op),
                None => {
                    return Err(BackendError::not_supported(format!(
                        "descriptor type {other} is not supported"
                    )));
                }
            },
        };
        // SAFETY: checked non-null; writable per the contract.
        unsafe { descriptor.write(into_raw(kind, false)) };
        Ok(())
    })
}

/// Destroys a descriptor; null does nothing. An execution plan descriptor releases the
/// plugin's plan; a descriptor that referred to a handle releases its reference, which
/// destroys the handle when `hipdnnDestroy` already released the caller's. A pointer
/// that is not a live descriptor (destroyed already, never made here, a handle) is
/// `BAD_PARAM` and nothing is freed; hipDNN itself crashes on a double destroy, so
/// portable code must not rely on this.
///
/// # Safety
/// `descriptor` is null or any pointer; not used afterwards once destroyed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipdnnBackendDestroyDescriptor(
    descriptor: hipdnnBackendDescriptor_t,
) -> hipdnnStatus_t {
    boundary("hipdnnBackendDestroyDescriptor", || {
        if !descriptor.is_null() {
            unregister(descriptor.cast_const().cast(), Object::Descriptor)?;
            // SAFETY: it was live: a Box of `into_raw`, released once (it is no longer
            // registered).
            drop(unsafe { Box::from_raw(descriptor.cast::<Descriptor>()) });
        }
        Ok(())
    })
}

/// Sets an attribute of an unfinalized descriptor (`NOT_INITIALIZED` once finalized).
/// Setting a handle (`HIPDNN_TYPE_HANDLE`) takes a reference to it. A negative `count`,
/// or one above 16,777,216 (2^24) elements, is `BAD_PARAM`, checked before the array is
/// read. Handles and descriptors in the array are checked against the live ones and
/// their kind: a descriptor where a handle is expected, a descriptor of the wrong kind
/// (e.g. not an OPERATIONGRAPH for `HIPDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH`), the
/// descriptor being set, or a destroyed one is `BAD_PARAM` naming what was expected.
///
/// # Safety
/// `descriptor` is null or any pointer (checked against the live descriptors); `array`
/// is null or valid for `count` elements of the type `attribute_type` names.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipdnnBackendSetAttribute(
    descriptor: hipdnnBackendDescriptor_t,
    name: hipdnnBackendAttributeName_t,
    attribute_type: hipdnnBackendAttributeType_t,
    count: i64,
    array: *const c_void,
) -> hipdnnStatus_t {
    boundary("hipdnnBackendSetAttribute", || {
        // SAFETY: per the contract.
        let d = unsafe { desc_mut(descriptor) }?;
        if d.finalized {
            return Err(BackendError::new(
                HIPDNN_STATUS_NOT_INITIALIZED,
                format!(
                    "the {} descriptor is finalized and cannot change",
                    d.kind.type_name()
                ),
            ));
        }
        // SAFETY: the array matches the declared type and count per the contract; each
        // descriptor checks the type before reading.
        let value = unsafe { SetValue::new(descriptor, name, attribute_type, count, array) };
        match &mut d.kind {
            Kind::Graph(g) => g.set(value),
            Kind::Heuristic(h) => h.set(value),
            Kind::Engine(e) => e.set(value),
            Kind::EngineConfig(c) => c.set(value),
            Kind::KnobChoice(k) => k.set(value),
            // Made finalized (by an ENGINE descriptor), so never reached.
            Kind::KnobInfo(_) => Err(unsupported_attribute(KnobInfoDescriptor::TYPE_NAME, name)),
            Kind::Plan(p) => p.set(value),
            Kind::VariantPack(v) => v.set(value),
            Kind::Tensor(t) => t.set(value),
            Kind::Operation(o) => o.set(value),
        }
    })
}

/// Finalizes a descriptor: checks that it is complete and consistent, and does the
/// work its kind stands for (ranking engines, building the plan).
///
/// # Safety
/// `descriptor` is null or any pointer (checked against the live descriptors).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipdnnBackendFinalize(
    descriptor: hipdnnBackendDescriptor_t,
) -> hipdnnStatus_t {
    boundary("hipdnnBackendFinalize", || {
        // SAFETY: per the contract.
        let d = unsafe { desc_mut(descriptor) }?;
        if d.finalized {
            return Err(BackendError::new(
                HIPDNN_STATUS_NOT_INITIALIZED,
                format!("the {} descriptor is already finalized", d.kind.type_name()),
            ));
        }
        match &mut d.kind {
            Kind::Graph(g) => g.finalize(),
            Kind::Heuristic(h) => h.finalize(),
            Kind::Engine(e) => e.finalize(),
            Kind::EngineConfig(c) => c.finalize(),
            Kind::KnobChoice(k) => k.finalize(),
            Kind::KnobInfo(_) => Ok(()),
            Kind::Plan(p) => p.finalize(),
            Kind::VariantPack(v) => v.finalize(),
            Kind::Tensor(t) => t.finalize(),
            Kind::Operation(o) => o.finalize(),
        }?;
        d.finalized = true;
        Ok(())
    })
}

/// Reads an attribute of a finalized descriptor (`NOT_INITIALIZED` before; an
/// OPERATIONGRAPH reads before too, as in hipDNN, all but its HANDLE and
/// ENGINE_GLOBAL_COUNT): writes `min(requested, available)` elements to `array` and the available count to
/// `*count`. A null `array` (or `requested` 0) asks for the count only; a negative
/// `requested` with an array is `BAD_PARAM`. For `HIPDNN_ATTR_ENGINEHEUR_RESULTS`,
/// `array` holds caller-created ENGINECFG descriptors, which are filled and finalized
/// (each checked against the live descriptors, and of kind ENGINECFG, else
/// `BAD_PARAM`). `HIPDNN_ATTR_ENGINECFG_WORKSPACE_SIZE` is read as exactly one `INT64`
/// into a non-null array.
///
/// Other descriptor-valued attributes (`HIPDNN_TYPE_BACKEND_DESCRIPTOR`) hand out new
/// descriptors, as in hipDNN: `array` points to `hipdnnBackendDescriptor_t`s (whatever
/// they held is overwritten, not freed), and the backend writes a new, finalized
/// descriptor to each of the first `min(requested, available)`; the caller owns each
/// and frees it with [`hipdnnBackendDestroyDescriptor`], in any order with the
/// descriptor it was read from. These are:
/// * an operation's TENSOR attributes (e.g. `HIPDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X`:
///   the count is 1, or 0 for an optional tensor that is not set, when nothing is
///   written) and TENSOR arrays (`..._PEER_STATS_EXT`,
///   `HIPDNN_ATTR_OPERATION_CUSTOM_OP_INPUTS_EXT` and `_OUTPUTS_EXT`: the count is the
///   array's length), each a TENSOR descriptor of the tensor that was set (same uid,
///   name, dimensions, strides, type, value), which may be set on another operation;
/// * `HIPDNN_ATTR_OPERATIONGRAPH_OPS`: one operation descriptor per operation, in order,
///   whose attributes read back as the operation's (for a graph made from bytes, the
///   operation each node stands for; a node no operation descriptor stands for, such as
///   resample backward, is `NOT_SUPPORTED`);
/// * `HIPDNN_ATTR_ENGINE_KNOB_INFO`: one KNOB_INFO descriptor per knob.
///
/// For the last two the array must have room for all of them (else `BAD_PARAM` and
/// nothing is made). When descriptors are handed out for TENSOR attributes or `OPS`,
/// `count` may be null.
///
/// # Safety
/// `descriptor` is null or any pointer (checked against the live descriptors); `count`
/// is null or writable; `array` is null or valid for `requested` elements of the type
/// `attribute_type` names.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipdnnBackendGetAttribute(
    descriptor: hipdnnBackendDescriptor_t,
    name: hipdnnBackendAttributeName_t,
    attribute_type: hipdnnBackendAttributeType_t,
    requested: i64,
    count: *mut i64,
    array: *mut c_void,
) -> hipdnnStatus_t {
    boundary("hipdnnBackendGetAttribute", || {
        // SAFETY: per the contract.
        let d = unsafe { desc_mut(descriptor) }?;
        // hipDNN reads a graph before it is finalized too (its frontend unpacks a graph
        // made from bytes without a handle): the graph refuses what needs finalizing.
        if !d.finalized && !matches!(d.kind, Kind::Graph(_)) {
            return Err(BackendError::new(
                HIPDNN_STATUS_NOT_INITIALIZED,
                format!("the {} descriptor is not finalized", d.kind.type_name()),
            ));
        }
        if requested < 0 && !array.is_null() {
            return Err(BackendError::bad_param(format!(
                "attribute {name}: negative requested element count {requested}"
            )));
        }
        let requested = usize::try_from(requested).unwrap_or(0);
        // SAFETY: per the contract.
        let target =
            unsafe { GetTarget::new(descriptor, name, attribute_type, requested, count, array) };
        match &d.kind {
            Kind::Graph(g) => g.get(target, d.finalized),
            Kind::Heuristic(h) => h.get(target),
            Kind::Engine(e) => e.get(target),
            Kind::Plan(p) => p.get(target),
            Kind::Tensor(t) => t.get(target),
            Kind::Operation(o) => o.get(target),
            Kind::EngineConfig(c) => c.get(target),
            Kind::KnobInfo(k) => k.get(target),
            other @ (Kind::KnobChoice(_) | Kind::VariantPack(_)) => {
                Err(unsupported_attribute(other.type_name(), name))
            }
        }
    })
}
