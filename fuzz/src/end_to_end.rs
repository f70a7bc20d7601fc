//! `hipdnn run --check` on mutated graphs: every graph the in-process pipeline says the
//! CPU engine accepts (and that is small enough to run quickly) is written to a file and
//! run by the installed command, with the CPU plugin, under a time limit. A graph
//! `hipdnn run` accepts must pass `--check`; one that fails it, dies of a signal or runs
//! past the limit is a finding.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use hipdnn_flatbuffers_sdk::MAX_GRAPH_ELEMENTS_ENV;

use crate::mutate::Mutator;
use crate::targets::{self, Context, Target};
use crate::{Finding, Report, bump};

/// Elements a graph run end to end may hold (all its tensors together); passed to
/// the command as [`MAX_GRAPH_ELEMENTS_ENV`], so it refuses larger graphs itself.
pub const MAX_ELEMENTS: u64 = 1 << 22;

/// The longest a run may take.
pub const TIME_LIMIT: Duration = Duration::from_secs(10);

/// Where the command and the plugin are.
#[derive(Debug, Clone)]
pub struct Installed {
    /// The `hipdnn` binary.
    pub hipdnn: PathBuf,
    /// A directory holding the CPU plugin (`libhipdnn_cpu_provider.so`).
    pub plugins: PathBuf,
}

/// How one `hipdnn run --check` ended.
fn run_check(installed: &Installed, graph: &Path) -> Result<&'static str, String> {
    let mut child = Command::new(&installed.hipdnn)
        .arg("run")
        .arg(graph)
        .arg("--check")
        .env("HIPDNN_PLUGIN_DIR", &installed.plugins)
        .env(MAX_GRAPH_ELEMENTS_ENV, MAX_ELEMENTS.to_string())
        .env("HIPDNN_REFERENCE_MAX_BYTES", (1u64 << 31).to_string())
        .env_remove("HIPDNN_LOG_LEVEL")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", installed.hipdnn.display()))?;
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if start.elapsed() > TIME_LIMIT => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("ran past {TIME_LIMIT:?}"));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return Err(format!("cannot wait: {e}")),
        }
    }
    let output = child.wait_with_output().map_err(|e| e.to_string())?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    match output.status.code() {
        Some(0) => Ok("hipdnn run --check passes"),
        Some(2) => Err(format!("refused: {}", stderr.trim())),
        Some(1) if stderr.contains("check failed") => Err(format!("--check fails: {stderr}")),
        Some(1) => Err(format!("exit 1: {stderr}")),
        Some(code) => Err(format!("exit {code}: {stderr}")),
        None => Err(format!("killed by a signal: {stderr}")),
    }
}

fn elements(json: &str) -> Option<u64> {
    let graph = hipdnn_flatbuffers_sdk::model::Graph::from_json(json).ok()?;
    graph.tensors.iter().try_fold(0u64, |sum, t| {
        let n = t
            .dims
            .iter()
            .try_fold(1u64, |n, &d| n.checked_mul(u64::try_from(d).ok()?))?;
        sum.checked_add(n)
    })
}

/// Mutates the `graph-json` seeds for `cases` cases (or `time`), runs every mutant the
/// CPU engine accepts and that holds at most [`MAX_ELEMENTS`] elements through
/// `hipdnn run --check`.
pub fn fuzz_end_to_end(
    installed: &Installed,
    seeds: &[Vec<u8>],
    seed: u64,
    budget: crate::Budget,
) -> Report {
    let ctx = Context::new(Vec::new());
    let mut mutator = Mutator::new(seed);
    let mut pool: Vec<Vec<u8>> = seeds.to_vec();
    let mut report = Report::default();
    let start = Instant::now();
    let file = ctx.dir().join("graph.json");
    // One input: in process first, then (when the CPU engine takes it) the command.
    // Returns whether `hipdnn run --check` passed on it.
    let one = |input: &[u8], report: &mut Report| -> bool {
        let verdict = std::panic::catch_unwind(|| targets::run(Target::GraphJson, input, &ctx));
        let Ok(verdict) = verdict else {
            report.findings.push(Finding {
                message: "the in-process pipeline panicked (see the graph-json target)".into(),
                input: input.to_vec(),
            });
            return false;
        };
        if !verdict.accepted {
            bump(&mut report.refused, verdict.stage);
            return false;
        }
        if elements(&String::from_utf8_lossy(input)).is_none_or(|n| n > MAX_ELEMENTS) {
            bump(&mut report.refused, "too large to run here");
            return false;
        }
        std::fs::write(&file, input).expect("the scratch file");
        let begun = Instant::now();
        let outcome = run_check(installed, &file);
        report.slowest = report.slowest.max(begun.elapsed());
        match outcome {
            Ok(stage) => {
                report.accepted += 1;
                bump(&mut report.accepted_by, stage);
                true
            }
            Err(message) if message.starts_with("refused: ") => {
                bump(&mut report.refused, "hipdnn run refuses");
                let kind = refusal_kind(&message);
                if report.notes.len() < 8 && !report.notes.iter().any(|n| refusal_kind(n) == kind) {
                    report.notes.push(message);
                }
                false
            }
            Err(message) => {
                report.findings.push(Finding {
                    message,
                    input: input.to_vec(),
                });
                false
            }
        }
    };
    // The seeds first (their findings kept, their verdicts not counted), then mutants.
    for input in seeds {
        one(input, &mut report);
    }
    // A setup that runs nothing (no plugin found, a broken command) would otherwise
    // report every mutant as refused and find nothing.
    if report.accepted == 0 && !seeds.is_empty() {
        report.findings.push(Finding {
            message: format!(
                "hipdnn run --check passed none of the {} seeds (e.g. {}): check --hipdnn and \
                 --plugins",
                seeds.len(),
                report
                    .notes
                    .first()
                    .map_or("no refusal recorded", String::as_str)
            ),
            input: seeds[0].clone(),
        });
        report.elapsed = start.elapsed();
        return report;
    }
    report.accepted = 0;
    report.accepted_by.clear();
    report.refused.clear();
    while report.cases < budget.cases && start.elapsed() < budget.time {
        let base = &pool[mutator.below(pool.len())];
        let input = mutator.mutate(base, &pool, true);
        report.cases += 1;
        if one(&input, &mut report) && pool.len() < 512 {
            pool.push(input);
        }
    }
    report.elapsed = start.elapsed();
    report.child_max_rss = child_max_rss();
    report
}

/// A refusal's message without the file name and numbers, to keep one example of each.
fn refusal_kind(message: &str) -> String {
    message
        .split(": ")
        .skip(3)
        .collect::<Vec<_>>()
        .join(": ")
        .chars()
        .filter(|c| !c.is_ascii_digit())
        .take(60)
        .collect()
}

/// The largest resident set of any finished child (`getrusage`), in bytes.
fn child_max_rss() -> Option<u64> {
    // SAFETY: `rusage` is plain data, written by the call.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: a valid pointer to a `rusage`.
    let status = unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) };
    (status == 0).then(|| u64::try_from(usage.ru_maxrss).unwrap_or(0) * 1024)
}
