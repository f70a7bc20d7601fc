//! Thread pools and static work splitting.
//!
//! Every kernel splits its work into a fixed number of contiguous parts that depends
//! only on the problem and the thread count, never on timing: results are the same from
//! run to run.

use std::cell::UnsafeCell;
use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// How long an idle worker spins for the next parallel section before it sleeps: the
/// sections of one execution follow each other within microseconds, and waking a
/// sleeping thread costs more than that.
const SPIN: Duration = Duration::from_micros(200);

/// Where kernels run: `threads` threads, the calling one among them.
///
/// [`Exec::for_each`] hands part `p` of a section to thread `p % threads` (the caller
/// is thread 0), so the same thread gets the same share of consecutive sections.
/// Workers spin briefly between sections, then sleep. Pools are shared per thread
/// count within the process; a section started while another runs on the same pool
/// (another plan executing on another thread, or a nested call) runs on its caller
/// alone.
#[derive(Debug, Clone)]
pub struct Exec {
    pool: Arc<Pool>,
    threads: usize,
}

/// One section's work: `parts` calls of the closure behind `f`.
#[derive(Clone, Copy)]
struct Job {
    f: *const (dyn Fn(usize) + Sync),
    parts: usize,
    /// Threads taking parts (the caller and the workers).
    threads: usize,
}

/// What the dispatcher and the workers share.
struct Shared {
    /// Bumped (release) once the section's job is in place.
    epoch: AtomicUsize,
    /// The current job: written by the dispatcher before bumping `epoch`, read by the
    /// workers after seeing the bump, cleared only after every worker is done.
    job: UnsafeCell<Option<Job>>,
    /// Workers done with the current section.
    done: AtomicUsize,
    /// A part panicked.
    panicked: AtomicBool,
    /// Workers asleep (or about to be): the dispatcher wakes them only then.
    sleepers: AtomicUsize,
    lock: Mutex<()>,
    wake: Condvar,
    shutdown: AtomicBool,
}

// SAFETY: `job` is written only by the dispatcher while no worker reads it (before the
// epoch bump, and after all workers reported done); the closure it points to is `Sync`
// and outlives the section (the dispatcher waits for every worker before returning).
unsafe impl Sync for Shared {}
// SAFETY: as above.
unsafe impl Send for Shared {}

/// The worker threads of one thread count, and the lock that lets one section in.
struct Pool {
    shared: Arc<Shared>,
    workers: usize,
    dispatch: Mutex<()>,
    /// A rayon pool of the same size for libraries that parallelise with rayon.
    rayon: OnceLock<rayon::ThreadPool>,
    threads: usize,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field("threads", &self.threads)
            .finish()
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.shared.shutdown.store(true, Ordering::Release);
        let _guard = self.shared.lock.lock().unwrap_or_else(|e| e.into_inner());
        self.shared.wake.notify_all();
    }
}

impl Pool {
    fn new(threads: usize) -> Self {
        let shared = Arc::new(Shared {
            epoch: AtomicUsize::new(0),
            job: UnsafeCell::new(None),
            done: AtomicUsize::new(0),
            panicked: AtomicBool::new(false),
            sleepers: AtomicUsize::new(0),
            lock: Mutex::new(()),
            wake: Condvar::new(),
            shutdown: AtomicBool::new(false),
        });
        let mut workers = 0;
        for index in 1..threads {
            let shared = Arc::clone(&shared);
            let spawned = std::thread::Builder::new()
                .name(format!("hipdnn-cpu-{index}"))
                .spawn(move || worker(&shared, index));
            if spawned.is_err() {
                break;
            }
            workers += 1;
        }
        Self {
            shared,
            workers,
            dispatch: Mutex::new(()),
            rayon: OnceLock::new(),
            threads,
        }
    }
}

/// Part `p` of a section runs on thread `p % job.threads`.
fn run_parts(job: Job, index: usize, shared: &Shared) {
    // SAFETY: the dispatcher keeps the closure alive until every worker is done.
    let f = unsafe { &*job.f };
    let mut p = index;
    while p < job.parts {
        if catch_unwind(AssertUnwindSafe(|| f(p))).is_err() {
            shared.panicked.store(true, Ordering::Relaxed);
        }
        p += job.threads;
    }
}

fn worker(shared: &Shared, index: usize) {
    let mut seen = 0;
    loop {
        // Spin for the next section, then sleep until one comes.
        let start = Instant::now();
        let mut spins = 0u32;
        let epoch = loop {
            let now = shared.epoch.load(Ordering::Acquire);
            if now != seen || shared.shutdown.load(Ordering::Acquire) {
                break now;
            }
            std::hint::spin_loop();
            spins = spins.wrapping_add(1);
            if !spins.is_multiple_of(256) {
                continue;
            }
            let waited = start.elapsed();
            if waited > SPIN / 8 && waited <= SPIN {
                // Past the first few microseconds, let other runnable threads have
                // the core (a machine with more threads than cores).
                std::thread::yield_now();
            }
            if waited > SPIN {
                let mut guard = shared.lock.lock().unwrap_or_else(|e| e.into_inner());
                shared.sleepers.fetch_add(1, Ordering::SeqCst);
                loop {
                    let now = shared.epoch.load(Ordering::SeqCst);
                    if now != seen || shared.shutdown.load(Ordering::SeqCst) {
                        break;
                    }
                    guard = shared.wake.wait(guard).unwrap_or_else(|e| e.into_inner());
                }
                shared.sleepers.fetch_sub(1, Ordering::SeqCst);
                drop(guard);
            }
        };
        if shared.shutdown.load(Ordering::Acquire) {
            return;
        }
        seen = epoch;
        // SAFETY: the job was written before the epoch bump we acquired, and stays
        // until this worker reports done.
        let job = unsafe { *shared.job.get() };
        if let Some(job) = job {
            run_parts(job, index, shared);
        }
        shared.done.fetch_add(1, Ordering::AcqRel);
    }
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
        static POOLS: OnceLock<Mutex<HashMap<usize, Arc<Pool>>>> = OnceLock::new();
        let mut pools = POOLS
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let pool = pools
            .entry(threads)
            .or_insert_with(|| Arc::new(Pool::new(threads)))
            .clone();
        Self { pool, threads }
    }

    /// Number of threads.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Runs `f(part)` for `part in 0..parts`, in parallel on the pool; returns when
    /// every part has. A part that panics makes this panic (after all parts ran).
    pub fn for_each(&self, parts: usize, f: impl Fn(usize) + Sync + Send) {
        if parts == 0 {
            return;
        }
        let pool = &*self.pool;
        let guard = match pool.dispatch.try_lock() {
            Ok(g) if parts > 1 && pool.workers > 0 => g,
            _ => {
                (0..parts).for_each(&f);
                return;
            }
        };
        let shared = &*pool.shared;
        let threads = pool.workers + 1;
        let f: &(dyn Fn(usize) + Sync) = &f;
        // SAFETY: the closure outlives the section: this function returns only after
        // every worker has reported done, and the job is cleared before that.
        let f: *const (dyn Fn(usize) + Sync + 'static) = unsafe { std::mem::transmute(f) };
        let job = Job { f, parts, threads };
        shared.done.store(0, Ordering::Relaxed);
        shared.panicked.store(false, Ordering::Relaxed);
        // SAFETY: no worker reads the job now (all finished the previous section).
        unsafe { *shared.job.get() = Some(job) };
        shared.epoch.fetch_add(1, Ordering::SeqCst);
        if shared.sleepers.load(Ordering::SeqCst) > 0 {
            let _lock = shared.lock.lock().unwrap_or_else(|e| e.into_inner());
            shared.wake.notify_all();
        }
        run_parts(job, 0, shared);
        let mut spins = 0u32;
        while shared.done.load(Ordering::Acquire) < pool.workers {
            std::hint::spin_loop();
            spins = spins.wrapping_add(1);
            if spins > 1 << 16 {
                std::thread::yield_now();
            }
        }
        // SAFETY: every worker is done with the job.
        unsafe { *shared.job.get() = None };
        let panicked = shared.panicked.load(Ordering::Relaxed);
        drop(guard);
        if panicked {
            resume_unwind(Box::new("a part of a parallel section panicked"));
        }
    }

    /// Runs `f` inside a rayon pool of this size (so rayon-parallel libraries, e.g. the
    /// `gemm` crate, use that many threads).
    pub fn install<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        let threads = self.threads;
        self.pool
            .rayon
            .get_or_init(|| {
                rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .thread_name(|i| format!("hipdnn-cpu-rayon-{i}"))
                    .build()
                    .expect("thread pool creation")
            })
            .install(f)
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
impl<T> SendPtr<T> {
    /// The pointer (a method, so that closures capture the whole `Sync` wrapper).
    pub(crate) fn get(self) -> *const T {
        self.0
    }
}

// SAFETY: only made for read-only buffers that outlive the parallel section.
unsafe impl<T> Send for SendPtr<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for SendPtr<T> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_part_runs_once_on_the_pool() {
        use std::sync::atomic::AtomicU64;
        for threads in [1, 2, 3, 8] {
            let exec = Exec::new(threads);
            for parts in [1, 2, 5, 64] {
                for _ in 0..50 {
                    let hits: Vec<AtomicU64> = (0..parts).map(|_| AtomicU64::new(0)).collect();
                    exec.for_each(parts, |p| {
                        hits[p].fetch_add(1, Ordering::Relaxed);
                    });
                    assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 1));
                }
            }
        }
    }

    #[test]
    fn nested_and_concurrent_sections_complete() {
        let exec = Exec::new(4);
        let total = AtomicUsize::new(0);
        exec.for_each(4, |_| {
            // Nested: runs on the calling thread alone.
            exec.for_each(3, |_| {
                total.fetch_add(1, Ordering::Relaxed);
            });
        });
        assert_eq!(total.load(Ordering::Relaxed), 12);
        let total = Arc::new(AtomicUsize::new(0));
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let (exec, total) = (exec.clone(), Arc::clone(&total));
                std::thread::spawn(move || {
                    for _ in 0..100 {
                        exec.for_each(8, |_| {
                            total.fetch_add(1, Ordering::Relaxed);
                        });
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        assert_eq!(total.load(Ordering::Relaxed), 4 * 100 * 8);
    }

    #[test]
    fn a_panicking_part_panics_the_caller_and_the_pool_goes_on() {
        let exec = Exec::new(3);
        let r = std::panic::catch_unwind(AssertUnwindSafe(|| {
            exec.for_each(6, |p| assert!(p != 4, "part 4"));
        }));
        assert!(r.is_err());
        let n = AtomicUsize::new(0);
        exec.for_each(6, |_| {
            n.fetch_add(1, Ordering::Relaxed);
        });
        assert_eq!(n.load(Ordering::Relaxed), 6);
    }

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
