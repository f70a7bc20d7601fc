//! What the backend's benchmarks share: the example plugin they load and the entry
//! points the peers resolve.

#![allow(dead_code, reason = "each benchmark uses a different part")]

use std::path::{Path, PathBuf};

/// The example plugin (`good_plugin`, an example of this package), built in the same
/// profile as the benchmark.
pub fn example_plugin() -> PathBuf {
    let exe = std::env::current_exe().expect("bench binary path");
    let file = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>")
        .join("examples/libgood_plugin.so");
    assert!(
        file.exists(),
        "{} missing: run `cargo build --release -p hipdnn-backend --examples`",
        file.display()
    );
    file
}

/// The entry points the backend resolves for the example plugin; the peers resolve the
/// same ones.
pub const SYMBOLS: [&str; 19] = [
    "hipdnnPluginGetName",
    "hipdnnPluginGetVersion",
    "hipdnnPluginGetApiVersion",
    "hipdnnPluginGetType",
    "hipdnnPluginGetLastErrorString",
    "hipdnnPluginSetLoggingCallback",
    "hipdnnPluginSetLogLevel",
    "hipdnnEnginePluginGetAllEngineIds",
    "hipdnnEnginePluginGetEngineName",
    "hipdnnEnginePluginCreate",
    "hipdnnEnginePluginDestroy",
    "hipdnnEnginePluginSetStream",
    "hipdnnEnginePluginGetApplicableEngineIds",
    "hipdnnEnginePluginGetEngineDetails",
    "hipdnnEnginePluginDestroyEngineDetails",
    "hipdnnEnginePluginGetWorkspaceSize",
    "hipdnnEnginePluginCreateExecutionContext",
    "hipdnnEnginePluginDestroyExecutionContext",
    "hipdnnEnginePluginExecuteOpGraph",
];
