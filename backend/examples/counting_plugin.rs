// A plugin that counts its work: how often its engine decides applicability and how
// often it builds a plan, read back through the extra export `counting_plugin_counts`.
// The backend's lifecycle tests use it to show that one plan creation analyses a graph
// once and builds once, through the Rust API and through the C API.

use std::ffi::CStr;
use std::sync::atomic::{AtomicU64, Ordering};

use hipdnn_plugin_sdk::prelude::*;

static ANALYSES: AtomicU64 = AtomicU64::new(0);
static BUILDS: AtomicU64 = AtomicU64::new(0);

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

    fn build_plan(&self, _: &Handle, _: &GraphView<'_>, _: ()) -> PluginResult<BoxedPlan> {
        BUILDS.fetch_add(1, Ordering::SeqCst);
        Ok(Box::new(Noop))
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
            .with_global_knob(global_knobs::deterministic());
        EngineManager::new().with_engine(engine)
    }

    fn create_handle() -> PluginResult<()> {
        Ok(())
    }
}

hipdnn_plugin_sdk::export_engine_plugin!(CountingPlugin);
