//! The hipDNN backend: the host side of the engine-plugin ABI.
//!
//! Applications create hipDNN handles through the backend; the backend finds engine
//! plugins (shared libraries exporting hipDNN's engine-plugin C ABI, see
//! `hipdnn-plugin-sdk`), loads them, and routes each graph to the engines that can run
//! it. This crate is the Rust API and all of the logic; the C API
//! (`libhipdnn_backend.so`) will be a thin cdylib over it, so Rust users and tests link
//! this rlib and never the `.so`.
//!
//! So far it implements the two steps that happen once per process, before any handle:
//!
//! 1. **Discovery** ([`discovery`]): which files are plugins. Pure functions over paths
//!    and a small configuration ([`PluginPaths`], [`LoadingMode`]), with the process
//!    inputs (the backend module's directory, `HIPDNN_PLUGIN_DIR`) gathered in one
//!    [`SearchEnvironment`], so each of hipDNN's rules is tested with temporary
//!    directories. The result is a sorted, deduplicated list of canonical files plus
//!    one problem per unusable path.
//! 2. **Loading** ([`LoadedPlugin::load`], [`load_plugins`]): `dlopen` with
//!    `RTLD_NOW | RTLD_LOCAL` (+ `RTLD_NODELETE`) and hipDNN's handshake (name, version, API version, type,
//!    logging, every required symbol, engine ids). A plugin that fails any step is
//!    rejected with a [`LoadError`] saying exactly what was wrong (the missing symbol,
//!    the version text, the counts…), logged as `Error loading plugin from [path]: …`,
//!    and loading goes on.
//!
//! # Design
//!
//! * **A loaded plugin owns its library.** [`LoadedPlugin`] keeps the
//!   `libloading` library in the same struct as every function pointer copied out of
//!   it, declared last so it is dropped last, and never hands it out. Everything built
//!   later on a plugin (plugin handles, execution contexts, engine details) will borrow
//!   or reference-count the `LoadedPlugin`, so no pointer outlives its library.
//! * **Everything is resolved up front.** The 12 required engine symbols are resolved
//!   at load, so a broken plugin fails at load time naming the symbol, never in the
//!   middle of a graph. Optional symbols become `Option`s; the serialization trio counts
//!   only when complete.
//! * **Plugins are untrusted in what they say, trusted in what they run.** The backend
//!   cannot protect itself from a plugin's code (it runs in-process), but everything a
//!   plugin *reports* is checked: statuses, null strings, strings without a NUL within
//!   [`MAX_STRING_LEN`](plugin::MAX_STRING_LEN) bytes, API versions, engine counts
//!   (bounded before allocating), duplicate ids. None of it panics.
//! * **Failures are data.** Each error enum variant carries the plugin path and what
//!   failed; a failed plugin call keeps hipDNN's text,
//!   `Failed to <action>. Status: <NAME>(<n>), Error: <msg>` ([`PluginCallError`]),
//!   with the plugin's last error copied right after the call.
//! * **Logging uses `tracing`.** The library never installs a subscriber. Plugins get a
//!   log sink that re-emits their messages as backend events (target
//!   [`PLUGIN_LOG_TARGET`]), and the level the backend's subscriber enables.
//!
//! 3. **Admission** ([`PluginSet`]): an engine whose plugin names it must hash to its id;
//!    an id already provided by an earlier plugin (load order) stays there; dropped
//!    engines are logged and invisible. The loaded set is process-global
//!    ([`manager`]), shared by handles, kept after the last handle (LAZY) or unloaded
//!    with it (EAGER); paths cannot change while a handle lives.
//! 4. **Handles** ([`Handle`]): one plugin handle per plugin (a failing `Create`, a null
//!    handle or one colliding with another plugin's skips that plugin for this handle),
//!    engine routing, stream fan-out, and the engine queries.
//!
//! # Still to come
//!
//! Graph, plan and execute paths (end-to-end issue), the C API (`libhipdnn_backend.so`,
//! cbindgen header), and the install layout.

#![deny(missing_docs)]

pub mod capi;
pub mod discovery;
mod error;
pub mod execution;
pub mod frontend;
mod handle;
mod loader;
pub mod log_output;
mod logging;
pub mod manager;
pub mod plugin;
pub mod status;

pub use discovery::{
    Discovery, DiscoveryError, LoadingMode, PluginPaths, SearchEnvironment, discover,
};
pub use error::{LoadError, PluginCallError};
pub use execution::{OperationGraph, Plan, RankedEngine, VariantPack};
pub use handle::{EngineSummary, Handle};
pub use loader::load_plugins;
pub use logging::PLUGIN_LOG_TARGET;
pub use manager::{PluginSet, UnloadMode, set_engine_plugin_paths, set_plugin_unload_mode};
pub use plugin::{EngineInfo, EngineName, LoadedPlugin};
pub use status::{BackendError, BackendResult};
