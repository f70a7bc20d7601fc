// hip-bufferize: results become output buffers written in place, intermediates get fresh
// buffers freed before the return; hip-pool-allocs then places them in one pool, reusing
// the space of buffers no longer live.
// RUN: hip-mlir-opt %s --pass-pipeline='builtin.module(func.func(convert-onnx-to-hip),hip-bufferize)' | FileCheck %s --check-prefix=BUF
// BUF: module attributes {hip.interface = {entry = "main_graph", inputs = [array<i64: 16>, array<i64: 16>], outputs = [array<i64: 16>]}}
// BUF: func.func @main_graph(%[[X:.*]]: memref<16xf32>, %[[Y:.*]]: memref<16xf32>, %[[OUT:.*]]: memref<16xf32>)
// BUF: %[[A:.*]] = memref.alloc() : memref<16xf32>
// BUF: "hip.add"(%[[X]], %[[Y]], %[[A]])
// BUF: %[[B:.*]] = memref.alloc() : memref<16xf32>
// BUF: "hip.relu"(%[[A]], %[[B]])
// BUF: %[[C:.*]] = memref.alloc() : memref<16xf32>
// BUF: "hip.mul"(%[[B]], %[[Y]], %[[C]])
// BUF: "hip.sub"(%[[C]], %[[X]], %[[OUT]])
// BUF: memref.dealloc %[[A]]
// BUF: return
// BUF-NOT: tensor<

// RUN: hip-mlir-opt %s --pass-pipeline='builtin.module(func.func(convert-onnx-to-hip),hip-bufferize,func.func(hip-pool-allocs))' | FileCheck %s --check-prefix=POOL
// POOL: func.func @main_graph({{.*}}) attributes {hip.pool_bytes = 128 : i64}
// POOL: %[[P:.*]] = memref.alloc() {alignment = 64 : i64} : memref<128xi8>
// POOL: %[[O0:.*]] = arith.constant 0 : index
// POOL: memref.view %[[P]][%[[O0]]][] : memref<128xi8> to memref<16xf32>
// POOL: %[[O1:.*]] = arith.constant 64 : index
// POOL: memref.view %[[P]][%[[O1]]][] : memref<128xi8> to memref<16xf32>
// POOL: %[[O2:.*]] = arith.constant 0 : index
// POOL: memref.dealloc %[[P]]
// POOL-NOT: memref.dealloc

// Rust passes take options only through pipelines (hip-to-llvm-pipeline{pool-alignment=N}).
// RUN: not hip-mlir-opt %s --pass-pipeline='builtin.module(func.func(hip-pool-allocs{alignment=128}))' 2>&1 | FileCheck %s --check-prefix=PASSOPT
// PASSOPT: failed to add `hip-pool-allocs` with options `alignment=128`
func.func @main_graph(%x: tensor<16xf32>, %y: tensor<16xf32>) -> tensor<16xf32> {
  %0 = "onnx.Add"(%x, %y) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %1 = "onnx.Relu"(%0) : (tensor<16xf32>) -> tensor<16xf32>
  %2 = "onnx.Mul"(%1, %y) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %3 = "onnx.Sub"(%2, %x) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  return %3 : tensor<16xf32>
}
