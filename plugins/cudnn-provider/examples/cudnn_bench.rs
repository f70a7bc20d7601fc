//! Times graphs through the backend and `CUDNN_ENGINE` on a CUDA device, as an
//! application runs them: a plan built by the backend, device buffers, the handle's
//! stream, `Plan::execute` in a loop, CUDA events around each iteration.
//!
//! ```text
//! cudnn_bench [--graph block|conv3x3] [--dtype f16|bf16|f32|tf32] [--batch N]
//!             [--layout nhwc|nchw] [--iters N] [--check] [--knob ID=VALUE]...
//! ```
//!
//! Prints one JSON object per run: the device time per iteration (median of `--iters`
//! event-timed iterations), the host time per `Plan::execute` call through the backend,
//! and the host time of the plugin's cuDNN calls alone (the same stages, pointers
//! resolved beforehand), so their difference is what the host path adds. `--check`
//! compares the output with the CPU reference (slow for big graphs). The plugin is
//! found as the backend finds plugins (`HIPDNN_PLUGIN_DIR`).

use std::collections::BTreeMap;
use std::time::Instant;

use std::sync::Arc;

use hipdnn_backend::{Handle, MemoryKind, OperationGraph, VariantPack};
use hipdnn_cudnn_provider::{CudnnPlan, CudnnSettings, DeviceState, probe};
use hipdnn_data_sdk::{DataType, TensorLayout};
use hipdnn_flatbuffers_sdk::model::{Graph, KnobSetting, KnobValue};
use hipdnn_gpu::Gpu;
use hipdnn_plugin_sdk::abi::hipdnnPluginDeviceBuffer_t;
use hipdnn_plugin_sdk::{Buffers, Execution, IPlan, WorkspaceView};
use hipdnn_reference::data::{DataGen, decode, encode};
use hipdnn_reference::tensor::HostTensor;
use hipdnn_reference::tolerance::{OpFamily, compare, tolerance};
use hipdnn_test_sdk::graphs::{self, ConvSpec, Layout};

struct Options {
    graph: String,
    dtype: String,
    batch: i64,
    layout: String,
    iters: usize,
    check: bool,
    knobs: Vec<KnobSetting>,
}

fn parse() -> Result<Options, String> {
    let mut o = Options {
        graph: "block".into(),
        dtype: "f16".into(),
        batch: 32,
        layout: "nhwc".into(),
        iters: 100,
        check: false,
        knobs: Vec::new(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "--graph" => o.graph = value()?,
            "--dtype" => o.dtype = value()?,
            "--batch" => o.batch = value()?.parse().map_err(|e| format!("--batch: {e}"))?,
            "--layout" => o.layout = value()?,
            "--iters" => o.iters = value()?.parse().map_err(|e| format!("--iters: {e}"))?,
            "--check" => o.check = true,
            "--knob" => {
                let v = value()?;
                let (id, text) = v.split_once('=').ok_or("--knob ID=VALUE")?;
                let value = text
                    .parse::<i64>()
                    .map(KnobValue::Int)
                    .unwrap_or_else(|_| KnobValue::String(text.into()));
                o.knobs.push(KnobSetting {
                    knob_id: id.into(),
                    value,
                });
            }
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if o.dtype == "tf32" {
        o.knobs.push(KnobSetting {
            knob_id: "cudnn.allow_tf32".into(),
            value: KnobValue::Int(1),
        });
    }
    Ok(o)
}

fn graph(o: &Options) -> Result<Graph, String> {
    let dtype = match o.dtype.as_str() {
        "f16" => DataType::Half,
        "bf16" => DataType::Bfloat16,
        "f32" | "tf32" => DataType::Float,
        other => return Err(format!("unknown dtype {other}")),
    };
    let (layout, test_layout) = match o.layout.as_str() {
        "nhwc" => (TensorLayout::ChannelsLast, Layout::Nhwc),
        "nchw" => (TensorLayout::Packed, Layout::Nchw),
        other => return Err(format!("unknown layout {other}")),
    };
    Ok(match o.graph.as_str() {
        "block" => hipdnn_frontend::samples::resnet_bottleneck(o.batch, 256, 56, dtype, layout),
        "conv3x3" => {
            let spec =
                ConvSpec::new(&[o.batch, 64, 56, 56], &[64, 64, 3, 3]).with(|p| p.padding(1));
            graphs::conv_fprop(&spec, &test_layout, dtype)
        }
        other => return Err(format!("unknown graph {other}")),
    })
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    if let Err(e) = run() {
        eprintln!("cudnn_bench: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let o = parse()?;
    let model = graph(&o)?;
    let op_graph = OperationGraph::new(model.clone()).map_err(|e| e.to_string())?;
    // HIPDNN_LOG_LEVEL=info shows the backend's and the plugin's log (e.g. the stages).
    hipdnn_backend::log_output::ensure_installed();
    let handle = Handle::new();
    let id = handle
        .engine_id_by_name("CUDNN_ENGINE")
        .map_err(|e| e.to_string())?;
    let build = Instant::now();
    let plan = handle
        .create_plan(&op_graph, id, &o.knobs)
        .map_err(|e| e.to_string())?;
    let build_ms = build.elapsed().as_secs_f64() * 1e3;
    if plan.memory_kind() != MemoryKind::Device {
        return Err("CUDNN_ENGINE should take device memory".into());
    }
    let gpu = Gpu::open_default().map_err(|e| e.to_string())?;
    let stream = gpu.stream().map_err(|e| e.to_string())?;
    // SAFETY: a live stream of the device the plugin uses (device 0).
    unsafe { handle.set_stream(stream.as_raw().cast()) }.map_err(|e| e.to_string())?;

    // Inputs: seeded values in [-1, 1) (weights and biases scaled down), rounded to
    // their type; outputs zeroed.
    let mut rng = DataGen::new(0x5eed);
    let mut host: BTreeMap<i64, Vec<u8>> = BTreeMap::new();
    let mut device = BTreeMap::new();
    let mut pack = VariantPack::new();
    for uid in plan.required_uids().collect::<Vec<_>>() {
        let t = model
            .tensors
            .iter()
            .find(|t| t.uid == uid)
            .expect("a graph tensor");
        let dtype = t.data_type;
        let mut values = HostTensor::for_tensor(t);
        let scale = if t.name.ends_with("_w") { 0.1 } else { 1.0 };
        rng.fill_as(&mut values, -scale, scale, dtype);
        let bytes = encode(dtype, &values).map_err(|e| e.to_string())?;
        let buffer = gpu.copy_from_host(&bytes).map_err(|e| e.to_string())?;
        pack.set(uid, buffer.as_ptr());
        host.insert(uid, bytes);
        device.insert(uid, buffer);
    }
    let workspace = gpu
        .alloc_zeroed(plan.workspace_size())
        .map_err(|e| e.to_string())?;

    // Device time per iteration.
    let (start, end) = (
        gpu.event().map_err(|e| e.to_string())?,
        gpu.event().map_err(|e| e.to_string())?,
    );
    let exec = || {
        // SAFETY: device buffers of each tensor's size and the plan's workspace, alive
        // until the stream is synchronized below.
        unsafe { plan.execute(&pack, workspace.as_ptr()) }.map_err(|e| e.to_string())
    };
    for _ in 0..10 {
        exec()?;
    }
    let mut device_us = Vec::with_capacity(o.iters);
    for _ in 0..o.iters {
        start.record(&stream).map_err(|e| e.to_string())?;
        exec()?;
        end.record(&stream).map_err(|e| e.to_string())?;
        end.synchronize().map_err(|e| e.to_string())?;
        device_us.push(f64::from(start.elapsed_ms(&end).map_err(|e| e.to_string())?) * 1e3);
    }
    // Device time per execution when executions are queued back to back (what a
    // pipeline sees once the host runs ahead).
    let queued = 20;
    let mut pipelined_us = Vec::new();
    for _ in 0..(o.iters / queued).max(3) {
        start.record(&stream).map_err(|e| e.to_string())?;
        for _ in 0..queued {
            exec()?;
        }
        end.record(&stream).map_err(|e| e.to_string())?;
        end.synchronize().map_err(|e| e.to_string())?;
        pipelined_us.push(
            f64::from(start.elapsed_ms(&end).map_err(|e| e.to_string())?) * 1e3 / queued as f64,
        );
    }
    // Host time per call: many calls back to back, then wait. Three ways: through
    // the backend (C ABI, SDK, plugin), the plugin's execute called in-process, and the
    // cuDNN calls alone (variant packs made beforehand).
    let state = Arc::new(DeviceState::open(probe::probe()?)?);
    let sdk_handle = hipdnn_plugin_sdk::Handle::new(Arc::clone(&state));
    let settings = CudnnSettings {
        allow_tf32: o.dtype == "tf32",
        ..CudnnSettings::default()
    };
    let direct = CudnnPlan::build(&state, op_graph.graph(), &settings).map_err(|e| e.message)?;
    let raw: Vec<hipdnnPluginDeviceBuffer_t> = device
        .iter()
        .map(|(&uid, b)| hipdnnPluginDeviceBuffer_t {
            uid,
            ptr: b.as_ptr(),
        })
        .collect();
    let direct_ws = gpu
        .alloc_zeroed(IPlan::workspace_size(&direct))
        .map_err(|e| e.to_string())?;
    let exec_args = Execution::new(
        Buffers::new(&raw, hipdnn_data_sdk::MemoryKind::Device),
        WorkspaceView::new(
            direct_ws.as_ptr(),
            IPlan::workspace_size(&direct),
            hipdnn_data_sdk::MemoryKind::Device,
        ),
        stream.as_raw().cast(),
    );
    let plugin_exec = || {
        direct
            .execute(&sdk_handle, &exec_args)
            .map_err(|e| e.message)
    };
    plugin_exec()?;
    // SAFETY: the buffers outlive every call (synchronized below).
    let mut cudnn_only = unsafe { direct.cudnn_calls_only(&exec_args) }.map_err(|e| e.message)?;
    let calls = 100;
    let per_call = |f: &mut dyn FnMut() -> Result<(), String>| -> Result<f64, String> {
        let mut samples = Vec::new();
        for _ in 0..7 {
            stream.synchronize().map_err(|e| e.to_string())?;
            let t = Instant::now();
            for _ in 0..calls {
                f()?;
            }
            samples.push(t.elapsed().as_secs_f64() * 1e6 / f64::from(calls));
        }
        Ok(median(&mut samples))
    };
    let host_backend = per_call(&mut || exec())?;
    let host_plugin = per_call(&mut || plugin_exec())?;
    let host_cudnn = per_call(&mut || cudnn_only().map_err(|e| e.message))?;
    stream.synchronize().map_err(|e| e.to_string())?;
    let stages = direct.stage_count();

    let mut check = String::from("not run");
    if o.check {
        let mut expected = host.clone();
        hipdnn_reference::executor::execute_graph(&model, &mut expected)?;
        let mut worst = Vec::new();
        let mut outputs = Vec::new();
        for node in &model.nodes {
            let mut ins = Vec::new();
            node.attributes.tensor_uids(&mut ins, &mut outputs);
        }
        for t in model
            .tensors
            .iter()
            .filter(|t| !t.is_virtual && outputs.contains(&t.uid))
        {
            let mut got = vec![0u8; host[&t.uid].len()];
            device[&t.uid]
                .copy_to_host(&mut got)
                .map_err(|e| e.to_string())?;
            let dims: Vec<usize> = t.dims.iter().map(|&d| d as usize).collect();
            let strides: Vec<usize> = t.strides.iter().map(|&d| d as usize).collect();
            let a = decode(t.data_type, &got, &dims, &strides).map_err(|e| e.to_string())?;
            let e = decode(t.data_type, &expected[&t.uid], &dims, &strides)
                .map_err(|e| e.to_string())?;
            // TF32 rounds inputs to 10 mantissa bits (HALF's precision, FLOAT's range).
            let tolerance_type = if o.dtype == "tf32" {
                DataType::Half
            } else {
                t.data_type
            };
            let c = compare(
                &a.data,
                &e.data,
                tolerance(OpFamily::ConvFprop, tolerance_type),
            );
            worst.push(format!("{}: {c}", t.name));
            if !c.passed {
                check = format!("FAILED {}", worst.join("; "));
            }
        }
        if check == "not run" {
            check = format!("passed {}", worst.join("; "));
        }
    }
    println!(
        "{{\"graph\":\"{}\",\"dtype\":\"{}\",\"batch\":{},\"layout\":\"{}\",\"stages\":{stages},\"build_ms\":{:.1},\"device_us\":{:.2},\"pipelined_us\":{:.2},\"host_us_per_call\":{:.3},\"host_us_plugin\":{:.3},\"host_us_cudnn\":{:.3},\"workspace\":{},\"check\":\"{}\"}}",
        o.graph,
        o.dtype,
        o.batch,
        o.layout,
        build_ms,
        median(&mut device_us),
        median(&mut pipelined_us),
        host_backend,
        host_plugin,
        host_cudnn,
        plan.workspace_size(),
        check.replace('"', "'")
    );
    if check.starts_with("FAILED") {
        return Err("check failed".into());
    }
    Ok(())
}
