//! The plugin under test, loaded through the backend as applications load it, and
//! [`EngineProvider`]: one of its engines, with knob settings, as a conformance
//! [`Provider`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use hipdnn_backend::{
    EngineSummary, Handle, LoadedPlugin, LoadingMode, OperationGraph, VariantPack,
    set_engine_plugin_paths,
};
use hipdnn_data_sdk::{
    HOST_MEMORY_BEHAVIOR_NOTE_EXT, MemoryKind, engine_id_to_hex, engine_name_or_id_to_id,
};
use hipdnn_flatbuffers_sdk::model::{Graph, Knob, KnobSetting, KnobValue};
use hipdnn_test_sdk::conformance::Provider;

use crate::memory::{DeviceAllocator, Memory, NO_DEVICE_ALLOCATOR};

/// An engine plugin's shared library, loaded by the backend as the only plugin of the
/// process.
///
/// The backend's plugin paths are process-wide and cannot change while a handle lives,
/// so a process tests one plugin. Cases take a hipDNN handle from a pool (a handle serves
/// one call at a time; parallel tests each get their own) and give it back.
#[derive(Debug)]
pub struct PluginUnderTest {
    path: PathBuf,
    engines: Vec<EngineSummary>,
    handles: Mutex<Vec<Handle>>,
}

impl PluginUnderTest {
    /// Loads the plugin at `path` (relative to the working directory) through the
    /// backend's discovery and loading, as the only plugin.
    ///
    /// # Errors
    /// A missing file, a handle already alive in this process, a plugin the backend
    /// rejects (with the backend's reason) or one with no admitted engine.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, String> {
        let given = path.as_ref();
        let path = given
            .canonicalize()
            .map_err(|e| format!("plugin {}: {e}", given.display()))?;
        set_engine_plugin_paths([&path], LoadingMode::Absolute)
            .map_err(|e| format!("plugin {}: {e}", path.display()))?;
        let handle = Handle::new();
        if !handle.loaded_plugin_paths().contains(&path) {
            let why = match LoadedPlugin::load(&path) {
                Err(error) => error.to_string(),
                Ok(_) => "the backend did not load it (see its log)".to_owned(),
            };
            return Err(format!("plugin {} cannot be loaded: {why}", path.display()));
        }
        let engines = handle.engines();
        if engines.is_empty() {
            return Err(format!(
                "plugin {} loaded, but the backend admitted none of its engines (or it made no handle; see the backend's log)",
                path.display()
            ));
        }
        Ok(Self {
            path,
            engines,
            handles: Mutex::new(vec![handle]),
        })
    }

    /// The plugin's path, canonical.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Its engines, sorted by name.
    pub fn engines(&self) -> &[EngineSummary] {
        &self.engines
    }

    /// The engine named `name_or_id`: a name, or an id in decimal or `0x` hex.
    ///
    /// # Errors
    /// When the plugin has no such engine (listing those it has).
    pub fn engine(&self, name_or_id: &str) -> Result<&EngineSummary, String> {
        let id = engine_name_or_id_to_id(name_or_id);
        self.engines
            .iter()
            .find(|e| e.name == name_or_id || e.id == id)
            .ok_or_else(|| {
                let names: Vec<String> = self
                    .engines
                    .iter()
                    .map(|e| format!("{} ({})", e.name, engine_id_to_hex(e.id)))
                    .collect();
                format!(
                    "plugin {} has no engine \"{name_or_id}\"; its engines: {}",
                    self.path.display(),
                    names.join(", ")
                )
            })
    }

    /// Runs `f` with a handle of the pool (made when none is free).
    fn with_handle<T>(&self, f: impl FnOnce(&Handle) -> T) -> T {
        let pooled = self.handles.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let handle = pooled.unwrap_or_default();
        let result = f(&handle);
        self.handles
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(handle);
        result
    }
}

/// One engine of a [`PluginUnderTest`] with knob settings: a conformance [`Provider`]
/// that runs each case's graph through the backend (`OperationGraph`, engine details,
/// `create_plan`, `Plan::execute` with a `VariantPack`).
///
/// Buffers are of the kind the engine's details declare
/// ([`MemoryKind::from_behavior_notes`]): aligned host memory for host engines, memory of
/// the [`DeviceAllocator`] for device engines; a device engine's case fails when there
/// is no allocator or it is not available (with the allocator's reason). Knob values are given as text and typed by the knob the engine
/// advertises for each case's graph; a knob it does not advertise fails the case.
pub struct EngineProvider {
    plugin: Arc<PluginUnderTest>,
    engine: EngineSummary,
    label: String,
    knobs: Vec<(String, String)>,
    device: Option<Arc<dyn DeviceAllocator>>,
}

impl std::fmt::Debug for EngineProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EngineProvider")
            .field("engine", &self.engine.name)
            .field("label", &self.label)
            .field("knobs", &self.knobs)
            .field("device", &self.device.as_ref().map(|d| d.name().to_owned()))
            .finish()
    }
}

impl EngineProvider {
    /// `engine` of `plugin` with `knobs` (id, value text), reported as `label`.
    pub fn new(
        plugin: Arc<PluginUnderTest>,
        engine: EngineSummary,
        label: String,
        knobs: Vec<(String, String)>,
        device: Option<Arc<dyn DeviceAllocator>>,
    ) -> Self {
        Self {
            plugin,
            engine,
            label,
            knobs,
            device,
        }
    }

    /// The engine.
    pub fn engine(&self) -> &EngineSummary {
        &self.engine
    }

    fn label(&self) -> String {
        format!(
            "engine {} ({})",
            self.engine.name,
            engine_id_to_hex(self.engine.id)
        )
    }

    /// The settings for `knobs` (what the engine advertises for a graph).
    fn settings(&self, knobs: &[Knob]) -> Result<Vec<KnobSetting>, String> {
        self.knobs
            .iter()
            .map(|(id, text)| {
                let knob = knobs.iter().find(|k| &k.knob_id == id).ok_or_else(|| {
                    let ids: Vec<&str> = knobs.iter().map(|k| k.knob_id.as_str()).collect();
                    format!(
                        "knob \"{id}\": {} does not advertise it for this graph (its knobs: {})",
                        self.label(),
                        if ids.is_empty() {
                            "none".to_owned()
                        } else {
                            ids.join(", ")
                        }
                    )
                })?;
                let bad = |what: &str| format!("knob \"{id}\": '{text}' is not {what}");
                let value = match knob.default_value {
                    KnobValue::Int(_) => {
                        KnobValue::Int(text.parse().map_err(|_| bad("an integer"))?)
                    }
                    KnobValue::Float(_) => {
                        KnobValue::Float(text.parse().map_err(|_| bad("a number"))?)
                    }
                    KnobValue::String(_) => KnobValue::String(text.clone()),
                };
                Ok(KnobSetting {
                    knob_id: id.clone(),
                    value,
                })
            })
            .collect()
    }

    fn run(
        &self,
        handle: &Handle,
        graph: &Graph,
        buffers: &mut BTreeMap<i64, Vec<u8>>,
    ) -> Result<(), String> {
        let op = OperationGraph::new(graph.clone()).map_err(|e| e.to_string())?;
        let details = handle
            .engine_details(self.engine.id, &op)
            .map_err(|e| e.to_string())?;
        let kind = MemoryKind::from_behavior_notes(&details.behavior_notes);
        let device = self.device.as_deref();
        if kind == MemoryKind::Device {
            let Some(device) = device else {
                return Err(format!(
                    "{} takes device memory (its details have no behavior note {HOST_MEMORY_BEHAVIOR_NOTE_EXT}), and {NO_DEVICE_ALLOCATOR}",
                    self.label()
                ));
            };
            device.available().map_err(|reason| {
                format!(
                    "{} takes device memory, and {} is not available: {reason}",
                    self.label(),
                    device.name()
                )
            })?;
        }
        let settings = self.settings(&details.knobs)?;
        let plan = handle
            .create_plan(&op, self.engine.id, &settings)
            .map_err(|e| e.to_string())?;
        let mut memory = BTreeMap::new();
        for (&uid, bytes) in buffers.iter() {
            let alignment = graph
                .tensors
                .iter()
                .find(|t| t.uid == uid)
                .map_or(1, |t| usize::try_from(t.alignment).unwrap_or(1));
            let m = Memory::with_contents(kind, device, bytes.len(), alignment, Some(bytes))
                .map_err(|e| format!("tensor uid {uid}: {e}"))?;
            memory.insert(uid, m);
        }
        let mut workspace = Memory::with_contents(kind, device, plan.workspace_size(), 1, None)
            .map_err(|e| format!("workspace of {} bytes: {e}", plan.workspace_size()))?;
        let mut pack = VariantPack::new();
        for (&uid, m) in &mut memory {
            pack.set(uid, m.as_mut_ptr());
        }
        // SAFETY: every pointer is memory of the kind the engine declares, holding its
        // tensor (the suite sizes each buffer by the tensor's dims, strides and type), one
        // allocation per tensor; the workspace has the plan's size. All of it outlives the
        // call (and, for device engines, the synchronization below).
        unsafe { plan.execute(&pack, workspace.as_mut_ptr()) }.map_err(|e| e.to_string())?;
        if let Some(device) = device.filter(|_| kind == MemoryKind::Device) {
            device.synchronize().map_err(|e| {
                format!("{}: synchronizing after the run failed: {e}", device.name())
            })?;
        }
        for (uid, bytes) in buffers.iter_mut() {
            memory[uid]
                .read_into(bytes)
                .map_err(|e| format!("tensor uid {uid}: {e}"))?;
        }
        Ok(())
    }
}

impl Provider for EngineProvider {
    fn name(&self) -> &str {
        &self.label
    }

    fn execute(&self, graph: &Graph, buffers: &mut BTreeMap<i64, Vec<u8>>) -> Result<(), String> {
        self.plugin
            .with_handle(|handle| self.run(handle, graph, buffers))
    }
}
