//! Helpers shared by the backend's integration tests: the built test plugins, a
//! subscriber that captures log events, and ([`capi`]) the C API calls the descriptor
//! tests make.

#![allow(dead_code, reason = "each test binary uses a different subset")]

pub mod capi;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
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

/// Collects `(level, message)` of every event on the threads where it is the default.
#[derive(Clone, Default)]
pub struct Capture(Arc<Mutex<Vec<(Level, String)>>>);

impl Capture {
    /// Runs `f` with this subscriber as the thread's default.
    pub fn during<T>(&self, f: impl FnOnce() -> T) -> T {
        tracing::subscriber::with_default(self.clone(), f)
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
        let mut text = String::new();
        event.record(&mut Message(&mut text));
        self.0
            .lock()
            .expect("not poisoned")
            .push((*event.metadata().level(), text));
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}
