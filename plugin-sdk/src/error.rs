//! Errors, the per-thread last-error string, and the one boundary every entry point
//! runs inside.

use std::cell::RefCell;
use std::ffi::{CStr, c_char};
use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::abi::*;

/// A failure reported to the host as a status code plus a message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct PluginError {
    /// The status the entry point returns.
    pub status: hipdnnPluginStatus_t,
    /// What went wrong, readable through `hipdnnPluginGetLastErrorString`.
    pub message: String,
}

impl PluginError {
    /// An error with an explicit status.
    pub fn new(status: hipdnnPluginStatus_t, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
        }
    }

    /// `BAD_PARAM`: a null or invalid argument.
    pub fn bad_param(message: impl Into<String>) -> Self {
        Self::new(HIPDNN_PLUGIN_STATUS_BAD_PARAM, message)
    }

    /// `INVALID_VALUE`: a well-formed argument with an unknown value.
    pub fn invalid_value(message: impl Into<String>) -> Self {
        Self::new(HIPDNN_PLUGIN_STATUS_INVALID_VALUE, message)
    }

    /// `INTERNAL_ERROR`.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(HIPDNN_PLUGIN_STATUS_INTERNAL_ERROR, message)
    }

    /// `NOT_APPLICABLE`: the plugin has nothing to supply for this call.
    pub fn not_applicable(message: impl Into<String>) -> Self {
        Self::new(HIPDNN_PLUGIN_STATUS_NOT_APPLICABLE, message)
    }
}

impl From<hipdnn_flatbuffers_sdk::Error> for PluginError {
    fn from(e: hipdnn_flatbuffers_sdk::Error) -> Self {
        Self::bad_param(e.to_string())
    }
}

/// Shorthand for results of plugin code.
pub type PluginResult<T> = Result<T, PluginError>;

thread_local! {
    static LAST_ERROR: RefCell<[u8; HIPDNN_PLUGIN_ERROR_STRING_MAX_LENGTH]> =
        const { RefCell::new([0; HIPDNN_PLUGIN_ERROR_STRING_MAX_LENGTH]) };
}

/// Stores `message` as this thread's last error, truncated (at a character boundary)
/// to fit the buffer with its NUL.
pub fn set_last_error(message: &str) {
    let mut end = message.len().min(HIPDNN_PLUGIN_ERROR_STRING_MAX_LENGTH - 1);
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    let bytes = &message.as_bytes()[..end];
    LAST_ERROR.with(|buf| {
        let mut buf = buf.borrow_mut();
        // Interior NULs would cut the C string short; make them visible instead.
        for (dst, &src) in buf.iter_mut().zip(bytes) {
            *dst = if src == 0 { b'?' } else { src };
        }
        buf[end] = 0;
    });
}

/// Clears this thread's last error.
pub fn clear_last_error() {
    LAST_ERROR.with(|buf| buf.borrow_mut()[0] = 0);
}

/// This thread's last error (empty when none).
pub fn last_error() -> String {
    LAST_ERROR.with(|buf| {
        let buf = buf.borrow();
        CStr::from_bytes_until_nul(&buf[..])
            .map_or_else(|_| String::new(), |s| s.to_string_lossy().into_owned())
    })
}

/// Pointer to this thread's NUL-terminated last-error buffer: valid until the thread
/// makes its next call into the plugin, or exits.
pub(crate) fn last_error_ptr() -> *const c_char {
    LAST_ERROR.with(|buf| buf.as_ptr().cast::<c_char>())
}

/// Runs the body of an entry point: clears the last error, turns `Err` into its status
/// (message stored as the last error and logged) and a panic into `INTERNAL_ERROR`
/// (message `"panic in <entry>: ..."`). Nothing unwinds past this function.
pub fn boundary(
    entry: &'static str,
    body: impl FnOnce() -> PluginResult<()>,
) -> hipdnnPluginStatus_t {
    clear_last_error();
    let error = match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => return HIPDNN_PLUGIN_STATUS_SUCCESS,
        Ok(Err(error)) => error,
        Err(payload) => PluginError::internal(format!(
            "panic in {entry}: {}",
            hipdnn_data_sdk::panic_message(&*payload)
        )),
    };
    // Logging runs host code and formatting; keep a second panic from escaping too.
    let status = error.status;
    let _ = catch_unwind(AssertUnwindSafe(|| {
        set_last_error(&error.message);
        tracing::error!(target: "hipdnn_plugin", "{entry} failed with {status}: {}", error.message);
    }));
    status
}

/// Turns a null `ptr` into `BAD_PARAM` naming `what`.
#[inline]
pub fn non_null<T>(ptr: *const T, what: &str) -> PluginResult<*const T> {
    if ptr.is_null() {
        Err(null_pointer(what))
    } else {
        Ok(ptr)
    }
}

/// Turns a null `ptr` into `BAD_PARAM` naming `what`.
#[inline]
pub fn non_null_mut<T>(ptr: *mut T, what: &str) -> PluginResult<*mut T> {
    if ptr.is_null() {
        Err(null_pointer(what))
    } else {
        Ok(ptr)
    }
}

/// The error of a null pointer, out of line: every entry point checks its pointers, and
/// the message is only formatted when one is null.
#[cold]
#[inline(never)]
fn null_pointer(what: &str) -> PluginError {
    PluginError::bad_param(format!("{what} is null"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boundary_maps_errors_and_panics_to_statuses() {
        assert_eq!(boundary("ok", || Ok(())), HIPDNN_PLUGIN_STATUS_SUCCESS);
        assert_eq!(last_error(), "");
        let status = boundary("f", || {
            Err(PluginError::invalid_value("unknown engine id 7"))
        });
        assert_eq!(status, HIPDNN_PLUGIN_STATUS_INVALID_VALUE);
        assert_eq!(last_error(), "unknown engine id 7");
        let status = boundary("hipdnnEnginePluginCreate", || panic!("boom {}", 42));
        assert_eq!(status, HIPDNN_PLUGIN_STATUS_INTERNAL_ERROR);
        assert_eq!(last_error(), "panic in hipdnnEnginePluginCreate: boom 42");
        // The next successful call clears it.
        boundary("ok", || Ok(()));
        assert_eq!(last_error(), "");
    }

    #[test]
    fn last_error_is_truncated_at_a_char_boundary_and_nul_safe() {
        let long = "é".repeat(HIPDNN_PLUGIN_ERROR_STRING_MAX_LENGTH);
        set_last_error(&long);
        let stored = last_error();
        assert!(stored.len() < HIPDNN_PLUGIN_ERROR_STRING_MAX_LENGTH);
        assert!(stored.chars().all(|c| c == 'é'));
        set_last_error("a\0b");
        assert_eq!(last_error(), "a?b");
    }

    #[test]
    fn last_error_is_per_thread() {
        set_last_error("main thread");
        std::thread::spawn(|| {
            assert_eq!(last_error(), "");
            set_last_error("other thread");
        })
        .join()
        .unwrap();
        assert_eq!(last_error(), "main thread");
    }
}
