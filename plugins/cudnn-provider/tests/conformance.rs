//! The provider conformance suite against `CUDNN_ENGINE` as applications reach it:
//! `libhipdnn_cudnn_provider.so` loaded by the backend, device buffers on CUDA device 0,
//! each case a plan built and executed through it (see hipdnn-conformance).
//!
//! Cases the engine does not claim (its own applicability decision, which needs no
//! device: [`hipdnn_cudnn_provider::unsupported_reason`]) are ignored with the reason's
//! kind; every claimed case must pass. On a machine where the engine is unavailable (no
//! NVIDIA driver, device or cuDNN) every case is ignored with that reason, and one test,
//! `CUDNN_ENGINE/unavailable`, checks that the plugin refuses cleanly.
//!
//! `cargo test -p hipdnn-cudnn-provider --test conformance -- conv_fprop/` runs the
//! forward convolutions; `HIPDNN_CUDNN_PLUGIN`/`HIPDNN_CPU_PLUGIN` name prebuilt
//! libraries (e.g. on a GPU machine without cargo).

mod support;

use hipdnn_conformance::{EngineRun, PluginSuite};
use hipdnn_flatbuffers_sdk::model::Graph;
use hipdnn_test_sdk::conformance::{Case, SkipList, standard_cases};
use libtest_mimic::{Arguments, Completion, Trial};

/// Why the engine does not claim `graph`, by kind (the reasons name tensors and nodes;
/// the kinds keep the skip list short).
fn refusal_kind(graph: &Graph) -> Option<&'static str> {
    let reason = hipdnn_cudnn_provider::graph::Translation::new(graph).err()?;
    Some(if reason.contains("is not supported by CUDNN_ENGINE") {
        "operation not claimed by CUDNN_ENGINE (see its crate docs)"
    } else if reason.contains("not densely packed") {
        "strided layout: CUDNN_ENGINE claims packed tensors only"
    } else if reason.contains("does not broadcast")
        || reason.contains("must have the output's dims")
    {
        "pointwise broadcast of in_0 (only in_1 broadcasts in cuDNN)"
    } else if reason.contains("cannot broadcast") {
        "per-channel broadcast outside channels-last layouts (cuDNN's pointwise engines)"
    } else if reason.contains("computes it in TF32") {
        "FLOAT matmul (cuDNN computes it in TF32)"
    } else if reason.contains("matmul") {
        "matmul beyond rank 3 or with broadcast batch dimensions"
    } else if reason.contains("multiple of 16 bytes") {
        "batch-norm training/backward with channels not a multiple of 16 bytes"
    } else if reason.contains("channels-last only") {
        "batch-norm training/backward outside channels-last layouts"
    } else if reason.contains("innermost in memory") {
        "normalization over dims that are not innermost in memory"
    } else if reason.contains("TAN on FLOAT") {
        "TAN on FLOAT (cuDNN's is approximate)"
    } else if reason.contains("takes FLOAT, HALF and BFLOAT16") {
        "data type not claimed by CUDNN_ENGINE"
    } else if reason.contains("computes in") {
        "compute type other than FLOAT"
    } else {
        "other refusal (see the engine's debug log)"
    })
}

const KINDS: [&str; 13] = [
    "batch-norm training/backward with channels not a multiple of 16 bytes",
    "batch-norm training/backward outside channels-last layouts",
    "normalization over dims that are not innermost in memory",
    "operation not claimed by CUDNN_ENGINE (see its crate docs)",
    "strided layout: CUDNN_ENGINE claims packed tensors only",
    "pointwise broadcast of in_0 (only in_1 broadcasts in cuDNN)",
    "per-channel broadcast outside channels-last layouts (cuDNN's pointwise engines)",
    "FLOAT matmul (cuDNN computes it in TF32)",
    "matmul beyond rank 3 or with broadcast batch dimensions",
    "TAN on FLOAT (cuDNN's is approximate)",
    "data type not claimed by CUDNN_ENGINE",
    "compute type other than FLOAT",
    "other refusal (see the engine's debug log)",
];

fn skips() -> SkipList {
    KINDS.iter().fold(SkipList::new(), |list, &kind| {
        list.predicate(kind, move |case: &Case| {
            refusal_kind(&case.graph()) == Some(kind)
        })
    })
}

fn main() {
    let args = Arguments::from_args();
    if let Err(reason) = hipdnn_cudnn_provider::probe::probe() {
        // No GPU here: the refusal is what can be checked.
        let mut trials = vec![Trial::test("CUDNN_ENGINE/unavailable", move || {
            let [cudnn, _] = support::plugins();
            let plugin = hipdnn_conformance::PluginUnderTest::load(&cudnn);
            match plugin {
                Ok(p) if p.engines().is_empty() => Ok(()),
                Ok(_) => {
                    Err("the plugin made a handle on a machine without the engine's needs".into())
                }
                Err(e) if e.contains("admitted none") || e.contains("no handle") => Ok(()),
                Err(e) => Err(format!("unexpected load failure: {e}").into()),
            }
        })];
        let why = format!("CUDNN_ENGINE is unavailable here: {reason}");
        trials.extend(standard_cases().into_iter().map(|case| {
            let why = why.clone();
            Trial::ignorable_test(format!("CUDNN_ENGINE/{}", case.name), move || {
                Ok(Completion::ignored_with(why))
            })
        }));
        libtest_mimic::run(&args, trials).exit();
    }
    let [cudnn, _] = support::plugins();
    PluginSuite::new(cudnn)
        .with_run(
            EngineRun::engine("CUDNN_ENGINE")
                .label("CUDNN_ENGINE")
                .skips(skips()),
        )
        .main_with_args(args)
}
