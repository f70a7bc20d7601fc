//! Unavailable is an answer: with the cuDNN plugin installed next to the CPU plugin,
//! a machine without a GPU (or without cuDNN) gets a handle whose CPU engine serves
//! graphs, and the backend's log says why CUDNN_ENGINE is missing. On a machine with
//! a GPU, both engines are there.

mod support;

use std::ffi::{CStr, c_char, c_void};
use std::sync::Mutex;

use hipdnn_backend::log_output::{CallbackMode, set_user_callback};
use hipdnn_backend::{Handle, MemoryKind, OperationGraph};
use hipdnn_plugin_sdk::abi::{HIPDNN_SEV_ERROR, HIPDNN_SEV_INFO, hipdnnSeverity_t};

static LOG: Mutex<Vec<String>> = Mutex::new(Vec::new());

unsafe extern "C" fn collect(_: *mut c_void, _: hipdnnSeverity_t, message: *const c_char) {
    // SAFETY: the backend passes a NUL-terminated message valid for the call.
    let text = unsafe { CStr::from_ptr(message) }
        .to_string_lossy()
        .into_owned();
    LOG.lock().unwrap().push(text);
}

#[test]
fn the_cpu_engine_serves_when_cudnn_cannot() {
    let [cudnn, cpu] = support::plugins();
    let dir = tempfile::tempdir().unwrap();
    for lib in [&cudnn, &cpu] {
        std::fs::copy(lib, dir.path().join(lib.file_name().unwrap())).unwrap();
    }
    // SAFETY: set before any handle exists, in this test binary's only test.
    unsafe { std::env::set_var("HIPDNN_PLUGIN_DIR", dir.path()) };
    hipdnn_backend::log_output::ensure_installed();
    hipdnn_backend::log_output::set_global_level(HIPDNN_SEV_ERROR);
    set_user_callback(
        collect,
        std::ptr::null_mut(),
        HIPDNN_SEV_INFO,
        CallbackMode::Sync,
    )
    .unwrap();

    let handle = Handle::new();
    let names: Vec<String> = handle.engines().into_iter().map(|e| e.name).collect();
    assert!(names.iter().any(|n| n == "CPU_ENGINE"), "{names:?}");
    let log = LOG.lock().unwrap().join("\n");
    match hipdnn_cudnn_provider::probe::probe() {
        Err(reason) => {
            assert!(
                log.contains("hipdnn_cudnn_provider")
                    && log.contains("CUDNN_ENGINE is unavailable")
                    && log.contains(&reason),
                "the log should say why: {log}"
            );
            let unavailable = handle.unavailable_plugins();
            assert_eq!(unavailable.len(), 1, "{unavailable:?}");
            assert_eq!(unavailable[0].name, "hipdnn_cudnn_provider");
            assert_eq!(
                unavailable[0].reason,
                format!("CUDNN_ENGINE is unavailable: {reason}")
            );
            let graph = OperationGraph::new(hipdnn_frontend::samples::conv_bias_relu()).unwrap();
            let plan = handle.build_plan(&graph, &[]).unwrap();
            assert_eq!(plan.engine_name(), "CPU_ENGINE");
            assert_eq!(plan.memory_kind(), MemoryKind::Host);
        }
        Ok(found) => {
            assert!(found.devices > 0);
            assert!(handle.unavailable_plugins().is_empty());
            let id = handle.engine_id_by_name("CUDNN_ENGINE").unwrap();
            let graph = OperationGraph::new(hipdnn_frontend::samples::conv_bias_relu()).unwrap();
            let plan = handle.create_plan(&graph, id, &[]).unwrap();
            assert_eq!(plan.memory_kind(), MemoryKind::Device);
        }
    }
}
