//! serde support for generated enums: written by name, read by name or number.

use serde::Deserialize;

/// An enum as it appears in JSON: its schema name or its wire number.
#[derive(Deserialize)]
#[serde(untagged)]
pub(crate) enum RawEnum {
    Name(String),
    Number(i64),
}

impl RawEnum {
    /// Maps the JSON value to a wire number using the `(name, value)` pairs of the enum.
    pub(crate) fn resolve<'a, E: serde::de::Error>(
        self,
        enum_name: &str,
        mut values: impl Iterator<Item = (&'a str, i64)>,
    ) -> Result<i64, E> {
        match self {
            RawEnum::Number(n) => Ok(n),
            RawEnum::Name(name) => values
                .find(|(candidate, _)| *candidate == name)
                .map(|(_, value)| value)
                .ok_or_else(|| E::custom(format!("unknown {enum_name} name \"{name}\""))),
        }
    }
}
