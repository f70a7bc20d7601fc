//! Discovery and loading of real plugins: the well-behaved test plugins load with what
//! they report, each misbehaving one is rejected with its own message, and loading goes
//! on past every failure.
//!
//! The plugins are this crate's `[[example]]` cdylibs in `target/<profile>/examples/`,
//! which plain `cargo test` builds (`cargo test --test loading` alone does not: run
//! `cargo build -p hipdnn-backend --examples` first).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use hipdnn_backend::discovery::SearchEnvironment;
use hipdnn_backend::{EngineName, LoadError, LoadingMode, PluginPaths, discover, load_plugins};
use hipdnn_data_sdk::engine_name_to_id;

mod support;
use support::{Capture, install};

const GOOD: [&str; 3] = ["good_plugin", "ok_api_major_zero", "ok_no_api_version"];
const BAD: [&str; 9] = [
    "bad_api_major_two",
    "bad_api_unparsable",
    "bad_duplicate_ids",
    "bad_get_name_fails",
    "bad_inconsistent_count",
    "bad_missing_symbol",
    "bad_panics_everywhere",
    "bad_plugin_type",
    "bad_zero_engines",
];

fn only(dir: &Path) -> PluginPaths {
    let mut config = PluginPaths::new();
    config.set_engine_plugin_paths([dir], LoadingMode::Absolute);
    config
}

fn env(dir: &Path) -> SearchEnvironment {
    SearchEnvironment {
        library_dir: dir.to_path_buf(),
        env_plugin_dir: None,
    }
}

#[test]
fn bad_plugins_are_rejected_with_their_reason_and_good_ones_load() {
    let dir = tempfile::tempdir().expect("a temp dir");
    install(dir.path(), &GOOD);
    install(dir.path(), &BAD);

    let found = discover(&only(dir.path()), &env(dir.path()));
    assert!(found.problems.is_empty(), "{:?}", found.problems);
    assert_eq!(found.files.len(), GOOD.len() + BAD.len());

    let capture = Capture::default();
    let (loaded, failed) = capture.during(|| load_plugins(&found.files));

    // The good ones, in load (path) order, with what they reported.
    let names: Vec<&str> = loaded.iter().map(|p| p.name()).collect();
    assert_eq!(
        names,
        [
            "example_relu_plugin",
            "ok_api_major_zero",
            "ok_no_api_version"
        ]
    );

    let good = &loaded[0];
    assert_eq!(good.version(), "0.1.0");
    assert_eq!(good.api_version(), &semver::Version::new(1, 4, 0));
    assert_eq!(good.engines().len(), 1);
    assert_eq!(
        good.engines()[0].id,
        engine_name_to_id("EXAMPLE_RELU_ENGINE")
    );
    assert_eq!(
        good.engines()[0].name,
        EngineName::Named("EXAMPLE_RELU_ENGINE".into())
    );
    assert!(good.exports_engine_names());
    assert!(!good.supports_overrides());
    assert!(!good.supports_serialization());
    assert_eq!(
        good.path(),
        dir.path().canonicalize().unwrap().join("libgood_plugin.so")
    );

    let zero = &loaded[1];
    assert_eq!(zero.api_version(), &semver::Version::new(0, 9, 0));
    assert_eq!(zero.version(), "0.0.1");

    let minimal = &loaded[2];
    assert_eq!(minimal.api_version(), &semver::Version::new(1, 0, 0));
    let ids: Vec<i64> = minimal.engines().iter().map(|e| e.id).collect();
    assert_eq!(ids, [101, 102]);
    assert!(
        minimal
            .engines()
            .iter()
            .all(|e| e.name == EngineName::Unnamed)
    );
    assert!(!minimal.exports_engine_names());

    // The bad ones, each with its reason.
    let reasons: BTreeMap<String, (PathBuf, LoadError)> = failed
        .into_iter()
        .map(|(path, error)| {
            let stem = path.file_stem().unwrap().to_string_lossy();
            (stem.trim_start_matches("lib").to_owned(), (path, error))
        })
        .collect();
    assert_eq!(reasons.keys().map(String::as_str).collect::<Vec<_>>(), BAD);
    let message = |name: &str| {
        let (path, error) = &reasons[name];
        assert_eq!(error.path(), path);
        (path.display().to_string(), error.to_string())
    };

    let (p, m) = message("bad_plugin_type");
    assert_eq!(
        m,
        format!(
            "plugin {p} has type HIPDNN_PLUGIN_TYPE_HEURISTIC(2), expected \
             HIPDNN_PLUGIN_TYPE_ENGINE(1)"
        )
    );
    let (p, m) = message("bad_missing_symbol");
    assert_eq!(
        m,
        format!(
            "plugin {p}: Failed to get symbol: hipdnnEnginePluginExecuteOpGraph (Error: the \
             plugin does not export this required symbol)"
        )
    );
    let (p, m) = message("bad_api_unparsable");
    assert!(
        m.starts_with(&format!(
            "plugin {p} reports api version `one.two`, which is not a semantic version: "
        )),
        "{m}"
    );
    let (p, m) = message("bad_api_major_two");
    assert_eq!(
        m,
        format!(
            "plugin {p} implements engine plugin api 2.1.0, but this backend supports major \
             version 1"
        )
    );
    let (p, m) = message("bad_zero_engines");
    assert_eq!(m, format!("plugin {p} reports no engines"));
    let (p, m) = message("bad_inconsistent_count");
    assert_eq!(
        m,
        format!("plugin {p} reported 3 engines, then wrote 2 engine ids")
    );
    let (p, m) = message("bad_duplicate_ids");
    assert_eq!(m, format!("plugin {p} reports engine id 7 more than once"));
    let (p, m) = message("bad_get_name_fails");
    assert_eq!(
        m,
        format!(
            "plugin {p}: Failed to get the plugin name. Status: \
             HIPDNN_PLUGIN_STATUS_INTERNAL_ERROR(3), Error: the plugin name is unavailable"
        )
    );
    let (p, m) = message("bad_panics_everywhere");
    assert_eq!(
        m,
        format!(
            "plugin {p}: Failed to get the plugin name. Status: \
             HIPDNN_PLUGIN_STATUS_INTERNAL_ERROR(3), Error: panic in hipdnnPluginGetName: \
             deliberate panic in hipdnnPluginGetName"
        )
    );

    // Each rejection was logged with hipDNN's prefix; the tolerated oddities at info.
    let logs = capture.messages();
    let logged = |needle: &str| logs.iter().any(|line| line.contains(needle));
    assert!(
        logged("does not report its api version: assuming 1.0.0"),
        "{logs:#?}"
    );
    assert!(logged(
        "implements engine plugin api 0.9.0: accepted as a pre-1.0 plugin"
    ));
    assert!(logged(
        "does not export the optional symbol `hipdnnPluginSetLoggingCallback`"
    ));
    for (path, error) in reasons.values() {
        let line = format!("Error loading plugin from [{}]: {error}", path.display());
        assert!(
            logs.contains(&line),
            "missing log line {line:?} in {logs:#?}"
        );
    }
}

#[test]
fn a_plugin_reached_through_two_paths_loads_once() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let links = tempfile::tempdir().expect("a temp dir");
    install(dir.path(), &["good_plugin"]);
    let real = dir.path().join("libgood_plugin.so");
    std::os::unix::fs::symlink(&real, links.path().join("libalias.so")).expect("symlink");

    let mut config = PluginPaths::new();
    config.set_engine_plugin_paths(
        [
            dir.path().to_path_buf(),
            links.path().to_path_buf(),
            links.path().join("libalias.so"),
            real.clone(),
        ],
        LoadingMode::Absolute,
    );
    let found = discover(&config, &env(dir.path()));
    assert!(found.problems.is_empty(), "{:?}", found.problems);
    assert_eq!(found.files, [real.canonicalize().unwrap()]);

    let (loaded, failed) = load_plugins(&found.files);
    assert!(failed.is_empty(), "{failed:?}");
    assert_eq!(loaded.len(), 1);
    assert_eq!(loaded[0].name(), "example_relu_plugin");
}

#[test]
fn env_dir_replaces_the_default_for_real_plugins() {
    let lib = tempfile::tempdir().expect("a temp dir");
    let default = lib.path().join("hipdnn_plugins/engines");
    std::fs::create_dir_all(&default).expect("mkdir");
    install(&default, &["good_plugin"]);
    let other = lib.path().join("elsewhere");
    std::fs::create_dir(&other).expect("mkdir");
    install(&other, &["ok_no_api_version"]);

    let default_env = env(lib.path());
    let found = discover(&PluginPaths::new(), &default_env);
    let (loaded, _) = load_plugins(&found.files);
    assert_eq!(
        loaded.iter().map(|p| p.name()).collect::<Vec<_>>(),
        ["example_relu_plugin"]
    );

    let replaced = SearchEnvironment {
        env_plugin_dir: Some("elsewhere".into()),
        ..default_env
    };
    let found = discover(&PluginPaths::new(), &replaced);
    let (loaded, _) = load_plugins(&found.files);
    assert_eq!(
        loaded.iter().map(|p| p.name()).collect::<Vec<_>>(),
        ["ok_no_api_version"]
    );
}

#[test]
fn loading_goes_on_past_files_that_do_not_open() {
    let dir = tempfile::tempdir().expect("a temp dir");
    install(dir.path(), &["good_plugin"]);
    let junk = dir.path().join("libjunk.so");
    std::fs::write(&junk, b"not an ELF file").expect("write");
    let found = discover(&only(dir.path()), &env(dir.path()));
    let (loaded, failed) = load_plugins(&found.files);
    assert_eq!(loaded.len(), 1);
    assert_eq!(failed.len(), 1);
    assert!(
        matches!(failed[0].1, LoadError::NotLoadable { .. }),
        "{}",
        failed[0].1
    );
}

/// An interrupted install leaves a prefix of a plugin: `dlopen` would map its missing
/// pages and die of SIGBUS reading them. Every prefix is refused before `dlopen`, naming
/// the file and what is cut, and the process goes on loading the whole plugin.
#[test]
fn truncated_plugin_is_refused_not_loaded() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let whole = std::fs::read(support::example_library("good_plugin")).expect("read the plugin");
    let len = whole.len();
    let cuts = [
        0,
        63,
        1000,
        3000,
        64 << 10,
        1536 << 10,
        len / 2,
        len - 4096,
        len - 1,
    ];
    for cut in cuts {
        std::fs::write(
            dir.path().join(format!("libtrunc_{cut:09}.so")),
            &whole[..cut],
        )
        .expect("write a prefix");
    }
    install(dir.path(), &["good_plugin"]);
    let found = discover(&only(dir.path()), &env(dir.path()));
    assert_eq!(found.files.len(), cuts.len() + 1);

    let capture = Capture::default();
    let (loaded, failed) = capture.during(|| load_plugins(&found.files));
    assert_eq!(
        loaded.iter().map(|p| p.name()).collect::<Vec<_>>(),
        ["example_relu_plugin"]
    );
    assert_eq!(failed.len(), cuts.len());
    let logs = capture.messages();
    for ((path, error), cut) in failed.iter().zip(cuts) {
        let text = error.to_string();
        assert!(
            matches!(error, LoadError::NotLoadable { .. }),
            "cut at {cut}: {text}"
        );
        assert!(
            text.starts_with(&format!(
                "plugin {} is not a loadable shared object: ",
                path.display()
            )),
            "{text}"
        );
        if cut >= 4096 {
            assert!(
                text.contains(&format!("extends past the end of the file ({cut} bytes)")),
                "cut at {cut}: {text}"
            );
        }
        let line = format!("Error loading plugin from [{}]: {text}", path.display());
        assert!(logs.contains(&line), "missing {line:?} in {logs:#?}");
    }
}

/// A plugin built for another machine is refused with both machines named, instead of
/// the loader's "No such file or directory".
#[test]
fn plugin_for_another_machine_is_refused_with_the_machine_named() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let mut bytes =
        std::fs::read(support::example_library("good_plugin")).expect("read the plugin");
    let (ours, other, ours_name, other_name) = if cfg!(target_arch = "aarch64") {
        (183u16, 62u16, "AArch64", "x86-64")
    } else {
        (62, 183, "x86-64", "AArch64")
    };
    assert_eq!(u16::from_le_bytes([bytes[18], bytes[19]]), ours);
    bytes[18..20].copy_from_slice(&other.to_le_bytes());
    let path = dir.path().join("libforeign.so");
    std::fs::write(&path, &bytes).expect("write");
    let (loaded, failed) = load_plugins(&[&path]);
    assert!(loaded.is_empty());
    assert_eq!(
        failed[0].1.to_string(),
        format!(
            "plugin {} is not a loadable shared object: it is built for {other_name} \
             (e_machine {other}), but this process runs on {ours_name} (e_machine {ours})",
            path.display()
        )
    );
}

/// An interrupted copy that had reserved the whole size: the first 3000 bytes of a real
/// plugin, then zeros. Every table lies within the file, but the dynamic section is
/// empty, on which glibc's loader crashes: it is refused, named, before `dlopen`.
#[test]
fn plugin_with_a_zero_filled_tail_is_refused_before_dlopen() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let mut bytes =
        std::fs::read(support::example_library("good_plugin")).expect("read the plugin");
    bytes[3000..].fill(0);
    let path = dir.path().join("libpadded.so");
    std::fs::write(&path, &bytes).expect("write");
    let (loaded, failed) = load_plugins(&[&path]);
    assert!(loaded.is_empty());
    let message = failed[0].1.to_string();
    assert!(
        message.starts_with(&format!(
            "plugin {} is not a loadable shared object: its dynamic section",
            path.display()
        )) && message.ends_with("the file is truncated or corrupt"),
        "{message}"
    );
}

/// `hipdnnEnginePluginGetEngineName` answering SUCCESS with a null or an empty name
/// gives no name: the engines are recorded unnamed, as if the plugin had declined, and
/// the plugin loads (hipDNN's reading; admission keeps them).
#[test]
fn a_null_or_empty_engine_name_reads_as_no_name() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = support::install_as(dir.path(), "ok_unnamed_engines", "ok_unnamed_engines");
    let (loaded, failed) = load_plugins(&[&path]);
    assert!(failed.is_empty(), "{failed:?}");
    let engines = loaded[0].engines();
    assert_eq!(
        engines.iter().map(|e| e.id).collect::<Vec<_>>(),
        [821, 822, engine_name_to_id("MIOPEN_ENGINE")]
    );
    assert!(
        engines.iter().all(|e| e.name == EngineName::Unnamed),
        "{engines:?}"
    );
    assert!(loaded[0].exports_engine_names());
}
