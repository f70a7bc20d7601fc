//! The backend as C applications get it: `libhipdnn_backend.so` opened with `dlopen` and
//! driven only through its exported C functions, with every hostile test plugin in the
//! plugin directory next to the good ones.
//!
//! This is a plain program (`harness = false`): the library's state is process-global,
//! so the checks run in order in one process, and `HIPDNN_PLUGIN_DIR` is set before any
//! other thread exists. Plain `cargo test` builds the test plugins; the library itself is
//! built here with a nested cargo (see `tests/c_api.rs`).

use std::ffi::{CStr, CString, c_char, c_void};
use std::path::Path;
use std::sync::Mutex;

use hipdnn_backend::capi::*;
use hipdnn_backend::status::*;
use hipdnn_plugin_abi::{HIPDNN_SEV_ERROR, HIPDNN_SEV_INFO, HIPDNN_SEV_OFF, hipdnnSeverity_t};
use libloading::os::unix::{Library, RTLD_LOCAL, RTLD_NOW};

mod support;
use support::{example_library, install};

/// Plugins that load and serve.
const GOOD: [&str; 3] = ["good_plugin", "ok_api_major_zero", "ok_no_api_version"];
/// Plugins rejected at load, each with its own message.
const BAD_LOAD: [&str; 9] = [
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
/// Plugins that load but misbehave when a handle is made or their engines are admitted.
const BAD_HANDLE: [&str; 6] = [
    "bad_create_fails",
    "bad_create_panics",
    "bad_null_handle",
    "bad_engine_name",
    "collide_a",
    "collide_b",
];

/// Messages the user log callback received.
static LOG: Mutex<Vec<(i32, String)>> = Mutex::new(Vec::new());

unsafe extern "C" fn record(user: *mut c_void, severity: hipdnnSeverity_t, message: *const c_char) {
    assert_eq!(user as usize, 0x1234, "the user handle comes back");
    // SAFETY: the backend passes a NUL-terminated message valid for the call.
    let text = unsafe { CStr::from_ptr(message) }
        .to_string_lossy()
        .into_owned();
    LOG.lock().unwrap().push((severity.0, text));
}

fn take_log() -> Vec<(i32, String)> {
    std::mem::take(&mut *LOG.lock().unwrap())
}

/// The C API, resolved from the library.
struct Api {
    create: unsafe extern "C" fn(*mut hipdnnHandle_t) -> hipdnnStatus_t,
    destroy: unsafe extern "C" fn(hipdnnHandle_t) -> hipdnnStatus_t,
    engine_count: unsafe extern "C" fn(hipdnnHandle_t, *mut usize) -> hipdnnStatus_t,
    engine_by_name: unsafe extern "C" fn(hipdnnHandle_t, *const c_char, *mut i64) -> hipdnnStatus_t,
    plugin_paths: unsafe extern "C" fn(
        hipdnnHandle_t,
        *mut usize,
        *mut *mut c_char,
        *mut usize,
    ) -> hipdnnStatus_t,
    set_paths: unsafe extern "C" fn(
        usize,
        *const *const c_char,
        hipdnnPluginLoadingMode_ext_t,
    ) -> hipdnnStatus_t,
    set_log_callback: unsafe extern "C" fn(
        hipdnnUserLogCallback_t,
        hipdnnSeverity_t,
        hipdnnLogCallbackMode_t,
        hipdnnUserLogCallbackHandle_t,
    ) -> hipdnnStatus_t,
    set_level: unsafe extern "C" fn(hipdnnSeverity_t) -> hipdnnStatus_t,
    last_error: unsafe extern "C" fn(*mut c_char, usize),
    _library: Library,
}

impl Api {
    fn open(path: &Path) -> Self {
        // SAFETY: the library under test; its initializers only set up Rust statics.
        let library = unsafe { Library::open(Some(path), RTLD_NOW | RTLD_LOCAL) }
            .unwrap_or_else(|e| panic!("cannot open {}: {e}", path.display()));
        macro_rules! get {
            ($name:literal) => {
                // SAFETY: the symbol is the C function of that name, declared with the
                // type of the field it is stored in (checked against capi's signatures
                // by the compiler where they are defined).
                *unsafe { library.get(concat!($name, "\0").as_bytes()) }
                    .unwrap_or_else(|e| panic!("{}: {e}", $name))
            };
        }
        Self {
            create: get!("hipdnnCreate"),
            destroy: get!("hipdnnDestroy"),
            engine_count: get!("hipdnnGetEngineCount_ext"),
            engine_by_name: get!("hipdnnGetEngineIdByName_ext"),
            plugin_paths: get!("hipdnnGetLoadedEnginePluginPaths_ext"),
            set_paths: get!("hipdnnSetEnginePluginPaths_ext"),
            set_log_callback: get!("hipdnnSetUserLogCallback_ext"),
            set_level: get!("hipdnnBackendSetGlobalLogLevel_ext"),
            last_error: get!("hipdnnGetLastErrorString"),
            _library: library,
        }
    }

    fn create(&self) -> hipdnnHandle_t {
        let mut handle = std::ptr::null_mut();
        // SAFETY: a valid out-pointer.
        let status = unsafe { (self.create)(&mut handle) };
        assert_eq!(status, HIPDNN_STATUS_SUCCESS, "{}", self.last_error());
        handle
    }

    fn destroy(&self, handle: hipdnnHandle_t) {
        // SAFETY: a live handle, not used afterwards.
        assert_eq!(unsafe { (self.destroy)(handle) }, HIPDNN_STATUS_SUCCESS);
    }

    fn engine_count(&self, handle: hipdnnHandle_t) -> usize {
        let mut count = 0;
        // SAFETY: a live handle and a valid out-pointer.
        let status = unsafe { (self.engine_count)(handle, &mut count) };
        assert_eq!(status, HIPDNN_STATUS_SUCCESS);
        count
    }

    fn has_engine(&self, handle: hipdnnHandle_t, name: &CStr) -> bool {
        let mut id = 0;
        // SAFETY: a live handle, a C string and a valid out-pointer.
        unsafe { (self.engine_by_name)(handle, name.as_ptr(), &mut id) == HIPDNN_STATUS_SUCCESS }
    }

    /// The loaded plugin paths, through the two-call convention (checking that one byte
    /// less than the size asked for is refused).
    fn plugin_paths(&self, handle: hipdnnHandle_t) -> Vec<String> {
        let (mut count, mut longest) = (0usize, 0usize);
        // SAFETY: a live handle and valid out-pointers; null buffers ask for sizes.
        let status =
            unsafe { (self.plugin_paths)(handle, &mut count, std::ptr::null_mut(), &mut longest) };
        assert_eq!(status, HIPDNN_STATUS_SUCCESS);
        let mut storage = vec![vec![0 as c_char; longest]; count];
        let mut buffers: Vec<*mut c_char> = storage.iter_mut().map(|b| b.as_mut_ptr()).collect();
        let mut short = longest - 1;
        // SAFETY: `count` buffers of at least `short` bytes.
        let status =
            unsafe { (self.plugin_paths)(handle, &mut count, buffers.as_mut_ptr(), &mut short) };
        assert_eq!(status, HIPDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT);
        // SAFETY: `count` buffers of `longest` bytes each.
        let status =
            unsafe { (self.plugin_paths)(handle, &mut count, buffers.as_mut_ptr(), &mut longest) };
        assert_eq!(status, HIPDNN_STATUS_SUCCESS);
        storage
            .iter()
            .map(|b| {
                // SAFETY: each buffer was filled with a NUL-terminated path.
                unsafe { CStr::from_ptr(b.as_ptr()) }
                    .to_string_lossy()
                    .into_owned()
            })
            .collect()
    }

    fn set_paths(&self, paths: &[&Path], mode: hipdnnPluginLoadingMode_ext_t) -> hipdnnStatus_t {
        let owned: Vec<CString> = paths
            .iter()
            .map(|p| CString::new(p.to_str().unwrap()).unwrap())
            .collect();
        let pointers: Vec<*const c_char> = owned.iter().map(|p| p.as_ptr()).collect();
        // SAFETY: `pointers` holds `len` C strings alive for the call.
        unsafe { (self.set_paths)(pointers.len(), pointers.as_ptr(), mode) }
    }

    fn last_error(&self) -> String {
        let mut buffer = [0 as c_char; 1024];
        // SAFETY: a writable buffer of that size.
        unsafe { (self.last_error)(buffer.as_mut_ptr(), buffer.len()) };
        // SAFETY: NUL-terminated by the call.
        unsafe { CStr::from_ptr(buffer.as_ptr()) }
            .to_string_lossy()
            .into_owned()
    }
}

fn contains(log: &[(i32, String)], severity: hipdnnSeverity_t, needle: &str) -> bool {
    log.iter()
        .any(|(s, m)| *s == severity.0 && m.contains(needle))
}

fn main() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let plugins = dir.path().join("engines");
    let extra = dir.path().join("extra");
    std::fs::create_dir_all(&plugins).unwrap();
    std::fs::create_dir_all(&extra).unwrap();
    install(&plugins, &GOOD);
    install(&plugins, &BAD_LOAD);
    install(&plugins, &BAD_HANDLE);
    std::fs::copy(
        example_library("good_plugin"),
        extra.join("libextra_copy.so"),
    )
    .unwrap();
    let log_file = dir.path().join("hipdnn.log");
    // SAFETY: the only thread of the process so far (this program has no test harness).
    unsafe {
        std::env::set_var("HIPDNN_PLUGIN_DIR", &plugins);
        std::env::set_var("HIPDNN_LOG_FILE", &log_file);
    }

    let api = Api::open(&support::build_backend_cdylib());
    let user = 0x1234 as *mut c_void;
    // SAFETY: `record` is a valid callback for the life of the process.
    unsafe {
        assert_eq!(
            (api.set_log_callback)(
                Some(record),
                HIPDNN_SEV_INFO,
                HIPDNN_LOG_CALLBACK_SYNC,
                user
            ),
            HIPDNN_STATUS_SUCCESS
        );
    }
    // SAFETY: plain value argument.
    let status = unsafe { (api.set_level)(HIPDNN_SEV_INFO) };
    assert_eq!(status, HIPDNN_STATUS_SUCCESS);

    // 1. HIPDNN_PLUGIN_DIR with good and hostile plugins: every hostile one is skipped with
    //    its message, the good ones serve.
    let handle = api.create();
    let log = take_log();
    for bad in BAD_LOAD {
        let path = plugins.join(format!("lib{bad}.so")).canonicalize().unwrap();
        assert!(
            contains(
                &log,
                HIPDNN_SEV_ERROR,
                &format!("Error loading plugin from [{}]: ", path.display())
            ),
            "no load error for {bad}: {log:#?}"
        );
    }
    for needle in [
        "Failed to create handle for plugin 'bad_create_fails'",
        "panic in hipdnnEnginePluginCreate",
        "Plugin 'bad_null_handle' returned null handle",
        "Plugin 'collide_b' returned a handle that collides with another plugin ('collide_a')",
        "Plugin 'bad_engine_name' names engine",
    ] {
        assert!(
            contains(&log, HIPDNN_SEV_ERROR, needle),
            "missing {needle:?}: {log:#?}"
        );
    }
    let loaded = api.plugin_paths(handle);
    assert_eq!(loaded.len(), GOOD.len() + BAD_HANDLE.len(), "{loaded:#?}");
    assert!(api.has_engine(handle, c"EXAMPLE_RELU_ENGINE"));
    assert!(api.has_engine(handle, c"BAD_ENGINE_NAME_KEPT_ENGINE"));
    assert!(!api.has_engine(handle, c"NOT_THIS_ENGINES_NAME"));
    let served = api.engine_count(handle);

    // 2. Paths are frozen while a handle lives.
    assert_eq!(
        api.set_paths(&[&extra], HIPDNN_PLUGIN_LOADING_ABSOLUTE),
        HIPDNN_STATUS_NOT_SUPPORTED
    );
    assert!(
        api.last_error().contains("handle"),
        "the message names the reason"
    );

    // 3. Four threads create and destroy handles concurrently while this one lives.
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                for _ in 0..20 {
                    let h = api.create();
                    assert_eq!(api.engine_count(h), served);
                    api.destroy(h);
                }
            });
        }
    });
    api.destroy(handle);

    // 4. ABSOLUTE: only the given paths; ADDITIVE: the environment directory and them.
    assert_eq!(
        api.set_paths(&[&extra], HIPDNN_PLUGIN_LOADING_ABSOLUTE),
        HIPDNN_STATUS_SUCCESS
    );
    let handle = api.create();
    let loaded = api.plugin_paths(handle);
    assert_eq!(loaded.len(), 1, "{loaded:#?}");
    assert!(loaded[0].ends_with("libextra_copy.so"));
    assert_eq!(api.engine_count(handle), 1);
    api.destroy(handle);
    assert_eq!(
        api.set_paths(&[&extra], HIPDNN_PLUGIN_LOADING_ADDITIVE),
        HIPDNN_STATUS_SUCCESS
    );
    let handle = api.create();
    let loaded = api.plugin_paths(handle);
    assert_eq!(
        loaded.len(),
        GOOD.len() + BAD_HANDLE.len() + 1,
        "{loaded:#?}"
    );
    // The copy's engine duplicates good_plugin's: the first in load order keeps it.
    assert_eq!(api.engine_count(handle), served);
    api.destroy(handle);

    // SAFETY: removes the registration made above.
    unsafe {
        assert_eq!(
            (api.set_log_callback)(Some(record), HIPDNN_SEV_OFF, HIPDNN_LOG_CALLBACK_SYNC, user),
            HIPDNN_STATUS_SUCCESS
        );
    }
    // The sink wrote what the callback got to HIPDNN_LOG_FILE, not to standard error.
    let logged = std::fs::read_to_string(&log_file).expect("the log file exists");
    assert!(
        logged
            .lines()
            .any(|l| l.starts_with("hipdnn error: ") && l.contains("returned null handle")),
        "{logged}"
    );
    println!("cdylib: all checks passed");
}
