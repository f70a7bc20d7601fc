// Failures name the pass, the op and its location; nothing is printed on stdout.
// RUN: not hip-mlir-opt %s --pass-pipeline='builtin.module(onnx-loop-outline)' 2>&1 | FileCheck %s --check-prefix=LOOP
// LOOP: errors.mlir":{{[0-9]+}}:{{[0-9]+}}): onnx-loop-outline: onnx.Loop (ONNX control flow) is not supported by this compiler
// RUN: not hip-mlir-opt %s --pass-pipeline='builtin.module(func.func(convert-onnx-to-hip))' 2>&1 | FileCheck %s --check-prefix=CONV
// CONV: convert-onnx-to-hip: no lowering for 'onnx.Loop'
// RUN: not hip-mlir-opt %s --pass-pipeline='builtin.module(func.func(convert-onnx-to-hip{verbose=1}))' 2>&1 | FileCheck %s --check-prefix=OPT
// OPT: convert-onnx-to-hip
// RUN: not hip-mlir-opt %s --pass-pipeline='builtin.module(vendor-offload{threshold=3})' 2>&1 | FileCheck %s --check-prefix=PIPEOPT
// PIPEOPT: vendor-offload: unknown option 'threshold' (accepted: min-elements)
func.func @main_graph(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "onnx.Loop"(%x) ({
  ^bb0(%i: tensor<2xf32>):
    "onnx.Yield"(%i) : (tensor<2xf32>) -> ()
  }) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
