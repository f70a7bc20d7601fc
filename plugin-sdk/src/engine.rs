//! The author-facing model: a plugin handle, plans, plan builders, engines and the
//! engine manager, mirroring hipDNN's engine → plan → execution context.

use std::collections::HashMap;
use std::ffi::{CStr, c_void};
use std::sync::Mutex;
use std::sync::atomic::{AtomicPtr, Ordering};

use hipdnn_flatbuffers_sdk::GraphView;
use hipdnn_flatbuffers_sdk::model::{EngineConfig, EngineDetails, Knob, KnobSetting, KnobValue};

use crate::abi::*;
use crate::error::{PluginError, PluginResult};
use crate::knobs;

/// Per-hipDNN-handle plugin state: the author's `H`, the stream set by the host, and the
/// buffers this handle handed out (engine details, serialized plans) until the host
/// returns them.
#[derive(Debug)]
pub struct Handle<H = ()> {
    stream: AtomicPtr<ihipStream_t>,
    state: H,
    pub(crate) handed_out: Mutex<HashMap<usize, Box<[u8]>>>,
}

impl<H> Handle<H> {
    /// Wraps the author's state; the stream starts null (HIP's default stream).
    pub fn new(state: H) -> Self {
        Self {
            stream: AtomicPtr::new(std::ptr::null_mut()),
            state,
            handed_out: Mutex::new(HashMap::new()),
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

/// The tensors' device buffers for one execution, looked up by uid.
#[derive(Debug, Clone, Copy)]
pub struct DeviceBuffers<'a> {
    buffers: &'a [hipdnnPluginDeviceBuffer_t],
}

impl<'a> DeviceBuffers<'a> {
    /// Wraps the host's array.
    pub fn new(buffers: &'a [hipdnnPluginDeviceBuffer_t]) -> Self {
        Self { buffers }
    }

    /// The pointer for tensor `uid`, if the host passed one.
    pub fn get(&self, uid: i64) -> Option<*mut c_void> {
        self.buffers.iter().find(|b| b.uid == uid).map(|b| b.ptr)
    }

    /// The pointer for tensor `uid`.
    ///
    /// # Errors
    /// `BAD_PARAM` naming the uid when the host passed no (or a null) pointer for it.
    pub fn require(&self, uid: i64) -> PluginResult<*mut c_void> {
        match self.get(uid) {
            Some(ptr) if !ptr.is_null() => Ok(ptr),
            Some(_) => Err(PluginError::bad_param(format!(
                "device buffer for tensor uid {uid} is null"
            ))),
            None => Err(PluginError::bad_param(format!(
                "no device buffer for tensor uid {uid}"
            ))),
        }
    }

    /// The buffer of tensor `uid` as `len` elements in host memory (CPU engines).
    ///
    /// # Safety
    /// The pointer passed for `uid` must address `len` initialised `T`s in host memory,
    /// aligned for `T`, not written by anyone else during the returned borrow.
    ///
    /// # Errors
    /// As [`DeviceBuffers::require`].
    pub unsafe fn host_slice<T>(&self, uid: i64, len: usize) -> PluginResult<&'a [T]> {
        let ptr = self.require(uid)?;
        // SAFETY: per this function's contract.
        Ok(unsafe { std::slice::from_raw_parts(ptr.cast::<T>(), len) })
    }

    /// The buffer of tensor `uid` as `len` writable elements in host memory.
    ///
    /// # Safety
    /// As [`DeviceBuffers::host_slice`], and no other borrow of the same memory may be
    /// alive (in particular, `uid` must not alias another tensor being read).
    ///
    /// # Errors
    /// As [`DeviceBuffers::require`].
    pub unsafe fn host_slice_mut<T>(&self, uid: i64, len: usize) -> PluginResult<&'a mut [T]> {
        let ptr = self.require(uid)?;
        // SAFETY: per this function's contract.
        Ok(unsafe { std::slice::from_raw_parts_mut(ptr.cast::<T>(), len) })
    }

    /// All (uid, pointer) pairs, in the host's order.
    pub fn as_slice(&self) -> &'a [hipdnnPluginDeviceBuffer_t] {
        self.buffers
    }
}

/// Scratch memory for one execution: `size` bytes at `ptr` (null when `size` is 0).
#[derive(Debug, Clone, Copy)]
pub struct Workspace {
    /// Device pointer.
    pub ptr: *mut c_void,
    /// Size the plan asked for.
    pub size: usize,
}

/// An executable plan: immutable once built, so one plan may run on many threads.
pub trait IPlan<H = ()>: Send + Sync {
    /// Workspace bytes `execute` needs.
    fn workspace_size(&self) -> usize {
        0
    }

    /// Runs the plan on the handle's stream.
    ///
    /// # Errors
    /// Whatever the kernels report; missing buffers (`DeviceBuffers::require`).
    fn execute(
        &self,
        handle: &Handle<H>,
        buffers: &DeviceBuffers<'_>,
        workspace: Workspace,
    ) -> PluginResult<()>;
}

/// The usual execution context: any plan, boxed.
pub type BoxedPlan<H = ()> = Box<dyn IPlan<H>>;

impl<H> IPlan<H> for Box<dyn IPlan<H>> {
    fn workspace_size(&self) -> usize {
        (**self).workspace_size()
    }

    fn execute(
        &self,
        handle: &Handle<H>,
        buffers: &DeviceBuffers<'_>,
        workspace: Workspace,
    ) -> PluginResult<()> {
        (**self).execute(handle, buffers, workspace)
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

impl KnobChoices<'_> {
    /// The chosen (or default) value of `id`.
    pub fn value(&self, id: &str) -> Option<&KnobValue> {
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
    pub fn string(&self, id: &str) -> Option<&str> {
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

/// One way of running a family of graphs. An engine asks its builders in order and uses
/// the first that applies; a builder should decide applicability exactly (what it
/// cannot run, it does not claim) and without running anything.
pub trait IPlanBuilder<H = (), S = (), C = Box<dyn IPlan<H>>>: Send + Sync {
    /// Whether this builder can run `graph`.
    fn is_applicable(&self, handle: &Handle<H>, graph: &GraphView<'_>) -> bool;

    /// Knobs of this builder, advertised with the engine's details (ids outside
    /// `global.`; build them with [`KnobFactory`](crate::knobs::KnobFactory)).
    fn custom_knobs(&self, _handle: &Handle<H>, _graph: &GraphView<'_>) -> Vec<Knob> {
        Vec::new()
    }

    /// Workspace bytes a plan for `graph` with `settings` will need.
    ///
    /// # Errors
    /// As [`IPlanBuilder::build_plan`].
    fn workspace_size(
        &self,
        _handle: &Handle<H>,
        _graph: &GraphView<'_>,
        _settings: &S,
    ) -> PluginResult<usize> {
        Ok(0)
    }

    /// Builds the plan. The graph's bytes are gone after this call: copy what the plan
    /// needs.
    ///
    /// # Errors
    /// Anything that prevents building; prefer declining in `is_applicable`.
    fn build_plan(&self, handle: &Handle<H>, graph: &GraphView<'_>, settings: S)
    -> PluginResult<C>;
}

/// An engine: a globally unique id (FNV-1a of its name) over one or more plan builders.
pub trait IEngine<H = (), S = (), C = Box<dyn IPlan<H>>>: Send + Sync {
    /// The engine id.
    fn id(&self) -> i64;

    /// The engine's name, NUL-terminated, hashing to [`IEngine::id`] (served by
    /// `hipdnnEnginePluginGetEngineName`); `None` declines.
    fn name(&self) -> Option<&'static CStr> {
        None
    }

    /// Whether the engine can run `graph`.
    fn is_applicable(&self, handle: &Handle<H>, graph: &GraphView<'_>) -> bool;

    /// Details (knobs, behavior notes) for `graph`.
    ///
    /// # Errors
    /// `NOT_APPLICABLE` when the engine does not apply.
    fn details(&self, handle: &Handle<H>, graph: &GraphView<'_>) -> PluginResult<EngineDetails>;

    /// Workspace bytes for `graph` under `config`.
    ///
    /// # Errors
    /// Invalid knob settings (`BAD_PARAM`), `NOT_APPLICABLE`.
    fn workspace_size(
        &self,
        handle: &Handle<H>,
        config: &EngineConfig,
        graph: &GraphView<'_>,
    ) -> PluginResult<usize>;

    /// Builds the execution context (the plan).
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

/// The usual engine: a name, plan builders asked in order, and the standard knobs it
/// honours.
pub struct Engine<H = (), S = (), C = Box<dyn IPlan<H>>> {
    id: i64,
    name: &'static CStr,
    builders: Vec<Box<dyn IPlanBuilder<H, S, C>>>,
    global_knobs: Vec<Knob>,
    behavior_notes: Vec<i32>,
}

impl<H, S, C> std::fmt::Debug for Engine<H, S, C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("id", &hipdnn_data_sdk::engine_id_to_hex(self.id))
            .field("name", &self.name)
            .field("builders", &self.builders.len())
            .finish()
    }
}

impl<H, S, C> Engine<H, S, C> {
    /// An engine named `name` (its id is the name's FNV-1a hash); a name outside the
    /// registry logs a warning once here.
    pub fn new(name: &'static CStr) -> Self {
        let text = name.to_str().expect("engine names are ASCII");
        Self {
            id: hipdnn_data_sdk::engine_id_for_name_checked(text),
            name,
            builders: Vec::new(),
            global_knobs: Vec::new(),
            behavior_notes: Vec::new(),
        }
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

    fn builder(
        &self,
        handle: &Handle<H>,
        graph: &GraphView<'_>,
    ) -> PluginResult<&dyn IPlanBuilder<H, S, C>> {
        self.builders
            .iter()
            .map(|b| &**b)
            .find(|b| b.is_applicable(handle, graph))
            .ok_or_else(|| {
                PluginError::not_applicable(format!(
                    "engine {} does not apply to graph \"{}\"",
                    self.name.to_string_lossy(),
                    graph.name()
                ))
            })
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

impl<H, S: Settings, C> Engine<H, S, C> {
    fn settings(
        &self,
        handle: &Handle<H>,
        config: &EngineConfig,
        graph: &GraphView<'_>,
    ) -> PluginResult<(&dyn IPlanBuilder<H, S, C>, S)> {
        let builder = self.builder(handle, graph)?;
        let knobs = self.knobs(builder, handle, graph)?;
        knobs::check_settings(&knobs, &config.knobs)?;
        let settings = S::from_choices(&KnobChoices {
            knobs: &knobs,
            settings: &config.knobs,
        })?;
        Ok((builder, settings))
    }
}

impl<H: Send + Sync, S: Settings, C> IEngine<H, S, C> for Engine<H, S, C> {
    fn id(&self) -> i64 {
        self.id
    }

    fn name(&self) -> Option<&'static CStr> {
        Some(self.name)
    }

    fn is_applicable(&self, handle: &Handle<H>, graph: &GraphView<'_>) -> bool {
        self.builders.iter().any(|b| b.is_applicable(handle, graph))
    }

    fn details(&self, handle: &Handle<H>, graph: &GraphView<'_>) -> PluginResult<EngineDetails> {
        let builder = self.builder(handle, graph)?;
        Ok(EngineDetails {
            engine_id: self.id,
            knobs: self.knobs(builder, handle, graph)?,
            behavior_notes: self.behavior_notes.clone(),
            name: self.name.to_string_lossy().into_owned(),
            candidate_page: None,
        })
    }

    fn workspace_size(
        &self,
        handle: &Handle<H>,
        config: &EngineConfig,
        graph: &GraphView<'_>,
    ) -> PluginResult<usize> {
        let (builder, settings) = self.settings(handle, config, graph)?;
        builder.workspace_size(handle, graph, &settings)
    }

    fn create_plan(
        &self,
        handle: &Handle<H>,
        config: &EngineConfig,
        graph: &GraphView<'_>,
    ) -> PluginResult<C> {
        let (builder, settings) = self.settings(handle, config, graph)?;
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
    pub fn applicable_ids(&self, handle: &Handle<H>, graph: &GraphView<'_>) -> Vec<i64> {
        self.engines
            .iter()
            .filter(|e| e.is_applicable(handle, graph))
            .map(|e| e.id())
            .collect()
    }
}
