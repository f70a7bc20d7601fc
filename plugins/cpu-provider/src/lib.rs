//! The CPU engine plugin for hipDNN: `CPU_ENGINE`, fast multi-threaded CPU kernels for
//! the graph API, usable as a plugin (`libhipdnn_cpu_provider.so`) or in-process.
//!
//! # What it runs
//!
//! Graphs of convolutions (forward, data and filter gradients; 1–3 spatial dims,
//! groups, padding, stride, dilation, both modes), matmuls (batched, broadcast batch
//! dims), pointwise ops (every mode of the schema), batch norm
//! (inference, training with running statistics, backward), layer norm, RMS norm,
//! reductions and pooling (resample forward: max, average excluding or including the
//! padding; 1–3 spatial dims; no index output), over `FLOAT`, `HALF` and `BFLOAT16` tensors with any strides, computing
//! in `FLOAT`. Applicability is exact: [`plan::unsupported_reason`] says why a graph is
//! refused, naming the node or tensor.
//!
//! # Why it is built this way
//!
//! * **Fusion by epilogues.** A graph becomes stages: one producer plus the pointwise
//!   ops (and batch-norm inference) that consume its output, applied while the values
//!   are in registers: conv → bias → ReLU writes each output once, on the GEMM tile
//!   store. Virtual intermediates inside a chain never exist in memory.
//! * **One GEMM engine, operands supplied by the op.** Convolutions are implicit GEMMs
//!   on a 6×16 AVX2/FMA micro-kernel (6×32 over two panels with AVX-512F) that reads A
//!   through row pointers (weights in place, or channels-last input pixels through an
//!   indirection buffer) and packs B a few columns at a time ([`kernels::gemm`]). No
//!   full im2col matrix is formed; with AVX-512 or AVX2 + FMA the channels-last pixels
//!   are not packed at all (the micro-kernel reads them through the pointers), and the
//!   epilogue is applied to the accumulators before the one store.
//! * **Few rows, no packing.** A matmul of at most twelve rows (a batch-1 linear layer)
//!   with an `f32` B whose rows are contiguous reads B once, in memory order, instead of
//!   packing it: each part sums a chunk of B's rows into partial sums of its own, added
//!   in a fixed order, so the result is the same bits on any thread count.
//! * **Memory reused.** Intermediates that must be stored share workspace bytes when
//!   their lifetimes (from the stage writing them to the last reading them) do not
//!   overlap, so a network touches a few megabytes per execution, most of it in cache.
//!   A convolution or matmul adding a residual it is the last to read stores its
//!   output over that residual (the add in place: one stream of lines instead of two).
//! * **Threads that stay awake.** Each parallel section offers part `p` first to
//!   thread `p % threads`, the calling thread included; a thread done with its own
//!   parts takes those others have not begun, so a worker the host has not scheduled
//!   does not hold the section up. Workers spin briefly between sections (which
//!   follow each other within microseconds) before they sleep.
//! * **Activations channels-last.** Virtual images that convolutions and poolings
//!   read (and those joined to them by pointwise and batch-norm chains) are stored
//!   densely channels-last whatever strides they declare: no caller sees them, and the
//!   indirect GEMM, Winograd, the channels-last pooling and the epilogues on GEMM
//!   tiles all need that layout. A channels-first (NCHW) network thus runs as fast as
//!   its channels-last twin and computes the same bits; only its own inputs and
//!   outputs keep their layout (its first layer runs over a channels-last copy of the
//!   image; a convolution storing a caller's NCHW image writes rows of output
//!   channels). A single convolution over a caller's NCHW image likewise runs Winograd
//!   or the indirect GEMM on a channels-last copy in its workspace (1 × 1 layers read
//!   the image in place). Other intermediates a later stage reads are stored densely in the
//!   memory order of the stage's input.
//! * **Deterministic by construction.** Work is split statically and every reduction
//!   has a fixed order, so results repeat bit for bit (`global.deterministic` is
//!   honoured trivially).
//! * **Workspace from the host.** Scratch (materialised intermediates, packed
//!   operands, statistics) comes from the workspace the plan reports; under
//!   `global.workspace_size_limit` the plan falls back to the lean direct algorithms.
//!
//! # Knobs
//!
//! `cpu.threads` (int, 0 = one per core), `cpu.conv_algo` (`auto`, `gemm`, `direct`,
//! `winograd`),
//! `cpu.constant_weights` (0 or 1: with 1 the caller promises that convolution filters
//! keep their address and values from one execution of the plan to the next; the
//! channels-last convolutions then pack them on the first execution and keep the
//! packed form with the plan, about the filters' size again in memory (Winograd layers
//! keep their transformed filters: 1.8× the filters' size for F(2×2, 3×3), 4× for
//! F(4×4, 3×3)); filters at a
//! new address are packed again, values changed in place are not seen),
//! `global.deterministic`, `global.workspace_size_limit`. The environment variable
//! `HIPDNN_CPU_ISA=avx2` (or `portable`; `avx512`, the default, lifts the cap; other
//! values are ignored with a warning) caps the instruction set of the GEMM
//! micro-kernels, Winograd's transforms and the vector epilogues (bias or folded batch
//! norm, residual add, ReLU over channels-last tiles: AVX-512, else AVX2/AVX;
//! `portable` turns them off; they give the general epilogue's values), read once per
//! process; results are reproducible per machine and setting.
//! `HIPDNN_CPU_WINOGRAD_STREAM=1` (or `0`) makes constant 3×3 filters of small images
//! stream through Winograd as their taps on any CPU (or on none); by default they do
//! on AMD's with AVX-512, where that was measured to pay, read once per process.
//! `HIPDNN_CPU_WINOGRAD_OWN=1` (or `0`) makes each of two threads keep its own Winograd
//! tiles (or never): by default on AMD's CPUs, whose two threads may sit on two
//! last-level caches; elsewhere the threads share the work in phases. Read once per
//! process.
//! Kept filters (packed, or Winograd's transformed ones) of 2 MiB or more lie in
//! mappings of their own aligned to 2 MiB, with transparent huge pages asked for
//! (`madvise(MADV_HUGEPAGE)`; used where the system's setting is `always` or `madvise`):
//! read in full on every execution, they then cost 512 times fewer address
//! translations. The workspace an execution is lent gets the same advice on its whole
//! 2 MiB pages whenever a plan meets it at another address than in its execution
//! before (the stages' activations stream through it; pages the caller touched before
//! keep their size; the advice changes no byte). `HIPDNN_CPU_HUGE_PAGES=0` turns both
//! off (ordinary allocations, no advice), read once per process.
//! `HIPDNN_CPU_CHANNELS_LAST=0` stores virtual images in the memory order of the
//! stage that writes them instead (as declared, for a channels-first network), read
//! once per process.
//! `HIPDNN_LOG_LEVEL=info` logs each plan's stages and the kernel each one runs.
//! `HIPDNN_CPU_PROFILE=1` (read when a plan is built) times every stage of every
//! execution and prints, when the plan is destroyed, a table on stderr: per stage the
//! median and minimum time, its share of the execution and what it runs, headed by the
//! median time of all stages of an execution (the first stage's time includes the
//! batch-norm folds of every stage, done at the start of each execution), e.g.
//! `HIPDNN_CPU_PROFILE=1 hipdnn run resnet50.json --iters 20`. The thread pool, made
//! with the variable set, also times its parallel sections, and the table gives per
//! stage its sections per execution, the share of its time spent outside them on the
//! calling thread alone (`serial%`), and the share of its sections' thread time spent
//! waiting rather than computing (`idle%`): where parallelism, not kernel speed, costs
//! time. Profile one plan executing at a time (the section sums are per pool).
//!
//! # In-process use
//!
//! ```
//! use hipdnn_cpu_provider::{CpuSettings, HostTensors, plan_for};
//! use hipdnn_flatbuffers_sdk::GraphView;
//! use hipdnn_frontend::samples;
//!
//! let bytes = samples::conv_bias_relu().to_bytes();
//! let graph = GraphView::from_bytes(&bytes)?;
//! let plan = plan_for(&graph, &CpuSettings::default())?;
//! let (x, w, bias) = (vec![1.0f32; 3 * 64], vec![0.1f32; 4 * 27], vec![0.5f32; 4]);
//! let mut y = vec![0.0f32; 4 * 64];
//! plan.run(&mut HostTensors::new().input(1, &x).input(2, &w).input(4, &bias).output(6, &mut y))?;
//! assert!((y[9] - (2.7 + 0.5)).abs() < 1e-5);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![deny(missing_docs)]

pub mod kernels;
pub mod plan;
pub mod tensor;

/// Reproducible pseudo-random draws for the unit tests (xorshift64).
#[cfg(test)]
pub(crate) struct XorShift(pub(crate) u64);

#[cfg(test)]
impl XorShift {
    /// The next draw in `0..n`.
    pub(crate) fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

use std::ffi::CStr;

use hipdnn_plugin_sdk::knobs::GlobalSettings;
use hipdnn_plugin_sdk::prelude::*;

pub use plan::{CpuSettings, HostTensors, Plan, plan_for, unsupported_reason};

/// The engine's name; its id is the name's FNV-1a hash.
pub const ENGINE_NAME: &CStr = c"CPU_ENGINE";
/// The engine id (`hipdnn_data_sdk::CPU_ENGINE_ID`).
pub const ENGINE_ID: i64 = hipdnn_data_sdk::engine_name_to_id("CPU_ENGINE");
/// Knob: worker threads (0 = one per core).
pub const KNOB_THREADS: &str = "cpu.threads";
/// Knob: convolution algorithm (`auto`, `gemm`, `direct`).
pub const KNOB_CONV_ALGO: &str = "cpu.conv_algo";
/// Knob: 1 declares the filters constant between executions (packed once, kept).
pub const KNOB_CONSTANT_WEIGHTS: &str = "cpu.constant_weights";

impl Settings for CpuSettings {
    fn from_choices(choices: &KnobChoices<'_>) -> PluginResult<Self> {
        let threads = choices.int(KNOB_THREADS).unwrap_or(0);
        let algo = choices.string(KNOB_CONV_ALGO).unwrap_or("auto");
        let global = GlobalSettings::from_choices(choices);
        Ok(Self {
            threads: usize::try_from(threads).map_err(|_| {
                PluginError::bad_param(format!("knob \"{KNOB_THREADS}\": {threads} is negative"))
            })?,
            conv_algo: kernels::ConvAlgo::from_name(algo).ok_or_else(|| {
                PluginError::bad_param(format!(
                    "knob \"{KNOB_CONV_ALGO}\": unknown algorithm \"{algo}\""
                ))
            })?,
            deterministic: global.deterministic,
            workspace_limit: global.workspace_size_limit,
            constant_weights: choices.int(KNOB_CONSTANT_WEIGHTS).unwrap_or(0) == 1,
        })
    }
}

/// The knobs of `CPU_ENGINE` in its own namespace.
pub fn custom_knobs() -> Vec<Knob> {
    vec![
        KnobFactory::int(KNOB_THREADS, 0)
            .range(0, 1024)
            .description("worker threads; 0: one per available core")
            .build()
            .expect("a valid knob"),
        KnobFactory::string(KNOB_CONV_ALGO, "auto")
            .valid_strings(&["auto", "gemm", "direct", "winograd"])
            .description("convolution algorithm: auto (per shape), gemm (implicit/indirect GEMM), direct (plain loops, no workspace), winograd (F(2x2,3x3), or F(4x4,3x3) where it saves work: larger images with up to 128x128 channels, or large constant filters over at least 16 tiles; at stride 2 F(2x2,3x3) over 5x5 patches (25 products per 2x2 outputs, where that saves at least a quarter of the direct form's); wherever it applies: fp32 3x3 stride 1 or 2 (a channels-first input on a channels-last copy), 16 to 512 input channels, AVX-512 or AVX2+FMA; the rest as auto)")
            .build()
            .expect("a valid knob"),
        KnobFactory::int(KNOB_CONSTANT_WEIGHTS, 0)
            .valid_ints(&[0, 1])
            .description("1: convolution filters keep their address and values between executions; they are packed on the first and the packed form kept with the plan (more memory, less work per execution)")
            .build()
            .expect("a valid knob"),
    ]
}

/// The plan builder: every graph [`plan::unsupported_reason`] accepts.
#[derive(Debug, Clone, Copy, Default)]
pub struct CpuPlanBuilder;

impl IPlanBuilder<(), CpuSettings> for CpuPlanBuilder {
    fn is_applicable(&self, _: &Handle, graph: &GraphView<'_>) -> bool {
        match unsupported_reason(graph) {
            None => true,
            Some(reason) => {
                tracing::debug!(graph = graph.name(), %reason, "CPU_ENGINE does not apply");
                false
            }
        }
    }

    fn custom_knobs(&self, _: &Handle, _: &GraphView<'_>) -> Vec<Knob> {
        custom_knobs()
    }

    fn build_plan(
        &self,
        _: &Handle,
        graph: &GraphView<'_>,
        settings: CpuSettings,
    ) -> PluginResult<BoxedPlan> {
        Ok(Box::new(plan_for(graph, &settings)?))
    }
}

impl IPlan for Plan {
    fn workspace_size(&self) -> usize {
        Plan::workspace_size(self)
    }

    fn execute(&self, _: &Handle, exec: &Execution<'_>) -> PluginResult<()> {
        // SAFETY: the engine declares host memory, so the host passes host buffers
        // holding the graph's tensors, alive and unshared during the call, and a host
        // workspace of the size the plan asked for.
        let workspace = unsafe { exec.workspace().host_mut() }?;
        // SAFETY: as above.
        unsafe {
            Plan::execute(
                self,
                exec.buffers(),
                workspace.as_mut_ptr().cast(),
                workspace.len(),
            )
        }
    }
}

/// The engine: `CPU_ENGINE` with [`CpuPlanBuilder`] and the standard knobs it honours;
/// it takes host memory (its details carry the host-memory behavior note).
pub fn engine() -> Engine<(), CpuSettings> {
    Engine::new(ENGINE_NAME)
        .with_memory_kind(MemoryKind::Host)
        .with_builder(CpuPlanBuilder)
        .with_global_knob(global_knobs::deterministic())
        .with_global_knob(global_knobs::workspace_size_limit())
}

/// The plugin (`hipdnn_cpu_provider`).
#[derive(Debug, Clone, Copy)]
pub struct CpuPlugin;

impl EnginePlugin for CpuPlugin {
    const NAME: &'static CStr = c"hipdnn_cpu_provider";
    const VERSION: &'static CStr = c"0.1.0";
    type Handle = ();
    type Settings = CpuSettings;
    type Context = BoxedPlan;

    fn engines() -> EngineManager<(), CpuSettings> {
        EngineManager::new().with_engine(engine())
    }

    fn create_handle() -> PluginResult<()> {
        Ok(())
    }
}

hipdnn_plugin_sdk::export_engine_plugin!(CpuPlugin);
