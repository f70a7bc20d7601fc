//! Thread pools and static work splitting.
//!
//! Every kernel splits its work into a fixed number of contiguous parts that depends
//! only on the problem and the thread count, never on timing: results are the same from
//! run to run.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use rayon::prelude::*;

/// Where kernels run: a rayon pool of `threads` threads.
#[derive(Debug, Clone)]
pub struct Exec {
    pool: Arc<rayon::ThreadPool>,
    threads: usize,
}

impl Exec {
    /// A pool of `threads` threads (0: one per available core). Pools are shared per
    /// thread count within the process.
    pub fn new(threads: usize) -> Self {
        let threads = if threads == 0 {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        } else {
            threads
        };
        static POOLS: OnceLock<Mutex<HashMap<usize, Arc<rayon::ThreadPool>>>> = OnceLock::new();
        let mut pools = POOLS
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let pool = pools
            .entry(threads)
            .or_insert_with(|| {
                Arc::new(
                    rayon::ThreadPoolBuilder::new()
                        .num_threads(threads)
                        .thread_name(|i| format!("hipdnn-cpu-{i}"))
                        .build()
                        .expect("thread pool creation"),
                )
            })
            .clone();
        Self { pool, threads }
    }

    /// Number of threads.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Runs `f(part)` for `part in 0..parts`, in parallel on the pool.
    pub fn for_each(&self, parts: usize, f: impl Fn(usize) + Sync + Send) {
        if parts == 0 {
            return;
        }
        if parts == 1 || self.threads == 1 {
            self.pool.install(|| (0..parts).for_each(&f));
            return;
        }
        self.pool
            .install(|| (0..parts).into_par_iter().with_max_len(1).for_each(&f));
    }

    /// Runs `f` inside the pool (so nested rayon calls, e.g. the `gemm` crate's, use it).
    pub fn install<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        self.pool.install(f)
    }
}

impl Default for Exec {
    fn default() -> Self {
        Self::new(0)
    }
}

/// The `part`-th of `parts` near-equal contiguous ranges of `0..n`.
pub fn split(n: usize, parts: usize, part: usize) -> std::ops::Range<usize> {
    let base = n / parts;
    let extra = n % parts;
    let start = part * base + part.min(extra);
    let len = base + usize::from(part < extra);
    start..start + len
}

/// A pointer to read-only data that outlives a parallel section, shared by its threads.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SendPtr<T>(pub *const T);
// SAFETY: only made for read-only buffers that outlive the parallel section.
unsafe impl<T> Send for SendPtr<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for SendPtr<T> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_covers_everything_once() {
        for n in [0, 1, 7, 64] {
            for parts in 1..5 {
                let mut next = 0;
                for p in 0..parts {
                    let r = split(n, parts, p);
                    assert_eq!(r.start, next);
                    next = r.end;
                }
                assert_eq!(next, n);
            }
        }
    }
}
