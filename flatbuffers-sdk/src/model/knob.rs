//! Checking knob settings against knob definitions: the rules of the wire model, shared
//! by whoever reads an engine config (a plugin before it builds a plan, a host before it
//! sends one).
//!
//! A [`KnobSetting`] fits a [`Knob`] when its value has the type of the knob's default
//! and satisfies the knob's constraint. A setting for a knob the engine does not have is
//! ignored (forward compatibility); one for a deprecated knob is accepted. Both are
//! logged as warnings (with `tracing`, so in the binary that checks: a plugin forwards
//! them to its host).

use std::fmt;

use super::{Knob, KnobConstraint, KnobSetting, KnobValue};

/// Ints and floats as Rust prints them, strings in double quotes.
impl fmt::Display for KnobValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KnobValue::Int(v) => write!(f, "{v}"),
            KnobValue::Float(v) => write!(f, "{v}"),
            KnobValue::String(v) => write!(f, "\"{v}\""),
        }
    }
}

/// A setting that does not fit its knob.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("knob \"{knob_id}\": {reason}")]
pub struct KnobSettingError {
    /// The knob's id.
    pub knob_id: String,
    /// What is wrong (type mismatch, out of range, not a valid value).
    pub reason: String,
}

/// Why `knob`'s constraint does not fit the type of its default, if it does not.
pub fn constraint_type_mismatch(knob: &Knob) -> Option<String> {
    let kind = match knob.constraint.as_ref()? {
        KnobConstraint::Int(_) => "int64",
        KnobConstraint::Float(_) => "float64",
        KnobConstraint::String(_) => "string",
    };
    let default = knob.default_value.type_name();
    (kind != default).then(|| format!("a {kind} constraint on a {default} knob"))
}

/// Checks `value` against the type of `knob`'s default and its constraint. A constraint
/// of another type than the value is not applied (see [`constraint_type_mismatch`]).
///
/// # Errors
/// A message saying what is wrong (type mismatch, out of range, not a valid value).
pub fn check_value(knob: &Knob, value: &KnobValue) -> Result<(), String> {
    if std::mem::discriminant(value) != std::mem::discriminant(&knob.default_value) {
        return Err(format!(
            "expects {}, got {} {value}",
            knob.default_value.type_name(),
            value.type_name(),
        ));
    }
    match (&knob.constraint, value) {
        (Some(KnobConstraint::Int(c)), KnobValue::Int(v)) => {
            if !c.valid_values.is_empty() {
                if !c.valid_values.contains(v) {
                    return Err(format!("{v} is not one of {:?}", c.valid_values));
                }
            } else if *v < c.min_value || *v > c.max_value {
                return Err(format!("{v} is outside {}..={}", c.min_value, c.max_value));
            } else if c.step > 0
                && (i128::from(*v) - i128::from(c.min_value)) % i128::from(c.step) != 0
            {
                return Err(format!(
                    "{v} is not {} plus a multiple of {}",
                    c.min_value, c.step
                ));
            }
        }
        (Some(KnobConstraint::Float(c)), KnobValue::Float(v))
            if !(c.min_value..=c.max_value).contains(v) =>
        {
            return Err(format!("{v} is outside {}..={}", c.min_value, c.max_value));
        }
        (Some(KnobConstraint::String(c)), KnobValue::String(v)) => {
            if c.max_length > 0 && v.len() > c.max_length as usize {
                return Err(format!("\"{v}\" is longer than {} bytes", c.max_length));
            }
            if !c.valid_values.is_empty() && !c.valid_values.contains(v) {
                return Err(format!("\"{v}\" is not one of {:?}", c.valid_values));
            }
        }
        _ => {}
    }
    Ok(())
}

/// Checks `settings` against the advertised `knobs`, in order. A setting for an unknown
/// knob is ignored and one for a deprecated knob accepted, each with a warning.
///
/// # Errors
/// The first setting whose value does not fit its knob.
pub fn check_settings(knobs: &[Knob], settings: &[KnobSetting]) -> Result<(), KnobSettingError> {
    for setting in settings {
        let Some(knob) = knobs.iter().find(|k| k.knob_id == setting.knob_id) else {
            tracing::warn!(knob = %setting.knob_id, "ignoring a setting for a knob this engine does not have");
            continue;
        };
        if knob.deprecated {
            tracing::warn!(knob = %knob.knob_id, "knob is deprecated");
        }
        check_value(knob, &setting.value).map_err(|reason| KnobSettingError {
            knob_id: knob.knob_id.clone(),
            reason,
        })?;
    }
    Ok(())
}

/// The value chosen for `id`: the setting's if present, else the knob's default.
pub fn resolve<'a>(
    knobs: &'a [Knob],
    settings: &'a [KnobSetting],
    id: &str,
) -> Option<&'a KnobValue> {
    settings
        .iter()
        .find(|s| s.knob_id == id)
        .map(|s| &s.value)
        .or_else(|| {
            knobs
                .iter()
                .find(|k| k.knob_id == id)
                .map(|k| &k.default_value)
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{FloatConstraint, IntConstraint, StringConstraint};

    fn knob(id: &str, default_value: KnobValue, constraint: Option<KnobConstraint>) -> Knob {
        Knob {
            knob_id: id.to_owned(),
            description: String::new(),
            default_value,
            constraint,
            deprecated: false,
        }
    }

    fn knobs() -> Vec<Knob> {
        vec![
            knob(
                "cpu.threads",
                KnobValue::Int(0),
                Some(KnobConstraint::Int(IntConstraint {
                    min_value: 0,
                    max_value: 8,
                    step: 2,
                    valid_values: Vec::new(),
                })),
            ),
            knob(
                "cpu.algo",
                KnobValue::String("auto".into()),
                Some(KnobConstraint::String(StringConstraint {
                    max_length: 6,
                    valid_values: vec!["auto".into(), "gemm".into(), "winograd".into()],
                })),
            ),
            Knob {
                deprecated: true,
                ..knob(
                    "cpu.alpha",
                    KnobValue::Float(0.0),
                    Some(KnobConstraint::Float(FloatConstraint {
                        min_value: -1.0,
                        max_value: 1.0,
                    })),
                )
            },
        ]
    }

    fn check(settings: &[KnobSetting]) -> Result<(), KnobSettingError> {
        check_settings(&knobs(), settings)
    }

    #[test]
    fn values_are_checked_against_type_and_constraint() {
        let result = check(&[
            KnobSetting::new("cpu.threads", KnobValue::Int(4)),
            KnobSetting::new("cpu.algo", KnobValue::String("gemm".into())),
        ]);
        assert_eq!(result, Ok(()));

        for (setting, reason) in [
            (KnobValue::Int(9), "9 is outside 0..=8"),
            (KnobValue::Int(3), "3 is not 0 plus a multiple of 2"),
            (KnobValue::Float(1.0), "expects int64, got float64 1"),
            (
                KnobValue::String("x".into()),
                "expects int64, got string \"x\"",
            ),
        ] {
            let result = check(&[KnobSetting::new("cpu.threads", setting)]);
            let error = result.unwrap_err();
            assert_eq!(error.knob_id, "cpu.threads");
            assert_eq!(error.reason, reason);
            assert_eq!(error.to_string(), format!("knob \"cpu.threads\": {reason}"));
        }
        let result = check(&[KnobSetting::new(
            "cpu.algo",
            KnobValue::String("fft".into()),
        )]);
        assert!(result.unwrap_err().reason.contains("not one of"));
        let result = check(&[KnobSetting::new(
            "cpu.algo",
            KnobValue::String("winograd".into()),
        )]);
        assert_eq!(
            result.unwrap_err().reason,
            "\"winograd\" is longer than 6 bytes"
        );
        let result = check(&[KnobSetting::new("cpu.alpha", KnobValue::Float(1.5))]);
        assert_eq!(result.unwrap_err().reason, "1.5 is outside -1..=1");
    }

    #[test]
    fn unknown_and_deprecated_knobs_are_accepted() {
        let result = check(&[
            KnobSetting::new("cpu.unknown", KnobValue::Int(1)),
            KnobSetting::new("cpu.alpha", KnobValue::Float(0.5)),
        ]);
        assert_eq!(result, Ok(()));
    }

    #[test]
    fn settings_override_defaults() {
        let knobs = knobs();
        let settings = [KnobSetting::new("cpu.threads", KnobValue::Int(2))];
        assert_eq!(
            resolve(&knobs, &settings, "cpu.threads"),
            Some(&KnobValue::Int(2))
        );
        assert_eq!(
            resolve(&knobs, &settings, "cpu.algo"),
            Some(&KnobValue::String("auto".into()))
        );
        assert_eq!(resolve(&knobs, &settings, "nope"), None);
    }

    #[test]
    fn constraints_must_match_the_default_type() {
        let int_on_float = knob(
            "a.b",
            KnobValue::Float(0.0),
            Some(KnobConstraint::Int(IntConstraint::default())),
        );
        assert_eq!(
            constraint_type_mismatch(&int_on_float).as_deref(),
            Some("a int64 constraint on a float64 knob")
        );
        assert_eq!(constraint_type_mismatch(&knobs()[0]), None);
        assert_eq!(KnobValue::String("s".into()).to_string(), "\"s\"");
        assert_eq!(KnobValue::Float(0.5).to_string(), "0.5");
    }
}
