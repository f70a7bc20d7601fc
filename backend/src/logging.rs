//! The sink the backend installs in every plugin (`hipdnnPluginSetLoggingCallback`),
//! and the level it pushes (`hipdnnPluginSetLogLevel`).
//!
//! A plugin's `tracing` events live in the plugin's own copy of the dispatcher; the
//! plugin SDK forwards them through this callback, which re-emits them as events of the
//! backend, so the application's subscriber sees them.

use std::ffi::c_char;
use std::panic::{AssertUnwindSafe, catch_unwind};

use hipdnn_plugin_abi::*;
use tracing::level_filters::LevelFilter;

use crate::plugin::read_bounded;

/// The `tracing` target of forwarded plugin messages.
pub const PLUGIN_LOG_TARGET: &str = "hipdnn_plugin";

/// Longest plugin log message forwarded, in bytes; longer ones are cut.
const MAX_MESSAGE_LEN: usize = 64 * 1024;

/// The backend's log sink, handed to each plugin.
///
/// # Safety
/// `message` is null or a NUL-terminated string readable for the call (it is read up to
/// [`MAX_MESSAGE_LEN`] bytes).
pub(crate) unsafe extern "C" fn plugin_log_sink(
    severity: hipdnnSeverity_t,
    message: *const c_char,
) {
    // Unwinding out of an `extern "C"` function aborts: keep any panic here.
    let _ = catch_unwind(AssertUnwindSafe(|| {
        if message.is_null() {
            return;
        }
        // SAFETY: non-null and NUL-terminated per the callback's contract; reading stops
        // at the first NUL or at the bound.
        let text = unsafe { read_bounded(message, MAX_MESSAGE_LEN) }.unwrap_or_else(|cut| cut);
        match severity {
            HIPDNN_SEV_INFO => tracing::info!(target: PLUGIN_LOG_TARGET, "{text}"),
            HIPDNN_SEV_WARN => tracing::warn!(target: PLUGIN_LOG_TARGET, "{text}"),
            HIPDNN_SEV_ERROR => tracing::error!(target: PLUGIN_LOG_TARGET, "{text}"),
            HIPDNN_SEV_FATAL => tracing::error!(target: PLUGIN_LOG_TARGET, fatal = true, "{text}"),
            other => tracing::warn!(
                target: PLUGIN_LOG_TARGET,
                "message with unknown severity {}: {text}",
                other.0
            ),
        }
    }));
}

/// The plugin log level matching the backend's current `tracing` maximum level: hipDNN
/// has no debug or trace severity, so those map to `INFO`.
pub(crate) fn current_severity() -> hipdnnSeverity_t {
    severity_for(LevelFilter::current())
}

fn severity_for(filter: LevelFilter) -> hipdnnSeverity_t {
    if filter == LevelFilter::OFF {
        HIPDNN_SEV_OFF
    } else if filter == LevelFilter::ERROR {
        HIPDNN_SEV_ERROR
    } else if filter == LevelFilter::WARN {
        HIPDNN_SEV_WARN
    } else {
        HIPDNN_SEV_INFO
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_map_to_hipdnn_severities() {
        assert_eq!(severity_for(LevelFilter::OFF), HIPDNN_SEV_OFF);
        assert_eq!(severity_for(LevelFilter::ERROR), HIPDNN_SEV_ERROR);
        assert_eq!(severity_for(LevelFilter::WARN), HIPDNN_SEV_WARN);
        assert_eq!(severity_for(LevelFilter::INFO), HIPDNN_SEV_INFO);
        assert_eq!(severity_for(LevelFilter::TRACE), HIPDNN_SEV_INFO);
    }

    #[test]
    fn sink_accepts_null_and_unknown_severities() {
        // SAFETY: null is allowed; the other message is a valid C string.
        unsafe {
            plugin_log_sink(HIPDNN_SEV_INFO, std::ptr::null());
            plugin_log_sink(hipdnnSeverity_t(42), c"odd".as_ptr());
            plugin_log_sink(HIPDNN_SEV_FATAL, c"fatal".as_ptr());
        }
    }
}
