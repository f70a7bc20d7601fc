//! What the C boundary adds to one execution.
//!
//! A plugin with a no-op plan is exported into this binary by `export_engine_plugin!`.
//! Both functions run the same plan with three device buffers and no workspace:
//!
//! * `c_abi_execute_op_graph`: `hipdnnEnginePluginExecuteOpGraph` through its
//!   `extern "C"` symbol, as a host calls it (null checks, the panic boundary, the
//!   last-error reset, the workspace check, the plan's vtable);
//! * `direct_iplan_execute`: `IPlan::execute` on a `Handle` and an `Execution` built by
//!   hand (the floor: the plan's own cost).
//!
//! The difference is the SDK's per-call overhead; the goal is at most 30 ns.

use std::ffi::{CStr, c_void};
use std::hint::black_box;
use std::ptr;

use criterion::{Criterion, criterion_group, criterion_main};
use hipdnn_flatbuffers_sdk::model::EngineConfig;
use hipdnn_frontend::samples;
use hipdnn_plugin_sdk::abi::*;
use hipdnn_plugin_sdk::prelude::*;

/// Does nothing observable, but reads everything it is given so that nothing is
/// optimised away.
struct Noop;

impl IPlan for Noop {
    fn execute(&self, handle: &Handle, exec: &Execution<'_>) -> PluginResult<()> {
        black_box((handle.stream(), exec.buffers().as_slice(), exec.workspace()));
        Ok(())
    }
}

struct NoopBuilder;

impl IPlanBuilder for NoopBuilder {
    fn is_applicable(&self, _: &Handle, _: &GraphView<'_>) -> bool {
        true
    }

    fn build_plan(&self, _: &Handle, _: &GraphView<'_>, _: ()) -> PluginResult<BoxedPlan> {
        Ok(Box::new(Noop))
    }
}

struct BenchPlugin;

impl EnginePlugin for BenchPlugin {
    const NAME: &'static CStr = c"bench_plugin";
    const VERSION: &'static CStr = c"0.0.0";
    type Handle = ();
    type Settings = ();
    type Context = BoxedPlan;

    fn engines() -> EngineManager {
        EngineManager::new().with_engine(Engine::new(ENGINE).with_builder(NoopBuilder))
    }

    fn create_handle() -> PluginResult<()> {
        Ok(())
    }
}

hipdnn_plugin_sdk::export_engine_plugin!(BenchPlugin);

const ENGINE: &CStr = c"BENCH_NOOP_ENGINE";

unsafe extern "C" {
    fn hipdnnEnginePluginCreate(handle: *mut hipdnnEnginePluginHandle_t) -> hipdnnPluginStatus_t;
    fn hipdnnEnginePluginDestroy(handle: hipdnnEnginePluginHandle_t) -> hipdnnPluginStatus_t;
    fn hipdnnEnginePluginCreateExecutionContext(
        handle: hipdnnEnginePluginHandle_t,
        engine_config: *const hipdnnPluginConstData_t,
        op_graph: *const hipdnnPluginConstData_t,
        execution_context: *mut hipdnnEnginePluginExecutionContext_t,
    ) -> hipdnnPluginStatus_t;
    fn hipdnnEnginePluginDestroyExecutionContext(
        handle: hipdnnEnginePluginHandle_t,
        execution_context: hipdnnEnginePluginExecutionContext_t,
    ) -> hipdnnPluginStatus_t;
    fn hipdnnEnginePluginExecuteOpGraph(
        handle: hipdnnEnginePluginHandle_t,
        execution_context: hipdnnEnginePluginExecutionContext_t,
        workspace: *mut c_void,
        device_buffers: *const hipdnnPluginDeviceBuffer_t,
        num_device_buffers: u32,
    ) -> hipdnnPluginStatus_t;
}

fn span(bytes: &[u8]) -> hipdnnPluginConstData_t {
    hipdnnPluginConstData_t {
        ptr: bytes.as_ptr().cast(),
        size: bytes.len(),
    }
}

fn execute(c: &mut Criterion) {
    // Three tensors' buffers; the no-op plan never dereferences them.
    let mut memory = [[0.0_f32; 4]; 3];
    let buffers: Vec<hipdnnPluginDeviceBuffer_t> = memory
        .iter_mut()
        .zip([1, 2, 6])
        .map(|(m, uid)| hipdnnPluginDeviceBuffer_t {
            uid,
            ptr: m.as_mut_ptr().cast(),
        })
        .collect();

    let mut graph = samples::conv_bias_relu();
    graph.validate().expect("a valid sample");
    let graph = graph.to_bytes();
    let config = EngineConfig {
        engine_id: hipdnn_data_sdk::engine_name_to_id("BENCH_NOOP_ENGINE"),
        ..EngineConfig::default()
    }
    .to_bytes();
    let (mut handle, mut context) = (ptr::null_mut(), ptr::null_mut());
    // SAFETY: live out-parameters and spans over live bytes.
    unsafe {
        assert_eq!(
            hipdnnEnginePluginCreate(&mut handle),
            HIPDNN_PLUGIN_STATUS_SUCCESS
        );
        let status = hipdnnEnginePluginCreateExecutionContext(
            handle,
            &span(&config),
            &span(&graph),
            &mut context,
        );
        assert_eq!(status, HIPDNN_PLUGIN_STATUS_SUCCESS);
    }

    let plan: BoxedPlan = Box::new(Noop);
    let direct_handle = Handle::new(());

    let mut group = c.benchmark_group("execute");
    group.bench_function("c_abi_execute_op_graph", |b| {
        b.iter(|| {
            // SAFETY: a live handle and context; `buffers` is a live array of its length.
            unsafe {
                hipdnnEnginePluginExecuteOpGraph(
                    black_box(handle),
                    black_box(context),
                    black_box(ptr::null_mut()),
                    black_box(buffers.as_ptr()),
                    black_box(buffers.len() as u32),
                )
            }
        });
    });
    group.bench_function("direct_iplan_execute", |b| {
        b.iter(|| {
            let plan: &BoxedPlan = black_box(&plan);
            let exec = Execution::new(
                Buffers::new(black_box(&buffers[..]), MemoryKind::Device),
                WorkspaceView::new(black_box(ptr::null_mut()), 0, MemoryKind::Device),
                direct_handle.stream(),
            );
            plan.execute(black_box(&direct_handle), &exec)
        });
    });
    group.finish();

    // SAFETY: created above, destroyed once.
    unsafe {
        hipdnnEnginePluginDestroyExecutionContext(handle, context);
        hipdnnEnginePluginDestroy(handle);
    }
}

criterion_group!(benches, execute);
criterion_main!(benches);
