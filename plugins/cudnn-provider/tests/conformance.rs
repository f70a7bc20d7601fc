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

/// The kinds of refusal, by a phrase of the engine's reason (first match wins): the
/// reasons name tensors and nodes; the kinds keep the skip list short.
const KINDS: [(&str, &str); 14] = [
    (
        "not densely packed",
        "strided layout: CUDNN_ENGINE claims packed tensors only",
    ),
    (
        "must have the output's dims",
        "pointwise broadcast of in_0 (only in_1 broadcasts in cuDNN)",
    ),
    (
        "does not broadcast",
        "pointwise broadcast of in_0 (only in_1 broadcasts in cuDNN)",
    ),
    (
        "cannot broadcast",
        "per-channel broadcast outside channels-last layouts (cuDNN's pointwise engines)",
    ),
    (
        "computes it in TF32",
        "FLOAT matmul (cuDNN computes it in TF32)",
    ),
    (
        "matmul",
        "matmul beyond rank 3 or with broadcast batch dimensions",
    ),
    (
        "multiple of 16 bytes",
        "batch-norm training/backward with channels not a multiple of 16 bytes",
    ),
    (
        "channels-last only",
        "batch-norm training/backward outside channels-last layouts",
    ),
    (
        "innermost in memory",
        "normalization over dims that are not innermost in memory",
    ),
    ("TAN on FLOAT", "TAN on FLOAT (cuDNN's is approximate)"),
    (
        "takes FLOAT, HALF and BFLOAT16",
        "data type not claimed by CUDNN_ENGINE",
    ),
    ("computes in", "compute type other than FLOAT"),
    (
        "is not supported by CUDNN_ENGINE",
        "operation not claimed by CUDNN_ENGINE (see its crate docs)",
    ),
    ("", "other refusal (see the engine's debug log)"),
];

/// Why the engine does not claim `graph`, by kind.
fn refusal_kind(graph: &Graph) -> Option<&'static str> {
    let reason = hipdnn_cudnn_provider::graph::Translation::new(graph).err()?;
    KINDS
        .iter()
        .find(|(phrase, _)| reason.contains(phrase))
        .map(|&(_, kind)| kind)
}

fn skips() -> SkipList {
    let mut kinds: Vec<&'static str> = Vec::new();
    for &(_, kind) in &KINDS {
        if !kinds.contains(&kind) {
            kinds.push(kind);
        }
    }
    kinds.into_iter().fold(SkipList::new(), |list, kind| {
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
