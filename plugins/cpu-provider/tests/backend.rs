//! The CPU engine as applications reach it: its cdylib loaded by the backend, graphs
//! built with the backend's graph builder, plans built with knobs, executed through a
//! variant pack, and checked against the test SDK's reference. Bad input is refused with
//! the node, knob or uid named, and nothing runs.
//!
//! `cargo test` links the package into tests as an rlib only, so the test builds the
//! cdylib itself with a nested cargo (`hipdnn_conformance::cdylib`), in a target
//! directory of its own (`target/cpu-plugin-test`, shared with the conformance test),
//! once per run, together with the backend's cdylib for the C examples.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Mutex, MutexGuard, OnceLock};

use hipdnn_backend::frontend::{
    ConvAttrs, GraphBuilder, PointwiseAttrs, PointwiseMode, TensorDescriptor, TensorLayout,
};
use hipdnn_backend::status::*;
use hipdnn_backend::{
    Handle, LoadingMode, OperationGraph, Plan, VariantPack, set_engine_plugin_paths,
};
use hipdnn_conformance::cdylib::build_cdylibs;
use hipdnn_data_sdk::DataType;
use hipdnn_flatbuffers_sdk::model::{Graph, KnobSetting, KnobValue, NodeAttributes};
use hipdnn_test_sdk::data::{DataGen, decode, encode};
use hipdnn_test_sdk::executor::execute_graph;
use hipdnn_test_sdk::tensor::{HostTensor, dims_usize};
use hipdnn_test_sdk::tolerance::{OpFamily, compare, tolerance};

fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// Builds the cdylibs of the CPU plugin and of the backend from this checkout (once per
/// test process); returns their directory.
fn built_libraries() -> &'static PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let libraries = build_cdylibs(
            env!("CARGO_MANIFEST_DIR"),
            &["hipdnn-cpu-provider", "hipdnn-backend"],
            "cpu-plugin-test",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        libraries[0]
            .parent()
            .expect("a library's directory")
            .to_path_buf()
    })
}

fn built_plugin() -> PathBuf {
    built_libraries().join("libhipdnn_cpu_provider.so")
}

/// A handle serving only the CPU plugin built from this checkout.
fn cpu_handle(dir: &tempfile::TempDir) -> Handle {
    std::fs::copy(built_plugin(), dir.path().join("libhipdnn_cpu_provider.so")).unwrap();
    set_engine_plugin_paths([dir.path()], LoadingMode::Absolute).expect("no handle is alive");
    Handle::new()
}

/// x (NHWC 2×8×9×9) ⊛ w (16×8×3×3, stride 2, padding 1) + bias → ReLU; uids 1..=4.
fn conv_bias_relu() -> Graph {
    let mut g = GraphBuilder::new("conv_bias_relu_nhwc")
        .io_data_type(DataType::Float)
        .intermediate_data_type(DataType::Float)
        .compute_data_type(DataType::Float);
    let nhwc = TensorLayout::ChannelsLast;
    let x = g
        .tensor(TensorDescriptor::new("x", [2, 8, 9, 9]).layout(nhwc).uid(1))
        .unwrap();
    let w = g
        .tensor(
            TensorDescriptor::new("w", [16, 8, 3, 3])
                .layout(nhwc)
                .uid(2),
        )
        .unwrap();
    let b = g
        .tensor(TensorDescriptor::new("bias", [1, 16, 1, 1]).uid(3))
        .unwrap();
    let conv = g
        .conv_fprop(
            x,
            w,
            ConvAttrs::new().name("conv").padding([1, 1]).stride([2, 2]),
        )
        .unwrap();
    let sum = g
        .pointwise(
            &[conv, b],
            PointwiseAttrs::new(PointwiseMode::ADD).name("bias"),
        )
        .unwrap();
    let y = g
        .pointwise(
            &[sum],
            PointwiseAttrs::new(PointwiseMode::RELU_FWD).name("relu"),
        )
        .unwrap();
    g.set_output(y, true).unwrap().set_uid(y, 4).unwrap();
    g.build().unwrap().into_graph()
}

/// 64-byte aligned storage for one tensor.
struct Buffer(Vec<[u64; 8]>);

impl Buffer {
    fn from_bytes(bytes: &[u8]) -> Self {
        let mut blocks = vec![[0u64; 8]; bytes.len().div_ceil(64)];
        // SAFETY: `blocks` holds at least `bytes.len()` bytes; plain data.
        unsafe {
            std::ptr::copy_nonoverlapping(
                bytes.as_ptr(),
                blocks.as_mut_ptr().cast::<u8>(),
                bytes.len(),
            )
        };
        Self(blocks)
    }

    fn bytes(&self, len: usize) -> Vec<u8> {
        // SAFETY: the storage holds at least `len` bytes.
        unsafe { std::slice::from_raw_parts(self.0.as_ptr().cast::<u8>(), len) }.to_vec()
    }
}

/// Seeded inputs, zeroed outputs, in each tensor's dtype and strides.
fn tensors(graph: &Graph) -> BTreeMap<i64, Vec<u8>> {
    let mut data = DataGen::new(7);
    graph
        .tensors
        .iter()
        .filter(|t| !t.is_virtual)
        .map(|t| {
            let mut host = HostTensor::for_tensor(t);
            data.fill_as(&mut host, -1.0, 1.0, t.data_type);
            (t.uid, encode(t.data_type, &host).unwrap())
        })
        .collect()
}

/// Runs `plan` on copies of `inputs` in aligned buffers; returns every tensor's bytes.
fn run(plan: &Plan<'_>, inputs: &BTreeMap<i64, Vec<u8>>) -> BackendResult<BTreeMap<i64, Vec<u8>>> {
    let mut buffers: BTreeMap<i64, Buffer> = inputs
        .iter()
        .map(|(&uid, bytes)| (uid, Buffer::from_bytes(bytes)))
        .collect();
    let mut pack = VariantPack::new();
    for (&uid, buffer) in &mut buffers {
        pack.set(uid, buffer.0.as_mut_ptr().cast());
    }
    let mut workspace = vec![[0u64; 8]; plan.workspace_size().div_ceil(64)];
    // SAFETY: each buffer holds its tensor (sized by the graph's strides); the workspace
    // has the plan's size.
    unsafe { plan.execute(&pack, workspace.as_mut_ptr().cast()) }?;
    Ok(inputs
        .iter()
        .map(|(&uid, bytes)| (uid, buffers[&uid].bytes(bytes.len())))
        .collect())
}

fn assert_matches_reference(
    graph: &Graph,
    inputs: &BTreeMap<i64, Vec<u8>>,
    got: &BTreeMap<i64, Vec<u8>>,
) {
    let mut expected = inputs.clone();
    execute_graph(graph, &mut expected).unwrap();
    let y = graph.tensors.iter().find(|t| t.uid == 4).unwrap();
    let (dims, strides) = (dims_usize(&y.dims), dims_usize(&y.strides));
    let logical = |bytes: &[u8]| {
        decode(y.data_type, bytes, &dims, &strides)
            .unwrap()
            .logical()
    };
    let cmp = compare(
        &logical(&got[&4]),
        &logical(&expected[&4]),
        tolerance(OpFamily::ConvFprop, DataType::Float),
    );
    assert!(cmp.passed, "{cmp}");
}

#[test]
fn a_fused_conv_runs_through_the_backend_with_knobs() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let handle = cpu_handle(&dir);
    let graph = conv_bias_relu();
    let op = OperationGraph::new(graph.clone()).unwrap();
    let ranked = handle.ranked_engines(&op).unwrap();
    assert_eq!(ranked[0].name, "CPU_ENGINE");
    let details = handle.engine_details(ranked[0].id, &op).unwrap();
    assert!(details.knobs.iter().any(|k| k.knob_id == "cpu.conv_algo"));

    let inputs = tensors(&graph);
    let plan = handle.build_plan(&op, &[]).unwrap();
    let got = run(&plan, &inputs).unwrap();
    assert_matches_reference(&graph, &inputs, &got);

    // Each algorithm, and one thread, give the reference's results too.
    for (knob, value) in [
        ("cpu.conv_algo", KnobValue::String("direct".to_owned())),
        ("cpu.conv_algo", KnobValue::String("gemm".to_owned())),
        ("cpu.threads", KnobValue::Int(1)),
        ("global.deterministic", KnobValue::Int(1)),
    ] {
        let setting = KnobSetting {
            knob_id: knob.to_owned(),
            value,
        };
        let plan = handle.create_plan(&op, ranked[0].id, &[setting]).unwrap();
        assert_matches_reference(&graph, &inputs, &run(&plan, &inputs).unwrap());
    }
}

#[test]
fn bad_input_is_refused_with_its_name_and_nothing_runs() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let handle = cpu_handle(&dir);
    let graph = conv_bias_relu();
    let op = OperationGraph::new(graph.clone()).unwrap();
    let id = handle.ranked_engines(&op).unwrap()[0].id;

    // Knobs: out of the valid values, of the wrong type.
    for (knob, value, needle) in [
        (
            "cpu.conv_algo",
            KnobValue::String("fast".to_owned()),
            "\"fast\"",
        ),
        ("cpu.threads", KnobValue::String("two".to_owned()), "string"),
        ("cpu.threads", KnobValue::Int(5000), "5000"),
    ] {
        let setting = KnobSetting {
            knob_id: knob.to_owned(),
            value,
        };
        let error = handle.create_plan(&op, id, &[setting]).unwrap_err();
        assert_eq!(error.status, HIPDNN_STATUS_BAD_PARAM, "{error:?}");
        assert!(
            error.message.contains(knob) && error.message.contains(needle),
            "{error:?}"
        );
    }

    // Mismatched shapes: the conv's output declared 4×4 where the geometry gives 5×5 (a
    // graph from bytes, which no builder checked): no engine claims the conv (nor the
    // bias add, whose inputs no longer broadcast to its output).
    let mut wrong = graph.clone();
    let conv_out = match &wrong
        .nodes
        .iter()
        .find(|n| n.name == "conv")
        .unwrap()
        .attributes
    {
        NodeAttributes::ConvolutionFwdAttributes(a) => a.y_tensor_uid,
        other => panic!("{other:?}"),
    };
    let conv_tensor = wrong
        .tensors
        .iter_mut()
        .find(|t| t.uid == conv_out)
        .unwrap();
    conv_tensor.dims = vec![2, 16, 4, 4];
    conv_tensor.strides = vec![256, 1, 64, 16];
    let error = match OperationGraph::new(wrong) {
        Ok(op) => handle.ranked_engines(&op).unwrap_err(),
        Err(error) => error,
    };
    assert_eq!(error.status, HIPDNN_STATUS_NOT_SUPPORTED, "{error:?}");
    assert!(error.message.contains("node 'conv'"), "{error:?}");

    // An op the engine does not run (fp8 tensors): refused naming the node.
    let mut fp8 = graph.clone();
    for t in &mut fp8.tensors {
        t.data_type = DataType::Fp8E4m3;
    }
    let error = handle
        .ranked_engines(&OperationGraph::new(fp8).unwrap())
        .unwrap_err();
    assert_eq!(error.status, HIPDNN_STATUS_NOT_SUPPORTED);
    assert!(error.message.contains("'conv'"), "{error:?}");

    // A pack without the bias: refused before the kernel runs, output untouched.
    let plan = handle.build_plan(&op, &[]).unwrap();
    let mut inputs = tensors(&graph);
    inputs.get_mut(&4).unwrap().fill(0xAB);
    let mut buffers: BTreeMap<i64, Buffer> = inputs
        .iter()
        .map(|(&uid, bytes)| (uid, Buffer::from_bytes(bytes)))
        .collect();
    let mut pack = VariantPack::new();
    for (&uid, buffer) in buffers.iter_mut().filter(|(uid, _)| **uid != 3) {
        pack.set(uid, buffer.0.as_mut_ptr().cast());
    }
    let mut workspace = vec![[0u64; 8]; plan.workspace_size().div_ceil(64)];
    // SAFETY: valid buffers; the missing one is refused before use.
    let error = unsafe { plan.execute(&pack, workspace.as_mut_ptr().cast()) }.unwrap_err();
    assert!(
        error
            .message
            .contains("no pointer for tensor uid 3 ('bias')"),
        "{error:?}"
    );
    assert!(
        buffers[&4]
            .bytes(inputs[&4].len())
            .iter()
            .all(|&b| b == 0xAB),
        "nothing ran"
    );
}

/// The C examples (`examples/c/`), compiled against the backend's header and library and
/// run with the CPU plugin as the only plugin: the engine list, a convolution from a JSON
/// graph, and graphs built through the descriptor API (convolution + bias + ReLU,
/// batch-norm inference, matmul), each compared with a direct computation in C.
#[test]
fn the_c_examples_run_on_the_cpu_engine() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let libraries = built_libraries();
    let dir = tempfile::tempdir().unwrap();
    let plugins = dir.path().join("engines");
    std::fs::create_dir_all(&plugins).unwrap();
    std::fs::copy(built_plugin(), plugins.join("libhipdnn_cpu_provider.so")).unwrap();
    let compiler = std::env::var("CC").unwrap_or_else(|_| "cc".to_owned());
    for example in [
        "list_engines",
        "conv_fprop",
        "conv_bias_relu",
        "batchnorm_inference",
        "matmul",
    ] {
        let program = dir.path().join(example);
        let compiled = Command::new(&compiler)
            .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic"])
            .arg(root.join(format!("examples/c/{example}.c")))
            .arg("-I")
            .arg(root.join("backend/include"))
            .arg("-I")
            .arg(root.join("plugin-sdk/include"))
            .arg("-L")
            .arg(libraries)
            .arg(format!("-Wl,-rpath,{}", libraries.display()))
            .args(["-lhipdnn_backend", "-lm", "-o"])
            .arg(&program)
            .output()
            .unwrap_or_else(|e| {
                panic!("cannot run {compiler}: {e} (scripts/setup-debian.sh installs it)")
            });
        assert!(
            compiled.status.success(),
            "{}",
            String::from_utf8_lossy(&compiled.stderr)
        );
        let ran = Command::new(&program)
            .env("HIPDNN_PLUGIN_DIR", &plugins)
            .env_remove("HIPDNN_LOG_LEVEL")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&ran.stdout);
        assert!(
            ran.status.success(),
            "{example}: {stdout}{}",
            String::from_utf8_lossy(&ran.stderr)
        );
        let expected = if example == "list_engines" {
            "CPU_ENGINE"
        } else {
            "max abs error"
        };
        assert!(stdout.contains(expected), "{example}: {stdout}");
    }
}

/// The same buffer for a node's input and output (in-place execution, which the engine
/// does not do) is refused with a message saying so, naming both tensors.
#[test]
fn in_place_execution_is_refused_with_the_reason() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let handle = cpu_handle(&dir);
    let mut g = GraphBuilder::new("relu_in_place")
        .io_data_type(DataType::Float)
        .intermediate_data_type(DataType::Float)
        .compute_data_type(DataType::Float);
    let x = g.tensor(TensorDescriptor::new("x", [2, 8]).uid(1)).unwrap();
    let y = g
        .pointwise(
            &[x],
            PointwiseAttrs::new(PointwiseMode::RELU_FWD).name("relu"),
        )
        .unwrap();
    g.set_output(y, true).unwrap().set_uid(y, 2).unwrap();
    let op = OperationGraph::new(g.build().unwrap().into_graph()).unwrap();
    let plan = handle.build_plan(&op, &[]).unwrap();
    let mut buffer = Buffer::from_bytes(&[0; 64]);
    let pointer = buffer.0.as_mut_ptr().cast();
    let pack = VariantPack::new().with(1, pointer).with(2, pointer);
    // SAFETY: one 64-byte buffer holds either tensor; the plan refuses the overlap.
    let error = unsafe { plan.execute(&pack, std::ptr::null_mut()) }.unwrap_err();
    assert_eq!(error.status, HIPDNN_STATUS_EXECUTION_FAILED, "{error:?}");
    assert!(
        error.message.contains("overlaps") && error.message.contains("in-place"),
        "{error:?}"
    );
}
