//! Building a plugin's shared library from a test.
//!
//! `cargo test` links a package into its tests as an rlib only, never as the `cdylib`
//! hosts load. A test that needs the `.so` builds it with a nested cargo, in a target
//! directory of its own beside the outer one (the outer cargo holds the lock on its own
//! directory while tests run), and takes the library's path from cargo's build messages.
//!
//! ```no_run
//! // In a plugin crate's test (`CARGO_MANIFEST_DIR` is that crate's directory):
//! let libs = hipdnn_conformance::cdylib::build_cdylibs(
//!     env!("CARGO_MANIFEST_DIR"),
//!     &["my-plugin"],
//!     "my-plugin-test",
//! )
//! .unwrap();
//! hipdnn_conformance::main_for_plugin(&libs[0], None, Default::default());
//! ```

use std::path::{Path, PathBuf};
use std::process::Command;

/// The directory nested target directories go in: the `target/` of the running test or
/// binary (`target/<profile>/deps/<test>` or `target/<profile>/<binary>`).
///
/// # Errors
/// When the running executable's path is not inside a cargo target directory.
pub fn outer_target_dir() -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| format!("the running executable's path: {e}"))?;
    let dir = exe
        .parent()
        .ok_or("the running executable has no directory")?;
    let profile_dir = if dir.file_name().is_some_and(|n| n == "deps") {
        dir.parent()
    } else {
        Some(dir)
    };
    profile_dir
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .ok_or_else(|| format!("{} is not inside a cargo target directory", exe.display()))
}

/// Builds the `cdylib` of each package in `packages` (debug profile) with a nested cargo
/// run in `manifest_dir`, into `<target>/<nested_dir>`; returns the libraries' paths in
/// the order of `packages`.
///
/// Tests that build the same packages into the same directory share one build (cargo
/// serializes concurrent builds of one directory).
///
/// # Errors
/// When cargo cannot run or fails (its output is on stderr), or a package has no
/// `cdylib` target.
pub fn build_cdylibs(
    manifest_dir: impl AsRef<Path>,
    packages: &[&str],
    nested_dir: &str,
) -> Result<Vec<PathBuf>, String> {
    let target = outer_target_dir()?.join(nested_dir);
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    command.args([
        "build",
        "--lib",
        "--message-format=json-render-diagnostics",
        "--quiet",
    ]);
    for package in packages {
        command.args(["-p", package]);
    }
    let output = command
        .arg("--target-dir")
        .arg(&target)
        .current_dir(manifest_dir.as_ref())
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "building {} failed ({}); cargo's messages are above",
            packages.join(", "),
            output.status
        ));
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    packages
        .iter()
        .map(|package| {
            cdylib_in_messages(&stdout, package).ok_or_else(|| {
                format!("package {package} built no cdylib (is `crate-type = [\"cdylib\"]` set?)")
            })
        })
        .collect()
}

/// The `cdylib` that cargo's JSON messages report for `package`.
fn cdylib_in_messages(messages: &str, package: &str) -> Option<PathBuf> {
    messages
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|m| m["reason"] == "compiler-artifact")
        .filter(|m| package_name(m["package_id"].as_str().unwrap_or("")) == Some(package))
        .filter(|m| {
            m["target"]["crate_types"]
                .as_array()
                .is_some_and(|kinds| kinds.iter().any(|k| k == "cdylib"))
        })
        .find_map(|m| {
            m["filenames"].as_array()?.iter().find_map(|f| {
                let f = f.as_str()?;
                f.ends_with(std::env::consts::DLL_SUFFIX)
                    .then(|| PathBuf::from(f))
            })
        })
}

/// The package name in a cargo package id: `path+file:///dir#name@0.1.0`,
/// `path+file:///dir/name#0.1.0` or the older `name 0.1.0 (path+file:///dir)`.
fn package_name(id: &str) -> Option<&str> {
    if let Some((url, fragment)) = id.split_once('#') {
        return Some(match fragment.split_once('@') {
            Some((name, _version)) => name,
            None => url.rsplit('/').next()?,
        });
    }
    id.split_whitespace().next()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_names_from_every_id_form() {
        assert_eq!(
            package_name("path+file:///w/plugins/cpu-provider#hipdnn-cpu-provider@0.1.0"),
            Some("hipdnn-cpu-provider")
        );
        assert_eq!(
            package_name("path+file:///w/backend#0.1.0"),
            Some("backend")
        );
        assert_eq!(
            package_name("hipdnn-backend 0.1.0 (path+file:///w/backend)"),
            Some("hipdnn-backend")
        );
    }

    #[test]
    fn the_cdylib_is_found_in_build_messages() {
        let messages = r#"{"reason":"compiler-artifact","package_id":"path+file:///w#dep@1.0.0","target":{"crate_types":["lib"]},"filenames":["/t/libdep.rlib"]}
not json
{"reason":"compiler-artifact","package_id":"path+file:///w/p#my-plugin@0.1.0","target":{"crate_types":["rlib","cdylib"]},"filenames":["/t/libmy_plugin.rlib","/t/libmy_plugin.so"]}
{"reason":"build-finished","success":true}"#;
        assert_eq!(
            cdylib_in_messages(messages, "my-plugin"),
            Some(PathBuf::from("/t/libmy_plugin.so"))
        );
        assert_eq!(cdylib_in_messages(messages, "dep"), None);
        assert_eq!(cdylib_in_messages(messages, "other"), None);
    }
}
