// The minimal plugin plus one export the ABI does not define. It exists to be rejected:
// `scripts/check-plugin-symbols.sh` must name `hipdnn_stray_helper` and fail
// (`tests/load_example.rs` checks that it does). Do not copy it.

include!("minimal_plugin.rs");

/// A helper exported by mistake: every plugin is loaded into one process, so a stray
/// export can clash with another plugin's.
#[unsafe(no_mangle)]
pub extern "C" fn hipdnn_stray_helper() {}
