//! The static registrar: calls each selected plugin's entry point once per process, in
//! `HIPDNN_EP_COMPILER_PLUGINS` order, after the in-tree passes and pipelines.

use std::sync::{Once, OnceLock};

use crate::plugin::{Contribution, Contributions, dispatch};

mod static_plugins {
    include!(concat!(env!("OUT_DIR"), "/static_plugins.rs"));
}

/// The id in-tree contributions are recorded under.
pub const IN_TREE_ID: &str = "hip-ep";

#[allow(
    dead_code,
    reason = "used by the generated registrar when a plugin is selected"
)]
/// Byte equality usable in the generated registrar's compile-time id check.
pub(crate) const fn same_id(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The plugins selected into this build, in dispatch order.
pub fn selected_plugins() -> Vec<&'static str> {
    static_plugins::STATIC_PLUGINS
        .iter()
        .map(|(id, _)| *id)
        .collect()
}

/// Registers MLIR's own passes, the in-tree passes and pipelines, and every selected plugin's
/// contributions, once per process (later calls return the same registry). Every host calls
/// this before building a pipeline or a context; with no plugin selected the plugin part is a
/// no-op.
pub fn dispatch_plugin_registrations_once() -> &'static Contributions {
    static STORE: OnceLock<Contributions> = OnceLock::new();
    static MLIR: Once = Once::new();
    let store = STORE.get_or_init(|| {
        let _span = tracing::debug_span!("plugin dispatch").entered();
        melior::utility::register_all_passes();
        let mut store = Contributions::default();
        for pass in crate::passes::IN_TREE_PASSES {
            store.passes.push(Contribution {
                plugin: IN_TREE_ID,
                value: *pass,
            });
        }
        for pipeline in crate::pipeline::IN_TREE_PIPELINES {
            store.pipelines.push(Contribution {
                plugin: IN_TREE_ID,
                value: *pipeline,
            });
        }
        dispatch(static_plugins::STATIC_PLUGINS, &mut store);
        store
    });
    MLIR.call_once(|| crate::pipeline::register_with_mlir(store));
    store
}

#[cfg(test)]
#[path = "../build_support.rs"]
mod build_support;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugin::{HipEpPluginRegistry, PipelineSlot};

    #[test]
    fn selection_parses_ids_in_order_and_refuses_bad_ones() {
        assert_eq!(
            build_support::parse_selection("a; b,c;;"),
            Ok(vec!["a".into(), "b".into(), "c".into()])
        );
        assert_eq!(build_support::parse_selection(""), Ok(vec![]));
        assert!(
            build_support::parse_selection("a;a")
                .unwrap_err()
                .contains("selects 'a' twice")
        );
        assert!(
            build_support::parse_selection("9lives")
                .unwrap_err()
                .contains("'9lives' is not a plugin id")
        );
    }

    #[test]
    fn discovery_resolution_and_the_generated_registrar() {
        let tmp = std::env::temp_dir().join(format!("hip-ep-build-support-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        let tree = tmp.join("tree");
        for dir in [
            tree.join("alpha"),
            tree.join("beta"),
            tmp.join("solo"),
            tree.join("not-an-id"),
        ] {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("plugin.rs"), "").unwrap();
        }
        std::fs::create_dir_all(tree.join("no_plugin_rs")).unwrap();
        // A directory of plugins and a plugin directory itself (HIPDNN_EP_COMPILER_PLUGIN_PATHS).
        let found = build_support::discover(&[tree.clone(), tmp.join("solo")]).unwrap();
        assert_eq!(found.keys().collect::<Vec<_>>(), ["alpha", "beta", "solo"]);
        let dup = build_support::discover(&[tree.clone(), tree.clone()]).unwrap_err();
        assert!(dup.contains("plugin id 'alpha' is provided twice"), "{dup}");

        let selected = vec!["solo".to_string(), "alpha".to_string()];
        let plugins = build_support::resolve(&selected, &found).unwrap();
        assert_eq!(
            plugins
                .iter()
                .map(|(id, _)| id.as_str())
                .collect::<Vec<_>>(),
            ["solo", "alpha"]
        );
        let unknown = build_support::resolve(&["gamma".to_string()], &found).unwrap_err();
        assert!(unknown.contains("selects plugin 'gamma', but no plugin directory of that name was found (known: [alpha, beta, solo]"), "{unknown}");

        let source = build_support::registrar_source(&plugins);
        let solo = source
            .find("(\"solo\", plugin_solo::hip_ep_register_plugin)")
            .unwrap();
        let alpha = source
            .find("(\"alpha\", plugin_alpha::hip_ep_register_plugin)")
            .unwrap();
        assert!(solo < alpha, "entries in selection order");
        assert!(source.contains(
            &format!("{:?}", build_support::plugin_file(&tmp.join("solo")).display().to_string())
        ));
        assert!(source.contains("same_id(plugin_alpha::HIP_EP_PLUGIN_ID, \"alpha\")"));
        let empty = build_support::registrar_source(&[]);
        assert!(empty.contains("STATIC_PLUGINS: &[(&str, crate::plugin::PluginEntry)] = &[\n];"));
        std::fs::remove_dir_all(&tmp).unwrap();
    }

    fn good(r: &mut HipEpPluginRegistry<'_>) {
        r.request_pipeline_slot(PipelineSlot::AfterPoolAllocs, "good-pass");
        r.add_library("good");
        r.add_runtime_bitcode(&[]);
    }

    fn panics(r: &mut HipEpPluginRegistry<'_>) {
        r.add_library("half-registered");
        panic!("registration blew up");
    }

    #[test]
    fn panicking_plugin_is_skipped_with_nothing_kept() {
        let mut store = Contributions::default();
        dispatch(
            &[("first", good), ("broken", panics), ("last", good)],
            &mut store,
        );
        assert_eq!(store.dispatched_plugins(), ["first", "last"]);
        assert_eq!(store.failed_plugins().len(), 1);
        assert_eq!(store.failed_plugins()[0].0, "broken");
        assert!(store.failed_plugins()[0].1.contains("registration blew up"));
        let libs: Vec<_> = store
            .plugin_libraries()
            .iter()
            .map(|c| (c.plugin, c.value.as_str()))
            .collect();
        assert_eq!(libs, [("first", "good"), ("last", "good")]);
        // Empty bitcode is warned about and not recorded.
        assert!(store.plugin_bitcode_buffers().is_empty());
        assert_eq!(
            store
                .plugin_passes_for_slot(PipelineSlot::AfterPoolAllocs)
                .len(),
            2
        );
    }

    #[test]
    fn no_plugins_is_a_no_op() {
        let mut store = Contributions::default();
        dispatch(&[], &mut store);
        assert!(store.dispatched_plugins().is_empty());
        assert!(store.slot_requests().is_empty());
        assert!(store.plugin_bitcode_buffers().is_empty());
    }

    #[test]
    fn same_id_compares_bytes() {
        assert!(same_id("vendor", "vendor"));
        assert!(!same_id("vendor", "vendor2"));
        assert!(!same_id("vendoR", "vendor"));
    }
}
