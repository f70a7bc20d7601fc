//! Project tasks, run as `cargo xtask <task>` (alias in `.cargo/config.toml`).
//!
//! * `install --prefix DIR [--debug]`: builds the backend, every engine plugin of the
//!   workspace (packages under `plugins/` with a `cdylib` target) and the `hipdnn`
//!   command (when the workspace has it), and lays them out as an installed hipDNN:
//!
//!   ```text
//!   DIR/lib/libhipdnn_backend.so
//!   DIR/lib/hipdnn_plugins/engines/lib<plugin>.so
//!   DIR/include/hipdnn_backend.h (and the Hipdnn*.h it includes)
//!   DIR/include/hipdnn_plugin_sdk/*.h
//!   DIR/bin/hipdnn
//!   ```
//!
//! * `install-plugin --prefix DIR FILE...`: copies already built engine plugins into
//!   `DIR/lib/hipdnn_plugins/engines/` (the way to add a plugin of your own to an
//!   installed layout).
//! * `check-install --prefix DIR`: compiles the C examples (`examples/c/list_engines.c`,
//!   `examples/c/conv_fprop.c`, and the descriptor-API `conv_bias_relu.c`,
//!   `batchnorm_inference.c`, `matmul.c`) against `DIR/include` and `DIR/lib` and runs them with no
//!   hipDNN environment variable set: they must find the installed plugins' engines
//!   through the default plugin directory, and the convolution must match its reference.
//! * `demo [--prefix DIR]`: the main job. Installs into `DIR` (default
//!   `target/hipdnn-demo`), runs the installed C examples, lists the engines with the
//!   installed `hipdnn`, and runs the ResNet-50 bottleneck block
//!   (`examples/graphs/resnet_bottleneck_nhwc.json`) through the CPU provider with
//!   `--check` against the CPU reference.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// Where engine plugins live, relative to an install prefix (the directory
/// `hipdnn_plugins/engines` next to `libhipdnn_backend.so`).
const ENGINE_PLUGIN_DIR: &str = "lib/hipdnn_plugins/engines";

/// The environment variables that would change which backend is loaded, where it finds
/// plugins or what it logs; `check-install` runs with none of them (`cargo run` sets
/// `LD_LIBRARY_PATH`, which the loader searches before a `RUNPATH`).
const HIPDNN_ENV: &[&str] = &[
    "HIPDNN_PLUGIN_DIR",
    "HIPDNN_LOG_LEVEL",
    "HIPDNN_LOG_FILE",
    "LD_LIBRARY_PATH",
];

type Result<T> = std::result::Result<T, String>;

fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("xtask: {message}");
            ExitCode::FAILURE
        }
    }
}

const USAGE: &str = "usage:
  cargo xtask install --prefix DIR [--debug]
  cargo xtask install-plugin --prefix DIR FILE...
  cargo xtask check-install --prefix DIR
  cargo xtask demo [--prefix DIR]";

/// The C examples `check-install` builds and runs against an installed layout.
const C_EXAMPLES: &[&str] = &[
    "list_engines",
    "conv_fprop",
    "conv_bias_relu",
    "batchnorm_inference",
    "matmul",
];

/// The graph the demo runs.
const DEMO_GRAPH: &str = "examples/graphs/resnet_bottleneck_nhwc.json";

fn run(args: &[OsString]) -> Result<()> {
    let Some((task, rest)) = args.split_first() else {
        return Err(USAGE.to_owned());
    };
    let options = Options::parse(rest)?;
    match task.to_str() {
        Some("install") => {
            options.no_files()?;
            install(&options.prefix()?, options.debug)
        }
        Some("install-plugin") => {
            if options.files.is_empty() {
                return Err(format!("install-plugin needs plugin files\n{USAGE}"));
            }
            let prefix = options.prefix()?;
            options
                .files
                .iter()
                .try_for_each(|f| install_plugin(&prefix, f))
        }
        Some("check-install") => {
            options.no_files()?;
            check_install(&options.prefix()?)
        }
        Some("demo") => {
            options.no_files()?;
            let prefix = match &options.prefix {
                Some(_) => options.prefix()?,
                None => workspace_root().join("target/hipdnn-demo"),
            };
            demo(&prefix, options.debug)
        }
        _ => Err(format!("unknown task {task:?}\n{USAGE}")),
    }
}

#[derive(Debug, Default)]
struct Options {
    prefix: Option<PathBuf>,
    debug: bool,
    files: Vec<PathBuf>,
}

impl Options {
    fn parse(args: &[OsString]) -> Result<Self> {
        let mut options = Self::default();
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            match arg.to_str() {
                Some("--prefix") => {
                    let value = args.next().ok_or("--prefix needs a directory")?;
                    options.prefix = Some(PathBuf::from(value));
                }
                Some(text) if text.starts_with("--prefix=") => {
                    options.prefix = Some(PathBuf::from(&text["--prefix=".len()..]));
                }
                Some("--debug") => options.debug = true,
                Some(text) if text.starts_with('-') => {
                    return Err(format!("unknown option {text}\n{USAGE}"));
                }
                _ => options.files.push(PathBuf::from(arg)),
            }
        }
        Ok(options)
    }

    /// The prefix, made absolute (the tasks change directories).
    fn prefix(&self) -> Result<PathBuf> {
        let prefix = self
            .prefix
            .as_ref()
            .ok_or(format!("--prefix DIR is required\n{USAGE}"))?;
        std::path::absolute(prefix).map_err(|e| format!("{}: {e}", prefix.display()))
    }

    fn no_files(&self) -> Result<()> {
        match self.files.first() {
            Some(extra) => Err(format!("unexpected argument {}\n{USAGE}", extra.display())),
            None => Ok(()),
        }
    }
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace root")
        .to_path_buf()
}

fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}

fn status(command: &mut Command) -> Result<()> {
    let status = command
        .status()
        .map_err(|e| format!("cannot run {command:?}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{command:?} failed ({status})"))
    }
}

/// A workspace package the install builds.
#[derive(Debug)]
struct Package {
    name: String,
    /// The cdylib's or binary's target name.
    target: String,
}

/// What `cargo metadata` says the workspace ships: engine plugins (packages directly
/// under `plugins/` with a cdylib target) and the `hipdnn` binary, if some package has it.
fn shipped_packages(root: &Path) -> Result<(Vec<Package>, Option<Package>)> {
    let output = cargo()
        .args(["metadata", "--format-version", "1", "--no-deps", "--locked"])
        .current_dir(root)
        .output()
        .map_err(|e| format!("cannot run cargo metadata: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout)
        .map_err(|e| format!("cannot read cargo metadata: {e}"))?;
    let plugins_dir = root.join("plugins");
    let mut plugins = Vec::new();
    let mut cli = None;
    for package in metadata["packages"].as_array().into_iter().flatten() {
        let name = package["name"].as_str().unwrap_or_default().to_owned();
        let manifest = Path::new(package["manifest_path"].as_str().unwrap_or_default());
        for target in package["targets"].as_array().into_iter().flatten() {
            let kinds: Vec<&str> = target["kind"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|k| k.as_str())
                .collect();
            let target_name = target["name"].as_str().unwrap_or_default().to_owned();
            // Engine plugins are the packages directly under `plugins/`; a cdylib
            // deeper down (a provider's test library) is never installed.
            let is_plugin = manifest.parent().and_then(Path::parent) == Some(plugins_dir.as_path());
            if kinds.contains(&"cdylib") && is_plugin {
                plugins.push(Package {
                    name: name.clone(),
                    target: target_name,
                });
            } else if kinds.contains(&"bin") && target_name == "hipdnn" {
                cli = Some(Package {
                    name: name.clone(),
                    target: target_name,
                });
            }
        }
    }
    plugins.sort_by(|a, b| a.name.cmp(&b.name));
    Ok((plugins, cli))
}

fn copy(from: &Path, to: &Path) -> Result<()> {
    if let Some(dir) = to.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    // Replace rather than overwrite in place: a process may have the old file mapped.
    let _ = std::fs::remove_file(to);
    std::fs::copy(from, to)
        .map(drop)
        .map_err(|e| format!("cannot copy {} to {}: {e}", from.display(), to.display()))
}

fn install(prefix: &Path, debug: bool) -> Result<()> {
    let root = workspace_root();
    let (plugins, cli) = shipped_packages(&root)?;
    let profile = if debug { "debug" } else { "release" };

    let mut build = cargo();
    build.arg("build").arg("--locked").current_dir(&root);
    if !debug {
        build.arg("--release");
    }
    build.args(["-p", "hipdnn-backend", "--lib"]);
    for plugin in &plugins {
        build.args(["-p", &plugin.name]);
    }
    if let Some(cli) = &cli {
        build.args(["-p", &cli.name, "--bin", &cli.target]);
    }
    status(&mut build)?;

    let target_dir = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| root.join("target"), PathBuf::from)
        .join(profile);
    let mut installed = Vec::new();
    let mut put = |from: PathBuf, to: PathBuf| -> Result<()> {
        copy(&from, &to)?;
        installed.push(to);
        Ok(())
    };
    put(
        target_dir.join("libhipdnn_backend.so"),
        prefix.join("lib/libhipdnn_backend.so"),
    )?;
    for plugin in &plugins {
        let file = format!("lib{}.so", plugin.target);
        put(
            target_dir.join(&file),
            prefix.join(ENGINE_PLUGIN_DIR).join(&file),
        )?;
    }
    if let Some(cli) = &cli {
        put(
            target_dir.join(&cli.target),
            prefix.join("bin").join(&cli.target),
        )?;
    }
    // hipdnn_backend.h and the sub-headers it includes (hipDNN's enumerations).
    for header in c_headers(&root.join("backend/include"))? {
        let name = header.file_name().expect("a file").to_owned();
        put(header, prefix.join("include").join(name))?;
    }
    for header in c_headers(&root.join("plugin-sdk/include/hipdnn_plugin_sdk"))? {
        let name = header.file_name().expect("a file").to_owned();
        put(header, prefix.join("include/hipdnn_plugin_sdk").join(name))?;
    }
    for path in &installed {
        println!("installed {}", path.display());
    }
    Ok(())
}

fn install_plugin(prefix: &Path, file: &Path) -> Result<()> {
    let name = file
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| format!("{} is not a file name", file.display()))?;
    if !(name.starts_with("lib") && name.ends_with(".so")) {
        return Err(format!(
            "{} is not named lib<name>.so: the backend loads only .so files",
            file.display()
        ));
    }
    let to = prefix.join(ENGINE_PLUGIN_DIR).join(name);
    copy(file, &to)?;
    println!("installed {}", to.display());
    Ok(())
}

/// A command with none of [`HIPDNN_ENV`] set.
fn clean_command(program: impl AsRef<std::ffi::OsStr>) -> Command {
    let mut command = Command::new(program);
    for var in HIPDNN_ENV {
        command.env_remove(var);
    }
    command
}

fn check_install(prefix: &Path) -> Result<()> {
    let root = workspace_root();
    let lib = prefix.join("lib");
    let include = prefix.join("include");
    let work = std::env::temp_dir().join(format!("hipdnn-check-install-{}", std::process::id()));
    std::fs::create_dir_all(&work).map_err(|e| format!("{}: {e}", work.display()))?;
    let compiler = std::env::var_os("CC").unwrap_or_else(|| "cc".into());
    let result = C_EXAMPLES.iter().try_for_each(|example| {
        let program = work.join(example);
        println!("== examples/c/{example}.c against {}", prefix.display());
        status(
            Command::new(&compiler)
                .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic"])
                .arg(root.join(format!("examples/c/{example}.c")))
                .arg("-I")
                .arg(&include)
                .arg("-L")
                .arg(&lib)
                .arg(format!("-Wl,-rpath,{}", lib.display()))
                .args(["-lhipdnn_backend", "-lm", "-o"])
                .arg(&program),
        )?;
        status(&mut clean_command(&program))
    });
    let _ = std::fs::remove_dir_all(&work);
    result
}

fn demo(prefix: &Path, debug: bool) -> Result<()> {
    let root = workspace_root();
    println!("== cargo xtask install --prefix {}", prefix.display());
    install(prefix, debug)?;
    check_install(prefix)?;
    let hipdnn = prefix.join("bin/hipdnn");
    println!("== {} engines", hipdnn.display());
    status(clean_command(&hipdnn).arg("engines"))?;
    println!("== {} run {DEMO_GRAPH} --check", hipdnn.display());
    status(
        clean_command(&hipdnn)
            .args(["run", DEMO_GRAPH, "--check", "--iters", "5"])
            .current_dir(&root),
    )?;
    println!(
        "demo: the ResNet-50 bottleneck block ran through the installed backend and CPU provider and matched the reference"
    );
    Ok(())
}

/// The `.h` files of `dir`, sorted.
fn c_headers(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut headers: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|e| e == "h"))
        .collect();
    headers.sort();
    Ok(headers)
}
