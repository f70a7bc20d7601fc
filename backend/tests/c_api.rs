//! The C API from C: `tests/c/capi_smoke.c` is compiled against the committed
//! `include/hipdnn_backend.h` (and the plugin SDK's headers), linked against the built
//! `libhipdnn_backend.so`, and run with `HIPDNN_PLUGIN_DIR` holding the example plugin,
//! under valgrind (definite leaks and memory errors fail the test). `tests/c/upstream_names.c`
//! (hipDNN's header names, numbers and signatures) is compiled as C99 and as C++17, and
//! the C build linked and run.
//!
//! `cargo test` builds the library only as an rlib, so the test builds the cdylib itself
//! with a nested cargo, in a target directory of its own (the outer cargo holds the lock
//! on its own). Needs a C compiler (`cc` or `CC`) and valgrind.

use std::path::{Path, PathBuf};
use std::process::Command;

mod support;

fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    exe.parent()
        .and_then(Path::parent)
        .expect("target/<profile>")
        .to_path_buf()
}

fn run(command: &mut Command) -> String {
    let output = command.output().unwrap_or_else(|e| {
        panic!("cannot run {command:?}: {e} (scripts/setup-debian.sh installs cc and valgrind)")
    });
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{command:?} failed:\n{text}");
    text
}

#[test]
fn c_program_drives_the_backend_without_leaks() {
    run_c_program("capi_smoke.c");
}

#[test]
fn c_program_runs_a_graph_through_descriptors_without_leaks() {
    run_c_program("descriptors.c");
}

/// A program written against hipDNN's `hipdnn_backend.h` compiles against ours unchanged,
/// as C99 and as C++17, warnings as errors: every type, enumerator (with hipDNN's value)
/// and sub-header name hipDNN declares, and every exported function with hipDNN's
/// signature; the C build links against the library and runs.
#[test]
fn hipdnn_header_names_compile_as_c99_and_cpp17() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let source = manifest.join("tests/c/upstream_names.c");
    let dir = std::env::temp_dir().join(format!("hipdnn_upstream_names_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let includes = |command: &mut Command| {
        command
            .arg("-I")
            .arg(manifest.join("include"))
            .arg("-I")
            .arg(manifest.join("../plugin-sdk/include"));
    };
    let warnings = ["-Wall", "-Wextra", "-Werror", "-pedantic"];

    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".to_owned());
    let mut command = Command::new(cxx);
    command.args(["-x", "c++", "-std=c++17"]).args(warnings);
    includes(&mut command);
    run(command
        .arg("-c")
        .arg(&source)
        .arg("-o")
        .arg(dir.join("upstream_names_cpp.o")));

    let backend = support::build_backend_cdylib();
    let backend_dir = backend.parent().expect("a directory").to_path_buf();
    let program = dir.join("upstream_names");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_owned());
    let mut command = Command::new(cc);
    command.arg("-std=c99").args(warnings);
    includes(&mut command);
    run(command
        .arg(&source)
        .arg("-o")
        .arg(&program)
        .arg(&backend)
        .arg(format!("-Wl,-rpath,{}", backend_dir.display())));
    let printed = run(&mut Command::new(&program));
    assert!(printed.contains("OK"), "{printed}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Compiles `tests/c/<source>` against the header and the built library and runs it
/// under valgrind with the example plugin in `HIPDNN_PLUGIN_DIR`.
fn run_c_program(source: &str) {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let profile = profile_dir();
    let backend = support::build_backend_cdylib();
    let backend_dir = backend.parent().expect("a directory").to_path_buf();
    let plugin = profile.join("examples/libgood_plugin.so");
    assert!(
        plugin.exists(),
        "{} missing: run `cargo build -p hipdnn-backend --examples`",
        plugin.display()
    );

    let stem = source.trim_end_matches(".c");
    let dir = std::env::temp_dir().join(format!("hipdnn_{stem}_{}", std::process::id()));
    let plugins = dir.join("plugins");
    std::fs::create_dir_all(&plugins).unwrap();
    std::fs::copy(&plugin, plugins.join("libminimal_plugin.so")).unwrap();
    let program = dir.join(stem);
    let compiler = std::env::var("CC").unwrap_or_else(|_| "cc".to_owned());
    run(Command::new(compiler)
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic", "-g"])
        .arg("-I")
        .arg(manifest.join("include"))
        .arg("-I")
        .arg(manifest.join("../plugin-sdk/include"))
        .arg(manifest.join("tests/c").join(source))
        .arg("-o")
        .arg(&program)
        .arg(&backend)
        .arg(format!("-Wl,-rpath,{}", backend_dir.display())));
    let printed = run(Command::new("valgrind")
        .args([
            "--quiet",
            "--leak-check=full",
            "--errors-for-leak-kinds=definite",
            "--error-exitcode=3",
        ])
        .arg(&program)
        .env("HIPDNN_PLUGIN_DIR", &plugins));
    assert!(printed.contains("OK"), "{printed}");
    let _ = std::fs::remove_dir_all(&dir);
}
