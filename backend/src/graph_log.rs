//! Graph dumps: with `HIPDNN_LOG_GRAPH_DIR` set to a directory, every operation graph
//! the C API finalizes (built from operation descriptors or deserialized from bytes) is
//! written there as JSON, for inspecting what an application asked for and for replaying
//! it with `hipdnn run`.
//!
//! * The directory is the variable's value with surrounding whitespace removed, taken
//!   relative to the current directory when relative, and created if missing. Unset or
//!   empty: nothing is written. The variable is read at every finalize.
//! * A graph goes to `graph_<id>.json` when it carries an id (the UUID, `8-4-4-4-12`
//!   lowercase hex), else to `graph_<h>.json` with `h` the FNV-1a 64 hash of its
//!   serialized bytes as 16 hex digits. An existing file is left alone: finalizing the
//!   same graph again writes nothing new.
//! * The JSON is upstream hipDNN's dialect, pretty-printed with a two-space indent as
//!   upstream's graph logger writes it (`nlohmann::json(graph).dump(2)`; see
//!   `docs/graph-json.md` and
//!   [`Graph::to_upstream_json`](hipdnn_flatbuffers_sdk::model::Graph::to_upstream_json)),
//!   so tools written for upstream's dumps read ours; `hipdnn run` reads them back too
//!   (it takes either dialect).
//! * Failures (a directory that cannot be made, a file that cannot be written) are logged
//!   as warnings and never fail the finalize.

use std::path::{Path, PathBuf};

use hipdnn_data_sdk::fnv1a_64;

use crate::execution::OperationGraph;

/// Name of the environment variable naming the dump directory.
pub const LOG_GRAPH_DIR_ENV: &str = "HIPDNN_LOG_GRAPH_DIR";

/// The dump directory `HIPDNN_LOG_GRAPH_DIR` names, if it is set and not blank.
fn dump_dir() -> Option<PathBuf> {
    let value = std::env::var_os(LOG_GRAPH_DIR_ENV)?;
    let text = value.to_string_lossy();
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return None;
    }
    let path = PathBuf::from(trimmed);
    if path.is_relative() {
        match std::env::current_dir() {
            Ok(cwd) => Some(cwd.join(path)),
            Err(e) => {
                tracing::warn!(dir = %path.display(), "{LOG_GRAPH_DIR_ENV}: no current directory to resolve it against: {e}");
                None
            }
        }
    } else {
        Some(path)
    }
}

/// The file name a graph is dumped under.
pub fn dump_file_name(graph: &OperationGraph) -> String {
    match &graph.graph().id {
        Some(id) => format!("graph_{id}.json"),
        None => format!("graph_{:016x}.json", fnv1a_64(graph.bytes())),
    }
}

/// Dumps `graph` into the directory `HIPDNN_LOG_GRAPH_DIR` names, if it names one.
pub fn log_graph(graph: &OperationGraph) {
    if let Some(dir) = dump_dir() {
        // Failures are logged by `dump_graph` and never fail the caller.
        let _ = dump_graph(&dir, graph);
    }
}

/// Writes `graph` as JSON into `dir` (created if missing), unless its file exists; the
/// file's path when this call wrote it. Failures are logged as warnings.
pub fn dump_graph(dir: &Path, graph: &OperationGraph) -> Option<PathBuf> {
    if let Err(e) = std::fs::create_dir_all(dir) {
        tracing::warn!(dir = %dir.display(), "{LOG_GRAPH_DIR_ENV}: cannot create the graph dump directory: {e}");
        return None;
    }
    let path = dir.join(dump_file_name(graph));
    // `create_new`: a file already there (the same graph, dumped before) stays as it is.
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path);
    let mut file = match file {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            tracing::info!(path = %path.display(), "graph already dumped");
            return None;
        }
        Err(e) => {
            tracing::warn!(path = %path.display(), "{LOG_GRAPH_DIR_ENV}: cannot write the graph dump: {e}");
            return None;
        }
    };
    let json = graph.graph().to_upstream_json();
    if let Err(e) = std::io::Write::write_all(&mut file, json.as_bytes()) {
        tracing::warn!(path = %path.display(), "{LOG_GRAPH_DIR_ENV}: cannot write the graph dump: {e}");
        return None;
    }
    tracing::info!(path = %path.display(), graph = %graph.graph().name, "graph dumped");
    Some(path)
}
