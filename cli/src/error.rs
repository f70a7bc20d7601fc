//! The command's one error type and its exit codes.

use std::fmt;

use hipdnn_backend::BackendError;
use hipdnn_backend::status::{
    HIPDNN_STATUS_BAD_PARAM, HIPDNN_STATUS_BAD_PARAM_NULL_POINTER,
    HIPDNN_STATUS_BAD_PARAM_OUT_OF_BOUND, HIPDNN_STATUS_NOT_SUPPORTED,
};

/// Exit code of a failed check or a failed execution.
pub const EXIT_FAILURE: u8 = 1;
/// Exit code of a usage or input error (clap uses it for bad arguments too).
pub const EXIT_USAGE: u8 = 2;

/// Why the command stopped: a one-line message and the exit code it maps to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CliError {
    /// Bad arguments or input: a file, a graph, a knob, an engine name (exit 2).
    Usage(String),
    /// The run itself failed: a plugin error, an execution failure, a failed check
    /// (exit 1).
    Failed(String),
}

impl CliError {
    /// A usage or input error.
    pub fn usage(message: impl Into<String>) -> Self {
        Self::Usage(message.into())
    }

    /// A failure of the run.
    pub fn failed(message: impl Into<String>) -> Self {
        Self::Failed(message.into())
    }

    /// The process exit code.
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::Usage(_) => EXIT_USAGE,
            Self::Failed(_) => EXIT_FAILURE,
        }
    }

    /// A backend error, classified by its status: what the caller gave (bad parameter,
    /// a graph or engine that is not supported) is an input error, the rest (plugin
    /// errors, execution failures) a failure.
    pub fn backend(context: &str, error: BackendError) -> Self {
        let message = if context.is_empty() {
            error.message
        } else {
            format!("{context}: {}", error.message)
        };
        let input = [
            HIPDNN_STATUS_BAD_PARAM,
            HIPDNN_STATUS_BAD_PARAM_NULL_POINTER,
            HIPDNN_STATUS_BAD_PARAM_OUT_OF_BOUND,
            HIPDNN_STATUS_NOT_SUPPORTED,
        ];
        if input.contains(&error.status) {
            Self::Usage(message)
        } else {
            Self::Failed(message)
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Usage(m) | Self::Failed(m) => f.write_str(m),
        }
    }
}

/// Result of a subcommand.
pub type CliResult<T> = Result<T, CliError>;

#[cfg(test)]
mod tests {
    use super::*;
    use hipdnn_backend::status::HIPDNN_STATUS_EXECUTION_FAILED;

    #[test]
    fn backend_errors_map_to_exit_codes() {
        let bad = CliError::backend("x", BackendError::bad_param("knob \"k\": too big"));
        assert_eq!(bad.exit_code(), EXIT_USAGE);
        assert_eq!(bad.to_string(), "x: knob \"k\": too big");
        let failed = CliError::backend(
            "",
            BackendError::new(HIPDNN_STATUS_EXECUTION_FAILED, "boom"),
        );
        assert_eq!(failed.exit_code(), EXIT_FAILURE);
        assert_eq!(failed.to_string(), "boom");
    }
}
