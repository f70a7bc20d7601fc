//! The committed C headers against the Rust exports: `tests/c/header_check.c` is
//! compiled as C99 and as C++17 against `include/`, linked against the example plugin
//! built by this package, and run. The compiler checks every prototype against the
//! headers' function-pointer types; the linker checks each declared symbol exists; the
//! program checks the base functions and the two-call engine ids at run time.
//!
//! Needs a C and a C++ compiler (`cc`/`c++`, or `CC`/`CXX`).

use std::path::{Path, PathBuf};
use std::process::Command;

fn examples_dir() -> PathBuf {
    // target/<profile>/deps/<this test> -> target/<profile>/examples
    let exe = std::env::current_exe().expect("test binary path");
    exe.parent()
        .and_then(Path::parent)
        .expect("target/<profile>")
        .join("examples")
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

fn check_with(compiler_var: &str, default: &str, language: &[&str]) {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let examples = examples_dir();
    let plugin = examples.join("libminimal_plugin.so");
    assert!(
        plugin.exists(),
        "{} missing: run `cargo build -p hipdnn-plugin-sdk --examples`",
        plugin.display()
    );
    let out = std::env::temp_dir().join(format!(
        "hipdnn_header_check_{}_{}",
        default,
        std::process::id()
    ));
    let compiler = std::env::var(compiler_var).unwrap_or_else(|_| default.to_owned());
    run(Command::new(&compiler)
        .args(language)
        .args(["-Wall", "-Wextra", "-Werror", "-pedantic"])
        // The example plugin does not opt into plan serialization, and the SDK does not
        // export the optional override-execute entry point.
        .args([
            "-DHEADER_CHECK_NO_SERIALIZATION",
            "-DHEADER_CHECK_NO_OVERRIDES",
        ])
        .arg("-I")
        .arg(manifest.join("include"))
        .arg(manifest.join("tests/c/header_check.c"))
        .arg("-o")
        .arg(&out)
        // `-x c++` applies to every later input: reset it so the plugin is linked, not compiled.
        .args(["-x", "none"])
        .arg(&plugin)
        .arg(format!("-Wl,-rpath,{}", examples.display())));
    let printed = run(&mut Command::new(&out));
    let _ = std::fs::remove_file(&out);
    assert!(printed.contains("example_relu_plugin"), "{printed}");
}

#[test]
fn c99_program_links_and_runs_against_the_example_plugin() {
    check_with("CC", "cc", &["-std=c99"]);
}

#[test]
fn cxx17_program_links_and_runs_against_the_example_plugin() {
    check_with("CXX", "c++", &["-std=c++17", "-x", "c++"]);
}
