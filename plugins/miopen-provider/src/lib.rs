//! The MIOpen engine plugin for hipDNN: `MIOPEN_ENGINE` and
//! `MIOPEN_ENGINE_DETERMINISTIC` run hipDNN graphs on AMD GPUs through MIOpen, the
//! reference plugin of hipDNN's design.
//!
//! HIP and MIOpen are loaded at run time ([`miopen::load`]: search order and the
//! `HIPDNN_MIOPEN_LIBRARY`/`HIPDNN_HIP_LIBRARY` overrides), so the plugin builds and
//! loads on any machine. Creating a plugin handle opens them and checks for a HIP
//! device and a usable MIOpen; otherwise it fails with the reason ("no HIP device",
//! "libMIOpen.so.1 not found (...)", "MIOpen 2.19.0 is too old ..."), the backend logs
//! it, and other plugins keep serving.
//!
//! # What it runs
//! A graph is claimed when it is one of the patterns of [`graph`] (its module docs list
//! the exact rules): convolution forward, data and weight gradient; convolution forward
//! with an optional bias and a ReLU-family activation as one fusion plan; batch-norm
//! inference (inverse variance or variance + epsilon), training (batch statistics,
//! optional running statistics), backward, each optionally fused with an activation;
//! standalone ReLU / clipped ReLU / clamp / leaky ReLU / sigmoid / tanh; standalone
//! ADD, SUB, MUL, MAX, MIN. The pattern and tensor checks need no device; where MIOpen
//! decides per device it has the last word: a convolution is claimed only if MIOpen
//! lists a solution for it, a fusion only if MIOpen compiles it.
//! `MIOPEN_ENGINE_DETERMINISTIC` claims the convolution patterns only and runs them on
//! deterministic kernels.
//!
//! # Memory and streams
//! The engine takes device memory (HIP device pointers) and runs on the stream the host
//! sets on the handle (`hipStream_t`, given to MIOpen with `miopenSetStream`); every
//! execution enqueues and returns without waiting.
//!
//! # Knobs
//! `global.benchmarking` (choose convolution algorithms with MIOpen's exhaustive Find
//! when the plan is built), `global.deterministic` (deterministic convolution kernels;
//! always on for `MIOPEN_ENGINE_DETERMINISTIC`), `global.workspace_size_limit`.

use std::ffi::CStr;
use std::sync::Arc;

use hipdnn_plugin_sdk::abi::HIPDNN_PLUGIN_STATUS_NOT_INITIALIZED;
use hipdnn_plugin_sdk::knobs::GlobalSettings;
use hipdnn_plugin_sdk::prelude::*;

pub mod graph;
pub mod miopen;
pub mod plan;

pub use graph::Pattern;
pub use miopen::safe::Miopen;
pub use plan::{MiopenPlan, MiopenSettings};

/// The general engine's name; its id is the name's FNV-1a hash.
pub const ENGINE_NAME: &CStr = c"MIOPEN_ENGINE";
/// The deterministic engine's name.
pub const DETERMINISTIC_ENGINE_NAME: &CStr = c"MIOPEN_ENGINE_DETERMINISTIC";

impl Settings for MiopenSettings {
    fn from_choices(choices: &KnobChoices<'_>) -> PluginResult<Self> {
        let global = GlobalSettings::from_choices(choices);
        Ok(Self {
            deterministic: global.deterministic,
            workspace_limit: global.workspace_size_limit,
            benchmarking: global.benchmarking,
        })
    }
}

/// What a plugin handle holds.
pub type State = Arc<Miopen>;

/// Why `graph` is not claimed by the engine (`deterministic`: the deterministic one),
/// or `None` when it is (no device needed).
pub fn unsupported_reason(graph: &GraphView<'_>, deterministic: bool) -> Option<String> {
    let model = match graph.to_model() {
        Ok(model) => model,
        Err(e) => return Some(e.to_string()),
    };
    reason_for_model(&model, deterministic)
}

/// As [`unsupported_reason`], for a decoded graph.
pub fn reason_for_model(
    graph: &hipdnn_flatbuffers_sdk::model::Graph,
    deterministic: bool,
) -> Option<String> {
    match Pattern::match_graph(graph) {
        Ok(p) if deterministic && !p.is_convolution() => Some(format!(
            "{} is not a convolution: MIOPEN_ENGINE_DETERMINISTIC runs convolutions only",
            p.label()
        )),
        Ok(_) => None,
        Err(reason) => Some(reason),
    }
}

/// The plan builder of one of the two engines.
#[derive(Debug, Clone, Copy, Default)]
pub struct MiopenPlanBuilder {
    /// The deterministic engine: convolutions only, deterministic kernels.
    pub deterministic: bool,
}

impl IPlanBuilder<State, MiopenSettings, BoxedPlan<State>> for MiopenPlanBuilder {
    fn is_applicable(&self, handle: &Handle<State>, graph: &GraphView<'_>) -> bool {
        let model = match graph.to_model() {
            Ok(model) => model,
            Err(_) => return false,
        };
        if let Some(reason) = reason_for_model(&model, self.deterministic) {
            tracing::debug!(graph = graph.name(), %reason, "MIOpen engine does not apply");
            return false;
        }
        // MIOpen has the last word where it decides per device: a convolution is claimed
        // only if MIOpen lists a solution for it (with deterministic kernels for the
        // deterministic engine), a fusion only if MIOpen compiles it here (the compiled
        // kernel is cached for the plan).
        let pattern = match Pattern::match_graph(&model) {
            Ok(p) => p,
            Err(_) => return false,
        };
        let decided = match &pattern {
            Pattern::Conv { .. } => {
                plan::has_solution(handle.state(), &pattern, self.deterministic)
            }
            Pattern::ConvBiasActivation { .. } => {
                let settings = MiopenSettings {
                    deterministic: self.deterministic,
                    ..MiopenSettings::default()
                };
                MiopenPlan::build(handle.state(), &pattern, &settings).map(|_| true)
            }
            _ => Ok(true),
        };
        match decided {
            Ok(claimed) => {
                if !claimed {
                    tracing::debug!(
                        graph = graph.name(),
                        "MIOpen lists no solution for this convolution"
                    );
                }
                claimed
            }
            Err(e) => {
                tracing::debug!(graph = graph.name(), error = %e.message, "MIOpen cannot run this graph here");
                false
            }
        }
    }

    fn build_plan(
        &self,
        handle: &Handle<State>,
        graph: &GraphView<'_>,
        mut settings: MiopenSettings,
    ) -> PluginResult<BoxedPlan<State>> {
        let model = graph
            .to_model()
            .map_err(|e| PluginError::bad_param(e.to_string()))?;
        if let Some(reason) = reason_for_model(&model, self.deterministic) {
            return Err(PluginError::not_applicable(reason));
        }
        let pattern = Pattern::match_graph(&model).map_err(PluginError::not_applicable)?;
        settings.deterministic |= self.deterministic;
        Ok(Box::new(MiopenPlan::build(
            handle.state(),
            &pattern,
            &settings,
        )?))
    }
}

/// `MIOPEN_ENGINE`: every pattern, device memory, the standard knobs.
pub fn engine() -> Engine<State, MiopenSettings, BoxedPlan<State>> {
    Engine::new(ENGINE_NAME)
        .with_memory_kind(MemoryKind::Device)
        .with_builder(MiopenPlanBuilder {
            deterministic: false,
        })
        .with_global_knob(global_knobs::benchmarking())
        .with_global_knob(global_knobs::deterministic())
        .with_global_knob(global_knobs::workspace_size_limit())
}

/// `MIOPEN_ENGINE_DETERMINISTIC`: convolutions on deterministic kernels.
pub fn deterministic_engine() -> Engine<State, MiopenSettings, BoxedPlan<State>> {
    Engine::new(DETERMINISTIC_ENGINE_NAME)
        .with_memory_kind(MemoryKind::Device)
        .with_builder(MiopenPlanBuilder {
            deterministic: true,
        })
        .with_global_knob(global_knobs::benchmarking())
        .with_global_knob(global_knobs::workspace_size_limit())
}

/// The plugin (`miopen_provider_plugin`).
#[derive(Debug, Clone, Copy)]
pub struct MiopenPlugin;

impl EnginePlugin for MiopenPlugin {
    const NAME: &'static CStr = c"miopen_provider_plugin";
    const VERSION: &'static CStr = c"0.1.0";
    type Handle = State;
    type Settings = MiopenSettings;
    type Context = BoxedPlan<State>;

    fn engines() -> EngineManager<State, MiopenSettings, BoxedPlan<State>> {
        EngineManager::new()
            .with_engine(engine())
            .with_engine(deterministic_engine())
    }

    fn create_handle() -> PluginResult<State> {
        // NOT_INITIALIZED: the machine cannot run the engine (not a failure of the call).
        let miopen = Miopen::open().map_err(|reason| {
            PluginError::new(
                HIPDNN_PLUGIN_STATUS_NOT_INITIALIZED,
                format!("MIOPEN_ENGINE is unavailable: {reason}"),
            )
        })?;
        let rt = &miopen.runtime;
        tracing::info!(
            "MIOpen {} ({}) with HIP ({}) on {} device(s)",
            rt.version_text(),
            rt.miopen_path.display(),
            rt.hip_path.display(),
            rt.devices
        );
        Ok(miopen)
    }

    fn stream_changed(handle: &State, stream: hipStream_t) -> PluginResult<()> {
        let mut bound = handle.lock();
        // SAFETY: the host hands a HIP stream of this device (or null).
        unsafe { bound.set_stream(stream.cast()) }
            .map_err(|e| PluginError::bad_param(e.to_string()))
    }
}

hipdnn_plugin_sdk::export_engine_plugin!(MiopenPlugin);
