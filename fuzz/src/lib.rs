//! Mutation fuzzing of everything in hipdnn-rs that reads untrusted bytes.
//!
//! `cargo fuzz` needs a nightly toolchain; this harness runs on stable Rust and is
//! deterministic: a run is a function of its target, its seed corpus and a `u64` seed.
//! Each case takes an input from the pool (the committed corpus, `fuzz/corpus/TARGET/`,
//! plus inputs that got through the target), applies one to eight mutations
//! ([`mutate::Mutator`]), and runs the target ([`targets`]), which asserts its
//! invariants: a panic anywhere (a crash the C boundary would turn into
//! `INTERNAL_ERROR`, or a broken invariant) is a *finding*, kept with its input. The
//! driver also tracks the slowest case and, through [`CountingAlloc`], the largest
//! allocation.
//!
//! `scripts/fuzz.sh TARGET MINUTES` runs one target for a while (release build, fresh
//! seed); the crate's test runs every target briefly on a fixed seed, so
//! `cargo test --workspace` (the README's test command, and CI) does too.
//! `docs/robustness.md` records what the runs found.

pub mod end_to_end;
pub mod mutate;
pub mod seeds;
pub mod targets;

use std::alloc::{GlobalAlloc, Layout, System};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::mutate::Mutator;
use crate::targets::{Context, Target};

/// A global allocator that records the largest single allocation and the peak of live
/// bytes (install it with `#[global_allocator]` in the binary that fuzzes).
#[derive(Debug)]
pub struct CountingAlloc;

static LARGEST: AtomicUsize = AtomicUsize::new(0);
static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

impl CountingAlloc {
    /// The largest single allocation so far, in bytes.
    pub fn largest() -> usize {
        LARGEST.load(Ordering::Relaxed)
    }

    /// The most bytes live at once so far.
    pub fn peak() -> usize {
        PEAK.load(Ordering::Relaxed)
    }

    fn grew(size: usize) {
        LARGEST.fetch_max(size, Ordering::Relaxed);
        let live = LIVE.fetch_add(size, Ordering::Relaxed) + size;
        PEAK.fetch_max(live, Ordering::Relaxed);
    }
}

// SAFETY: every call is forwarded to the system allocator with the same arguments; the
// counters are side effects only.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        Self::grew(layout.size());
        // SAFETY: forwarded under the caller's contract.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        Self::grew(layout.size());
        // SAFETY: forwarded under the caller's contract.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: forwarded under the caller's contract.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        Self::grew(new_size);
        // SAFETY: forwarded under the caller's contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// `fuzz/corpus/` in this checkout.
pub fn corpus_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus")
}

/// `fuzz/corpus/TARGET/` in this checkout.
pub fn corpus_dir(target: Target) -> PathBuf {
    corpus_root().join(target.name())
}

/// The committed seed inputs of `target`, in file-name order.
///
/// # Errors
/// The corpus directory cannot be read or is empty.
pub fn load_corpus(target: Target) -> Result<Vec<Vec<u8>>, String> {
    load_dir(&corpus_dir(target))
}

/// Every file of `dir`, in file-name order (a corpus, or findings to replay).
///
/// # Errors
/// The directory cannot be read or holds no file.
pub fn load_dir(dir: &Path) -> Result<Vec<Vec<u8>>, String> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    paths.sort();
    let inputs: Vec<Vec<u8>> = paths
        .iter()
        .map(|p| std::fs::read(p).map_err(|e| format!("{}: {e}", p.display())))
        .collect::<Result<_, _>>()?;
    if inputs.is_empty() {
        return Err(format!(
            "{} is empty (`hipdnn-fuzz seed` writes the corpus)",
            dir.display()
        ));
    }
    Ok(inputs)
}

/// When a run stops.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    /// Most cases (mutated inputs) to run.
    pub cases: u64,
    /// Longest time to run.
    pub time: Duration,
}

/// One input that broke an invariant.
#[derive(Debug, Clone)]
pub struct Finding {
    /// The panic message.
    pub message: String,
    /// The input.
    pub input: Vec<u8>,
}

/// What a run did.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Mutated inputs run (the seeds themselves are run first and not counted).
    pub cases: u64,
    /// Of those, the ones the target accepted.
    pub accepted: u64,
    /// Refusals by stage, in first-seen order.
    pub refused: Vec<(&'static str, u64)>,
    /// Acceptances by stage.
    pub accepted_by: Vec<(&'static str, u64)>,
    /// Inputs that broke an invariant.
    pub findings: Vec<Finding>,
    /// The slowest case.
    pub slowest: Duration,
    /// Time the run took.
    pub elapsed: Duration,
    /// Examples of refusals worth reading (`run-check`: one per kind of message).
    pub notes: Vec<String>,
    /// The largest resident set of a child process (`run-check`), in bytes.
    pub child_max_rss: Option<u64>,
}

pub(crate) fn bump(list: &mut Vec<(&'static str, u64)>, stage: &'static str) {
    match list.iter_mut().find(|(s, _)| *s == stage) {
        Some((_, n)) => *n += 1,
        None => list.push((stage, 1)),
    }
}

impl Report {
    /// A summary: cases, accepted, refusals by stage, findings, slowest case.
    pub fn summary(&self, target: Target, seed: u64) -> String {
        let mut text = format!(
            "{}: seed {seed:#x}: {} cases in {:.1} s, {} accepted, {} refused, {} findings; slowest case {:.1} ms; largest allocation {} bytes, peak {} bytes live\n",
            target.name(),
            self.cases,
            self.elapsed.as_secs_f64(),
            self.accepted,
            self.cases - self.accepted,
            self.findings.len(),
            self.slowest.as_secs_f64() * 1e3,
            CountingAlloc::largest(),
            CountingAlloc::peak(),
        );
        for (stage, n) in &self.accepted_by {
            text.push_str(&format!("  accepted  {n:>8}  {stage}\n"));
        }
        for (stage, n) in &self.refused {
            text.push_str(&format!("  refused   {n:>8}  {stage}\n"));
        }
        if let Some(rss) = self.child_max_rss {
            text.push_str(&format!("  largest hipdnn run: {rss} bytes resident\n"));
        }
        for note in &self.notes {
            text.push_str(&format!("  e.g. {note}\n"));
        }
        for f in self.findings.iter().take(10) {
            let message: String = f.message.chars().take(400).collect();
            text.push_str(&format!("  FINDING: {message} ({} bytes)\n", f.input.len()));
        }
        text
    }
}

fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_else(|| "a panic without a message".to_owned())
}

/// Runs `target` from `seeds` under `budget` with mutation seed `seed`.
pub fn fuzz(target: Target, seeds: &[Vec<u8>], seed: u64, budget: Budget) -> Report {
    let ctx = Context::new(seeds::binary_graphs());
    let mut mutator = Mutator::new(seed);
    let mut pool: Vec<Vec<u8>> = seeds.to_vec();
    let mut report = Report::default();
    let start = Instant::now();
    let run_one = |input: &[u8], report: &mut Report| {
        let begun = Instant::now();
        let outcome = catch_unwind(AssertUnwindSafe(|| targets::run(target, input, &ctx)));
        report.slowest = report.slowest.max(begun.elapsed());
        match outcome {
            Ok(verdict) => Some(verdict),
            Err(payload) => {
                report.findings.push(Finding {
                    message: panic_text(payload.as_ref()),
                    input: input.to_vec(),
                });
                None
            }
        }
    };
    // The seeds themselves must pass: a seed a target refuses (or crashes on) is stale.
    for input in seeds {
        run_one(input, &mut report);
    }
    while report.cases < budget.cases && start.elapsed() < budget.time {
        let base = &pool[mutator.below(pool.len())];
        let input = mutator.mutate(base, &pool, target.is_text());
        report.cases += 1;
        if let Some(verdict) = run_one(&input, &mut report) {
            if verdict.accepted {
                report.accepted += 1;
                bump(&mut report.accepted_by, verdict.stage);
                // Accepted inputs join the pool (bounded), so mutations go deeper.
                if pool.len() < 512 {
                    pool.push(input);
                } else {
                    let at = mutator.below(pool.len() - seeds.len()) + seeds.len();
                    pool[at] = input;
                }
            } else {
                bump(&mut report.refused, verdict.stage);
            }
        }
    }
    report.elapsed = start.elapsed();
    report
}

/// A seed from the clock and the process id, for fresh runs.
pub fn fresh_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    nanos ^ (u64::from(std::process::id()) << 32)
}
