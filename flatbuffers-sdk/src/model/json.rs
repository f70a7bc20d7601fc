//! The JSON form's union representation, which is flatc's: the member name under
//! `<field>_type` and the member itself under `<field>`, side by side in the table.
//!
//! With it, the JSON form of a graph is what `flatc --json` prints for the same bytes
//! under `schemas/graph.fbs`, and `flatc --binary` reads our JSON (CI checks both ways,
//! see `scripts/check-wire-compat.sh`).

use serde_json::Value;

/// A union member in JSON: its schema name and its table.
pub(crate) trait JsonUnion: Sized {
    /// The union's schema name, for messages.
    const UNION: &'static str;
    /// The schema name of this member (the `<field>_type` value).
    fn member_name(&self) -> &'static str;
    /// The member's table as JSON.
    fn to_json(&self) -> Value;
    /// Parses the member `name` from its JSON table.
    fn from_json(name: &str, value: Value) -> Result<Self, String>;
}

/// Reads `{"value": x}`, the JSON of the one-field scalar holder tables and structs
/// (flatc leaves a default-valued field out: `{}` is a zero).
pub(crate) fn scalar_holder<T: serde::de::DeserializeOwned + Default>(
    member: &str,
    value: Value,
) -> Result<T, String> {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Holder<T: Default> {
        #[serde(default)]
        value: T,
    }
    serde_json::from_value::<Holder<T>>(value)
        .map(|h| h.value)
        .map_err(|e| format!("{member}: {e}"))
}

/// Splits an optional union into its `_type` and value JSON fields.
pub(crate) fn split<U: JsonUnion>(union: Option<&U>) -> (Option<String>, Option<Value>) {
    match union {
        Some(u) => (Some(u.member_name().to_owned()), Some(u.to_json())),
        None => (None, None),
    }
}

/// Joins `_type` and value JSON fields back into an optional union.
pub(crate) fn join<U: JsonUnion>(
    field: &str,
    member: Option<String>,
    value: Option<Value>,
) -> Result<Option<U>, String> {
    match (member, value) {
        (None, None) => Ok(None),
        (Some(member), Some(value)) => U::from_json(&member, value)
            .map(Some)
            .map_err(|e| format!("{field}: {e}")),
        (Some(member), None) => Err(format!(
            "{field}_type is \"{member}\" but {field} is missing"
        )),
        (None, Some(_)) => Err(format!("{field} is present but {field}_type is missing")),
    }
}

/// The error for a member name the union does not have.
pub(crate) fn unknown_member<U: JsonUnion>(name: &str) -> String {
    format!("unknown {} member \"{name}\"", U::UNION)
}
