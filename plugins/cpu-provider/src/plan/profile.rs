//! Per-stage timing of a plan's executions, for finding where a graph's time goes.
//!
//! With `HIPDNN_CPU_PROFILE=1` in the environment when a plan is built, every
//! execution times each stage (wall clock, from the thread running the plan), and the
//! plan prints a table to stderr when it is dropped: per stage its median and minimum
//! over the executions, its share of the sum of the medians, and what it runs. Without
//! the variable nothing is timed (one branch per stage).
//!
//! The thread pool times its parallel sections under the same variable
//! ([`SectionTotals`]), so the table also says, per stage, how many sections it ran,
//! how much of its time the calling thread spent outside them (`serial`: planning
//! work, small steps run inline) and how much of its sections' thread time was idle
//! (`idle`: waking workers, waiting for the slowest part, parts fewer than threads;
//! `wake`, the part of it before each thread's first part).
//! Those two are what is lost to parallelism rather than to kernel speed. The section
//! sums are pool-wide: profile one plan executing at a time. Where more than one
//! execution ran, these shares leave the first out: it also packs and transforms the
//! filters a plan keeps (`cpu.constant_weights=1`), work of its own that later
//! executions skip (the medians and minimums include it).

use std::fmt::Write as _;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::kernels::exec::{Exec, SectionTotals};

/// The environment variable that turns profiling on (`1`).
pub(super) use crate::kernels::exec::PROFILE_ENV as ENV;

/// Stage times of every execution so far.
#[derive(Debug)]
pub(super) struct Profile {
    /// What each stage runs (its description and index space).
    stages: Vec<String>,
    /// `times[s]`: stage `s`'s time in every execution.
    times: Mutex<Vec<Vec<Duration>>>,
    /// `sections[s]`: stage `s`'s sections, summed over the executions after the
    /// first.
    sections: Mutex<Vec<SectionTotals>>,
    /// `first[s]`: stage `s`'s sections in the first execution.
    first: Mutex<Vec<SectionTotals>>,
}

impl Profile {
    /// A profile for stages described by `stages` if [`ENV`] is `1`.
    pub(super) fn from_env(stages: Vec<String>) -> Option<Self> {
        let on = std::env::var_os(ENV).is_some_and(|v| v == "1");
        on.then(|| Self {
            times: Mutex::new(vec![Vec::new(); stages.len()]),
            sections: Mutex::new(vec![SectionTotals::default(); stages.len()]),
            first: Mutex::new(Vec::new()),
            stages,
        })
    }

    /// Records one execution's stage times (`times[s]` for stage `s`) and sections.
    pub(super) fn record(&self, times: &[Duration], sections: &[SectionTotals]) {
        let mut all = self.times.lock().unwrap_or_else(|e| e.into_inner());
        let first = all.first().is_none_or(Vec::is_empty);
        for (stage, &t) in all.iter_mut().zip(times) {
            stage.push(t);
        }
        drop(all);
        if first {
            *self.first.lock().unwrap_or_else(|e| e.into_inner()) = sections.to_vec();
            return;
        }
        let mut sums = self.sections.lock().unwrap_or_else(|e| e.into_inner());
        for (sum, s) in sums.iter_mut().zip(sections) {
            *sum += *s;
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
        // The executions the shares below count: all but the first, where there are more.
        let skip = usize::from(runs > 1);
        let counted = (runs - skip).max(1) as f64;
        let sections = if skip == 1 {
            self.sections
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone()
        } else {
            self.first.lock().unwrap_or_else(|e| e.into_inner()).clone()
        };
        let timed = sections.iter().any(|s| s.sections > 0);
        let mut out = format!(
            "CPU_ENGINE profile: {} stages, {runs} executions, stage medians sum to {:.3} ms, \
             all stages of an execution take {:.3} ms (median)\n",
            self.stages.len(),
            sum.as_secs_f64() * 1e3,
            whole.as_secs_f64() * 1e3
        );
        // Per stage: its time over all executions, and the share of it outside sections
        // and of its sections' thread time idle.
        let lost = |time: Duration, s: &SectionTotals| {
            let capacity = s.capacity.as_secs_f64().max(1e-12);
            let serial = 1.0 - s.span.as_secs_f64() / time.as_secs_f64().max(1e-12);
            let idle = 1.0 - s.busy.as_secs_f64() / capacity;
            let wake = s.lag.as_secs_f64() / capacity;
            (
                serial.max(0.0) * 100.0,
                idle.clamp(0.0, 1.0) * 100.0,
                wake.clamp(0.0, 1.0) * 100.0,
            )
        };
        let stage_time: Vec<Duration> = all.iter().map(|t| t.iter().skip(skip).sum()).collect();
        if timed {
            let mut total = SectionTotals::default();
            sections.iter().for_each(|s| total += *s);
            let (serial, idle, wake) = lost(stage_time.iter().sum(), &total);
            let _ = writeln!(
                out,
                "parallel sections: {:.1} per execution; {serial:.1}% of the stages' time is \
                 outside them (serial), {idle:.1}% of their thread time is idle \
                 ({wake:.1}% before a thread's first part)",
                total.sections as f64 / counted
            );
            out.push_str(
                "stage   median_us      min_us   share  sects serial%  idle%  wake%  runs\n",
            );
        } else {
            out.push_str("stage   median_us      min_us   share  runs\n");
        }
        for (s, ((median, min), what)) in stats.iter().zip(&self.stages).enumerate() {
            let share = if sum.is_zero() {
                0.0
            } else {
                median.as_secs_f64() / sum.as_secs_f64() * 100.0
            };
            let _ = write!(
                out,
                "{s:5} {:11.1} {:11.1} {share:6.1}% ",
                median.as_secs_f64() * 1e6,
                min.as_secs_f64() * 1e6,
            );
            if timed {
                let (serial, idle, wake) = lost(stage_time[s], &sections[s]);
                let per_run = sections[s].sections as f64 / counted;
                let _ = write!(out, "{per_run:6.1} {serial:7.1} {idle:6.1} {wake:6.1} ");
            }
            let _ = writeln!(out, " {what}");
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
    exec: &'a Exec,
    times: Vec<Duration>,
    sections: Vec<SectionTotals>,
    last: Instant,
    last_sections: SectionTotals,
}

impl<'a> StageClock<'a> {
    pub(super) fn new(profile: Option<&'a Profile>, exec: &'a Exec, stages: usize) -> Self {
        let n = if profile.is_some() { stages } else { 0 };
        Self {
            profile,
            exec,
            times: Vec::with_capacity(n),
            sections: Vec::with_capacity(n),
            last: Instant::now(),
            last_sections: exec.section_totals(),
        }
    }

    /// Marks the end of the stage that just ran.
    pub(super) fn lap(&mut self) {
        if self.profile.is_some() {
            let now = Instant::now();
            let sections = self.exec.section_totals();
            self.times.push(now - self.last);
            self.sections.push(sections.since(&self.last_sections));
            self.last = now;
            self.last_sections = sections;
        }
    }

    /// Records the execution (all stages ran).
    pub(super) fn finish(self) {
        if let Some(p) = self.profile {
            p.record(&self.times, &self.sections);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile() -> Profile {
        Profile {
            stages: vec!["conv".into(), "pool".into()],
            times: Mutex::new(vec![Vec::new(); 2]),
            sections: Mutex::new(vec![SectionTotals::default(); 2]),
            first: Mutex::new(Vec::new()),
        }
    }

    fn us(n: u64) -> Duration {
        Duration::from_micros(n)
    }

    #[test]
    fn report_gives_median_min_and_share_per_stage() {
        let p = profile();
        for (a, b) in [(3, 1), (1, 3), (2, 1)] {
            p.record(&[us(a * 100), us(b * 100)], &[SectionTotals::default(); 2]);
        }
        let r = p.report();
        assert!(r.contains("2 stages, 3 executions"), "{r}");
        assert!(r.contains("sum to 0.300 ms"), "{r}");
        // Executions took 400, 400 and 300 µs: more than the medians' sum.
        assert!(r.contains("take 0.400 ms (median)"), "{r}");
        // Without section timing there are no section columns.
        assert!(!r.contains("sects"), "{r}");
        let conv = r.lines().find(|l| l.ends_with("conv")).unwrap();
        let cols: Vec<&str> = conv.split_whitespace().collect();
        assert_eq!(cols[..], ["0", "200.0", "100.0", "66.7%", "conv"], "{r}");
        // Nothing is printed at drop when nothing ran.
        *p.times.lock().unwrap() = vec![Vec::new(); 2];
    }

    #[test]
    fn report_splits_lost_time_into_serial_and_idle() {
        let p = profile();
        // A first execution that packs filters outside any section (left out of the
        // shares), then two alike. The conv stage: 400 µs, of which 300 in 2 sections
        // on 4 threads (1200 µs of thread time) with 900 µs busy. The pool stage: one
        // section over its whole 100 µs, every thread busy.
        let packing = SectionTotals {
            sections: 1,
            span: us(100),
            capacity: us(400),
            busy: us(100),
            lag: us(0),
        };
        p.record(&[us(5000), us(100)], &[packing, packing]);
        for _ in 0..2 {
            let conv = SectionTotals {
                sections: 2,
                span: us(300),
                capacity: us(1200),
                busy: us(900),
                lag: us(120),
            };
            let pool = SectionTotals {
                sections: 1,
                span: us(100),
                capacity: us(400),
                busy: us(400),
                lag: us(0),
            };
            p.record(&[us(400), us(100)], &[conv, pool]);
        }
        let r = p.report();
        // Of 1000 µs of stages, 800 in sections: 20% serial; of 3200 µs of section
        // thread time, 2600 busy: 18.75% idle.
        assert!(r.contains("parallel sections: 3.0 per execution"), "{r}");
        assert!(r.contains("20.0% of the stages' time is outside"), "{r}");
        // 240 of the 3200 µs before threads' first parts: 7.5%.
        assert!(
            r.contains("18.8% of their thread time is idle (7.5% before"),
            "{r}"
        );
        let cols = |name: &str| -> Vec<String> {
            let line = r.lines().find(|l| l.ends_with(name)).unwrap();
            line.split_whitespace().map(String::from).collect()
        };
        assert_eq!(
            cols("conv")[4..],
            ["2.0", "25.0", "25.0", "10.0", "conv"],
            "{r}"
        );
        assert_eq!(
            cols("pool")[4..],
            ["1.0", "0.0", "0.0", "0.0", "pool"],
            "{r}"
        );
    }

    #[test]
    fn a_single_execution_gives_its_own_shares() {
        let p = profile();
        let half = SectionTotals {
            sections: 1,
            span: us(50),
            capacity: us(100),
            busy: us(100),
            lag: us(0),
        };
        p.record(&[us(100), us(50)], &[half, half]);
        let r = p.report();
        assert!(r.contains("parallel sections: 2.0 per execution"), "{r}");
        // 100 of 150 µs in sections.
        assert!(r.contains("33.3% of the stages' time is outside"), "{r}");
    }
}
