//! The handle lifecycle against real plugins: each plugin that misbehaves when a handle
//! is made (or whose engines fail admission) is skipped with its own message while the
//! good plugin in the same directory keeps serving; plugin paths are frozen while a
//! handle lives; ADDITIVE vs ABSOLUTE with `HIPDNN_PLUGIN_DIR`; LAZY vs EAGER unloading;
//! handles made and destroyed from several threads; the stream fan-out; C descriptors
//! keeping their handle alive.
//!
//! The plugin set, the unload mode and the environment are process-global, so every
//! test takes [`serial`] first and sets the plugin paths (and the mode it relies on)
//! itself, with no handle alive.
//!
//! The plugins are this crate's `[[example]]` cdylibs in `target/<profile>/examples/`,
//! which plain `cargo test` builds (`cargo test --test handles` alone does not: run
//! `cargo build -p hipdnn-backend --examples` first).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use hipdnn_backend::manager::{live_handle_count, plugin_unload_mode};
use hipdnn_backend::status::HIPDNN_STATUS_NOT_SUPPORTED;
use hipdnn_backend::{
    EngineSummary, Handle, LoadingMode, UnloadMode, set_engine_plugin_paths, set_plugin_unload_mode,
};
use hipdnn_data_sdk::{engine_id_to_hex, engine_name_to_id};
use hipdnn_plugin_abi::{
    HIPDNN_PLUGIN_STATUS_INTERNAL_ERROR, HIPDNN_PLUGIN_STATUS_NOT_INITIALIZED, hipStream_t,
};
use tracing::Level;

mod support;
use support::capi::{c_last_error, use_only};
use support::{Capture, install, install_as};

const RELU: &str = "EXAMPLE_RELU_ENGINE";
const GOOD_NAME: &str = "example_relu_plugin";

/// Serializes the tests of this binary (the plugin set is process-global). A failed
/// test poisons the lock; the next one still runs.
fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    let guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    assert_eq!(live_handle_count(), 0, "a previous test leaked a handle");
    guard
}

fn temp_dir() -> tempfile::TempDir {
    tempfile::tempdir().expect("a temp dir")
}

/// The "loaded plugin <name> ..." info lines among `lines`.
fn load_lines(lines: &[(Level, String)]) -> Vec<&str> {
    lines
        .iter()
        .filter(|(level, line)| *level == Level::INFO && line.starts_with("loaded plugin "))
        .map(|(_, line)| line.as_str())
        .collect()
}

/// Sets an environment variable for the life of the guard, then restores it.
struct EnvGuard {
    name: &'static str,
    previous: Option<OsString>,
}

impl EnvGuard {
    /// Callers hold [`serial`]: no other test of this binary touches the environment.
    fn set(name: &'static str, value: &Path) -> Self {
        let previous = std::env::var_os(name);
        // SAFETY: every test of this binary that reads or writes the environment (through
        // the backend's discovery) holds the `serial` lock, and no other thread of the
        // test is running while it is held.
        unsafe { std::env::set_var(name, value) };
        Self { name, previous }
    }
}

impl Drop for EnvGuard {
    fn drop(&mut self) {
        // SAFETY: as in `EnvGuard::set`: the `serial` lock is still held.
        unsafe {
            match &self.previous {
                Some(value) => std::env::set_var(self.name, value),
                None => std::env::remove_var(self.name),
            }
        }
    }
}

fn summary(name: &str, id: i64, plugin: &str, version: &str) -> EngineSummary {
    EngineSummary {
        id,
        name: name.to_owned(),
        plugin_name: plugin.to_owned(),
        plugin_version: version.to_owned(),
        plugin_type: "engine",
    }
}

#[test]
fn each_hostile_plugin_is_skipped_with_its_message_and_the_good_one_serves() {
    let _serial = serial();
    let dir = temp_dir();
    install(
        dir.path(),
        &[
            "bad_create_fails",
            "bad_create_panics",
            "bad_engine_name",
            "bad_null_handle",
            "collide_a",
            "collide_b",
        ],
    );
    let good = install_as(dir.path(), "good_plugin", "good_plugin");
    // The same plugin again under a later name: its engine id is a duplicate.
    let dup = install_as(dir.path(), "good_plugin", "good_plugin_dup");
    use_only(dir.path());
    set_plugin_unload_mode(UnloadMode::Lazy);

    let capture = Capture::default();
    let handle = capture.during(Handle::new);
    // The process survived bad_create_panics' Create.
    let logs = capture.take();
    let errors: Vec<&str> = logs
        .iter()
        .filter(|(level, _)| *level == Level::ERROR)
        .map(|(_, line)| line.as_str())
        .collect();
    let logged = |line: &str| {
        assert!(
            errors.contains(&line),
            "missing error log {line:?} in {logs:#?}"
        )
    };

    // Every file loaded (nothing here fails the handshake), in path order.
    let canon = |file: &str| dir.path().canonicalize().unwrap().join(file);
    assert_eq!(
        handle.loaded_plugin_paths(),
        [
            canon("libbad_create_fails.so"),
            canon("libbad_create_panics.so"),
            canon("libbad_engine_name.so"),
            canon("libbad_null_handle.so"),
            canon("libcollide_a.so"),
            canon("libcollide_b.so"),
            good.clone(),
            dup.clone(),
        ]
    );
    assert_eq!(load_lines(&logs).len(), 8, "{logs:#?}");

    // Create fails (a status and a last error): skipped, with the plugin's message.
    logged(&format!(
        "Failed to create handle for plugin 'bad_create_fails': Failed to create a plugin \
         handle. Status: {HIPDNN_PLUGIN_STATUS_NOT_INITIALIZED}, Error: no device for \
         bad_create_fails"
    ));
    // Create panics: the SDK turns it into INTERNAL_ERROR; skipped the same way.
    logged(&format!(
        "Failed to create handle for plugin 'bad_create_panics': Failed to create a plugin \
         handle. Status: {HIPDNN_PLUGIN_STATUS_INTERNAL_ERROR}, Error: panic in \
         hipdnnEnginePluginCreate: deliberate panic in create_handle"
    ));
    // The handle says which plugins made no handle here, and why (the plugin's words
    // where it gave some), and which engines it therefore does not offer.
    let unavailable: Vec<(&str, &str, Vec<String>)> = handle
        .unavailable_plugins()
        .iter()
        .map(|p| (p.name.as_str(), p.reason.as_str(), p.engines.clone()))
        .collect();
    assert_eq!(
        unavailable,
        [
            (
                "bad_create_fails",
                "no device for bad_create_fails",
                vec![engine_id_to_hex(901)]
            ),
            (
                "bad_create_panics",
                "panic in hipdnnEnginePluginCreate: deliberate panic in create_handle",
                vec!["CREATE_PANICS_ENGINE".to_owned()]
            ),
            (
                "bad_null_handle",
                "hipdnnEnginePluginCreate succeeded but returned a null handle",
                vec![engine_id_to_hex(902)]
            ),
            (
                "collide_b",
                "hipdnnEnginePluginCreate returned the handle plugin 'collide_a' returned (a \
                 symbol collision between plugins: build them with -fvisibility=hidden)",
                vec![engine_id_to_hex(904)]
            ),
        ]
    );
    assert_eq!(
        handle.unavailable_plugins()[0].path,
        canon("libbad_create_fails.so")
    );
    logged("Plugin 'bad_null_handle' returned null handle");
    logged(
        "Plugin 'collide_b' returned a handle that collides with another plugin ('collide_a'). \
         This may indicate a symbol collision between plugins. Ensure all plugins are built \
         with -fvisibility=hidden.",
    );
    // Admission: the misnamed engine is dropped, the plugin's other engine kept.
    let real = engine_name_to_id("BAD_ENGINE_NAME_REAL_ENGINE");
    logged(&format!(
        "Plugin 'bad_engine_name' names engine {} \"NOT_THIS_ENGINES_NAME\", but that name \
         hashes to {}; the engine is dropped",
        engine_id_to_hex(real),
        engine_id_to_hex(engine_name_to_id("NOT_THIS_ENGINES_NAME"))
    ));
    // Admission: the duplicate id stays with the first plugin in path order.
    let relu = engine_name_to_id(RELU);
    logged(&format!(
        "Plugin '{GOOD_NAME}' ([{}]) declares engine {} ({RELU}), which plugin '{GOOD_NAME}' \
         ([{}]) already provides; the first plugin keeps it and this engine is dropped",
        dup.display(),
        engine_id_to_hex(relu),
        good.display()
    ));
    // Both dropped engines are listed with why, next to the plugin that declared them.
    let dropped: Vec<(&str, String, &str, &Path, &str)> = handle
        .dropped_engines()
        .iter()
        .map(|e| {
            (
                e.name.as_str(),
                engine_id_to_hex(e.id),
                e.plugin_name.as_str(),
                e.plugin_path.as_path(),
                e.reason.as_str(),
            )
        })
        .collect();
    let not_this = engine_id_to_hex(engine_name_to_id("NOT_THIS_ENGINES_NAME"));
    let duplicate_reason = format!(
        "plugin '{GOOD_NAME}' ([{}]) already provides this id; the first plugin keeps it",
        good.display()
    );
    assert_eq!(
        dropped,
        [
            (
                "NOT_THIS_ENGINES_NAME",
                engine_id_to_hex(real),
                "bad_engine_name",
                canon("libbad_engine_name.so").as_path(),
                format!(
                    "its name hashes to {not_this}, not to its id {}",
                    engine_id_to_hex(real)
                )
                .as_str(),
            ),
            (
                RELU,
                engine_id_to_hex(relu),
                GOOD_NAME,
                dup.as_path(),
                duplicate_reason.as_str(),
            ),
        ]
    );
    // collide_b's handle was given back to it and accepted (its Destroy checks the value).
    assert!(
        !errors.iter().any(|line| line.contains("destroy")),
        "{errors:#?}"
    );

    // Plugin handles: bad_engine_name, collide_a, good_plugin and good_plugin_dup (which
    // has no engine left but made a handle).
    assert_eq!(handle.plugin_handle_count(), 4);

    // What the handle serves, sorted by name: collide_a's unnamed engine (hex name), the
    // kept engine of bad_engine_name, the good plugin's engine.
    let kept = engine_name_to_id("BAD_ENGINE_NAME_KEPT_ENGINE");
    assert_eq!(
        handle.engines(),
        [
            summary(&engine_id_to_hex(903), 903, "collide_a", "0.0.1"),
            summary(
                "BAD_ENGINE_NAME_KEPT_ENGINE",
                kept,
                "bad_engine_name",
                "0.0.1"
            ),
            summary(RELU, relu, GOOD_NAME, "0.1.0"),
        ]
    );
    assert_eq!(handle.engine_id_by_name(RELU), Ok(relu));
    assert_eq!(
        handle.engine_id_by_name("BAD_ENGINE_NAME_KEPT_ENGINE"),
        Ok(kept)
    );
    let served_by = handle.plugin_for_engine(relu).expect("routed");
    assert_eq!(served_by.path(), good);
    assert_eq!(served_by.name(), GOOD_NAME);
    assert_eq!(
        handle.plugin_for_engine(kept).map(|p| p.name()),
        Some("bad_engine_name")
    );

    // Engines of skipped plugins and dropped engines are invisible.
    let panics = engine_name_to_id("CREATE_PANICS_ENGINE");
    for id in [901, 902, 904, real, panics] {
        assert!(handle.plugin_for_engine(id).is_none(), "{id}");
    }
    for name in [
        "CREATE_PANICS_ENGINE",
        "NOT_THIS_ENGINES_NAME",
        "BAD_ENGINE_NAME_REAL_ENGINE",
        "NO_SUCH_ENGINE",
        "",
    ] {
        let error = handle.engine_id_by_name(name).expect_err(name);
        assert_eq!(error.status, HIPDNN_STATUS_NOT_SUPPORTED, "{name}");
        assert_eq!(error.message, format!("no engine named \"{name}\""));
    }

    // Destroying the handle gives every plugin handle back without complaint.
    capture.during(|| drop(handle));
    assert_eq!(live_handle_count(), 0);
    let logs = capture.take();
    assert!(
        !logs.iter().any(|(level, _)| *level == Level::ERROR),
        "{logs:#?}"
    );

    // The process goes on: a second handle (LAZY: same set, no reload) is skipped and
    // served the same way.
    let again = capture.during(Handle::new);
    let logs = capture.take();
    assert!(load_lines(&logs).is_empty(), "{logs:#?}");
    assert!(
        logs.iter()
            .any(|(_, line)| line.contains("panic in hipdnnEnginePluginCreate")),
        "{logs:#?}"
    );
    assert_eq!(again.plugin_handle_count(), 4);
    assert_eq!(again.engine_id_by_name(RELU), Ok(relu));
}

#[test]
fn plugin_paths_cannot_change_while_a_handle_lives() {
    let _serial = serial();
    let first = temp_dir();
    install(first.path(), &["good_plugin"]);
    let second = temp_dir();
    // An other plugin that makes handles (ok_no_api_version's Create always fails).
    let other = install_as(second.path(), "collide_a", "collide_a");
    use_only(first.path());

    let handle = Handle::new();
    assert_eq!(live_handle_count(), 1);
    for mode in [LoadingMode::Absolute, LoadingMode::Additive] {
        let error = set_engine_plugin_paths([second.path()], mode).expect_err("a handle lives");
        assert_eq!(error.status, HIPDNN_STATUS_NOT_SUPPORTED);
        assert_eq!(
            error.message,
            "engine plugin paths cannot change while 1 handle(s) exist"
        );
    }
    // A second handle counts too; the refused call changed nothing.
    let second_handle = Handle::new();
    let error = set_engine_plugin_paths(Vec::<PathBuf>::new(), LoadingMode::Absolute)
        .expect_err("two handles live");
    assert_eq!(error.status, HIPDNN_STATUS_NOT_SUPPORTED);
    assert!(error.message.contains("2 handle(s)"), "{}", error.message);
    assert_eq!(
        second_handle.loaded_plugin_paths(),
        handle.loaded_plugin_paths()
    );
    assert!(second_handle.engine_id_by_name(RELU).is_ok());
    drop(second_handle);

    // One handle still lives.
    assert!(set_engine_plugin_paths([second.path()], LoadingMode::Absolute).is_err());
    drop(handle);
    assert_eq!(live_handle_count(), 0);

    // Now it succeeds and the next handle loads from the new paths (LAZY kept the old
    // set until the paths changed).
    set_engine_plugin_paths([second.path()], LoadingMode::Absolute).expect("no handle lives");
    let handle = Handle::new();
    assert_eq!(handle.loaded_plugin_paths(), [other]);
    let ids: Vec<i64> = handle.engines().iter().map(|e| e.id).collect();
    assert_eq!(ids, [903]);
    assert_eq!(
        handle.engine_id_by_name(RELU).map_err(|e| e.status),
        Err(HIPDNN_STATUS_NOT_SUPPORTED)
    );
}

#[test]
fn additive_searches_the_env_dir_too_and_absolute_only_the_custom_paths() {
    let _serial = serial();
    let env_dir = temp_dir();
    let good = install_as(env_dir.path(), "good_plugin", "good_plugin");
    let custom = temp_dir();
    // Makes handles, serving engine 903 (unnamed: its hex is its name).
    let custom_plugin = install_as(custom.path(), "collide_a", "collide_a");
    let _env = EnvGuard::set("HIPDNN_PLUGIN_DIR", &env_dir.path().canonicalize().unwrap());

    let loaded = |paths: Vec<PathBuf>, mode: LoadingMode| {
        set_engine_plugin_paths(paths, mode).expect("no handle is alive");
        let handle = Handle::new();
        let mut paths = handle.loaded_plugin_paths();
        paths.sort();
        let mut names: Vec<String> = handle.engines().into_iter().map(|e| e.name).collect();
        names.sort();
        (paths, names)
    };
    let mut both = vec![good.clone(), custom_plugin.clone()];
    both.sort();

    // ADDITIVE: the environment directory (it replaces the default) and the custom path.
    let (paths, names) = loaded(vec![custom.path().to_path_buf()], LoadingMode::Additive);
    assert_eq!(paths, both);
    assert_eq!(names, [engine_id_to_hex(903), RELU.to_owned()]);

    // ADDITIVE with no custom path: the environment directory only.
    let (paths, names) = loaded(Vec::new(), LoadingMode::Additive);
    assert_eq!(paths, std::slice::from_ref(&good));
    assert_eq!(names, [RELU]);

    // ABSOLUTE: only the custom path, the environment directory is not searched.
    let (paths, names) = loaded(vec![custom.path().to_path_buf()], LoadingMode::Absolute);
    assert_eq!(paths, std::slice::from_ref(&custom_plugin));
    assert_eq!(names, [engine_id_to_hex(903)]);

    // ABSOLUTE with no path at all: no plugin, and that is not an error.
    let (paths, names) = loaded(Vec::new(), LoadingMode::Absolute);
    assert!(paths.is_empty() && names.is_empty());
    let empty = Handle::new();
    assert_eq!(empty.plugin_handle_count(), 0);
    drop(empty);

    // The file itself given as a path, ADDITIVE: the env plugin and it, loaded once each.
    let (paths, _) = loaded(
        vec![custom_plugin.clone(), custom.path().to_path_buf()],
        LoadingMode::Additive,
    );
    assert_eq!(paths, both);
}

#[test]
fn lazy_keeps_the_set_after_the_last_handle_and_eager_unloads_it() {
    let _serial = serial();
    let dir = temp_dir();
    let good = install_as(dir.path(), "good_plugin", "good_plugin");
    set_plugin_unload_mode(UnloadMode::Lazy);
    assert_eq!(plugin_unload_mode(), UnloadMode::Lazy);
    use_only(dir.path());
    let capture = Capture::default();
    let load_count = |f: &dyn Fn()| {
        capture.during(f);
        let logs = capture.take();
        let lines = load_lines(&logs);
        assert!(
            lines
                .iter()
                .all(|line| line.starts_with(&format!("loaded plugin {GOOD_NAME} 0.1.0 ")))
        );
        lines.len()
    };

    // LAZY: loaded by the first handle, kept after it, reused by the next ones.
    assert_eq!(load_count(&|| drop(Handle::new())), 1);
    assert_eq!(live_handle_count(), 0);
    assert!(library_is_mapped(&good), "LAZY keeps the library loaded");
    assert_eq!(load_count(&|| drop(Handle::new())), 0);
    assert_eq!(load_count(&|| drop(Handle::new())), 0);

    // Switching to EAGER with no handle unloads now; every handle-less gap reloads.
    set_plugin_unload_mode(UnloadMode::Eager);
    assert_eq!(plugin_unload_mode(), UnloadMode::Eager);
    assert_eq!(load_count(&|| drop(Handle::new())), 1);
    assert_eq!(load_count(&|| drop(Handle::new())), 1);
    // Overlapping handles share one load, even in EAGER mode.
    assert_eq!(
        load_count(&|| {
            let first = Handle::new();
            let second = Handle::new();
            assert_eq!(live_handle_count(), 2);
            drop(first);
            let third = Handle::new();
            assert_eq!(
                third.engine_id_by_name(RELU),
                second.engine_id_by_name(RELU)
            );
        }),
        1
    );

    // Back to LAZY: the first handle loads, then the set stays.
    set_plugin_unload_mode(UnloadMode::Lazy);
    assert_eq!(load_count(&|| drop(Handle::new())), 1);
    assert_eq!(load_count(&|| drop(Handle::new())), 0);

    // A path change drops the kept set even with the same paths.
    use_only(dir.path());
    assert_eq!(load_count(&|| drop(Handle::new())), 1);
}

/// Switching EAGER → LAZY while a handle lives: the mode in force when the last handle
/// goes away is LAZY, so the set must stay loaded after it (`manager` docs: "in LAZY
/// unload mode ... it then stays loaded until the plugin paths change or the process
/// exits").
#[test]
fn switching_to_lazy_while_a_handle_lives_keeps_the_set_after_it() {
    let _serial = serial();
    let dir = temp_dir();
    install(dir.path(), &["good_plugin"]);
    set_plugin_unload_mode(UnloadMode::Eager);
    use_only(dir.path());
    let capture = Capture::default();

    let handle = capture.during(Handle::new);
    assert_eq!(load_lines(&capture.take()).len(), 1);
    set_plugin_unload_mode(UnloadMode::Lazy);
    drop(handle);

    capture.during(|| drop(Handle::new()));
    let logs = capture.take();
    set_plugin_unload_mode(UnloadMode::Lazy);
    assert!(
        load_lines(&logs).is_empty(),
        "the set was unloaded with the last handle although the mode was LAZY by then: \
         {logs:#?}"
    );
}

/// Whether `path` is loaded in this process (`dlopen` with `RTLD_NOLOAD`).
fn library_is_mapped(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let name = std::ffi::CString::new(path.as_os_str().as_bytes()).expect("no NUL");
    // SAFETY: a NUL-terminated path; RTLD_NOLOAD never loads (so runs no initializer),
    // it only takes a reference to an already loaded object.
    let raw = unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD) };
    if raw.is_null() {
        return false;
    }
    // SAFETY: gives back the reference `dlopen` just took.
    unsafe { libc::dlclose(raw) };
    true
}

#[test]
fn four_threads_create_and_destroy_handles_concurrently() {
    let _serial = serial();
    let dir = temp_dir();
    install(
        dir.path(),
        &["good_plugin", "collide_a", "collide_b", "bad_null_handle"],
    );
    use_only(dir.path());
    let relu = engine_name_to_id(RELU);

    for mode in [UnloadMode::Lazy, UnloadMode::Eager] {
        set_plugin_unload_mode(mode);
        std::thread::scope(|scope| {
            for _ in 0..4 {
                scope.spawn(|| {
                    for _ in 0..50 {
                        let handle = Handle::new();
                        // good_plugin and collide_a (collide_b collides, null is skipped).
                        assert_eq!(handle.plugin_handle_count(), 2);
                        assert_eq!(handle.engine_id_by_name(RELU), Ok(relu));
                        assert!(live_handle_count() >= 1);
                    }
                });
            }
        });
        assert_eq!(live_handle_count(), 0, "{mode:?}");
    }

    // A handle made on one thread is destroyed on another (Handle is Send).
    set_plugin_unload_mode(UnloadMode::Lazy);
    let handles: Vec<Handle> = (0..4).map(|_| Handle::new()).collect();
    assert_eq!(live_handle_count(), 4);
    std::thread::scope(|scope| {
        for handle in handles {
            scope.spawn(move || {
                assert_eq!(handle.engine_id_by_name(RELU), Ok(relu));
                drop(handle);
            });
        }
    });
    assert_eq!(live_handle_count(), 0);
}

#[test]
fn set_stream_reaches_every_plugin_handle_and_reads_back() {
    let _serial = serial();
    let dir = temp_dir();
    install(dir.path(), &["good_plugin", "collide_a"]);
    use_only(dir.path());

    let handle = Handle::new();
    assert_eq!(handle.plugin_handle_count(), 2);
    assert!(handle.stream().is_null(), "HIP's default stream at first");

    let dummy: hipStream_t = std::ptr::without_provenance_mut(0xdead_0000);
    // SAFETY: no plugin in this directory dereferences the stream (the SDK plugin stores
    // it, collide_a ignores it) and no work is enqueued on this handle.
    let set = unsafe { handle.set_stream(dummy) };
    assert_eq!(set, Ok(()));
    assert_eq!(handle.stream(), dummy);

    // SAFETY: null is HIP's default stream.
    let set = unsafe { handle.set_stream(std::ptr::null_mut()) };
    assert_eq!(set, Ok(()));
    assert!(handle.stream().is_null());

    // Another handle has its own stream.
    let other = Handle::new();
    // SAFETY: as above.
    unsafe { handle.set_stream(dummy) }.expect("accepted");
    assert!(other.stream().is_null());
    assert_eq!(handle.stream(), dummy);
}

/// The C descriptors own the handle they use: destroying the handle while a plan
/// descriptor lives leaves the plan usable (queried, refused on another handle) and its
/// destruction safe; the handle goes with the plan.
#[test]
fn a_plan_descriptor_keeps_its_handle_alive_after_hipdnn_destroy() {
    use hipdnn_backend::capi::*;
    use hipdnn_backend::status::{HIPDNN_STATUS_BAD_PARAM, HIPDNN_STATUS_SUCCESS, hipdnnStatus_t};
    use std::ffi::c_void;
    use std::ptr::{from_mut, from_ref, null_mut};

    #[track_caller]
    fn ok(status: hipdnnStatus_t) {
        assert_eq!(status, HIPDNN_STATUS_SUCCESS);
    }

    #[repr(align(64))]
    struct Buffers {
        x: [f32; 8],
        y: [f32; 8],
    }

    let _serial = serial();
    let dir = temp_dir();
    install(dir.path(), &["good_plugin"]);
    use_only(dir.path());
    let json = r#"{"name": "relu", "io_data_type": "FLOAT", "compute_data_type": "FLOAT",
        "tensors": [{"uid": 1, "name": "x", "dims": [2, 4], "strides": [4, 1]},
                    {"uid": 2, "name": "y", "dims": [2, 4], "strides": [4, 1]}],
        "nodes": [{"name": "act", "attributes_type": "PointwiseAttributes",
                   "attributes": {"operation": "RELU_FWD", "in_0_tensor_uid": 1,
                                  "out_0_tensor_uid": 2}}]}"#;
    let mut buffers = Buffers {
        x: [-2.0, -1.0, 0.0, 1.0, 2.0, -0.5, 3.0, -4.0],
        y: [0.0; 8],
    };
    let uids = [1i64, 2];
    let pointers: [*mut c_void; 2] = [buffers.x.as_mut_ptr().cast(), buffers.y.as_mut_ptr().cast()];

    // SAFETY: for the whole sequence: out-parameters are live locals, arrays hold the
    // declared type and count, descriptors are live until destroyed, and `handle` is used
    // only until `hipdnnDestroy`; the pack's pointers hold the graph's 8 floats each.
    unsafe {
        let mut handle: hipdnnHandle_t = null_mut();
        ok(hipdnnCreate(&mut handle));
        let mut graph: hipdnnBackendDescriptor_t = null_mut();
        ok(hipdnnBackendCreateAndDeserializeJsonGraph_ext(
            &mut graph,
            json.as_ptr().cast(),
            json.len(),
        ));
        ok(hipdnnBackendSetAttribute(
            graph,
            HIPDNN_ATTR_OPERATIONGRAPH_HANDLE,
            HIPDNN_TYPE_HANDLE,
            1,
            from_ref(&handle).cast(),
        ));
        ok(hipdnnBackendFinalize(graph));
        let mut heuristic: hipdnnBackendDescriptor_t = null_mut();
        ok(hipdnnBackendCreateDescriptor(
            HIPDNN_BACKEND_ENGINEHEUR_DESCRIPTOR,
            &mut heuristic,
        ));
        ok(hipdnnBackendSetAttribute(
            heuristic,
            HIPDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH,
            HIPDNN_TYPE_BACKEND_DESCRIPTOR,
            1,
            from_ref(&graph).cast(),
        ));
        let mode = HIPDNN_HEUR_MODE_FALLBACK;
        ok(hipdnnBackendSetAttribute(
            heuristic,
            HIPDNN_ATTR_ENGINEHEUR_MODE,
            HIPDNN_TYPE_HEUR_MODE,
            1,
            from_ref(&mode).cast(),
        ));
        ok(hipdnnBackendFinalize(heuristic));
        let mut config: hipdnnBackendDescriptor_t = null_mut();
        ok(hipdnnBackendCreateDescriptor(
            HIPDNN_BACKEND_ENGINECFG_DESCRIPTOR,
            &mut config,
        ));
        let mut count = 0i64;
        ok(hipdnnBackendGetAttribute(
            heuristic,
            HIPDNN_ATTR_ENGINEHEUR_RESULTS,
            HIPDNN_TYPE_BACKEND_DESCRIPTOR,
            1,
            &mut count,
            from_mut(&mut config).cast(),
        ));
        assert_eq!(count, 1);
        let mut plan: hipdnnBackendDescriptor_t = null_mut();
        ok(hipdnnBackendCreateDescriptor(
            HIPDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR,
            &mut plan,
        ));
        ok(hipdnnBackendSetAttribute(
            plan,
            HIPDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
            HIPDNN_TYPE_BACKEND_DESCRIPTOR,
            1,
            from_ref(&config).cast(),
        ));
        ok(hipdnnBackendFinalize(plan));
        let mut pack: hipdnnBackendDescriptor_t = null_mut();
        ok(hipdnnBackendCreateDescriptor(
            HIPDNN_BACKEND_VARIANT_PACK_DESCRIPTOR,
            &mut pack,
        ));
        ok(hipdnnBackendSetAttribute(
            pack,
            HIPDNN_ATTR_VARIANT_PACK_UNIQUE_IDS,
            HIPDNN_TYPE_INT64,
            2,
            uids.as_ptr().cast(),
        ));
        ok(hipdnnBackendSetAttribute(
            pack,
            HIPDNN_ATTR_VARIANT_PACK_DATA_POINTERS,
            HIPDNN_TYPE_VOID_PTR,
            2,
            pointers.as_ptr().cast(),
        ));
        ok(hipdnnBackendFinalize(pack));
        ok(hipdnnBackendExecute(handle, plan, pack));
        assert_eq!(buffers.y, [0.0, 0.0, 0.0, 1.0, 2.0, 0.0, 3.0, 0.0]);

        // Everything but the plan and the pack goes, then the handle.
        for descriptor in [config, heuristic, graph] {
            ok(hipdnnBackendDestroyDescriptor(descriptor));
        }
        ok(hipdnnDestroy(handle));
        assert_eq!(live_handle_count(), 1, "the plan keeps its handle");

        let mut workspace = -1i64;
        ok(hipdnnBackendGetAttribute(
            plan,
            HIPDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
            HIPDNN_TYPE_INT64,
            1,
            &mut count,
            from_mut(&mut workspace).cast(),
        ));
        assert_eq!((count, workspace), (1, 0));
        let mut other: hipdnnHandle_t = null_mut();
        ok(hipdnnCreate(&mut other));
        assert_ne!(other, handle, "the plan's handle is still allocated");
        assert_eq!(
            hipdnnBackendExecute(other, plan, pack),
            HIPDNN_STATUS_BAD_PARAM
        );
        ok(hipdnnDestroy(other));
        assert_eq!(live_handle_count(), 1);

        // The plan's execution context is destroyed through the handle, then the handle.
        ok(hipdnnBackendDestroyDescriptor(plan));
        assert_eq!(live_handle_count(), 0, "the handle went with the plan");
        ok(hipdnnBackendDestroyDescriptor(pack));
    }
}

/// A plugin whose two engine-count calls disagree at its (only) load is refused, and the
/// handle says so with that load's reason, even though loading the same library again
/// would succeed (it changes its answer afterwards).
#[test]
fn plugin_whose_engine_counts_disagree_is_listed_as_refused() {
    let _serial = serial();
    let dir = temp_dir();
    install(dir.path(), &["good_plugin"]);
    let odd = install_as(dir.path(), "bad_count_first_load", "bad_count_first_load");
    std::fs::write(dir.path().join("libtruncated.so"), b"\x7fELF\x02\x01").unwrap();
    std::fs::create_dir(dir.path().join("y.so")).unwrap();
    use_only(dir.path());
    set_plugin_unload_mode(UnloadMode::Lazy);

    let handle = Handle::new();
    let canon = |file: &str| dir.path().canonicalize().unwrap().join(file);
    assert_eq!(handle.loaded_plugin_paths(), [canon("libgood_plugin.so")]);
    let refused: Vec<(PathBuf, &str)> = handle
        .refused_plugins()
        .iter()
        .map(|r| (r.path.clone(), r.reason.as_str()))
        .collect();
    assert_eq!(
        refused,
        [
            (
                canon("y.so"),
                format!(
                    "plugin file {} is a directory, not a regular file: not opened",
                    canon("y.so").display()
                )
                .as_str()
            ),
            (
                odd.clone(),
                format!(
                    "plugin {} reported 3 engines, then wrote 2 engine ids",
                    odd.display()
                )
                .as_str()
            ),
            (
                canon("libtruncated.so"),
                format!(
                    "plugin {} is not a loadable shared object: the file is 6 bytes, shorter \
                     than an ELF header (64 bytes)",
                    canon("libtruncated.so").display()
                )
                .as_str()
            ),
        ]
    );
    // A second handle shares the set and its record (nothing is loaded again).
    let again = Handle::new();
    assert_eq!(again.refused_plugins(), handle.refused_plugins());
}

/// An engine whose plugin answers its name query with SUCCESS and a null or empty name
/// is kept, as in hipDNN: named from the registry when its id is registered, else by its
/// id in hex; nothing is dropped.
#[test]
fn engines_given_a_null_or_empty_name_are_kept_with_the_registry_or_hex_name() {
    let _serial = serial();
    let dir = temp_dir();
    let path = install_as(dir.path(), "ok_unnamed_engines", "ok_unnamed_engines");
    use_only(dir.path());

    let handle = Handle::new();
    assert_eq!(handle.dropped_engines(), [], "nothing is dropped");
    assert_eq!(handle.loaded_plugin_paths(), [path]);
    // Its Create is not implemented: the plugin is unavailable, and the listing names
    // the three engines it does not offer.
    let unavailable = handle.unavailable_plugins();
    assert_eq!(unavailable.len(), 1);
    assert_eq!(
        unavailable[0].engines,
        [
            engine_id_to_hex(821),
            engine_id_to_hex(822),
            "MIOPEN_ENGINE".to_owned()
        ]
    );
}

/// How many times the version-zero plugin was asked about a graph.
fn version_zero_analyses(path: &Path) -> u64 {
    // SAFETY: the plugin is loaded already (RTLD_NODELETE keeps it mapped), so this
    // only takes a reference; the symbol is `version_zero_plugin_analyses() -> u64`.
    unsafe {
        let library = libloading::Library::new(path).expect("the plugin opens");
        let f = library
            .get::<unsafe extern "C" fn() -> u64>(b"version_zero_plugin_analyses\0")
            .expect("the plugin exports its count");
        f()
    }
}

/// A plugin reporting engine plugin API 0.0.0 loads and its engine is listed (hipDNN
/// accepts major version 0), but every graph needs at least 1.0.0: it is never asked
/// about a graph, alone it leaves the graph without an engine, and beside the good
/// plugin the graph runs there (hipDNN's version-zero tests).
#[test]
fn a_version_zero_plugin_loads_but_is_asked_about_no_graph() {
    use hipdnn_backend::{OperationGraph, VariantPack};
    use hipdnn_flatbuffers_sdk::model::Graph;

    let _serial = serial();
    let dir = temp_dir();
    let zero = install_as(dir.path(), "version_zero_plugin", "version_zero_plugin");
    use_only(dir.path());
    let graph = OperationGraph::new(Graph::from_json(RELU_JSON).unwrap()).unwrap();
    assert_eq!(graph.required_api_version(), semver::Version::new(1, 0, 0));
    let zero_id = engine_name_to_id("VERSION_ZERO_ENGINE");

    let capture = Capture::default();
    capture.during(|| {
        let handle = Handle::new();
        assert_eq!(handle.loaded_plugin_paths(), std::slice::from_ref(&zero));
        assert_eq!(handle.unavailable_plugins(), []);
        assert_eq!(
            handle.engines(),
            [summary(
                "VERSION_ZERO_ENGINE",
                zero_id,
                "version_zero_plugin",
                "1.0.0"
            )]
        );
        assert_eq!(handle.applicable_engines(&graph), []);
        let error = handle.build_plan(&graph, &[]).unwrap_err();
        assert_eq!(error.status, HIPDNN_STATUS_NOT_SUPPORTED, "{error}");
        // Named explicitly, the engine is refused without asking the plugin either.
        let error = handle.create_plan(&graph, zero_id, &[]).unwrap_err();
        assert_eq!(error.status, HIPDNN_STATUS_NOT_SUPPORTED, "{error}");
        assert_eq!(
            error.message,
            format!(
                "engine VERSION_ZERO_ENGINE ({}) cannot run graph 'relu': plugin \
                 'version_zero_plugin' implements engine plugin api 0.0.0, and the graph \
                 needs at least 1.0.0",
                engine_id_to_hex(zero_id)
            )
        );
    });
    assert_eq!(version_zero_analyses(&zero), 0, "never asked");
    let logs = capture.messages();
    assert!(
        logs.iter().any(|l| l.contains(
            "implements engine plugin api 0.0.0: accepted as a pre-1.0 plugin"
        )),
        "{logs:#?}"
    );
    assert!(
        logs.contains(
            &"Skipping plugin 'version_zero_plugin' for graph 'relu': implements engine \
              plugin api 0.0.0, and the graph needs at least 1.0.0"
                .to_owned()
        ),
        "{logs:#?}"
    );

    // Beside the good plugin, the graph runs on the good plugin's engine.
    install(dir.path(), &["good_plugin"]);
    use_only(dir.path());
    let handle = Handle::new();
    assert_eq!(handle.engines().len(), 2);
    let ranked = handle.ranked_engines(&graph).unwrap();
    assert_eq!(
        ranked.iter().map(|e| e.name.as_str()).collect::<Vec<_>>(),
        [RELU]
    );
    let plan = handle.build_plan(&graph, &[]).unwrap();
    #[repr(align(16))]
    struct Buffer([f32; 8]);
    let mut x = Buffer([-1.0, 2.0, -3.0, 4.0, 0.5, -0.5, 0.0, 1.0]);
    let mut y = Buffer([9.0; 8]);
    let pack = VariantPack::new()
        .with(1, x.0.as_mut_ptr().cast())
        .with(2, y.0.as_mut_ptr().cast());
    // SAFETY: host buffers of the graph's 2x4 floats, 16-byte aligned, for a host engine.
    unsafe { plan.execute(&pack, std::ptr::null_mut()) }.unwrap();
    assert_eq!(y.0, [0.0, 2.0, 0.0, 4.0, 0.5, 0.0, 0.0, 1.0]);
    drop(plan);
    drop(handle);
    assert_eq!(version_zero_analyses(&zero), 0, "still never asked");
}

/// A graph with shape overrides needs engine plugin API 1.1.0 and the override entry
/// point: the good plugin (API 1.4.0, no override entry point) is not asked about it.
#[test]
fn a_graph_with_shape_overrides_skips_plugins_without_the_override_entry_point() {
    use hipdnn_backend::OperationGraph;
    use hipdnn_flatbuffers_sdk::model::Graph;

    let _serial = serial();
    let dir = temp_dir();
    install(dir.path(), &["good_plugin"]);
    use_only(dir.path());
    let mut graph = Graph::from_json(RELU_JSON).unwrap();
    graph.is_override_shape_enabled = true;
    let graph = OperationGraph::new(graph).unwrap();
    assert_eq!(graph.required_api_version(), semver::Version::new(1, 1, 0));
    let handle = Handle::new();
    assert_eq!(handle.applicable_engines(&graph), []);
    let error = handle
        .create_plan(&graph, engine_name_to_id(RELU), &[])
        .unwrap_err();
    assert_eq!(error.status, HIPDNN_STATUS_NOT_SUPPORTED, "{error}");
    assert!(
        error
            .message
            .ends_with("does not export hipdnnEnginePluginExecuteOpGraphWithOverrides, which a graph with shape overrides needs"),
        "{error}"
    );
}

/// The ReLU graph the good plugin runs, as JSON.
const RELU_JSON: &str = r#"{"name": "relu", "io_data_type": "FLOAT", "compute_data_type": "FLOAT",
    "tensors": [{"uid": 1, "name": "x", "dims": [2, 4], "strides": [4, 1]},
                {"uid": 2, "name": "y", "dims": [2, 4], "strides": [4, 1]}],
    "nodes": [{"name": "act", "attributes_type": "PointwiseAttributes",
               "attributes": {"operation": "RELU_FWD", "in_0_tensor_uid": 1,
                              "out_0_tensor_uid": 2}}]}"#;

/// A descriptor passed where a handle is expected (`HIPDNN_ATTR_OPERATIONGRAPH_HANDLE`)
/// used to be taken for one, and the process crashed at heuristic finalize; a handle
/// passed as a descriptor, a descriptor of the wrong kind and a descriptor referring to
/// itself are refused the same way, naming what was expected.
#[test]
fn a_descriptor_of_the_wrong_kind_is_bad_param_where_it_is_stored() {
    use hipdnn_backend::capi::*;
    use hipdnn_backend::status::{HIPDNN_STATUS_BAD_PARAM, HIPDNN_STATUS_SUCCESS, hipdnnStatus_t};
    use std::ptr::{from_ref, null_mut};

    #[track_caller]
    fn ok(status: hipdnnStatus_t) {
        assert_eq!(status, HIPDNN_STATUS_SUCCESS, "{}", c_last_error());
    }

    let _serial = serial();
    let dir = temp_dir();
    install(dir.path(), &["good_plugin"]);
    use_only(dir.path());
    // SAFETY: every pointer is a live local or a descriptor made here; the wrong ones
    // are passed on purpose, where the backend checks them.
    unsafe {
        let mut handle: hipdnnHandle_t = null_mut();
        ok(hipdnnCreate(&mut handle));
        let (mut graph, mut heuristic, mut config) = (null_mut(), null_mut(), null_mut());
        ok(hipdnnBackendCreateAndDeserializeJsonGraph_ext(
            &mut graph,
            RELU_JSON.as_ptr().cast(),
            RELU_JSON.len(),
        ));
        ok(hipdnnBackendCreateDescriptor(
            HIPDNN_BACKEND_ENGINEHEUR_DESCRIPTOR,
            &mut heuristic,
        ));
        ok(hipdnnBackendCreateDescriptor(
            HIPDNN_BACKEND_ENGINECFG_DESCRIPTOR,
            &mut config,
        ));

        // A descriptor as the graph's handle.
        assert_eq!(
            hipdnnBackendSetAttribute(
                graph,
                HIPDNN_ATTR_OPERATIONGRAPH_HANDLE,
                HIPDNN_TYPE_HANDLE,
                1,
                from_ref(&heuristic).cast(),
            ),
            HIPDNN_STATUS_BAD_PARAM
        );
        assert_eq!(
            c_last_error(),
            format!(
                "hipdnnBackendSetAttribute: attribute {HIPDNN_ATTR_OPERATIONGRAPH_HANDLE}: handle \
                 {heuristic:p} is an ENGINEHEUR descriptor, not a handle"
            )
        );
        // Nothing was stored: the graph still needs its handle.
        assert_eq!(hipdnnBackendFinalize(graph), HIPDNN_STATUS_BAD_PARAM);
        ok(hipdnnBackendSetAttribute(
            graph,
            HIPDNN_ATTR_OPERATIONGRAPH_HANDLE,
            HIPDNN_TYPE_HANDLE,
            1,
            from_ref(&handle).cast(),
        ));
        ok(hipdnnBackendFinalize(graph));

        // A handle as the heuristic's graph, then a descriptor of another kind, then the
        // heuristic itself.
        let set_graph = |value: hipdnnBackendDescriptor_t| {
            hipdnnBackendSetAttribute(
                heuristic,
                HIPDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH,
                HIPDNN_TYPE_BACKEND_DESCRIPTOR,
                1,
                from_ref(&value).cast(),
            )
        };
        assert_eq!(set_graph(handle.cast()), HIPDNN_STATUS_BAD_PARAM);
        assert_eq!(
            c_last_error(),
            format!(
                "hipdnnBackendSetAttribute: descriptor {handle:p} is a handle, not a descriptor"
            )
        );
        assert_eq!(set_graph(heuristic), HIPDNN_STATUS_BAD_PARAM);
        assert_eq!(
            c_last_error(),
            format!(
                "hipdnnBackendSetAttribute: attribute {HIPDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH}: a \
                 descriptor cannot refer to itself"
            )
        );
        let mut pack = null_mut();
        ok(hipdnnBackendCreateDescriptor(
            HIPDNN_BACKEND_VARIANT_PACK_DESCRIPTOR,
            &mut pack,
        ));
        ok(hipdnnBackendFinalize(pack));
        assert_eq!(set_graph(pack), HIPDNN_STATUS_BAD_PARAM);
        assert_eq!(
            c_last_error(),
            format!(
                "hipdnnBackendSetAttribute: attribute {HIPDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH} \
                 takes an OPERATIONGRAPH descriptor, not a VARIANT_PACK"
            )
        );
        // Finalizing without a graph, or without the mode, is a clean error, not a
        // crash; with both it ranks. FALLBACK is the one mode there is.
        assert_eq!(hipdnnBackendFinalize(heuristic), HIPDNN_STATUS_BAD_PARAM);
        ok(set_graph(graph));
        assert_eq!(hipdnnBackendFinalize(heuristic), HIPDNN_STATUS_BAD_PARAM);
        assert!(
            c_last_error().contains("no heuristic mode (HIPDNN_ATTR_ENGINEHEUR_MODE"),
            "{}",
            c_last_error()
        );
        let set_mode = |mode: hipdnnBackendHeurMode_t| {
            hipdnnBackendSetAttribute(
                heuristic,
                HIPDNN_ATTR_ENGINEHEUR_MODE,
                HIPDNN_TYPE_HEUR_MODE,
                1,
                from_ref(&mode).cast(),
            )
        };
        assert_eq!(set_mode(2), HIPDNN_STATUS_NOT_SUPPORTED);
        assert!(
            c_last_error().contains("heuristic mode 2 is not supported"),
            "{}",
            c_last_error()
        );
        ok(set_mode(HIPDNN_HEUR_MODE_FALLBACK));
        ok(hipdnnBackendFinalize(heuristic));

        // Heuristic results into a descriptor that is not an ENGINECFG, or the
        // heuristic itself.
        let mut count = 0_i64;
        for target in [pack, heuristic] {
            assert_eq!(
                hipdnnBackendGetAttribute(
                    heuristic,
                    HIPDNN_ATTR_ENGINEHEUR_RESULTS,
                    HIPDNN_TYPE_BACKEND_DESCRIPTOR,
                    1,
                    &mut count,
                    from_ref(&target).cast_mut().cast(),
                ),
                HIPDNN_STATUS_BAD_PARAM
            );
        }
        assert_eq!(
            c_last_error(),
            format!(
                "hipdnnBackendGetAttribute: attribute {HIPDNN_ATTR_ENGINEHEUR_RESULTS}: the array \
                 holds the descriptor being read"
            )
        );
        // A huge requested count reads only as many descriptors as there are results.
        ok(hipdnnBackendGetAttribute(
            heuristic,
            HIPDNN_ATTR_ENGINEHEUR_RESULTS,
            HIPDNN_TYPE_BACKEND_DESCRIPTOR,
            1 << 62,
            &mut count,
            from_ref(&config).cast_mut().cast(),
        ));
        assert_eq!(count, 1);

        for d in [pack, config, heuristic, graph] {
            ok(hipdnnBackendDestroyDescriptor(d));
        }
        ok(hipdnnDestroy(handle));
    }
}

/// A count of 2^62 elements used to reach the allocator ("capacity overflow", a caught
/// panic and INTERNAL_ERROR); counts are bounded before anything is read or allocated.
#[test]
fn huge_attribute_counts_are_bad_param() {
    use hipdnn_backend::capi::*;
    use hipdnn_backend::status::{HIPDNN_STATUS_BAD_PARAM, HIPDNN_STATUS_SUCCESS};
    use std::ptr::null_mut;

    let _serial = serial();
    let uids = [1_i64, 2];
    // SAFETY: `uids` holds 2 int64s; the larger counts are refused before it is read.
    unsafe {
        let mut pack = null_mut();
        assert_eq!(
            hipdnnBackendCreateDescriptor(HIPDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &mut pack),
            HIPDNN_STATUS_SUCCESS
        );
        for (count, message) in [
            (
                1_i64 << 62,
                format!(
                    "attribute {HIPDNN_ATTR_VARIANT_PACK_UNIQUE_IDS}: element count {} is more \
                     than the 16777216 accepted",
                    1_u64 << 62
                ),
            ),
            (
                (1 << 24) + 1,
                format!(
                    "attribute {HIPDNN_ATTR_VARIANT_PACK_UNIQUE_IDS}: element count 16777217 is \
                     more than the 16777216 accepted"
                ),
            ),
            (
                -1,
                format!(
                    "attribute {HIPDNN_ATTR_VARIANT_PACK_UNIQUE_IDS}: negative element count -1"
                ),
            ),
        ] {
            assert_eq!(
                hipdnnBackendSetAttribute(
                    pack,
                    HIPDNN_ATTR_VARIANT_PACK_UNIQUE_IDS,
                    HIPDNN_TYPE_INT64,
                    count,
                    uids.as_ptr().cast(),
                ),
                HIPDNN_STATUS_BAD_PARAM,
                "{count}"
            );
            assert_eq!(
                c_last_error(),
                format!("hipdnnBackendSetAttribute: {message}")
            );
        }
        assert_eq!(
            hipdnnBackendSetAttribute(
                pack,
                HIPDNN_ATTR_VARIANT_PACK_UNIQUE_IDS,
                HIPDNN_TYPE_INT64,
                2,
                uids.as_ptr().cast(),
            ),
            HIPDNN_STATUS_SUCCESS
        );
        assert_eq!(hipdnnBackendDestroyDescriptor(pack), HIPDNN_STATUS_SUCCESS);
        // A serialized graph larger than any buffer is refused before it is read.
        let mut graph = null_mut();
        assert_eq!(
            hipdnnBackendCreateAndDeserializeGraph_ext(
                &mut graph,
                uids.as_ptr().cast(),
                usize::MAX
            ),
            HIPDNN_STATUS_BAD_PARAM
        );
        assert!(graph.is_null());
        // So is a JSON graph above the binary form's 256 MiB (it used to be read, past
        // the end of the caller's buffer: SIGSEGV).
        for size in [(256 << 20) + 1, 1_usize << 62] {
            assert_eq!(
                hipdnnBackendCreateAndDeserializeJsonGraph_ext(
                    &mut graph,
                    uids.as_ptr().cast(),
                    size
                ),
                HIPDNN_STATUS_BAD_PARAM,
                "{size}"
            );
            assert_eq!(
                c_last_error(),
                format!(
                    "hipdnnBackendCreateAndDeserializeJsonGraph_ext: JSON graph of {size} bytes \
                     exceeds the limit of 268435456 bytes"
                )
            );
            assert!(graph.is_null());
        }
    }
}

/// `hipdnnGetEngineInfo_ext` takes a null length as "not this string", as its header
/// says; a buffer without its length is refused.
#[test]
fn engine_info_accepts_null_lengths() {
    use hipdnn_backend::capi::*;
    use hipdnn_backend::status::{HIPDNN_STATUS_BAD_PARAM_NULL_POINTER, HIPDNN_STATUS_SUCCESS};
    use std::ffi::{CStr, c_char};
    use std::ptr::null_mut;

    let _serial = serial();
    let dir = temp_dir();
    install(dir.path(), &["good_plugin"]);
    use_only(dir.path());
    // SAFETY: every pointer is null or a live local; `name_len` describes `name`.
    unsafe {
        let mut handle: hipdnnHandle_t = null_mut();
        assert_eq!(hipdnnCreate(&mut handle), HIPDNN_STATUS_SUCCESS);
        let mut id = 0_i64;
        let mut name = [0 as c_char; 64];
        let mut name_len = name.len();
        // Only the id and the name: every other string skipped.
        assert_eq!(
            hipdnnGetEngineInfo_ext(
                handle,
                0,
                &mut id,
                name.as_mut_ptr(),
                &mut name_len,
                null_mut(),
                null_mut(),
                null_mut(),
                null_mut(),
                null_mut(),
                null_mut(),
            ),
            HIPDNN_STATUS_SUCCESS,
            "{}",
            c_last_error()
        );
        assert_eq!(id, engine_name_to_id(RELU));
        assert_eq!(CStr::from_ptr(name.as_ptr()).to_str().unwrap(), RELU);
        assert_eq!(name_len, RELU.len() + 1);
        // Only the id.
        id = 0;
        assert_eq!(
            hipdnnGetEngineInfo_ext(
                handle,
                0,
                &mut id,
                null_mut(),
                null_mut(),
                null_mut(),
                null_mut(),
                null_mut(),
                null_mut(),
                null_mut(),
                null_mut(),
            ),
            HIPDNN_STATUS_SUCCESS
        );
        assert_eq!(id, engine_name_to_id(RELU));
        // A buffer whose length is null cannot be written safely.
        assert_eq!(
            hipdnnGetEngineInfo_ext(
                handle,
                0,
                &mut id,
                name.as_mut_ptr(),
                null_mut(),
                null_mut(),
                null_mut(),
                null_mut(),
                null_mut(),
                null_mut(),
                null_mut(),
            ),
            HIPDNN_STATUS_BAD_PARAM_NULL_POINTER
        );
        assert_eq!(
            c_last_error(),
            "hipdnnGetEngineInfo_ext: name length (its buffer is not null) is null"
        );
        assert_eq!(hipdnnDestroy(handle), HIPDNN_STATUS_SUCCESS);
    }
}

/// Destroying a handle or a descriptor twice, or passing a pointer this library never
/// made, used to crash (as in hipDNN): each is `BAD_PARAM`, and nothing is freed twice.
#[test]
fn double_destroy_and_garbage_pointers_are_bad_param() {
    use hipdnn_backend::capi::*;
    use hipdnn_backend::status::{HIPDNN_STATUS_BAD_PARAM, HIPDNN_STATUS_SUCCESS};
    use std::ptr::null_mut;

    let _serial = serial();
    let dir = temp_dir();
    install(dir.path(), &["good_plugin"]);
    use_only(dir.path());
    // Plausible-looking pointers that are no object of this library: a local, and an
    // address nothing is mapped at. The backend must not read through either.
    let mut local = [0_u64; 8];
    let on_the_stack: hipdnnBackendDescriptor_t = local.as_mut_ptr().cast();
    let unmapped: hipdnnBackendDescriptor_t = std::ptr::without_provenance_mut(0x10);
    // SAFETY: the bad pointers are passed on purpose, where the backend checks them;
    // the rest are live locals.
    unsafe {
        let mut handle: hipdnnHandle_t = null_mut();
        assert_eq!(hipdnnCreate(&mut handle), HIPDNN_STATUS_SUCCESS);
        let mut pack = null_mut();
        assert_eq!(
            hipdnnBackendCreateDescriptor(HIPDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &mut pack),
            HIPDNN_STATUS_SUCCESS
        );
        assert_eq!(hipdnnBackendDestroyDescriptor(pack), HIPDNN_STATUS_SUCCESS);
        assert_eq!(
            hipdnnBackendDestroyDescriptor(pack),
            HIPDNN_STATUS_BAD_PARAM
        );
        assert_eq!(
            c_last_error(),
            format!(
                "hipdnnBackendDestroyDescriptor: descriptor {pack:p} is not a live descriptor \
                 (never made by this library, or already destroyed)"
            )
        );
        let mut count = 0_i64;
        for bad in [pack, on_the_stack, unmapped] {
            assert_eq!(hipdnnBackendFinalize(bad), HIPDNN_STATUS_BAD_PARAM);
            assert_eq!(
                hipdnnBackendSetAttribute(bad, 0, 0, 0, std::ptr::null()),
                HIPDNN_STATUS_BAD_PARAM
            );
            assert_eq!(
                hipdnnBackendGetAttribute(bad, 0, 0, 0, &mut count, null_mut()),
                HIPDNN_STATUS_BAD_PARAM
            );
            assert_eq!(
                hipdnnBackendExecute(handle, bad, bad),
                HIPDNN_STATUS_BAD_PARAM
            );
            assert_eq!(hipdnnBackendDestroyDescriptor(bad), HIPDNN_STATUS_BAD_PARAM);
            assert_eq!(hipdnnDestroy(bad.cast()), HIPDNN_STATUS_BAD_PARAM);
            let mut engines = 0_usize;
            assert_eq!(
                hipdnnGetEngineCount_ext(bad.cast(), &mut engines),
                HIPDNN_STATUS_BAD_PARAM
            );
        }
        // A handle is not a descriptor.
        assert_eq!(
            hipdnnBackendDestroyDescriptor(handle.cast()),
            HIPDNN_STATUS_BAD_PARAM
        );
        assert_eq!(
            c_last_error(),
            format!(
                "hipdnnBackendDestroyDescriptor: descriptor {handle:p} is a handle, not a \
                 descriptor"
            )
        );
        assert_eq!(hipdnnDestroy(handle), HIPDNN_STATUS_SUCCESS);
        assert_eq!(live_handle_count(), 0);
        assert_eq!(hipdnnDestroy(handle), HIPDNN_STATUS_BAD_PARAM);
        assert_eq!(
            c_last_error(),
            format!(
                "hipdnnDestroy: handle {handle:p} is not a live handle (never made by this \
                 library, or already destroyed)"
            )
        );
        let mut stream = null_mut();
        assert_eq!(
            hipdnnGetStream(handle, &mut stream),
            HIPDNN_STATUS_BAD_PARAM
        );
    }
}
