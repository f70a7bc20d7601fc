//! Compile-time cost of a small model: plugin registration (once per process, timed before
//! criterion starts), then per model: parse + pipeline + translate + link, and the same plus
//! ORC JIT + one run of `inference_compute` (default fast codegen; optimized codegen; LLVM O2
//! on the linked module plus optimized codegen). Goal: registration + everything < 50 ms.
//!
//! `HIPDNN_EP_COMPILER_PLUGIN_PATHS=$PWD/compiler/tests/plugins HIPDNN_EP_COMPILER_PLUGINS="vendor;vendor_override" cargo bench --manifest-path compiler/Cargo.toml --bench compile`

use std::time::Instant;

use criterion::{Criterion, criterion_group};
use hip_ep_compiler::driver::{CompileOptions, compile};
use hip_ep_compiler::llvm::Codegen;

const MODEL: &str = r#"
func.func @main_graph(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %b: tensor<8xf32>, %s: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "onnx.MatMul"(%x, %w) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %1 = "onnx.Add"(%0, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %2 = "onnx.Relu"(%1) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = "onnx.Add"(%2, %s) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %3 : tensor<4x8xf32>
}"#;

fn compile_and_run(optimize: bool, jit_codegen: Codegen) -> f32 {
    let options = CompileOptions {
        optimize,
        jit_codegen,
        ..CompileOptions::default()
    };
    let jit = compile(MODEL, &options).unwrap().jit().unwrap();
    let (x, w, b, s) = (
        vec![0.5f32; 32],
        vec![0.25f32; 64],
        vec![1.0f32; 8],
        vec![2.0f32; 32],
    );
    let mut out = vec![0.0f32; 32];
    jit.run(&[&x, &w, &b, &s], &mut [&mut out]).unwrap();
    out[0]
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("compile_small_model");
    group.sample_size(20);
    group.bench_function("parse_pipeline_link", |b| {
        b.iter(|| compile(MODEL, &CompileOptions::default()).unwrap())
    });
    group.bench_function("parse_pipeline_link_jit_run_default", |b| {
        b.iter(|| compile_and_run(false, Codegen::Fast))
    });
    group.bench_function("parse_pipeline_link_jit_run_optimized_codegen", |b| {
        b.iter(|| compile_and_run(false, Codegen::Optimized))
    });
    group.bench_function("parse_pipeline_link_O2_jit_run_optimized_codegen", |b| {
        b.iter(|| compile_and_run(true, Codegen::Optimized))
    });
    group.finish();
}

criterion_group!(benches, bench);

fn main() {
    let start = Instant::now();
    hip_ep_compiler::dispatch_plugin_registrations_once();
    let registration = start.elapsed();
    let start = Instant::now();
    let first = compile_and_run(false, Codegen::Fast);
    let first_model = start.elapsed();
    assert_eq!(first, 0.5 * 0.25 * 8.0 + 1.0 + 2.0);
    println!(
        "cold: registration {:.2} ms (plugins: {:?}), first model parse+pipeline+link+JIT+run {:.2} ms, total {:.2} ms",
        registration.as_secs_f64() * 1e3,
        hip_ep_compiler::selected_plugins(),
        first_model.as_secs_f64() * 1e3,
        (registration + first_model).as_secs_f64() * 1e3
    );
    benches();
    Criterion::default().configure_from_args().final_summary();
}
