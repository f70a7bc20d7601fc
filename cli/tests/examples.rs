//! The graphs in `examples/graphs/`: each is what its builder below makes (run with
//! `HIPDNN_BLESS=1` to rewrite them after changing a builder), parses, validates as the
//! backend validates it, and runs on the whole-graph reference executor, at full size
//! where that is quick and on a reduced-size variant from the same builder otherwise.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use hipdnn_backend::OperationGraph;
use hipdnn_backend::frontend::{
    ConvAttrs, DataType, GraphBuilder, PointwiseAttrs, PointwiseMode, Tensor, TensorDescriptor,
    TensorLayout, samples,
};
use hipdnn_flatbuffers_sdk::model::Graph;
use hipdnn_reference::data::{DataGen, byte_len, encode};
use hipdnn_reference::executor::execute_graph;
use hipdnn_reference::tensor::{HostTensor, dims_usize};
use hipdnn_test_sdk::graphs::{self, ConvSpec, Layout};

fn examples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/graphs")
}

/// 3×3 convolution (pad 1) + per-channel bias + ReLU, NCHW fp32.
fn conv_bias_relu(n: i64, c: i64, hw: i64) -> Graph {
    let spec = ConvSpec::new(&[n, c, hw, hw], &[c, c, 3, 3]).with(|p| p.padding(1));
    graphs::conv_bias_relu(&spec, &Layout::Nchw, DataType::Float)
}

/// A ResNet-50 bottleneck block (identity shortcut), NHWC fp32:
/// 1×1 conv `c → c/4` + bias + ReLU, 3×3 conv `c/4 → c/4` (pad 1) + bias + ReLU,
/// 1×1 conv `c/4 → c` + bias, add the block input, ReLU. Intermediates are packed
/// channels-first (virtual: no buffer has their layout).
fn resnet_bottleneck(n: i64, c: i64, hw: i64) -> Graph {
    fn virtual_named(g: &mut GraphBuilder, t: Tensor, name: &str) -> Tensor {
        let dims = g.tensor_info(t).unwrap().dims().to_vec();
        let strides = Layout::Nchw.strides_for(name, &dims);
        g.set_name(t, name)
            .unwrap()
            .set_strides(t, strides)
            .unwrap();
        t
    }
    let mid = c / 4;
    let mut g = GraphBuilder::new("resnet_bottleneck_nhwc")
        .io_data_type(DataType::Float)
        .compute_data_type(DataType::Float)
        .intermediate_data_type(DataType::Float);
    let nhwc = TensorLayout::ChannelsLast;
    let x = g
        .tensor(TensorDescriptor::new("x", [n, c, hw, hw]).layout(nhwc))
        .unwrap();
    let mut input = x;
    let stages = [
        ("conv1", c, mid, 1),
        ("conv2", mid, mid, 3),
        ("conv3", mid, c, 1),
    ];
    for (i, (name, cin, cout, k)) in stages.into_iter().enumerate() {
        let w = g
            .tensor(TensorDescriptor::new(format!("{name}_w"), [cout, cin, k, k]).layout(nhwc))
            .unwrap();
        let bias = g
            .tensor(TensorDescriptor::new(format!("{name}_bias"), [1, cout, 1, 1]).layout(nhwc))
            .unwrap();
        let pad = (k - 1) / 2;
        let attrs = ConvAttrs::new().name(name).padding([pad, pad]);
        let conv = g.conv_fprop(input, w, attrs).unwrap();
        let conv = virtual_named(&mut g, conv, &format!("{name}_out"));
        let add = PointwiseAttrs::new(PointwiseMode::ADD).name(format!("{name}_bias"));
        let biased = g.pointwise(&[conv, bias], add).unwrap();
        let biased = virtual_named(&mut g, biased, &format!("{name}_bias_out"));
        input = if i < 2 {
            let p = PointwiseAttrs::new(PointwiseMode::RELU_FWD).name(format!("{name}_relu"));
            let relu = g.pointwise(&[biased], p).unwrap();
            virtual_named(&mut g, relu, &format!("{name}_relu_out"))
        } else {
            biased
        };
    }
    let add = PointwiseAttrs::new(PointwiseMode::ADD).name("residual_add");
    let sum = g.pointwise(&[input, x], add).unwrap();
    let sum = virtual_named(&mut g, sum, "residual_out");
    let relu = PointwiseAttrs::new(PointwiseMode::RELU_FWD).name("relu");
    let y = g.pointwise(&[sum], relu).unwrap();
    g.set_name(y, "y")
        .unwrap()
        .set_output(y, true)
        .unwrap()
        .set_layout(y, nhwc)
        .unwrap();
    g.build().unwrap().into_graph()
}

/// Batch norm training forward with running statistics, NCHW fp32.
fn batchnorm_training(x_dims: &[i64]) -> Graph {
    graphs::batchnorm_training(x_dims, 1e-5, Some(0.1), &Layout::Nchw, DataType::Float)
}

/// `gelu(a · b + bias)`, fp32 row-major.
fn matmul_bias_gelu(batch: i64, m: i64, k: i64, n: i64) -> Graph {
    graphs::matmul_bias_gelu(
        &[batch, m, k],
        &[batch, k, n],
        &Layout::Nchw,
        DataType::Float,
    )
}

struct Example {
    file: &'static str,
    full: Graph,
    /// Run on the reference instead of `full` when that would be slow.
    reduced: Option<Graph>,
}

fn examples() -> Vec<Example> {
    vec![
        Example {
            file: "conv_bias_relu.json",
            full: conv_bias_relu(1, 64, 56),
            reduced: Some(conv_bias_relu(1, 8, 6)),
        },
        Example {
            file: "resnet_bottleneck_nhwc.json",
            full: resnet_bottleneck(1, 256, 56),
            reduced: Some(resnet_bottleneck(1, 16, 5)),
        },
        Example {
            file: "batchnorm_training.json",
            full: batchnorm_training(&[8, 32, 28, 28]),
            reduced: None,
        },
        Example {
            file: "resnet50.json",
            full: samples::resnet50(1),
            reduced: Some(samples::resnet50_scaled(1, 32, 2, TensorLayout::Packed)),
        },
        Example {
            file: "resnet50_nhwc.json",
            full: samples::resnet50_scaled(1, 224, 64, TensorLayout::ChannelsLast),
            reduced: Some(samples::resnet50_scaled(
                1,
                32,
                2,
                TensorLayout::ChannelsLast,
            )),
        },
        Example {
            file: "matmul_bias_gelu.json",
            full: matmul_bias_gelu(1, 128, 256, 128),
            reduced: Some(matmul_bias_gelu(2, 8, 16, 12)),
        },
    ]
}

fn run_reference(graph: &Graph) {
    let mut data = DataGen::new(7);
    let mut buffers = BTreeMap::new();
    let (mut ins, mut outs) = (Vec::new(), Vec::new());
    for node in &graph.nodes {
        node.attributes.tensor_uids(&mut ins, &mut outs);
    }
    for t in graph
        .tensors
        .iter()
        .filter(|t| !t.is_virtual && t.value.is_none())
    {
        let (dims, strides) = (dims_usize(&t.dims), dims_usize(&t.strides));
        let bytes = if outs.contains(&t.uid) {
            vec![0; byte_len(t.data_type, &dims, &strides).unwrap()]
        } else {
            let mut h = HostTensor::zeros(dims, strides);
            data.fill_as(&mut h, 0.5, 1.5, t.data_type);
            encode(t.data_type, &h).unwrap()
        };
        buffers.insert(t.uid, bytes);
    }
    let before = buffers.clone();
    execute_graph(graph, &mut buffers).unwrap_or_else(|e| panic!("{}: {e}", graph.name));
    for uid in outs.iter().filter(|u| before.contains_key(u)) {
        assert_ne!(
            before[uid], buffers[uid],
            "{}: output uid {uid} not written",
            graph.name
        );
    }
}

/// The graph's JSON form (`Graph::to_json`, fields in schema order) with each array of
/// numbers or names on one line.
fn readable_json(graph: &Graph) -> String {
    let pretty = graph.to_json();
    let lines: Vec<&str> = pretty.lines().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if line.ends_with('[') {
            let mut items = Vec::new();
            let mut j = i + 1;
            while j < lines.len() {
                let t = lines[j].trim();
                if t.starts_with(']') || t.ends_with('{') || t.ends_with('[') || t.starts_with('}')
                {
                    break;
                }
                items.push(t.trim_end_matches(','));
                j += 1;
            }
            if j < lines.len() && lines[j].trim().starts_with(']') {
                out.push_str(line);
                out.push_str(&items.join(", "));
                out.push_str(lines[j].trim());
                out.push('\n');
                i = j + 1;
                continue;
            }
        }
        out.push_str(line);
        out.push('\n');
        i += 1;
    }
    out
}

#[test]
fn example_graphs_are_their_builders_output_and_run_on_the_reference() {
    let bless = std::env::var_os("HIPDNN_BLESS").is_some();
    let dir = examples_dir();
    let mut listed = Vec::new();
    for ex in examples() {
        let path = dir.join(ex.file);
        listed.push(ex.file.to_owned());
        let json = readable_json(&ex.full);
        if bless {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &json).unwrap();
        }
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e} (HIPDNN_BLESS=1 writes it)", path.display()));
        assert_eq!(
            text, json,
            "{} differs from its builder (HIPDNN_BLESS=1 rewrites it)",
            ex.file
        );
        let parsed = Graph::from_json(&text).unwrap_or_else(|e| panic!("{}: {e}", ex.file));
        let op = OperationGraph::new(parsed).unwrap_or_else(|e| panic!("{}: {e}", ex.file));
        let small = match ex.reduced {
            Some(g) => OperationGraph::new(g).unwrap().graph().clone(),
            None => op.graph().clone(),
        };
        run_reference(&small);
    }
    // Every file in the directory is one of the above.
    let mut found: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
    found.sort();
    listed.sort();
    assert_eq!(
        found, listed,
        "examples/graphs holds graphs without a builder here"
    );
}

#[test]
fn every_example_file_parses_and_validates() {
    for entry in std::fs::read_dir(examples_dir()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let graph = Graph::from_json(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let op = OperationGraph::new(graph).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        // The binary form round-trips too.
        let again = OperationGraph::from_bytes(op.bytes()).unwrap();
        assert_eq!(again.graph(), op.graph(), "{}", path.display());
    }
}
