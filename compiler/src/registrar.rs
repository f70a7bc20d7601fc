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
mod tests {
    use super::*;
    use crate::plugin::{HipEpPluginRegistry, PipelineSlot};

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
