//! Reporting tests that cannot run on this machine: [`skip_if_no_device!`](crate::skip_if_no_device).
//!
//! libtest has no "skipped" status, so a test that returns early shows up as `ok`.
//! To keep a missing device from passing silently, the macro writes
//! `SKIPPED: <test>: <reason>` straight to the process's stderr (not through
//! `eprintln!`, which the harness captures and hides for passing tests), so every skip
//! is visible in the test log and can be counted. On machines that must have the
//! device (GPU CI runners), set `HIPDNN_TEST_REQUIRE_DEVICE=1`: a skip then panics,
//! and the test fails instead.
//!
//! ```
//! use hipdnn_test_sdk::skip_if_no_device;
//!
//! fn probe_gpu() -> Result<(), String> {
//!     Err("no HIP device found".into())
//! }
//!
//! fn conv_on_gpu() {
//!     skip_if_no_device!(probe_gpu());
//!     unreachable!("only runs with a device");
//! }
//! # if std::env::var_os("HIPDNN_TEST_REQUIRE_DEVICE").is_none() { conv_on_gpu(); }
//! ```

use std::fmt::Display;
use std::io::Write;

/// The environment variable that turns skips into failures.
pub const REQUIRE_DEVICE_ENV: &str = "HIPDNN_TEST_REQUIRE_DEVICE";

/// The result of a device probe: `None` when the test can run, else the reason to skip.
pub trait SkipProbe {
    /// Why the test must be skipped, if it must.
    fn skip_reason(self) -> Option<String>;
}

impl<E: Display> SkipProbe for Result<(), E> {
    fn skip_reason(self) -> Option<String> {
        self.err().map(|e| e.to_string())
    }
}

impl SkipProbe for Option<String> {
    fn skip_reason(self) -> Option<String> {
        self
    }
}

impl SkipProbe for Option<&str> {
    fn skip_reason(self) -> Option<String> {
        self.map(str::to_owned)
    }
}

/// The running test's name: libtest names each test's thread after it; `fallback`
/// (the macro passes `module_path!()`) when it runs on the main thread.
pub fn current_test_name(fallback: &str) -> String {
    match std::thread::current().name() {
        Some(name) if name != "main" => name.to_owned(),
        _ => fallback.to_owned(),
    }
}

/// The line a skip prints.
pub fn skip_line(test: &str, reason: &str) -> String {
    format!("SKIPPED: {test}: {reason}\n")
}

/// Reports a skip of `test` (see the [module docs](self)).
///
/// # Panics
/// When `HIPDNN_TEST_REQUIRE_DEVICE` is set to anything but `0` or the empty string.
pub fn report_skip(test: &str, reason: &str) {
    let required = std::env::var(REQUIRE_DEVICE_ENV).is_ok_and(|v| !v.is_empty() && v != "0");
    if required {
        panic!("{test}: device required ({REQUIRE_DEVICE_ENV} is set) but unavailable: {reason}");
    }
    let _ = std::io::stderr().write_all(skip_line(test, reason).as_bytes());
}

/// Returns early from the current test, reporting `SKIPPED: <test>: <reason>` on
/// stderr, when the probe says the device is missing.
///
/// The probe is a `Result<(), E: Display>` (`Err` = skip) or an `Option<String>` /
/// `Option<&str>` (`Some(reason)` = skip). A second argument is the value to return,
/// for tests that return a `Result`. A skipped test is reported as skipped on stderr,
/// not as passed; see the [module docs](crate::skip) for how to make skips fail on
/// machines that must have a device.
#[macro_export]
macro_rules! skip_if_no_device {
    ($probe:expr) => {
        $crate::skip_if_no_device!($probe, ())
    };
    ($probe:expr, $ret:expr) => {
        if let ::std::option::Option::Some(reason) = $crate::skip::SkipProbe::skip_reason($probe) {
            $crate::skip::report_skip(
                &$crate::skip::current_test_name(::std::module_path!()),
                &reason,
            );
            return $ret;
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guarded(probe: Option<&str>, ran: &mut bool) {
        if std::env::var_os(REQUIRE_DEVICE_ENV).is_some() {
            return;
        }
        skip_if_no_device!(probe);
        *ran = true;
    }

    fn guarded_result(probe: Result<(), String>) -> Result<u32, String> {
        skip_if_no_device!(probe, Ok(0));
        Ok(1)
    }

    #[test]
    fn skips_return_early_and_probes_that_pass_run() {
        if std::env::var_os(REQUIRE_DEVICE_ENV).is_some() {
            return;
        }
        let mut ran = false;
        guarded(Some("no device"), &mut ran);
        assert!(!ran);
        guarded(None, &mut ran);
        assert!(ran);
        assert_eq!(guarded_result(Err("no GPU".into())), Ok(0));
        assert_eq!(guarded_result(Ok(())), Ok(1));
    }

    #[test]
    fn skip_line_names_the_test() {
        assert_eq!(skip_line("a::b", "no HIP"), "SKIPPED: a::b: no HIP\n");
        let name = current_test_name("fallback");
        assert!(
            name.ends_with("skip_line_names_the_test") || name == "fallback",
            "{name}"
        );
        assert_eq!(Err::<(), _>("x").skip_reason(), Some("x".to_owned()));
        assert_eq!(Ok::<(), String>(()).skip_reason(), None);
    }
}
