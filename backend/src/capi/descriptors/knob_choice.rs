//! KNOB_CHOICE: one knob setting, for an engine config.

use hipdnn_flatbuffers_sdk::model::{KnobSetting, KnobValue};

use super::attributes::SetValue;
use super::unsupported_attribute;
use super::{
    HIPDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, HIPDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, HIPDNN_TYPE_CHAR,
    HIPDNN_TYPE_DOUBLE, HIPDNN_TYPE_INT64,
};
use crate::status::*;

/// A knob choice descriptor.
#[derive(Debug, Default)]
pub(super) struct KnobChoiceDescriptor {
    id: Option<String>,
    value: Option<KnobValue>,
}

impl KnobChoiceDescriptor {
    pub(super) const TYPE_NAME: &str = "KNOB_CHOICE";

    pub(super) fn set(&mut self, value: SetValue) -> BackendResult<()> {
        let name = value.name;
        match name {
            HIPDNN_ATTR_KNOB_CHOICE_KNOB_TYPE => {
                value.expect_type(HIPDNN_TYPE_CHAR)?;
                // SAFETY: the type is checked: chars.
                self.id = Some(value.text(unsafe { value.elements::<u8>() }?)?);
            }
            HIPDNN_ATTR_KNOB_CHOICE_KNOB_VALUE => {
                self.value = Some(match value.ty() {
                    // SAFETY: one element of the declared type.
                    HIPDNN_TYPE_INT64 => KnobValue::Int(unsafe { value.one::<i64>() }?),
                    // SAFETY: as above.
                    HIPDNN_TYPE_DOUBLE => KnobValue::Float(unsafe { value.one::<f64>() }?),
                    HIPDNN_TYPE_CHAR => {
                        // SAFETY: chars, the declared type.
                        let chars = unsafe { value.elements::<u8>() }?;
                        KnobValue::String(value.text(chars)?)
                    }
                    other => {
                        return Err(BackendError::bad_param(format!(
                            "attribute {name} takes INT64, DOUBLE or CHAR values, not type {other}"
                        )));
                    }
                });
            }
            other => return Err(unsupported_attribute(Self::TYPE_NAME, other)),
        }
        Ok(())
    }

    pub(super) fn finalize(&mut self) -> BackendResult<()> {
        if self.id.is_none() || self.value.is_none() {
            return Err(BackendError::bad_param(
                "the KNOB_CHOICE descriptor needs a knob id (KNOB_TYPE) and a value (KNOB_VALUE)",
            ));
        }
        Ok(())
    }

    /// The setting, once both the knob id and the value are set.
    pub(super) fn setting(&self) -> Option<KnobSetting> {
        Some(KnobSetting {
            knob_id: self.id.clone()?,
            value: self.value.clone()?,
        })
    }
}
