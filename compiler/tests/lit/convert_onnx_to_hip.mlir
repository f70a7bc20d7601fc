// convert-onnx-to-hip on its own (no plugin slots: pipelines written by hand run only what
// they name).
// RUN: hip-mlir-opt %s --pass-pipeline='builtin.module(func.func(simplify-onnx,convert-onnx-to-hip))' | FileCheck %s
// CHECK-LABEL: func.func @main_graph
// CHECK-NOT: onnx.Identity
// CHECK: %[[MM:.*]] = "hip.matmul"(%arg0, %arg1)
// CHECK: %[[ADD:.*]] = "hip.add"(%[[MM]], %arg2)
// CHECK: %[[R:.*]] = "hip.relu"(%[[ADD]])
// CHECK-NOT: hip.relu
// CHECK: "hip.gemm"(%[[R]], %arg3, %arg2) {alpha = 5.000000e-01 : f32, beta = 1.000000e+00 : f32, operandSegmentSizes = array<i32: 1, 1, 1, 0>, transA = 0 : i64, transB = 1 : i64}
// CHECK-NOT: onnx.
func.func @main_graph(%x: tensor<4x8xf32>, %w: tensor<8x6xf32>, %b: tensor<6xf32>, %w2: tensor<6x6xf32>) -> tensor<4x6xf32> {
  %i = "onnx.Identity"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %0 = "onnx.MatMul"(%i, %w) : (tensor<4x8xf32>, tensor<8x6xf32>) -> tensor<4x6xf32>
  %1 = "onnx.Add"(%0, %b) : (tensor<4x6xf32>, tensor<6xf32>) -> tensor<4x6xf32>
  %2 = "onnx.Relu"(%1) : (tensor<4x6xf32>) -> tensor<4x6xf32>
  %3 = "onnx.Relu"(%2) : (tensor<4x6xf32>) -> tensor<4x6xf32>
  %dead = "onnx.Mul"(%3, %3) : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  %4 = "onnx.Gemm"(%3, %w2, %b) {alpha = 0.5 : f32, transB = 1 : si64} : (tensor<4x6xf32>, tensor<6x6xf32>, tensor<6xf32>) -> tensor<4x6xf32>
  return %4 : tensor<4x6xf32>
}

