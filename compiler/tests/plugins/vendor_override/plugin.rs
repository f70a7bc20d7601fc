//! A second plugin, selected after `vendor`, to prove ordering and override. It lives outside
//! `compiler/plugins`, so the build finds it only through `HIPDNN_EP_COMPILER_PLUGIN_PATHS`
//! (as a downstream team's plugin would be):
//!
//! * `vendor-override-trace` at `AfterSimplifyOnnx` runs after the `vendor` plugin's passes at
//!   that slot (registration order) and records itself in `vendor.trace`;
//! * its bitcode defines `hip_ep_vendor_add` again: linked after `vendor`'s with
//!   override-from-source, this definition wins. It calls `vendor_override_kernel_add` from
//!   its own library, which counts its calls (`vendor_override_calls`);
//! * it deliberately registers `vendor-trace` a second time (refused: the name belongs to
//!   `vendor`) and requests a pass nobody registered (warned about when the pipeline is
//!   built), which the tests check.

use hip_ep_compiler::ir::{Op, PassError};
use hip_ep_compiler::pipeline::PassOptions;
use hip_ep_compiler::plugin::{HipEpPluginRegistry, PassAnchor, PassDefinition, PipelineSlot};

fn trace(module: Op<'_>, _: &PassOptions) -> Result<(), PassError> {
    let index = module.string_array_attr("vendor.trace").len() + 1;
    module.append_string_attr("vendor.trace", &format!("#{index} vendor_override"));
    Ok(())
}

fn never_runs(_: Op<'_>, _: &PassOptions) -> Result<(), PassError> {
    Err(PassError::new("a refused registration must never run"))
}

hip_ep_compiler::hip_ep_define_plugin!(vendor_override, |r: &mut HipEpPluginRegistry<'_>| {
    let _ = r.register_pass(PassDefinition {
        argument: "vendor-override-trace",
        description: "record this plugin's slot pass in vendor.trace",
        anchor: PassAnchor::Module,
        options: &[],
        run: trace,
    });
    // Refused: `vendor` owns this name (the registry logs a warning and returns an error).
    let _ = r.register_pass(PassDefinition {
        argument: "vendor-trace",
        description: "duplicate name, refused",
        anchor: PassAnchor::Module,
        options: &[],
        run: never_runs,
    });
    r.request_pipeline_slot(PipelineSlot::AfterSimplifyOnnx, "vendor-override-trace");
    r.request_pipeline_slot(PipelineSlot::AfterConvertOnnxToHip, "vendor-override-missing-pass");
    r.add_runtime_bitcode(hip_ep_compiler::hip_ep_plugin_bitcode!(vendor_override, "wrap_vendor_add_override"));
    r.add_library_path(hip_ep_compiler::hip_ep_plugin_lib_dir!(vendor_override));
    r.add_library("vendor_override_kernels");
});
