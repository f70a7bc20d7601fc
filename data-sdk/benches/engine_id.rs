//! Our `const fn` FNV-1a against the `fnv` crate's `Hasher`, on engine names.
//!
//! Ids are computed when engines register and when users pass names, never in
//! a hot loop, so this bench only has to show that the hand-written `const fn`
//! (which the `fnv` crate cannot replace: its hasher is not usable in `const`)
//! costs nothing compared with the crate.

use std::hash::Hasher;
use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use hipdnn_data_sdk::engine_name_to_id;

// Both sides sit behind `#[inline(never)]` so neither is folded into the
// timing loop differently from the other.
#[inline(never)]
fn ours(name: &str) -> i64 {
    engine_name_to_id(name)
}

#[inline(never)]
fn fnv_crate(name: &str) -> i64 {
    let mut h = fnv::FnvHasher::default();
    h.write(name.as_bytes());
    h.finish() as i64
}

fn bench(c: &mut Criterion) {
    let names = [
        "CPU_ENGINE",
        "MIOPEN_ENGINE",
        "MIOPEN_ENGINE_DETERMINISTIC",
        "miopen.conv.solver_preference_override",
    ];
    let mut group = c.benchmark_group("engine_id");
    for name in names {
        assert_eq!(ours(name), fnv_crate(name));
        group.throughput(Throughput::Bytes(name.len() as u64));
        group.bench_with_input(BenchmarkId::new("ours", name.len()), name, |b, n| {
            b.iter(|| ours(black_box(n)))
        });
        group.bench_with_input(BenchmarkId::new("fnv", name.len()), name, |b, n| {
            b.iter(|| fnv_crate(black_box(n)))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
