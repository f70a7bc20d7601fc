// HIPDNN_EP_PIPELINE replaces the built-in pipeline wholesale: plugin slot requests do not
// run (one warning), options of the registered pipeline builders apply, a plugin pass runs
// only when named, a parse error is reported up front, and a result without
// inference_compute fails.
// RUN: env HIPDNN_EP_PIPELINE='builtin.module(onnx-to-hip-pipeline,hip-to-llvm-pipeline{pool=false})' \
// RUN:   hip-mlir-opt %s --compiler-pipeline 2>&1 | FileCheck %s --check-prefix=REPLACE
// REPLACE: WARN HIPDNN_EP_PIPELINE replaces the built-in pipeline: 10 plugin slot request(s) will not run (vendor-introduce-add@AfterSimplifyOnnx
// REPLACE-NOT: vendor.trace
// REPLACE-NOT: hip.pool_bytes
// REPLACE: llvm.call @wrap_add
// REPLACE-NOT: hip_ep_vendor_add
// REPLACE: llvm.func @inference_compute

// RUN: env HIPDNN_EP_PIPELINE='func.func(vendor-introduce-add),onnx-to-hip-pipeline,hip-to-llvm-pipeline' \
// RUN:   hip-mlir-opt %s --compiler-pipeline 2>/dev/null | FileCheck %s --check-prefix=NAMED
// NAMED: llvm.call @hip_ep_vendor_add
// NAMED: llvm.func @inference_compute

// RUN: env HIPDNN_EP_PIPELINE='onnx-to-hip-pipeline' not hip-compiler %s -o %t.bc 2>&1 | FileCheck %s --check-prefix=NOENTRY
// NOENTRY: hip-compiler: HIPDNN_EP_PIPELINE override: the pipeline 'onnx-to-hip-pipeline' produced no inference_compute entry point; end it with hip-to-llvm-pipeline

// RUN: env HIPDNN_EP_PIPELINE='onnx-to-hip-pipeline,no-such-pass' not hip-compiler %s -o %t.bc 2>&1 | FileCheck %s --check-prefix=PARSE
// PARSE: hip-compiler: HIPDNN_EP_PIPELINE override: cannot parse 'onnx-to-hip-pipeline,no-such-pass'
// PARSE: 'no-such-pass' does not refer to a registered pass or pass pipeline

// RUN: env HIPDNN_EP_PIPELINE='onnx-to-hip-pipeline,hip-to-llvm-pipeline{pool-alignment=x}' not hip-compiler %s -o %t.bc 2>&1 | FileCheck %s --check-prefix=OPTION
// OPTION: option 'pool-alignment=x' is not an unsigned integer
func.func @main_graph(%x: tensor<2x4xf32>, %y: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %0 = "onnx.Add"(%x, %y) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %1 = "onnx.Relu"(%0) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %2 = "onnx.Mul"(%1, %y) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  return %2 : tensor<2x4xf32>
}
