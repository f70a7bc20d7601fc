//! The author-facing model: a plugin handle, plans, plan builders, engines and the
//! engine manager, mirroring hipDNN's engine → plan → execution context.

use std::collections::HashMap;
use std::ffi::{CStr, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Mutex;
use std::sync::atomic::{AtomicPtr, Ordering};

use hipdnn_data_sdk::MemoryKind;
use hipdnn_flatbuffers_sdk::GraphView;
use hipdnn_flatbuffers_sdk::model::{EngineConfig, EngineDetails, Knob, KnobSetting, KnobValue};

use crate::abi::*;
use crate::cache::HandleCaches;
use hipdnn_data_sdk::panic_message;

use crate::error::{PluginError, PluginResult};
use crate::knobs;
use crate::memory::Execution;

/// Plans a handle keeps when the plugin does not say otherwise
/// ([`EnginePlugin::PLAN_CACHE_CAPACITY`](crate::EnginePlugin::PLAN_CACHE_CAPACITY)).
pub const DEFAULT_PLAN_CACHE_CAPACITY: usize = 32;

/// Per-hipDNN-handle plugin state: the author's `H`, the stream set by the host, the
/// buffers this handle handed out (engine details, serialized plans) until the host
/// returns them, and the applicability and plan caches ([`crate::cache`]).
#[derive(Debug)]
pub struct Handle<H = ()> {
    stream: AtomicPtr<ihipStream_t>,
    state: H,
    pub(crate) handed_out: Mutex<HashMap<usize, Box<[u8]>>>,
    pub(crate) caches: HandleCaches,
}

impl<H> Handle<H> {
    /// Wraps the author's state; the stream starts null (HIP's default stream) and the
    /// plan cache holds [`DEFAULT_PLAN_CACHE_CAPACITY`] plans.
    pub fn new(state: H) -> Self {
        Self::with_plan_cache_capacity(state, DEFAULT_PLAN_CACHE_CAPACITY)
    }

    /// As [`Handle::new`], keeping at most `plans` built plans (0: none).
    pub fn with_plan_cache_capacity(state: H, plans: usize) -> Self {
        Self {
            stream: AtomicPtr::new(std::ptr::null_mut()),
            state,
            handed_out: Mutex::new(HashMap::new()),
            caches: HandleCaches::new(plans),
        }
    }

    /// The stream work must be enqueued on (set by `hipdnnEnginePluginSetStream`; the
    /// caller keeps it alive).
    pub fn stream(&self) -> hipStream_t {
        self.stream.load(Ordering::Acquire)
    }

    pub(crate) fn set_stream(&self, stream: hipStream_t) {
        self.stream.store(stream, Ordering::Release);
    }

    /// The author's state.
    pub fn state(&self) -> &H {
        &self.state
    }

    /// How many built plans the handle keeps now.
    pub fn cached_plan_count(&self) -> usize {
        self.caches.plan_count()
    }

    /// Keeps `bytes` alive until [`Handle::take_back`] and returns the span to hand out.
    pub(crate) fn hand_out(&self, bytes: Vec<u8>) -> hipdnnPluginConstData_t {
        let bytes = bytes.into_boxed_slice();
        let span = hipdnnPluginConstData_t {
            ptr: bytes.as_ptr().cast(),
            size: bytes.len(),
        };
        self.handed_out
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(span.ptr as usize, bytes);
        span
    }

    /// Frees a span from [`Handle::hand_out`].
    pub(crate) fn take_back(&self, ptr: *const c_void) -> PluginResult<()> {
        self.handed_out
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&(ptr as usize))
            .map(drop)
            .ok_or_else(|| {
                PluginError::bad_param(format!(
                    "buffer {ptr:p} was not handed out by this plugin handle"
                ))
            })
    }
}

impl<H> std::ops::Deref for Handle<H> {
    type Target = H;
    fn deref(&self) -> &H {
        &self.state
    }
}

/// An executable plan: immutable once built, so one plan may run on many threads (and
/// the SDK shares one plan between the execution contexts built from the same graph and
/// knob settings).
pub trait IPlan<H = ()>: Send + Sync {
    /// Workspace bytes `execute` needs (in the engine's memory).
    fn workspace_size(&self) -> usize {
        0
    }

    /// Runs the plan: a device engine enqueues its work on `exec.stream()` (the plugin
    /// handle's stream) and returns; a host engine computes on the calling thread.
    ///
    /// # Errors
    /// Whatever the kernels report; missing buffers ([`Buffers::require`](crate::Buffers::require)).
    fn execute(&self, handle: &Handle<H>, exec: &Execution<'_>) -> PluginResult<()>;
}

/// The usual execution context: any plan, boxed.
pub type BoxedPlan<H = ()> = Box<dyn IPlan<H>>;

impl<H> IPlan<H> for Box<dyn IPlan<H>> {
    fn workspace_size(&self) -> usize {
        (**self).workspace_size()
    }

    fn execute(&self, handle: &Handle<H>, exec: &Execution<'_>) -> PluginResult<()> {
        (**self).execute(handle, exec)
    }
}

/// The knob values an engine config chose, already checked against the engine's knobs;
/// knobs left out read as their defaults.
#[derive(Debug, Clone, Copy)]
pub struct KnobChoices<'a> {
    /// The engine's knobs for this graph.
    pub knobs: &'a [Knob],
    /// The config's settings.
    pub settings: &'a [KnobSetting],
}

impl<'a> KnobChoices<'a> {
    /// The chosen (or default) value of `id`.
    pub fn value(&self, id: &str) -> Option<&'a KnobValue> {
        knobs::resolve(self.knobs, self.settings, id)
    }

    /// The chosen (or default) value of int knob `id`.
    pub fn int(&self, id: &str) -> Option<i64> {
        match self.value(id) {
            Some(KnobValue::Int(v)) => Some(*v),
            _ => None,
        }
    }

    /// The chosen (or default) value of float knob `id`.
    pub fn float(&self, id: &str) -> Option<f64> {
        match self.value(id) {
            Some(KnobValue::Float(v)) => Some(*v),
            _ => None,
        }
    }

    /// The chosen (or default) value of string knob `id`.
    pub fn string(&self, id: &str) -> Option<&'a str> {
        match self.value(id) {
            Some(KnobValue::String(v)) => Some(v),
            _ => None,
        }
    }
}

/// Execution settings derived from an engine config's knob choices.
pub trait Settings: Sized + Send + Sync {
    /// Reads the choices.
    ///
    /// # Errors
    /// Combinations of values the engine cannot honour (`BAD_PARAM`).
    fn from_choices(choices: &KnobChoices<'_>) -> PluginResult<Self>;
}

impl Settings for () {
    fn from_choices(_: &KnobChoices<'_>) -> PluginResult<()> {
        Ok(())
    }
}

/// Settings for engines that need no type of their own: the chosen (or default) value
/// of every knob the engine advertised, by id.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KnobValues(Vec<KnobSetting>);

impl KnobValues {
    /// The values as choices with nothing left to default.
    fn choices(&self) -> KnobChoices<'_> {
        KnobChoices {
            knobs: &[],
            settings: &self.0,
        }
    }

    /// The value of knob `id`.
    pub fn value(&self, id: &str) -> Option<&KnobValue> {
        self.choices().value(id)
    }

    /// The value of int knob `id`.
    pub fn int(&self, id: &str) -> Option<i64> {
        self.choices().int(id)
    }

    /// The value of float knob `id`.
    pub fn float(&self, id: &str) -> Option<f64> {
        self.choices().float(id)
    }

    /// The value of string knob `id`.
    pub fn string(&self, id: &str) -> Option<&str> {
        self.choices().string(id)
    }
}

impl Settings for KnobValues {
    fn from_choices(choices: &KnobChoices<'_>) -> PluginResult<Self> {
        Ok(Self(
            choices
                .knobs
                .iter()
                .filter_map(|k| {
                    Some(KnobSetting {
                        knob_id: k.knob_id.clone(),
                        value: choices.value(&k.knob_id)?.clone(),
                    })
                })
                .collect(),
        ))
    }
}

/// One way of running a family of graphs. An engine asks its builders in order and uses
/// the first that applies.
///
/// The lifecycle is check → build → cache: [`IPlanBuilder::is_applicable`] is a cheap
/// decision from the graph alone (what it cannot run, it does not claim; no plan is
/// built), asked at most once per graph and plugin handle; [`IPlanBuilder::build_plan`]
/// runs once per (graph, knob settings), and the plan it returns is cached in the
/// plugin handle, which takes the workspace size from it.
pub trait IPlanBuilder<H = (), S = (), C = Box<dyn IPlan<H>>>: Send + Sync {
    /// Whether this builder can run `graph`: decided from the graph alone, cheaply (the
    /// SDK remembers the answer per graph and handle).
    fn is_applicable(&self, handle: &Handle<H>, graph: &GraphView<'_>) -> bool;

    /// Knobs of this builder, advertised with the engine's details (ids outside
    /// `global.`; build them with [`KnobFactory`](crate::knobs::KnobFactory)).
    fn custom_knobs(&self, _handle: &Handle<H>, _graph: &GraphView<'_>) -> Vec<Knob> {
        Vec::new()
    }

    /// Builds the plan, including whatever is expensive (heuristics, compilation,
    /// algorithm search): it runs once per graph and knob settings. The graph's bytes
    /// are gone after this call: copy what the plan needs.
    ///
    /// # Errors
    /// Anything that prevents building; prefer declining in `is_applicable`.
    fn build_plan(&self, handle: &Handle<H>, graph: &GraphView<'_>, settings: S)
    -> PluginResult<C>;
}

/// An engine: a globally unique id (FNV-1a of its name) over one or more plan builders.
///
/// Most plugins use [`Engine`]; implement this trait directly only for an engine that
/// decides everything itself.
pub trait IEngine<H = (), S = (), C = Box<dyn IPlan<H>>>: Send + Sync {
    /// The engine id.
    fn id(&self) -> i64;

    /// The engine's name, NUL-terminated, hashing to [`IEngine::id`] (served by
    /// `hipdnnEnginePluginGetEngineName`); `None` declines.
    fn name(&self) -> Option<&'static CStr> {
        None
    }

    /// The memory the engine's buffers and workspace are in (device unless it says
    /// otherwise); the SDK adds the matching behavior note to its details.
    fn memory_kind(&self) -> MemoryKind {
        MemoryKind::Device
    }

    /// Whether the engine can run `graph` (cheap; see [`IPlanBuilder::is_applicable`]).
    fn is_applicable(&self, handle: &Handle<H>, graph: &GraphView<'_>) -> bool;

    /// Details (knobs, behavior notes) for `graph`.
    ///
    /// # Errors
    /// `NOT_APPLICABLE` when the engine does not apply.
    fn details(&self, handle: &Handle<H>, graph: &GraphView<'_>) -> PluginResult<EngineDetails>;

    /// Builds the plan for `graph` under `config` (the SDK caches it in the handle).
    ///
    /// # Errors
    /// Invalid knob settings (`BAD_PARAM`), `NOT_APPLICABLE`, builder failures.
    fn create_plan(
        &self,
        handle: &Handle<H>,
        config: &EngineConfig,
        graph: &GraphView<'_>,
    ) -> PluginResult<C>;
}

/// The usual engine: a name, the memory it runs in, plan builders asked in order, and
/// the standard knobs it honours.
pub struct Engine<H = (), S = (), C = Box<dyn IPlan<H>>> {
    id: i64,
    name: &'static CStr,
    memory: MemoryKind,
    builders: Vec<Box<dyn IPlanBuilder<H, S, C>>>,
    global_knobs: Vec<Knob>,
    behavior_notes: Vec<i32>,
}

impl<H, S, C> std::fmt::Debug for Engine<H, S, C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("id", &hipdnn_data_sdk::engine_id_to_hex(self.id))
            .field("name", &self.name)
            .field("memory", &self.memory)
            .field("builders", &self.builders.len())
            .finish()
    }
}

impl<H, S, C> Engine<H, S, C> {
    /// An engine named `name` (its id is the name's FNV-1a hash), taking device memory
    /// until [`Engine::with_memory_kind`] says otherwise.
    pub fn new(name: &'static CStr) -> Self {
        let text = name.to_str().expect("engine names are ASCII");
        Self {
            id: hipdnn_data_sdk::engine_id_for_name_checked(text),
            name,
            memory: MemoryKind::Device,
            builders: Vec::new(),
            global_knobs: Vec::new(),
            behavior_notes: Vec::new(),
        }
    }

    /// Declares the memory the engine's buffers and workspace are in
    /// ([`MemoryKind::Host`] for an engine computing on the CPU).
    pub fn with_memory_kind(mut self, memory: MemoryKind) -> Self {
        self.memory = memory;
        self
    }

    /// Adds a plan builder (asked after those added before).
    pub fn with_builder(mut self, builder: impl IPlanBuilder<H, S, C> + 'static) -> Self {
        self.builders.push(Box::new(builder));
        self
    }

    /// Advertises a standard knob the engine honours (see [`knobs::global`]).
    pub fn with_global_knob(mut self, knob: Knob) -> Self {
        self.global_knobs.push(knob);
        self
    }

    /// Adds a `BehaviorNote` value to the engine's details.
    pub fn with_behavior_note(mut self, note: i32) -> Self {
        self.behavior_notes.push(note);
        self
    }

    /// The builder that applies to `graph`, asked once per graph and handle. A builder
    /// that panics is logged, and the engine then does not apply to the graph: its
    /// details and plans for it fail with the panic's message.
    fn applicable_builder(
        &self,
        handle: &Handle<H>,
        graph: &GraphView<'_>,
    ) -> crate::cache::Verdict {
        handle
            .caches
            .applicable_builder(self.id, graph.bytes(), || {
                let mut found = None;
                for (index, builder) in self.builders.iter().enumerate() {
                    match catch_unwind(AssertUnwindSafe(|| builder.is_applicable(handle, graph))) {
                        Ok(true) => {
                            found = Some(index);
                            break;
                        }
                        Ok(false) => {}
                        Err(payload) => {
                            let message = format!(
                                "engine {}: plan builder {index} panicked deciding applicability to graph \"{}\": {}",
                                self.name.to_string_lossy(),
                                graph.name(),
                                panic_message(&*payload)
                            );
                            tracing::error!(target: "hipdnn_plugin", "{message}");
                            return Err(message);
                        }
                    }
                }
                Ok(found)
            })
    }

    fn builder(
        &self,
        handle: &Handle<H>,
        graph: &GraphView<'_>,
    ) -> PluginResult<&dyn IPlanBuilder<H, S, C>> {
        match self.applicable_builder(handle, graph) {
            Ok(Some(index)) => Ok(&*self.builders[index]),
            Ok(None) => Err(PluginError::not_applicable(format!(
                "engine {} does not apply to graph \"{}\"",
                self.name.to_string_lossy(),
                graph.name()
            ))),
            Err(message) => Err(PluginError::internal(message)),
        }
    }

    fn knobs(
        &self,
        builder: &dyn IPlanBuilder<H, S, C>,
        handle: &Handle<H>,
        graph: &GraphView<'_>,
    ) -> PluginResult<Vec<Knob>> {
        let custom = builder.custom_knobs(handle, graph);
        if let Some(knob) = custom
            .iter()
            .find(|k| k.knob_id.starts_with(knobs::GLOBAL_PREFIX))
        {
            return Err(PluginError::internal(format!(
                "engine {}: custom knob \"{}\" uses the reserved global. namespace",
                self.name.to_string_lossy(),
                knob.knob_id
            )));
        }
        if let Some((knob, reason)) = custom
            .iter()
            .find_map(|k| knobs::constraint_type_mismatch(k).map(|r| (k, r)))
        {
            return Err(PluginError::internal(format!(
                "engine {}: knob \"{}\" has {reason}",
                self.name.to_string_lossy(),
                knob.knob_id
            )));
        }
        Ok(self.global_knobs.iter().cloned().chain(custom).collect())
    }
}

impl<H: Send + Sync, S: Settings, C> IEngine<H, S, C> for Engine<H, S, C> {
    fn id(&self) -> i64 {
        self.id
    }

    fn name(&self) -> Option<&'static CStr> {
        Some(self.name)
    }

    fn memory_kind(&self) -> MemoryKind {
        self.memory
    }

    fn is_applicable(&self, handle: &Handle<H>, graph: &GraphView<'_>) -> bool {
        matches!(self.applicable_builder(handle, graph), Ok(Some(_)))
    }

    fn details(&self, handle: &Handle<H>, graph: &GraphView<'_>) -> PluginResult<EngineDetails> {
        let builder = self.builder(handle, graph)?;
        let mut behavior_notes = self.behavior_notes.clone();
        behavior_notes.extend(
            self.memory
                .behavior_note()
                .filter(|note| !behavior_notes.contains(note)),
        );
        Ok(EngineDetails {
            engine_id: self.id,
            knobs: self.knobs(builder, handle, graph)?,
            behavior_notes,
            name: self.name.to_string_lossy().into_owned(),
            candidate_page: None,
        })
    }

    fn create_plan(
        &self,
        handle: &Handle<H>,
        config: &EngineConfig,
        graph: &GraphView<'_>,
    ) -> PluginResult<C> {
        let builder = self.builder(handle, graph)?;
        let knobs = self.knobs(builder, handle, graph)?;
        knobs::check_settings(&knobs, &config.knobs)?;
        let settings = S::from_choices(&KnobChoices {
            knobs: &knobs,
            settings: &config.knobs,
        })?;
        builder.build_plan(handle, graph, settings)
    }
}

/// The plugin's engines, routed by id.
pub struct EngineManager<H = (), S = (), C = Box<dyn IPlan<H>>> {
    engines: Vec<Box<dyn IEngine<H, S, C>>>,
    ids: Vec<i64>,
}

impl<H, S, C> std::fmt::Debug for EngineManager<H, S, C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EngineManager")
            .field("ids", &self.ids)
            .finish()
    }
}

impl<H, S, C> Default for EngineManager<H, S, C> {
    fn default() -> Self {
        Self {
            engines: Vec::new(),
            ids: Vec::new(),
        }
    }
}

impl<H, S, C> EngineManager<H, S, C> {
    /// No engines yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds an engine.
    ///
    /// # Panics
    /// When an engine with the same id is already present: ids identify engines across
    /// every plugin, so a duplicate is a bug in the plugin.
    pub fn with_engine(mut self, engine: impl IEngine<H, S, C> + 'static) -> Self {
        let id = engine.id();
        assert!(
            !self.ids.contains(&id),
            "engine id {} added twice",
            hipdnn_data_sdk::engine_id_to_hex(id)
        );
        self.ids.push(id);
        self.engines.push(Box::new(engine));
        self
    }

    /// Every engine id, in the order added.
    pub fn ids(&self) -> &[i64] {
        &self.ids
    }

    /// The engine with `id`.
    ///
    /// # Errors
    /// `INVALID_VALUE` naming the id when the plugin has no such engine.
    pub fn engine(&self, id: i64) -> PluginResult<&dyn IEngine<H, S, C>> {
        self.ids
            .iter()
            .position(|&i| i == id)
            .map(|at| &*self.engines[at])
            .ok_or_else(|| {
                PluginError::invalid_value(format!(
                    "engine id {} is not an engine of this plugin",
                    hipdnn_data_sdk::engine_id_to_hex(id)
                ))
            })
    }

    /// Ids of the engines that can run `graph`.
    ///
    /// An engine that panics deciding is logged and left out; the others still answer.
    pub fn applicable_ids(&self, handle: &Handle<H>, graph: &GraphView<'_>) -> Vec<i64> {
        self.engines
            .iter()
            .filter(|e| {
                catch_unwind(AssertUnwindSafe(|| e.is_applicable(handle, graph))).unwrap_or_else(
                    |payload| {
                        tracing::error!(
                            target: "hipdnn_plugin",
                            "engine {} panicked deciding applicability to graph \"{}\" ({}); left out",
                            hipdnn_data_sdk::engine_id_to_hex(e.id()),
                            graph.name(),
                            panic_message(&*payload)
                        );
                        false
                    },
                )
            })
            .map(|e| e.id())
            .collect()
    }
}
