//! The backend's status codes (`hipdnnStatus_t`, numbered as hipDNN's) and the error
//! type of the Rust API, which maps onto them one to one.

#![expect(non_camel_case_types, reason = "hipDNN's C names, kept exactly")]

use std::ffi::c_int;

/// A backend status code (`hipdnnStatus_t`).
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct hipdnnStatus_t(pub c_int);

macro_rules! statuses {
    ($($(#[$meta:meta])* $name:ident = $value:expr, $text:expr;)*) => {
        $( $(#[$meta])* pub const $name: hipdnnStatus_t = hipdnnStatus_t($value); )*

        impl hipdnnStatus_t {
            /// The C name, or `None` for a value hipDNN does not define.
            pub fn name(self) -> Option<&'static str> {
                match self.0 { $( $value => Some(stringify!($name)), )* _ => None }
            }

            /// A static description (`hipdnnGetErrorString`).
            pub fn description(self) -> &'static str {
                let text = self.c_description().to_str();
                text.expect("descriptions are ASCII")
            }

            /// The description as a NUL-terminated static string.
            pub fn c_description(self) -> &'static std::ffi::CStr {
                let bytes: &'static [u8] = match self.0 {
                    $( $value => concat!($text, "\0").as_bytes(), )*
                    _ => b"unknown status\0",
                };
                std::ffi::CStr::from_bytes_with_nul(bytes).expect("one NUL, at the end")
            }
        }
    };
}

statuses! {
    /// Success.
    HIPDNN_STATUS_SUCCESS = 0, "success";
    /// Not initialized (e.g. an attribute read before finalize).
    HIPDNN_STATUS_NOT_INITIALIZED = 1, "not initialized";
    /// An invalid argument.
    HIPDNN_STATUS_BAD_PARAM = 2, "bad parameter";
    /// A null pointer argument.
    HIPDNN_STATUS_BAD_PARAM_NULL_POINTER = 3, "bad parameter: null pointer";
    /// A descriptor used before it was finalized.
    HIPDNN_STATUS_BAD_PARAM_NOT_FINALIZED = 4, "bad parameter: not finalized";
    /// An index or value out of range.
    HIPDNN_STATUS_BAD_PARAM_OUT_OF_BOUND = 5, "bad parameter: out of bound";
    /// A buffer too small for the result.
    HIPDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT = 6, "bad parameter: size insufficient";
    /// Streams that do not match.
    HIPDNN_STATUS_BAD_PARAM_STREAM_MISMATCH = 7, "bad parameter: stream mismatch";
    /// Not supported (now, or for this input).
    HIPDNN_STATUS_NOT_SUPPORTED = 8, "not supported";
    /// An internal error.
    HIPDNN_STATUS_INTERNAL_ERROR = 9, "internal error";
    /// An allocation failed.
    HIPDNN_STATUS_ALLOC_FAILED = 10, "allocation failed";
    /// A host allocation failed.
    HIPDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED = 11, "internal error: host allocation failed";
    /// A device allocation failed.
    HIPDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED = 12, "internal error: device allocation failed";
    /// Execution failed.
    HIPDNN_STATUS_EXECUTION_FAILED = 13, "execution failed";
    /// A plugin reported an error.
    HIPDNN_STATUS_PLUGIN_ERROR = 14, "plugin error";
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
