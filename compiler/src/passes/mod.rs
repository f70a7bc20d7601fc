//! The in-tree passes, registered by name in MLIR's registry like plugin passes (see
//! `docs/pipeline_pass_menu.md` for the menu with anchors and slots).

pub(crate) mod bufferize;
pub(crate) mod lower;
pub(crate) mod onnx;

use crate::plugin::{Contributions, PassAnchor, PassDefinition, RuntimeCall};

/// Every in-tree Rust pass.
pub(crate) const IN_TREE_PASSES: &[PassDefinition] = &[
    PassDefinition {
        argument: "simplify-onnx",
        description: "remove onnx.Identity, fold Relu(Relu(x)), erase unused ONNX ops",
        anchor: PassAnchor::Func,
        options: &[],
        run: onnx::simplify_onnx,
    },
    PassDefinition {
        argument: "onnx-loop-outline",
        description: "refuse ONNX control flow (onnx.Loop/If/Scan), which this compiler does not lower",
        anchor: PassAnchor::Module,
        options: &[],
        run: onnx::onnx_loop_outline,
    },
    PassDefinition {
        argument: "convert-onnx-to-hip",
        description: "onnx.Add/Sub/Mul/Relu/MatMul/Gemm on static f32 tensors to hip.* tensor ops",
        anchor: PassAnchor::Func,
        options: &[],
        run: onnx::convert_onnx_to_hip,
    },
    PassDefinition {
        argument: "hip-bufferize",
        description: "tensors to memrefs, destination-passing; results become output-buffer arguments",
        anchor: PassAnchor::Module,
        options: &[],
        run: bufferize::hip_bufferize,
    },
    PassDefinition {
        argument: "hip-pool-allocs",
        description: "place each function's buffers in one pool with liveness-based reuse; option alignment=N",
        anchor: PassAnchor::Func,
        options: &["alignment"],
        run: bufferize::hip_pool_allocs,
    },
    PassDefinition {
        argument: "hip-lower-to-runtime-calls",
        description: "buffer-form hip.* and plugin ops to func.call of their runtime wrappers",
        anchor: PassAnchor::Module,
        options: &[],
        run: lower::hip_lower_to_runtime_calls,
    },
    PassDefinition {
        argument: "generate-interface",
        description: "emit the C-ABI entry point inference_compute(inputs, outputs) over the LLVM-dialect model function",
        anchor: PassAnchor::Module,
        options: &[],
        run: lower::generate_interface,
    },
];

/// How a buffer-form op becomes a runtime call.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Lowering {
    /// `symbol(a, numel a, b, numel b, out, numel out)` with suffix broadcast.
    Binary(&'static str),
    /// `symbol(x, out, numel)`.
    Unary(&'static str),
    /// `wrap_matmul(a, b, out, m, n, k)`.
    MatMul,
    /// `wrap_gemm(a, b, c|null, out, m, n, k, transA, transB, alpha, beta, c_m, c_n)`.
    Gemm,
    /// A plugin op model.
    Plugin(RuntimeCall),
}

/// The lowering of an op: in-tree `hip.*` first, then plugin op models (the first
/// registration of an op name wins).
pub(crate) fn lowering_for(store: &Contributions, op_name: &str) -> Option<Lowering> {
    Some(match op_name {
        "hip.add" => Lowering::Binary("wrap_add"),
        "hip.sub" => Lowering::Binary("wrap_sub"),
        "hip.mul" => Lowering::Binary("wrap_mul"),
        "hip.relu" => Lowering::Unary("wrap_relu"),
        "hip.matmul" => Lowering::MatMul,
        "hip.gemm" => Lowering::Gemm,
        _ => {
            return store
                .plugin_op_models()
                .iter()
                .find(|m| m.value.op_name == op_name)
                .map(|m| Lowering::Plugin(m.value.lowering));
        }
    })
}
