//! Compile small models and run them through the JIT against references computed here.

use hip_ep_compiler::driver::{CompileOptions, compile};

const ADD_RELU: &str = r#"
func.func @main_graph(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "onnx.Add"(%x, %y) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = "onnx.Relu"(%0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}"#;

#[test]
fn add_relu_runs_through_the_jit() {
    let compiled = compile(ADD_RELU, &CompileOptions::default()).unwrap();
    let jit = compiled.jit().unwrap();
    let x = [1.0, -2.0, 3.0, -4.0, 5.0, -6.0];
    let y = [0.5; 6];
    let mut out = [0.0f32; 6];
    jit.run(&[&x, &y], &mut [&mut out]).unwrap();
    let expected: Vec<f32> = x.iter().zip(&y).map(|(a, b)| (a + b).max(0.0)).collect();
    assert_eq!(out.to_vec(), expected);
}
