//! Per-stage timing of a plan's executions, for finding where a graph's time goes.
//!
//! With `HIPDNN_CPU_PROFILE=1` in the environment when a plan is built, every
//! execution times each stage (wall clock, from the thread running the plan), and the
//! plan prints a table to stderr when it is dropped: per stage its median and minimum
//! over the executions, its share of the sum of the medians, and what it runs. Without
//! the variable nothing is timed (one branch per stage).

use std::fmt::Write as _;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The environment variable that turns profiling on (`1`).
pub(super) const ENV: &str = "HIPDNN_CPU_PROFILE";

/// Stage times of every execution so far.
#[derive(Debug)]
pub(super) struct Profile {
    /// What each stage runs (its description and index space).
    stages: Vec<String>,
    /// `times[s]`: stage `s`'s time in every execution.
    times: Mutex<Vec<Vec<Duration>>>,
}

impl Profile {
    /// A profile for stages described by `stages` if [`ENV`] is `1`.
    pub(super) fn from_env(stages: Vec<String>) -> Option<Self> {
        let on = std::env::var_os(ENV).is_some_and(|v| v == "1");
        on.then(|| Self {
            times: Mutex::new(vec![Vec::new(); stages.len()]),
            stages,
        })
    }

    /// Records one execution's stage times (`times[s]` for stage `s`).
    pub(super) fn record(&self, times: &[Duration]) {
        let mut all = self.times.lock().unwrap_or_else(|e| e.into_inner());
        for (stage, &t) in all.iter_mut().zip(times) {
            stage.push(t);
        }
    }

    /// The table printed at drop: one line per stage, then the total.
    pub(super) fn report(&self) -> String {
        let all = self.times.lock().unwrap_or_else(|e| e.into_inner());
        let runs = all.first().map_or(0, Vec::len);
        let stats: Vec<(Duration, Duration)> = all
            .iter()
            .map(|t| {
                let mut t = t.clone();
                t.sort_unstable();
                (
                    t.get(t.len().saturating_sub(1) / 2)
                        .copied()
                        .unwrap_or_default(),
                    t.first().copied().unwrap_or_default(),
                )
            })
            .collect();
        let sum: Duration = stats.iter().map(|s| s.0).sum();
        // Each execution's stages together: the sum of the medians above is less than
        // their median wherever stages are slow in different executions.
        let mut whole: Vec<Duration> = (0..runs)
            .map(|r| all.iter().filter_map(|t| t.get(r)).sum())
            .collect();
        whole.sort_unstable();
        let whole = whole
            .get(runs.saturating_sub(1) / 2)
            .copied()
            .unwrap_or_default();
        let mut out = format!(
            "CPU_ENGINE profile: {} stages, {runs} executions, stage medians sum to {:.3} ms, \
             all stages of an execution take {:.3} ms (median)\n",
            self.stages.len(),
            sum.as_secs_f64() * 1e3,
            whole.as_secs_f64() * 1e3
        );
        out.push_str("stage   median_us      min_us   share  runs\n");
        for (s, ((median, min), what)) in stats.iter().zip(&self.stages).enumerate() {
            let share = if sum.is_zero() {
                0.0
            } else {
                median.as_secs_f64() / sum.as_secs_f64() * 100.0
            };
            let _ = writeln!(
                out,
                "{s:5} {:11.1} {:11.1} {share:6.1}%  {what}",
                median.as_secs_f64() * 1e6,
                min.as_secs_f64() * 1e6,
            );
        }
        out
    }
}

impl Drop for Profile {
    fn drop(&mut self) {
        let ran = self
            .times
            .lock()
            .is_ok_and(|t| t.first().is_some_and(|v| !v.is_empty()));
        if ran {
            eprint!("{}", self.report());
        }
    }
}

/// Times the stages of one execution when profiling is on.
pub(super) struct StageClock<'a> {
    profile: Option<&'a Profile>,
    times: Vec<Duration>,
    last: Instant,
}

impl<'a> StageClock<'a> {
    pub(super) fn new(profile: Option<&'a Profile>, stages: usize) -> Self {
        Self {
            profile,
            times: Vec::with_capacity(if profile.is_some() { stages } else { 0 }),
            last: Instant::now(),
        }
    }

    /// Marks the end of the stage that just ran.
    pub(super) fn lap(&mut self) {
        if self.profile.is_some() {
            let now = Instant::now();
            self.times.push(now - self.last);
            self.last = now;
        }
    }

    /// Records the execution (all stages ran).
    pub(super) fn finish(self) {
        if let Some(p) = self.profile {
            p.record(&self.times);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_gives_median_min_and_share_per_stage() {
        let p = Profile {
            stages: vec!["conv".into(), "pool".into()],
            times: Mutex::new(vec![Vec::new(); 2]),
        };
        for (a, b) in [(3, 1), (1, 3), (2, 1)] {
            p.record(&[
                Duration::from_micros(a * 100),
                Duration::from_micros(b * 100),
            ]);
        }
        let r = p.report();
        assert!(r.contains("2 stages, 3 executions"), "{r}");
        assert!(r.contains("sum to 0.300 ms"), "{r}");
        // Executions took 400, 400 and 300 µs: more than the medians' sum.
        assert!(r.contains("take 0.400 ms (median)"), "{r}");
        let conv = r.lines().find(|l| l.ends_with("conv")).unwrap();
        let cols: Vec<&str> = conv.split_whitespace().collect();
        assert_eq!(cols[..4], ["0", "200.0", "100.0", "66.7%"], "{r}");
        // Nothing is printed at drop when nothing ran.
        *p.times.lock().unwrap() = vec![Vec::new(); 2];
    }
}
