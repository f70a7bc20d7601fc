//! `hipdnn` with the MIOpen plugin installed: on this machine without ROCm it says why
//! the engines are missing; pointed at the software MIOpen and HIP (the test library
//! the provider's tests run on) it lists both MIOpen engines and runs a convolution +
//! bias + ReLU graph on HIP device memory, checked against the CPU reference.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use hipdnn_backend::frontend::DataType;
use hipdnn_test_sdk::graphs::{self, ConvSpec, Layout};

/// `[the MIOpen plugin, the software MIOpen]`, built with a nested cargo.
fn libraries() -> [PathBuf; 2] {
    let libs = hipdnn_conformance::cdylib::build_cdylibs(
        env!("CARGO_MANIFEST_DIR"),
        &["hipdnn-miopen-provider", "hipdnn-soft-miopen"],
        "cli-miopen-test",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    [libs[0].clone(), libs[1].clone()]
}

fn hipdnn(dir: &Path, args: &[&str], env: &[(&str, &Path)]) -> (String, String, i32) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_hipdnn"));
    command
        .args(args)
        .current_dir(dir)
        .env("HIPDNN_PLUGIN_DIR", dir.join("engines"))
        .env_remove("HIPDNN_MIOPEN_LIBRARY")
        .env_remove("HIPDNN_HIP_LIBRARY");
    for (k, v) in env {
        command.env(k, v);
    }
    let Output {
        status,
        stdout,
        stderr,
    } = command.output().unwrap();
    (
        String::from_utf8_lossy(&stdout).into_owned(),
        String::from_utf8_lossy(&stderr).into_owned(),
        status.code().unwrap_or(-1),
    )
}

#[test]
fn hipdnn_runs_a_graph_on_miopen_engine_through_the_software_miopen() {
    let [plugin, soft] = libraries();
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("engines")).unwrap();
    std::fs::copy(
        &plugin,
        dir.path().join("engines").join(plugin.file_name().unwrap()),
    )
    .unwrap();
    let spec = ConvSpec::new(&[2, 4, 8, 8], &[6, 4, 3, 3]).with(|p| p.padding(1));
    let graph = graphs::conv_bias_relu(&spec, &Layout::Nhwc, DataType::Half);
    std::fs::write(
        dir.path().join("g.json"),
        serde_json::to_string(&graph).unwrap(),
    )
    .unwrap();

    // No ROCm here (CI): the plugin loads and says why its engines are missing.
    if hipdnn_rocm_sys::hip::Hip::open().is_err() {
        let (out, err, code) = hipdnn(dir.path(), &["plugins"], &[]);
        assert_eq!(code, 0, "{out}{err}");
        assert!(
            out.contains(
                "libhipdnn_miopen_provider.so (unavailable here: MIOPEN_ENGINE is unavailable: "
            ) && out.contains("engines not offered: MIOPEN_ENGINE, MIOPEN_ENGINE_DETERMINISTIC"),
            "{out}"
        );
    }

    let env: [(&str, &Path); 2] = [
        ("HIPDNN_MIOPEN_LIBRARY", &soft),
        ("HIPDNN_HIP_LIBRARY", &soft),
    ];
    let (out, err, code) = hipdnn(dir.path(), &["engines"], &env);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains(" MIOPEN_ENGINE ") && out.contains(" MIOPEN_ENGINE_DETERMINISTIC "),
        "{out}"
    );
    for engine in ["MIOPEN_ENGINE", "MIOPEN_ENGINE_DETERMINISTIC"] {
        let (out, err, code) = hipdnn(
            dir.path(),
            &[
                "run", "g.json", "--engine", engine, "--check", "--iters", "2",
            ],
            &env,
        );
        assert_eq!(code, 0, "{out}{err}");
        assert!(
            out.contains(&format!("engine: {engine} ("))
                && out.contains("device: HIP device 0 (")
                && out.contains("check: passed"),
            "{out}"
        );
    }
}
