//! Build script of the hip-ep compiler.
//!
//! 1. Selects the static plugins: `HIPDNN_EP_COMPILER_PLUGINS=<id;id…>` (default: none) names
//!    plugin directories found in `plugins/` (in-tree) or in the directories listed in
//!    `HIPDNN_EP_COMPILER_PLUGIN_PATHS` (`;`-separated; each entry is a plugin directory or a
//!    directory of plugin directories). A plugin directory is named after its id and holds
//!    `plugin.rs`. The generated registrar (`$OUT_DIR/static_plugins.rs`) compiles each selected
//!    `plugin.rs` into this crate as a module and calls its entry point once, in list order.
//!    An unknown id fails the build here. Nothing relies on static initialisers.
//! 2. Compiles each selected plugin's `runtime/*.c` to LLVM bitcode
//!    (`$OUT_DIR/plugins/<id>/<stem>.bc`, for `hip_ep_plugin_bitcode!`) and each
//!    `lib/<name>/*.c` to a shared library (`$OUT_DIR/plugins/<id>/lib/lib<name>.so`, for
//!    `hip_ep_plugin_lib_dir!`), with Debian's clang-22.
//! 3. Compiles the in-tree runtime (`runtime/hip_runtime.c`) to bitcode.
//! 4. Compiles the C++ shim over MLIR/LLVM (`shim/shim.cpp`): pass and pipeline registration
//!    by name, link with override-from-source.

#[path = "build_support.rs"]
mod build_support;

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

const LLVM_PREFIX: &str = "/usr/lib/llvm-22";

fn main() {
    let manifest_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let out_dir = PathBuf::from(env::var("OUT_DIR").unwrap());
    println!("cargo:rerun-if-env-changed=HIPDNN_EP_COMPILER_PLUGINS");
    println!("cargo:rerun-if-env-changed=HIPDNN_EP_COMPILER_PLUGIN_PATHS");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=build_support.rs");

    let clang = format!("{LLVM_PREFIX}/bin/clang");
    if !Path::new(&clang).exists() {
        fail(&format!(
            "{clang} not found: the compiler needs Debian's LLVM/MLIR 22 (run scripts/setup-debian.sh)"
        ));
    }

    // In-tree runtime bitcode.
    let runtime_src = manifest_dir.join("runtime/hip_runtime.c");
    println!("cargo:rerun-if-changed={}", runtime_src.display());
    compile_bitcode(&clang, &runtime_src, &out_dir.join("hip_runtime.bc"));

    // C++ shim.
    println!("cargo:rerun-if-changed=shim/shim.cpp");
    cc::Build::new()
        .cpp(true)
        .compiler(format!("{LLVM_PREFIX}/bin/clang++"))
        .file("shim/shim.cpp")
        .include(format!("{LLVM_PREFIX}/include"))
        .flag("-std=c++17")
        .flag("-fno-exceptions")
        .flag("-fno-rtti")
        .flag("-Wno-unused-parameter")
        .warnings(true)
        .compile("hip_ep_shim");
    println!("cargo:rustc-link-lib=stdc++");

    // Plugins.
    let selected =
        build_support::parse_selection(&env::var("HIPDNN_EP_COMPILER_PLUGINS").unwrap_or_default())
            .unwrap_or_else(|e| fail(&e));
    let mut roots = vec![manifest_dir.join("plugins")];
    if let Ok(paths) = env::var("HIPDNN_EP_COMPILER_PLUGIN_PATHS") {
        for p in paths.split(';').map(str::trim).filter(|s| !s.is_empty()) {
            let path = PathBuf::from(p);
            if path.is_relative() {
                fail(&format!(
                    "HIPDNN_EP_COMPILER_PLUGIN_PATHS: '{p}' must be an absolute path (build scripts do not run in your directory; use \"$PWD/{p}\")"
                ));
            }
            if !path.is_dir() {
                fail(&format!(
                    "HIPDNN_EP_COMPILER_PLUGIN_PATHS: '{p}' is not a directory"
                ));
            }
            roots.push(path);
        }
    }
    let available = build_support::discover(&roots).unwrap_or_else(|e| fail(&e));
    let plugins = build_support::resolve(&selected, &available).unwrap_or_else(|e| fail(&e));
    for (id, dir) in &plugins {
        rerun_if_tree_changed(dir);
        build_plugin_runtime(&clang, id, dir, &out_dir.join("plugins").join(id));
    }
    fs::write(
        out_dir.join("static_plugins.rs"),
        build_support::registrar_source(&plugins),
    )
    .unwrap();
    println!(
        "cargo:rustc-env=HIP_EP_SELECTED_PLUGINS={}",
        selected.join(";")
    );
}

fn fail(message: &str) -> ! {
    eprintln!("error: {message}");
    panic!("{message}");
}

fn rerun_if_tree_changed(dir: &Path) {
    println!("cargo:rerun-if-changed={}", dir.display());
    if let Ok(read) = fs::read_dir(dir) {
        for entry in read.filter_map(Result::ok) {
            let path = entry.path();
            if path.is_dir() {
                rerun_if_tree_changed(&path);
            } else {
                println!("cargo:rerun-if-changed={}", path.display());
            }
        }
    }
}

fn c_sources(dir: &Path) -> Vec<PathBuf> {
    let Ok(read) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = read
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "c"))
        .collect();
    files.sort();
    files
}

fn run(cmd: &mut Command) {
    let status = cmd
        .status()
        .unwrap_or_else(|e| fail(&format!("cannot run {cmd:?}: {e}")));
    if !status.success() {
        fail(&format!("{cmd:?} failed with {status}"));
    }
}

fn compile_bitcode(clang: &str, src: &Path, out: &Path) {
    fs::create_dir_all(out.parent().unwrap()).unwrap();
    run(Command::new(clang)
        .args([
            "-O2",
            "-fPIC",
            "-std=c11",
            "-Wall",
            "-Werror",
            "-emit-llvm",
            "-c",
        ])
        .arg(src)
        .arg("-o")
        .arg(out));
}

/// `runtime/*.c` → `<out>/<stem>.bc`; `lib/<name>/*.c` → `<out>/lib/lib<name>.so`.
fn build_plugin_runtime(clang: &str, id: &str, dir: &Path, out: &Path) {
    for src in c_sources(&dir.join("runtime")) {
        let stem = src.file_stem().unwrap().to_string_lossy().into_owned();
        compile_bitcode(clang, &src, &out.join(format!("{stem}.bc")));
    }
    let lib_root = dir.join("lib");
    if let Ok(read) = fs::read_dir(&lib_root) {
        let mut libs: Vec<PathBuf> = read
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect();
        libs.sort();
        for lib in libs {
            let name = lib.file_name().unwrap().to_string_lossy().into_owned();
            let sources = c_sources(&lib);
            if sources.is_empty() {
                fail(&format!(
                    "plugin '{id}': {} has no .c sources",
                    lib.display()
                ));
            }
            let so = out.join("lib").join(format!("lib{name}.so"));
            fs::create_dir_all(so.parent().unwrap()).unwrap();
            run(Command::new(clang)
                .args(["-O2", "-fPIC", "-shared", "-std=c11", "-Wall", "-Werror"])
                .args(&sources)
                .arg("-o")
                .arg(&so));
        }
    }
}
