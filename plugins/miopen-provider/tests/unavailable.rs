//! Unavailable is an answer: the plugin loads anywhere; without MIOpen, without a HIP
//! device or with a MIOpen too old, its handle creation fails with the reason, the
//! backend lists it as unavailable and says why, and no MIOpen engine is offered (the
//! "no HIP device" case also with the system's real HIP runtime). With a usable MIOpen
//! (here the software one) both engines are there.
//!
//! One test (it sets environment variables between handles, which the plugin reads
//! when each handle is created).

mod support;

use std::path::Path;

use hipdnn_backend::Handle;
use hipdnn_miopen_provider::miopen::Runtime;
use hipdnn_miopen_provider::miopen::load::{HIP_LIBRARY_ENV, HIP_NAMES, MIOPEN_LIBRARY_ENV};
use hipdnn_rocm_sys::hip::open_library;

fn engines(handle: &Handle) -> Vec<String> {
    handle.engines().into_iter().map(|e| e.name).collect()
}

/// The reason the backend gives for the MIOpen plugin, if it is unavailable.
fn unavailable_reason(handle: &Handle) -> Option<String> {
    let listed = handle.unavailable_plugins();
    assert!(listed.len() <= 1, "{listed:?}");
    listed.first().map(|p| {
        assert_eq!(p.name, "miopen_provider_plugin");
        p.reason.clone()
    })
}

fn set(var: &str, value: impl AsRef<std::ffi::OsStr>) {
    // SAFETY: this binary's only test; no other thread reads the environment.
    unsafe { std::env::set_var(var, value) };
}

fn unset(var: &str) {
    // SAFETY: as in `set`.
    unsafe { std::env::remove_var(var) };
}

fn expect_unavailable(why: &str) {
    let handle = Handle::new();
    let reason =
        unavailable_reason(&handle).unwrap_or_else(|| panic!("available, expected: {why}"));
    assert!(
        reason.starts_with("MIOPEN_ENGINE is unavailable: ") && reason.contains(why),
        "{reason}"
    );
    assert!(
        !engines(&handle).iter().any(|n| n.starts_with("MIOPEN")),
        "{:?}",
        engines(&handle)
    );
}

#[test]
fn the_plugin_says_why_it_cannot_run_and_offers_both_engines_when_it_can() {
    let [plugin, soft] = support::libraries();
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(&plugin, dir.path().join(plugin.file_name().unwrap())).unwrap();
    set("HIPDNN_PLUGIN_DIR", dir.path());

    // This machine as it is.
    unset(MIOPEN_LIBRARY_ENV);
    unset(HIP_LIBRARY_ENV);
    match Runtime::open() {
        Err(reason) => expect_unavailable(&reason),
        Ok(rt) => assert!(rt.devices > 0),
    }

    // A MIOpen that is not there.
    set(MIOPEN_LIBRARY_ENV, Path::new("/nonexistent/libMIOpen.so.1"));
    expect_unavailable("HIPDNN_MIOPEN_LIBRARY=/nonexistent/libMIOpen.so.1: cannot load it");

    // The software MIOpen with the system's real HIP runtime (Debian's libamdhip64 5.2,
    // which scripts/setup-debian.sh installs, or ROCm's): the runtime's own answer for a
    // machine without an AMD GPU.
    let (_, real_hip) = open_library(HIP_LIBRARY_ENV, HIP_NAMES)
        .unwrap_or_else(|e| panic!("{e}; scripts/setup-debian.sh installs one"));
    if !Path::new("/dev/kfd").exists() {
        set(MIOPEN_LIBRARY_ENV, &soft);
        set(HIP_LIBRARY_ENV, &real_hip);
        expect_unavailable("no HIP device");
    }

    // The software MIOpen and HIP, with no device, then too old, then usable.
    set(MIOPEN_LIBRARY_ENV, &soft);
    set(HIP_LIBRARY_ENV, &soft);
    set("HIPDNN_SOFT_HIP_DEVICES", "0");
    expect_unavailable("no HIP device");
    set("HIPDNN_SOFT_HIP_DEVICES", "1");
    set("HIPDNN_SOFT_MIOPEN_VERSION", "2.19.0");
    expect_unavailable("MIOpen 2.19.0 is too old; 3.0.0 or newer is needed");
    unset("HIPDNN_SOFT_MIOPEN_VERSION");

    let handle = Handle::new();
    assert_eq!(unavailable_reason(&handle), None);
    let names = engines(&handle);
    for name in ["MIOPEN_ENGINE", "MIOPEN_ENGINE_DETERMINISTIC"] {
        assert!(names.iter().any(|n| n == name), "{names:?}");
    }
}
