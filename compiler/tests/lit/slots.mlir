// The sample plugins' trace passes record the dialects present at each slot: every slot runs
// where it says, and at AfterSimplifyOnnx the vendor plugin's passes run before
// vendor_override's (list order).
// RUN: hip-mlir-opt %s --compiler-pipeline | FileCheck %s

// CHECK: vendor.trace = [
// CHECK-SAME: "#1 ops=func+onnx+vendor interface=false"
// CHECK-SAME: "#2 vendor_override"
// CHECK-SAME: "#3 ops=func+onnx+vendor interface=false"
// CHECK-SAME: "#4 ops=func+hip+vendor interface=false"
// CHECK-SAME: "#5 ops=func+hip+vendor interface=false"
// CHECK-SAME: "#6 ops=arith+func+hip+memref+vendor interface=false"
// CHECK-SAME: "#7 ops=arith+func+hip+memref+vendor interface=false"
// CHECK-SAME: "#8 ops=llvm interface=true"]
// CHECK: llvm.call @hip_ep_vendor_add
// CHECK: llvm.func @inference_compute(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr) -> i32
func.func @main_graph(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %b: tensor<8xf32>, %s: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "onnx.MatMul"(%x, %w) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %1 = "onnx.Add"(%0, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %2 = "onnx.Relu"(%1) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = "onnx.Add"(%2, %s) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %3 : tensor<4x8xf32>
}
