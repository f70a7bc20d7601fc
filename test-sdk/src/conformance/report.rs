//! Outcomes and the report of a suite run.

use std::collections::BTreeMap;
use std::fmt;
use std::io::Write;

/// What happened to one case.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Every output within tolerance.
    Passed,
    /// Why it failed (provider error, panic, or the errors of the first bad output).
    Failed(String),
    /// The skip rule's reason.
    Skipped(String),
}

/// One case's outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct CaseResult {
    /// The case name.
    pub name: String,
    /// Its outcome.
    pub outcome: Outcome,
}

/// The outcome of a suite run.
#[derive(Debug, Clone)]
pub struct Report {
    /// The provider's name.
    pub provider: String,
    /// The seed the inputs were drawn with (re-run with `HIPDNN_TEST_SEED=<seed>`).
    pub seed: u64,
    /// One entry per case, in suite order.
    pub results: Vec<CaseResult>,
}

impl Report {
    fn count(&self, f: impl Fn(&Outcome) -> bool) -> usize {
        self.results.iter().filter(|r| f(&r.outcome)).count()
    }

    /// Number of passed cases.
    pub fn passed(&self) -> usize {
        self.count(|o| matches!(o, Outcome::Passed))
    }

    /// The failed cases with their reasons.
    pub fn failures(&self) -> Vec<(&str, &str)> {
        self.results
            .iter()
            .filter_map(|r| match &r.outcome {
                Outcome::Failed(why) => Some((r.name.as_str(), why.as_str())),
                _ => None,
            })
            .collect()
    }

    /// The skipped cases with their reasons.
    pub fn skips(&self) -> Vec<(&str, &str)> {
        self.results
            .iter()
            .filter_map(|r| match &r.outcome {
                Outcome::Skipped(why) => Some((r.name.as_str(), why.as_str())),
                _ => None,
            })
            .collect()
    }

    /// A multi-line summary: counts, then skips grouped by reason, then failures.
    pub fn summary(&self) -> String {
        use fmt::Write as _;
        let mut s = String::new();
        let (skips, failures) = (self.skips(), self.failures());
        let _ = writeln!(
            s,
            "conformance [{}] seed {}: {} cases, {} passed, {} failed, {} skipped",
            self.provider,
            self.seed,
            self.results.len(),
            self.passed(),
            failures.len(),
            skips.len()
        );
        let mut by_reason: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for (name, why) in &skips {
            by_reason.entry(why).or_default().push(name);
        }
        for (why, names) in by_reason {
            let _ = writeln!(s, "  SKIPPED {} case(s): {why}", names.len());
            for n in names {
                let _ = writeln!(s, "    {n}");
            }
        }
        for (name, why) in failures {
            let _ = writeln!(s, "  FAILED {name}: {why}");
        }
        s
    }

    /// Prints [`summary`](Self::summary) to stderr, bypassing the test harness's output
    /// capture so skips are visible on every run.
    pub fn print_summary(&self) {
        let _ = std::io::stderr().write_all(self.summary().as_bytes());
    }

    /// Panics, listing every failure, unless no case failed.
    ///
    /// # Panics
    /// When a case failed.
    pub fn assert_passed(&self) {
        let failures = self.failures();
        if !failures.is_empty() {
            let list: Vec<String> = failures
                .iter()
                .map(|(n, why)| format!("  {n}: {why}"))
                .collect();
            panic!(
                "{} of {} conformance cases failed for provider \"{}\" (seed {}):\n{}",
                failures.len(),
                self.results.len(),
                self.provider,
                self.seed,
                list.join("\n")
            );
        }
    }
}
