//! Table-driven operations: every operation descriptor made of TENSOR attributes, a
//! compute type and scalar parameters, described by a static [`Layout`] (in
//! [`layouts`](super::layouts)) and held by one [`TensorOperation`].
//!
//! A layout lists, in hipDNN's attribute order, the single-TENSOR attributes (`slots`),
//! the TENSOR-array attributes (`arrays`, e.g. batch norm's peer statistics) and the
//! scalar parameters (`params`), each required or optional. The graph lists the node's
//! tensors as hipDNN does: the set slots in order, then the arrays' tensors. Finalizing
//! checks that everything required is set (`BAD_PARAM` naming the first missing
//! attribute), runs the layout's `check` where hipDNN checks values against each other
//! (grouped-matmul routing and shapes, block sizes), and builds the node's attributes
//! with the layout's `build`. Parameters read back in the type they were set in; unset
//! optional ones read as no element (a flag as false, the wire default). Slots and
//! arrays read back as new TENSOR descriptors for the caller (an unset optional slot, or
//! an empty array, as a count of 0), as the module above describes.

use std::sync::Arc;

use hipdnn_data_sdk::DataType;
use hipdnn_flatbuffers_sdk::model::NodeAttributes;

use super::super::attributes::{GetTarget, SetValue};
use super::super::tensor::{
    FrozenTensor, get_data_type, get_text, put_bool, put_i64s, set_bool, set_data_type, set_i64,
    set_text,
};
use super::super::{Kind, unsupported_attribute, wrong_kind};
use super::{get_tensor, get_tensors, missing, put_f32, set_f32, set_tensor};
use crate::capi::enums::tables::*;
use crate::status::*;

/// One TENSOR attribute (or TENSOR-array attribute) of a table-driven operation.
#[derive(Debug)]
pub(super) struct Slot {
    pub(super) attribute: hipdnnBackendAttributeName_t,
    pub(super) name: &'static str,
    pub(super) required: bool,
}

/// `slots![required NAME, optional NAME, …]`: slots named after their constants.
macro_rules! slots {
    ($($required:ident $name:ident),* $(,)?) => {
        &[$($crate::capi::descriptors::operation::table::Slot {
            attribute: $name,
            name: stringify!($name),
            required: slots!(@ $required),
        }),*]
    };
    (@ required) => { true };
    (@ optional) => { false };
}
pub(super) use slots;

/// A C enumeration a parameter takes, whose numbers are the wire format's.
#[derive(Debug)]
pub(super) struct CEnum {
    /// The attribute type that names it, e.g. `HIPDNN_TYPE_REDUCTION_OPERATOR_TYPE`.
    pub(super) ty: hipdnnBackendAttributeType_t,
    /// The C type, for messages.
    pub(super) type_name: &'static str,
    /// The valid C values (equal to the wire values).
    pub(super) values: std::ops::RangeInclusive<i32>,
    /// Whether an `INT64` holding the value is taken too (what an earlier frontend set).
    pub(super) int64_too: bool,
}

/// What one scalar parameter takes: its attribute type and element count.
#[derive(Debug)]
pub(super) enum ParamType {
    /// One `INT64`.
    Int64,
    /// A non-empty `INT64` array.
    Int64s,
    /// One `INT32`, or one `INT64` in its range.
    Int32,
    /// A non-empty `INT32` array, or an `INT64` one whose values fit.
    Int32s,
    /// One `BOOLEAN`; unset reads as false (the wire default).
    Bool,
    /// One `FLOAT`.
    Float,
    /// A `DATA_TYPE` other than the compute type.
    Data,
    /// A `CHAR` string.
    Text,
    /// `CHAR` bytes, kept as given.
    Bytes,
    /// One value of a C enumeration.
    Enum(&'static CEnum),
}

/// One scalar parameter of a table-driven operation.
#[derive(Debug)]
pub(super) struct Param {
    pub(super) attribute: hipdnnBackendAttributeName_t,
    pub(super) name: &'static str,
    pub(super) ty: ParamType,
    pub(super) required: bool,
}

/// `params![required NAME: Type, optional NAME: Enum(&X), …]`.
macro_rules! params {
    ($($required:ident $name:ident : $ty:ident $(($arg:expr))?),* $(,)?) => {
        &[$($crate::capi::descriptors::operation::table::Param {
            attribute: $name,
            name: stringify!($name),
            ty: $crate::capi::descriptors::operation::table::ParamType::$ty $(($arg))?,
            required: params!(@ $required),
        }),*]
    };
    (@ required) => { true };
    (@ optional) => { false };
}
pub(super) use params;

/// A parameter's value as set.
#[derive(Debug, Clone)]
pub(super) enum Value {
    I64(i64),
    I64s(Vec<i64>),
    I32(i32),
    I32s(Vec<i32>),
    Bool(bool),
    F32(f32),
    Data(DataType),
    Text(String),
    Bytes(Vec<u8>),
    /// An enumeration's value (C and wire numbers agree).
    Code(i32),
}

/// What a node holds, by the indices of its kind's layout (the inverse of the layout's
/// `build`): the slots' uids, the arrays' uids and the parameters, as an operation
/// descriptor made from a graph's node takes them.
#[derive(Debug)]
pub(super) struct Unbuilt {
    pub(super) uids: Vec<Option<i64>>,
    pub(super) arrays: Vec<Vec<i64>>,
    pub(super) params: Vec<Option<Value>>,
}

/// What a table-driven operation's node is built from at finalize: the slots' uids
/// (required ones are set), the arrays' uids and the parameters, by index in the layout.
#[derive(Debug)]
pub(super) struct Parts<'a> {
    uids: &'a [Option<i64>],
    arrays: Vec<Vec<i64>>,
    params: &'a [Option<Value>],
}

impl Parts<'_> {
    /// Slot `i`'s uid; a required slot is set by the time the node is built.
    pub(super) fn uid(&self, i: usize) -> i64 {
        self.uids[i].unwrap_or_default()
    }

    /// Optional slot `i`'s uid.
    pub(super) fn opt(&self, i: usize) -> Option<i64> {
        self.uids[i]
    }

    /// Array `i`'s uids.
    pub(super) fn array(&self, i: usize) -> Vec<i64> {
        self.arrays[i].clone()
    }

    pub(super) fn i64(&self, i: usize) -> Option<i64> {
        match &self.params[i] {
            Some(Value::I64(v)) => Some(*v),
            _ => None,
        }
    }

    pub(super) fn i64s(&self, i: usize) -> Vec<i64> {
        match &self.params[i] {
            Some(Value::I64s(v)) => v.clone(),
            _ => Vec::new(),
        }
    }

    pub(super) fn i32(&self, i: usize) -> Option<i32> {
        match &self.params[i] {
            Some(Value::I32(v)) => Some(*v),
            _ => None,
        }
    }

    pub(super) fn i32s(&self, i: usize) -> Vec<i32> {
        match &self.params[i] {
            Some(Value::I32s(v)) => v.clone(),
            _ => Vec::new(),
        }
    }

    /// A flag; unset is false.
    pub(super) fn flag(&self, i: usize) -> bool {
        matches!(self.params[i], Some(Value::Bool(true)))
    }

    /// An optional flag.
    pub(super) fn opt_flag(&self, i: usize) -> Option<bool> {
        match &self.params[i] {
            Some(Value::Bool(v)) => Some(*v),
            _ => None,
        }
    }

    pub(super) fn f32(&self, i: usize) -> Option<f32> {
        match &self.params[i] {
            Some(Value::F32(v)) => Some(*v),
            _ => None,
        }
    }

    pub(super) fn data(&self, i: usize) -> DataType {
        match &self.params[i] {
            Some(Value::Data(v)) => *v,
            _ => DataType::Unset,
        }
    }

    pub(super) fn text(&self, i: usize) -> String {
        match &self.params[i] {
            Some(Value::Text(v)) => v.clone(),
            _ => String::new(),
        }
    }

    pub(super) fn bytes(&self, i: usize) -> Vec<u8> {
        match &self.params[i] {
            Some(Value::Bytes(v)) => v.clone(),
            _ => Vec::new(),
        }
    }

    /// An enumeration's wire value; unset is 0 (every such wire enumeration's default).
    pub(super) fn code(&self, i: usize) -> i8 {
        match &self.params[i] {
            // Checked in range (a C enumeration of a few values) when set.
            Some(Value::Code(v)) => i8::try_from(*v).unwrap_or_default(),
            _ => 0,
        }
    }
}

/// What an operation made of tensors, a compute type and parameters takes and builds.
#[derive(Debug)]
pub(super) struct Layout {
    pub(super) type_name: &'static str,
    /// What `HIPDNN_ATTR_OPERATION_TYPE_EXT` reports; `None` where this header's
    /// `hipdnnOperationType_t` has no value for the kind.
    pub(super) operation_type: Option<hipdnnOperationType_t>,
    /// The TENSOR attributes, in the order hipDNN lists the node's tensors in a graph.
    pub(super) slots: &'static [Slot],
    /// The TENSOR-array attributes; their tensors follow the slots'.
    pub(super) arrays: &'static [Slot],
    /// The scalar parameters.
    pub(super) params: &'static [Param],
    /// The compute-type attribute (required) and its name.
    pub(super) compute: (hipdnnBackendAttributeName_t, &'static str),
    /// Groups of slots (indices) that are set all together or not at all.
    pub(super) together: &'static [&'static [usize]],
    /// What else finalize checks (hipDNN's checks between values), if anything; the
    /// message is prefixed with the type name.
    pub(super) check: Option<Check>,
    /// The node's attributes.
    pub(super) build: fn(&Parts<'_>) -> NodeAttributes,
}

/// A finalize check over the parts and the slots' tensors.
pub(super) type Check = fn(&Parts<'_>, &[Option<Arc<FrozenTensor>>]) -> Result<(), String>;

/// An operation made of tensors, a compute type and parameters, as its [`Layout`] says.
#[derive(Debug, Clone)]
pub(super) struct TensorOperation {
    pub(super) layout: &'static Layout,
    tensors: Vec<Option<Arc<FrozenTensor>>>,
    arrays: Vec<Vec<Arc<FrozenTensor>>>,
    params: Vec<Option<Value>>,
    pub(super) compute: DataType,
}

impl TensorOperation {
    pub(super) fn new(layout: &'static Layout) -> Self {
        Self {
            layout,
            tensors: vec![None; layout.slots.len()],
            arrays: vec![Vec::new(); layout.arrays.len()],
            params: vec![None; layout.params.len()],
            compute: DataType::Unset,
        }
    }

    /// The operation a node of `layout`'s kind stands for, as if each part had been set:
    /// the tensors by uid (`tensor`), the parameters as the node holds them (an
    /// enumeration outside its C values, an unset data type, an empty list or string
    /// read as not set), `compute` as the compute type.
    pub(super) fn from_unbuilt(
        layout: &'static Layout,
        unbuilt: Unbuilt,
        compute: DataType,
        tensor: &dyn Fn(i64) -> BackendResult<Arc<FrozenTensor>>,
    ) -> BackendResult<Self> {
        let tensors = unbuilt
            .uids
            .iter()
            .map(|uid| uid.map(tensor).transpose())
            .collect::<BackendResult<_>>()?;
        let arrays = unbuilt
            .arrays
            .iter()
            .map(|uids| uids.iter().map(|&uid| tensor(uid)).collect())
            .collect::<BackendResult<_>>()?;
        let params = layout
            .params
            .iter()
            .zip(unbuilt.params)
            .map(|(param, value)| match (&param.ty, value) {
                (ParamType::Enum(e), Some(Value::Code(c))) if !e.values.contains(&c) => None,
                (_, Some(Value::Data(DataType::Unset))) => None,
                (_, Some(Value::I64s(v))) if v.is_empty() => None,
                (_, Some(Value::I32s(v))) if v.is_empty() => None,
                (_, Some(Value::Text(v))) if v.is_empty() => None,
                (_, Some(Value::Bytes(v))) if v.is_empty() => None,
                (_, value) => value,
            })
            .collect();
        Ok(Self {
            layout,
            tensors,
            arrays,
            params,
            compute,
        })
    }

    pub(super) fn set(&mut self, value: &SetValue) -> BackendResult<()> {
        let layout = self.layout;
        if let Some(i) = layout.slots.iter().position(|s| s.attribute == value.name) {
            self.tensors[i] = Some(set_tensor(value)?);
        } else if value.name == layout.compute.0 {
            self.compute = set_data_type(value)?;
        } else if let Some(i) = layout.arrays.iter().position(|s| s.attribute == value.name) {
            let mut tensors = Vec::new();
            for d in value.descriptors()? {
                match &d?.kind {
                    Kind::Tensor(t) => tensors.push(Arc::clone(
                        t.frozen().expect("a finalized TENSOR descriptor is frozen"),
                    )),
                    other => return Err(wrong_kind(value.name, "TENSOR", other)),
                }
            }
            self.arrays[i] = tensors;
        } else if let Some(i) = layout.params.iter().position(|p| p.attribute == value.name) {
            self.params[i] = Some(set_param(&layout.params[i].ty, value)?);
        } else {
            return Err(unsupported_attribute(layout.type_name, value.name));
        }
        Ok(())
    }

    /// The node's attributes and its tensors in hipDNN's order (the slots that are set,
    /// then the arrays' tensors).
    pub(super) fn finalize(&self) -> BackendResult<(NodeAttributes, Vec<Arc<FrozenTensor>>)> {
        let layout = self.layout;
        let what = layout.type_name;
        for (slot, tensor) in layout.slots.iter().zip(&self.tensors) {
            if slot.required && tensor.is_none() {
                return Err(missing(what, slot.name));
            }
        }
        for (slot, tensors) in layout.arrays.iter().zip(&self.arrays) {
            if slot.required && tensors.is_empty() {
                return Err(missing(what, slot.name));
            }
        }
        if self.compute == DataType::Unset {
            return Err(missing(what, layout.compute.1));
        }
        for (param, value) in layout.params.iter().zip(&self.params) {
            // An empty required string is not set (hipDNN checks the custom op's id so).
            let empty = matches!(value, Some(Value::Text(t)) if t.is_empty());
            if param.required && (value.is_none() || empty) {
                return Err(missing(what, param.name));
            }
        }
        for group in layout.together {
            let set = group.iter().filter(|&&i| self.tensors[i].is_some()).count();
            if set != 0 && set != group.len() {
                let names: Vec<&str> = group.iter().map(|&i| layout.slots[i].name).collect();
                return Err(BackendError::bad_param(format!(
                    "{what}: {} are set together or not at all",
                    names.join(", ")
                )));
            }
        }
        let uids: Vec<Option<i64>> = self
            .tensors
            .iter()
            .map(|t| t.as_ref().map(|t| t.uid))
            .collect();
        let parts = Parts {
            uids: &uids,
            arrays: self
                .arrays
                .iter()
                .map(|a| a.iter().map(|t| t.uid).collect())
                .collect(),
            params: &self.params,
        };
        if let Some(check) = layout.check {
            check(&parts, &self.tensors)
                .map_err(|e| BackendError::bad_param(format!("{what}: {e}")))?;
        }
        let mut tensors: Vec<_> = self.tensors.iter().flatten().cloned().collect();
        tensors.extend(self.arrays.iter().flatten().cloned());
        Ok(((layout.build)(&parts), tensors))
    }

    /// Reads a tensor (a new TENSOR descriptor for the caller), a tensor array, the
    /// compute type or a parameter back.
    pub(super) fn get(&self, target: &GetTarget) -> BackendResult<()> {
        let layout = self.layout;
        if target.name == layout.compute.0 {
            return get_data_type(target, self.compute);
        }
        if let Some(i) = layout.slots.iter().position(|s| s.attribute == target.name) {
            return get_tensor(target, self.tensors[i].as_ref());
        }
        if let Some(i) = layout
            .arrays
            .iter()
            .position(|s| s.attribute == target.name)
        {
            return get_tensors(target, &self.arrays[i]);
        }
        match layout
            .params
            .iter()
            .position(|p| p.attribute == target.name)
        {
            Some(i) => get_param(&layout.params[i].ty, self.params[i].as_ref(), target),
            None => Err(unsupported_attribute(layout.type_name, target.name)),
        }
    }
}

/// One `HIPDNN_TYPE_INT32`.
fn set_i32(value: &SetValue) -> BackendResult<i32> {
    value.expect_type(HIPDNN_TYPE_INT32)?;
    // SAFETY: the type is checked: one `int32_t`.
    unsafe { value.one::<i32>() }
}

/// `INT64` values as `int32_t`s, each in range.
fn narrow(value: &SetValue, values: &[i64]) -> BackendResult<Vec<i32>> {
    values
        .iter()
        .map(|&v| {
            i32::try_from(v).map_err(|_| {
                BackendError::bad_param(format!(
                    "attribute {}: {v} does not fit an int32_t",
                    value.name
                ))
            })
        })
        .collect()
}

/// A parameter's value, checked against what it takes.
fn set_param(ty: &ParamType, value: &SetValue) -> BackendResult<Value> {
    Ok(match ty {
        ParamType::Int64 => Value::I64(set_i64(value)?),
        ParamType::Int64s => Value::I64s(super::super::tensor::set_i64s(value)?),
        ParamType::Int32 if value.ty() == HIPDNN_TYPE_INT64 => {
            Value::I32(narrow(value, &[set_i64(value)?])?[0])
        }
        ParamType::Int32 => Value::I32(set_i32(value)?),
        ParamType::Int32s => {
            let values = if value.ty() == HIPDNN_TYPE_INT64 {
                narrow(value, &super::super::tensor::set_i64s(value)?)?
            } else {
                value.expect_type(HIPDNN_TYPE_INT32)?;
                // SAFETY: the type is checked: `int32_t`s.
                unsafe { value.elements::<i32>() }?.to_vec()
            };
            if values.is_empty() {
                return Err(BackendError::bad_param(format!(
                    "attribute {} takes at least one element",
                    value.name
                )));
            }
            Value::I32s(values)
        }
        ParamType::Bool => Value::Bool(set_bool(value)?),
        ParamType::Float => Value::F32(set_f32(value)?),
        ParamType::Data => Value::Data(set_data_type(value)?),
        ParamType::Text => Value::Text(set_text(value)?),
        ParamType::Bytes => {
            value.expect_type(HIPDNN_TYPE_CHAR)?;
            // SAFETY: the type is checked: chars, read as bytes.
            Value::Bytes(unsafe { value.elements::<u8>() }?.to_vec())
        }
        ParamType::Enum(e) => {
            let code = if e.int64_too && value.ty() == HIPDNN_TYPE_INT64 {
                i32::try_from(set_i64(value)?).unwrap_or(i32::MIN)
            } else {
                value.expect_type(e.ty)?;
                // SAFETY: the type is checked: one C enumeration value (an int).
                unsafe { value.one::<i32>() }?
            };
            if !e.values.contains(&code) {
                return Err(BackendError::bad_param(format!(
                    "attribute {}: {code} is not a {}",
                    value.name, e.type_name
                )));
            }
            Value::Code(code)
        }
    })
}

/// Writes a parameter with the get-attribute convention; an unset one reads as no
/// element (a flag as false).
fn get_param(ty: &ParamType, value: Option<&Value>, target: &GetTarget) -> BackendResult<()> {
    match (ty, value) {
        (ParamType::Int64 | ParamType::Int64s, v) => {
            let values = match v {
                Some(Value::I64(v)) => vec![*v],
                Some(Value::I64s(v)) => v.clone(),
                _ => Vec::new(),
            };
            put_i64s(target, &values)
        }
        (ParamType::Int32 | ParamType::Int32s, v) => {
            let values = match v {
                Some(Value::I32(v)) => vec![*v],
                Some(Value::I32s(v)) => v.clone(),
                _ => Vec::new(),
            };
            if target.ty() == HIPDNN_TYPE_INT64 {
                let wide: Vec<i64> = values.into_iter().map(i64::from).collect();
                return put_i64s(target, &wide);
            }
            target.expect_type(HIPDNN_TYPE_INT32)?;
            // SAFETY: the type is checked: `int32_t`s.
            unsafe { target.put(&values) }
        }
        (ParamType::Bool, v) => put_bool(target, matches!(v, Some(Value::Bool(true)))),
        (ParamType::Float, v) => put_f32(
            target,
            match v {
                Some(Value::F32(v)) => Some(*v),
                _ => None,
            },
        ),
        (ParamType::Data, v) => get_data_type(
            target,
            match v {
                Some(Value::Data(v)) => *v,
                _ => DataType::Unset,
            },
        ),
        (ParamType::Text, v) => get_text(
            target,
            match v {
                Some(Value::Text(v)) => v.as_str(),
                _ => "",
            },
        ),
        (ParamType::Bytes, v) => {
            target.expect_type(HIPDNN_TYPE_CHAR)?;
            let bytes: &[u8] = match v {
                Some(Value::Bytes(v)) => v,
                _ => &[],
            };
            // SAFETY: the type is checked: chars (bytes).
            unsafe { target.put(bytes) }
        }
        (ParamType::Enum(e), v) => {
            let codes: Vec<i32> = match v {
                Some(Value::Code(c)) => vec![*c],
                _ => Vec::new(),
            };
            if e.int64_too && target.ty() == HIPDNN_TYPE_INT64 {
                let wide: Vec<i64> = codes.into_iter().map(i64::from).collect();
                return put_i64s(target, &wide);
            }
            target.expect_type(e.ty)?;
            // SAFETY: the type is checked: C enumeration values (ints).
            unsafe { target.put(&codes) }
        }
    }
}
