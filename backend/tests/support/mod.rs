//! Helpers shared by the backend's integration tests: the built test plugins, a
//! subscriber that captures log events, and ([`capi`]) the C API calls the descriptor
//! tests make.

#![allow(dead_code, reason = "each test binary uses a different subset")]

pub mod capi;

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use tracing::field::{Field, Visit};
use tracing::level_filters::LevelFilter;
use tracing::span::{Attributes, Id, Record};
use tracing::subscriber::Interest;
use tracing::{Event, Level, Metadata, Subscriber};

/// `target/<profile>/examples/lib<name>.so`, next to this test's `target/<profile>/deps/`.
pub fn example_library(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("the test binary lives in target/<profile>/deps/");
    let path = profile_dir.join("examples").join(format!("lib{name}.so"));
    assert!(
        path.is_file(),
        "{} is missing: run `cargo build -p hipdnn-backend --examples` \
         (plain `cargo test` builds it; `cargo test --test ...` does not)",
        path.display()
    );
    path
}

/// Builds `libhipdnn_backend.so` (the cdylib: `cargo test` builds the crate as an rlib
/// only) with a nested cargo, in `target/capi-test` (the outer cargo holds the lock on
/// its own target directory); returns its path.
pub fn build_backend_cdylib() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let target = exe
        .ancestors()
        .nth(3)
        .expect("target/<profile>/deps/<test>");
    let nested = target.join("capi-test");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let status = std::process::Command::new(cargo)
        .args([
            "build",
            "--quiet",
            "-p",
            "hipdnn-backend",
            "--lib",
            "--target-dir",
        ])
        .arg(&nested)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .expect("run cargo");
    assert!(status.success(), "building libhipdnn_backend.so failed");
    let library = nested.join("debug/libhipdnn_backend.so");
    assert!(library.exists(), "{} was not built", library.display());
    library
}

/// Copies the example `name` into `dir` as `lib<file>.so`; returns the canonical path.
pub fn install_as(dir: &Path, name: &str, file: &str) -> PathBuf {
    let to = dir.join(format!("lib{file}.so"));
    std::fs::copy(example_library(name), &to).expect("copy a test plugin");
    to.canonicalize().expect("canonical path")
}

/// Copies the named examples into `dir` under their own names.
pub fn install(dir: &Path, names: &[&str]) {
    for name in names {
        install_as(dir, name, name);
    }
}

/// Collects `(level, message)` of every event on the threads where it is current.
///
/// Events reach it through one process-wide subscriber ([`Router`]), installed the first
/// time any capture runs and never replaced, which hands each event to the capture current
/// on the emitting thread. A scoped default (`tracing::subscriber::with_default`) per test
/// alone loses events: tracing caches each callsite's interest across all live
/// dispatchers, and with tests creating and dropping dispatchers on parallel threads a
/// callsite first reached while no capture was alive can stay disabled. Where a test of
/// the same binary installed the C API's log output first (it becomes the global default
/// when `hipdnnCreate` runs), a capture falls back to the scoped default.
#[derive(Clone, Default)]
pub struct Capture(Arc<Mutex<Vec<(Level, String)>>>);

thread_local! {
    static CURRENT: RefCell<Option<Capture>> = const { RefCell::new(None) };
}

impl Capture {
    /// Runs `f` with this capture receiving the thread's events (the previous one, if
    /// any, is current again afterwards, also when `f` panics).
    pub fn during<T>(&self, f: impl FnOnce() -> T) -> T {
        static ROUTED: OnceLock<bool> = OnceLock::new();
        let routed =
            *ROUTED.get_or_init(|| tracing::subscriber::set_global_default(Router).is_ok());
        if !routed {
            return tracing::subscriber::with_default(self.clone(), f);
        }
        struct Restore(Option<Capture>);
        impl Drop for Restore {
            fn drop(&mut self) {
                let previous = self.0.take();
                CURRENT.with(|c| *c.borrow_mut() = previous);
            }
        }
        let _restore = Restore(CURRENT.with(|c| c.borrow_mut().replace(self.clone())));
        f()
    }

    fn push(&self, event: &Event<'_>) {
        let mut text = String::new();
        event.record(&mut Message(&mut text));
        self.0
            .lock()
            .expect("not poisoned")
            .push((*event.metadata().level(), text));
    }

    pub fn take(&self) -> Vec<(Level, String)> {
        std::mem::take(&mut *self.0.lock().expect("not poisoned"))
    }

    /// The captured messages so far, without their levels.
    pub fn messages(&self) -> Vec<String> {
        self.0
            .lock()
            .expect("not poisoned")
            .iter()
            .map(|(_, m)| m.clone())
            .collect()
    }
}

struct Message<'a>(&'a mut String);

impl Visit for Message<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.0.push_str(&format!("{value:?}"));
        }
    }
}

/// The scoped default where [`Router`] could not be installed.
impl Subscriber for Capture {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        self.push(event);
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

/// The process-wide subscriber: every callsite always enabled, each event handed to the
/// emitting thread's current [`Capture`] (dropped where there is none).
struct Router;

impl Subscriber for Router {
    fn register_callsite(&self, _: &'static Metadata<'static>) -> Interest {
        Interest::always()
    }
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn max_level_hint(&self) -> Option<LevelFilter> {
        Some(LevelFilter::TRACE)
    }
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        if let Some(capture) = CURRENT.with(|c| c.borrow().clone()) {
            capture.push(event);
        }
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}
