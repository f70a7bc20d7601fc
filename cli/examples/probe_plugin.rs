// A test plugin for the `hipdnn` command's tests: one engine, `PROBE_ADD_ENGINE` (a name
// outside the engine-name registry, as an out-of-tree engine's would be), that adds two
// packed `f32` host tensors of the same shape. It declares host memory in its details,
// advertises an int knob with a range, and logs at info level when asked about a graph
// and when it builds a plan, so the tests can see plugin log lines reach the terminal.

use std::ffi::CStr;

use hipdnn_data_sdk::{TensorLayout, packed_strides};
use hipdnn_plugin_sdk::prelude::*;

const UNROLL: &str = "probe.add.unroll";

struct AddSettings;

impl Settings for AddSettings {
    fn from_choices(_: &KnobChoices<'_>) -> PluginResult<Self> {
        Ok(AddSettings)
    }
}

/// `c = a + b` over `len` floats.
struct Add {
    a: i64,
    b: i64,
    c: i64,
    len: usize,
}

impl IPlan for Add {
    fn execute(&self, _: &Handle, exec: &Execution<'_>) -> PluginResult<()> {
        let buffers = exec.buffers();
        // SAFETY: host engine (its details say so): distinct host buffers of `len` floats.
        let a = unsafe { buffers.host::<f32>(self.a, self.len)? };
        // SAFETY: as above.
        let b = unsafe { buffers.host::<f32>(self.b, self.len)? };
        // SAFETY: as above.
        let c = unsafe { buffers.host_mut::<f32>(self.c, self.len)? };
        for ((c, a), b) in c.iter_mut().zip(a).zip(b) {
            *c = a + b;
        }
        Ok(())
    }
}

/// The graph's only node and its tensors' element count, when it adds two packed `FLOAT`
/// tensors into a third of the same shape.
fn add(graph: &GraphView<'_>) -> Option<(i64, i64, i64, usize)> {
    let NodeAttributesRef::PointwiseAttributes(p) = graph.nodes().next()?.attributes() else {
        return None;
    };
    let (a, b, c) = (
        p.in_0_tensor_uid(),
        p.in_1_tensor_uid()?,
        p.out_0_tensor_uid(),
    );
    let dims: Vec<i64> = graph.tensor(c)?.dims().iter().collect();
    let strides = packed_strides(&dims, TensorLayout::Packed).ok()?;
    let packed = |uid| {
        graph.tensor(uid).is_some_and(|t| {
            let dtype = match t.data_type() {
                DataType::Unset => graph.io_data_type(),
                written => written,
            };
            dtype == DataType::Float
                && t.dims().iter().eq(dims.iter().copied())
                && t.strides().iter().eq(strides.iter().copied())
        })
    };
    let single = graph.node_count() == 1 && p.operation() == PointwiseMode::ADD;
    let len = usize::try_from(dims.iter().product::<i64>()).ok()?;
    (single && [a, b, c].into_iter().all(packed)).then_some((a, b, c, len))
}

struct AddBuilder;

impl IPlanBuilder<(), AddSettings> for AddBuilder {
    fn is_applicable(&self, _: &Handle, graph: &GraphView<'_>) -> bool {
        let applicable = add(graph).is_some();
        tracing::info!("probe asked about graph '{}': {applicable}", graph.name());
        applicable
    }

    fn custom_knobs(&self, _: &Handle, _: &GraphView<'_>) -> Vec<Knob> {
        let unroll = KnobFactory::int(UNROLL, 4).range(1, 16);
        vec![
            unroll
                .description("unroll factor")
                .build()
                .expect("a valid knob"),
        ]
    }

    fn build_plan(&self, _: &Handle, g: &GraphView<'_>, _: AddSettings) -> PluginResult<BoxedPlan> {
        let (a, b, c, len) = add(g).ok_or_else(|| PluginError::not_applicable("not an add"))?;
        tracing::info!("probe built a plan for graph '{}'", g.name());
        Ok(Box::new(Add { a, b, c, len }))
    }
}

struct Probe;

impl EnginePlugin for Probe {
    const NAME: &'static CStr = c"cli_probe_plugin";
    const VERSION: &'static CStr = c"0.2.0";
    type Handle = ();
    type Settings = AddSettings;
    type Context = BoxedPlan;

    fn engines() -> EngineManager<(), AddSettings> {
        let engine = Engine::new(c"PROBE_ADD_ENGINE")
            .with_builder(AddBuilder)
            .with_memory_kind(MemoryKind::Host);
        EngineManager::new().with_engine(engine)
    }

    fn create_handle() -> PluginResult<()> {
        Ok(())
    }
}

hipdnn_plugin_sdk::export_engine_plugin!(Probe);
