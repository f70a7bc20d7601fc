//! The first handle of a process, when the plugins are not loaded yet: `Handle::new()`
//! against `libloading` opening the same files and resolving the same symbols.
//!
//! Plugins are opened with `RTLD_NODELETE` (see `hipdnn_backend::plugin`), so once a file
//! is loaded, loading it again only finds it mapped. Each round therefore uses fresh
//! copies of the example plugin (new files, loaded for real: `mmap`, relocation,
//! initializers), three for the backend and three for the peer, and times one load of
//! each. Criterion cannot bound its iteration count, and every loaded copy stays mapped,
//! so this is a plain program: `ROUNDS` rounds, medians, the ratio.
//!
//! `cargo build --release -p hipdnn-backend --examples && cargo bench -p hipdnn-backend --bench handle_cold`

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use hipdnn_backend::{Handle, LoadingMode, set_engine_plugin_paths};
use libloading::os::unix::{Library, RTLD_LOCAL, RTLD_NOW};

mod support;
use support::{SYMBOLS, example_plugin};

const ROUNDS: usize = 60;
const PLUGINS: usize = 3;

/// `PLUGINS` fresh copies in a new directory.
fn fresh_copies(from: &Path, root: &Path, round: usize, side: &str) -> (PathBuf, Vec<PathBuf>) {
    let dir = root.join(format!("{side}{round}"));
    std::fs::create_dir_all(&dir).unwrap();
    let files = (0..PLUGINS)
        .map(|i| {
            let to = dir.join(format!("libplugin_{i}.so"));
            std::fs::copy(from, &to).unwrap();
            to
        })
        .collect();
    (dir, files)
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument would not apply here.
    let from = example_plugin();
    let root = tempfile::tempdir().unwrap();
    let mut backend = Vec::with_capacity(ROUNDS);
    let mut peer = Vec::with_capacity(ROUNDS);
    for round in 0..ROUNDS {
        let (dir, _) = fresh_copies(&from, root.path(), round, "backend");
        set_engine_plugin_paths([&dir], LoadingMode::Absolute).unwrap();
        let start = Instant::now();
        let handle = Handle::new();
        backend.push(start.elapsed());
        assert_eq!(handle.plugin_handle_count(), PLUGINS);
        drop(handle);

        let (_, files) = fresh_copies(&from, root.path(), round, "peer");
        let start = Instant::now();
        let mut resolved = 0;
        let libraries: Vec<Library> = files
            .iter()
            .map(|file| {
                // SAFETY: the benchmark's own plugin, whose initializers are the SDK's.
                let library = unsafe { Library::open(Some(file), RTLD_NOW | RTLD_LOCAL) }.unwrap();
                for symbol in SYMBOLS {
                    // SAFETY: only the address is taken; nothing is called.
                    if unsafe { library.get::<*mut std::ffi::c_void>(symbol.as_bytes()) }.is_ok() {
                        resolved += 1;
                    }
                }
                library
            })
            .collect();
        peer.push(start.elapsed());
        assert_eq!(resolved, PLUGINS * SYMBOLS.len());
        // Kept open: unloading would not be what the backend does either.
        std::mem::forget(libraries);
    }
    let (ours, theirs) = (median(backend), median(peer));
    println!("first handle with {PLUGINS} fresh plugins ({ROUNDS} rounds, medians):");
    println!(
        "  libloading_open_resolve (peer)  {:>10.1} us",
        theirs.as_secs_f64() * 1e6
    );
    println!(
        "  create_handle                   {:>10.1} us",
        ours.as_secs_f64() * 1e6
    );
    println!(
        "  ratio                           {:>10.2}x",
        ours.as_secs_f64() / theirs.as_secs_f64()
    );
}
