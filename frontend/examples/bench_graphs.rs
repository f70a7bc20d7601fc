//! Writes the graphs the whole-graph CPU benchmark runs (`bench/cpu_graphs_vs_onnxruntime.sh`)
//! as JSON files: ResNet-50's 23 distinct convolutions, the bottleneck block, and the
//! whole network, at each batch and layout asked for; `matmul`: one 1024³ fp32 matmul;
//! `skinny`: matmuls of one and eight rows (a batch-1 linear layer: 1 × 4096 · 4096 ×
//! 4096, ResNet-50's classifier shape 1 × 2048 · 2048 × 1000, and 8 × 4096 · 4096 ×
//! 4096) (both written once, whatever the batches and layouts).
//!
//! `cargo run --release -p hipdnn-frontend --example bench_graphs -- --out DIR
//! [--batches 1,8] [--layouts nhwc,nchw] [--sets convs,block,resnet50,matmul,skinny]`
//!
//! Files: `DIR/<set>_<name>_b<N>_<layout>.json` (`convs`: one per convolution;
//! `block_bottleneck_…`, `resnet50_resnet50_…`; `matmul_1024_b1_rowmajor.json`;
//! `skinny_<M>x<K>x<N>_b1_rowmajor.json`).

use std::error::Error;
use std::path::PathBuf;

use hipdnn_data_sdk::{DataType, TensorLayout};
use hipdnn_frontend::samples::{self, RESNET50_CONVS};

fn arg(args: &[String], name: &str, default: &str) -> String {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
        .unwrap_or_else(|| default.to_owned())
}

fn main() -> Result<(), Box<dyn Error>> {
    let args: Vec<String> = std::env::args().collect();
    let out = PathBuf::from(arg(&args, "--out", ""));
    if out.as_os_str().is_empty() {
        return Err("--out DIR is required".into());
    }
    std::fs::create_dir_all(&out)?;
    let batches = arg(&args, "--batches", "1,8")
        .split(',')
        .map(str::parse::<i64>)
        .collect::<Result<Vec<_>, _>>()?;
    let sets = arg(&args, "--sets", "convs,block,resnet50");
    let mut written = 0;
    for layout_name in arg(&args, "--layouts", "nhwc,nchw").split(',') {
        let layout = match layout_name {
            "nhwc" => TensorLayout::ChannelsLast,
            "nchw" => TensorLayout::Packed,
            other => return Err(format!("unknown layout {other} (nhwc, nchw)").into()),
        };
        for &n in &batches {
            let mut graphs = Vec::new();
            for set in sets.split(',') {
                match set {
                    "convs" => graphs.extend(RESNET50_CONVS.iter().map(|&shape| {
                        ("convs", shape.0, samples::resnet50_conv(n, shape, layout))
                    })),
                    "block" => graphs.push((
                        "block",
                        "bottleneck",
                        samples::resnet_bottleneck(n, 256, 56, DataType::Float, layout),
                    )),
                    "resnet50" => graphs.push((
                        "resnet50",
                        "resnet50",
                        samples::resnet50_scaled(n, 224, 64, layout),
                    )),
                    "matmul" => {
                        let path = out.join("matmul_1024_b1_rowmajor.json");
                        if !path.exists() {
                            std::fs::write(&path, samples::matmul(1024, 1024, 1024).to_json())?;
                            written += 1;
                        }
                    }
                    "skinny" => {
                        for (m, k, n) in [(1, 4096, 4096), (1, 2048, 1000), (8, 4096, 4096)] {
                            let path = out.join(format!("skinny_{m}x{k}x{n}_b1_rowmajor.json"));
                            if !path.exists() {
                                std::fs::write(&path, samples::matmul(m, k, n).to_json())?;
                                written += 1;
                            }
                        }
                    }
                    other => {
                        return Err(format!(
                            "unknown set {other} (convs, block, resnet50, matmul, skinny)"
                        )
                        .into());
                    }
                }
            }
            for (set, name, graph) in graphs {
                let path = out.join(format!("{set}_{name}_b{n}_{layout_name}.json"));
                std::fs::write(&path, graph.to_json())?;
                written += 1;
            }
        }
    }
    eprintln!("wrote {written} graphs to {}", out.display());
    Ok(())
}
