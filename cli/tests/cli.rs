//! The `hipdnn` binary end to end, with the plugin SDK's example plugin
//! (`libminimal_plugin.so`: `EXAMPLE_RELU_ENGINE`, single-node ReLU graphs over `f32`
//! host buffers, knob `example.relu.negative_slope` in [0, 1]) as the only plugin, and
//! for some tests this crate's probe plugin beside it (`libprobe_plugin.so`:
//! `PROBE_ADD_ENGINE`, an engine named outside the registry that adds packed `f32` host
//! tensors, declares host memory, has an int knob with a range and logs at info level),
//! or the conformance runner's stand-in device engine (`STAND_IN_DEVICE_RELU`, declaring
//! device memory: without a GPU, `run` on it fails with the reason).
//!
//! Exit codes under test: 0 success, 1 failed check, 2 usage or input error (a knob
//! out of range is an input error: the backend refuses the setting before any plugin
//! runs).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use hipdnn_flatbuffers_sdk::model::Graph;
use npyz::WriterBuilder;

const RELU_GRAPH: &str = r#"{
  "name": "relu",
  "compute_data_type": "FLOAT",
  "intermediate_data_type": "FLOAT",
  "io_data_type": "FLOAT",
  "tensors": [
    { "uid": 1, "name": "x", "data_type": "FLOAT", "strides": [12, 4, 1], "dims": [2, 3, 4] },
    { "uid": 2, "name": "y", "data_type": "FLOAT", "strides": [12, 4, 1], "dims": [2, 3, 4] }
  ],
  "nodes": [
    {
      "name": "relu", "compute_data_type": "FLOAT",
      "attributes_type": "PointwiseAttributes",
      "attributes": { "operation": "RELU_FWD", "in_0_tensor_uid": 1, "out_0_tensor_uid": 2 }
    }
  ]
}
"#;

/// [`RELU_GRAPH`] in upstream hipDNN's JSON dialect, written by hand as upstream's
/// nlohmann::json writer lays it out (nodes with `type`, uids under `inputs` and
/// `outputs`, `null` for absent optionals, lower-case data types and modes).
const RELU_GRAPH_UPSTREAM: &str = r#"{
  "name": "relu",
  "compute_data_type": "float",
  "intermediate_data_type": "float",
  "io_data_type": "float",
  "is_override_shape_enabled": false,
  "tensors": [
    { "uid": 1, "name": "x", "data_type": "float", "dims": [2, 3, 4], "strides": [12, 4, 1],
      "virtual": false, "alignment": 16, "is_runtime_pass_by_value": false },
    { "uid": 2, "name": "y", "data_type": "float", "dims": [2, 3, 4], "strides": [12, 4, 1],
      "virtual": false, "alignment": 16, "is_runtime_pass_by_value": false }
  ],
  "nodes": [
    {
      "name": "relu", "type": "PointwiseAttributes", "compute_data_type": "float",
      "inputs": {
        "operation": "relu_fwd", "relu_lower_clip": null, "relu_upper_clip": null,
        "relu_lower_clip_slope": null, "axis_tensor_uid": null, "in_0_tensor_uid": 1,
        "in_1_tensor_uid": null, "in_2_tensor_uid": null, "swish_beta": null,
        "elu_alpha": null, "softplus_beta": null
      },
      "outputs": { "out_0_tensor_uid": 2 }
    }
  ]
}
"#;

/// `c = a + b` over packed `FLOAT` tensors: what the probe plugin runs.
const ADD_GRAPH: &str = r#"{
  "name": "add",
  "compute_data_type": "FLOAT",
  "intermediate_data_type": "FLOAT",
  "io_data_type": "FLOAT",
  "tensors": [
    { "uid": 1, "name": "a", "data_type": "FLOAT", "strides": [4, 1], "dims": [3, 4] },
    { "uid": 2, "name": "b", "data_type": "FLOAT", "strides": [4, 1], "dims": [3, 4] },
    { "uid": 3, "name": "c", "data_type": "FLOAT", "strides": [4, 1], "dims": [3, 4] }
  ],
  "nodes": [
    {
      "name": "sum", "compute_data_type": "FLOAT",
      "attributes_type": "PointwiseAttributes",
      "attributes": {
        "operation": "ADD", "in_0_tensor_uid": 1, "in_1_tensor_uid": 2, "out_0_tensor_uid": 3
      }
    }
  ]
}
"#;

/// `target/<profile>`, from this test binary's `target/<profile>/deps/`.
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    exe.parent()
        .and_then(Path::parent)
        .expect("the test binary lives in target/<profile>/deps/")
        .to_path_buf()
}

/// A test plugin, `target/<profile>/examples/lib<example>.so` of `package`: built by
/// `cargo test` of that package (or of the whole workspace) next to this test; built
/// here (in a target directory of its own, since the outer cargo may hold the lock on
/// this one) when missing.
fn test_plugin(package: &str, example: &str) -> PathBuf {
    let built = profile_dir().join(format!("examples/lib{example}.so"));
    if built.is_file() {
        return built;
    }
    let target = profile_dir()
        .parent()
        .expect("target/")
        .join("cli-test-plugins");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let status = Command::new(cargo)
        .args([
            "build",
            "--quiet",
            "-p",
            package,
            "--example",
            example,
            "--target-dir",
        ])
        .arg(&target)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .expect("run cargo");
    assert!(status.success(), "building the {example} plugin failed");
    let path = target.join(format!("debug/examples/lib{example}.so"));
    assert!(path.is_file(), "{} was not built", path.display());
    path
}

/// The plugin SDK's example plugin.
fn example_plugin() -> &'static Path {
    static PLUGIN: OnceLock<PathBuf> = OnceLock::new();
    PLUGIN.get_or_init(|| test_plugin("hipdnn-plugin-sdk", "minimal_plugin"))
}

/// The conformance runner's stand-in device engine (`STAND_IN_DEVICE_RELU`: plain
/// `f32` ReLU, declares device memory, reads its pointers on the host).
fn stand_in_device_plugin() -> &'static Path {
    static PLUGIN: OnceLock<PathBuf> = OnceLock::new();
    PLUGIN.get_or_init(|| test_plugin("hipdnn-conformance", "stand_in_device_plugin"))
}

/// This crate's probe plugin (`examples/probe_plugin.rs`).
fn probe_plugin() -> &'static Path {
    static PLUGIN: OnceLock<PathBuf> = OnceLock::new();
    PLUGIN.get_or_init(|| test_plugin("hipdnn-cli", "probe_plugin"))
}

/// A scratch directory with `plugins/libminimal_plugin.so` and `relu.json`.
struct Scratch {
    dir: PathBuf,
}

impl Scratch {
    fn new() -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "hipdnn_cli_test_{}_{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("plugins")).unwrap();
        std::fs::copy(example_plugin(), dir.join("plugins/libminimal_plugin.so")).unwrap();
        std::fs::write(dir.join("relu.json"), RELU_GRAPH).unwrap();
        Self { dir }
    }

    /// With the stand-in device plugin too (`plugins/libstand_in_device_plugin.so`).
    fn with_device() -> Self {
        let s = Self::new();
        std::fs::copy(
            stand_in_device_plugin(),
            s.path("plugins/libstand_in_device_plugin.so"),
        )
        .unwrap();
        s
    }

    /// With the probe plugin too (`plugins/libprobe_plugin.so`) and `add.json`.
    fn with_probe() -> Self {
        let s = Self::new();
        std::fs::copy(probe_plugin(), s.path("plugins/libprobe_plugin.so")).unwrap();
        std::fs::write(s.path("add.json"), ADD_GRAPH).unwrap();
        s
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// Runs `hipdnn args…` in the scratch directory with its plugin directory.
    fn hipdnn(&self, args: &[&str]) -> Run {
        self.hipdnn_with_plugins(args, &self.path("plugins"))
    }

    fn hipdnn_with_plugins(&self, args: &[&str], plugins: &Path) -> Run {
        self.hipdnn_with_env(args, plugins, &[])
    }

    /// Runs `hipdnn args…` with `plugins` and the variables in `env` (the log and
    /// engine-order variables are unset unless given).
    fn hipdnn_with_env(&self, args: &[&str], plugins: &Path, env: &[(&str, &str)]) -> Run {
        Run::from(
            self.command(args, plugins, env)
                .output()
                .expect("run hipdnn"),
        )
    }

    /// [`Scratch::hipdnn_with_env`] that kills the command if it runs longer than
    /// `limit`, and fails the test then (a blocked command must not hang the suite).
    fn hipdnn_within(&self, args: &[&str], env: &[(&str, &str)], limit: Duration) -> Run {
        let mut child = self
            .command(args, &self.path("plugins"), env)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run hipdnn");
        let start = Instant::now();
        while child.try_wait().expect("wait for hipdnn").is_none() {
            if start.elapsed() > limit {
                let _ = child.kill();
                let output = child.wait_with_output().expect("reap hipdnn");
                panic!(
                    "hipdnn {args:?} still ran after {limit:?}: {:#?}",
                    Run::from(output)
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Run::from(child.wait_with_output().expect("hipdnn's output"))
    }

    fn command(&self, args: &[&str], plugins: &Path, env: &[(&str, &str)]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_hipdnn"));
        command
            .args(args)
            .current_dir(&self.dir)
            .env("HIPDNN_PLUGIN_DIR", plugins)
            .env_remove("HIPDNN_LOG_LEVEL")
            .env_remove("HIPDNN_LOG_FILE")
            .env_remove("HIPDNN_HEUR_FALLBACK_ENGINE_ORDER");
        for (name, value) in env {
            command.env(name, value);
        }
        command
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[derive(Debug)]
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl From<Output> for Run {
    fn from(o: Output) -> Self {
        Self {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

impl Run {
    #[track_caller]
    fn expect_code(&self, code: i32) -> &Self {
        assert_eq!(self.code, code, "exit code; {self:#?}");
        self
    }

    /// The error line, which must be the only line on standard error.
    #[track_caller]
    fn error_line(&self) -> &str {
        let lines: Vec<&str> = self.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "one error line expected: {self:#?}");
        assert!(lines[0].starts_with("hipdnn: error: "), "{self:#?}");
        lines[0]
    }
}

fn write_npy(path: &Path, shape: &[u64], values: &[f32]) {
    let file = std::fs::File::create(path).unwrap();
    let mut w = npyz::WriteOptions::new()
        .default_dtype()
        .shape(shape)
        .writer(file)
        .begin_nd()
        .unwrap();
    w.extend(values.iter().copied()).unwrap();
    w.finish().unwrap();
}

fn read_npy(path: &Path) -> (Vec<u64>, Vec<f32>) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let npy = npyz::NpyFile::new(&bytes[..]).unwrap();
    let shape = npy.shape().to_vec();
    (shape, npy.into_vec::<f32>().unwrap())
}

#[test]
fn engines_lists_the_example_engine_and_its_knob() {
    let s = Scratch::new();
    let run = s.hipdnn(&["engines"]);
    run.expect_code(0);
    let line = run
        .stdout
        .lines()
        .find(|l| l.contains("EXAMPLE_RELU_ENGINE"))
        .unwrap_or_else(|| panic!("{run:#?}"));
    assert!(
        line.contains("0xC6A1900484D99B57")
            && line.contains("example_relu_plugin")
            && line.contains("0.1.0"),
        "{line}"
    );
    let knob = run
        .stdout
        .lines()
        .find(|l| l.contains("example.relu.negative_slope"))
        .unwrap_or_else(|| panic!("{run:#?}"));
    assert!(
        knob.contains("float") && knob.contains("default 0") && knob.contains("in [0, 1]"),
        "{knob}"
    );

    let run = s.hipdnn(&["engines", "--json"]);
    run.expect_code(0);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let engine = &v["engines"][0];
    assert_eq!(engine["name"], "EXAMPLE_RELU_ENGINE");
    assert_eq!(engine["id"], "0xC6A1900484D99B57");
    let knob = engine["knobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["id"] == "example.relu.negative_slope")
        .unwrap();
    assert_eq!(knob["type"], "float");
    assert_eq!(knob["default"], 0.0);
    assert_eq!(knob["constraint"]["max"], 1.0);
}

#[test]
fn plugins_without_a_handle_here_are_named_with_why() {
    // A plugin whose Create fails (as a GPU plugin does on a machine without the GPU).
    let s = Scratch::new();
    let failing = test_plugin("hipdnn-backend", "bad_create_fails");
    std::fs::copy(failing, s.path("plugins/libbad_create_fails.so")).unwrap();
    let run = s.hipdnn(&["plugins"]);
    run.expect_code(0);
    assert!(
        run.stdout.contains(
            "libbad_create_fails.so (unavailable here: no device for bad_create_fails; \
                       engines not offered: 0x0000000000000385)"
        ),
        "{run:#?}"
    );
    let run = s.hipdnn(&["engines"]);
    run.expect_code(0);
    assert!(run.stdout.contains("EXAMPLE_RELU_ENGINE"), "{run:#?}");
    assert!(
        run.stdout.contains(
            "plugin bad_create_fails is loaded but unavailable here: no device for bad_create_fails"
        ),
        "{run:#?}"
    );
    let run = s.hipdnn(&["plugins", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["unavailable"][0]["plugin"], "bad_create_fails", "{v}");
    assert_eq!(
        v["unavailable"][0]["reason"], "no device for bad_create_fails",
        "{v}"
    );
}

#[test]
fn plugins_and_plugin_dir_name_the_directory() {
    let s = Scratch::new();
    let run = s.hipdnn(&["plugin-dir"]);
    run.expect_code(0);
    assert_eq!(run.stdout.trim(), s.path("plugins").display().to_string());
    let run = s.hipdnn(&["plugins"]);
    run.expect_code(0);
    assert!(run.stdout.contains("libminimal_plugin.so"), "{run:#?}");
    assert!(run.stdout.contains("HIPDNN_PLUGIN_DIR"), "{run:#?}");
    // A file that is not a plugin is listed with why.
    std::fs::write(s.path("plugins/libbroken.so"), b"not an ELF file").unwrap();
    let run = s.hipdnn(&["plugins", "--json"]);
    run.expect_code(0);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["loaded"].as_array().unwrap().len(), 1, "{v}");
    let refused = &v["refused"][0];
    assert!(
        refused["path"].as_str().unwrap().ends_with("libbroken.so"),
        "{v}"
    );
    assert!(!refused["error"].as_str().unwrap().is_empty(), "{v}");
}

/// A partial copy of a plugin (an interrupted install) used to kill every command with
/// SIGBUS inside `dlopen`: it is refused, named, and the other plugin serves.
#[test]
fn truncated_plugin_does_not_kill_plugins_engines_or_run() {
    let s = Scratch::new();
    let whole = std::fs::read(example_plugin()).unwrap();
    std::fs::write(s.path("plugins/libtrunc.so"), &whole[..3000]).unwrap();
    let run = s.hipdnn(&["plugins"]);
    run.expect_code(0);
    let line = run
        .stdout
        .lines()
        .find(|l| l.contains("libtrunc.so: "))
        .unwrap_or_else(|| panic!("{run:#?}"));
    assert!(
        line.contains(&format!(
            "plugin {} is not a loadable shared object: ",
            s.path("plugins/libtrunc.so").display()
        )) && line.contains("extends past the end of the file (3000 bytes)"),
        "{line}"
    );
    let run = s.hipdnn(&["engines"]);
    run.expect_code(0);
    assert!(run.stdout.contains("EXAMPLE_RELU_ENGINE"), "{run:#?}");
    s.hipdnn(&["run", "relu.json", "--check"]).expect_code(0);
}

/// Entries named like plugins that are not plugin files are each listed with what they
/// are, without being opened: a FIFO must not block the command.
#[test]
fn plugins_lists_each_odd_entry_of_the_plugin_dir_without_opening_it() {
    use std::os::unix::fs::symlink;
    let s = Scratch::new();
    let dir = s.path("plugins");
    std::fs::create_dir(dir.join("y.so")).unwrap();
    symlink(dir.join("libloop.so"), dir.join("libloop.so")).unwrap();
    symlink(dir.join("gone.so"), dir.join("libdangling.so")).unwrap();
    symlink("/dev/zero", dir.join("libzero.so")).unwrap();
    let fifo = dir.join("libfifo.so");
    let status = Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("run mkfifo");
    assert!(status.success());

    // With a deadline: a command blocked opening the FIFO fails instead of hanging.
    let mut child = Command::new(env!("CARGO_BIN_EXE_hipdnn"))
        .args(["plugins", "--json"])
        .current_dir(&s.dir)
        .env("HIPDNN_PLUGIN_DIR", &dir)
        .env_remove("HIPDNN_LOG_LEVEL")
        .env_remove("HIPDNN_LOG_FILE")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run hipdnn");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while child.try_wait().expect("wait").is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("hipdnn plugins blocked (on the FIFO?)");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let run = Run::from(child.wait_with_output().expect("output"));
    run.expect_code(0);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["loaded"].as_array().unwrap().len(), 1, "{v}");
    let refused: Vec<(String, String)> = v["refused"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let path = r["path"].as_str().unwrap();
            let name = Path::new(path).file_name().unwrap().to_string_lossy();
            (name.into_owned(), r["error"].as_str().unwrap().to_owned())
        })
        .collect();
    let p = |name: &str| dir.join(name).display().to_string();
    assert_eq!(
        refused,
        [
            (
                "libdangling.so".to_owned(),
                format!(
                    "plugin file {} is a dangling symbolic link (to {}, which does not exist)",
                    p("libdangling.so"),
                    p("gone.so")
                )
            ),
            (
                "libfifo.so".to_owned(),
                format!(
                    "plugin file {} is a FIFO, not a regular file: not opened",
                    p("libfifo.so")
                )
            ),
            (
                "libloop.so".to_owned(),
                format!("plugin file {} is a symbolic link loop", p("libloop.so"))
            ),
            (
                "libzero.so".to_owned(),
                format!(
                    "plugin file {} is a symbolic link to /dev/zero, a character device, not a \
                     regular file: not opened",
                    p("libzero.so")
                )
            ),
            (
                "y.so".to_owned(),
                format!(
                    "plugin file {} is a directory, not a regular file: not opened",
                    p("y.so")
                )
            ),
        ]
    );
}

/// A plugin refused at its load is listed with that load's reason (loading it again
/// would succeed: its engine count changes after the first load); every engine that
/// admission dropped is named under its plugin with why; a plugin that made a null
/// handle is unavailable with why and the engines it does not offer.
#[test]
fn plugins_names_refused_plugins_dropped_engines_and_unavailable_ones() {
    let s = Scratch::new();
    let dir = s.path("plugins");
    for name in [
        "bad_count_first_load",
        "bad_null_handle",
        "ok_unnamed_engines",
    ] {
        std::fs::copy(
            test_plugin("hipdnn-backend", name),
            dir.join(format!("lib{name}.so")),
        )
        .unwrap();
    }
    // The example plugin again under a later name: its engine id is a duplicate.
    std::fs::copy(example_plugin(), dir.join("libzz_duplicate.so")).unwrap();
    let run = s.hipdnn(&["plugins"]);
    run.expect_code(0);
    let p = |name: &str| dir.join(name).display().to_string();
    let expected = [
        format!(
            "  {}: plugin {} reported 3 engines, then wrote 2 engine ids",
            p("libbad_count_first_load.so"),
            p("libbad_count_first_load.so")
        ),
        format!(
            "  {} (unavailable here: hipdnnEnginePluginCreate succeeded but returned a null \
             handle; engines not offered: 0x0000000000000386)",
            p("libbad_null_handle.so")
        ),
        // Engines given a null or empty name are kept (registry name, else hex).
        format!(
            "  {} (unavailable here: hipdnnEnginePluginCreate is not implemented; engines not \
             offered: 0x0000000000000335, 0x0000000000000336, MIOPEN_ENGINE)",
            p("libok_unnamed_engines.so")
        ),
        format!(
            "    engine EXAMPLE_RELU_ENGINE (0xC6A1900484D99B57) dropped: plugin \
             'example_relu_plugin' ([{}]) already provides this id; the first plugin keeps it",
            p("libminimal_plugin.so")
        ),
    ];
    for line in &expected {
        assert!(
            run.stdout.lines().any(|l| l == line),
            "missing {line:?} in {run:#?}"
        );
    }
    let run = s.hipdnn(&["plugins", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let dropped = v["dropped_engines"].as_array().unwrap();
    assert_eq!(dropped.len(), 1, "{v}");
    assert_eq!(dropped[0]["name"], "EXAMPLE_RELU_ENGINE", "{v}");
    assert_eq!(
        dropped[0]["path"].as_str(),
        Some(p("libzz_duplicate.so").as_str())
    );
    let run = s.hipdnn(&["engines"]);
    run.expect_code(0);
    assert!(
        run.stdout.contains(&format!(
            "plugin example_relu_plugin ({}): engine EXAMPLE_RELU_ENGINE (0xC6A1900484D99B57) \
             dropped: ",
            p("libzz_duplicate.so")
        )),
        "{run:#?}"
    );
}

#[test]
fn run_check_passes_and_names_the_engine() {
    let s = Scratch::new();
    let run = s.hipdnn(&["run", "relu.json", "--check"]);
    run.expect_code(0);
    assert!(
        run.stdout.contains("engine: EXAMPLE_RELU_ENGINE"),
        "{run:#?}"
    );
    assert!(run.stdout.contains("check: passed"), "{run:#?}");
    assert!(run.stdout.contains("max abs err"), "{run:#?}");
    // The same through --engine, by name and by id, and from the binary form.
    s.hipdnn(&[
        "run",
        "relu.json",
        "--check",
        "--engine",
        "EXAMPLE_RELU_ENGINE",
    ])
    .expect_code(0);
    s.hipdnn(&[
        "run",
        "relu.json",
        "--check",
        "--engine",
        "0xC6A1900484D99B57",
    ])
    .expect_code(0);
    let bytes = Graph::from_json(RELU_GRAPH).unwrap().to_bytes();
    std::fs::write(s.path("relu.bin"), bytes).unwrap();
    let run = s.hipdnn(&["run", "relu.bin", "--check"]);
    run.expect_code(0);
    assert!(run.stdout.contains("check: passed"), "{run:#?}");
}

#[test]
fn outputs_hold_relu_of_the_inputs() {
    let s = Scratch::new();
    std::fs::create_dir(s.path("in")).unwrap();
    let x: Vec<f32> = (0..24).map(|i| (i as f32 - 11.5) * 0.25).collect();
    write_npy(&s.path("in/1.npy"), &[2, 3, 4], &x);
    let run = s.hipdnn(&[
        "run",
        "relu.json",
        "--inputs",
        "in",
        "--outputs",
        "out",
        "--check",
    ]);
    run.expect_code(0);
    assert!(run.stdout.contains("from in/1.npy"), "{run:#?}");
    let (shape, y) = read_npy(&s.path("out/2.npy"));
    assert_eq!(shape, [2, 3, 4]);
    let expected: Vec<f32> = x.iter().map(|v| v.max(0.0)).collect();
    assert_eq!(y, expected);
    // With the knob, negative inputs are scaled: the output shows it and the check
    // (plain ReLU) fails with exit code 1.
    let run = s.hipdnn(&[
        "run",
        "relu.json",
        "--inputs",
        "in",
        "--outputs",
        "out2",
        "--check",
        "--knob",
        "example.relu.negative_slope=0.5",
    ]);
    run.expect_code(1);
    assert!(
        run.error_line()
            .contains("check failed for tensor uid 2 ('y')"),
        "{run:#?}"
    );
    let (_, y) = read_npy(&s.path("out2/2.npy"));
    let leaky: Vec<f32> = x
        .iter()
        .map(|&v| if v > 0.0 { v } else { 0.5 * v })
        .collect();
    assert_eq!(y, leaky);
}

#[test]
fn generated_inputs_follow_the_seed() {
    let s = Scratch::new();
    s.hipdnn(&["run", "relu.json", "--outputs", "a", "--seed", "7"])
        .expect_code(0);
    s.hipdnn(&["run", "relu.json", "--outputs", "b", "--seed", "7"])
        .expect_code(0);
    s.hipdnn(&["run", "relu.json", "--outputs", "c", "--seed", "0x8"])
        .expect_code(0);
    let (a, b, c) = (
        read_npy(&s.path("a/2.npy")).1,
        read_npy(&s.path("b/2.npy")).1,
        read_npy(&s.path("c/2.npy")).1,
    );
    assert_eq!(a, b);
    assert_ne!(a, c);
    assert!(a.iter().all(|v| (0.0..1.0).contains(v)) && a.iter().any(|&v| v > 0.0));
}

#[test]
fn knob_out_of_range_fails_naming_the_knob() {
    let s = Scratch::new();
    let run = s.hipdnn(&[
        "run",
        "relu.json",
        "--knob",
        "example.relu.negative_slope=2",
    ]);
    run.expect_code(2);
    assert!(
        run.error_line().contains("example.relu.negative_slope"),
        "{run:#?}"
    );
    let run = s.hipdnn(&[
        "run",
        "relu.json",
        "--knob",
        "example.relu.negative_slope=steep",
    ]);
    run.expect_code(2);
    assert!(
        run.error_line().contains("'steep' is not a number"),
        "{run:#?}"
    );
    let run = s.hipdnn(&["run", "relu.json", "--knob", "example.relu.slope=0.1"]);
    run.expect_code(2);
    assert!(
        run.error_line().contains("\"example.relu.slope\""),
        "{run:#?}"
    );
    let run = s.hipdnn(&["run", "relu.json", "--knob", "no-equals-sign"]);
    run.expect_code(2);
}

#[test]
fn unknown_engine_fails() {
    let s = Scratch::new();
    let run = s.hipdnn(&["run", "relu.json", "--engine", "NO_SUCH_ENGINE"]);
    run.expect_code(2);
    let line = run.error_line();
    assert!(
        line.contains("unknown engine 'NO_SUCH_ENGINE'") && line.contains("EXAMPLE_RELU_ENGINE"),
        "{line}"
    );
}

#[test]
fn run_reads_upstreams_json_dialect() {
    let s = Scratch::new();
    assert_eq!(
        Graph::from_json(RELU_GRAPH_UPSTREAM).unwrap(),
        Graph::from_json(RELU_GRAPH).unwrap()
    );
    std::fs::write(s.path("relu.upstream.json"), RELU_GRAPH_UPSTREAM).unwrap();
    let run = s.hipdnn(&["run", "relu.upstream.json", "--check"]);
    run.expect_code(0);
    assert!(
        run.stdout.contains("graph: 'relu' (1 node, 2 tensors)"),
        "{run:#?}"
    );
    assert!(run.stdout.contains("check: passed"), "{run:#?}");
    // The same outputs as from our form, for the same inputs.
    for (file, out) in [("relu.json", "ours"), ("relu.upstream.json", "theirs")] {
        s.hipdnn(&["run", file, "--outputs", out, "--seed", "7"])
            .expect_code(0);
    }
    assert_eq!(
        read_npy(&s.path("ours/2.npy")),
        read_npy(&s.path("theirs/2.npy"))
    );
}

/// What `HIPDNN_LOG_GRAPH_DIR` writes for a finalized graph (upstream's dialect) runs
/// as it is.
#[test]
fn a_graph_log_dump_runs_with_check() {
    use hipdnn_backend::OperationGraph;
    use hipdnn_backend::graph_log::dump_graph;
    use hipdnn_flatbuffers_sdk::model::JsonDialect;

    let s = Scratch::new();
    let graph = OperationGraph::new(Graph::from_json(RELU_GRAPH).unwrap()).unwrap();
    let path = dump_graph(&s.path("graphs"), &graph).expect("the graph is dumped");
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(
        JsonDialect::detect(&serde_json::from_str(&text).unwrap()),
        JsonDialect::Upstream,
        "{text}"
    );
    let path = path.to_str().unwrap();
    let run = s.hipdnn(&["run", path, "--check"]);
    run.expect_code(0);
    assert!(run.stdout.contains("check: passed"), "{run:#?}");
}

#[test]
fn an_upstream_graph_that_cannot_be_read_fails_naming_the_node_and_key() {
    let s = Scratch::new();
    let pooling = RELU_GRAPH_UPSTREAM.replace("PointwiseAttributes", "PoolingFwdAttributes");
    std::fs::write(s.path("pooling.json"), pooling).unwrap();
    let run = s.hipdnn(&["run", "pooling.json"]);
    run.expect_code(2);
    let line = run.error_line();
    assert!(
        line.contains("pooling.json")
            && line.contains("node 0 (\"relu\"): node type \"PoolingFwdAttributes\" is not part of upstream's graph JSON dialect"),
        "{line}"
    );
    let missing = RELU_GRAPH_UPSTREAM.replace("\"out_0_tensor_uid\": 2", "\"out_1_tensor_uid\": 2");
    std::fs::write(s.path("missing.json"), missing).unwrap();
    let line = s
        .hipdnn(&["run", "missing.json"])
        .expect_code(2)
        .error_line()
        .to_owned();
    assert!(
        line.contains("`outputs.out_0_tensor_uid` is missing"),
        "{line}"
    );
}

#[test]
fn graph_with_a_dangling_uid_fails_naming_the_uid() {
    let s = Scratch::new();
    let dangling = RELU_GRAPH.replace("\"out_0_tensor_uid\": 2", "\"out_0_tensor_uid\": 99");
    std::fs::write(s.path("dangling.json"), dangling).unwrap();
    let run = s.hipdnn(&["run", "dangling.json"]);
    run.expect_code(2);
    let line = run.error_line();
    assert!(
        line.contains("dangling.json") && line.contains("uid 99"),
        "{line}"
    );
}

#[test]
fn bad_files_are_input_errors() {
    let s = Scratch::new();
    let run = s.hipdnn(&["run", "missing.json"]);
    run.expect_code(2);
    assert!(run.error_line().contains("missing.json"));
    std::fs::write(s.path("garbage.bin"), b"\x01\x02\x03 not a flatbuffer").unwrap();
    let run = s.hipdnn(&["run", "garbage.bin"]);
    run.expect_code(2);
    assert!(run.error_line().contains("garbage.bin"));
    std::fs::write(s.path("broken.json"), "{ \"name\": ").unwrap();
    s.hipdnn(&["run", "broken.json"]).expect_code(2);
    // An input of the wrong shape names the file and both shapes.
    std::fs::create_dir(s.path("in")).unwrap();
    write_npy(&s.path("in/1.npy"), &[24], &[0.0; 24]);
    let run = s.hipdnn(&["run", "relu.json", "--inputs", "in"]);
    run.expect_code(2);
    let line = run.error_line();
    assert!(
        line.contains("in/1.npy") && line.contains("(24,)") && line.contains("(2, 3, 4)"),
        "{line}"
    );
    let run = s.hipdnn(&["run", "relu.json", "--inputs", "no-such-dir"]);
    run.expect_code(2);
    // Clap's own usage errors exit with 2 as well.
    s.hipdnn(&["run"]).expect_code(2);
    s.hipdnn(&["run", "relu.json", "--iters", "0"])
        .expect_code(2);
}

#[test]
fn iters_prints_median_min_max() {
    let s = Scratch::new();
    let run = s.hipdnn(&["run", "relu.json", "--iters", "5"]);
    run.expect_code(0);
    let line = run
        .stdout
        .lines()
        .find(|l| l.starts_with("time over 5 executions"))
        .unwrap_or_else(|| panic!("{run:#?}"));
    assert!(
        line.contains("median")
            && line.contains("min")
            && line.contains("max")
            && line.contains(" ms"),
        "{line}"
    );
    // No convolution or matmul: no FLOP rate.
    assert!(!line.contains("GFLOP"), "{line}");
    // Standard error is not a terminal here: no progress bar.
    assert!(run.stderr.is_empty(), "{run:#?}");
}

#[test]
fn without_plugins_nothing_runs() {
    let s = Scratch::new();
    let empty = s.path("empty");
    std::fs::create_dir(&empty).unwrap();
    let run = s.hipdnn_with_plugins(&["engines"], &empty);
    run.expect_code(0);
    assert!(run.stdout.contains("no engines found"), "{run:#?}");
    let run = s.hipdnn_with_plugins(&["engines", "--graph", "relu.json"], &empty);
    run.expect_code(0);
    assert!(run.stdout.contains("no engines found"), "{run:#?}");
    let run = s.hipdnn_with_plugins(&["run", "relu.json"], &empty);
    run.expect_code(2);
    assert!(
        run.error_line().contains("no engine plugin is loaded"),
        "{run:#?}"
    );
    let run = s.hipdnn_with_plugins(
        &["run", "relu.json", "--engine", "EXAMPLE_RELU_ENGINE"],
        &empty,
    );
    run.expect_code(2);
    assert!(run.error_line().contains("unknown engine"), "{run:#?}");
}

#[test]
fn a_graph_the_engine_cannot_run_is_refused() {
    let s = Scratch::new();
    let example =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/graphs/conv_bias_relu.json");
    let run = s.hipdnn(&["run", example.to_str().unwrap()]);
    run.expect_code(2);
    assert!(
        run.error_line()
            .contains("no engine supports graph 'conv_bias_relu'"),
        "{run:#?}"
    );
    let run = s.hipdnn(&[
        "run",
        example.to_str().unwrap(),
        "--engine",
        "EXAMPLE_RELU_ENGINE",
    ]);
    run.expect_code(2);
    assert!(
        run.error_line()
            .contains("cannot run graph 'conv_bias_relu'"),
        "{run:#?}"
    );
}

#[test]
fn a_single_plugins_refusal_names_the_engines_asked() {
    let s = Scratch::new();
    let example =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/graphs/conv_bias_relu.json");
    let run = s.hipdnn(&["run", example.to_str().unwrap()]);
    run.expect_code(2);
    assert!(
        run.error_line().contains(
            "no engine accepts node 'conv' (ConvolutionFwdAttributes), node 'bias' \
             (PointwiseAttributes); engines asked: EXAMPLE_RELU_ENGINE (example_relu_plugin)"
        ),
        "{run:#?}"
    );
    // An engine order that leaves out the only engine accepting the graph says so.
    let run = s.hipdnn_with_env(
        &["run", "relu.json"],
        &s.path("plugins"),
        &[("HIPDNN_HEUR_FALLBACK_ENGINE_ORDER", "CPU_ENGINE")],
    );
    run.expect_code(2);
    assert!(
        run.error_line().contains(
            "HIPDNN_HEUR_FALLBACK_ENGINE_ORDER leaves out every engine that accepts it: \
             EXAMPLE_RELU_ENGINE (example_relu_plugin)"
        ),
        "{run:#?}"
    );
}

/// `y = relu(x)` between tensors of `dims`, `x` with `x_strides` and `y` packed.
fn relu_json(dims: &[i64], x_strides: &[i64]) -> String {
    let mut packed = vec![1i64; dims.len()];
    for i in (0..dims.len() - 1).rev() {
        packed[i] = packed[i + 1] * dims[i + 1];
    }
    format!(
        r#"{{
  "name": "big_relu", "compute_data_type": "FLOAT", "intermediate_data_type": "FLOAT",
  "io_data_type": "FLOAT",
  "tensors": [
    {{ "uid": 1, "name": "x", "data_type": "FLOAT", "strides": {x_strides:?}, "dims": {dims:?} }},
    {{ "uid": 2, "name": "y", "data_type": "FLOAT", "strides": {packed:?}, "dims": {dims:?} }}
  ],
  "nodes": [ {{ "name": "relu", "compute_data_type": "FLOAT",
    "attributes_type": "PointwiseAttributes",
    "attributes": {{ "operation": "RELU_FWD", "in_0_tensor_uid": 1, "out_0_tensor_uid": 2 }} }} ]
}}"#
    )
}

/// A 2²⁰ × 2²⁰ tensor with zero strides (a few hundred bytes of graph) is refused by
/// validation at once, naming the limit and the variable that raises it; the same
/// variable lowered refuses a small graph.
#[test]
fn a_huge_zero_stride_tensor_is_refused_before_any_allocation() {
    let s = Scratch::new();
    std::fs::write(s.path("huge.json"), relu_json(&[1 << 20, 1 << 20], &[0, 0])).unwrap();
    let run = s.hipdnn_within(&["run", "huge.json"], &[], Duration::from_secs(10));
    run.expect_code(2);
    let line = run.error_line();
    assert!(
        line.contains("uid 1 (\"x\") has 1099511627776 elements")
            && line.contains("HIPDNN_MAX_TENSOR_ELEMENTS"),
        "{line}"
    );
    let run = s.hipdnn_within(
        &["run", "relu.json"],
        &[("HIPDNN_MAX_TENSOR_ELEMENTS", "16")],
        Duration::from_secs(10),
    );
    run.expect_code(2);
    assert!(
        run.error_line().contains("above the limit of 16"),
        "{run:#?}"
    );
}

/// A graph no engine runs is refused before its buffers are allocated and its inputs
/// generated: here 2³⁰ elements (a 4 GiB output) that the example engine refuses (its
/// input broadcasts).
#[test]
fn a_graph_no_engine_accepts_is_refused_before_inputs_are_made() {
    let s = Scratch::new();
    let dims = [1 << 10, 1 << 10, 1 << 10];
    std::fs::write(s.path("big.json"), relu_json(&dims, &[0, 0, 1])).unwrap();
    let run = s.hipdnn_within(&["run", "big.json"], &[], Duration::from_secs(10));
    run.expect_code(2);
    assert!(
        run.error_line()
            .contains("no engine supports graph 'big_relu'"),
        "{run:#?}"
    );
    assert!(!run.stdout.contains("inputs:"), "{run:#?}");
}

/// A FIFO where an `.npy` input (or the graph) is expected is refused from its
/// metadata, never opened for a read that would block until someone writes to it.
#[test]
fn npy_fifo_input_is_refused_without_blocking() {
    let s = Scratch::new();
    std::fs::create_dir(s.path("in")).unwrap();
    let mkfifo = |path: &Path| {
        let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    };
    mkfifo(&s.path("in/1.npy"));
    let run = s.hipdnn_within(
        &["run", "relu.json", "--inputs", "in"],
        &[],
        Duration::from_secs(10),
    );
    run.expect_code(2);
    let line = run.error_line();
    assert!(
        line.contains("in/1.npy is a FIFO, not a regular file"),
        "{line}"
    );
    mkfifo(&s.path("fifo.json"));
    let run = s.hipdnn_within(&["run", "fifo.json"], &[], Duration::from_secs(10));
    run.expect_code(2);
    assert!(run.error_line().contains("fifo.json is a FIFO"), "{run:#?}");
    // An output path that is a FIFO is refused too, not opened to block on a reader.
    std::fs::create_dir(s.path("out")).unwrap();
    mkfifo(&s.path("out/2.npy"));
    let run = s.hipdnn_within(
        &["run", "relu.json", "--outputs", "out"],
        &[],
        Duration::from_secs(10),
    );
    run.expect_code(1);
    assert!(run.error_line().contains("is a FIFO"), "{run:#?}");
}

/// The lines of standard error written at `level` (`hipdnn <level>: [target] text`).
fn log_lines<'a>(stderr: &'a str, level: &str) -> Vec<&'a str> {
    let prefix = format!("hipdnn {level}: ");
    stderr.lines().filter(|l| l.starts_with(&prefix)).collect()
}

#[test]
fn log_level_info_shows_backend_and_plugin_lines() {
    let s = Scratch::with_probe();
    let plugins = s.path("plugins");
    let info = [("HIPDNN_LOG_LEVEL", "info")];
    let run = s.hipdnn_with_env(&["run", "add.json", "--check"], &plugins, &info);
    run.expect_code(0);
    assert!(run.stdout.contains("engine: PROBE_ADD_ENGINE"), "{run:#?}");
    assert!(run.stdout.contains("check: passed"), "{run:#?}");
    let lines = log_lines(&run.stderr, "info");
    // The backend's own line, and lines the plugin logged with `tracing::info!`,
    // forwarded through the plugin log callback.
    assert!(
        lines.iter().any(|l| l.starts_with(
            "hipdnn info: [hipdnn_backend::loader] loaded plugin cli_probe_plugin 0.2.0"
        )),
        "{run:#?}"
    );
    assert!(
        lines.contains(
            &"hipdnn info: [hipdnn_plugin] [probe_plugin] probe asked about graph 'add': true"
        ),
        "{run:#?}"
    );
    assert!(
        lines.contains(
            &"hipdnn info: [hipdnn_plugin] [probe_plugin] probe built a plan for graph 'add'"
        ),
        "{run:#?}"
    );
    // An engine named outside the registry draws no warning.
    assert!(
        log_lines(&run.stderr, "warn")
            .iter()
            .all(|l| !l.contains("PROBE_ADD_ENGINE")),
        "{run:#?}"
    );

    // Off by default, and when set to off; a higher level drops the info lines.
    for env in [
        &[][..],
        &[("HIPDNN_LOG_LEVEL", "off")],
        &[("HIPDNN_LOG_LEVEL", "error")],
    ] {
        let run = s.hipdnn_with_env(&["run", "add.json", "--check"], &plugins, env);
        run.expect_code(0);
        assert!(run.stderr.is_empty(), "{env:?}: {run:#?}");
    }

    // HIPDNN_LOG_FILE takes the lines instead of standard error.
    let log = s.path("hipdnn.log");
    let log_text = log.to_str().unwrap();
    let run = s.hipdnn_with_env(
        &["run", "add.json"],
        &plugins,
        &[("HIPDNN_LOG_LEVEL", "info"), ("HIPDNN_LOG_FILE", log_text)],
    );
    run.expect_code(0);
    assert!(run.stderr.is_empty(), "{run:#?}");
    let written = std::fs::read_to_string(&log).unwrap();
    assert!(
        written.contains("[hipdnn_backend::loader] loaded plugin cli_probe_plugin")
            && written.contains("[probe_plugin] probe built a plan for graph 'add'"),
        "{written}"
    );

    // A level that is not one is reported once, and ignored.
    let run = s.hipdnn_with_env(
        &["run", "add.json"],
        &plugins,
        &[("HIPDNN_LOG_LEVEL", "verbose")],
    );
    run.expect_code(0);
    assert!(
        run.stderr
            .starts_with("hipdnn: ignoring HIPDNN_LOG_LEVEL=\"verbose\"")
            && run.stderr.lines().count() == 1,
        "{run:#?}"
    );
}

#[test]
fn engines_for_a_graph_lists_applicable_engines_with_knobs_and_memory() {
    let s = Scratch::with_probe();
    let run = s.hipdnn(&["engines", "--graph", "add.json"]);
    run.expect_code(0);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines[0], "graph 'add' (add.json)", "{run:#?}");
    let row = lines
        .iter()
        .position(|l| l.contains("PROBE_ADD_ENGINE"))
        .unwrap_or_else(|| panic!("{run:#?}"));
    let cells: Vec<&str> = lines[row].split_whitespace().collect();
    assert_eq!(
        cells,
        [
            "1",
            "0x459864C7169E1870",
            "PROBE_ADD_ENGINE",
            "cli_probe_plugin",
            "0.2.0",
            "host"
        ],
        "{run:#?}"
    );
    let knob: Vec<&str> = lines[row + 2].split_whitespace().collect();
    assert_eq!(
        knob,
        [
            "probe.add.unroll",
            "int",
            "default",
            "4",
            "in",
            "[1,",
            "16]",
            "unroll",
            "factor"
        ],
        "{run:#?}"
    );
    let others = lines
        .iter()
        .position(|l| *l == "not applicable:")
        .unwrap_or_else(|| panic!("{run:#?}"));
    assert!(
        lines[others + 2].contains("EXAMPLE_RELU_ENGINE"),
        "{run:#?}"
    );

    // The same as JSON, from the binary form of the graph.
    let bytes = Graph::from_json(ADD_GRAPH).unwrap().to_bytes();
    std::fs::write(s.path("add.bin"), bytes).unwrap();
    let run = s.hipdnn(&["engines", "--graph", "add.bin", "--json"]);
    run.expect_code(0);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["graph"]["name"], "add");
    let applicable = v["applicable"].as_array().unwrap();
    assert_eq!(applicable.len(), 1, "{v}");
    let probe = &applicable[0];
    assert_eq!(probe["name"], "PROBE_ADD_ENGINE");
    assert_eq!(probe["rank"], 1);
    assert_eq!(probe["memory"], "host");
    assert_eq!(probe["knobs"][0]["id"], "probe.add.unroll");
    assert_eq!(probe["knobs"][0]["default"], 4);
    assert_eq!(probe["knobs"][0]["constraint"]["min"], 1);
    assert_eq!(probe["knobs"][0]["constraint"]["max"], 16);
    assert_eq!(v["not_applicable"][0]["name"], "EXAMPLE_RELU_ENGINE");
    assert_eq!(v["unsupported_reason"], serde_json::Value::Null);

    // The other engine, for the other graph: its knobs for that graph.
    let run = s.hipdnn(&["engines", "--graph", "relu.json", "--json"]);
    run.expect_code(0);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let relu = &v["applicable"][0];
    assert_eq!(relu["name"], "EXAMPLE_RELU_ENGINE");
    assert!(
        relu["knobs"]
            .as_array()
            .unwrap()
            .iter()
            .any(|k| k["id"] == "example.relu.negative_slope"),
        "{v}"
    );
    assert_eq!(v["not_applicable"][0]["name"], "PROBE_ADD_ENGINE");
}

#[test]
fn engines_for_a_graph_shows_the_ranking_and_why_nothing_runs() {
    let s = Scratch::with_probe();
    // An engine order leaving out the engine that accepts the graph: still listed, not
    // ranked, and the reason given.
    let run = s.hipdnn_with_env(
        &["engines", "--graph", "relu.json", "--json"],
        &s.path("plugins"),
        &[("HIPDNN_HEUR_FALLBACK_ENGINE_ORDER", "PROBE_ADD_ENGINE")],
    );
    run.expect_code(0);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["applicable"][0]["name"], "EXAMPLE_RELU_ENGINE");
    assert_eq!(v["applicable"][0]["rank"], serde_json::Value::Null);
    assert!(
        v["unsupported_reason"]
            .as_str()
            .unwrap()
            .contains("leaves out every engine that accepts it"),
        "{v}"
    );
    // A graph nobody accepts: every engine asked is named.
    let example =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/graphs/conv_bias_relu.json");
    let run = s.hipdnn(&["engines", "--graph", example.to_str().unwrap()]);
    run.expect_code(0);
    assert!(run.stdout.contains("applicable engines: none"), "{run:#?}");
    assert!(
        run.stdout.contains(
            "engines asked: EXAMPLE_RELU_ENGINE (example_relu_plugin), \
             PROBE_ADD_ENGINE (cli_probe_plugin)"
        ),
        "{run:#?}"
    );
    // A graph that cannot be read is an input error naming the file.
    let run = s.hipdnn(&["engines", "--graph", "missing.json"]);
    run.expect_code(2);
    assert!(run.error_line().contains("missing.json"), "{run:#?}");
}

#[test]
fn engines_shows_the_memory_kind_for_the_sample_graph() {
    let s = Scratch::with_probe();
    let run = s.hipdnn(&["engines"]);
    run.expect_code(0);
    let lines: Vec<&str> = run.stdout.lines().collect();
    let row = lines
        .iter()
        .position(|l| l.contains("PROBE_ADD_ENGINE"))
        .unwrap_or_else(|| panic!("{run:#?}"));
    assert_eq!(
        lines[row + 1],
        "    memory: host (for built-in add 1x8x8x8)",
        "{run:#?}"
    );
    let run = s.hipdnn(&["engines", "--json"]);
    run.expect_code(0);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let probe = v["engines"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "PROBE_ADD_ENGINE")
        .unwrap_or_else(|| panic!("{v}"));
    assert_eq!(probe["memory"], "host");
    assert_eq!(probe["knobs_sample_graph"], "built-in add 1x8x8x8");
}

/// Why no GPU opens here, or `None` (after saying so) where one does: the stand-in
/// device engine reads its pointers on the host, so it must not be given a real GPU's.
fn no_gpu_reason() -> Option<String> {
    match hipdnn_gpu::Gpu::open_default() {
        Ok(gpu) => {
            eprintln!(
                "skipped: {gpu} opened, and the stand-in device engine cannot take its memory"
            );
            None
        }
        Err(e) => Some(e.to_string()),
    }
}

#[test]
fn a_device_engine_without_a_gpu_fails_with_the_reason() {
    let Some(reason) = no_gpu_reason() else {
        return;
    };
    let s = Scratch::with_device();
    for extra in [&[][..], &["--check", "--iters", "3"], &["--device"]] {
        let mut args = vec!["run", "relu.json", "--engine", "STAND_IN_DEVICE_RELU"];
        args.extend_from_slice(extra);
        let run = s.hipdnn(&args);
        run.expect_code(1);
        assert!(
            run.stdout.contains("engine: STAND_IN_DEVICE_RELU (")
                && run.stdout.contains(", device memory"),
            "{run:#?}"
        );
        let line = run.error_line();
        assert!(
            line.contains(
                "engine STAND_IN_DEVICE_RELU takes device memory, and no GPU is available: "
            ) && line.ends_with(&reason),
            "{run:#?}"
        );
        assert!(!run.stdout.contains("time"), "{run:#?}");
    }
    // --device picks the device engine over the host one.
    let run = s.hipdnn(&["run", "relu.json", "--device", "--check"]);
    run.expect_code(1);
    assert!(run.error_line().ends_with(&reason), "{run:#?}");
    assert!(
        run.stdout.contains("engine: STAND_IN_DEVICE_RELU"),
        "{run:#?}"
    );
}

#[test]
fn device_picks_only_engines_that_take_device_memory() {
    let s = Scratch::new();
    let run = s.hipdnn(&["run", "relu.json", "--device"]);
    run.expect_code(2);
    assert_eq!(
        run.error_line(),
        "hipdnn: error: --device: no engine that takes device memory accepts graph 'relu'; \
         the engines that accept it: EXAMPLE_RELU_ENGINE (host memory)"
    );
    let run = s.hipdnn(&[
        "run",
        "relu.json",
        "--device",
        "--engine",
        "EXAMPLE_RELU_ENGINE",
    ]);
    run.expect_code(2);
    assert_eq!(
        run.error_line(),
        "hipdnn: error: --device: engine EXAMPLE_RELU_ENGINE takes host memory"
    );
}

#[test]
fn with_a_device_plugin_loaded_the_host_path_is_unchanged() {
    let s = Scratch::with_device();
    let run = s.hipdnn(&["engines"]);
    run.expect_code(0);
    assert!(
        run.stdout.contains("STAND_IN_DEVICE_RELU") && run.stdout.contains("memory: device"),
        "{run:#?}"
    );
    let run = s.hipdnn(&[
        "run",
        "relu.json",
        "--engine",
        "EXAMPLE_RELU_ENGINE",
        "--check",
        "--iters",
        "2",
    ]);
    run.expect_code(0);
    assert!(
        run.stdout.contains("host memory")
            && run
                .stdout
                .contains("time over 2 executions (after 1 warm-up): median")
            && !run.stdout.contains("CUDA")
            && run.stdout.contains("check: passed"),
        "{run:#?}"
    );
    assert!(run.stderr.is_empty(), "{run:#?}");
}
