//! Write hipDNN engine plugins in Rust.
//!
//! A hipDNN engine plugin is a shared library that exports a fixed set of C functions:
//! the host (hipDNN's backend, or ours) `dlopen`s it, asks which engines it offers,
//! hands it FlatBuffer-serialized operation graphs, and has it build and execute plans.
//! This crate turns that C contract into a few Rust traits and one macro:
//!
//! 1. describe each way of running graphs as an [`IPlanBuilder`] that decides
//!    applicability and builds an [`IPlan`];
//! 2. group builders into [`Engine`]s (each named; the id is the name's FNV-1a hash) and
//!    engines into an [`EngineManager`];
//! 3. implement [`EnginePlugin`] (name, version, engines, per-handle state) and invoke
//!    [`export_engine_plugin!`] in a `cdylib` crate.
//!
//! The result loads in our backend and, because the ABI and wire format are hipDNN's,
//! in hipDNN's own.
//!
//! Building blocks for the plan builders themselves: [`graph`] indexes a graph
//! (producers, consumers, effective types, pass-by-value scalars) and cuts it into
//! fusable chains (conv/matmul → bias → activation → residual add, batch norm →
//! activation, pointwise chains) under an engine's own fusion policy, and
//! [`knobs::GlobalSettings`] reads the standard `global.*` knobs.
//!
//! # Why it is built this way
//!
//! * **Authors never write `extern "C"`.** The macro emits thin exports that call one
//!   generic body per entry point ([`ffi`]). Every body runs inside one boundary: null
//!   pointers become `BAD_PARAM`, errors become their status with the message kept as the
//!   thread's last error (`hipdnnPluginGetLastErrorString`), and a panic becomes
//!   `INTERNAL_ERROR` with the panic message, so nothing unwinds into the host. Keep
//!   `panic = "unwind"` (the default) in plugin crates, or panics abort instead.
//! * **Untrusted bytes are verified once, where they enter.** Graphs and engine configs
//!   are verified with the FlatBuffers verifier (and graphs validated) before plugin code
//!   sees them; builders receive a [`GraphView`] whose accessors cannot fail.
//! * **The stages own what the next borrows**, as in hipDNN: an engine's builders decide
//!   applicability and knobs; a plan is built from a graph and knob settings and must not
//!   keep the graph (its bytes are gone after the call); a plan is immutable and
//!   `Send + Sync`, so it may execute on many threads.
//! * **Check, build, cache.** A host asks one graph several questions in a row (which
//!   engines apply, details, workspace size, plan). Applicability is a cheap decision
//!   asked once per graph and plugin handle; a plan is built once per (graph, engine,
//!   knob settings) and kept in the handle ([`cache`]), which also answers the workspace
//!   size from it. An engine whose builds are expensive (vendor heuristics, kernel
//!   compilation, algorithm search) pays for them once.
//! * **Memory is declared, not guessed.** Each engine says whether its buffers are in
//!   device or host memory ([`MemoryKind`], device by default); the host reads it from
//!   the engine's details and passes pointers of that kind. A plan's
//!   [`Execution`] gives device engines [`DevicePtr`]s and the stream to enqueue on, and
//!   only host engines host slices ([`memory`]). [`EnginePlugin::stream_changed`] hears
//!   about a new stream before the handle takes it.
//! * **Knobs are checked on both sides.** Engines advertise knobs built with
//!   [`KnobFactory`](knobs::KnobFactory) (custom ids may not use the reserved `global.`
//!   namespace); settings arriving in an engine config are checked against them here
//!   (type or range violations are `BAD_PARAM` naming the knob, unknown knobs are ignored
//!   with a warning) before your [`Settings`] read them.
//! * **Logging crosses the boundary explicitly.** A cdylib has its own copy of
//!   `tracing`'s dispatcher; the SDK forwards the plugin's `tracing` events to the host's
//!   callback at the level the host set ([`logging`]).
//! * **Ownership is in the types.** Engine details and serialized plans are handed out
//!   by the plugin handle and freed only through the matching destroy call; handles and
//!   execution contexts are boxes the host owns between create and destroy.
//!
//! # A complete minimal plugin
//!
//! An engine that runs single-node ReLU graphs on host memory, with one knob. This is
//! `plugin-sdk/examples/minimal_plugin.rs`, which the tests build as a cdylib, load and
//! run through the C ABI:
//!
//! ```no_run
#![doc = include_str!("../examples/minimal_plugin.rs")]
//! ```
//!
//! Build it as a `cdylib` (`[lib] crate-type = ["cdylib"]`), put the `.so` in
//! `hipdnn_plugins/engines/` next to the backend library (or point `HIPDNN_PLUGIN_DIR`
//! at its directory), and check its exports with `scripts/check-plugin-symbols.sh`.
//! `docs/writing-a-plugin.md` walks through building, installing, testing and
//! troubleshooting.

#![deny(missing_docs)]

pub use hipdnn_plugin_abi as abi;
pub mod cache;
mod engine;
mod error;
pub mod ffi;
pub mod graph;
pub mod knobs;
pub mod logging;
mod macros;
pub mod memory;

use std::ffi::CStr;

pub use engine::{
    BoxedPlan, DEFAULT_PLAN_CACHE_CAPACITY, Engine, EngineManager, Handle, IEngine, IPlan,
    IPlanBuilder, KnobChoices, KnobValues, Settings,
};
pub use error::{
    PluginError, PluginResult, boundary, clear_last_error, last_error, set_last_error,
};
pub use hipdnn_data_sdk::MemoryKind;
pub use hipdnn_flatbuffers_sdk::{GraphView, NodeView, TensorView};
pub use memory::{Buffers, DevicePtr, Execution, WorkspaceView};
/// The logging facade whose events the SDK forwards to the host ([`logging`]).
pub use tracing;

/// The everyday imports of a plugin.
pub mod prelude {
    pub use crate::abi::hipStream_t;
    pub use crate::knobs::{KnobFactory, global as global_knobs};
    pub use crate::{
        BoxedPlan, Buffers, DevicePtr, Engine, EngineManager, EnginePlugin, Execution, Handle,
        IEngine, IPlan, IPlanBuilder, KnobChoices, KnobValues, PluginError, PluginResult,
        SerializablePlugin, Settings, WorkspaceView,
    };
    pub use hipdnn_data_sdk::{DataType, MemoryKind};
    pub use hipdnn_flatbuffers_sdk::model::{Knob, KnobValue, NodeAttributesRef};
    pub use hipdnn_flatbuffers_sdk::wire::{self, ConvMode, PointwiseMode};
    pub use hipdnn_flatbuffers_sdk::{GraphView, NodeView, TensorView};
}

/// A plugin: its identity, its engines, and its per-handle state.
///
/// Implement it on a marker type and pass that type to [`export_engine_plugin!`].
pub trait EnginePlugin: 'static {
    /// The plugin's name (`hipdnnPluginGetName`).
    const NAME: &'static CStr;
    /// The plugin's own version, free-form (`hipdnnPluginGetVersion`).
    const VERSION: &'static CStr;
    /// The engine plugin C ABI version implemented (`hipdnnPluginGetApiVersion`).
    const API_VERSION: &'static CStr = abi::HIPDNN_ENGINE_API_VERSION;

    /// State per hipDNN handle (e.g. a vendor library handle); `()` when none.
    type Handle: Send + Sync + 'static;
    /// What plan builders read from an engine config's knob settings; `()` when none.
    type Settings: Settings + 'static;
    /// The execution context the plugin hands out: a built plan.
    type Context: IPlan<Self::Handle> + 'static;

    /// The plugin's engines. Called once per process; the result is shared by every
    /// handle.
    fn engines() -> EngineManager<Self::Handle, Self::Settings, Self::Context>;

    /// How many built plans each plugin handle keeps (least recently used evicted; 0
    /// keeps none). See [`cache`].
    const PLAN_CACHE_CAPACITY: usize = DEFAULT_PLAN_CACHE_CAPACITY;

    /// Makes the state of a new plugin handle (`hipdnnEnginePluginCreate`). A plugin
    /// that cannot run on this machine (no device, missing library) fails here with a
    /// message saying why.
    ///
    /// # Errors
    /// Whatever prevents creating a handle.
    fn create_handle() -> PluginResult<Self::Handle>;

    /// Called by `hipdnnEnginePluginSetStream` before the handle takes `stream` (e.g. to
    /// bind a vendor library handle to it). On error the handle keeps its stream.
    ///
    /// # Errors
    /// Whatever prevents using `stream`.
    fn stream_changed(_handle: &Self::Handle, _stream: abi::hipStream_t) -> PluginResult<()> {
        Ok(())
    }
}

/// A plugin whose plans can be saved and restored (the optional plan-serialization
/// functions, exported with `export_engine_plugin!(P, serialization)`).
pub trait SerializablePlugin: EnginePlugin {
    /// Bytes from which [`SerializablePlugin::deserialize`] rebuilds `plan`.
    ///
    /// # Errors
    /// A plan that cannot be saved.
    fn serialize(handle: &Handle<Self::Handle>, plan: &Self::Context) -> PluginResult<Vec<u8>>;

    /// Rebuilds a plan from [`SerializablePlugin::serialize`]'s bytes. The bytes come
    /// from outside: check them.
    ///
    /// # Errors
    /// Malformed or foreign bytes (`BAD_PARAM`).
    fn deserialize(handle: &Handle<Self::Handle>, bytes: &[u8]) -> PluginResult<Self::Context>;

    /// The memory a restored plan runs in; `None` (the default) means the memory every
    /// engine of the plugin declares. A plugin mixing host and device engines must say.
    fn memory_kind(_plan: &Self::Context) -> Option<MemoryKind> {
        None
    }
}
