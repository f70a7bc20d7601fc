// convert-hip-to-llvm lowers buffer-form ops (in-tree and the vendor plugin's, through its op
// model) to runtime calls; generate-interface adds the C entry point; hip-compiler links the
// in-tree runtime and the plugins' bitcode, where the later plugin's hip_ep_vendor_add wins.
// RUN: hip-mlir-opt %s --pass-pipeline='builtin.module(func.func(vendor-introduce-add,convert-onnx-to-hip),hip-bufferize,func.func(hip-pool-allocs),hip-lower-to-runtime-calls)' | FileCheck %s --check-prefix=CALLS
// CALLS: func.func private @hip_ep_vendor_add(!llvm.ptr, !llvm.ptr, !llvm.ptr, i64)
// CALLS: func.func private @wrap_mul(!llvm.ptr, i64, !llvm.ptr, i64, !llvm.ptr, i64)
// CALLS: memref.extract_aligned_pointer_as_index
// CALLS: call @hip_ep_vendor_add(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, i64) -> ()
// CALLS: call @wrap_mul(

// RUN: hip-mlir-opt %s --pass-pipeline='builtin.module(vendor-offload{min-elements=64})' | FileCheck %s --check-prefix=SMALL
// SMALL: "onnx.Add"
// SMALL-NOT: vendor.add
// RUN: hip-mlir-opt %s --pass-pipeline='builtin.module(vendor-offload{min-elements=8})' | FileCheck %s --check-prefix=BIG
// BIG: "vendor.add"

// RUN: hip-compiler %s -o %t.bc && llvm-dis %t.bc -o - | FileCheck %s --check-prefix=BC
// BC-DAG: define{{.*}} i32 @inference_compute(ptr {{.*}}, ptr {{.*}})
// BC-DAG: define{{.*}} void @hip_ep_vendor_add(
// BC-DAG: call void @vendor_override_kernel_add(
// BC-DAG: define{{.*}} void @wrap_mul(
// BC-NOT: call void @vendor_kernel_add(

// RUN: hip-compiler %s --mode native -o %t.so && nm -D --defined-only %t.so | FileCheck %s --check-prefix=SO
// SO: T inference_compute
func.func @main_graph(%x: tensor<8xf32>, %y: tensor<8xf32>) -> tensor<8xf32> {
  %0 = "onnx.Add"(%x, %y) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %1 = "onnx.Mul"(%0, %y) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %1 : tensor<8xf32>
}
