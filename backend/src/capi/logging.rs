//! Logging functions of the C API; see [`crate::log_output`] for what they control.

use std::ffi::{CStr, c_char, c_void};

use hipdnn_plugin_abi::{HIPDNN_SEV_OFF, hipdnnSeverity_t};

use super::{
    HIPDNN_LOG_CALLBACK_ASYNC, HIPDNN_LOG_CALLBACK_SYNC, boundary, hipdnnLogCallbackMode_t, null,
};
use crate::log_output::{self, CallbackMode};
use crate::status::{BackendError, HIPDNN_STATUS_BAD_PARAM, hipdnnStatus_t};

/// A user log callback: `(userHandle, severity, message)`. The message is valid for the
/// call only.
pub type hipdnnUserLogCallback_t = Option<
    unsafe extern "C" fn(user: *mut c_void, severity: hipdnnSeverity_t, message: *const c_char),
>;

/// The user data passed back to a log callback; with the callback, it identifies the
/// registration.
pub type hipdnnUserLogCallbackHandle_t = *mut c_void;

fn check_level(level: hipdnnSeverity_t, what: &str) -> Result<(), BackendError> {
    if log_output::is_valid_level(level) {
        Ok(())
    } else {
        Err(BackendError::new(
            HIPDNN_STATUS_BAD_PARAM,
            format!("{what} {} is not a severity (0 INFO .. 4 OFF)", level.0),
        ))
    }
}

/// Logs `message` through the backend at `severity` (what the backend hands plugins as
/// their log sink). The message goes where the backend's own messages go (see
/// [`hipdnnSetUserLogCallback_ext`]). Null messages are ignored.
///
/// # Safety
/// `message` is null or a NUL-terminated string, read during the call only.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipdnnLoggingCallback_ext(
    severity: hipdnnSeverity_t,
    message: *const c_char,
) {
    let _ = boundary("hipdnnLoggingCallback_ext", || {
        if !message.is_null() {
            // SAFETY: non-null and NUL-terminated per the contract.
            let text = unsafe { CStr::from_ptr(message) }.to_string_lossy();
            log_output::emit(severity, &text);
        }
        Ok(())
    });
}

/// Registers `callback` with `userHandle` to receive log messages at or above both
/// `minLevel` and the global log level (`hipdnnBackendSetGlobalLogLevel_ext`,
/// environment variable `HIPDNN_LOG_LEVEL`, default OFF). Calling again with the same
/// pair changes its level and mode; `minLevel` `HIPDNN_SEV_OFF` removes it (an ASYNC
/// callback's queued messages are delivered before this returns). Several pairs may be
/// registered at once.
///
/// Ownership: the backend keeps the two pointers, never `userHandle`'s memory; both must
/// stay valid until the pair is removed. The callback must not unwind.
///
/// # Safety
/// `callback` is a valid function for as long as it is registered.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipdnnSetUserLogCallback_ext(
    callback: hipdnnUserLogCallback_t,
    min_level: hipdnnSeverity_t,
    mode: hipdnnLogCallbackMode_t,
    user_handle: hipdnnUserLogCallbackHandle_t,
) -> hipdnnStatus_t {
    boundary("hipdnnSetUserLogCallback_ext", || {
        let callback = callback.ok_or_else(|| null("callback"))?;
        if user_handle.is_null() {
            return Err(null("userHandle"));
        }
        check_level(min_level, "minLevel")?;
        let mode = match mode {
            HIPDNN_LOG_CALLBACK_SYNC => CallbackMode::Sync,
            HIPDNN_LOG_CALLBACK_ASYNC => CallbackMode::Async,
            other if min_level == HIPDNN_SEV_OFF => {
                // Removal ignores the mode.
                let _ = other;
                CallbackMode::Sync
            }
            other => {
                return Err(BackendError::new(
                    HIPDNN_STATUS_BAD_PARAM,
                    format!("mode {other} is not HIPDNN_LOG_CALLBACK_SYNC (0) or _ASYNC (1)"),
                ));
            }
        };
        log_output::set_user_callback(callback, user_handle, min_level, mode).map_err(|e| {
            BackendError::new(
                crate::status::HIPDNN_STATUS_INTERNAL_ERROR,
                format!("cannot start the log thread: {e}"),
            )
        })
    })
}

/// Sets the global log level: messages below it are produced by neither the backend nor
/// the plugins (they receive the new level), written to standard error (or the file
/// named by `HIPDNN_LOG_FILE`), or passed to callbacks.
#[unsafe(no_mangle)]
pub extern "C" fn hipdnnBackendSetGlobalLogLevel_ext(level: hipdnnSeverity_t) -> hipdnnStatus_t {
    boundary("hipdnnBackendSetGlobalLogLevel_ext", || {
        check_level(level, "level")?;
        log_output::set_global_level(level);
        Ok(())
    })
}

/// Writes the global log level.
///
/// # Safety
/// `level` is null or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipdnnBackendGetGlobalLogLevel_ext(
    level: *mut hipdnnSeverity_t,
) -> hipdnnStatus_t {
    // SAFETY: per the contract.
    boundary("hipdnnBackendGetGlobalLogLevel_ext", || unsafe {
        super::write(level, "level", log_output::global_level())
    })
}
