// A complete engine plugin: leaky ReLU on packed FLOAT host tensors, one knob (the slope).
use std::ffi::CStr;

use hipdnn_plugin_sdk::prelude::*;

const SLOPE: &str = "example.relu.negative_slope";

/// Reads `.2` floats of tensor `.0`, writes tensor `.1`; `.3` is the slope.
struct Relu(i64, i64, usize, f32);

impl IPlan for Relu {
    fn execute(&self, _: &Handle, exec: &Execution<'_>) -> PluginResult<()> {
        let (&Relu(x, y, len, slope), b) = (self, exec.buffers());
        // SAFETY: a host engine gets distinct host buffers holding the graph's tensors.
        let (x, y) = unsafe { (b.host::<f32>(x, len)?, b.host_mut::<f32>(y, len)?) };
        for (y, &x) in y.iter_mut().zip(x) {
            *y = if x > 0.0 { x } else { slope * x };
        }
        Ok(())
    }
}

/// (x, y, element count) of one ReLU between packed FLOAT tensors of the same shape.
fn relu(g: &GraphView<'_>) -> Option<(i64, i64, usize)> {
    let NodeAttributesRef::PointwiseAttributes(p) = g.single_node()?.attributes() else {
        return None;
    };
    let x = g.tensor(p.in_0_tensor_uid())?;
    let y = g.tensor(p.out_0_tensor_uid())?;
    let ok = |t: &TensorView<'_>| {
        let same_dims = t.dims().iter().eq(x.dims().iter());
        g.data_type_of(t) == DataType::Float && t.is_packed() && same_dims
    };
    let n = usize::try_from(x.element_count()).ok()?;
    (p.operation() == PointwiseMode::RELU_FWD && ok(&x) && ok(&y)).then_some((x.uid(), y.uid(), n))
}

struct Example;

impl IPlanBuilder<(), KnobValues> for Example {
    fn is_applicable(&self, _: &Handle, graph: &GraphView<'_>) -> bool {
        relu(graph).is_some()
    }

    fn custom_knobs(&self, _: &Handle, _: &GraphView<'_>) -> Vec<Knob> {
        let slope = KnobFactory::float(SLOPE, 0.0).float_range(0.0, 1.0);
        vec![slope.description("slope for x < 0").build().expect("valid")]
    }

    fn build_plan(&self, _: &Handle, g: &GraphView<'_>, k: KnobValues) -> PluginResult<BoxedPlan> {
        let (x, y, len) = relu(g).ok_or_else(|| PluginError::not_applicable("not a ReLU"))?;
        hipdnn_plugin_sdk::tracing::info!("leaky ReLU plan over {len} floats");
        Ok(Box::new(Relu(
            x,
            y,
            len,
            k.float(SLOPE).unwrap_or(0.0) as f32,
        )))
    }
}

impl EnginePlugin for Example {
    const NAME: &'static CStr = c"example_relu_plugin";
    const VERSION: &'static CStr = c"0.1.0";
    type Handle = ();
    type Settings = KnobValues;
    type Context = BoxedPlan;

    fn engines() -> EngineManager<(), KnobValues> {
        let engine = Engine::new(c"EXAMPLE_RELU_ENGINE").with_memory_kind(MemoryKind::Host);
        EngineManager::new().with_engine(engine.with_builder(Example))
    }

    fn create_handle() -> PluginResult<()> {
        Ok(())
    }
}

hipdnn_plugin_sdk::export_engine_plugin!(Example);
