//! The provider conformance suite (hipdnn-test-sdk's cases) against `CPU_ENGINE` as
//! applications reach it: `libhipdnn_cpu_provider.so` loaded by the backend, each case
//! a plan built and executed through it (see hipdnn-conformance). Twice: with the
//! default convolution algorithm, and with `cpu.conv_algo=direct` (only the
//! convolutions depend on it; the rest is skipped there).
//!
//! Every case is a test, `CPU_ENGINE/<case>` and `CPU_ENGINE.direct/<case>`:
//! `cargo test -p hipdnn-cpu-provider --test conformance -- conv_fprop/` runs the forward
//! convolutions of both passes, `-- --list` lists them.

use hipdnn_conformance::cdylib::build_cdylibs;
use hipdnn_conformance::{EngineRun, PluginSuite};
use hipdnn_test_sdk::conformance::SkipList;

fn main() {
    // The same nested build as tests/backend.rs (which also needs the backend's
    // library), so one build serves both.
    let libraries = build_cdylibs(
        env!("CARGO_MANIFEST_DIR"),
        &["hipdnn-cpu-provider", "hipdnn-backend"],
        "cpu-plugin-test",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let only_convolutions = SkipList::new()
        .predicate("only convolutions depend on the algorithm", |case| {
            !case.name.starts_with("conv")
        });
    PluginSuite::new(&libraries[0])
        .with_run(
            EngineRun::engine("CPU_ENGINE")
                .label("CPU_ENGINE")
                .knob("cpu.threads", "2"),
        )
        .with_run(
            EngineRun::engine("CPU_ENGINE")
                .label("CPU_ENGINE.direct")
                .knob("cpu.threads", "3")
                .knob("cpu.conv_algo", "direct")
                .skips(only_convolutions),
        )
        .main()
}
