// A plugin that counts its work: how often its engine decides applicability and how
// often it builds a plan, read back through the extra export `counting_plugin_counts`,
// and how many of its plans are alive (`counting_plugin_live_plans`). The backend's
// lifecycle tests use it to show that one plan creation analyses a graph once and
// builds once, through the Rust API and through the C API, and that every plan is
// released once. Its engine has knobs of each kind (int list, int range, float range,
// string list) for the knob-discovery tests.

use std::ffi::CStr;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

use hipdnn_plugin_sdk::prelude::*;

static ANALYSES: AtomicU64 = AtomicU64::new(0);
static BUILDS: AtomicU64 = AtomicU64::new(0);
/// Plans built and not yet dropped (a plugin handle's plan cache holds some).
static LIVE_PLANS: AtomicI64 = AtomicI64::new(0);

/// The number of this plugin's plans alive: built and not dropped.
#[unsafe(no_mangle)]
pub extern "C" fn counting_plugin_live_plans() -> i64 {
    LIVE_PLANS.load(Ordering::SeqCst)
}

/// Writes (applicability decisions, plan builds) so far.
///
/// # Safety
/// `out` is null or valid for a write of two `u64`s.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn counting_plugin_counts(out: *mut [u64; 2]) {
    if !out.is_null() {
        let counts = [
            ANALYSES.load(Ordering::SeqCst),
            BUILDS.load(Ordering::SeqCst),
        ];
        // SAFETY: non-null and writable per the contract.
        unsafe { out.write(counts) };
    }
}

/// Writes nothing: the counts are what the tests look at.
struct Noop;

impl Noop {
    fn new() -> Self {
        LIVE_PLANS.fetch_add(1, Ordering::SeqCst);
        Self
    }
}

impl Drop for Noop {
    fn drop(&mut self) {
        LIVE_PLANS.fetch_sub(1, Ordering::SeqCst);
    }
}

impl IPlan for Noop {
    fn workspace_size(&self) -> usize {
        64
    }

    fn execute(&self, _: &Handle, _: &Execution<'_>) -> PluginResult<()> {
        Ok(())
    }
}

/// Every single-node pointwise graph.
struct Counting;

impl IPlanBuilder for Counting {
    fn is_applicable(&self, _: &Handle, graph: &GraphView<'_>) -> bool {
        ANALYSES.fetch_add(1, Ordering::SeqCst);
        matches!(
            graph.single_node().map(|n| n.attributes()),
            Some(NodeAttributesRef::PointwiseAttributes(_))
        )
    }

    /// A float and a string knob, so knob discovery has each kind to show.
    fn custom_knobs(&self, _: &Handle, _: &GraphView<'_>) -> Vec<Knob> {
        [
            KnobFactory::float("counting.tolerance", 0.5)
                .description("how close is close enough")
                .float_range(0.0, 1.0)
                .build(),
            KnobFactory::string("counting.mode", "fast")
                .description("how to count")
                .valid_strings(&["fast", "exact"])
                .max_length(8)
                .build(),
        ]
        .into_iter()
        .map(|k| k.expect("well-formed knobs"))
        .collect()
    }

    fn build_plan(&self, _: &Handle, _: &GraphView<'_>, _: ()) -> PluginResult<BoxedPlan> {
        BUILDS.fetch_add(1, Ordering::SeqCst);
        Ok(Box::new(Noop::new()))
    }
}

struct CountingPlugin;

impl EnginePlugin for CountingPlugin {
    const NAME: &'static CStr = c"counting_plugin";
    const VERSION: &'static CStr = c"0.1.0";
    type Handle = ();
    type Settings = ();
    type Context = BoxedPlan;

    fn engines() -> EngineManager {
        let engine = Engine::new(c"COUNTING_ENGINE")
            .with_memory_kind(MemoryKind::Host)
            .with_builder(Counting)
            .with_global_knob(global_knobs::deterministic())
            .with_global_knob(global_knobs::workspace_size_limit());
        EngineManager::new().with_engine(engine)
    }

    fn create_handle() -> PluginResult<()> {
        Ok(())
    }
}

hipdnn_plugin_sdk::export_engine_plugin!(CountingPlugin);
