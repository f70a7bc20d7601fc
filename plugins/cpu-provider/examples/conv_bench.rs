//! ResNet-50's distinct convolutions (batch 1 and 8, fp32, NCHW and NHWC) and a
//! 1024³ matmul through CPU_ENGINE's in-process plan API; prints median times as JSON.
//!
//! `cargo run --release -p hipdnn-cpu-provider --example conv_bench -- [--threads N]
//! [--reps N] [--batches 1,8] [--layouts nchw,nhwc] [--filter NAME]`

use std::time::Instant;

use hipdnn_cpu_provider::{CpuSettings, HostTensors, plan_for};
use hipdnn_data_sdk::DataType;
use hipdnn_flatbuffers_sdk::GraphView;
use hipdnn_flatbuffers_sdk::model::{
    ConvolutionFwdAttributes, Graph, MatmulAttributes, Node, TensorAttributes,
};
use hipdnn_flatbuffers_sdk::wire::ConvMode;
use hipdnn_frontend::samples::RESNET50_CONVS;

fn strides(dims: &[i64], nhwc: bool) -> Vec<i64> {
    let order: Vec<usize> = if nhwc {
        vec![0, 2, 3, 1]
    } else {
        vec![0, 1, 2, 3]
    };
    let mut s = vec![0; 4];
    let mut acc = 1;
    for &d in order.iter().rev() {
        s[d] = acc;
        acc *= dims[d];
    }
    s
}

fn tensor(uid: i64, name: &str, dims: &[i64], strides: Vec<i64>) -> TensorAttributes {
    TensorAttributes {
        uid,
        name: name.into(),
        data_type: DataType::Float,
        dims: dims.to_vec(),
        strides,
        ..TensorAttributes::default()
    }
}

fn conv_graph(
    n: i64,
    (c, hw, k, f, s, p): (i64, i64, i64, i64, i64, i64),
    nhwc: bool,
) -> (Graph, [usize; 3]) {
    let o = (hw + 2 * p - f) / s + 1;
    let (xd, wd, yd) = ([n, c, hw, hw], [k, c, f, f], [n, k, o, o]);
    let g = Graph {
        name: "conv".into(),
        io_data_type: DataType::Float,
        compute_data_type: DataType::Float,
        intermediate_data_type: DataType::Float,
        tensors: vec![
            tensor(1, "x", &xd, strides(&xd, nhwc)),
            tensor(2, "w", &wd, strides(&wd, nhwc)),
            tensor(3, "y", &yd, strides(&yd, nhwc)),
        ],
        nodes: vec![Node::new(
            "conv",
            ConvolutionFwdAttributes {
                x_tensor_uid: 1,
                w_tensor_uid: 2,
                y_tensor_uid: 3,
                pre_padding: vec![p, p],
                post_padding: vec![p, p],
                stride: vec![s, s],
                dilation: vec![1, 1],
                conv_mode: ConvMode::CROSS_CORRELATION,
                ..ConvolutionFwdAttributes::default()
            },
        )],
        ..Graph::default()
    };
    let len = |d: &[i64]| d.iter().product::<i64>() as usize;
    (g, [len(&xd), len(&wd), len(&yd)])
}

/// CPU seconds used so far by all threads of this process (Linux `schedstat`; 0 where
/// unavailable).
fn cpu_secs() -> f64 {
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return 0.0;
    };
    dir.filter_map(|e| std::fs::read_to_string(e.ok()?.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .sum::<f64>()
        * 1e-9
}

/// Median seconds of `reps` runs after a warm-up (the minimum with `HIPDNN_BENCH_MIN=1`,
/// steadier on a busy machine while developing).
fn time<F: FnMut()>(reps: usize, mut f: F) -> (f64, f64) {
    f();
    let cpu0 = cpu_secs();
    let mut t: Vec<f64> = (0..reps)
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed().as_secs_f64()
        })
        .collect();
    let cpu = (cpu_secs() - cpu0) / reps as f64;
    t.sort_by(f64::total_cmp);
    if std::env::var_os("HIPDNN_BENCH_MIN").is_some_and(|v| v == "1") {
        (t[0], cpu)
    } else {
        (t[t.len() / 2], cpu)
    }
}

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let threads: usize = arg(&args, "--threads").map_or(Ok(2), |s| s.parse())?;
    let reps: usize = arg(&args, "--reps").map_or(Ok(10), |s| s.parse())?;
    let batches: Vec<i64> = arg(&args, "--batches")
        .unwrap_or_else(|| "1,8".into())
        .split(',')
        .map(|s| s.parse())
        .collect::<Result<_, _>>()?;
    let layouts = arg(&args, "--layouts").unwrap_or_else(|| "nchw,nhwc".into());
    let filter = arg(&args, "--filter");
    let settings = CpuSettings {
        threads,
        ..CpuSettings::default()
    };
    let mut rows = Vec::new();
    for layout in layouts.split(',') {
        let nhwc = layout == "nhwc";
        for &n in &batches {
            for &(name, c, hw, k, f, s, p) in RESNET50_CONVS {
                if filter.as_deref().is_some_and(|flt| !name.contains(flt)) {
                    continue;
                }
                let (g, [xl, wl, yl]) = conv_graph(n, (c, hw, k, f, s, p), nhwc);
                let bytes = g.to_bytes();
                let plan = plan_for(&GraphView::from_bytes(&bytes)?, &settings)?;
                let x: Vec<f32> = (0..xl).map(|i| ((i % 17) as f32 - 8.0) * 0.05).collect();
                let w: Vec<f32> = (0..wl).map(|i| ((i % 13) as f32 - 6.0) * 0.02).collect();
                let mut y = vec![0f32; yl];
                let o = (hw + 2 * p - f) / s + 1;
                let flops = 2.0 * (n * k * o * o * c * f * f) as f64;
                let mut ws = vec![0u8; plan.workspace_size()];
                let (secs, cpu) = time(reps, || {
                    plan.run_in(
                        &mut HostTensors::new()
                            .input(1, &x)
                            .input(2, &w)
                            .output(3, &mut y),
                        &mut ws,
                    )
                    .expect("runs");
                });
                rows.push(format!(
                    "{{\"op\":\"conv\",\"name\":\"{name}\",\"batch\":{n},\"layout\":\"{layout}\",\"ms\":{:.4},\"gflops\":{:.2},\"cpu_ms\":{:.4},\"impl\":\"{}\"}}",
                    secs * 1e3,
                    flops / secs / 1e9,
                    cpu * 1e3,
                    plan.describe()[0].split(':').next().unwrap_or("")
                ));
                eprintln!("{}", rows.last().expect("pushed"));
            }
        }
    }
    if filter.as_deref().is_none_or(|f| "matmul_1024".contains(f)) {
        let d = 1024;
        let g = Graph {
            name: "matmul".into(),
            io_data_type: DataType::Float,
            compute_data_type: DataType::Float,
            intermediate_data_type: DataType::Float,
            tensors: vec![
                tensor(1, "a", &[d, d], vec![d, 1]),
                tensor(2, "b", &[d, d], vec![d, 1]),
                tensor(3, "c", &[d, d], vec![d, 1]),
            ],
            nodes: vec![Node::new(
                "mm",
                MatmulAttributes {
                    a_tensor_uid: 1,
                    b_tensor_uid: 2,
                    c_tensor_uid: 3,
                    ..MatmulAttributes::default()
                },
            )],
            ..Graph::default()
        };
        let bytes = g.to_bytes();
        let plan = plan_for(&GraphView::from_bytes(&bytes)?, &settings)?;
        let a: Vec<f32> = (0..d * d).map(|i| (i % 7) as f32 * 0.1).collect();
        let b = a.clone();
        let mut c = vec![0f32; (d * d) as usize];
        let mut ws = vec![0u8; plan.workspace_size()];
        let (secs, cpu) = time(reps, || {
            plan.run_in(
                &mut HostTensors::new()
                    .input(1, &a)
                    .input(2, &b)
                    .output(3, &mut c),
                &mut ws,
            )
            .expect("runs");
        });
        rows.push(format!(
            "{{\"op\":\"matmul\",\"name\":\"matmul_1024\",\"batch\":1,\"layout\":\"rowmajor\",\"ms\":{:.4},\"gflops\":{:.2},\"cpu_ms\":{:.4},\"impl\":\"gemm engine\"}}",
            secs * 1e3,
            2.0 * (d * d * d) as f64 / secs / 1e9,
            cpu * 1e3
        ));
        eprintln!("{}", rows.last().expect("pushed"));
    }
    println!("[\n{}\n]", rows.join(",\n"));
    Ok(())
}
