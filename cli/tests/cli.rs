//! The `hipdnn` binary end to end, with the plugin SDK's example plugin
//! (`libminimal_plugin.so`: `EXAMPLE_RELU_ENGINE`, single-node ReLU graphs over `f32`
//! host buffers, knob `example.relu.negative_slope` in [0, 1]) as the only plugin.
//!
//! Exit codes under test: 0 success, 1 failed check, 2 usage or input error (a knob
//! out of range is an input error: the backend refuses the setting before any plugin
//! runs).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

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

/// `target/<profile>`, from this test binary's `target/<profile>/deps/`.
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    exe.parent()
        .and_then(Path::parent)
        .expect("the test binary lives in target/<profile>/deps/")
        .to_path_buf()
}

/// The example plugin: built by `cargo test` of the whole workspace next to this test;
/// built here (in a target directory of its own, since the outer cargo may hold the
/// lock on this one) when missing.
fn example_plugin() -> &'static Path {
    static PLUGIN: OnceLock<PathBuf> = OnceLock::new();
    PLUGIN.get_or_init(|| {
        let built = profile_dir().join("examples/libminimal_plugin.so");
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
                "hipdnn-plugin-sdk",
                "--example",
                "minimal_plugin",
                "--target-dir",
            ])
            .arg(&target)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .expect("run cargo");
        assert!(status.success(), "building the example plugin failed");
        let path = target.join("debug/examples/libminimal_plugin.so");
        assert!(path.is_file(), "{} was not built", path.display());
        path
    })
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

    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// Runs `hipdnn args…` in the scratch directory with its plugin directory.
    fn hipdnn(&self, args: &[&str]) -> Run {
        self.hipdnn_with_plugins(args, &self.path("plugins"))
    }

    fn hipdnn_with_plugins(&self, args: &[&str], plugins: &Path) -> Run {
        let output = Command::new(env!("CARGO_BIN_EXE_hipdnn"))
            .args(args)
            .current_dir(&self.dir)
            .env("HIPDNN_PLUGIN_DIR", plugins)
            .env_remove("HIPDNN_LOG_LEVEL")
            .env_remove("HIPDNN_HEUR_FALLBACK_ENGINE_ORDER")
            .output()
            .expect("run hipdnn");
        Run::from(output)
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
