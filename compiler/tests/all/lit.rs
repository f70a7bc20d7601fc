//! LIT-style tests: each `tests/lit/*.mlir` holds `// RUN:` lines (shell, with `%s` the file,
//! `%t` a fresh temporary path prefix, and the tools `hip-mlir-opt`, `hip-compiler`,
//! `FileCheck`, `not`, `llvm-dis` resolved to this build and Debian's LLVM 22), checked with
//! FileCheck directives in the same file.

use std::path::{Path, PathBuf};
use std::process::Command;

fn lit_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/lit")
}

fn run_lines(file: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(file).unwrap();
    let mut lines = Vec::new();
    let mut pending = String::new();
    for line in text.lines() {
        let Some(rest) = line.trim_start().strip_prefix("// RUN:") else {
            continue;
        };
        let rest = rest.trim();
        if let Some(cont) = rest.strip_suffix('\\') {
            pending.push_str(cont);
            pending.push(' ');
        } else {
            pending.push_str(rest);
            lines.push(std::mem::take(&mut pending));
        }
    }
    lines
}

fn substitute(line: &str, file: &Path, tmp: &Path) -> String {
    let llvm = format!("{}/bin", hip_ep_compiler::LLVM_PREFIX);
    let mut out = String::new();
    for word in line.split(' ') {
        let replaced = match word {
            "hip-mlir-opt" => env!("CARGO_BIN_EXE_hip-mlir-opt").to_string(),
            "hip-compiler" => env!("CARGO_BIN_EXE_hip-compiler").to_string(),
            "FileCheck" | "not" | "llvm-dis" => format!("{llvm}/{word}"),
            _ => word
                .replace("%s", &file.display().to_string())
                .replace("%t", &tmp.display().to_string()),
        };
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(&replaced);
    }
    out
}

#[test]
fn lit_files() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(lit_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "mlir"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no LIT files in {}", lit_dir().display());
    let tmpdir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    let mut count = 0;
    for file in &files {
        let lines = run_lines(file);
        assert!(!lines.is_empty(), "{} has no RUN line", file.display());
        let stem = file.file_stem().unwrap().to_string_lossy().into_owned();
        for (i, line) in lines.iter().enumerate() {
            count += 1;
            let tmp = tmpdir.path().join(format!("{stem}.{i}"));
            let command = substitute(line, file, &tmp);
            let output = Command::new("bash")
                .args(["-o", "pipefail", "-c", &command])
                .env_remove("HIPDNN_EP_PIPELINE")
                .env("HIPDNN_LOG_LEVEL", "warn")
                .output()
                .unwrap();
            if !output.status.success() {
                failures.push(format!(
                    "{}: RUN #{}: {line}\n--- stdout\n{}--- stderr\n{}",
                    file.display(),
                    i + 1,
                    String::from_utf8_lossy(&output.stdout),
                    String::from_utf8_lossy(&output.stderr)
                ));
            }
        }
    }
    eprintln!(
        "lit: {count} RUN lines in {} files, {} failed",
        files.len(),
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
