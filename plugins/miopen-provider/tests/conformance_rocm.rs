//! The provider conformance suite on this machine's real MIOpen and HIP device: the
//! provider's `.so` loaded by the backend, device buffers from the HIP runtime MIOpen
//! uses. On a machine without ROCm or a HIP device every case is ignored with the
//! reason, and one test, `MIOPEN_ENGINE/unavailable`, checks that the plugin refuses
//! cleanly. (`conformance` runs the same suite on the software MIOpen everywhere.)

mod support;

use std::sync::Arc;

use hipdnn_conformance::{EngineRun, PluginSuite};
use hipdnn_miopen_provider::miopen::Runtime;
use hipdnn_test_sdk::conformance::{Case, SkipList, extended_cases, standard_cases};
use libtest_mimic::{Arguments, Completion, Trial};

fn skips(deterministic: bool) -> SkipList {
    SkipList::new().predicate(
        "not claimed by the engine (see the `conformance` test for the kinds)",
        move |case: &Case| {
            hipdnn_miopen_provider::reason_for_model(&case.graph(), deterministic).is_some()
        },
    )
}

fn main() {
    let args = Arguments::from_args();
    let mut cases = standard_cases();
    cases.extend(extended_cases());
    let runtime = match Runtime::open() {
        Ok(rt) => rt,
        Err(reason) => {
            let mut trials = vec![Trial::test("MIOPEN_ENGINE/unavailable", || {
                let [plugin, _] = support::libraries();
                match hipdnn_conformance::PluginUnderTest::load(&plugin) {
                    Ok(p) if p.engines().is_empty() => Ok(()),
                    Ok(_) => Err("the plugin made a handle on a machine without MIOpen".into()),
                    Err(e) if e.contains("admitted none") || e.contains("no handle") => Ok(()),
                    Err(e) => Err(format!("unexpected load failure: {e}").into()),
                }
            })];
            let why = format!("MIOPEN_ENGINE is unavailable here: {reason}");
            trials.extend(cases.into_iter().map(|case| {
                let why = why.clone();
                Trial::ignorable_test(format!("MIOPEN_ENGINE/{}", case.name), move || {
                    Ok(Completion::ignored_with(why))
                })
            }));
            libtest_mimic::run(&args, trials).exit();
        }
    };
    let [plugin, _] = support::libraries();
    let label = format!("HIP device 0 (MIOpen {})", runtime.version_text());
    let device =
        support::HipAllocator::open(&runtime.hip_path, &label).unwrap_or_else(|e| panic!("{e}"));
    PluginSuite::new(plugin)
        .device_allocator(Arc::new(device))
        .cases(cases)
        .with_run(
            EngineRun::engine("MIOPEN_ENGINE")
                .label("MIOPEN_ENGINE")
                .skips(skips(false)),
        )
        .with_run(
            EngineRun::engine("MIOPEN_ENGINE_DETERMINISTIC")
                .label("MIOPEN_ENGINE_DETERMINISTIC")
                .skips(skips(true)),
        )
        .main_with_args(args)
}
