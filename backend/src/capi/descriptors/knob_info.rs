//! KNOB_INFO: one knob an engine takes for a graph (its id, description, default,
//! whether it is deprecated, and the values it accepts), as an ENGINE descriptor hands
//! them out through `HIPDNN_ATTR_ENGINE_KNOB_INFO`. Each is a new, finalized descriptor
//! the caller owns; its attributes are read-only.

use hipdnn_flatbuffers_sdk::model::{Knob, KnobConstraint, KnobValue};

use super::attributes::GetTarget;
use super::tensor::{get_text, put_bool, put_i64s};
use super::unsupported_attribute;
use crate::capi::enums::tables::*;
use crate::status::*;

/// A knob info descriptor.
#[derive(Debug)]
pub(super) struct KnobInfoDescriptor {
    knob: Knob,
}

impl KnobInfoDescriptor {
    pub(super) const TYPE_NAME: &str = "KNOB_INFO";

    pub(super) fn new(knob: Knob) -> Self {
        Self { knob }
    }

    /// The integer range (min, max, step) the knob takes, when it has one (an integer
    /// constraint without a list of valid values).
    fn int_range(&self) -> Option<(i64, i64, i64)> {
        match &self.knob.constraint {
            Some(KnobConstraint::Int(c)) if c.valid_values.is_empty() => {
                Some((c.min_value, c.max_value, c.step))
            }
            _ => None,
        }
    }

    fn float_range(&self) -> Option<(f64, f64)> {
        match &self.knob.constraint {
            Some(KnobConstraint::Float(c)) => Some((c.min_value, c.max_value)),
            _ => None,
        }
    }

    /// `MAXIMUM_VALUE` / `MINIMUM_VALUE`: an `INT64` for an integer knob, a `DOUBLE`
    /// for a floating-point one; no element when the knob has no such bound.
    fn bound(&self, target: &GetTarget, maximum: bool) -> BackendResult<()> {
        match target.ty() {
            HIPDNN_TYPE_INT64 => {
                let value = self
                    .int_range()
                    .map(|(min, max, _)| if maximum { max } else { min });
                put_i64s(target, &value.into_iter().collect::<Vec<_>>())
            }
            HIPDNN_TYPE_DOUBLE => {
                let value = self
                    .float_range()
                    .map(|(min, max)| if maximum { max } else { min });
                let values: Vec<f64> = value.into_iter().collect();
                // SAFETY: the type is checked: doubles.
                unsafe { target.put(&values) }
            }
            other => Err(BackendError::bad_param(format!(
                "attribute {}: a bound is read as INT64 or DOUBLE, not attribute type {other}",
                target.name
            ))),
        }
    }

    pub(super) fn get(&self, target: GetTarget) -> BackendResult<()> {
        let knob = &self.knob;
        match target.name {
            HIPDNN_ATTR_KNOB_INFO_TYPE => get_text(&target, &knob.knob_id),
            HIPDNN_ATTR_KNOB_INFO_DESCRIPTION => get_text(&target, &knob.description),
            HIPDNN_ATTR_KNOB_INFO_DEPRECATED => put_bool(&target, knob.deprecated),
            HIPDNN_ATTR_KNOB_INFO_DEFAULT_VALUE_TYPE => {
                let ty = match knob.default_value {
                    KnobValue::Int(_) => HIPDNN_TYPE_INT64,
                    KnobValue::Float(_) => HIPDNN_TYPE_DOUBLE,
                    KnobValue::String(_) => HIPDNN_TYPE_CHAR,
                };
                put_i64s(&target, &[i64::from(ty)])
            }
            HIPDNN_ATTR_KNOB_INFO_DEFAULT_VALUE => match &knob.default_value {
                KnobValue::Int(v) => put_i64s(&target, &[*v]),
                KnobValue::Float(v) => {
                    target.expect_type(HIPDNN_TYPE_DOUBLE)?;
                    // SAFETY: the type is checked: doubles.
                    unsafe { target.put(&[*v]) }
                }
                KnobValue::String(v) => get_text(&target, v),
            },
            HIPDNN_ATTR_KNOB_INFO_MAXIMUM_VALUE => self.bound(&target, true),
            HIPDNN_ATTR_KNOB_INFO_MINIMUM_VALUE => self.bound(&target, false),
            HIPDNN_ATTR_KNOB_INFO_STRIDE => {
                let step: Vec<i64> = self
                    .int_range()
                    .map(|(_, _, step)| step)
                    .into_iter()
                    .collect();
                put_i64s(&target, &step)
            }
            HIPDNN_ATTR_KNOB_INFO_VALID_VALUES_INT => match &knob.constraint {
                Some(KnobConstraint::Int(c)) => put_i64s(&target, &c.valid_values),
                _ => put_i64s(&target, &[]),
            },
            HIPDNN_ATTR_KNOB_INFO_VALID_VALUES_STRING => {
                target.expect_type(HIPDNN_TYPE_CHAR)?;
                let values: &[String] = match &knob.constraint {
                    Some(KnobConstraint::String(c)) => &c.valid_values,
                    _ => &[],
                };
                // hipDNN's layout: "one\0two\0", whole strings only (a buffer too small
                // for the next one stops there); the count is the bytes written, or all
                // of them for a size query.
                let all: usize = values.iter().map(|v| v.len() + 1).sum();
                if target.count_only() || target.requested == 0 {
                    return target.write_count(all);
                }
                let mut bytes = Vec::with_capacity(all);
                for v in values {
                    if bytes.len() + v.len() + 1 > target.requested {
                        break;
                    }
                    bytes.extend_from_slice(v.as_bytes());
                    bytes.push(0);
                }
                // SAFETY: the type is checked: chars; no more than `requested` bytes.
                unsafe { target.put(&bytes) }
            }
            HIPDNN_ATTR_KNOB_INFO_STRING_MAX_LENGTH => {
                let length: Vec<i64> = match &knob.constraint {
                    Some(KnobConstraint::String(c)) if c.max_length > 0 => {
                        vec![i64::from(c.max_length)]
                    }
                    _ => Vec::new(),
                };
                put_i64s(&target, &length)
            }
            other => Err(unsupported_attribute(Self::TYPE_NAME, other)),
        }
    }
}
