//! The cuDNN engine plugin for hipDNN: `CUDNN_ENGINE` runs hipDNN graphs on NVIDIA GPUs
//! through cuDNN's graph (backend) API.
//!
//! CUDA and cuDNN are loaded at run time (through `cudarc` with dynamic loading), so
//! the plugin builds and loads on any machine. Creating a plugin handle probes the
//! machine first ([`probe`]): without an NVIDIA driver, a CUDA device or cuDNN 9 it
//! fails with the reason ("no CUDA device", "libcudnn.so.9 not found", "cuDNN 8.9.7 is
//! too old ..."), the backend logs it, and other plugins keep serving.
//!
//! # What it runs
//! A graph is claimed when [`graph::Translation`] accepts every tensor and node
//! (convolution forward/data gradient/weight gradient, HALF/BFLOAT16 matmul, pointwise
//! arithmetic and activations, batch-norm inference, training and backward, layer and
//! RMS norm; FLOAT, HALF and BFLOAT16; packed layouts, NHWC preferred: NCHW convolutions
//! cost cuDNN extra layout work); its module docs list the exact rules. The decision
//! needs no device work. Building a plan ([`plan`]) turns the whole graph into one cuDNN
//! operation graph where cuDNN runs it, and otherwise into fused chains (a
//! convolution and its bias, activation and residual add in one kernel), so a ResNet
//! bottleneck block runs as three cuDNN plans.
//!
//! # Memory and streams
//! The engine takes device memory: the host passes CUDA device pointers and sets a
//! CUDA stream on the handle (`hipStream_t` is a CUDA stream here); every execution
//! enqueues on that stream and returns without waiting. The plugin uses device 0's
//! primary context, which the CUDA runtime and host applications share.
//!
//! # Knobs
//! `cudnn.allow_tf32` (0/1, default 0: FLOAT convolutions and matmuls stay in FP32),
//! `cudnn.heuristic` (`a`, `b`, `fallback`: cuDNN's heuristics modes), and the standard
//! `global.deterministic`, `global.workspace_size_limit` and `global.benchmarking`
//! (time the candidate configurations once per plan, keep the fastest).

use std::ffi::CStr;
use std::sync::Arc;

use hipdnn_plugin_sdk::abi::HIPDNN_PLUGIN_STATUS_NOT_INITIALIZED;
use hipdnn_plugin_sdk::knobs::GlobalSettings;
use hipdnn_plugin_sdk::prelude::*;

pub mod cudnn;
pub mod device;
pub mod graph;
pub mod plan;
pub mod probe;

pub use device::DeviceState;
pub use plan::{CudnnPlan, CudnnSettings};

use crate::cudnn::sys::cudnnBackendHeurMode_t;

/// The engine's name; its id is the name's FNV-1a hash.
pub const ENGINE_NAME: &CStr = c"CUDNN_ENGINE";
/// Knob: allow TF32 tensor cores for FLOAT math.
pub const KNOB_ALLOW_TF32: &str = "cudnn.allow_tf32";
/// Knob: cuDNN's heuristics mode.
pub const KNOB_HEURISTIC: &str = "cudnn.heuristic";

impl Settings for CudnnSettings {
    fn from_choices(choices: &KnobChoices<'_>) -> PluginResult<Self> {
        let global = GlobalSettings::from_choices(choices);
        let heuristic = match choices.string(KNOB_HEURISTIC).unwrap_or("a") {
            "a" => cudnnBackendHeurMode_t::CUDNN_HEUR_MODE_A,
            "b" => cudnnBackendHeurMode_t::CUDNN_HEUR_MODE_B,
            "fallback" => cudnnBackendHeurMode_t::CUDNN_HEUR_MODE_FALLBACK,
            other => {
                return Err(PluginError::bad_param(format!(
                    "knob \"{KNOB_HEURISTIC}\": unknown mode \"{other}\""
                )));
            }
        };
        Ok(Self {
            allow_tf32: choices.int(KNOB_ALLOW_TF32).unwrap_or(0) != 0,
            deterministic: global.deterministic,
            workspace_limit: global.workspace_size_limit,
            benchmarking: global.benchmarking,
            heuristic,
        })
    }
}

/// The knobs of `CUDNN_ENGINE` in its own namespace.
pub fn custom_knobs() -> Vec<Knob> {
    vec![
        KnobFactory::int(KNOB_ALLOW_TF32, 0)
            .range(0, 1)
            .description("1: FLOAT convolutions and matmuls may use TF32 tensor cores")
            .build()
            .expect("a valid knob"),
        KnobFactory::string(KNOB_HEURISTIC, "a")
            .valid_strings(&["a", "b", "fallback"])
            .description(
                "cuDNN heuristics mode: a (fast), b (more accurate, slower to ask), fallback",
            )
            .build()
            .expect("a valid knob"),
    ]
}

/// Why `CUDNN_ENGINE` does not run `graph`, or `None` when it does (no device needed).
pub fn unsupported_reason(graph: &GraphView<'_>) -> Option<String> {
    match graph.to_model() {
        Ok(model) => graph::Translation::new(&model).err(),
        Err(e) => Some(e.to_string()),
    }
}

/// The plan builder.
#[derive(Debug, Clone, Copy, Default)]
pub struct CudnnPlanBuilder;

/// What a plugin handle holds.
pub type State = Arc<DeviceState>;

impl IPlanBuilder<State, CudnnSettings, BoxedPlan<State>> for CudnnPlanBuilder {
    fn is_applicable(&self, _: &Handle<State>, graph: &GraphView<'_>) -> bool {
        match unsupported_reason(graph) {
            None => true,
            Some(reason) => {
                tracing::debug!(graph = graph.name(), %reason, "CUDNN_ENGINE does not apply");
                false
            }
        }
    }

    fn custom_knobs(&self, _: &Handle<State>, _: &GraphView<'_>) -> Vec<Knob> {
        custom_knobs()
    }

    fn build_plan(
        &self,
        handle: &Handle<State>,
        graph: &GraphView<'_>,
        settings: CudnnSettings,
    ) -> PluginResult<BoxedPlan<State>> {
        let model = graph
            .to_model()
            .map_err(|e| PluginError::bad_param(e.to_string()))?;
        Ok(Box::new(CudnnPlan::build(
            handle.state(),
            &model,
            &settings,
        )?))
    }
}

/// The engine: `CUDNN_ENGINE`, device memory, the standard knobs it honours.
pub fn engine() -> Engine<State, CudnnSettings, BoxedPlan<State>> {
    Engine::new(ENGINE_NAME)
        .with_memory_kind(MemoryKind::Device)
        .with_builder(CudnnPlanBuilder)
        .with_global_knob(global_knobs::deterministic())
        .with_global_knob(global_knobs::workspace_size_limit())
        .with_global_knob(global_knobs::benchmarking())
}

/// The plugin (`hipdnn_cudnn_provider`).
#[derive(Debug, Clone, Copy)]
pub struct CudnnPlugin;

impl EnginePlugin for CudnnPlugin {
    const NAME: &'static CStr = c"hipdnn_cudnn_provider";
    const VERSION: &'static CStr = c"0.1.0";
    type Handle = State;
    type Settings = CudnnSettings;
    type Context = BoxedPlan<State>;

    fn engines() -> EngineManager<State, CudnnSettings, BoxedPlan<State>> {
        EngineManager::new().with_engine(engine())
    }

    fn create_handle() -> PluginResult<State> {
        // NOT_INITIALIZED: the machine cannot run the engine (not a failure of the call).
        let unavailable = |reason: String| {
            PluginError::new(
                HIPDNN_PLUGIN_STATUS_NOT_INITIALIZED,
                format!("CUDNN_ENGINE is unavailable: {reason}"),
            )
        };
        let found = probe::probe().map_err(unavailable)?;
        tracing::info!(
            "cuDNN {} on {} CUDA device(s)",
            probe::version_text(found.cudnn_version),
            found.devices
        );
        DeviceState::open(found).map(Arc::new).map_err(unavailable)
    }

    fn stream_changed(handle: &State, stream: hipStream_t) -> PluginResult<()> {
        let mut bound = handle.lock();
        // SAFETY: the host hands a CUDA stream of this device (or null).
        unsafe { bound.on_stream(stream.cast()) }
            .map(drop)
            .map_err(PluginError::bad_param)
    }
}

hipdnn_plugin_sdk::export_engine_plugin!(CudnnPlugin);
