// The tools list what was compiled into them.
// RUN: hip-compiler --list-plugins | FileCheck %s --check-prefix=PLUGINS
// PLUGINS: plugin API version 3
// PLUGINS-NEXT: plugin vendor
// PLUGINS-NEXT:   pass vendor-introduce-add
// PLUGINS-NEXT:   pass vendor-trace
// PLUGINS-NEXT:   pipeline vendor-offload
// PLUGINS-NEXT:   slot AfterSimplifyOnnx -> vendor-introduce-add
// PLUGINS:        bitcode {{[0-9]+}} bytes
// PLUGINS:        library vendor_kernels
// PLUGINS-NEXT: plugin vendor_override
// PLUGINS-NEXT:   pass vendor-override-trace
// PLUGINS-NEXT:   slot AfterSimplifyOnnx -> vendor-override-trace
// PLUGINS-NEXT:   slot AfterConvertOnnxToHip -> vendor-override-missing-pass
// PLUGINS:        library vendor_override_kernels

// RUN: hip-mlir-opt --list-passes | FileCheck %s --check-prefix=PASSES
// PASSES: pass simplify-onnx [func.func] (hip-ep)
// PASSES: pass generate-interface [builtin.module] (hip-ep)
// PASSES: pass vendor-trace [builtin.module] (vendor)
// PASSES: pipeline onnx-to-hip-pipeline (hip-ep)
// PASSES: pipeline hip-to-llvm-pipeline (hip-ep)
// PASSES: pipeline convert-hip-to-llvm (hip-ep)
// PASSES: pipeline vendor-offload (vendor)

// hip-compiler reads stdin for `-` and reports a missing file by name.
// RUN: cat %s | hip-compiler - -o %t.bc 2>&1 | FileCheck %s --check-prefix=STDIN
// STDIN: hip-compiler: wrote {{.*}}.bc
// RUN: not hip-compiler %t.missing.mlir 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: hip-compiler: reading {{.*}}missing.mlir: No such file or directory
func.func @main_graph(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "onnx.Relu"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
