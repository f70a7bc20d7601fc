//! Compile small models and run them (JIT and native shared object) against references
//! computed here; check the plugin bitcode override.

use std::path::Path;

use hip_ep_compiler::driver::{CompileOptions, compile};
use hip_ep_compiler::pipeline::PipelineChoice;

/// Deterministic test data.
fn data(n: usize, seed: u32) -> Vec<f32> {
    let mut state = seed.wrapping_mul(2_654_435_761).wrapping_add(1);
    (0..n)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            (state % 2001) as f32 / 1000.0 - 1.0
        })
        .collect()
}

fn matmul(a: &[f32], b: &[f32], m: usize, k: usize, n: usize) -> Vec<f32> {
    let mut out = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            out[i * n + j] = (0..k).map(|p| a[i * k + p] * b[p * n + j]).sum();
        }
    }
    out
}

fn assert_close(got: &[f32], want: &[f32]) {
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= 1e-5 * (1.0 + w.abs()),
            "element {i}: got {g}, want {w}"
        );
    }
}

/// MatMul + bias Add (broadcast: in-tree) + Relu + same-shape Add (the vendor plugin makes it
/// `vendor.add`) + Sub + Mul.
const MODEL: &str = r#"
func.func @main_graph(%x: tensor<4x8xf32>, %w: tensor<8x6xf32>, %b: tensor<6xf32>, %s: tensor<4x6xf32>) -> (tensor<4x6xf32>, tensor<4x6xf32>) {
  %0 = "onnx.MatMul"(%x, %w) : (tensor<4x8xf32>, tensor<8x6xf32>) -> tensor<4x6xf32>
  %1 = "onnx.Add"(%0, %b) : (tensor<4x6xf32>, tensor<6xf32>) -> tensor<4x6xf32>
  %2 = "onnx.Relu"(%1) : (tensor<4x6xf32>) -> tensor<4x6xf32>
  %3 = "onnx.Add"(%2, %s) : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  %4 = "onnx.Sub"(%3, %b) : (tensor<4x6xf32>, tensor<6xf32>) -> tensor<4x6xf32>
  %5 = "onnx.Mul"(%4, %s) : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  return %5, %2 : tensor<4x6xf32>, tensor<4x6xf32>
}"#;

struct Reference {
    inputs: Vec<Vec<f32>>,
    outputs: Vec<Vec<f32>>,
}

fn reference() -> Reference {
    let (x, w, b, s) = (data(32, 1), data(48, 2), data(6, 3), data(24, 4));
    let mm = matmul(&x, &w, 4, 8, 6);
    let relu: Vec<f32> = mm
        .iter()
        .enumerate()
        .map(|(i, v)| (v + b[i % 6]).max(0.0))
        .collect();
    let out: Vec<f32> = relu
        .iter()
        .enumerate()
        .map(|(i, r)| ((r + s[i]) - b[i % 6]) * s[i])
        .collect();
    Reference {
        inputs: vec![x, w, b, s],
        outputs: vec![out, relu],
    }
}

fn override_calls() -> i64 {
    // The override plugin's library is loaded into this process by the JIT (or by the
    // shared object); the counter lives there.
    let store = hip_ep_compiler::dispatch_plugin_registrations_once();
    let dir = store
        .plugin_library_paths()
        .iter()
        .find(|c| c.plugin == "vendor_override")
        .map(|c| Path::new(&c.value).join("libvendor_override_kernels.so"))
        .expect("these tests need HIPDNN_EP_COMPILER_PLUGIN_PATHS=$PWD/compiler/tests/plugins and HIPDNN_EP_COMPILER_PLUGINS=vendor;vendor_override (scripts/test.sh sets them)");
    // SAFETY: a test library with a plain C counter function.
    unsafe {
        let lib = libloading::Library::new(&dir).unwrap();
        let f: libloading::Symbol<'_, unsafe extern "C" fn() -> i64> =
            lib.get(b"vendor_override_calls").unwrap();
        f()
    }
}

#[test]
fn model_with_vendor_add_runs_in_the_jit_and_the_override_wins() {
    let r = reference();
    let compiled = compile(MODEL, &CompileOptions::default()).unwrap();
    let ir = compiled.llvm().to_ir_text();
    assert!(
        ir.contains("vendor_override_kernel_add"),
        "the override's wrapper is linked"
    );
    assert!(
        !ir.contains("call void @vendor_kernel_add("),
        "the first plugin's wrapper was replaced:\n{ir}"
    );
    let jit = compiled.jit().unwrap();
    let before = override_calls();
    let mut out0 = vec![0.0f32; 24];
    let mut out1 = vec![0.0f32; 24];
    let inputs: Vec<&[f32]> = r.inputs.iter().map(Vec::as_slice).collect();
    jit.run(&inputs, &mut [&mut out0, &mut out1]).unwrap();
    assert_close(&out0, &r.outputs[0]);
    assert_close(&out1, &r.outputs[1]);
    assert_eq!(
        override_calls(),
        before + 1,
        "vendor.add ran through the overriding wrapper"
    );
}

#[test]
fn jit_refuses_wrong_buffers_before_running() {
    let jit = compile(MODEL, &CompileOptions::default())
        .unwrap()
        .jit()
        .unwrap();
    let x = vec![0.0f32; 32];
    let mut out = vec![0.0f32; 24];
    let e = jit.run(&[&x], &mut [&mut out]).unwrap_err().to_string();
    assert!(e.contains("the model takes 4 inputs, got 1"), "{e}");
    let r = reference();
    let inputs: Vec<&[f32]> = r.inputs.iter().map(Vec::as_slice).collect();
    let mut short = vec![0.0f32; 23];
    let e = jit
        .run(&inputs, &mut [&mut out, &mut short])
        .unwrap_err()
        .to_string();
    assert!(e.contains("outputs #1 needs 24 f32 values"), "{e}");
    // The raw entry point refuses null arrays and pointers.
    let entry = jit.entry();
    // SAFETY: null arrays are checked by the generated code before any access.
    assert_eq!(unsafe { entry(std::ptr::null(), std::ptr::null()) }, 1);
    let nulls = [std::ptr::null_mut::<std::ffi::c_void>(); 4];
    // SAFETY: as above, each pointer is checked before use.
    assert_eq!(unsafe { entry(nulls.as_ptr(), nulls.as_ptr()) }, 1);
}

#[test]
fn gemm_with_transposes_and_bias_broadcasts() {
    let model = r#"
func.func @main_graph(%a: tensor<5x3xf32>, %b: tensor<4x5xf32>, %c: tensor<4xf32>) -> tensor<3x4xf32> {
  %0 = "onnx.Gemm"(%a, %b, %c) {alpha = 0.5 : f32, beta = 2.0 : f32, transA = 1 : si64, transB = 1 : si64} : (tensor<5x3xf32>, tensor<4x5xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}"#;
    let (a, b, c) = (data(15, 7), data(20, 8), data(4, 9));
    let mut want = vec![0.0f32; 12];
    for i in 0..3 {
        for j in 0..4 {
            let acc: f32 = (0..5).map(|p| a[p * 3 + i] * b[j * 5 + p]).sum();
            want[i * 4 + j] = 0.5 * acc + 2.0 * c[j];
        }
    }
    let jit = compile(model, &CompileOptions::default())
        .unwrap()
        .jit()
        .unwrap();
    let mut out = vec![0.0f32; 12];
    jit.run(&[&a, &b, &c], &mut [&mut out]).unwrap();
    assert_close(&out, &want);
}

#[test]
fn gemm_without_c_and_identity_is_removed() {
    let model = r#"
func.func @main_graph(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) -> tensor<2x2xf32> {
  %none = "onnx.NoValue"() {value} : () -> none
  %i = "onnx.Identity"(%a) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %0 = "onnx.Gemm"(%i, %b, %none) : (tensor<2x3xf32>, tensor<3x2xf32>, none) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}"#;
    let (a, b) = (data(6, 11), data(6, 12));
    let jit = compile(model, &CompileOptions::default())
        .unwrap()
        .jit()
        .unwrap();
    let mut out = vec![0.0f32; 4];
    jit.run(&[&a, &b], &mut [&mut out]).unwrap();
    assert_close(&out, &matmul(&a, &b, 2, 3, 2));
}

#[test]
fn constants_become_globals_and_inputs_can_be_returned() {
    let model = r#"
func.func @main_graph(%x: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
  %w = arith.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %0 = "onnx.MatMul"(%x, %w) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %0, %x : tensor<2x2xf32>, tensor<2x2xf32>
}"#;
    let x = [1.0f32, 0.0, 0.0, 2.0];
    let jit = compile(model, &CompileOptions::default())
        .unwrap()
        .jit()
        .unwrap();
    let (mut out0, mut out1) = ([0.0f32; 4], [0.0f32; 4]);
    jit.run(&[&x], &mut [&mut out0, &mut out1]).unwrap();
    assert_eq!(out0, [1.0, 2.0, 6.0, 8.0]);
    assert_eq!(out1, x);
}

#[test]
fn native_shared_object_exports_inference_compute() {
    let r = reference();
    let compiled = compile(MODEL, &CompileOptions::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let so = dir.path().join("model.so");
    compiled.write_shared_object(&so).unwrap();
    let bc = dir.path().join("model.bc");
    compiled.write_bitcode(&bc).unwrap();
    assert_eq!(&std::fs::read(&bc).unwrap()[..4], b"BC\xc0\xde");
    // SAFETY: the shared object exports `int32_t inference_compute(void *const *, void *const *)`.
    unsafe {
        let lib = libloading::Library::new(&so).unwrap();
        let entry: libloading::Symbol<'_, hip_ep_compiler::driver::InferenceCompute> =
            lib.get(b"inference_compute").unwrap();
        let mut out0 = vec![0.0f32; 24];
        let mut out1 = vec![0.0f32; 24];
        let ins: Vec<*mut std::ffi::c_void> = r
            .inputs
            .iter()
            .map(|v| v.as_ptr().cast_mut().cast())
            .collect();
        let outs = [out0.as_mut_ptr().cast(), out1.as_mut_ptr().cast()];
        assert_eq!(entry(ins.as_ptr(), outs.as_ptr()), 0);
        assert_close(&out0, &r.outputs[0]);
        assert_close(&out1, &r.outputs[1]);
    }
}

#[test]
fn errors_name_the_op_and_nothing_is_produced() {
    let cases = [
        (
            r#"func.func @main_graph(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "onnx.Softmax"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}"#,
            "convert-onnx-to-hip: no lowering for 'onnx.Softmax'",
        ),
        (
            r#"func.func @main_graph(%x: tensor<2x3xf32>, %y: tensor<2x1xf32>) -> tensor<2x3xf32> {
  %0 = "onnx.Add"(%x, %y) : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}"#,
            "operand #1 of shape [2x1] does not broadcast to the result [2x3]",
        ),
        (
            r#"func.func @main_graph(%x: tensor<2x3xf16>) -> tensor<2x3xf16> {
  %0 = "onnx.Relu"(%x) : (tensor<2x3xf16>) -> tensor<2x3xf16>
  return %0 : tensor<2x3xf16>
}"#,
            "onnx.Relu: the input has type tensor<2x3xf16>; only statically shaped f32 tensors are supported",
        ),
        (
            r#"func.func @main_graph(%x: tensor<2x3xf32>, %y: tensor<4x5xf32>) -> tensor<2x5xf32> {
  %0 = "onnx.MatMul"(%x, %y) : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}"#,
            "onnx.MatMul: only 2-D [M,K]x[K,N]->[M,N] is supported, got [2x3]x[4x5]->[2x5]",
        ),
        ("func.func @main_graph(", "cannot parse the input module"),
    ];
    for (model, expected) in cases {
        let e = compile(model, &CompileOptions::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains(expected), "expected '{expected}' in: {e}");
    }
}

#[test]
fn an_override_that_composes_the_registered_pipelines_still_runs() {
    let r = reference();
    let options = CompileOptions {
        pipeline: PipelineChoice::Override(
            "builtin.module(onnx-to-hip-pipeline, hip-to-llvm-pipeline{pool-alignment=128})".into(),
        ),
        // The non-default paths: LLVM O2 on the linked module, optimized JIT codegen.
        optimize: true,
        jit_codegen: hip_ep_compiler::llvm::Codegen::Optimized,
    };
    let jit = compile(MODEL, &options).unwrap().jit().unwrap();
    let mut out0 = vec![0.0f32; 24];
    let mut out1 = vec![0.0f32; 24];
    let inputs: Vec<&[f32]> = r.inputs.iter().map(Vec::as_slice).collect();
    jit.run(&inputs, &mut [&mut out0, &mut out1]).unwrap();
    assert_close(&out0, &r.outputs[0]);
    assert_close(&out1, &r.outputs[1]);
}

#[test]
fn model_bc_from_hip_compiler_runs_in_the_jit() {
    let r = reference();
    let dir = tempfile::tempdir().unwrap();
    let (model, bc) = (dir.path().join("model.mlir"), dir.path().join("model.bc"));
    std::fs::write(&model, MODEL).unwrap();
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_hip-compiler"))
        .arg(&model)
        .arg("-o")
        .arg(&bc)
        .status()
        .unwrap();
    assert!(status.success());
    let jit = hip_ep_compiler::driver::JitModel::load_bitcode(
        &std::fs::read(&bc).unwrap(),
        hip_ep_compiler::llvm::Codegen::Fast,
    )
    .unwrap();
    assert_eq!(
        jit.interface().inputs,
        [vec![4, 8], vec![8, 6], vec![6], vec![4, 6]]
    );
    assert_eq!(jit.interface().outputs, [vec![4, 6], vec![4, 6]]);
    let before = override_calls();
    let mut out0 = vec![0.0f32; 24];
    let mut out1 = vec![0.0f32; 24];
    let inputs: Vec<&[f32]> = r.inputs.iter().map(Vec::as_slice).collect();
    jit.run(&inputs, &mut [&mut out0, &mut out1]).unwrap();
    assert_close(&out0, &r.outputs[0]);
    assert_close(&out1, &r.outputs[1]);
    assert_eq!(override_calls(), before + 1);
    let e = hip_ep_compiler::driver::JitModel::load_bitcode(b"not bitcode", Default::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("not valid LLVM bitcode"), "{e}");
}
