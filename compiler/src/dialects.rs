//! The compiler's contexts: upstream dialects, the in-tree `hip` dialect (IRDL), plugin
//! dialect registrations, LLVM translations. `onnx.*` ops are unregistered: they parse as
//! generic ops and `convert-onnx-to-hip` checks the subset it lowers.

use melior::{
    Context,
    dialect::{DialectHandle, DialectRegistry},
    ir::{Location, Module},
    utility::{load_irdl_dialects, register_all_llvm_translations},
};

use crate::plugin::DialectRegistration;

/// The in-tree `hip` dialect. Each op exists in a tensor form (`%r = hip.add %a, %b`) and,
/// after `hip-bufferize`, a destination-passing buffer form (`hip.add %a, %b, %out`). Each
/// operand has its own constraint variable: IRDL makes operands sharing one have equal types.
/// `hip.gemm` has two optional operands (C, the output buffer), hence `operandSegmentSizes`.
pub const HIP_DIALECT_IRDL: &str = r#"
irdl.dialect @hip {
  irdl.operation @add {
    %lhs_t = irdl.base "!builtin.tensor"
    %lhs_m = irdl.base "!builtin.memref"
    %lhs = irdl.any_of(%lhs_t, %lhs_m)
    %rhs_t = irdl.base "!builtin.tensor"
    %rhs_m = irdl.base "!builtin.memref"
    %rhs = irdl.any_of(%rhs_t, %rhs_m)
    %out = irdl.base "!builtin.memref"
    %result = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %lhs, rhs: %rhs, out: optional %out)
    irdl.results(result: optional %result)
  }
  irdl.operation @sub {
    %lhs_t = irdl.base "!builtin.tensor"
    %lhs_m = irdl.base "!builtin.memref"
    %lhs = irdl.any_of(%lhs_t, %lhs_m)
    %rhs_t = irdl.base "!builtin.tensor"
    %rhs_m = irdl.base "!builtin.memref"
    %rhs = irdl.any_of(%rhs_t, %rhs_m)
    %out = irdl.base "!builtin.memref"
    %result = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %lhs, rhs: %rhs, out: optional %out)
    irdl.results(result: optional %result)
  }
  irdl.operation @mul {
    %lhs_t = irdl.base "!builtin.tensor"
    %lhs_m = irdl.base "!builtin.memref"
    %lhs = irdl.any_of(%lhs_t, %lhs_m)
    %rhs_t = irdl.base "!builtin.tensor"
    %rhs_m = irdl.base "!builtin.memref"
    %rhs = irdl.any_of(%rhs_t, %rhs_m)
    %out = irdl.base "!builtin.memref"
    %result = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %lhs, rhs: %rhs, out: optional %out)
    irdl.results(result: optional %result)
  }
  irdl.operation @relu {
    %x_t = irdl.base "!builtin.tensor"
    %x_m = irdl.base "!builtin.memref"
    %x = irdl.any_of(%x_t, %x_m)
    %out = irdl.base "!builtin.memref"
    %result = irdl.base "!builtin.tensor"
    irdl.operands(x: %x, out: optional %out)
    irdl.results(result: optional %result)
  }
  irdl.operation @matmul {
    %a_t = irdl.base "!builtin.tensor"
    %a_m = irdl.base "!builtin.memref"
    %a = irdl.any_of(%a_t, %a_m)
    %b_t = irdl.base "!builtin.tensor"
    %b_m = irdl.base "!builtin.memref"
    %b = irdl.any_of(%b_t, %b_m)
    %out = irdl.base "!builtin.memref"
    %result = irdl.base "!builtin.tensor"
    irdl.operands(a: %a, b: %b, out: optional %out)
    irdl.results(result: optional %result)
  }
  irdl.operation @gemm {
    %a_t = irdl.base "!builtin.tensor"
    %a_m = irdl.base "!builtin.memref"
    %a = irdl.any_of(%a_t, %a_m)
    %b_t = irdl.base "!builtin.tensor"
    %b_m = irdl.base "!builtin.memref"
    %b = irdl.any_of(%b_t, %b_m)
    %c_t = irdl.base "!builtin.tensor"
    %c_m = irdl.base "!builtin.memref"
    %c = irdl.any_of(%c_t, %c_m)
    %out = irdl.base "!builtin.memref"
    %result = irdl.base "!builtin.tensor"
    irdl.operands(a: %a, b: %b, c: optional %c, out: optional %out)
    irdl.results(result: optional %result)
  }
}
"#;

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
    let mut irdl_sources = vec![HIP_DIALECT_IRDL];
    for registration in store.plugin_dialect_registrations() {
        match &registration.value {
            DialectRegistration::Upstream(register) => register(&registry),
            DialectRegistration::Irdl(source) => irdl_sources.push(source),
        }
    }
    let context = Context::new_with_registry(&registry, false);
    context.load_all_available_dialects();
    context.set_allow_unregistered_dialects(true);
    register_all_llvm_translations(&context);
    for source in irdl_sources {
        let module = Module::parse(&context, source)
            .unwrap_or_else(|| panic!("an IRDL dialect definition does not parse:\n{source}"));
        assert!(
            load_irdl_dialects(&module),
            "an IRDL dialect definition does not load:\n{source}"
        );
    }
    let _ = Location::unknown(&context);
    context
}
