// A complete engine plugin: single-node ReLU graphs over `f32` host memory, with one
// knob (the slope applied to negative inputs). Built as a cdylib; the SDK's tests load
// it with `dlopen` and drive the whole C ABI through it. The crate documentation shows
// this file as its example.

use std::ffi::CStr;

use hipdnn_plugin_sdk::prelude::*;

const SLOPE: &str = "example.relu.negative_slope";

/// What the plan reads from the engine config: the slope.
struct ReluSettings(f32);

impl Settings for ReluSettings {
    fn from_choices(choices: &KnobChoices<'_>) -> PluginResult<Self> {
        Ok(ReluSettings(choices.float(SLOPE).unwrap_or(0.0) as f32))
    }
}

/// The plan: `y = x` where `x > 0`, else `slope * x`, over `len` floats.
struct Relu {
    x: i64,
    y: i64,
    len: usize,
    slope: f32,
}

impl IPlan for Relu {
    fn execute(&self, _: &Handle, buffers: &DeviceBuffers<'_>, _: Workspace) -> PluginResult<()> {
        // SAFETY: this plugin's contract is distinct host buffers of `len` floats.
        let x = unsafe { buffers.host_slice::<f32>(self.x, self.len)? };
        // SAFETY: as above.
        let y = unsafe { buffers.host_slice_mut::<f32>(self.y, self.len)? };
        for (y, &x) in y.iter_mut().zip(x) {
            *y = if x > 0.0 { x } else { self.slope * x };
        }
        Ok(())
    }
}

/// The graph's only node, when it is a ReLU over `FLOAT` tensors.
fn relu<'a>(graph: &GraphView<'a>) -> Option<wire::PointwiseAttributes<'a>> {
    let float =
        |t: TensorView<'_>| [t.data_type(), graph.io_data_type()].contains(&DataType::Float);
    let single = graph.node_count() == 1 && graph.tensors().all(float);
    let NodeAttributesRef::PointwiseAttributes(p) = graph.nodes().next()?.attributes() else {
        return None;
    };
    (single && p.operation() == PointwiseMode::RELU_FWD).then_some(p)
}

struct ReluBuilder;

impl IPlanBuilder<(), ReluSettings> for ReluBuilder {
    fn is_applicable(&self, _: &Handle, graph: &GraphView<'_>) -> bool {
        relu(graph).is_some()
    }

    fn custom_knobs(&self, _: &Handle, _: &GraphView<'_>) -> Vec<Knob> {
        let slope = KnobFactory::float(SLOPE, 0.0).float_range(0.0, 1.0);
        vec![
            slope
                .description("slope for x < 0")
                .build()
                .expect("a valid knob"),
        ]
    }

    fn build_plan(
        &self,
        _: &Handle,
        g: &GraphView<'_>,
        s: ReluSettings,
    ) -> PluginResult<BoxedPlan> {
        let p = relu(g).ok_or_else(|| PluginError::not_applicable("not a ReLU graph"))?;
        let (x, y, slope) = (p.in_0_tensor_uid(), p.out_0_tensor_uid(), s.0);
        let len = g
            .tensor(x)
            .map_or(0, |t| t.dims().iter().product::<i64>() as usize);
        Ok(Box::new(Relu { x, y, len, slope }))
    }
}

struct Example;

impl EnginePlugin for Example {
    const NAME: &'static CStr = c"example_relu_plugin";
    const VERSION: &'static CStr = c"0.1.0";
    type Handle = ();
    type Settings = ReluSettings;
    type Context = BoxedPlan;

    fn engines() -> EngineManager<(), ReluSettings> {
        let engine = Engine::new(c"EXAMPLE_RELU_ENGINE").with_builder(ReluBuilder);
        EngineManager::new().with_engine(engine.with_global_knob(global_knobs::deterministic()))
    }

    fn create_handle() -> PluginResult<()> {
        Ok(())
    }
}

hipdnn_plugin_sdk::export_engine_plugin!(Example);
