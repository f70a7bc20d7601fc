//! Host overhead of executing through the backend: `Plan::execute` (variant pack checked
//! against the graph, then the plugin's `hipdnnEnginePluginExecuteOpGraph`) against
//! calling that entry point directly on an execution context made by the same plugin.
//!
//! The plugin is the SDK's example ReLU engine (`good_plugin`, an example of this
//! package) on a tiny graph (8 floats), so the measured time is almost all host overhead.
//! Build it first: `cargo build --release -p hipdnn-backend --examples`.

use std::ffi::c_void;
use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use hipdnn_backend::{Handle, LoadingMode, OperationGraph, VariantPack, set_engine_plugin_paths};
use hipdnn_data_sdk::{DataType, engine_name_to_id};
use hipdnn_flatbuffers_sdk::model::{
    EngineConfig, Graph, Node, PointwiseAttributes, TensorAttributes,
};
use hipdnn_flatbuffers_sdk::wire::PointwiseMode;
use hipdnn_plugin_abi::*;
use libloading::os::unix::{Library, RTLD_LOCAL, RTLD_NOW};

mod support;

fn relu_graph() -> Graph {
    let tensor = |uid: i64, name: &str| TensorAttributes {
        uid,
        name: name.to_owned(),
        data_type: DataType::Float,
        dims: vec![2, 4],
        strides: vec![4, 1],
        ..TensorAttributes::default()
    };
    Graph {
        name: "relu".to_owned(),
        io_data_type: DataType::Float,
        compute_data_type: DataType::Float,
        tensors: vec![tensor(1, "x"), tensor(2, "y")],
        nodes: vec![Node::new(
            "act",
            PointwiseAttributes {
                operation: PointwiseMode::RELU_FWD,
                in_0_tensor_uid: 1,
                out_0_tensor_uid: 2,
                ..PointwiseAttributes::default()
            },
        )],
        ..Graph::default()
    }
}

#[repr(align(64))]
struct Buffers {
    x: [f32; 8],
    y: [f32; 8],
}

fn execute(c: &mut Criterion) {
    let file = support::example_plugin();
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(&file, dir.path().join("libgood_plugin.so")).unwrap();
    set_engine_plugin_paths([dir.path()], LoadingMode::Absolute).unwrap();
    let handle = Handle::new();
    let graph = OperationGraph::new(relu_graph()).unwrap();
    let plan = handle.build_plan(&graph, &[]).unwrap();
    let mut buffers = Buffers {
        x: [-1.0, 2.0, -3.0, 4.0, -5.0, 6.0, -7.0, 8.0],
        y: [0.0; 8],
    };
    let pack = VariantPack::new()
        .with(1, buffers.x.as_mut_ptr().cast())
        .with(2, buffers.y.as_mut_ptr().cast());

    let mut group = c.benchmark_group("execute_tiny_graph");
    group.bench_function("backend_plan_execute", |b| {
        // SAFETY: the pack's buffers hold the graph's 8 floats each.
        b.iter(|| unsafe { plan.execute(black_box(&pack), std::ptr::null_mut()) }.unwrap())
    });

    // Peer: the plugin's entry point called directly on a context of its own.
    // SAFETY: the same plugin file, already loaded by the backend.
    let library = unsafe {
        Library::open(
            Some(dir.path().join("libgood_plugin.so")),
            RTLD_NOW | RTLD_LOCAL,
        )
    }
    .unwrap();
    // SAFETY: the SDK's entry points, used while `library` keeps them loaded.
    let api = unsafe {
        EngineApi::resolve(|name| {
            library
                .get::<*mut c_void>(name.to_bytes_with_nul())
                .map_or(std::ptr::null_mut(), |symbol| *symbol)
        })
    }
    .unwrap();
    let (create, context_fn, execute_fn) = (
        api.create,
        api.create_execution_context,
        api.execute_op_graph,
    );
    let config = EngineConfig {
        engine_id: engine_name_to_id("EXAMPLE_RELU_ENGINE"),
        knobs: Vec::new(),
        ranking_metric: String::new(),
    }
    .to_bytes();
    let span = |b: &[u8]| hipdnnPluginConstData_t {
        ptr: b.as_ptr().cast(),
        size: b.len(),
    };
    let mut raw_handle = std::ptr::null_mut();
    let mut context = std::ptr::null_mut();
    // SAFETY: valid out-pointers and spans for the calls.
    unsafe {
        assert_eq!(create(&mut raw_handle), HIPDNN_PLUGIN_STATUS_SUCCESS);
        assert_eq!(
            context_fn(
                raw_handle,
                &span(&config),
                &span(graph.bytes()),
                &mut context
            ),
            HIPDNN_PLUGIN_STATUS_SUCCESS
        );
    }
    let device_buffers = [
        hipdnnPluginDeviceBuffer_t {
            uid: 1,
            ptr: buffers.x.as_mut_ptr().cast(),
        },
        hipdnnPluginDeviceBuffer_t {
            uid: 2,
            ptr: buffers.y.as_mut_ptr().cast(),
        },
    ];
    group.bench_function("plugin_execute_direct", |b| {
        b.iter(|| {
            // SAFETY: a live handle and context of this plugin; buffers as above.
            let status = unsafe {
                execute_fn(
                    raw_handle,
                    context,
                    std::ptr::null_mut(),
                    black_box(device_buffers.as_ptr()),
                    2,
                )
            };
            assert_eq!(status, HIPDNN_PLUGIN_STATUS_SUCCESS);
        })
    });
    group.finish();
}

criterion_group!(benches, execute);
criterion_main!(benches);
