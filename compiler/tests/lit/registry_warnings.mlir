// vendor_override registers `vendor-trace` again (refused before reaching MLIR, which would
// abort) and requests a pass nobody registered (one warning when the pipeline is built).
// RUN: hip-mlir-opt %s --compiler-pipeline 2>&1 >/dev/null | FileCheck %s
// CHECK: WARN pass name 'vendor-trace' from plugin 'vendor_override' refused: already registered by plugin 'vendor'
// CHECK: WARN plugin 'vendor_override' requested pass 'vendor-override-missing-pass' at slot AfterConvertOnnxToHip, but no pass or pipeline of that name is registered; skipped
// CHECK-NOT: WARN

// A name MLIR itself owns is refused the same way (checked in tests/all/registrar.rs).
func.func @main_graph(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "onnx.Relu"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
