//! One loaded engine plugin: the library, every entry point resolved from it, and what
//! the load-time handshake learned.
//!
//! [`LoadedPlugin::load`] first checks that the file is a regular file and a shared
//! object this process can map whole ([`elf`]: a truncated file or one for another
//! machine is refused with why, never opened by the loader). It then opens the file
//! with `RTLD_NOW | RTLD_LOCAL` (plus `RTLD_NODELETE`, see below) and runs hipDNN's
//! handshake, in hipDNN's order:
//!
//! 1. resolve the base symbols: `hipdnnPluginGetName`, `GetVersion`, `GetType`,
//!    `GetLastErrorString` are required; `GetApiVersion`, `SetLoggingCallback`,
//!    `SetLogLevel` are optional (a missing one is logged at info);
//! 2. call GetName, GetVersion, GetApiVersion (absent ⇒ `1.0.0`) and GetType, which
//!    must say `ENGINE`;
//! 3. install the backend's log sink and push the current log level;
//! 4. resolve the 12 required engine symbols (a missing one rejects the plugin, naming
//!    it) and the optional ones (`GetEngineName`, `ExecuteOpGraphWithOverrides`, and the
//!    three plan-serialization functions, which count only all together);
//! 5. check the API version: a semantic version with major 1 (major 0 is accepted with
//!    an info log, as hipDNN's transitional shim does; such a plugin is then never asked
//!    about a graph, since every graph needs at least 1.0.0: see
//!    [`OperationGraph::required_api_version`](crate::OperationGraph::required_api_version));
//! 6. read the engine ids with the two-call protocol: at least one, the same count in
//!    both calls, no id twice;
//! 7. ask each engine's name when `GetEngineName` is exported (`NOT_APPLICABLE`, or
//!    `SUCCESS` with a null or empty name, is no name: the engine keeps the registry's
//!    name or its id in hex). Names are recorded, not yet checked: admission (name
//!    hashes to id, first plugin keeps a duplicate id) happens when engines are routed.
//!
//! Every call's status is checked; on failure the plugin's last error is copied at once
//! and the error reads `Failed to <action>. Status: <NAME>(<n>), Error: <msg>`. Strings
//! from the plugin are read with a length bound.
//!
//! The module is split along those lines: [`LoadedPlugin`] and what it reports
//! (`loaded`), the handshake that makes one (`handshake`), and the calls the backend
//! makes through one afterwards (`calls`), with the bounded reading of what a plugin
//! hands out (`strings`).

mod calls;
pub mod elf;
mod handshake;
mod loaded;
mod strings;

pub(crate) use strings::read_bounded;

pub use handshake::{DEFAULT_API_VERSION, MAX_ENGINES, MAX_STRING_LEN};
pub use loaded::{EngineInfo, EngineName, LoadedPlugin};

type Status = hipdnn_plugin_abi::hipdnnPluginStatus_t;
type Span = hipdnn_plugin_abi::hipdnnPluginConstData_t;
type PluginHandle = hipdnn_plugin_abi::hipdnnEnginePluginHandle_t;
type Context = hipdnn_plugin_abi::hipdnnEnginePluginExecutionContext_t;
