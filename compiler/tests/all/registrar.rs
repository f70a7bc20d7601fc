//! The static registrar with the sample plugins selected (`vendor;vendor_override`): every
//! contribution recorded, in list order.

use hip_ep_compiler::plugin::{DialectRegistration, PipelineSlot, RegistryError, RuntimeCall};

fn store() -> &'static hip_ep_compiler::plugin::Contributions {
    let store = hip_ep_compiler::dispatch_plugin_registrations_once();
    assert_eq!(
        hip_ep_compiler::selected_plugins(),
        ["vendor", "vendor_override"],
        "these tests need HIPDNN_EP_COMPILER_PLUGIN_PATHS=$PWD/compiler/tests/plugins and HIPDNN_EP_COMPILER_PLUGINS=vendor;vendor_override (scripts/test.sh sets them)"
    );
    store
}

#[test]
fn dispatch_is_idempotent_and_in_list_order() {
    let first = store() as *const _;
    let second = hip_ep_compiler::dispatch_plugin_registrations_once() as *const _;
    assert_eq!(first, second);
    assert_eq!(store().dispatched_plugins(), ["vendor", "vendor_override"]);
    assert!(store().failed_plugins().is_empty());
}

#[test]
fn every_sample_contribution_is_recorded() {
    let store = store();
    let passes: Vec<(&str, &str)> = store
        .passes()
        .iter()
        .filter(|c| c.plugin != hip_ep_compiler::IN_TREE_ID)
        .map(|c| (c.plugin, c.value.argument))
        .collect();
    assert_eq!(
        passes,
        [
            ("vendor", "vendor-introduce-add"),
            ("vendor", "vendor-trace"),
            ("vendor_override", "vendor-override-trace"),
        ]
    );
    let pipelines: Vec<&str> = store
        .pipelines()
        .iter()
        .filter(|c| c.plugin == "vendor")
        .map(|c| c.value.name)
        .collect();
    assert_eq!(pipelines, ["vendor-offload"]);

    let at_simplify: Vec<(&str, &str)> = store
        .plugin_passes_for_slot(PipelineSlot::AfterSimplifyOnnx)
        .iter()
        .map(|r| (r.plugin, r.pass_name.as_str()))
        .collect();
    assert_eq!(
        at_simplify,
        [
            ("vendor", "vendor-introduce-add"),
            ("vendor", "vendor-trace"),
            ("vendor_override", "vendor-override-trace"),
        ]
    );
    for slot in PipelineSlot::ALL {
        assert!(
            store
                .plugin_passes_for_slot(slot)
                .iter()
                .any(|r| r.pass_name == "vendor-trace"),
            "vendor-trace requested at {slot}"
        );
    }

    let dialects = store.plugin_dialect_registrations();
    assert_eq!(dialects.len(), 2);
    assert!(dialects.iter().all(|d| d.plugin == "vendor"));
    assert!(matches!(
        dialects[0].value,
        DialectRegistration::Upstream(_)
    ));
    assert!(
        matches!(dialects[1].value, DialectRegistration::Irdl(ref text) if text.contains("irdl.dialect @vendor"))
    );
    // Both reach every compiler context.
    let context = hip_ep_compiler::dialects::create_context();
    assert!(context.is_registered_operation("scf.for"));
    assert!(context.is_registered_operation("vendor.add"));
    assert!(context.is_registered_operation("hip.gemm"));

    let models = store.plugin_op_models();
    assert_eq!(models.len(), 1);
    assert_eq!(models[0].value.op_name, "vendor.add");
    assert_eq!(
        models[0].value.lowering,
        RuntimeCall::PointersAndCount("hip_ep_vendor_add")
    );

    let bitcode: Vec<(&str, bool)> = store
        .plugin_bitcode_buffers()
        .iter()
        .map(|c| (c.plugin, c.value.starts_with(b"BC\xc0\xde")))
        .collect();
    assert_eq!(bitcode, [("vendor", true), ("vendor_override", true)]);

    let paths: Vec<&str> = store
        .plugin_library_paths()
        .iter()
        .map(|c| c.plugin)
        .collect();
    assert_eq!(paths, ["vendor", "vendor_override"]);
    for p in store.plugin_library_paths() {
        assert!(p.value.is_dir(), "{} exists", p.value.display());
    }
    let libs: Vec<(&str, &str)> = store
        .plugin_libraries()
        .iter()
        .map(|c| (c.plugin, c.value.as_str()))
        .collect();
    assert_eq!(
        libs,
        [
            ("vendor", "vendor_kernels"),
            ("vendor_override", "vendor_override_kernels")
        ]
    );
}

#[test]
fn the_duplicate_name_was_refused_before_mlir() {
    let refused = store().refused();
    assert_eq!(refused.len(), 1);
    assert!(matches!(
        &refused[0],
        RegistryError::DuplicateName { name, plugin, .. } if name == "vendor-trace" && plugin == "vendor_override"
    ));
}

#[test]
fn the_pass_menu_lists_every_in_tree_name_and_nothing_else() {
    let menu = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/pipeline_pass_menu.md"),
    )
    .unwrap();
    let store = store();
    let in_tree: Vec<&str> = store
        .passes()
        .iter()
        .filter(|c| c.plugin == hip_ep_compiler::IN_TREE_ID)
        .map(|c| c.value.argument)
        .chain(
            store
                .pipelines()
                .iter()
                .filter(|c| c.plugin == hip_ep_compiler::IN_TREE_ID)
                .map(|c| c.value.name),
        )
        .collect();
    for name in &in_tree {
        assert!(
            menu.contains(&format!("| `{name}` |")),
            "docs/pipeline_pass_menu.md has no table row for `{name}`"
        );
    }
    // Every row of the pass and pipeline tables names a registered pass or pipeline.
    let all: Vec<&str> = store
        .passes()
        .iter()
        .map(|c| c.value.argument)
        .chain(store.pipelines().iter().map(|c| c.value.name))
        .collect();
    for line in menu.lines().filter(|l| l.starts_with("| `")) {
        let name = line.trim_start_matches("| `").split('`').next().unwrap();
        assert!(
            all.contains(&name),
            "the menu lists `{name}`, which is not registered"
        );
    }
    for slot in PipelineSlot::ALL {
        assert!(
            menu.contains(slot.name()),
            "the menu does not mention slot {slot}"
        );
    }
}
