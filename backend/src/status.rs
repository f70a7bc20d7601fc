//! The backend's status codes (`hipdnnStatus_t`, numbered as hipDNN's) and the error
//! type of the Rust API, which maps onto them one to one.

#![expect(non_camel_case_types, reason = "hipDNN's C names, kept exactly")]

use std::ffi::c_int;

/// A backend status code (`hipdnnStatus_t`).
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct hipdnnStatus_t(pub c_int);

/// Success.
pub const HIPDNN_STATUS_SUCCESS: hipdnnStatus_t = hipdnnStatus_t(0);
/// Not initialized (e.g. an attribute read before finalize).
pub const HIPDNN_STATUS_NOT_INITIALIZED: hipdnnStatus_t = hipdnnStatus_t(1);
/// An invalid argument.
pub const HIPDNN_STATUS_BAD_PARAM: hipdnnStatus_t = hipdnnStatus_t(2);
/// A null pointer argument.
pub const HIPDNN_STATUS_BAD_PARAM_NULL_POINTER: hipdnnStatus_t = hipdnnStatus_t(3);
/// A descriptor used before it was finalized.
pub const HIPDNN_STATUS_BAD_PARAM_NOT_FINALIZED: hipdnnStatus_t = hipdnnStatus_t(4);
/// An index or value out of range.
pub const HIPDNN_STATUS_BAD_PARAM_OUT_OF_BOUND: hipdnnStatus_t = hipdnnStatus_t(5);
/// A buffer too small for the result.
pub const HIPDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT: hipdnnStatus_t = hipdnnStatus_t(6);
/// Streams that do not match.
pub const HIPDNN_STATUS_BAD_PARAM_STREAM_MISMATCH: hipdnnStatus_t = hipdnnStatus_t(7);
/// Not supported (now, or for this input).
pub const HIPDNN_STATUS_NOT_SUPPORTED: hipdnnStatus_t = hipdnnStatus_t(8);
/// An internal error.
pub const HIPDNN_STATUS_INTERNAL_ERROR: hipdnnStatus_t = hipdnnStatus_t(9);
/// An allocation failed.
pub const HIPDNN_STATUS_ALLOC_FAILED: hipdnnStatus_t = hipdnnStatus_t(10);
/// A host allocation failed.
pub const HIPDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED: hipdnnStatus_t = hipdnnStatus_t(11);
/// A device allocation failed.
pub const HIPDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED: hipdnnStatus_t =
    hipdnnStatus_t(12);
/// Execution failed.
pub const HIPDNN_STATUS_EXECUTION_FAILED: hipdnnStatus_t = hipdnnStatus_t(13);
/// A plugin reported an error.
pub const HIPDNN_STATUS_PLUGIN_ERROR: hipdnnStatus_t = hipdnnStatus_t(14);

impl hipdnnStatus_t {
    /// The C name, or `None` for a value hipDNN does not define.
    pub fn name(self) -> Option<&'static str> {
        match self.0 {
            0 => Some("HIPDNN_STATUS_SUCCESS"),
            1 => Some("HIPDNN_STATUS_NOT_INITIALIZED"),
            2 => Some("HIPDNN_STATUS_BAD_PARAM"),
            3 => Some("HIPDNN_STATUS_BAD_PARAM_NULL_POINTER"),
            4 => Some("HIPDNN_STATUS_BAD_PARAM_NOT_FINALIZED"),
            5 => Some("HIPDNN_STATUS_BAD_PARAM_OUT_OF_BOUND"),
            6 => Some("HIPDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT"),
            7 => Some("HIPDNN_STATUS_BAD_PARAM_STREAM_MISMATCH"),
            8 => Some("HIPDNN_STATUS_NOT_SUPPORTED"),
            9 => Some("HIPDNN_STATUS_INTERNAL_ERROR"),
            10 => Some("HIPDNN_STATUS_ALLOC_FAILED"),
            11 => Some("HIPDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED"),
            12 => Some("HIPDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED"),
            13 => Some("HIPDNN_STATUS_EXECUTION_FAILED"),
            14 => Some("HIPDNN_STATUS_PLUGIN_ERROR"),
            _ => None,
        }
    }

    /// A static description (`hipdnnGetErrorString`).
    pub fn description(self) -> &'static str {
        self.c_description()
            .to_str()
            .expect("descriptions are ASCII")
    }

    /// The description as a NUL-terminated static string.
    pub fn c_description(self) -> &'static std::ffi::CStr {
        match self.0 {
            0 => c"success",
            1 => c"not initialized",
            2 => c"bad parameter",
            3 => c"bad parameter: null pointer",
            4 => c"bad parameter: not finalized",
            5 => c"bad parameter: out of bound",
            6 => c"bad parameter: size insufficient",
            7 => c"bad parameter: stream mismatch",
            8 => c"not supported",
            9 => c"internal error",
            10 => c"allocation failed",
            11 => c"internal error: host allocation failed",
            12 => c"internal error: device allocation failed",
            13 => c"execution failed",
            14 => c"plugin error",
            _ => c"unknown status",
        }
    }
}

/// An error of the backend's Rust API: a status plus a message that names what failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct BackendError {
    /// The status the C API returns for it.
    pub status: hipdnnStatus_t,
    /// What went wrong.
    pub message: String,
}

impl BackendError {
    /// An error with `status`.
    pub fn new(status: hipdnnStatus_t, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
        }
    }

    /// `NOT_SUPPORTED`.
    pub fn not_supported(message: impl Into<String>) -> Self {
        Self::new(HIPDNN_STATUS_NOT_SUPPORTED, message)
    }

    /// `PLUGIN_ERROR`.
    pub fn plugin(message: impl Into<String>) -> Self {
        Self::new(HIPDNN_STATUS_PLUGIN_ERROR, message)
    }

    /// `BAD_PARAM`.
    pub fn bad_param(message: impl Into<String>) -> Self {
        Self::new(HIPDNN_STATUS_BAD_PARAM, message)
    }
}

/// Results of the backend's Rust API.
pub type BackendResult<T> = Result<T, BackendError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_are_numbered_as_hipdnns() {
        let expected = [
            (HIPDNN_STATUS_SUCCESS, 0),
            (HIPDNN_STATUS_NOT_INITIALIZED, 1),
            (HIPDNN_STATUS_BAD_PARAM, 2),
            (HIPDNN_STATUS_BAD_PARAM_NULL_POINTER, 3),
            (HIPDNN_STATUS_BAD_PARAM_NOT_FINALIZED, 4),
            (HIPDNN_STATUS_BAD_PARAM_OUT_OF_BOUND, 5),
            (HIPDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT, 6),
            (HIPDNN_STATUS_BAD_PARAM_STREAM_MISMATCH, 7),
            (HIPDNN_STATUS_NOT_SUPPORTED, 8),
            (HIPDNN_STATUS_INTERNAL_ERROR, 9),
            (HIPDNN_STATUS_ALLOC_FAILED, 10),
            (HIPDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED, 11),
            (HIPDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED, 12),
            (HIPDNN_STATUS_EXECUTION_FAILED, 13),
            (HIPDNN_STATUS_PLUGIN_ERROR, 14),
        ];
        for (status, value) in expected {
            assert_eq!(status.0, value);
            assert!(status.name().unwrap().starts_with("HIPDNN_STATUS_"));
        }
        assert_eq!(hipdnnStatus_t(99).name(), None);
        assert_eq!(HIPDNN_STATUS_NOT_SUPPORTED.description(), "not supported");
    }
}
