//! Knob settings from the command line and knob descriptions for people and JSON.

use hipdnn_flatbuffers_sdk::model::{Knob, KnobConstraint, KnobSetting, KnobValue};
use serde_json::{Value, json};

use crate::error::{CliError, CliResult};

/// A `--knob id=value` as typed, before it is matched to an engine's knobs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnobArg {
    /// The knob id.
    pub id: String,
    /// The value text.
    pub value: String,
}

impl std::str::FromStr for KnobArg {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let (id, value) = s
            .split_once('=')
            .ok_or_else(|| format!("'{s}' is not of the form id=value"))?;
        let id = id.trim();
        if id.is_empty() {
            return Err(format!("'{s}' has an empty knob id"));
        }
        Ok(Self {
            id: id.to_owned(),
            value: value.trim().to_owned(),
        })
    }
}

/// The value typed as `knob` advertises it (its default's type).
///
/// # Errors
/// Text that is not a value of that type, naming the knob.
pub fn typed_value(knob: &Knob, text: &str) -> CliResult<KnobValue> {
    let bad =
        |what: &str| CliError::usage(format!("knob \"{}\": '{text}' is not {what}", knob.knob_id));
    Ok(match knob.default_value {
        KnobValue::Int(_) => KnobValue::Int(text.parse().map_err(|_| bad("an integer"))?),
        KnobValue::Float(_) => KnobValue::Float(text.parse().map_err(|_| bad("a number"))?),
        KnobValue::String(_) => KnobValue::String(text.to_owned()),
    })
}

/// The settings for an engine advertising `knobs`: each argument typed by the knob of
/// that id.
///
/// # Errors
/// A knob the engine does not have (listing those it has), or a badly typed value.
pub fn settings_for(engine: &str, knobs: &[Knob], args: &[KnobArg]) -> CliResult<Vec<KnobSetting>> {
    args.iter()
        .map(|arg| {
            let knob = knobs.iter().find(|k| k.knob_id == arg.id).ok_or_else(|| {
                let ids: Vec<&str> = knobs.iter().map(|k| k.knob_id.as_str()).collect();
                CliError::usage(format!(
                    "knob \"{}\": engine {engine} has no such knob for this graph (its knobs: {})",
                    arg.id,
                    if ids.is_empty() {
                        "none".to_owned()
                    } else {
                        ids.join(", ")
                    }
                ))
            })?;
            Ok(KnobSetting {
                knob_id: arg.id.clone(),
                value: typed_value(knob, &arg.value)?,
            })
        })
        .collect()
}

/// A value as people write it.
pub fn value_text(v: &KnobValue) -> String {
    match v {
        KnobValue::Int(i) => i.to_string(),
        KnobValue::Float(f) => f.to_string(),
        KnobValue::String(s) => format!("{s:?}"),
    }
}

/// The type name of a knob (`int`, `float`, `string`).
pub fn type_text(v: &KnobValue) -> &'static str {
    match v {
        KnobValue::Int(_) => "int",
        KnobValue::Float(_) => "float",
        KnobValue::String(_) => "string",
    }
}

/// A constraint as people read it: `in [0, 1]`, `one of {1, 2}`, `any`.
pub fn constraint_text(c: Option<&KnobConstraint>) -> String {
    match c {
        None => "any".to_owned(),
        Some(KnobConstraint::Int(c)) if !c.valid_values.is_empty() => {
            let v: Vec<String> = c.valid_values.iter().map(ToString::to_string).collect();
            format!("one of {{{}}}", v.join(", "))
        }
        Some(KnobConstraint::Int(c)) if c.step > 1 => {
            format!("in [{}, {}] step {}", c.min_value, c.max_value, c.step)
        }
        Some(KnobConstraint::Int(c)) => format!("in [{}, {}]", c.min_value, c.max_value),
        Some(KnobConstraint::Float(c)) => format!("in [{}, {}]", c.min_value, c.max_value),
        Some(KnobConstraint::String(c)) => {
            let mut parts = Vec::new();
            if !c.valid_values.is_empty() {
                let v: Vec<String> = c.valid_values.iter().map(|s| format!("{s:?}")).collect();
                parts.push(format!("one of {{{}}}", v.join(", ")));
            }
            if c.max_length > 0 {
                parts.push(format!("at most {} chars", c.max_length));
            }
            if parts.is_empty() {
                "any".to_owned()
            } else {
                parts.join(", ")
            }
        }
    }
}

fn value_json(v: &KnobValue) -> Value {
    match v {
        KnobValue::Int(i) => json!(i),
        KnobValue::Float(f) => json!(f),
        KnobValue::String(s) => json!(s),
    }
}

/// A knob as JSON: id, type, default, constraint, description, deprecated.
pub fn knob_json(k: &Knob) -> Value {
    let constraint = match &k.constraint {
        None => Value::Null,
        Some(KnobConstraint::Int(c)) if !c.valid_values.is_empty() => {
            json!({ "valid_values": c.valid_values })
        }
        Some(KnobConstraint::Int(c)) => {
            json!({ "min": c.min_value, "max": c.max_value, "step": c.step })
        }
        Some(KnobConstraint::Float(c)) => json!({ "min": c.min_value, "max": c.max_value }),
        Some(KnobConstraint::String(c)) => {
            json!({ "valid_values": c.valid_values, "max_length": c.max_length })
        }
    };
    json!({
        "id": k.knob_id,
        "type": type_text(&k.default_value),
        "default": value_json(&k.default_value),
        "constraint": constraint,
        "description": k.description,
        "deprecated": k.deprecated,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use hipdnn_flatbuffers_sdk::model::{FloatConstraint, IntConstraint};

    fn knob(id: &str, default: KnobValue, constraint: Option<KnobConstraint>) -> Knob {
        Knob {
            knob_id: id.into(),
            description: String::new(),
            default_value: default,
            constraint,
            deprecated: false,
        }
    }

    #[test]
    fn arguments_parse_and_take_the_knobs_type() {
        let arg: KnobArg = "a.b = 2".parse().unwrap();
        assert_eq!((arg.id.as_str(), arg.value.as_str()), ("a.b", "2"));
        assert!("a.b".parse::<KnobArg>().is_err());
        assert!("=1".parse::<KnobArg>().is_err());
        let slope = knob("a.slope", KnobValue::Float(0.0), None);
        assert_eq!(typed_value(&slope, "2").unwrap(), KnobValue::Float(2.0));
        let err = typed_value(&slope, "x").unwrap_err();
        assert!(err.to_string().contains("\"a.slope\""), "{err}");
        let tiles = knob("a.tiles", KnobValue::Int(4), None);
        assert!(typed_value(&tiles, "4.5").is_err());
        let name = knob("a.name", KnobValue::String("x".into()), None);
        assert_eq!(
            typed_value(&name, "12").unwrap(),
            KnobValue::String("12".into())
        );
        let e = settings_for(
            "E",
            &[slope],
            &[KnobArg {
                id: "a.other".into(),
                value: "1".into(),
            }],
        )
        .unwrap_err();
        assert!(
            e.to_string().contains("\"a.other\"") && e.to_string().contains("a.slope"),
            "{e}"
        );
    }

    #[test]
    fn constraints_read_naturally() {
        assert_eq!(constraint_text(None), "any");
        let range = KnobConstraint::Float(FloatConstraint {
            min_value: 0.0,
            max_value: 1.0,
        });
        assert_eq!(constraint_text(Some(&range)), "in [0, 1]");
        let list = KnobConstraint::Int(IntConstraint {
            min_value: 0,
            max_value: 0,
            step: 1,
            valid_values: vec![1, 2],
        });
        assert_eq!(constraint_text(Some(&list)), "one of {1, 2}");
        let k = knob("a.b", KnobValue::Float(0.0), Some(range));
        let j = knob_json(&k);
        assert_eq!(j["type"], "float");
        assert_eq!(j["constraint"]["max"], 1.0);
    }
}
