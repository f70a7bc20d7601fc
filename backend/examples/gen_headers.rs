//! Writes the generated sub-headers of `hipdnn_backend.h` (the enumerations, from
//! `src/capi/enums`) into a directory, or with `--check` fails when the files there
//! differ. `scripts/gen-backend-header.sh` runs it for `backend/include`.
//!
//! ```text
//! cargo run -p hipdnn-backend --example gen_headers -- [--check] DIR
//! ```

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut check = false;
    let mut dir = None;
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--check" => check = true,
            _ if dir.is_none() => dir = Some(PathBuf::from(arg)),
            _ => {
                eprintln!("usage: gen_headers [--check] DIR");
                return ExitCode::FAILURE;
            }
        }
    }
    let Some(dir) = dir else {
        eprintln!("usage: gen_headers [--check] DIR");
        return ExitCode::FAILURE;
    };
    let mut stale = Vec::new();
    for (file, text) in hipdnn_backend::capi::enums::header_files() {
        let path = dir.join(file);
        if check {
            if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
                stale.push(path.display().to_string());
            }
        } else if let Err(e) = std::fs::write(&path, text) {
            eprintln!("cannot write {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
    }
    if stale.is_empty() {
        ExitCode::SUCCESS
    } else {
        for path in stale {
            eprintln!("{path} is stale: run scripts/gen-backend-header.sh");
        }
        ExitCode::FAILURE
    }
}
