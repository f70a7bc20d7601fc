//! The crate's error types.

use flatbuffers::InvalidFlatbuffer;

/// Why bytes could not be turned into a view or an owned value.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The buffer is larger than [`VerifyLimits::max_bytes`](crate::VerifyLimits::max_bytes).
    #[error("{root} buffer of {size} bytes exceeds the limit of {limit} bytes")]
    TooLarge {
        /// Root table that was expected.
        root: &'static str,
        /// Size of the buffer.
        size: usize,
        /// The limit in force.
        limit: usize,
    },
    /// The FlatBuffers verifier rejected the buffer.
    #[error("invalid {root} flatbuffer: {source}")]
    Invalid {
        /// Root table that was expected.
        root: &'static str,
        /// What the verifier found.
        #[source]
        source: InvalidFlatbuffer,
    },
    /// The buffer carries the wrong file identifier.
    #[error("{root} buffer lacks the file identifier \"{expected}\"")]
    WrongIdentifier {
        /// Root table that was expected.
        root: &'static str,
        /// The identifier that should be present.
        expected: &'static str,
    },
    /// A union type tag that this version of the schema does not know.
    #[error("{location}: unknown {union} type tag {tag}")]
    UnknownUnionTag {
        /// Where the tag was found (e.g. `node 3 ("conv")`).
        location: String,
        /// Union name.
        union: &'static str,
        /// The tag on the wire.
        tag: u8,
    },
    /// A union whose tag names a member but whose value is missing (or vice versa).
    #[error("{location}: {union} has type tag {tag} but no value")]
    MissingUnionValue {
        /// Where the union was found.
        location: String,
        /// Union name.
        union: &'static str,
        /// The tag on the wire.
        tag: u8,
    },
    /// An enum value that this version of the schema does not know.
    #[error("{location}: unknown {enum_name} value {value}")]
    UnknownEnumValue {
        /// Where the value was found.
        location: String,
        /// Enum name.
        enum_name: &'static str,
        /// The value on the wire.
        value: i64,
    },
    /// A required field is absent.
    #[error("{location}: required field `{field}` is missing")]
    MissingField {
        /// Where the field was expected.
        location: String,
        /// Field name.
        field: &'static str,
    },
    /// The JSON form could not be parsed.
    #[error("invalid graph JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// A graph in upstream hipDNN's JSON dialect could not be read (the message names
    /// the node or tensor and the key at fault).
    #[error("invalid graph JSON (upstream dialect): {0}")]
    UpstreamJson(String),
}

impl Error {
    /// Prefixes the location of a located error with an outer location.
    pub(crate) fn within(mut self, outer: &str) -> Self {
        match &mut self {
            Error::UnknownUnionTag { location, .. }
            | Error::MissingUnionValue { location, .. }
            | Error::UnknownEnumValue { location, .. }
            | Error::MissingField { location, .. } => {
                *location = if location.is_empty() {
                    outer.to_owned()
                } else {
                    format!("{outer}: {location}")
                };
            }
            _ => {}
        }
        self
    }
}
