//! The compiler's contexts: upstream dialects, the in-tree `hip` dialect (IRDL), plugin
//! dialect registrations, LLVM translations. `onnx.*` ops are unregistered: they parse as
//! generic ops and `convert-onnx-to-hip` checks the subset it lowers.

use melior::{
    Context,
    dialect::{DialectHandle, DialectRegistry},
    ir::Module,
    utility::{load_irdl_dialects, register_all_llvm_translations},
};

use crate::plugin::DialectRegistration;

/// IRDL for one op with a tensor form (`%r = op(ins…)`) and a destination-passing buffer
/// form (`op(ins…, %out)`, no result): each named input is a tensor or a memref, followed by
/// optional inputs and the optional output buffer; the result is an optional tensor. Each
/// operand gets its own constraint variable (operands sharing one must have equal types).
/// With more than one optional operand the op carries `operandSegmentSizes`.
pub fn destination_passing_op_irdl(
    name: &str,
    inputs: &[&str],
    optional_inputs: &[&str],
) -> String {
    let mut text = format!("  irdl.operation @{name} {{\n");
    let mut operands = Vec::new();
    for (input, optional) in inputs
        .iter()
        .map(|i| (i, false))
        .chain(optional_inputs.iter().map(|i| (i, true)))
    {
        text.push_str(&format!(
            "    %{input}_t = irdl.base \"!builtin.tensor\"\n    %{input}_m = irdl.base \"!builtin.memref\"\n    %{input} = irdl.any_of(%{input}_t, %{input}_m)\n"
        ));
        operands.push(format!(
            "{input}: {}%{input}",
            if optional { "optional " } else { "" }
        ));
    }
    text.push_str(
        "    %out = irdl.base \"!builtin.memref\"\n    %result = irdl.base \"!builtin.tensor\"\n",
    );
    operands.push("out: optional %out".to_string());
    text.push_str(&format!(
        "    irdl.operands({})\n    irdl.results(result: optional %result)\n  }}\n",
        operands.join(", ")
    ));
    text
}

/// The in-tree `hip` dialect in IRDL. Each op exists in a tensor form (`%r = hip.add %a, %b`)
/// and, after `hip-bufferize`, a destination-passing buffer form (`hip.add %a, %b, %out`);
/// `hip.gemm`'s `C` is optional.
pub fn hip_dialect_irdl() -> String {
    let ops = [
        destination_passing_op_irdl("add", &["lhs", "rhs"], &[]),
        destination_passing_op_irdl("sub", &["lhs", "rhs"], &[]),
        destination_passing_op_irdl("mul", &["lhs", "rhs"], &[]),
        destination_passing_op_irdl("relu", &["x"], &[]),
        destination_passing_op_irdl("matmul", &["a", "b"], &[]),
        destination_passing_op_irdl("gemm", &["a", "b"], &["c"]),
    ];
    format!("irdl.dialect @hip {{\n{}}}\n", ops.concat())
}

/// A context with every dialect the pipeline uses and every plugin dialect, all loaded, with
/// unregistered dialects allowed (for `onnx.*`). Dispatches plugin registrations first.
pub fn create_context() -> Context {
    let store = crate::dispatch_plugin_registrations_once();
    let registry = DialectRegistry::new();
    for handle in [
        DialectHandle::func(),
        DialectHandle::arith(),
        DialectHandle::memref(),
        DialectHandle::llvm(),
        DialectHandle::cf(),
        // SAFETY: the C API's handle of the IRDL dialect (not wrapped by melior).
        unsafe { DialectHandle::from_raw(mlir_sys::mlirGetDialectHandle__irdl__()) },
    ] {
        handle.insert_dialect(&registry);
    }
    let mut irdl_sources = vec![hip_dialect_irdl()];
    for registration in store.plugin_dialect_registrations() {
        match &registration.value {
            DialectRegistration::Upstream(register) => register(&registry),
            DialectRegistration::Irdl(source) => irdl_sources.push(source.clone()),
        }
    }
    let context = Context::new_with_registry(&registry, false);
    context.load_all_available_dialects();
    context.set_allow_unregistered_dialects(true);
    register_all_llvm_translations(&context);
    for source in &irdl_sources {
        let module = Module::parse(&context, source)
            .unwrap_or_else(|| panic!("an IRDL dialect definition does not parse:\n{source}"));
        assert!(
            load_irdl_dialects(&module),
            "an IRDL dialect definition does not load:\n{source}"
        );
    }
    context
}
