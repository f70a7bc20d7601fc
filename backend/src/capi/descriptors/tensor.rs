//! TENSOR: one tensor of a graph built from descriptors (uid, name, element type, dims,
//! strides, virtual, pass-by-value scalar, alignment, ragged offsets).
//!
//! Finalizing freezes it: operation descriptors that refer to it share the frozen tensor
//! (so they may outlive the descriptor), and an operation graph holds every tensor its
//! operations use once, checking that a uid always names the same descriptor. Reading a
//! TENSOR attribute of an operation back makes a new, finalized TENSOR descriptor over
//! the same frozen tensor ([`TensorDescriptor::from_frozen`]), which counts as the same
//! descriptor there, as hipDNN's wrapper around the same tensor object does.

use std::sync::Arc;

use hipdnn_data_sdk::DataType;
use hipdnn_flatbuffers_sdk::TensorValue;
use hipdnn_flatbuffers_sdk::model::TensorAttributes;

use super::attributes::{GetTarget, SetValue};
use super::unsupported_attribute;
use crate::capi::enums::tables::*;
use crate::status::*;

/// A tensor descriptor: the tensor being described, and once finalized, the frozen copy
/// that operations share.
#[derive(Debug, Default)]
pub(super) struct TensorDescriptor {
    tensor: TensorAttributes,
    /// The bytes given for `HIPDNN_ATTR_TENSOR_VALUE_EXT`, as they are read back.
    value_bytes: Vec<u8>,
    frozen: Option<Arc<FrozenTensor>>,
}

/// A finalized tensor as operations share it: the tensor, and the bytes its value was
/// given as (so a TENSOR descriptor made from it reads `HIPDNN_ATTR_TENSOR_VALUE_EXT`
/// back exactly). It reads as the tensor.
#[derive(Debug)]
pub(super) struct FrozenTensor {
    pub(super) attributes: TensorAttributes,
    value_bytes: Vec<u8>,
}

impl FrozenTensor {
    /// A tensor of a graph made from bytes, as a TENSOR descriptor that had been set to
    /// it would freeze it: its value as the bytes `HIPDNN_ATTR_TENSOR_VALUE_EXT` takes
    /// for the value's storage type (half and bfloat16 as their 2 bytes, fp8 as its
    /// byte).
    pub(super) fn from_graph(attributes: TensorAttributes) -> Arc<Self> {
        let value_bytes = match attributes.value {
            None => Vec::new(),
            Some(TensorValue::Float32(v)) => v.to_ne_bytes().to_vec(),
            Some(TensorValue::Float64(v)) => v.to_ne_bytes().to_vec(),
            Some(TensorValue::Float16(v)) => f32_to_f16(v).to_ne_bytes().to_vec(),
            Some(TensorValue::BFloat16(v)) => f32_to_bf16(v).to_ne_bytes().to_vec(),
            Some(TensorValue::Float8(b)) => vec![b],
            Some(TensorValue::Int32(v)) => v.to_ne_bytes().to_vec(),
            Some(TensorValue::Int64(v)) => v.to_ne_bytes().to_vec(),
            Some(TensorValue::Bool(b)) => vec![u8::from(b)],
        };
        Arc::new(Self {
            attributes,
            value_bytes,
        })
    }
}

impl std::ops::Deref for FrozenTensor {
    type Target = TensorAttributes;

    fn deref(&self) -> &TensorAttributes {
        &self.attributes
    }
}

/// The wire element type of a C API `hipdnnDataType_t` (the two numberings differ).
pub(super) fn data_type_from_c(value: hipdnnDataType_t) -> Option<DataType> {
    Some(match value {
        HIPDNN_DATA_FLOAT => DataType::Float,
        HIPDNN_DATA_DOUBLE => DataType::Double,
        HIPDNN_DATA_HALF => DataType::Half,
        HIPDNN_DATA_INT8 => DataType::Int8,
        HIPDNN_DATA_INT32 => DataType::Int32,
        HIPDNN_DATA_UINT8 => DataType::Uint8,
        HIPDNN_DATA_BFLOAT16 => DataType::Bfloat16,
        HIPDNN_DATA_FP8_E4M3 => DataType::Fp8E4m3,
        HIPDNN_DATA_FP8_E5M2 => DataType::Fp8E5m2,
        HIPDNN_DATA_FP8_E8M0 => DataType::Fp8E8m0,
        HIPDNN_DATA_FP4_E2M1 => DataType::Fp4E2m1,
        HIPDNN_DATA_INT4 => DataType::Int4,
        HIPDNN_DATA_FP6_E2M3_EXT => DataType::Fp6E2m3,
        HIPDNN_DATA_FP6_E3M2_EXT => DataType::Fp6E3m2,
        HIPDNN_DATA_INT64 => DataType::Int64,
        HIPDNN_DATA_FP8_E4M3_FNUZ => DataType::Fp8E4m3Fnuz,
        HIPDNN_DATA_FP8_E5M2_FNUZ => DataType::Fp8E5m2Fnuz,
        _ => return None,
    })
}

/// The C API `hipdnnDataType_t` of a wire element type (`None` for `UNSET`).
pub(super) fn data_type_to_c(value: DataType) -> Option<hipdnnDataType_t> {
    Some(match value {
        DataType::Unset => return None,
        DataType::Float => HIPDNN_DATA_FLOAT,
        DataType::Double => HIPDNN_DATA_DOUBLE,
        DataType::Half => HIPDNN_DATA_HALF,
        DataType::Int8 => HIPDNN_DATA_INT8,
        DataType::Int32 => HIPDNN_DATA_INT32,
        DataType::Uint8 => HIPDNN_DATA_UINT8,
        DataType::Bfloat16 => HIPDNN_DATA_BFLOAT16,
        DataType::Fp8E4m3 => HIPDNN_DATA_FP8_E4M3,
        DataType::Fp8E5m2 => HIPDNN_DATA_FP8_E5M2,
        DataType::Fp8E8m0 => HIPDNN_DATA_FP8_E8M0,
        DataType::Fp4E2m1 => HIPDNN_DATA_FP4_E2M1,
        DataType::Int4 => HIPDNN_DATA_INT4,
        DataType::Fp6E2m3 => HIPDNN_DATA_FP6_E2M3_EXT,
        DataType::Fp6E3m2 => HIPDNN_DATA_FP6_E3M2_EXT,
        DataType::Int64 => HIPDNN_DATA_INT64,
        DataType::Fp8E4m3Fnuz => HIPDNN_DATA_FP8_E4M3_FNUZ,
        DataType::Fp8E5m2Fnuz => HIPDNN_DATA_FP8_E5M2_FNUZ,
    })
}

/// A `HIPDNN_TYPE_DATA_TYPE` attribute: one `hipdnnDataType_t`, as the wire type.
pub(super) fn set_data_type(value: &SetValue) -> BackendResult<DataType> {
    value.expect_type(HIPDNN_TYPE_DATA_TYPE)?;
    // SAFETY: the type is checked: one `hipdnnDataType_t` (an int).
    let c = unsafe { value.one::<hipdnnDataType_t>() }?;
    data_type_from_c(c).ok_or_else(|| {
        BackendError::bad_param(format!(
            "attribute {}: {c} is not a hipdnnDataType_t",
            value.name
        ))
    })
}

/// Writes a `HIPDNN_TYPE_DATA_TYPE` attribute; an unset type reads as no element.
pub(super) fn get_data_type(target: &GetTarget, value: DataType) -> BackendResult<()> {
    target.expect_type(HIPDNN_TYPE_DATA_TYPE)?;
    let values: Vec<hipdnnDataType_t> = data_type_to_c(value).into_iter().collect();
    // SAFETY: the type is checked: `hipdnnDataType_t`s.
    unsafe { target.put(&values) }
}

/// One `HIPDNN_TYPE_BOOLEAN` (a C `bool`, one byte; any non-zero byte is true).
pub(super) fn set_bool(value: &SetValue) -> BackendResult<bool> {
    value.expect_type(HIPDNN_TYPE_BOOLEAN)?;
    // SAFETY: the type is checked: one `bool`, read as its byte.
    Ok(unsafe { value.one::<u8>() }? != 0)
}

/// One `HIPDNN_TYPE_INT64`.
pub(super) fn set_i64(value: &SetValue) -> BackendResult<i64> {
    value.expect_type(HIPDNN_TYPE_INT64)?;
    // SAFETY: the type is checked: one `int64_t`.
    unsafe { value.one::<i64>() }
}

/// A non-empty `HIPDNN_TYPE_INT64` array.
pub(super) fn set_i64s(value: &SetValue) -> BackendResult<Vec<i64>> {
    value.expect_type(HIPDNN_TYPE_INT64)?;
    // SAFETY: the type is checked: `int64_t`s.
    let values = unsafe { value.elements::<i64>() }?;
    if values.is_empty() {
        return Err(BackendError::bad_param(format!(
            "attribute {} takes at least one element",
            value.name
        )));
    }
    Ok(values.to_vec())
}

/// A `HIPDNN_TYPE_CHAR` string (up to its first NUL, if any).
pub(super) fn set_text(value: &SetValue) -> BackendResult<String> {
    value.expect_type(HIPDNN_TYPE_CHAR)?;
    // SAFETY: the type is checked: chars, read as bytes.
    let bytes = unsafe { value.elements::<u8>() }?;
    value.text(bytes)
}

/// Writes a `HIPDNN_TYPE_CHAR` string with its NUL (the count includes it).
pub(super) fn get_text(target: &GetTarget, text: &str) -> BackendResult<()> {
    target.expect_type(HIPDNN_TYPE_CHAR)?;
    let mut bytes = text.as_bytes().to_vec();
    bytes.push(0);
    // SAFETY: the type is checked: chars.
    unsafe { target.put(&bytes) }
}

/// The scalar a pass-by-value tensor of `data_type` holds, from its bytes.
fn tensor_value(data_type: DataType, bytes: &[u8]) -> Option<TensorValue> {
    let array = |n: usize| -> Option<&[u8]> { (bytes.len() == n).then_some(bytes) };
    Some(match data_type {
        DataType::Float => TensorValue::Float32(f32::from_ne_bytes(array(4)?.try_into().ok()?)),
        DataType::Double => TensorValue::Float64(f64::from_ne_bytes(array(8)?.try_into().ok()?)),
        DataType::Half => {
            TensorValue::Float16(f16_to_f32(u16::from_ne_bytes(array(2)?.try_into().ok()?)))
        }
        DataType::Bfloat16 => TensorValue::BFloat16(f32::from_bits(
            u32::from(u16::from_ne_bytes(array(2)?.try_into().ok()?)) << 16,
        )),
        DataType::Int32 => TensorValue::Int32(i32::from_ne_bytes(array(4)?.try_into().ok()?)),
        DataType::Int64 => TensorValue::Int64(i64::from_ne_bytes(array(8)?.try_into().ok()?)),
        DataType::Uint8
        | DataType::Int8
        | DataType::Fp8E4m3
        | DataType::Fp8E5m2
        | DataType::Fp8E4m3Fnuz
        | DataType::Fp8E5m2Fnuz => TensorValue::Float8(array(1)?[0]),
        _ => return None,
    })
}

/// An IEEE binary16 value, widened exactly.
fn f16_to_f32(bits: u16) -> f32 {
    let sign = u32::from(bits >> 15) << 31;
    let exponent = u32::from((bits >> 10) & 0x1f);
    let mantissa = u32::from(bits & 0x3ff);
    let magnitude = match (exponent, mantissa) {
        (0, 0) => 0,
        // Subnormal: mantissa · 2^-24, exact in f32.
        (0, m) => (m as f32 * f32::from_bits(0x3380_0000)).to_bits(),
        (0x1f, m) => 0x7f80_0000 | (m << 13),
        (e, m) => ((e + 127 - 15) << 23) | (m << 13),
    };
    f32::from_bits(sign | magnitude)
}

/// The IEEE binary16 nearest `value` (ties to even); exact, and the inverse of
/// [`f16_to_f32`], for every value a half holds (a NaN keeps its payload where it fits).
fn f32_to_f16(value: f32) -> u16 {
    let bits = value.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let exponent = ((bits >> 23) & 0xff) as i32;
    let mantissa = bits & 0x7f_ffff;
    if exponent == 0xff {
        let payload = (mantissa >> 13) as u16;
        let nan = match (mantissa, payload) {
            (0, _) => 0,
            (_, 0) => 0x200,
            (_, p) => p,
        };
        return sign | 0x7c00 | nan;
    }
    // The half's biased exponent.
    let e = exponent - 127 + 15;
    if e >= 0x1f {
        return sign | 0x7c00;
    }
    let round = |kept: u32, dropped: u32, half: u32| {
        if dropped > half || (dropped == half && kept & 1 == 1) {
            kept + 1
        } else {
            kept
        }
    };
    if e <= 0 {
        // Subnormal (or zero): the 24-bit significand scaled to units of 2^-24.
        if e < -10 {
            return sign;
        }
        let significand = mantissa | 0x80_0000;
        let shift = (14 - e) as u32;
        let kept = significand >> shift;
        let dropped = significand & ((1 << shift) - 1);
        // A carry into the exponent field gives the smallest normal, as it should.
        return sign | round(kept, dropped, 1 << (shift - 1)) as u16;
    }
    let kept = ((e as u32) << 10) | (mantissa >> 13);
    // A carry may reach the exponent (the next binade) or infinity, both right.
    sign | round(kept, mantissa & 0x1fff, 0x1000) as u16
}

/// The bfloat16 nearest `value` (ties to even; a NaN stays a NaN).
fn f32_to_bf16(value: f32) -> u16 {
    let bits = value.to_bits();
    if value.is_nan() {
        return ((bits >> 16) | 0x40) as u16;
    }
    let rounding = 0x7fff + ((bits >> 16) & 1);
    (bits.wrapping_add(rounding) >> 16) as u16
}

impl TensorDescriptor {
    pub(super) const TYPE_NAME: &str = "TENSOR";

    pub(super) fn set(&mut self, value: SetValue) -> BackendResult<()> {
        let t = &mut self.tensor;
        match value.name {
            HIPDNN_ATTR_TENSOR_UNIQUE_ID => t.uid = set_i64(&value)?,
            HIPDNN_ATTR_TENSOR_NAME_EXT => t.name = set_text(&value)?,
            HIPDNN_ATTR_TENSOR_DATA_TYPE => t.data_type = set_data_type(&value)?,
            HIPDNN_ATTR_TENSOR_DIMENSIONS => t.dims = set_i64s(&value)?,
            HIPDNN_ATTR_TENSOR_STRIDES => t.strides = set_i64s(&value)?,
            HIPDNN_ATTR_TENSOR_IS_VIRTUAL => t.is_virtual = set_bool(&value)?,
            HIPDNN_ATTR_TENSOR_IS_RUNTIME_PASS_BY_VALUE_EXT => {
                t.is_runtime_pass_by_value = set_bool(&value)?;
            }
            HIPDNN_ATTR_TENSOR_BYTE_ALIGNMENT => {
                let alignment = set_i64(&value)?;
                if alignment <= 0 {
                    return Err(BackendError::bad_param(format!(
                        "attribute {}: alignment {alignment} is not positive",
                        value.name
                    )));
                }
                t.alignment = alignment;
            }
            HIPDNN_ATTR_TENSOR_RAGGED_OFFSET_DESC => {
                t.ragged_offset_tensor_uid = Some(set_i64(&value)?);
            }
            HIPDNN_ATTR_TENSOR_VALUE_EXT => {
                value.expect_type(HIPDNN_TYPE_CHAR)?;
                if t.data_type == DataType::Unset {
                    return Err(BackendError::bad_param(format!(
                        "attribute {}: set the data type (HIPDNN_ATTR_TENSOR_DATA_TYPE) before \
                         the value",
                        value.name
                    )));
                }
                // SAFETY: the type is checked: bytes.
                let bytes = unsafe { value.elements::<u8>() }?;
                let scalar = tensor_value(t.data_type, bytes).ok_or_else(|| {
                    BackendError::bad_param(format!(
                        "attribute {}: {} bytes are not one {} value",
                        value.name,
                        bytes.len(),
                        t.data_type.name()
                    ))
                })?;
                t.value = Some(scalar);
                self.value_bytes = bytes.to_vec();
            }
            other => return Err(unsupported_attribute(Self::TYPE_NAME, other)),
        }
        Ok(())
    }

    pub(super) fn finalize(&mut self) -> BackendResult<()> {
        let t = &self.tensor;
        let uid = t.uid;
        if t.dims.is_empty() || t.strides.is_empty() {
            return Err(BackendError::bad_param(format!(
                "TENSOR {uid}: the dimensions and strides must be set \
                 (HIPDNN_ATTR_TENSOR_DIMENSIONS, HIPDNN_ATTR_TENSOR_STRIDES)"
            )));
        }
        if t.dims.len() != t.strides.len() {
            return Err(BackendError::bad_param(format!(
                "TENSOR {uid}: {} dimensions but {} strides",
                t.dims.len(),
                t.strides.len()
            )));
        }
        if t.data_type == DataType::Unset {
            return Err(BackendError::bad_param(format!(
                "TENSOR {uid}: the data type must be set (HIPDNN_ATTR_TENSOR_DATA_TYPE)"
            )));
        }
        self.frozen = Some(Arc::new(FrozenTensor {
            attributes: t.clone(),
            value_bytes: self.value_bytes.clone(),
        }));
        Ok(())
    }

    /// The frozen tensor (finalized descriptors only).
    pub(super) fn frozen(&self) -> Option<&Arc<FrozenTensor>> {
        self.frozen.as_ref()
    }

    /// A finalized descriptor of `frozen` (what reading an operation's TENSOR attribute
    /// hands out): it reads back as the descriptor `frozen` was made from, and shares
    /// the frozen tensor, so a graph takes the two for one descriptor.
    pub(super) fn from_frozen(frozen: &Arc<FrozenTensor>) -> Self {
        Self {
            tensor: frozen.attributes.clone(),
            value_bytes: frozen.value_bytes.clone(),
            frozen: Some(Arc::clone(frozen)),
        }
    }

    pub(super) fn get(&self, target: GetTarget) -> BackendResult<()> {
        let t = &self.tensor;
        match target.name {
            HIPDNN_ATTR_TENSOR_UNIQUE_ID => put_i64s(&target, &[t.uid]),
            HIPDNN_ATTR_TENSOR_NAME_EXT => get_text(&target, &t.name),
            HIPDNN_ATTR_TENSOR_DATA_TYPE => get_data_type(&target, t.data_type),
            HIPDNN_ATTR_TENSOR_DIMENSIONS => put_i64s(&target, &t.dims),
            HIPDNN_ATTR_TENSOR_STRIDES => put_i64s(&target, &t.strides),
            HIPDNN_ATTR_TENSOR_IS_VIRTUAL => put_bool(&target, t.is_virtual),
            HIPDNN_ATTR_TENSOR_IS_BY_VALUE => put_bool(&target, t.value.is_some()),
            HIPDNN_ATTR_TENSOR_IS_RUNTIME_PASS_BY_VALUE_EXT => {
                put_bool(&target, t.is_runtime_pass_by_value)
            }
            HIPDNN_ATTR_TENSOR_VALUE_EXT => {
                target.expect_type(HIPDNN_TYPE_CHAR)?;
                // SAFETY: the type is checked: chars (bytes).
                unsafe { target.put(&self.value_bytes) }
            }
            HIPDNN_ATTR_TENSOR_BYTE_ALIGNMENT => put_i64s(&target, &[t.alignment]),
            HIPDNN_ATTR_TENSOR_RAGGED_OFFSET_DESC => {
                let uid: Vec<i64> = t.ragged_offset_tensor_uid.into_iter().collect();
                put_i64s(&target, &uid)
            }
            other => Err(unsupported_attribute(Self::TYPE_NAME, other)),
        }
    }
}

/// Writes `HIPDNN_TYPE_INT64` values.
pub(super) fn put_i64s(target: &GetTarget, values: &[i64]) -> BackendResult<()> {
    target.expect_type(HIPDNN_TYPE_INT64)?;
    // SAFETY: the type is checked: `int64_t`s.
    unsafe { target.put(values) }
}

/// Writes one `HIPDNN_TYPE_BOOLEAN` (a one-byte C `bool`).
pub(super) fn put_bool(target: &GetTarget, value: bool) -> BackendResult<()> {
    target.expect_type(HIPDNN_TYPE_BOOLEAN)?;
    // SAFETY: the type is checked: `bool`s, one byte each.
    unsafe { target.put(&[u8::from(value)]) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_and_wire_data_types_convert_both_ways() {
        for c in HIPDNN_DATA_FLOAT..=HIPDNN_DATA_FP8_E5M2_FNUZ {
            let wire = data_type_from_c(c).unwrap();
            assert_eq!(data_type_to_c(wire), Some(c), "{wire:?}");
        }
        assert_eq!(data_type_from_c(HIPDNN_DATA_FLOAT), Some(DataType::Float));
        assert_eq!(data_type_from_c(HIPDNN_DATA_INT4), Some(DataType::Int4));
        assert_eq!(data_type_from_c(17), None);
        assert_eq!(data_type_to_c(DataType::Unset), None);
    }

    #[test]
    fn every_half_narrows_back_to_its_bits() {
        for bits in 0..=u16::MAX {
            let wide = f16_to_f32(bits);
            assert_eq!(f32_to_f16(wide), bits, "{bits:#06x} ({wide})");
        }
        // Rounding: ties to even, overflow to infinity, underflow to zero.
        assert_eq!(f32_to_f16(1.0 + 2f32.powi(-11)), 0x3c00);
        assert_eq!(f32_to_f16(1.0 + 3.0 * 2f32.powi(-11)), 0x3c02);
        assert_eq!(f32_to_f16(65520.0), 0x7c00);
        assert_eq!(f32_to_f16(2f32.powi(-26)), 0);
        assert_eq!(f32_to_f16(-3.0 * 2f32.powi(-26)), 0x8001);
    }

    #[test]
    fn bfloat16_values_narrow_to_their_bits() {
        for bits in [0u16, 0x3f80, 0xbf80, 0x7f7f, 0x0001, 0x7f80, 0xff80] {
            assert_eq!(f32_to_bf16(f32::from_bits(u32::from(bits) << 16)), bits);
        }
        assert_eq!(f32_to_bf16(f32::from_bits(0x3f80_8000)), 0x3f80);
        assert_eq!(f32_to_bf16(f32::from_bits(0x3f81_8000)), 0x3f82);
        assert!(f32::from_bits(u32::from(f32_to_bf16(f32::NAN)) << 16).is_nan());
    }

    #[test]
    fn half_values_widen_exactly() {
        assert_eq!(f16_to_f32(0x3c00), 1.0);
        assert_eq!(f16_to_f32(0xc000), -2.0);
        assert_eq!(f16_to_f32(0x0001), 2f32.powi(-24));
        assert_eq!(f16_to_f32(0x7c00), f32::INFINITY);
        assert!(f16_to_f32(0x7e00).is_nan());
        assert_eq!(
            tensor_value(DataType::Bfloat16, &0x3f80u16.to_ne_bytes()),
            Some(TensorValue::BFloat16(1.0))
        );
        assert_eq!(tensor_value(DataType::Float, &[0; 3]), None);
    }
}
