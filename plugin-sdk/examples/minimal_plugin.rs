//! A complete engine plugin: single-node ReLU graphs over `f32` host memory, with one
//! knob (the slope applied to negative inputs). Built as a cdylib; the SDK's tests load
//! it with `dlopen` and drive the whole C ABI through it.

use std::ffi::CStr;

use hipdnn_plugin_sdk::prelude::*;

const SLOPE: &str = "example.relu.negative_slope";

/// Knob choices this engine reads.
struct ReluSettings {
    slope: f32,
}

impl Settings for ReluSettings {
    fn from_choices(choices: &KnobChoices<'_>) -> PluginResult<Self> {
        Ok(Self {
            slope: choices.float(SLOPE).unwrap_or(0.0) as f32,
        })
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
        let (x, y) = (
            buffers.require(self.x)?.cast::<f32>(),
            buffers.require(self.y)?.cast::<f32>(),
        );
        // SAFETY: this plugin's contract is host buffers of `len` floats per tensor.
        let (x, y) = unsafe {
            (
                std::slice::from_raw_parts(x, self.len),
                std::slice::from_raw_parts_mut(y, self.len),
            )
        };
        y.iter_mut()
            .zip(x)
            .for_each(|(y, &x)| *y = if x > 0.0 { x } else { self.slope * x });
        Ok(())
    }
}

struct ReluBuilder;

impl IPlanBuilder<(), ReluSettings> for ReluBuilder {
    fn is_applicable(&self, _: &Handle, graph: &GraphView<'_>) -> bool {
        let relu = graph.nodes().next().map(|n| n.attributes()).is_some_and(
            |a| matches!(a, NodeAttributesRef::PointwiseAttributes(p) if p.operation() == PointwiseMode::RELU_FWD),
        );
        let float = |t: TensorView<'_>| {
            t.data_type() == DataType::Float || graph.io_data_type() == DataType::Float
        };
        graph.node_count() == 1 && relu && graph.tensors().all(float)
    }

    fn custom_knobs(&self, _: &Handle, _: &GraphView<'_>) -> Vec<Knob> {
        let slope = KnobFactory::float(SLOPE, 0.0)
            .float_range(0.0, 1.0)
            .description("slope for x < 0 (leaky ReLU)");
        vec![slope.build().expect("a valid knob")]
    }

    fn build_plan(
        &self,
        _: &Handle,
        graph: &GraphView<'_>,
        settings: ReluSettings,
    ) -> PluginResult<Box<dyn IPlan>> {
        let Some(NodeAttributesRef::PointwiseAttributes(p)) =
            graph.nodes().next().map(|n| n.attributes())
        else {
            return Err(PluginError::not_applicable("not a ReLU graph"));
        };
        let x = graph
            .tensor(p.in_0_tensor_uid())
            .ok_or_else(|| PluginError::bad_param("no input tensor"))?;
        let len = x.dims().iter().product::<i64>() as usize;
        Ok(Box::new(Relu {
            x: p.in_0_tensor_uid(),
            y: p.out_0_tensor_uid(),
            len,
            slope: settings.slope,
        }))
    }
}

struct Example;

impl EnginePlugin for Example {
    const NAME: &'static CStr = c"example_relu_plugin";
    const VERSION: &'static CStr = c"0.1.0";
    type Handle = ();
    type Settings = ReluSettings;
    type Context = Box<dyn IPlan>;

    fn engines() -> EngineManager<(), ReluSettings> {
        let engine = Engine::new(c"EXAMPLE_RELU_ENGINE").with_builder(ReluBuilder);
        EngineManager::new().with_engine(engine.with_global_knob(global_knobs::deterministic()))
    }

    fn create_handle() -> PluginResult<()> {
        Ok(())
    }
}

hipdnn_plugin_sdk::export_engine_plugin!(Example);
