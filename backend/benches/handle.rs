//! Creating a hipDNN handle against opening the same plugin files with `libloading`.
//!
//! Three copies of the example plugin (`good_plugin`, built as an example of this package)
//! sit in a temporary directory under three names: each is a separate `dlopen` and gets
//! its own plugin handle (the later copies' engine is dropped as a duplicate id). In EAGER unload mode every
//! `Handle::new()` loads them again, so one iteration is the whole path: discovery,
//! `dlopen`, the handshake (name, version, API version, type, logging, 12+ symbols,
//! engine ids and names), admission, one plugin handle per plugin, and on drop the plugin
//! handles' destruction and `dlclose`.
//!
//! Peer (`libloading_open_resolve`): the floor for the same files: `dlopen` each with
//! `RTLD_NOW | RTLD_LOCAL`, resolve the same symbols, `dlclose`.
//!
//! Build the plugins first: `cargo build --release -p hipdnn-backend --examples`.

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{Criterion, criterion_group, criterion_main};
use hipdnn_backend::{
    Handle, LoadingMode, UnloadMode, set_engine_plugin_paths, set_plugin_unload_mode,
};
use libloading::os::unix::{Library, RTLD_LOCAL, RTLD_NOW};

mod support;
use support::{SYMBOLS, example_plugin};

const COPIES: [&str; 3] = ["plugin_a", "plugin_b", "plugin_c"];

fn plugin_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hipdnn_handle_bench_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let from = example_plugin();
    for name in COPIES {
        std::fs::copy(&from, dir.join(format!("lib{name}.so"))).unwrap();
    }
    dir
}

#[inline(never)]
fn open_and_resolve(files: &[PathBuf]) -> usize {
    let mut resolved = 0;
    for file in files {
        // SAFETY: the benchmark's own plugins, whose initialisers are the SDK's.
        let library = unsafe { Library::open(Some(file), RTLD_NOW | RTLD_LOCAL) }.expect("opens");
        for symbol in SYMBOLS {
            // SAFETY: only the address is taken; nothing is called.
            if unsafe { library.get::<*mut std::ffi::c_void>(symbol.as_bytes()) }.is_ok() {
                resolved += 1;
            }
        }
        drop(library);
    }
    resolved
}

fn benches(c: &mut Criterion) {
    let dir = plugin_dir();
    let files: Vec<PathBuf> = COPIES
        .iter()
        .map(|name| dir.join(format!("lib{name}.so")))
        .collect();
    set_engine_plugin_paths([dir.clone()], LoadingMode::Absolute).expect("no handle yet");
    set_plugin_unload_mode(UnloadMode::Eager);
    let check = Handle::new();
    assert_eq!(
        check.plugin_handle_count(),
        3,
        "all three plugins serve the handle"
    );
    drop(check);

    let mut group = c.benchmark_group("handle/3_plugins");
    group.bench_function("libloading_open_resolve", |b| {
        b.iter(|| open_and_resolve(black_box(&files)))
    });
    group.bench_function("create_destroy_handle", |b| {
        b.iter(|| Handle::new().plugin_handle_count())
    });
    group.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(handle, benches);
criterion_main!(handle);
