//! The CPU engine's own GEMM (a matmul plan: packing and the AVX2/FMA micro-kernels)
//! against the `gemm` crate on the same problem, both with 2 threads: the measurement
//! that justifies keeping a GEMM of our own for the forward paths (it also fuses the
//! epilogues of conv/matmul chains into its output tiles, which the crate cannot).
//!
//! `cargo bench -p hipdnn-cpu-provider --bench gemm -- --warm-up-time 1 --measurement-time 5`

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use hipdnn_cpu_provider::{CpuSettings, HostTensors, Plan};
use hipdnn_data_sdk::DataType;
use hipdnn_test_sdk::graphs::{Layout, matmul, uid_of};

const THREADS: usize = 2;

fn values(len: usize, seed: u32) -> Vec<f32> {
    (0..len)
        .map(|i| {
            ((i as u32).wrapping_mul(2_654_435_761).wrapping_add(seed) >> 20) as f32 / 4096.0 - 0.5
        })
        .collect()
}

fn gemm_vs_crate(c: &mut Criterion) {
    let mut group = c.benchmark_group("sgemm_2_threads");
    for n in [256usize, 512, 1024] {
        let (a, b) = (values(n * n, 1), values(n * n, 2));
        let mut out = vec![0f32; n * n];
        group.throughput(Throughput::Elements((2 * n * n * n) as u64));

        let graph = matmul(
            &[n as i64, n as i64],
            &[n as i64, n as i64],
            &Layout::Nchw,
            DataType::Float,
        );
        let settings = CpuSettings {
            threads: THREADS,
            ..CpuSettings::default()
        };
        let plan = Plan::from_model(&graph, &settings).expect("a matmul plan");
        let (ua, ub, uc) = (
            uid_of(&graph, "a"),
            uid_of(&graph, "b"),
            uid_of(&graph, "c"),
        );
        group.bench_with_input(BenchmarkId::new("cpu_engine", n), &n, |bench, _| {
            bench.iter(|| {
                let mut tensors = HostTensors::new()
                    .input(ua, &a)
                    .input(ub, &b)
                    .output(uc, &mut out);
                plan.run(black_box(&mut tensors)).expect("runs");
            })
        });

        group.bench_with_input(BenchmarkId::new("gemm_crate", n), &n, |bench, _| {
            bench.iter(|| {
                // SAFETY: row-major n×n matrices, `out` distinct from the inputs.
                unsafe {
                    gemm::gemm(
                        n,
                        n,
                        n,
                        out.as_mut_ptr(),
                        1,
                        n as isize,
                        false,
                        a.as_ptr(),
                        1,
                        n as isize,
                        b.as_ptr(),
                        1,
                        n as isize,
                        0.0,
                        1.0,
                        false,
                        false,
                        false,
                        gemm::Parallelism::Rayon(THREADS),
                    )
                }
            })
        });
    }
    group.finish();
}

criterion_group!(benches, gemm_vs_crate);
criterion_main!(benches);
