//! The sample plugin (the design's worked example), exercised in CI.
//!
//! * `vendor-introduce-add` (at `AfterSimplifyOnnx`): rewrites each `onnx.Add` whose operands
//!   and result have the same shape (the vendor kernel does not broadcast) into the plugin's
//!   own op `vendor.add`, defined in IRDL. The in-tree `convert-onnx-to-hip` only matches
//!   `onnx.*`, so `vendor.add` survives to bufferization, which treats it like an in-tree op
//!   through its op model, and `convert-hip-to-llvm` lowers it to a call of
//!   `hip_ep_vendor_add`.
//! * `hip_ep_vendor_add` comes as plugin bitcode (`runtime/wrap_vendor_add.c`) and calls
//!   `vendor_kernel_add` from the plugin's host library `libvendor_kernels.so`
//!   (`lib/vendor_kernels/`), contributed with `add_library_path` + `add_library`.
//! * `vendor-trace` runs at every slot and appends a summary of the IR it sees to the module
//!   attribute `vendor.trace`, so tests can check that each slot runs where it says.
//! * `vendor-offload{min-elements=N}`: a registered pipeline builder with options, running
//!   `vendor-introduce-add` only on adds of at least N elements.
//! * Dialects: `vendor` in IRDL, and the upstream `scf` dialect.

use hip_ep_compiler::ir::{self, Op, PassError};
use hip_ep_compiler::melior::dialect::DialectHandle;
use hip_ep_compiler::melior::ir::{ValueLike, operation::OperationBuilder};
use hip_ep_compiler::pipeline::{PassOptions, PipelineBuilder};
use hip_ep_compiler::plugin::{
    DialectRegistration, HipEpPluginRegistry, OpModel, PassAnchor, PassDefinition,
    PipelineDefinition, PipelineSlot, RuntimeCall,
};


fn introduce_add(func: Op<'_>, options: &PassOptions) -> Result<(), PassError> {
    let min_elements = options.get_u64("min-elements", 0).map_err(PassError::new)? as i64;
    for op in func.nested_ops() {
        if op.name() != "onnx.Add" || op.operands().len() != 2 || op.results().len() != 1 {
            continue;
        }
        let result = op.results()[0];
        let shapes: Vec<_> = op
            .operands()
            .into_iter()
            .chain([result])
            .map(|v| ir::static_shape(v.r#type()))
            .collect();
        let Some(out) = shapes[2].clone() else { continue };
        let same = shapes.iter().all(|s| s.as_ref() == Some(&out));
        if !same || out.numel() < min_elements {
            continue;
        }
        let new = OperationBuilder::new("vendor.add", op.location())
            .add_operands(&op.operands())
            .add_results(&[result.r#type()])
            .build()
            .map_err(|e| PassError::at(op, format!("cannot build vendor.add: {e}")))?;
        op.replace_with(new);
    }
    Ok(())
}

fn trace(module: Op<'_>, _: &PassOptions) -> Result<(), PassError> {
    let mut dialects: Vec<&str> = module
        .nested_ops()
        .into_iter()
        .filter(|op| op.parent() != Some(module))
        .map(|op| op.dialect())
        .collect();
    dialects.sort_unstable();
    dialects.dedup();
    let interface = module
        .body_ops()
        .into_iter()
        .any(|op| op.symbol_name() == Some(hip_ep_compiler::INTERFACE_SYMBOL));
    let index = module.string_array_attr("vendor.trace").len() + 1;
    module.append_string_attr(
        "vendor.trace",
        &format!("#{index} ops={} interface={interface}", dialects.join("+")),
    );
    Ok(())
}

fn offload_pipeline(b: &mut PipelineBuilder, options: &PassOptions) -> Result<(), String> {
    options.check_known("vendor-offload", &["min-elements"])?;
    let min = options.get_u64("min-elements", 0)?;
    b.add_pass("vendor-introduce-add", &format!("min-elements={min}"))
}

hip_ep_compiler::hip_ep_define_plugin!(vendor, |r: &mut HipEpPluginRegistry<'_>| {
    let _ = r.register_pass(PassDefinition {
        argument: "vendor-introduce-add",
        description: "rewrite same-shape onnx.Add into vendor.add; option min-elements=N",
        anchor: PassAnchor::Func,
        options: &["min-elements"],
        run: introduce_add,
    });
    let _ = r.register_pass(PassDefinition {
        argument: "vendor-trace",
        description: "append the dialects present to the module attribute vendor.trace",
        anchor: PassAnchor::Module,
        options: &[],
        run: trace,
    });
    let _ = r.register_pipeline(PipelineDefinition {
        name: "vendor-offload",
        description: "vendor-introduce-add on adds of at least min-elements elements",
        build: offload_pipeline,
    });
    r.request_pipeline_slot(PipelineSlot::AfterSimplifyOnnx, "vendor-introduce-add");
    for slot in PipelineSlot::ALL {
        r.request_pipeline_slot(slot, "vendor-trace");
    }
    // Upstream dialects the vendor's rewrites may create (here: structured control flow).
    r.add_dialect_registration(DialectRegistration::Upstream(|registry| {
        DialectHandle::scf().insert_dialect(registry)
    }));
    let add = hip_ep_compiler::dialects::destination_passing_op_irdl("add", &["lhs", "rhs"], &[]);
    r.add_dialect_registration(DialectRegistration::Irdl(format!(
        "irdl.dialect @vendor {{\n{add}}}\n"
    )));
    r.add_op_model(OpModel {
        op_name: "vendor.add",
        lowering: RuntimeCall::PointersAndCount("hip_ep_vendor_add"),
    });
    r.add_runtime_bitcode(hip_ep_compiler::hip_ep_plugin_bitcode!(vendor, "wrap_vendor_add"));
    r.add_library_path(hip_ep_compiler::hip_ep_plugin_lib_dir!(vendor));
    r.add_library("vendor_kernels");
});
