//! `TensorValue`, the wire format's one union of structs, by hand.
//!
//! flatc's Rust generator accepts only tables as union members, so the generated
//! `TensorAttributes` knows the tag (`value_type`) but has no accessor for the value
//! slot (see `scripts/rust_schema_variant.py`). This module reads, verifies and writes
//! that slot the way every FlatBuffers implementation lays out a struct union member:
//! the struct is stored out of line and the slot holds a forward offset to it.

use flatbuffers::{
    Allocator, FlatBufferBuilder, ForwardsUOffset, InvalidFlatbuffer, UnionWIPOffset, VOffsetT,
    Verifier, WIPOffset,
};

use crate::error::Error;
use crate::model::json::{JsonUnion, scalar_holder, unknown_member};
use crate::wire;

/// Vtable slot of `TensorAttributes.value`: the slot after its type tag.
pub(crate) const VT_VALUE: VOffsetT = wire::TensorAttributes::VT_VALUE_TYPE + 2;

/// A pass-by-value scalar carried by a tensor (`TensorAttributes.value`).
///
/// The variant is the storage type on the wire, which is not always the tensor's data
/// type: half and bfloat16 scalars travel as `f32`, fp8 scalars as their raw byte.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TensorValue {
    /// `Float32Value`.
    Float32(f32),
    /// `Float16Value`: a half-precision scalar carried as `f32`.
    Float16(f32),
    /// `BFloat16Value`: a bfloat16 scalar carried as `f32`.
    BFloat16(f32),
    /// `Float8Value`: the raw fp8 byte.
    Float8(u8),
    /// `Int32Value`.
    Int32(i32),
    /// `Float64Value`.
    Float64(f64),
    /// `Int64Value`.
    Int64(i64),
    /// `BoolValue`.
    Bool(bool),
}

impl TensorValue {
    /// The union type tag written on the wire.
    pub fn tag(&self) -> wire::TensorValueType {
        match self {
            TensorValue::Float32(_) => wire::TensorValueType::Float32Value,
            TensorValue::Float16(_) => wire::TensorValueType::Float16Value,
            TensorValue::BFloat16(_) => wire::TensorValueType::BFloat16Value,
            TensorValue::Float8(_) => wire::TensorValueType::Float8Value,
            TensorValue::Int32(_) => wire::TensorValueType::Int32Value,
            TensorValue::Float64(_) => wire::TensorValueType::Float64Value,
            TensorValue::Int64(_) => wire::TensorValueType::Int64Value,
            TensorValue::Bool(_) => wire::TensorValueType::BoolValue,
        }
    }

    /// The value widened to `f64` (booleans as 0 or 1; fp8 as its raw byte).
    pub fn as_f64(&self) -> f64 {
        match *self {
            TensorValue::Float32(v) | TensorValue::Float16(v) | TensorValue::BFloat16(v) => {
                f64::from(v)
            }
            TensorValue::Float8(v) => f64::from(v),
            TensorValue::Int32(v) => f64::from(v),
            TensorValue::Float64(v) => v,
            #[expect(clippy::cast_precision_loss, reason = "documented widening")]
            TensorValue::Int64(v) => v as f64,
            TensorValue::Bool(v) => f64::from(u8::from(v)),
        }
    }

    /// Writes the struct out of line and returns its tag and offset.
    pub(crate) fn push<'b, A: Allocator + 'b>(
        &self,
        fbb: &mut FlatBufferBuilder<'b, A>,
    ) -> (wire::TensorValueType, WIPOffset<UnionWIPOffset>) {
        let offset = match *self {
            TensorValue::Float32(v) => fbb.push(wire::Float32Value::new(v)).as_union_value(),
            TensorValue::Float16(v) => fbb.push(wire::Float16Value::new(v)).as_union_value(),
            TensorValue::BFloat16(v) => fbb.push(wire::BFloat16Value::new(v)).as_union_value(),
            TensorValue::Float8(v) => fbb.push(wire::Float8Value::new(v)).as_union_value(),
            TensorValue::Int32(v) => fbb.push(wire::Int32Value::new(v)).as_union_value(),
            TensorValue::Float64(v) => fbb.push(wire::Float64Value::new(v)).as_union_value(),
            TensorValue::Int64(v) => fbb.push(wire::Int64Value::new(v)).as_union_value(),
            TensorValue::Bool(v) => fbb.push(wire::BoolValue::new(v)).as_union_value(),
        };
        (self.tag(), offset)
    }

    /// Reads the value of a tensor from any buffer: the slot is verified first (the
    /// generated verifier does not look at it).
    pub(crate) fn read_checked(
        tensor: &wire::TensorAttributes<'_>,
    ) -> Result<Option<TensorValue>, Error> {
        let tag = tensor.value_type();
        if tag == wire::TensorValueType::NONE && tensor._tab.vtable().get(VT_VALUE) == 0 {
            return Ok(None);
        }
        if tag.0 > wire::TensorValueType::ENUM_MAX {
            return Err(Error::UnknownUnionTag {
                location: String::new(),
                union: "TensorValue",
                tag: tag.0,
            });
        }
        let options = flatbuffers::VerifierOptions::default();
        let mut verifier = Verifier::new(&options, tensor._tab.buf());
        verify(&mut verifier, tensor._tab.loc()).map_err(|source| Error::Invalid {
            root: "TensorAttributes",
            source,
        })?;
        Ok(Self::read(tensor))
    }

    /// Reads the value of a tensor whose buffer went through [`verify`].
    ///
    /// Returns `None` when the tensor carries no value or an unknown tag (rejected
    /// at verification for buffers that reach views).
    pub(crate) fn read(tensor: &wire::TensorAttributes<'_>) -> Option<TensorValue> {
        macro_rules! get {
            ($t:ident) => {
                // SAFETY: the buffer was verified by `verify` (every path that hands out
                // a `wire::TensorAttributes` from untrusted bytes runs it), which checked
                // that this slot holds an in-bounds offset to a struct of this member type.
                unsafe {
                    tensor
                        ._tab
                        .get::<ForwardsUOffset<&wire::$t>>(VT_VALUE, None)
                        .map(|s| s.value())
                }
            };
        }
        Some(match tensor.value_type() {
            wire::TensorValueType::Float32Value => TensorValue::Float32(get!(Float32Value)?),
            wire::TensorValueType::Float16Value => TensorValue::Float16(get!(Float16Value)?),
            wire::TensorValueType::BFloat16Value => TensorValue::BFloat16(get!(BFloat16Value)?),
            wire::TensorValueType::Float8Value => TensorValue::Float8(get!(Float8Value)?),
            wire::TensorValueType::Int32Value => TensorValue::Int32(get!(Int32Value)?),
            wire::TensorValueType::Float64Value => TensorValue::Float64(get!(Float64Value)?),
            wire::TensorValueType::Int64Value => TensorValue::Int64(get!(Int64Value)?),
            wire::TensorValueType::BoolValue => TensorValue::Bool(get!(BoolValue)?),
            _ => return None,
        })
    }
}

impl JsonUnion for TensorValue {
    const UNION: &'static str = "TensorValue";

    fn member_name(&self) -> &'static str {
        self.tag().variant_name().expect("every variant has a tag")
    }

    fn to_json(&self) -> serde_json::Value {
        let value = match *self {
            TensorValue::Float32(v) | TensorValue::Float16(v) | TensorValue::BFloat16(v) => {
                serde_json::json!(v)
            }
            TensorValue::Float8(v) => serde_json::json!(v),
            TensorValue::Int32(v) => serde_json::json!(v),
            TensorValue::Float64(v) => serde_json::json!(v),
            TensorValue::Int64(v) => serde_json::json!(v),
            TensorValue::Bool(v) => serde_json::json!(v),
        };
        serde_json::json!({ "value": value })
    }

    fn from_json(name: &str, value: serde_json::Value) -> Result<Self, String> {
        Ok(match name {
            "Float32Value" => TensorValue::Float32(scalar_holder(name, value)?),
            "Float16Value" => TensorValue::Float16(scalar_holder(name, value)?),
            "BFloat16Value" => TensorValue::BFloat16(scalar_holder(name, value)?),
            "Float8Value" => TensorValue::Float8(scalar_holder(name, value)?),
            "Int32Value" => TensorValue::Int32(scalar_holder(name, value)?),
            "Float64Value" => TensorValue::Float64(scalar_holder(name, value)?),
            "Int64Value" => TensorValue::Int64(scalar_holder(name, value)?),
            "BoolValue" => TensorValue::Bool(scalar_holder(name, value)?),
            _ => return Err(unknown_member::<Self>(name)),
        })
    }
}

/// Verifies the value slot of the `TensorAttributes` table at `table_pos`.
///
/// The generated verifier skips the slot (it is a placeholder in the codegen schema),
/// so every entry point that verifies a `Graph` calls this for each tensor. An unknown
/// tag passes here (as in every FlatBuffers verifier) and is rejected by the caller.
pub(crate) fn verify(
    verifier: &mut Verifier<'_, '_>,
    table_pos: usize,
) -> Result<(), InvalidFlatbuffer> {
    verifier
        .visit_table(table_pos)?
        .visit_union::<wire::TensorValueType, _>(
            "value_type",
            wire::TensorAttributes::VT_VALUE_TYPE,
            "value",
            VT_VALUE,
            false,
            |tag, v, pos| match tag {
                wire::TensorValueType::Float32Value => v
                    .verify_union_variant::<ForwardsUOffset<wire::Float32Value>>(
                        "Float32Value",
                        pos,
                    ),
                wire::TensorValueType::Float16Value => v
                    .verify_union_variant::<ForwardsUOffset<wire::Float16Value>>(
                        "Float16Value",
                        pos,
                    ),
                wire::TensorValueType::BFloat16Value => v
                    .verify_union_variant::<ForwardsUOffset<wire::BFloat16Value>>(
                        "BFloat16Value",
                        pos,
                    ),
                wire::TensorValueType::Float8Value => {
                    v.verify_union_variant::<ForwardsUOffset<wire::Float8Value>>("Float8Value", pos)
                }
                wire::TensorValueType::Int32Value => {
                    v.verify_union_variant::<ForwardsUOffset<wire::Int32Value>>("Int32Value", pos)
                }
                wire::TensorValueType::Float64Value => v
                    .verify_union_variant::<ForwardsUOffset<wire::Float64Value>>(
                        "Float64Value",
                        pos,
                    ),
                wire::TensorValueType::Int64Value => {
                    v.verify_union_variant::<ForwardsUOffset<wire::Int64Value>>("Int64Value", pos)
                }
                wire::TensorValueType::BoolValue => {
                    v.verify_union_variant::<ForwardsUOffset<wire::BoolValue>>("BoolValue", pos)
                }
                _ => Ok(()),
            },
        )?
        .finish();
    Ok(())
}
