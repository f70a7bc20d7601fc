//! The provider conformance suite against `MIOPEN_ENGINE` and
//! `MIOPEN_ENGINE_DETERMINISTIC` as applications reach them: the provider's `.so`
//! loaded by the backend, on the software MIOpen and HIP (`hipdnn-soft-miopen`, host
//! memory behind HIP's allocation calls), so the provider's whole translation runs on
//! any machine. `conformance_rocm` runs the same suite on a real MIOpen where a HIP
//! device exists.
//!
//! The cases are the standard suite and the extended one (the fusions MIOpen runs as
//! one call: batch-norm training → activation, backward through a ReLU, convolution →
//! ReLU; normalizations at rank 3 and 5).
//!
//! Cases an engine does not claim (its own decision, which needs no device:
//! [`hipdnn_miopen_provider::reason_for_model`]) are ignored with the reason's kind;
//! every claimed case must pass.

mod support;

use std::sync::Arc;

use hipdnn_conformance::{EngineRun, PluginSuite};
use hipdnn_test_sdk::conformance::{Case, SkipList, extended_cases, standard_cases};
use libtest_mimic::Arguments;

/// The kinds of refusal, by a phrase of the engine's reason (first match wins).
pub const KINDS: [(&str, &str); 14] = [
    (
        "MIOPEN_ENGINE_DETERMINISTIC runs convolutions only",
        "not a convolution (the deterministic engine runs convolutions only)",
    ),
    (
        "asymmetric padding",
        "asymmetric padding (MIOpen takes one pad per dimension)",
    ),
    (
        "cross-correlation only",
        "convolution mode (MIOpen runs cross-correlation only)",
    ),
    (
        "packed channels-first order",
        "binary operation outside packed channels-first layouts",
    ),
    (
        "not densely packed",
        "strided layout: MIOpen claims packed tensors only",
    ),
    (
        "FLOAT and HALF",
        "BFLOAT16 standalone pointwise (MIOpen's activations and tensor ops take FLOAT and HALF)",
    ),
    (
        "only in_1 broadcasts",
        "pointwise broadcast of in_0 (only in_1 broadcasts in MIOpen)",
    ),
    (
        "does not broadcast",
        "pointwise broadcast of in_0 (only in_1 broadcasts in MIOpen)",
    ),
    (
        "is not supported by MIOPEN_ENGINE",
        "pointwise mode not claimed by MIOPEN_ENGINE",
    ),
    ("takes one input", "unary mode given extra inputs"),
    (
        "not a pattern MIOPEN_ENGINE runs",
        "graph not claimed by MIOPEN_ENGINE (matmul, reduction, layer/RMS norm, ...)",
    ),
    ("rank-", "rank outside what MIOpen runs"),
    (
        "takes FLOAT, HALF and BFLOAT16",
        "data type not claimed by MIOPEN_ENGINE",
    ),
    ("", "other refusal (see the engine's debug log)"),
];

/// Why the engine does not claim `case`, by kind.
fn refusal_kind(case: &Case, deterministic: bool) -> Option<&'static str> {
    let reason = hipdnn_miopen_provider::reason_for_model(&case.graph(), deterministic)?;
    KINDS
        .iter()
        .find(|(phrase, _)| reason.contains(phrase))
        .map(|&(_, kind)| kind)
}

fn skips(deterministic: bool) -> SkipList {
    let mut kinds: Vec<&'static str> = Vec::new();
    for &(_, kind) in &KINDS {
        if !kinds.contains(&kind) {
            kinds.push(kind);
        }
    }
    kinds.into_iter().fold(SkipList::new(), |list, kind| {
        list.predicate(kind, move |case: &Case| {
            refusal_kind(case, deterministic) == Some(kind)
        })
    })
}

fn main() {
    let args = Arguments::from_args();
    let [plugin, soft] = support::libraries();
    // SAFETY: no other thread runs yet.
    unsafe { support::use_soft_miopen(&soft) };
    let device = support::HipAllocator::open(&soft, "software HIP (host memory)")
        .unwrap_or_else(|e| panic!("{e}"));
    let mut cases = standard_cases();
    cases.extend(extended_cases());
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
