//! How long a cache line takes to go from one CPU to another and back: two threads,
//! pinned, hand a counter to each other through one atomic. A few tens of nanoseconds
//! mean the two CPUs share a cache (the same core complex); several hundred mean the
//! line crosses between last-level caches (another AMD core complex or socket).
//!
//! `cargo run --release -p hipdnn-cpu-provider --example core_latency -- [--cpus 0,1]
//! [--trips 200000] [--json]`
//!
//! The CPU engine's parallel sections hand data from thread to thread (Winograd's
//! phases, a stage's output read by the next stage's other thread), so their cost
//! depends on this. A virtual machine does not say where the host put its vCPUs: on
//! the 2-vCPU Zen 4 development VM the round trip between its two vCPUs measures
//! either about 80 ns or about 370 ns, switching every few minutes, and whole-graph
//! times follow it (`BENCHMARKS.md`). `bench/cpu_graphs_vs_onnxruntime.sh` records it
//! with every round.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// Pins the calling thread to `cpu`; false when the system refuses (no such CPU, or
/// not in this process's set).
fn pin(cpu: usize) -> bool {
    // SAFETY: `set` is a plain bit set, zeroed, then one bit set inside its size;
    // `sched_setaffinity` reads `size_of::<cpu_set_t>()` bytes of it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if cpu >= 8 * std::mem::size_of::<libc::cpu_set_t>() {
            return false;
        }
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0
    }
}

/// Nanoseconds per round trip between `a` (this thread) and `b`, over `trips` trips.
fn round_trip(a: usize, b: usize, trips: u64) -> Result<f64, String> {
    // The line both threads write, alone on its cache line.
    #[repr(align(128))]
    struct Line(AtomicU64);
    let line = Arc::new(Line(AtomicU64::new(0)));
    let other = Arc::clone(&line);
    let partner = std::thread::spawn(move || {
        if !pin(b) {
            return false;
        }
        // Odd values are this thread's to answer with the next even one.
        for i in 0..trips {
            loop {
                match other.0.load(Ordering::Acquire) {
                    v if v == 2 * i + 1 => break,
                    u64::MAX => return false,
                    _ => std::hint::spin_loop(),
                }
            }
            other.0.store(2 * i + 2, Ordering::Release);
        }
        true
    });
    if !pin(a) {
        // Tell the partner to stop waiting.
        line.0.store(u64::MAX, Ordering::Release);
        let _ = partner.join();
        return Err(format!("cannot run on CPU {a}"));
    }
    let start = Instant::now();
    for i in 0..trips {
        line.0.store(2 * i + 1, Ordering::Release);
        while line.0.load(Ordering::Acquire) != 2 * i + 2 {
            if partner.is_finished() {
                return Err(format!("cannot run on CPU {b}"));
            }
            std::hint::spin_loop();
        }
    }
    let elapsed = start.elapsed();
    partner
        .join()
        .map_err(|_| "the partner thread panicked".to_string())?;
    Ok(elapsed.as_nanos() as f64 / trips as f64)
}

fn main() {
    let mut cpus = vec![0usize, 1];
    let mut trips = 200_000u64;
    let mut json = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--cpus" => {
                let v = args.next().unwrap_or_default();
                cpus = match v
                    .split(',')
                    .map(str::parse)
                    .collect::<Result<Vec<usize>, _>>()
                {
                    Ok(c) if c.len() >= 2 => c,
                    _ => {
                        eprintln!("--cpus takes two or more CPU numbers, e.g. 0,1 (got {v:?})");
                        std::process::exit(2);
                    }
                };
            }
            "--trips" => {
                trips = match args.next().and_then(|v| v.parse().ok()) {
                    Some(n) if n > 0 => n,
                    _ => {
                        eprintln!("--trips takes a positive count");
                        std::process::exit(2);
                    }
                };
            }
            "--json" => json = true,
            "-h" | "--help" => {
                println!("core_latency [--cpus 0,1] [--trips 200000] [--json]");
                return;
            }
            other => {
                eprintln!("unknown argument {other}");
                std::process::exit(2);
            }
        }
    }
    // The first CPU against each of the others.
    let mut results = Vec::new();
    for &b in &cpus[1..] {
        match round_trip(cpus[0], b, trips) {
            Ok(ns) => results.push((b, ns)),
            Err(e) => {
                eprintln!("core_latency: {e}");
                std::process::exit(1);
            }
        }
    }
    if json {
        let pairs: Vec<String> = results
            .iter()
            .map(|(b, ns)| format!("{{\"cpus\":[{},{b}],\"round_trip_ns\":{ns:.1}}}", cpus[0]))
            .collect();
        println!("[{}]", pairs.join(","));
    } else {
        for (b, ns) in results {
            println!("CPUs {} and {b}: {ns:.1} ns per round trip", cpus[0]);
        }
    }
}
