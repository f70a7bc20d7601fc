//! The runner end to end on a device engine: the stand-in plugin
//! (`tests/fixtures/stand_in_device_plugin.rs`, a ReLU engine declaring device memory)
//! loaded through the backend, its cases run with a stand-in device allocator (host
//! memory, every call counted), without one, and with the default GPU allocator where no
//! GPU opens; the tests' names, skips, filters and failures as a test harness reports
//! them.
//!
//! The plugin is the example cdylib in `target/<profile>/examples/`, which plain
//! `cargo test` builds (`cargo test --test device_engine` does not: then run
//! `cargo build -p hipdnn-conformance --examples` first).

use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::collections::BTreeMap;
use std::ffi::c_void;
use std::path::{Path, PathBuf};
use std::ptr::NonNull;
use std::sync::{Arc, Mutex, OnceLock};

use hipdnn_conformance::memory::Memory;
use hipdnn_conformance::{
    DeviceAllocator, EngineProvider, EngineRun, GpuAllocator, MIN_ALIGNMENT, PluginSuite,
    PluginUnderTest,
};
use hipdnn_data_sdk::MemoryKind;
use hipdnn_test_sdk::conformance::{Case, Outcome, SkipList, run_case, standard_cases};
use libtest_mimic::Arguments;

const ENGINE: &str = "STAND_IN_DEVICE_RELU";

/// Host allocations handed out as "device" memory, with every call counted.
#[derive(Default)]
struct StandInDevice {
    live: Mutex<BTreeMap<usize, Layout>>,
    /// (to the device, to the host)
    copies: Mutex<(usize, usize)>,
    syncs: Mutex<usize>,
}

impl DeviceAllocator for StandInDevice {
    fn name(&self) -> &str {
        "stand-in device"
    }

    fn allocate(&self, len: usize) -> Result<NonNull<c_void>, String> {
        if len > 1 << 30 {
            return Err("out of memory".into());
        }
        let layout = Layout::from_size_align(len, MIN_ALIGNMENT).map_err(|e| e.to_string())?;
        // SAFETY: `len` is at least 1 (the trait's contract).
        let ptr = NonNull::new(unsafe { alloc_zeroed(layout) }).ok_or("no memory")?;
        self.live
            .lock()
            .unwrap()
            .insert(ptr.as_ptr() as usize, layout);
        Ok(ptr.cast())
    }

    unsafe fn free(&self, ptr: NonNull<c_void>) {
        let layout = self
            .live
            .lock()
            .unwrap()
            .remove(&(ptr.as_ptr() as usize))
            .expect("allocated here, freed once");
        // SAFETY: allocated in `allocate` with this layout.
        unsafe { dealloc(ptr.as_ptr().cast(), layout) };
    }

    unsafe fn copy_to_device(&self, dst: NonNull<c_void>, src: &[u8]) -> Result<(), String> {
        self.copies.lock().unwrap().0 += 1;
        // SAFETY: `dst` holds `src.len()` bytes (the trait's contract).
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), dst.as_ptr().cast(), src.len()) };
        Ok(())
    }

    unsafe fn copy_to_host(&self, dst: &mut [u8], src: NonNull<c_void>) -> Result<(), String> {
        self.copies.lock().unwrap().1 += 1;
        // SAFETY: `src` holds `dst.len()` bytes (the trait's contract).
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr().cast(), dst.as_mut_ptr(), dst.len()) };
        Ok(())
    }

    fn synchronize(&self) -> Result<(), String> {
        *self.syncs.lock().unwrap() += 1;
        Ok(())
    }
}

/// `target/<profile>/examples/libstand_in_device_plugin.so`.
fn plugin_library() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("the test binary lives in target/<profile>/deps/");
    let path = profile_dir
        .join("examples")
        .join("libstand_in_device_plugin.so");
    assert!(
        path.is_file(),
        "{} is missing: run `cargo build -p hipdnn-conformance --examples` \
         (plain `cargo test` builds it; `cargo test --test ...` does not)",
        path.display()
    );
    path
}

/// The plugin, loaded once for the process (the backend's plugin paths are global).
fn plugin() -> Arc<PluginUnderTest> {
    static PLUGIN: OnceLock<Arc<PluginUnderTest>> = OnceLock::new();
    Arc::clone(PLUGIN.get_or_init(|| Arc::new(PluginUnderTest::load(plugin_library()).unwrap())))
}

/// The plain ReLU cases: fp32 (which the engine runs) and fp16/bf16 (which it refuses).
fn relu_cases() -> Vec<Case> {
    standard_cases()
        .into_iter()
        .filter(|c| c.name.starts_with("pointwise/relu_fwd/"))
        .collect()
}

fn provider(device: Option<Arc<dyn DeviceAllocator>>, knobs: &[(&str, &str)]) -> EngineProvider {
    let plugin = plugin();
    let engine = plugin.engine(ENGINE).unwrap().clone();
    let knobs = knobs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    EngineProvider::new(plugin, engine, ENGINE.to_owned(), knobs, device)
}

/// Harness arguments for `list`, writing the report to `log` (a nested run printing on
/// stdout would mix its "test result" lines into this test's own output).
fn args(list: &[&str], log: &Path) -> Arguments {
    let mut args =
        Arguments::from_iter(["device_engine", "--test-threads", "1"].iter().chain(list));
    args.logfile = Some(log.display().to_string());
    args
}

#[test]
fn a_device_engine_runs_on_the_allocators_memory_and_frees_it() {
    let device = Arc::new(StandInDevice::default());
    let p = provider(Some(device.clone()), &[]);
    let cases = relu_cases();
    let fp32: Vec<&Case> = cases.iter().filter(|c| c.name.contains("/fp32/")).collect();
    assert_eq!(fp32.len(), 2, "{cases:?}");
    for case in &fp32 {
        assert_eq!(run_case(&p, case, 1), Outcome::Passed, "{}", case.name);
    }
    assert!(device.live.lock().unwrap().is_empty(), "every buffer freed");
    // Per case: x and y copied in and back; the workspace is neither.
    assert_eq!(*device.copies.lock().unwrap(), (4, 4));
    assert_eq!(*device.syncs.lock().unwrap(), 2);

    let fp16 = cases.iter().find(|c| c.name.contains("/fp16/")).unwrap();
    let Outcome::Failed(why) = run_case(&p, fp16, 1) else {
        panic!("an fp16 ReLU ran on an fp32-only engine")
    };
    assert!(why.contains("does not apply"), "{why}");
}

#[test]
fn without_an_allocator_device_cases_fail_saying_so() {
    let p = provider(None, &[]);
    for case in relu_cases() {
        let Outcome::Failed(why) = run_case(&p, &case, 1) else {
            panic!("{} did not fail", case.name)
        };
        if !case.name.contains("/fp32/") {
            // The engine's details are refused first: nothing says which memory it takes.
            assert!(why.contains("does not apply"), "{why}");
            continue;
        }
        assert!(
            why.contains(ENGINE)
                && why.contains("device memory")
                && why.contains("no device allocator is available"),
            "{why}"
        );
    }
}

#[test]
fn a_knob_the_engine_does_not_have_fails_the_case_naming_it() {
    let device: Arc<dyn DeviceAllocator> = Arc::new(StandInDevice::default());
    let p = provider(Some(device), &[("cpu.threads", "2")]);
    let case = &relu_cases()[0];
    let Outcome::Failed(why) = run_case(&p, case, 1) else {
        panic!("ran with an unknown knob")
    };
    assert!(why.contains("knob \"cpu.threads\""), "{why}");
}

#[test]
fn cases_are_named_tests_skips_are_ignored_and_filters_apply() {
    let device: Arc<dyn DeviceAllocator> = Arc::new(StandInDevice::default());
    let suite = || {
        let skips = SkipList::new()
            .pattern("*/fp16/*", "no fp16")
            .pattern("*/bf16/*", "no bf16");
        PluginSuite::loaded(plugin())
            .device_allocator(Arc::clone(&device))
            .cases(relu_cases())
            .with_run(EngineRun::engine(ENGINE).skips(skips))
    };
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("report");
    let read_log = || std::fs::read_to_string(&log).unwrap();

    let all = args(&[], &log);
    let trials = suite().trials(&all).unwrap();
    let names: Vec<&str> = trials.iter().map(|t| t.name()).collect();
    assert!(
        names.contains(&"STAND_IN_DEVICE_RELU/pointwise/relu_fwd/fp32/nhwc"),
        "{names:?}"
    );
    assert_eq!(names.len(), 6);

    let run = libtest_mimic::run(&all, suite().trials(&all).unwrap());
    assert_eq!((run.num_passed, run.num_failed, run.num_ignored), (2, 0, 4));
    let report = read_log();
    assert!(
        report.contains("relu_fwd/fp16/nchw ... ignored (no fp16)"),
        "{report}"
    );

    let filtered = args(&["relu_fwd/fp32/nchw"], &log);
    let run = libtest_mimic::run(&filtered, suite().trials(&filtered).unwrap());
    assert_eq!((run.num_passed, run.num_filtered_out), (1, 5));

    // Asked for, the skipped cases run (and fail here: the engine refuses fp16/bf16).
    let ignored = args(&["--ignored"], &log);
    let run = libtest_mimic::run(&ignored, suite().trials(&ignored).unwrap());
    assert_eq!((run.num_passed, run.num_failed), (0, 4));
    assert!(read_log().contains("does not apply"), "{}", read_log());

    // Without an allocator every case that runs fails, the fp32 ones saying why.
    let bare = PluginSuite::loaded(plugin())
        .without_device_allocator()
        .cases(relu_cases());
    let run = libtest_mimic::run(&all, bare.trials(&all).unwrap());
    assert_eq!((run.num_passed, run.num_failed), (0, 6));
    let report = read_log();
    assert!(
        report.contains("---- STAND_IN_DEVICE_RELU/pointwise/relu_fwd/fp32/nchw ----")
            && report.contains("no device allocator is available")
            && report.contains("HIPDNN_TEST_SEED="),
        "{report}"
    );

    let error = PluginSuite::loaded(plugin())
        .with_run(EngineRun::engine("NO_SUCH_ENGINE"))
        .trials(&all)
        .unwrap_err();
    assert!(
        error.contains("no engine \"NO_SUCH_ENGINE\"") && error.contains(ENGINE),
        "{error}"
    );
}

#[test]
fn device_memory_round_trips_through_the_allocator() {
    let device = StandInDevice::default();
    {
        let bytes = [1u8, 2, 3, 4, 5];
        let mut m =
            Memory::with_contents(MemoryKind::Device, Some(&device), 5, 4, Some(&bytes)).unwrap();
        assert!(!m.as_mut_ptr().is_null());
        let mut out = [0u8; 5];
        m.read_into(&mut out).unwrap();
        assert_eq!(out, bytes);
        let workspace =
            Memory::with_contents(MemoryKind::Device, Some(&device), 0, 1, None).unwrap();
        assert!(matches!(workspace, Memory::Device(_)));
        assert_eq!(device.live.lock().unwrap().len(), 2);
    }
    assert!(device.live.lock().unwrap().is_empty(), "every buffer freed");
    assert_eq!(*device.copies.lock().unwrap(), (1, 1));

    let error =
        Memory::with_contents(MemoryKind::Device, Some(&device), 2 << 30, 1, None).unwrap_err();
    assert!(
        error.contains("stand-in device") && error.contains("out of memory"),
        "{error}"
    );
}

/// By default device engines get the GPU; without one (this test needs that: the
/// stand-in engine reads its pointers on the host) their cases fail with the reason.
#[test]
fn by_default_device_cases_fail_with_the_reason_the_gpu_does_not_open() {
    let reason = match hipdnn_gpu::Gpu::open_default() {
        Ok(gpu) => {
            eprintln!("skipped: {gpu} opened, and the stand-in engine cannot take its memory");
            return;
        }
        Err(e) => e.to_string(),
    };
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("report");
    let all = args(&[], &log);
    let suite = PluginSuite::loaded(plugin()).cases(relu_cases());
    let run = libtest_mimic::run(&all, suite.trials(&all).unwrap());
    assert_eq!((run.num_passed, run.num_failed), (0, 6));
    let report = std::fs::read_to_string(&log).unwrap();
    assert!(
        report.contains(ENGINE)
            && report.contains(&format!(
                "takes device memory, and CUDA device 0 is not available: {reason}"
            )),
        "{report}"
    );

    let p = provider(Some(Arc::new(GpuAllocator::new(0))), &[]);
    let fp32 = relu_cases()
        .into_iter()
        .find(|c| c.name.contains("/fp32/"))
        .unwrap();
    let Outcome::Failed(why) = run_case(&p, &fp32, 1) else {
        panic!("ran without a GPU")
    };
    assert!(why.contains(&reason), "{why}");
}

#[test]
fn a_missing_plugin_is_an_error_naming_it() {
    let error = PluginUnderTest::load("/nonexistent/libnothing.so").unwrap_err();
    assert!(error.contains("/nonexistent/libnothing.so"), "{error}");
}
