//! Forwarding the plugin's `tracing` events to the host's logging callback.
//!
//! A cdylib carries its own copy of `tracing`'s global dispatcher, so events raised in a
//! plugin never reach the host's subscriber. When the host installs its callback
//! (`hipdnnPluginSetLoggingCallback`), the SDK installs a small subscriber as this
//! library's global default: it formats each event and calls the host's callback with
//! the matching severity, filtered by the level the host set (`hipdnnPluginSetLogLevel`).
//! Spans are not forwarded; their fields are not part of the message.

use std::ffi::CString;
use std::fmt::Write as _;
use std::sync::Once;
use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::subscriber::Interest;
use tracing::{Event, Level, Metadata, Subscriber};

use crate::abi::*;

/// The host's callback as a function-pointer address (0: none).
static CALLBACK: AtomicUsize = AtomicUsize::new(0);
/// The lowest severity forwarded.
static LEVEL: AtomicI32 = AtomicI32::new(HIPDNN_SEV_INFO.0);
static INSTALL: Once = Once::new();

/// hipDNN has no debug or trace severity: those events stay inside the plugin.
fn severity(level: &Level) -> Option<hipdnnSeverity_t> {
    match *level {
        Level::ERROR => Some(HIPDNN_SEV_ERROR),
        Level::WARN => Some(HIPDNN_SEV_WARN),
        Level::INFO => Some(HIPDNN_SEV_INFO),
        _ => None,
    }
}

fn forwarded(level: &Level) -> bool {
    CALLBACK.load(Ordering::Relaxed) != 0
        && severity(level).is_some_and(|s| s.0 >= LEVEL.load(Ordering::Relaxed))
}

struct Forwarder;

#[derive(Default)]
struct Message(String);

impl Visit for Message {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.0, "{value:?}");
        } else {
            let _ = write!(self.0, " {}={value:?}", field.name());
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.0.push_str(value);
        } else {
            let _ = write!(self.0, " {}={value}", field.name());
        }
    }
}

impl Subscriber for Forwarder {
    fn register_callsite(&self, _: &'static Metadata<'static>) -> Interest {
        // The host may change the level at any time: ask `enabled` every time.
        Interest::sometimes()
    }

    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.is_event() && forwarded(metadata.level())
    }

    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }

    fn record(&self, _: &Id, _: &Record<'_>) {}

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let metadata = event.metadata();
        let Some(severity) = severity(metadata.level()) else {
            return;
        };
        let mut message = Message(String::new());
        event.record(&mut message);
        let text = format!("[{}] {}", metadata.target(), message.0);
        send(severity, &text);
    }

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}

fn send(severity: hipdnnSeverity_t, text: &str) {
    let address = CALLBACK.load(Ordering::Acquire);
    if address == 0 {
        return;
    }
    // SAFETY: only `set_callback` stores into CALLBACK, and only addresses of
    // non-null `unsafe extern "C" fn(hipdnnSeverity_t, *const c_char)` values.
    let callback: unsafe extern "C" fn(hipdnnSeverity_t, *const std::ffi::c_char) =
        unsafe { std::mem::transmute::<usize, _>(address) };
    let text = CString::new(text.replace('\0', "?")).expect("NULs were replaced");
    // SAFETY: the host promised a callable sink when it installed it; the message is a
    // valid NUL-terminated string for the duration of the call.
    unsafe { callback(severity, text.as_ptr()) };
}

/// Installs the host's sink (the body of `hipdnnPluginSetLoggingCallback`).
///
/// # Errors
/// A null callback.
pub fn set_callback(callback: hipdnnCallback_t) -> crate::PluginResult<()> {
    let callback =
        callback.ok_or_else(|| crate::PluginError::bad_param("logging callback is null"))?;
    CALLBACK.store(callback as usize, Ordering::Release);
    INSTALL.call_once(|| {
        if tracing::dispatcher::set_global_default(tracing::Dispatch::new(Forwarder)).is_err() {
            // Only possible when the SDK is linked into a program that installed its own
            // subscriber (tests, static linking): events then go there.
            send(
                HIPDNN_SEV_WARN,
                "[hipdnn_plugin] a tracing subscriber is already installed; plugin events go to it",
            );
        }
    });
    // Installing the dispatcher re-evaluated every callsite; later calls only swap the sink,
    // which `enabled` reads on every event.
    Ok(())
}

/// Sets the lowest severity forwarded (the body of `hipdnnPluginSetLogLevel`).
///
/// # Errors
/// A value that is not a `hipdnnSeverity_t`.
pub fn set_level(level: hipdnnSeverity_t) -> crate::PluginResult<()> {
    if level.name().is_none() {
        return Err(crate::PluginError::bad_param(format!(
            "log level {} is not a hipdnnSeverity_t",
            level.0
        )));
    }
    // Callsites report `Interest::sometimes`, so `enabled` sees the new level at once.
    LEVEL.store(level.0, Ordering::Relaxed);
    Ok(())
}
