//! The built `.so` loaded the way the provider loads it (dlopen with
//! `RTLD_NOW | RTLD_LOCAL`, every symbol of both tables resolved), and the
//! environment variables it reads.
//!
//! One test: it sets environment variables.

use std::ffi::CStr;
use std::path::PathBuf;
use std::ptr::null_mut;

use hipdnn_soft_miopen::sys::{HipApi, MiopenApi, hipError_t, miopenStatus_t};
use libloading::os::unix::{Library, RTLD_LOCAL, RTLD_NOW};

/// The library's `.so`, built with a nested cargo (`cargo test` links this crate into
/// its tests as an rlib only).
fn library() -> PathBuf {
    hipdnn_conformance::cdylib::build_cdylibs(
        env!("CARGO_MANIFEST_DIR"),
        &["hipdnn-soft-miopen"],
        "miopen-plugin-test",
    )
    .unwrap_or_else(|e| panic!("{e}"))
    .remove(0)
}

fn open() -> Library {
    let path = library();
    // SAFETY: loading the library runs no initialisers of note.
    unsafe { Library::open(Some(&path), RTLD_NOW | RTLD_LOCAL) }
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn the_library_exports_both_tables_and_reads_its_environment() {
    // SAFETY: the library implements these tables (checked at its compile time).
    let hip = unsafe { HipApi::resolve(open()) }.unwrap_or_else(|s| panic!("missing {s}"));
    // SAFETY: as above.
    let miopen = unsafe { MiopenApi::resolve(open()) }.unwrap_or_else(|s| panic!("missing {s}"));

    let (mut n, mut major, mut minor, mut patch) = (-1, 0, 0, 0);
    // SAFETY: valid out-pointers; the test is the process's only thread touching the
    // environment.
    unsafe {
        assert_eq!((hip.hipGetDeviceCount)(&mut n), hipError_t::hipSuccess);
        assert_eq!(n, 1);
        std::env::set_var("HIPDNN_SOFT_HIP_DEVICES", "0");
        assert_eq!(
            (hip.hipGetDeviceCount)(&mut n),
            hipError_t::hipErrorNoDevice
        );
        assert_eq!(n, 0);
        std::env::set_var("HIPDNN_SOFT_HIP_DEVICES", "two");
        assert_eq!(
            (hip.hipGetDeviceCount)(&mut n),
            hipError_t::hipErrorInvalidValue
        );
        std::env::set_var("HIPDNN_SOFT_HIP_DEVICES", "2");
        assert_eq!((hip.hipGetDeviceCount)(&mut n), hipError_t::hipSuccess);
        assert_eq!(n, 2);
        std::env::remove_var("HIPDNN_SOFT_HIP_DEVICES");

        std::env::set_var("HIPDNN_SOFT_MIOPEN_VERSION", "2.19.0");
        assert_eq!(
            (miopen.miopenGetVersion)(&mut major, &mut minor, &mut patch),
            miopenStatus_t::miopenStatusSuccess
        );
        assert_eq!((major, minor, patch), (2, 19, 0));
        std::env::set_var("HIPDNN_SOFT_MIOPEN_VERSION", "3.x");
        assert_eq!(
            (miopen.miopenGetVersion)(&mut major, null_mut(), null_mut()),
            miopenStatus_t::miopenStatusBadParm
        );
        std::env::remove_var("HIPDNN_SOFT_MIOPEN_VERSION");
        assert_eq!(
            (miopen.miopenGetVersion)(&mut major, &mut minor, &mut patch),
            miopenStatus_t::miopenStatusSuccess
        );
        assert_eq!((major, minor, patch), (3, 5, 0));
    }

    // The log through the C hooks of the loaded library (the same instance).
    let lib = open();
    // SAFETY: the test hooks' signatures; the string is freed by its partner.
    let text = unsafe {
        let take = lib
            .get::<unsafe extern "C" fn() -> *mut std::ffi::c_char>(
                b"hipdnnSoftMiopenTakeCallLog\0",
            )
            .unwrap();
        let free = lib
            .get::<unsafe extern "C" fn(*mut std::ffi::c_char)>(b"hipdnnSoftMiopenFreeString\0")
            .unwrap();
        let raw = take();
        let text = CStr::from_ptr(raw).to_str().unwrap().to_owned();
        free(raw);
        text
    };
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines,
        [
            "hipGetDeviceCount() = 1",
            "hipGetDeviceCount() -> hipErrorNoDevice: HIPDNN_SOFT_HIP_DEVICES=0",
            "hipGetDeviceCount() -> hipErrorInvalidValue: HIPDNN_SOFT_HIP_DEVICES=\"two\" is not a device count",
            "hipGetDeviceCount() = 2",
            "miopenGetVersion() = 2.19.0",
            "miopenGetVersion() -> miopenStatusBadParm: HIPDNN_SOFT_MIOPEN_VERSION=\"3.x\" is not major.minor.patch",
            "miopenGetVersion() = 3.5.0",
        ]
    );
}
