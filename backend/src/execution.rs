//! From a graph to results: the engines that can run it, their details and knobs, a
//! plan (the plugin's execution context) and its execution with a variant pack.
//!
//! ```text
//! OperationGraph::new(graph)      validate, sort, serialize once
//!   └─ Handle::ranked_engines     every plugin's applicable ids, ranked
//!   └─ Handle::engine_details     knobs and behavior notes of one engine
//!   └─ Handle::create_plan        knob settings checked → EngineConfig → context
//!        └─ Plan::execute         variant pack checked → plugin execute
//! ```
//!
//! Ranking: the graph's preferred engine first (when applicable), then the static order,
//! which is the plugins' load order and each plugin's own order, or the list in
//! [`ENGINE_ORDER_ENV`] (names or ids, comma separated), which then also excludes the
//! engines it does not name.
//!
//! Bad input is refused before any plugin runs it, with an error naming what is wrong:
//! the node nobody accepted, the knob and its constraint, the tensor uid without a
//! pointer or with a misaligned one.

use std::collections::BTreeMap;
use std::ffi::c_void;

use hipdnn_data_sdk::{DataType, MemoryKind, engine_id_to_hex, engine_name_or_id_to_id};
use hipdnn_flatbuffers_sdk::model::{
    EngineApiVersion, EngineConfig, EngineDetails, Graph, KnobSetting,
};
use hipdnn_flatbuffers_sdk::{EngineDetailsView, GraphAndPlanView, GraphView, VerifyLimits};
use hipdnn_plugin_abi::{
    HIPDNN_ENGINE_API_VERSION_MAJOR, HIPDNN_ENGINE_API_VERSION_MINOR,
    HIPDNN_ENGINE_API_VERSION_PATCH, hipdnnEnginePluginExecutionContext_t,
    hipdnnPluginDeviceBuffer_t,
};

use crate::handle::{Handle, PluginHandle};
use crate::plugin::LoadedPlugin;
use crate::status::*;

/// The newest engine plugin API this backend speaks (the plugin ABI's version): graphs
/// that require a newer one are refused.
pub const SUPPORTED_ENGINE_API_VERSION: EngineApiVersion = EngineApiVersion::new(
    HIPDNN_ENGINE_API_VERSION_MAJOR,
    HIPDNN_ENGINE_API_VERSION_MINOR,
    HIPDNN_ENGINE_API_VERSION_PATCH,
);

/// Whether `plugin` reports at least the engine API `graph` requires.
fn meets_floor(plugin: &LoadedPlugin, required: EngineApiVersion) -> bool {
    let v = plugin.api_version();
    (v.major, v.minor, v.patch)
        >= (
            u64::from(required.major),
            u64::from(required.minor),
            u64::from(required.patch),
        )
}

/// Environment variable replacing the static engine order: engine names or ids
/// (decimal or `0x` hex), comma separated. Engines it does not list are not used.
pub const ENGINE_ORDER_ENV: &str = "HIPDNN_HEUR_FALLBACK_ENGINE_ORDER";

/// A graph ready for the engines: validated (topologically sorted, default types
/// filled) and serialized once.
#[derive(Debug, Clone)]
pub struct OperationGraph {
    graph: Graph,
    bytes: Vec<u8>,
}

impl OperationGraph {
    /// Validates `graph` and serializes it.
    ///
    /// # Errors
    /// `BAD_PARAM` naming the node or tensor uid at fault (cycle, dangling uid,
    /// duplicate uid, a tensor above the size limits, an aliasing output, an unset
    /// mode, …); `NOT_SUPPORTED` for a graph that needs a newer engine plugin API than
    /// this backend speaks ([`SUPPORTED_ENGINE_API_VERSION`]).
    pub fn new(mut graph: Graph) -> BackendResult<Self> {
        graph
            .validate()
            .map_err(|e| BackendError::bad_param(format!("invalid graph '{}': {e}", graph.name)))?;
        let required = graph.required_engine_api_version();
        if required > SUPPORTED_ENGINE_API_VERSION {
            return Err(BackendError::not_supported(format!(
                "graph '{}' requires engine plugin API {required}, newer than the \
                 {SUPPORTED_ENGINE_API_VERSION} this backend supports",
                graph.name
            )));
        }
        let bytes = graph.to_bytes();
        Ok(Self { graph, bytes })
    }

    /// Verifies untrusted FlatBuffer bytes, a serialized `Graph` or a graph-and-plan
    /// container (`SerializedGraphAndPlan`, identifier `"HDGP"`, whose graph is taken),
    /// then validates the graph as [`OperationGraph::new`] does.
    ///
    /// # Errors
    /// `BAD_PARAM` when the bytes are not a valid graph.
    pub fn from_bytes(bytes: &[u8]) -> BackendResult<Self> {
        let bytes = match GraphAndPlanView::from_bytes_with_limits(bytes, &VerifyLimits::DEFAULT) {
            Ok(container) => container.graph_blob(),
            Err(_) => bytes,
        };
        let view = GraphView::from_bytes(bytes)
            .map_err(|e| BackendError::bad_param(format!("not a valid graph: {e}")))?;
        let graph = view
            .to_model()
            .map_err(|e| BackendError::bad_param(format!("not a valid graph: {e}")))?;
        Self::new(graph)
    }

    /// The validated graph.
    pub fn graph(&self) -> &Graph {
        &self.graph
    }

    /// The engine plugin API version a plugin must report to be asked about this graph
    /// (hipDNN's applicability floor): 1.0.0 for every graph; 1.1.0 with shape
    /// overrides enabled, 1.2.0 with a runtime pass-by-value scalar, 1.3.0 with a ragged
    /// tensor or a tensor of non-default alignment (the highest that applies), and the
    /// graph's own `min_required_engine_api_version` when that is higher still.
    pub fn required_api_version(&self) -> semver::Version {
        let v = self.graph.required_engine_api_version();
        semver::Version::new(v.major.into(), v.minor.into(), v.patch.into())
    }

    /// Its FlatBuffer serialization, as plugins receive it.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// A graph holding only node `index` and its tensors, all made non-virtual: what a
    /// plugin would be asked to run if that node stood alone.
    fn single_node(&self, index: usize) -> Option<OperationGraph> {
        let node = self.graph.nodes.get(index)?;
        let (mut ins, mut outs) = (Vec::new(), Vec::new());
        node.attributes.tensor_uids(&mut ins, &mut outs);
        let mut graph = Graph {
            name: format!("{}:{}", self.graph.name, node.name),
            nodes: vec![node.clone()],
            tensors: Vec::new(),
            ..self.graph.clone()
        };
        graph.preferred_engine_id = None;
        for uid in ins.iter().chain(&outs) {
            if let Some(tensor) = self.graph.tensors.iter().find(|t| t.uid == *uid)
                && !graph.tensors.iter().any(|t| t.uid == *uid)
            {
                let mut tensor = tensor.clone();
                tensor.is_virtual = false;
                graph.tensors.push(tensor);
            }
        }
        OperationGraph::new(graph).ok()
    }
}

/// An engine that can run a graph, with the plugin serving it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RankedEngine {
    /// The engine id.
    pub id: i64,
    /// Its resolved name.
    pub name: String,
    /// The plugin's name.
    pub plugin_name: String,
}

/// Tensor pointers for one execution: uid → device (or, for host engines, host)
/// pointer.
#[derive(Debug, Clone, Default)]
pub struct VariantPack {
    buffers: BTreeMap<i64, *mut c_void>,
}

impl VariantPack {
    /// An empty pack.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the pointer of tensor `uid` (replacing an earlier one).
    pub fn set(&mut self, uid: i64, pointer: *mut c_void) -> &mut Self {
        self.buffers.insert(uid, pointer);
        self
    }

    /// Builder form of [`VariantPack::set`].
    pub fn with(mut self, uid: i64, pointer: *mut c_void) -> Self {
        self.set(uid, pointer);
        self
    }

    /// The pointers, by uid.
    pub fn buffers(&self) -> &BTreeMap<i64, *mut c_void> {
        &self.buffers
    }
}

/// What execution needs to know of one tensor of the graph.
#[derive(Debug, Clone)]
struct TensorSlot {
    uid: i64,
    name: String,
    data_type: DataType,
    is_virtual: bool,
    /// Passed by value in the graph: no pointer needed.
    by_value: bool,
    /// Required pointer alignment in bytes.
    alignment: usize,
}

/// A built plan: one plugin's execution context for a graph and an engine config
/// (`hipdnnEnginePluginCreateExecutionContext`). It borrows the handle whose plugin
/// made it, and is destroyed with it.
#[derive(Debug)]
pub struct Plan<'h> {
    handle: &'h Handle,
    slot: usize,
    context: hipdnnEnginePluginExecutionContext_t,
    engine_id: i64,
    engine_name: String,
    memory: MemoryKind,
    workspace_size: usize,
    graph_name: String,
    tensors: Vec<TensorSlot>,
}

/// Why `plugin` is not asked about `graph` at all (hipDNN's applicability filter), or
/// `None` when it is: its API version is below `required` (the graph's
/// [`OperationGraph::required_api_version`]; a plugin reporting 0.x, which loads, is
/// therefore never asked), or the graph enables shape overrides and the plugin does
/// not export `hipdnnEnginePluginExecuteOpGraphWithOverrides`.
fn plugin_cannot_run(
    plugin: &LoadedPlugin,
    graph: &OperationGraph,
    required: &semver::Version,
) -> Option<String> {
    if plugin.api_version() < required {
        return Some(format!(
            "implements engine plugin api {}, and the graph needs at least {required}",
            plugin.api_version()
        ));
    }
    if graph.graph().is_override_shape_enabled && !plugin.supports_overrides() {
        return Some(
            "does not export hipdnnEnginePluginExecuteOpGraphWithOverrides, which a graph with \
             shape overrides needs"
                .to_owned(),
        );
    }
    None
}

impl Handle {
    fn engine_name(&self, id: i64) -> String {
        self.set
            .engines()
            .iter()
            .find(|e| e.id == id)
            .map_or_else(|| engine_id_to_hex(id), |e| e.name.clone())
    }

    fn slot_for(&self, id: i64) -> BackendResult<(usize, &PluginHandle, &LoadedPlugin)> {
        let slot = *self.routes.get(&id).ok_or_else(|| {
            BackendError::bad_param(format!(
                "engine {} is not available on this handle",
                engine_id_to_hex(id)
            ))
        })?;
        let handle = &self.plugin_handles[slot];
        Ok((slot, handle, self.plugin(handle)))
    }

    /// The ids of every engine that says it can run `graph`, in load order, keeping only
    /// ids routed to the asking plugin (an id another plugin owns is skipped). A plugin
    /// that [cannot be asked](plugin_cannot_run) about the graph is skipped with an info
    /// log.
    fn applicable_ids(&self, graph: &OperationGraph) -> Vec<i64> {
        let mut ids = Vec::new();
        let required = graph.required_api_version();
        for (slot, handle) in self.plugin_handles.iter().enumerate() {
            let plugin = self.plugin(handle);
            if let Some(why) = plugin_cannot_run(plugin, graph, &required) {
                tracing::info!(
                    "Skipping plugin '{}' for graph '{}': {why}",
                    plugin.name(),
                    graph.graph().name
                );
                continue;
            }
            // SAFETY: `handle.raw` is a live handle of `plugin`, owned by `self`.
            match unsafe { plugin.applicable_engine_ids(handle.raw, graph.bytes()) } {
                Ok(found) => {
                    for id in found {
                        if self.routes.get(&id) == Some(&slot) {
                            if !ids.contains(&id) {
                                ids.push(id);
                            }
                        } else {
                            tracing::info!(
                                "plugin '{}' reports engine {} applicable, but that engine is not routed to it; skipped",
                                plugin.name(),
                                engine_id_to_hex(id)
                            );
                        }
                    }
                }
                Err(error) => tracing::error!(
                    "plugin '{}' could not check graph '{}': {error}",
                    plugin.name(),
                    graph.graph().name
                ),
            }
        }
        ids
    }

    /// Every engine that says it can run `graph`, in load order, ignoring the ranking
    /// (preferred engine, [`ENGINE_ORDER_ENV`]): what tools listing engines want. Empty
    /// when none can.
    pub fn applicable_engines(&self, graph: &OperationGraph) -> Vec<RankedEngine> {
        self.applicable_ids(graph)
            .into_iter()
            .map(|id| self.ranked_engine(id))
            .collect()
    }

    fn ranked_engine(&self, id: i64) -> RankedEngine {
        RankedEngine {
            id,
            name: self.engine_name(id),
            plugin_name: self
                .plugin_for_engine(id)
                .map(|p| p.name().to_owned())
                .unwrap_or_default(),
        }
    }

    /// The engines that can run `graph`, best first (module docs for the order).
    ///
    /// # Errors
    /// `NOT_SUPPORTED` when none can, naming the node(s) no engine accepts alone (or
    /// saying that each node is accepted alone but not the combination).
    pub fn ranked_engines(&self, graph: &OperationGraph) -> BackendResult<Vec<RankedEngine>> {
        let order = std::env::var(ENGINE_ORDER_ENV).ok();
        self.ranked_engines_with_order(graph, order.as_deref())
    }

    fn ranked_engines_with_order(
        &self,
        graph: &OperationGraph,
        order: Option<&str>,
    ) -> BackendResult<Vec<RankedEngine>> {
        let mut ids = self.applicable_ids(graph);
        if let Some(order) = order.filter(|o| !o.trim().is_empty()) {
            let listed: Vec<i64> = order
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(engine_name_or_id_to_id)
                .collect();
            let before = ids.len();
            ids.retain(|id| listed.contains(id));
            ids.sort_by_key(|id| listed.iter().position(|l| l == id));
            if ids.len() < before {
                tracing::info!(
                    "{ENGINE_ORDER_ENV} leaves out {} applicable engine(s)",
                    before - ids.len()
                );
            }
        }
        if let Some(preferred) = graph.graph().preferred_engine_id {
            match ids.iter().position(|id| *id == preferred) {
                Some(at) => {
                    let id = ids.remove(at);
                    ids.insert(0, id);
                }
                None => tracing::info!(
                    "preferred engine {} cannot run graph '{}'",
                    engine_id_to_hex(preferred),
                    graph.graph().name
                ),
            }
        }
        if ids.is_empty() {
            return Err(self.explain_unsupported(graph));
        }
        Ok(ids.into_iter().map(|id| self.ranked_engine(id)).collect())
    }

    /// Why no engine runs `graph`: the nodes no engine accepts alone, and which engines
    /// (of which plugins) were asked, so that a single plugin's refusal reads as its own.
    fn explain_unsupported(&self, graph: &OperationGraph) -> BackendError {
        let name = &graph.graph().name;
        if self.plugin_handles.is_empty() {
            return BackendError::not_supported(format!(
                "no engine supports graph '{name}': no engine plugin is loaded"
            ));
        }
        let label = |id: i64| {
            let engine = self.ranked_engine(id);
            format!("{} ({})", engine.name, engine.plugin_name)
        };
        let required = graph.graph().required_engine_api_version();
        let below: Vec<String> = self
            .plugin_handles
            .iter()
            .map(|h| self.plugin(h))
            .filter(|p| !meets_floor(p, required))
            .map(|p| format!("'{}' ({})", p.name(), p.api_version()))
            .collect();
        if below.len() == self.plugin_handles.len() {
            return BackendError::not_supported(format!(
                "no engine supports graph '{name}': it requires engine plugin API {required}, and every plugin reports less: {}",
                below.join(", ")
            ));
        }
        let engines = self.engines();
        let asked: Vec<String> = engines
            .iter()
            .filter(|e| {
                self.plugin_for_engine(e.id)
                    .is_some_and(|p| meets_floor(p, required))
            })
            .map(|e| label(e.id))
            .collect();
        let asked = asked.join(", ");
        // Engines that accept the whole graph were left out by the ranking.
        let accepting = self.applicable_ids(graph);
        if !accepting.is_empty() {
            let accepting: Vec<String> = accepting.into_iter().map(label).collect();
            return BackendError::not_supported(format!(
                "no engine supports graph '{name}': {ENGINE_ORDER_ENV} leaves out every engine that accepts it: {}",
                accepting.join(", ")
            ));
        }
        let nodes = &graph.graph().nodes;
        let refused: Vec<String> = (0..nodes.len())
            .filter(|&i| {
                graph
                    .single_node(i)
                    .is_none_or(|alone| self.applicable_ids(&alone).is_empty())
            })
            .map(|i| format!("'{}' ({})", nodes[i].name, nodes[i].attributes.type_name()))
            .collect();
        if refused.is_empty() {
            BackendError::not_supported(format!(
                "no engine supports graph '{name}': each node is supported alone, but no engine runs them together; engines asked: {asked}"
            ))
        } else {
            BackendError::not_supported(format!(
                "no engine supports graph '{name}': no engine accepts node {}; engines asked: {asked}",
                refused.join(", node ")
            ))
        }
    }

    /// The details (knobs, behavior notes) engine `id` gives for `graph`, verified.
    ///
    /// # Errors
    /// `BAD_PARAM` for an engine this handle does not serve; `PLUGIN_ERROR` when the
    /// plugin fails or returns bytes that are not valid `EngineDetails` (or details of
    /// another engine).
    pub fn engine_details(&self, id: i64, graph: &OperationGraph) -> BackendResult<EngineDetails> {
        let (_, handle, plugin) = self.slot_for(id)?;
        let label = format!("engine {} ({})", self.engine_name(id), engine_id_to_hex(id));
        // SAFETY: `handle.raw` is a live handle of `plugin`, owned by `self`.
        let bytes =
            unsafe { plugin.engine_details(handle.raw, id, graph.bytes()) }.map_err(|e| {
                BackendError::plugin(format!("plugin '{}', {label}: {e}", plugin.name()))
            })?;
        let view = EngineDetailsView::from_bytes(&bytes).map_err(|e| {
            BackendError::plugin(format!(
                "plugin '{}' returned malformed details for {label}: {e}",
                plugin.name()
            ))
        })?;
        if view.engine_id() != id {
            return Err(BackendError::plugin(format!(
                "plugin '{}' returned the details of engine {} for {label}",
                plugin.name(),
                engine_id_to_hex(view.engine_id())
            )));
        }
        let details = view.to_model();
        if !details.name.is_empty() && details.name != self.engine_name(id) {
            tracing::warn!(
                "{label}: its details name it \"{}\"; the name is informational and ignored",
                details.name
            );
        }
        Ok(details)
    }

    /// Builds a plan for `graph` on engine `id` with `knobs` (others take their
    /// defaults).
    ///
    /// Each setting is checked against the engine's advertised knobs first: a value of
    /// the wrong type or outside the knob's constraint is an error naming the knob; a
    /// setting for an unknown knob is ignored, and a deprecated knob accepted, each
    /// with a warning.
    ///
    /// # Errors
    /// `BAD_PARAM` (unknown engine, invalid knob setting), `NOT_SUPPORTED` (the engine
    /// cannot run the graph), `PLUGIN_ERROR` (the plugin failed).
    pub fn create_plan(
        &self,
        graph: &OperationGraph,
        id: i64,
        knobs: &[KnobSetting],
    ) -> BackendResult<Plan<'_>> {
        let (_, handle, plugin) = self.slot_for(id)?;
        if let Some(why) = plugin_cannot_run(plugin, graph, &graph.required_api_version()) {
            return Err(BackendError::not_supported(format!(
                "engine {} ({}) cannot run graph '{}': plugin '{}' {why}",
                self.engine_name(id),
                engine_id_to_hex(id),
                graph.graph().name,
                plugin.name()
            )));
        }
        // SAFETY: `handle.raw` is a live handle of `plugin`, owned by `self`.
        let applicable = unsafe { plugin.applicable_engine_ids(handle.raw, graph.bytes()) }
            .map_err(|e| BackendError::plugin(format!("plugin '{}': {e}", plugin.name())))?;
        if !applicable.contains(&id) {
            return Err(BackendError::not_supported(format!(
                "engine {} ({}) cannot run graph '{}'",
                self.engine_name(id),
                engine_id_to_hex(id),
                graph.graph().name
            )));
        }
        self.plan_on(graph, id, knobs)
    }

    /// The workspace bytes engine `id` needs to run `graph` with `knobs`, as its plugin
    /// reports it for the engine config (`hipdnnEnginePluginGetWorkspaceSize`), without
    /// building a plan. The settings are checked against the engine's knobs first.
    ///
    /// # Errors
    /// `BAD_PARAM` (unknown engine, invalid knob setting), `PLUGIN_ERROR` (the plugin
    /// failed).
    pub fn workspace_size(
        &self,
        graph: &OperationGraph,
        id: i64,
        knobs: &[KnobSetting],
    ) -> BackendResult<usize> {
        let (_, handle, plugin) = self.slot_for(id)?;
        let label = format!("engine {} ({})", self.engine_name(id), engine_id_to_hex(id));
        let details = self.engine_details(id, graph)?;
        hipdnn_flatbuffers_sdk::model::knob::check_settings(&details.knobs, knobs)
            .map_err(|e| BackendError::bad_param(format!("{label}: {e}")))?;
        let config = EngineConfig {
            engine_id: id,
            knobs: knobs.to_vec(),
            ranking_metric: String::new(),
        }
        .to_bytes();
        // SAFETY: `handle.raw` is a live handle of `plugin`, owned by `self`.
        unsafe { plugin.workspace_size(handle.raw, &config, graph.bytes()) }
            .map_err(|e| BackendError::plugin(format!("plugin '{}', {label}: {e}", plugin.name())))
    }

    /// [`Handle::create_plan`] for an engine already known to accept `graph`.
    fn plan_on(
        &self,
        graph: &OperationGraph,
        id: i64,
        knobs: &[KnobSetting],
    ) -> BackendResult<Plan<'_>> {
        let (slot, handle, plugin) = self.slot_for(id)?;
        let name = self.engine_name(id);
        let label = format!("engine {name} ({})", engine_id_to_hex(id));
        let details = self.engine_details(id, graph)?;
        hipdnn_flatbuffers_sdk::model::knob::check_settings(&details.knobs, knobs)
            .map_err(|e| BackendError::bad_param(format!("{label}: {e}")))?;
        let config = EngineConfig {
            engine_id: id,
            knobs: knobs.to_vec(),
            ranking_metric: String::new(),
        }
        .to_bytes();
        let plugin_error = |e: crate::PluginCallError| {
            BackendError::plugin(format!("plugin '{}', {label}: {e}", plugin.name()))
        };
        // SAFETY: `handle.raw` is a live handle of `plugin`, owned by `self`.
        let context =
            unsafe { plugin.create_execution_context(handle.raw, &config, graph.bytes()) }
                .map_err(plugin_error)?;
        let mut plan = Plan {
            handle: self,
            slot,
            context,
            engine_id: id,
            engine_name: name,
            memory: MemoryKind::from_behavior_notes(&details.behavior_notes),
            workspace_size: 0,
            graph_name: graph.graph().name.clone(),
            tensors: tensor_slots(graph.graph()),
        };
        // SAFETY: `context` was just made on this live handle; on error `plan` is
        // dropped, which destroys it.
        plan.workspace_size =
            unsafe { plugin.context_workspace_size(handle.raw, context) }.map_err(plugin_error)?;
        Ok(plan)
    }

    /// Builds a plan on the best engine that accepts it (see
    /// [`Handle::ranked_engines`]); an engine that fails to build is logged and the
    /// next one tried.
    ///
    /// # Errors
    /// `NOT_SUPPORTED` when no engine can run the graph; an invalid knob setting stops
    /// the search; when every engine failed, the last failure.
    pub fn build_plan(
        &self,
        graph: &OperationGraph,
        knobs: &[KnobSetting],
    ) -> BackendResult<Plan<'_>> {
        let mut last = None;
        // Ranked engines have just said they accept the graph: not asked again.
        for engine in self.ranked_engines(graph)? {
            match self.plan_on(graph, engine.id, knobs) {
                Ok(plan) => return Ok(plan),
                Err(error) if error.status == HIPDNN_STATUS_BAD_PARAM => return Err(error),
                Err(error) => {
                    tracing::warn!("{error}; trying the next engine");
                    last = Some(error);
                }
            }
        }
        Err(last.unwrap_or_else(|| self.explain_unsupported(graph)))
    }
}

fn tensor_slots(graph: &Graph) -> Vec<TensorSlot> {
    graph
        .tensors
        .iter()
        .map(|t| {
            let element = t.data_type.size_bytes().unwrap_or(1).max(1);
            let alignment = usize::try_from(t.alignment).unwrap_or(0).max(element);
            TensorSlot {
                uid: t.uid,
                name: t.name.clone(),
                data_type: t.data_type,
                is_virtual: t.is_virtual,
                by_value: t.value.is_some(),
                alignment,
            }
        })
        .collect()
}

impl Plan<'_> {
    /// The engine the plan runs on.
    pub fn engine_id(&self) -> i64 {
        self.engine_id
    }

    /// That engine's name.
    pub fn engine_name(&self) -> &str {
        &self.engine_name
    }

    /// The memory the engine takes its buffers and workspace in (from its details'
    /// behavior notes: [`HOST_MEMORY_BEHAVIOR_NOTE_EXT`](hipdnn_data_sdk::HOST_MEMORY_BEHAVIOR_NOTE_EXT)
    /// marks a host engine; without it, device memory). Pass pointers of this kind to
    /// [`Plan::execute`].
    pub fn memory_kind(&self) -> MemoryKind {
        self.memory
    }

    /// Workspace bytes [`Plan::execute`] needs.
    pub fn workspace_size(&self) -> usize {
        self.workspace_size
    }

    /// The uids of the tensors a variant pack must give pointers for.
    pub fn required_uids(&self) -> impl Iterator<Item = i64> + '_ {
        self.tensors
            .iter()
            .filter(|t| !t.is_virtual && !t.by_value)
            .map(|t| t.uid)
    }

    /// Checks the pack against the graph: a pointer for every non-virtual tensor (not
    /// passed by value), aligned to the tensor's alignment (at least its element size),
    /// no pointer for a virtual or unknown uid, a workspace when one is needed.
    fn check(&self, pack: &VariantPack, workspace: *mut c_void) -> BackendResult<()> {
        for uid in pack.buffers().keys() {
            match self.tensors.iter().find(|t| t.uid == *uid) {
                None => {
                    return Err(BackendError::bad_param(format!(
                        "variant pack: graph '{}' has no tensor uid {uid}",
                        self.graph_name
                    )));
                }
                Some(t) if t.is_virtual => {
                    return Err(BackendError::bad_param(format!(
                        "variant pack: tensor uid {uid} ('{}') is virtual and takes no pointer",
                        t.name
                    )));
                }
                Some(_) => {}
            }
        }
        for tensor in self.tensors.iter().filter(|t| !t.is_virtual && !t.by_value) {
            let pointer = pack.buffers().get(&tensor.uid).copied().ok_or_else(|| {
                BackendError::bad_param(format!(
                    "variant pack: no pointer for tensor uid {} ('{}')",
                    tensor.uid, tensor.name
                ))
            })?;
            if pointer.is_null() {
                return Err(BackendError::new(
                    HIPDNN_STATUS_BAD_PARAM_NULL_POINTER,
                    format!(
                        "variant pack: the pointer for tensor uid {} ('{}') is null",
                        tensor.uid, tensor.name
                    ),
                ));
            }
            if !(pointer as usize).is_multiple_of(tensor.alignment) {
                return Err(BackendError::bad_param(format!(
                    "variant pack: the pointer for tensor uid {} ('{}', {}) is {pointer:p}, not aligned to {} bytes",
                    tensor.uid,
                    tensor.name,
                    tensor.data_type.name(),
                    tensor.alignment
                )));
            }
        }
        if self.workspace_size > 0 && workspace.is_null() {
            return Err(BackendError::new(
                HIPDNN_STATUS_BAD_PARAM_NULL_POINTER,
                format!(
                    "the plan needs a workspace of {} bytes",
                    self.workspace_size
                ),
            ));
        }
        Ok(())
    }

    /// Runs the plan on the handle's stream.
    ///
    /// # Safety
    /// Every pointer of `pack` is valid for the whole tensor its uid names (dims, strides
    /// and data type of the graph) — device memory for device engines, host memory for
    /// host engines — and `workspace` for [`Plan::workspace_size`] bytes; outputs do not
    /// overlap other tensors.
    ///
    /// # Errors
    /// `BAD_PARAM` / `BAD_PARAM_NULL_POINTER` when the pack does not fit the graph
    /// (nothing runs); `EXECUTION_FAILED` when the plugin fails.
    pub unsafe fn execute(&self, pack: &VariantPack, workspace: *mut c_void) -> BackendResult<()> {
        self.check(pack, workspace)?;
        let buffers: Vec<hipdnnPluginDeviceBuffer_t> = pack
            .buffers()
            .iter()
            .map(|(&uid, &ptr)| hipdnnPluginDeviceBuffer_t { uid, ptr })
            .collect();
        let handle = &self.handle.plugin_handles[self.slot];
        let plugin = self.handle.plugin(handle);
        // SAFETY: the context is live on this live handle; the pointers are valid per
        // this function's contract and were checked against the graph.
        unsafe { plugin.execute(handle.raw, self.context, workspace, &buffers) }.map_err(|e| {
            BackendError::new(
                HIPDNN_STATUS_EXECUTION_FAILED,
                format!(
                    "plugin '{}', engine {}: {e}",
                    plugin.name(),
                    self.engine_name
                ),
            )
        })
    }
}

impl Drop for Plan<'_> {
    fn drop(&mut self) {
        let handle = &self.handle.plugin_handles[self.slot];
        let plugin = self.handle.plugin(handle);
        // SAFETY: the context was made on this handle, which outlives the plan, and is
        // destroyed once.
        if let Err(error) = unsafe { plugin.destroy_execution_context(handle.raw, self.context) } {
            tracing::error!("plugin '{}': {error}", plugin.name());
        }
    }
}
