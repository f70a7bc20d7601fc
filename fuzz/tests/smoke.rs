//! Every fuzz target, briefly, on the committed corpus with a fixed seed: what
//! `cargo test --workspace` (and so CI) runs. `HIPDNN_FUZZ_CASES` changes the number of
//! mutated cases per target (default 2000); `scripts/fuzz.sh` runs longer.

use std::time::Duration;

use hipdnn_fuzz::targets::{self, Context, Target};
use hipdnn_fuzz::{Budget, CountingAlloc, fuzz, load_corpus, seeds};

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

fn cases() -> u64 {
    std::env::var("HIPDNN_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000)
}

#[test]
fn every_target_survives_a_short_run_on_the_committed_corpus() {
    let budget = Budget {
        cases: cases(),
        time: Duration::from_secs(120),
    };
    for target in Target::ALL {
        let corpus = load_corpus(target).unwrap_or_else(|e| panic!("{e}"));
        let report = fuzz(target, &corpus, 1, budget);
        print!("{}", report.summary(target, 1));
        assert!(
            report.findings.is_empty(),
            "{}: {:#?}",
            target.name(),
            report.findings
        );
        assert!(
            report.slowest < Duration::from_secs(10),
            "{}",
            target.name()
        );
    }
    assert!(
        CountingAlloc::largest() < 1 << 31,
        "an allocation of 2 GiB or more"
    );
}

/// The graph seeds are valid graphs the CPU engine runs: a seed refused early would
/// leave the deeper stages unfuzzed.
#[test]
fn every_graph_seed_reaches_the_cpu_engine() {
    let ctx = Context::new(seeds::binary_graphs());
    for target in [Target::GraphJson, Target::GraphFb] {
        for (i, input) in load_corpus(target).unwrap().iter().enumerate() {
            let verdict = targets::run(target, input, &ctx);
            assert!(
                verdict.accepted,
                "{} seed {i}: {}",
                target.name(),
                verdict.stage
            );
        }
    }
}
