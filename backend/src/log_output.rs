//! Where the backend's log goes for C applications: the global log level, the console
//! or file sink, and user log callbacks (`hipdnnSetUserLogCallback_ext`).
//!
//! The backend logs with `tracing`. A Rust application installs its own subscriber and
//! never meets this module, or calls [`ensure_installed`] to get what C applications get.
//! The C API cannot expect a subscriber, so its first call installs [`LogOutput`] as the
//! process's global `tracing` subscriber (only if none is set yet):
//!
//! * **Global level** (`HIPDNN_LOG_LEVEL`: `off` (default), `info`, `warn`, `error`,
//!   `fatal`; or `hipdnnBackendSetGlobalLogLevel_ext`): messages below it are not
//!   produced at all, by the backend or by plugins (plugins receive the level).
//! * **Sink**: every message at or above the global level is written as one line to
//!   standard error, or appended to the file named by `HIPDNN_LOG_FILE`.
//! * **User callbacks**: each registered `(callback, user handle)` pair gets the messages
//!   at or above both its own minimum level and the global level, either on the logging
//!   thread (SYNC) or in order on one background thread fed by a queue of
//!   [`ASYNC_QUEUE_LEN`] messages that blocks the logging thread when full (ASYNC).
//!   Registering with level OFF removes the pair; removing an ASYNC callback delivers its
//!   queued messages first.
//!
//! hipDNN has no debug or trace severity: `tracing`'s DEBUG and TRACE events are never
//! delivered here. An ERROR event carrying the field `fatal = true` is FATAL.

use std::cell::Cell;
use std::ffi::{CString, c_char, c_void};
use std::fmt::Write as _;
use std::fs::File;
use std::io::Write as _;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex, MutexGuard, Once, RwLock};
use std::thread::JoinHandle;

use hipdnn_plugin_abi::*;
use tracing::field::{Field, Visit};
use tracing::level_filters::LevelFilter;
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};

/// Name of the environment variable holding the initial global log level.
pub const LOG_LEVEL_ENV: &str = "HIPDNN_LOG_LEVEL";
/// Name of the environment variable naming a file the sink appends to instead of
/// standard error.
pub const LOG_FILE_ENV: &str = "HIPDNN_LOG_FILE";
/// Messages an ASYNC callback's queue holds before logging threads block.
pub const ASYNC_QUEUE_LEN: usize = 8192;

/// A user log callback: `(user handle, severity, message)`; the message is valid for the
/// call only.
pub type UserLogCallback =
    unsafe extern "C" fn(user: *mut c_void, severity: hipdnnSeverity_t, message: *const c_char);

/// How a user callback is invoked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallbackMode {
    /// On the thread that logs, before the logging call returns.
    Sync,
    /// On the backend's log thread, in order, through a bounded queue.
    Async,
}

/// Parses a level name as `HIPDNN_LOG_LEVEL` accepts it (case-insensitive), or its number.
pub fn parse_level(text: &str) -> Option<hipdnnSeverity_t> {
    match text.trim().to_ascii_lowercase().as_str() {
        "info" | "0" => Some(HIPDNN_SEV_INFO),
        "warn" | "warning" | "1" => Some(HIPDNN_SEV_WARN),
        "error" | "2" => Some(HIPDNN_SEV_ERROR),
        "fatal" | "3" => Some(HIPDNN_SEV_FATAL),
        "off" | "4" => Some(HIPDNN_SEV_OFF),
        _ => None,
    }
}

/// Whether `level` is one of the five defined severities.
pub fn is_valid_level(level: hipdnnSeverity_t) -> bool {
    (HIPDNN_SEV_INFO.0..=HIPDNN_SEV_OFF.0).contains(&level.0)
}

fn level_name(level: hipdnnSeverity_t) -> &'static str {
    match level {
        HIPDNN_SEV_INFO => "info",
        HIPDNN_SEV_WARN => "warn",
        HIPDNN_SEV_ERROR => "error",
        HIPDNN_SEV_FATAL => "fatal",
        _ => "off",
    }
}

/// The `tracing` filter letting through exactly the messages at or above `level`.
pub(crate) fn filter_for(level: hipdnnSeverity_t) -> LevelFilter {
    match level {
        HIPDNN_SEV_INFO => LevelFilter::INFO,
        HIPDNN_SEV_WARN => LevelFilter::WARN,
        HIPDNN_SEV_ERROR | HIPDNN_SEV_FATAL => LevelFilter::ERROR,
        _ => LevelFilter::OFF,
    }
}

#[derive(Clone, Copy, Debug)]
struct Registration {
    callback: UserLogCallback,
    /// The user handle, kept as an address: it is only ever passed back to `callback`.
    user: usize,
    min_level: hipdnnSeverity_t,
    mode: CallbackMode,
}

impl Registration {
    fn same_key(&self, callback: UserLogCallback, user: usize) -> bool {
        std::ptr::fn_addr_eq(self.callback, callback) && self.user == user
    }

    fn wants(&self, severity: hipdnnSeverity_t) -> bool {
        self.min_level != HIPDNN_SEV_OFF && severity.0 >= self.min_level.0
    }

    fn deliver(&self, severity: hipdnnSeverity_t, message: &CString) {
        // SAFETY: the application registered `callback` with `user` and keeps both valid
        // while registered (the documented contract of `hipdnnSetUserLogCallback_ext`);
        // `message` is NUL-terminated and outlives the call.
        unsafe { (self.callback)(self.user as *mut c_void, severity, message.as_ptr()) };
    }
}

enum Job {
    Deliver(Registration, hipdnnSeverity_t, CString),
    /// Answered once every job queued before it has been delivered.
    Flush(SyncSender<()>),
}

thread_local! {
    /// Set on the ASYNC log thread: messages it logs itself are delivered in place (it
    /// cannot wait for its own queue), and it never waits for itself to stop.
    static ON_WORKER: Cell<bool> = const { Cell::new(false) };
}

fn on_worker() -> bool {
    ON_WORKER.with(Cell::get)
}

fn start_worker() -> std::io::Result<(SyncSender<Job>, JoinHandle<()>)> {
    let (sender, receiver) = sync_channel(ASYNC_QUEUE_LEN);
    let thread = std::thread::Builder::new()
        .name("hipdnn-log".to_owned())
        .spawn(move || run_worker(receiver))?;
    Ok((sender, thread))
}

fn run_worker(receiver: Receiver<Job>) {
    ON_WORKER.with(|w| w.set(true));
    for job in receiver {
        match job {
            Job::Deliver(registration, severity, message) => {
                registration.deliver(severity, &message);
            }
            Job::Flush(done) => {
                let _ = done.send(());
            }
        }
    }
}

/// The process's log output state.
struct State {
    level: AtomicI32,
    /// `None` until the first registration.
    callbacks: RwLock<Option<Arc<Vec<Registration>>>>,
    /// Serialises registration changes; holds the ASYNC log thread while it runs.
    changes: Mutex<Option<JoinHandle<()>>>,
    /// The ASYNC queue, while the log thread runs. Never held while waiting.
    sender: Mutex<Option<SyncSender<Job>>>,
    file: Mutex<Option<File>>,
}

static STATE: State = State {
    level: AtomicI32::new(HIPDNN_SEV_OFF.0),
    callbacks: RwLock::new(None),
    changes: Mutex::new(None),
    sender: Mutex::new(None),
    file: Mutex::new(None),
};

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every update under these locks is a single assignment: a poisoned lock is still
    // consistent.
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

fn snapshot() -> Option<Arc<Vec<Registration>>> {
    STATE
        .callbacks
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .clone()
}

/// Installs [`LogOutput`] as the global subscriber (unless one is set) and reads the
/// environment (`HIPDNN_LOG_LEVEL`, `HIPDNN_LOG_FILE`), once per process. Every C API
/// function calls this first.
///
/// A Rust program that wants the C API's log behaviour rather than a subscriber of its
/// own (the `hipdnn` command does) calls it before creating its first [`Handle`]:
/// plugins receive the log level when they are loaded, and their messages then reach the
/// same sink as the backend's.
///
/// [`Handle`]: crate::Handle
pub fn ensure_installed() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        if let Ok(text) = std::env::var(LOG_LEVEL_ENV) {
            match parse_level(&text) {
                Some(level) => STATE.level.store(level.0, Ordering::Relaxed),
                None => eprintln!(
                    "hipdnn: ignoring {LOG_LEVEL_ENV}={text:?}: expected off, info, warn, error or fatal"
                ),
            }
        }
        if let Some(path) = std::env::var_os(LOG_FILE_ENV) {
            match File::options().create(true).append(true).open(&path) {
                Ok(file) => *lock(&STATE.file) = Some(file),
                Err(e) => eprintln!(
                    "hipdnn: cannot open {LOG_FILE_ENV}={}: {e}; logging to standard error",
                    path.display()
                ),
            }
        }
        if !tracing::dispatcher::has_been_set() {
            let _ = tracing::subscriber::set_global_default(LogOutput);
        }
    });
}

/// The global log level.
pub fn global_level() -> hipdnnSeverity_t {
    hipdnnSeverity_t(STATE.level.load(Ordering::Relaxed))
}

/// Sets the global log level and pushes it to the loaded plugins.
///
/// # Panics
/// Never for a valid level; callers check with [`is_valid_level`] first.
pub fn set_global_level(level: hipdnnSeverity_t) {
    debug_assert!(is_valid_level(level));
    STATE.level.store(level.0, Ordering::Relaxed);
    // `tracing` caches each call site's interest; the new level must reach them.
    tracing::callsite::rebuild_interest_cache();
    crate::manager::push_log_level(crate::logging::current_severity());
}

/// Registers, updates (same callback and user handle) or, with `min_level` OFF,
/// removes a user callback.
///
/// # Errors
/// The ASYNC log thread could not be started.
pub fn set_user_callback(
    callback: UserLogCallback,
    user: *mut c_void,
    min_level: hipdnnSeverity_t,
    mode: CallbackMode,
) -> std::io::Result<()> {
    let user = user as usize;
    // Under the lock: the new list, and what to wait for afterwards. Waiting happens
    // without the lock, so a callback running on the log thread may itself change
    // registrations meanwhile.
    let (flush_through, stopping) = {
        let mut thread = lock(&STATE.changes);
        let current = snapshot().unwrap_or_default();
        let mut next: Vec<Registration> = current
            .iter()
            .filter(|r| !r.same_key(callback, user))
            .copied()
            .collect();
        let was_async = current
            .iter()
            .any(|r| r.same_key(callback, user) && r.mode == CallbackMode::Async);
        if min_level != HIPDNN_SEV_OFF {
            if mode == CallbackMode::Async && thread.is_none() {
                let (sender, started) = start_worker()?;
                *lock(&STATE.sender) = Some(sender);
                *thread = Some(started);
            }
            next.push(Registration {
                callback,
                user,
                min_level,
                mode,
            });
        }
        let any_async = next.iter().any(|r| r.mode == CallbackMode::Async);
        *STATE.callbacks.write().unwrap_or_else(|e| e.into_inner()) = Some(Arc::new(next));
        let flush_through = if was_async {
            lock(&STATE.sender).clone()
        } else {
            None
        };
        // With no ASYNC callback left, the log thread stops: it ends when the last
        // sender is gone (in-flight clones are dropped right after their send).
        let stopping = if any_async {
            None
        } else {
            thread.take().map(|t| (t, lock(&STATE.sender).take()))
        };
        (flush_through, stopping)
    };
    if on_worker() {
        // A callback changing registrations from the log thread cannot wait for itself:
        // a stopping thread is detached and ends once its queue is drained.
        return Ok(());
    }
    if let Some(sender) = flush_through {
        // Deliver what is queued for the old registration before returning, so the
        // application may free its user data once this call returns.
        let (done, wait) = sync_channel(1);
        if sender.send(Job::Flush(done)).is_ok() {
            let _ = wait.recv();
        }
    }
    if let Some((thread, sender)) = stopping {
        drop(sender);
        let _ = thread.join();
    }
    Ok(())
}

/// Sends one message to the sink (with its target) and the callbacks, if the global level
/// lets it through.
fn dispatch(severity: hipdnnSeverity_t, target: &str, text: &str) {
    let global = global_level();
    if global == HIPDNN_SEV_OFF || severity.0 < global.0 {
        return;
    }
    let line = format!("hipdnn {}: [{target}] {text}\n", level_name(severity));
    match lock(&STATE.file).as_mut() {
        Some(file) => {
            let _ = file.write_all(line.as_bytes());
        }
        None => {
            let _ = std::io::stderr().write_all(line.as_bytes());
        }
    }
    let Some(callbacks) = snapshot().filter(|c| !c.is_empty()) else {
        return;
    };
    // Interior NULs cannot cross to C: shown as U+FFFD.
    let message = CString::new(text.replace('\0', "\u{fffd}")).unwrap_or_default();
    let sender = if on_worker() {
        None
    } else {
        lock(&STATE.sender).clone()
    };
    for registration in callbacks.iter().filter(|r| r.wants(severity)) {
        match (registration.mode, &sender) {
            (CallbackMode::Async, Some(sender)) => {
                // Blocks while the queue is full.
                let _ = sender.send(Job::Deliver(*registration, severity, message.clone()));
            }
            _ => registration.deliver(severity, &message),
        }
    }
}

/// The `tracing` target of messages logged through `hipdnnLoggingCallback_ext`.
pub const EXT_LOG_TARGET: &str = "hipdnn";

/// Emits a message given with a hipDNN severity (the `hipdnnLoggingCallback_ext` path).
pub(crate) fn emit(severity: hipdnnSeverity_t, text: &str) {
    match severity {
        HIPDNN_SEV_INFO => tracing::info!(target: EXT_LOG_TARGET, "{text}"),
        HIPDNN_SEV_WARN => tracing::warn!(target: EXT_LOG_TARGET, "{text}"),
        HIPDNN_SEV_ERROR => tracing::error!(target: EXT_LOG_TARGET, "{text}"),
        HIPDNN_SEV_FATAL => tracing::error!(target: EXT_LOG_TARGET, fatal = true, "{text}"),
        other => tracing::warn!(
            target: EXT_LOG_TARGET,
            "message with unknown severity {}: {text}",
            other.0
        ),
    }
}

/// The `tracing` subscriber of C applications: formats each event on one line and hands
/// it to the sink and the callbacks. Spans are not recorded.
#[derive(Debug, Clone, Copy)]
pub struct LogOutput;

fn severity_of(level: &Level) -> Option<hipdnnSeverity_t> {
    match *level {
        Level::ERROR => Some(HIPDNN_SEV_ERROR),
        Level::WARN => Some(HIPDNN_SEV_WARN),
        Level::INFO => Some(HIPDNN_SEV_INFO),
        _ => None,
    }
}

#[derive(Default)]
struct Line {
    message: String,
    fields: String,
    fatal: bool,
}

impl Visit for Line {
    fn record_bool(&mut self, field: &Field, value: bool) {
        if field.name() == "fatal" {
            self.fatal = value;
        } else {
            self.record_debug(field, &value);
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.message, "{value:?}");
        } else {
            let _ = write!(self.fields, " {}={value:?}", field.name());
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.message.push_str(value);
        } else {
            let _ = write!(self.fields, " {}={value}", field.name());
        }
    }
}

impl Subscriber for LogOutput {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        let global = global_level();
        severity_of(metadata.level())
            .is_some_and(|s| global != HIPDNN_SEV_OFF && s.0 >= global.0.min(HIPDNN_SEV_ERROR.0))
    }

    fn max_level_hint(&self) -> Option<LevelFilter> {
        Some(filter_for(global_level()))
    }

    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }

    fn record(&self, _: &Id, _: &Record<'_>) {}

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let Some(mut severity) = severity_of(event.metadata().level()) else {
            return;
        };
        let mut line = Line::default();
        event.record(&mut line);
        if line.fatal {
            severity = HIPDNN_SEV_FATAL;
        }
        line.message.push_str(&line.fields);
        dispatch(severity, event.metadata().target(), &line.message);
    }

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn level_names_and_numbers_parse() {
        assert_eq!(parse_level("INFO"), Some(HIPDNN_SEV_INFO));
        assert_eq!(parse_level(" warn "), Some(HIPDNN_SEV_WARN));
        assert_eq!(parse_level("2"), Some(HIPDNN_SEV_ERROR));
        assert_eq!(parse_level("fatal"), Some(HIPDNN_SEV_FATAL));
        assert_eq!(parse_level("off"), Some(HIPDNN_SEV_OFF));
        assert_eq!(parse_level("debug"), None);
        assert!(is_valid_level(HIPDNN_SEV_OFF));
        assert!(!is_valid_level(hipdnnSeverity_t(5)));
        assert!(!is_valid_level(hipdnnSeverity_t(-1)));
    }

    /// An ASYNC callback that unregisters itself from the log thread, while other
    /// threads log and change registrations: nothing deadlocks, every call returns.
    #[test]
    fn an_async_callback_may_unregister_itself() {
        use std::sync::atomic::AtomicUsize;
        static SEEN: AtomicUsize = AtomicUsize::new(0);
        unsafe extern "C" fn leave(user: *mut c_void, _: hipdnnSeverity_t, _: *const c_char) {
            SEEN.fetch_add(1, Ordering::SeqCst);
            set_user_callback(leave, user, HIPDNN_SEV_OFF, CallbackMode::Async).unwrap();
        }
        let (done, finished) = sync_channel(1);
        std::thread::spawn(move || {
            STATE.level.store(HIPDNN_SEV_INFO.0, Ordering::Relaxed);
            let user = 0x5eed as *mut c_void;
            set_user_callback(leave, user, HIPDNN_SEV_INFO, CallbackMode::Async).unwrap();
            for _ in 0..10 {
                dispatch(HIPDNN_SEV_WARN, "test", "message");
            }
            while SEEN.load(Ordering::SeqCst) == 0 {
                std::thread::yield_now();
            }
            // Registering again and removing from here also returns.
            set_user_callback(leave, user, HIPDNN_SEV_OFF, CallbackMode::Sync).unwrap();
            STATE.level.store(HIPDNN_SEV_OFF.0, Ordering::Relaxed);
            done.send(()).unwrap();
        });
        finished
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("registration changes from the log thread deadlocked");
        assert!(SEEN.load(Ordering::SeqCst) >= 1);
    }

    #[test]
    fn filters_match_severities() {
        assert_eq!(filter_for(HIPDNN_SEV_OFF), LevelFilter::OFF);
        assert_eq!(filter_for(HIPDNN_SEV_FATAL), LevelFilter::ERROR);
        assert_eq!(filter_for(HIPDNN_SEV_INFO), LevelFilter::INFO);
    }
}
