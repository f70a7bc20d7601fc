//! Thread pools and static work splitting.
//!
//! Every kernel splits its work into a fixed number of contiguous parts that depends
//! only on the problem and the thread count, never on timing: results are the same from
//! run to run, whichever thread runs a part.

use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// How long an idle worker spins for the next parallel section before it sleeps: the
/// sections of one execution follow each other within microseconds, and waking a
/// sleeping thread costs more than that.
const SPIN: Duration = Duration::from_micros(200);

/// Where kernels run: `threads` threads, the calling one among them.
///
/// [`Exec::for_each`] offers part `p` of a section first to thread `p % threads` (the
/// caller is thread 0), so the same thread gets the same share of consecutive sections
/// and finds its data in its cache; a thread done with its own parts takes the ones
/// other threads have not begun, so a worker the system has not scheduled (a busy
/// host) does not hold the section up. Which thread runs a part never changes what it
/// computes. Workers spin briefly between sections, then sleep. Pools are shared per
/// thread count within the process; a section started while another runs on the same
/// pool (another plan executing on another thread, or a nested call) runs on its
/// caller alone.
#[derive(Debug, Clone)]
pub struct Exec {
    pool: Arc<Pool>,
    threads: usize,
}

/// Bits of a claim word that count claimed parts; the rest tag the section.
const COUNT_BITS: u32 = 24;
const COUNT_MASK: u64 = (1 << COUNT_BITS) - 1;

/// One thread's claim word, alone on its cache line.
#[repr(align(64))]
struct Cursor(AtomicU64);

/// What the dispatcher and the workers share.
///
/// A section is published like a sequence lock: the dispatcher makes `epoch` odd,
/// writes the job's fields and re-tags every cursor, then makes `epoch` even. A worker
/// reads the fields between two equal even readings of `epoch`. Parts are claimed by a
/// compare-and-swap on a cursor carrying the section's tag, so a thread that read an
/// older section's job (descheduled since) cannot claim a part of a newer one; and a
/// claim can only succeed while its section has unclaimed parts, when the dispatcher
/// is still waiting and the closure alive.
struct Shared {
    epoch: AtomicUsize,
    /// The job's closure (a fat pointer: data and vtable words), parts and threads.
    f_data: AtomicUsize,
    f_meta: AtomicUsize,
    parts: AtomicUsize,
    threads: AtomicUsize,
    /// Thread `i`'s claim word: the section's tag above [`COUNT_BITS`], below it how
    /// many of its parts (`i`, `i + threads`, ...) are claimed.
    cursors: Box<[Cursor]>,
    /// Parts of the current section that have finished.
    completed: AtomicUsize,
    /// A part panicked.
    panicked: AtomicBool,
    /// Workers asleep (or about to be): the dispatcher wakes them only then.
    sleepers: AtomicUsize,
    lock: Mutex<()>,
    wake: Condvar,
    shutdown: AtomicBool,
    /// Section timing, kept only while profiling (see [`SectionTotals`]).
    totals: Option<Totals>,
}

/// The environment variable that turns profiling on (`1`): read by a pool when it is
/// made (section timing) and by a plan when it is built (stage timing).
pub(crate) const PROFILE_ENV: &str = "HIPDNN_CPU_PROFILE";

/// Running sums behind [`SectionTotals`], in nanoseconds.
struct Totals {
    sections: AtomicU64,
    span: AtomicU64,
    capacity: AtomicU64,
    busy: AtomicU64,
    lag: AtomicU64,
    /// When the current section was published, in ns since `origin`.
    published: AtomicU64,
    origin: Instant,
}

impl Totals {
    fn new() -> Self {
        Self {
            sections: AtomicU64::new(0),
            span: AtomicU64::new(0),
            capacity: AtomicU64::new(0),
            busy: AtomicU64::new(0),
            lag: AtomicU64::new(0),
            published: AtomicU64::new(0),
            origin: Instant::now(),
        }
    }

    /// Nanoseconds since `origin`.
    fn now(&self) -> u64 {
        nanos(self.origin.elapsed())
    }
}

/// What the parallel sections run on a pool took so far, summed over sections (all
/// zero unless `HIPDNN_CPU_PROFILE=1` was set when the pool was made). A section's
/// span is the calling thread's time from publishing it to seeing its last part end;
/// its capacity is that span times the pool's threads; busy is the time threads spent
/// inside parts. `capacity - busy` is thread time lost to waking, waiting on the
/// slowest part, and sections too small for every thread; of it, `lag` is each
/// thread's time from the section's publication to the start of its first part
/// (threads that ran no part of a section add nothing to it). The sums are pool-wide:
/// they mean one plan's sections only while no other plan runs on the same pool.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct SectionTotals {
    /// Sections run (those run inline on the caller included).
    pub sections: u64,
    /// Sum of the sections' spans.
    pub span: Duration,
    /// Sum of spans times threads.
    pub capacity: Duration,
    /// Sum of the time threads spent running parts.
    pub busy: Duration,
    /// Sum over sections and the threads that ran parts of them of the time from the
    /// section's publication to the thread's first part.
    pub lag: Duration,
}

impl std::ops::AddAssign for SectionTotals {
    fn add_assign(&mut self, other: Self) {
        self.sections += other.sections;
        self.span += other.span;
        self.capacity += other.capacity;
        self.busy += other.busy;
        self.lag += other.lag;
    }
}

impl SectionTotals {
    /// What was run between `earlier` and `self`.
    pub fn since(&self, earlier: &Self) -> Self {
        Self {
            sections: self.sections - earlier.sections,
            span: self.span.saturating_sub(earlier.span),
            capacity: self.capacity.saturating_sub(earlier.capacity),
            busy: self.busy.saturating_sub(earlier.busy),
            lag: self.lag.saturating_sub(earlier.lag),
        }
    }
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// One section as a thread read it.
#[derive(Clone, Copy)]
struct Job {
    f: *const (dyn Fn(usize) + Sync),
    parts: usize,
    threads: usize,
    tag: u64,
}

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

impl Shared {
    /// A pool's shared state; `profile`: time its sections.
    fn new(threads: usize, profile: bool) -> Self {
        Self {
            epoch: AtomicUsize::new(0),
            f_data: AtomicUsize::new(0),
            f_meta: AtomicUsize::new(0),
            parts: AtomicUsize::new(0),
            threads: AtomicUsize::new(0),
            cursors: (0..threads).map(|_| Cursor(AtomicU64::new(0))).collect(),
            completed: AtomicUsize::new(0),
            panicked: AtomicBool::new(false),
            sleepers: AtomicUsize::new(0),
            lock: Mutex::new(()),
            wake: Condvar::new(),
            shutdown: AtomicBool::new(false),
            totals: profile.then(Totals::new),
        }
    }
}

impl Pool {
    /// A pool of `threads` threads, timing its sections when [`PROFILE_ENV`] is `1`.
    fn new(threads: usize) -> Self {
        Self::with_profile(
            threads,
            std::env::var_os(PROFILE_ENV).is_some_and(|v| v == "1"),
        )
    }

    fn with_profile(threads: usize, profile: bool) -> Self {
        let shared = Arc::new(Shared::new(threads, profile));
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

    /// Counts a section of span `span` (ns) on this pool.
    fn add_section(&self, totals: &Totals, span: u64) {
        totals.sections.fetch_add(1, Ordering::Relaxed);
        totals.span.fetch_add(span, Ordering::Relaxed);
        totals
            .capacity
            .fetch_add(span * (self.workers as u64 + 1), Ordering::Relaxed);
    }
}

/// The tag of the section published at (even) `epoch`.
fn tag_of(epoch: usize) -> u64 {
    ((epoch as u64) >> 1) << COUNT_BITS
}

/// The section published at `epoch`, if it is still the current one (`None`: a newer
/// one is being published or is out; look again).
fn read_job(shared: &Shared, epoch: usize) -> Option<Job> {
    let f_data = shared.f_data.load(Ordering::Relaxed);
    let f_meta = shared.f_meta.load(Ordering::Relaxed);
    let parts = shared.parts.load(Ordering::Relaxed);
    let threads = shared.threads.load(Ordering::Relaxed);
    // Pairs with the dispatcher's release fence: had any of these loads seen a newer
    // section's field, this load sees that section's odd epoch (or later).
    std::sync::atomic::fence(Ordering::Acquire);
    if shared.epoch.load(Ordering::Relaxed) != epoch {
        return None;
    }
    // SAFETY: the two words were written together from one fat pointer by the
    // dispatcher of this epoch (checked just above: no newer writer began).
    let f = unsafe {
        std::mem::transmute::<[usize; 2], *const (dyn Fn(usize) + Sync)>([f_data, f_meta])
    };
    Some(Job {
        f,
        parts,
        threads,
        tag: tag_of(epoch),
    })
}

/// Claims the next unclaimed part of thread `owner`'s share, if any is left.
fn claim(shared: &Shared, job: &Job, owner: usize) -> Option<usize> {
    let share = (job.parts + job.threads - 1 - owner) / job.threads;
    let cursor = &shared.cursors[owner].0;
    let mut word = cursor.load(Ordering::Acquire);
    loop {
        if word & !COUNT_MASK != job.tag || (word & COUNT_MASK) as usize >= share {
            return None;
        }
        match cursor.compare_exchange_weak(word, word + 1, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return Some(owner + (word & COUNT_MASK) as usize * job.threads),
            Err(now) => word = now,
        }
    }
}

/// Thread `index`'s parts, then the parts other threads have not claimed.
fn run_parts(shared: &Shared, job: &Job, index: usize) {
    let run = |p: usize| {
        // SAFETY: part `p` was just claimed, so its section has a part that is not
        // done and its dispatcher still waits: the closure is alive.
        let f = unsafe { &*job.f };
        let start = shared.totals.as_ref().map(|_| Instant::now());
        if catch_unwind(AssertUnwindSafe(|| f(p))).is_err() {
            shared.panicked.store(true, Ordering::Relaxed);
        }
        if let (Some(totals), Some(start)) = (&shared.totals, start) {
            totals
                .busy
                .fetch_add(nanos(start.elapsed()), Ordering::Relaxed);
        }
        shared.completed.fetch_add(1, Ordering::AcqRel);
    };
    let mut first = true;
    let mut run = |p: usize| {
        if let (Some(totals), true) = (&shared.totals, first) {
            let lag = totals
                .now()
                .saturating_sub(totals.published.load(Ordering::Relaxed));
            totals.lag.fetch_add(lag, Ordering::Relaxed);
        }
        first = false;
        run(p);
    };
    while let Some(p) = claim(shared, job, index) {
        run(p);
    }
    for other in (1..job.threads).map(|d| (index + d) % job.threads) {
        while let Some(p) = claim(shared, job, other) {
            run(p);
        }
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
            if (now != seen && now.is_multiple_of(2)) || shared.shutdown.load(Ordering::Acquire) {
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
                    if (now != seen && now.is_multiple_of(2))
                        || shared.shutdown.load(Ordering::SeqCst)
                    {
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
        if let Some(job) = read_job(shared, epoch) {
            run_parts(shared, &job, index);
        }
        seen = epoch;
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

    /// The pool's section timing so far (zeros unless profiling; see
    /// [`SectionTotals`]).
    pub fn section_totals(&self) -> SectionTotals {
        let Some(t) = &self.pool.shared.totals else {
            return SectionTotals::default();
        };
        let d = |a: &AtomicU64| Duration::from_nanos(a.load(Ordering::Relaxed));
        SectionTotals {
            sections: t.sections.load(Ordering::Relaxed),
            span: d(&t.span),
            capacity: d(&t.capacity),
            busy: d(&t.busy),
            lag: d(&t.lag),
        }
    }

    /// Runs `f(part)` for `part in 0..parts`, in parallel on the pool; returns when
    /// every part has. A part that panics makes this panic (after all parts ran).
    pub fn for_each(&self, parts: usize, f: impl Fn(usize) + Sync + Send) {
        if parts == 0 {
            return;
        }
        let pool = &*self.pool;
        let shared = &*pool.shared;
        let start = shared.totals.as_ref().map(|_| Instant::now());
        let guard = match pool.dispatch.try_lock() {
            Ok(g)
                if parts > 1
                    && pool.workers > 0
                    && parts.div_ceil(pool.workers + 1) as u64 <= COUNT_MASK =>
            {
                g
            }
            locked => {
                (0..parts).for_each(&f);
                // A section run inline because another holds the pool (a nested one
                // is inside a part, timed already) is not counted.
                if let (Some(totals), Some(start), Ok(_)) = (&shared.totals, start, locked) {
                    let span = nanos(start.elapsed());
                    totals.busy.fetch_add(span, Ordering::Relaxed);
                    pool.add_section(totals, span);
                }
                return;
            }
        };
        let threads = pool.workers + 1;
        let f: &(dyn Fn(usize) + Sync) = &f;
        // SAFETY: the closure outlives every call of it: parts are only run once
        // claimed, and this function returns after every part has finished.
        let f: *const (dyn Fn(usize) + Sync + 'static) = unsafe { std::mem::transmute(f) };
        // SAFETY: a fat pointer is two words.
        let [f_data, f_meta] =
            unsafe { std::mem::transmute::<*const (dyn Fn(usize) + Sync), [usize; 2]>(f) };
        // Publish: odd epoch (readers retry), the job, the cursors re-tagged, even.
        let epoch = shared.epoch.load(Ordering::Relaxed) + 2;
        shared.epoch.store(epoch - 1, Ordering::Relaxed);
        // Everything below becomes visible after the odd epoch (see `read_job`).
        std::sync::atomic::fence(Ordering::Release);
        shared.completed.store(0, Ordering::Relaxed);
        shared.panicked.store(false, Ordering::Relaxed);
        shared.f_data.store(f_data, Ordering::Relaxed);
        shared.f_meta.store(f_meta, Ordering::Relaxed);
        shared.parts.store(parts, Ordering::Relaxed);
        shared.threads.store(threads, Ordering::Relaxed);
        for c in &shared.cursors[..threads] {
            c.0.store(tag_of(epoch), Ordering::Relaxed);
        }
        if let Some(totals) = &shared.totals {
            totals.published.store(totals.now(), Ordering::Relaxed);
        }
        // Publishes the fields and the cursors (the workers acquire the even epoch).
        shared.epoch.store(epoch, Ordering::SeqCst);
        if shared.sleepers.load(Ordering::SeqCst) > 0 {
            let _lock = shared.lock.lock().unwrap_or_else(|e| e.into_inner());
            shared.wake.notify_all();
        }
        let job = Job {
            f,
            parts,
            threads,
            tag: tag_of(epoch),
        };
        run_parts(shared, &job, 0);
        let mut spins = 0u32;
        while shared.completed.load(Ordering::Acquire) < parts {
            std::hint::spin_loop();
            spins = spins.wrapping_add(1);
            if spins > 1 << 16 {
                std::thread::yield_now();
            }
        }
        if let (Some(totals), Some(start)) = (&shared.totals, start) {
            pool.add_section(totals, nanos(start.elapsed()));
        }
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

/// Which piece of work part `p` of a section of `threads · per` parts does, so that
/// the parts [`Exec::for_each`] offers thread `t` first (`t`, `t + threads`, ...) are
/// its own pieces `t · per .. (t + 1) · per`, in order: a thread works through a
/// contiguous share, and one done early takes the next unstarted pieces of another.
pub fn piece(p: usize, threads: usize, per: usize) -> usize {
    (p % threads) * per + p / threads
}

/// Scratch buffers for a section whose parts outnumber its threads: one per thread,
/// and a part takes whichever is free (the same one, by `first`, where it can).
pub(crate) struct Slots<'a> {
    slots: Vec<Mutex<&'a mut [f32]>>,
}

impl<'a> Slots<'a> {
    /// One slot per buffer; a section that uses them runs at most that many parts at
    /// once (its threads).
    pub(crate) fn new(buffers: impl IntoIterator<Item = &'a mut [f32]>) -> Self {
        Self {
            slots: buffers.into_iter().map(Mutex::new).collect(),
        }
    }

    /// A buffer no running part holds, slot `first` if it is free. A part that
    /// panicked leaves its buffer to the next (the section panics at its end anyway).
    ///
    /// # Panics
    /// With no slots.
    pub(crate) fn take(&self, first: usize) -> std::sync::MutexGuard<'_, &'a mut [f32]> {
        let n = self.slots.len();
        assert!(n > 0, "no scratch slots");
        loop {
            for i in 0..n {
                match self.slots[(first + i) % n].try_lock() {
                    Ok(guard) => return guard,
                    Err(std::sync::TryLockError::Poisoned(e)) => return e.into_inner(),
                    Err(std::sync::TryLockError::WouldBlock) => {}
                }
            }
            // Only while another part is between taking a slot and starting: each
            // thread holds at most one, so one is free or about to be.
            std::hint::spin_loop();
        }
    }
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

    /// Sections one after another where one thread's first part is slow (so the
    /// others take the rest of its share): every part still runs exactly once per
    /// section, and no part of one section runs in the next.
    #[test]
    fn parts_taken_over_run_once() {
        use std::sync::atomic::AtomicU64;
        let exec = Exec::new(4);
        for round in 0..300usize {
            let parts = 1 + round % 37;
            let hits: Vec<AtomicU64> = (0..parts).map(|_| AtomicU64::new(0)).collect();
            exec.for_each(parts, |p| {
                if p == 1 && round % 3 == 0 {
                    std::thread::sleep(Duration::from_micros(300));
                }
                hits[p].fetch_add(1, Ordering::Relaxed);
            });
            assert!(
                hits.iter().all(|h| h.load(Ordering::Relaxed) == 1),
                "round {round}"
            );
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

    /// A thread takes its own parts first, then every part the other threads have not
    /// claimed (they may never come); a job read from an older section claims nothing.
    #[test]
    fn a_thread_takes_the_parts_others_have_not_begun() {
        let shared = Shared::new(4, false);
        let order = Mutex::new(Vec::new());
        let f = |p: usize| order.lock().unwrap().push(p);
        let f: &(dyn Fn(usize) + Sync) = &f;
        // SAFETY: the closure outlives every `run_parts` below.
        let f: *const (dyn Fn(usize) + Sync + 'static) = unsafe { std::mem::transmute(f) };
        let epoch = 6;
        for c in &shared.cursors[..] {
            c.0.store(tag_of(epoch), Ordering::Relaxed);
        }
        // Thread 2 has already claimed its first part.
        shared.cursors[2].0.fetch_add(1, Ordering::Relaxed);
        let job = |epoch| Job {
            f,
            parts: 10,
            threads: 4,
            tag: tag_of(epoch),
        };
        run_parts(&shared, &job(epoch - 2), 1);
        assert!(
            order.lock().unwrap().is_empty(),
            "a stale job claimed parts"
        );
        run_parts(&shared, &job(epoch), 1);
        assert_eq!(*order.lock().unwrap(), [1, 5, 9, 6, 3, 7, 0, 4, 8]);
        assert_eq!(shared.completed.load(Ordering::Relaxed), 9);
        // Nothing is left to claim, for anyone.
        run_parts(&shared, &job(epoch), 0);
        assert_eq!(order.lock().unwrap().len(), 9);
    }

    /// Section timing: spans, capacity, busy time and waits add up; a section of one
    /// part counts (its other threads idle); one nested in a part does not.
    #[test]
    fn section_totals_add_up() {
        let exec = Exec {
            pool: Arc::new(Pool::with_profile(2, true)),
            threads: 2,
        };
        let before = exec.section_totals();
        exec.for_each(4, |_| std::thread::sleep(Duration::from_millis(2)));
        let t = exec.section_totals().since(&before);
        assert_eq!(t.sections, 1);
        assert!(t.busy >= Duration::from_millis(8), "{t:?}");
        assert!(t.span >= Duration::from_millis(4), "{t:?}");
        assert_eq!(t.capacity, 2 * t.span);
        assert!(
            t.busy <= t.capacity && t.lag <= t.capacity - t.busy,
            "{t:?}"
        );
        let before = exec.section_totals();
        exec.for_each(1, |_| {
            std::thread::sleep(Duration::from_millis(1));
            exec.for_each(3, |_| {});
        });
        let t = exec.section_totals().since(&before);
        assert_eq!(t.sections, 1, "the nested section is not counted");
        assert_eq!((t.capacity, t.busy), (2 * t.span, t.span));
        // Without profiling nothing is counted.
        let quiet = Exec {
            pool: Arc::new(Pool::with_profile(2, false)),
            threads: 2,
        };
        quiet.for_each(4, |_| {});
        assert_eq!(quiet.section_totals(), SectionTotals::default());
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
