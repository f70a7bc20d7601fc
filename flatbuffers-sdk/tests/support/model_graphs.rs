//! Graphs written directly in the owned model, for this crate's tests and benchmarks: a
//! conv → bias → ReLU fusion (the golden wire file), a long pointwise chain, and
//! ResNet-50 inference (convolutions, batch norms, ReLUs, residual additions, max and
//! average pooling, the classifier).
//!
//! Applications and other crates build graphs with `hipdnn-frontend` (whose `samples`
//! are these graphs, built with its builder). This crate sits below the frontend, so its
//! tests (included with `#[path]`) and benchmarks (which measure the model API itself)
//! keep this copy. Data types are left unset, as the model allows before validation.

use hipdnn_data_sdk::{DataType, TensorLayout, packed_strides};

use hipdnn_flatbuffers_sdk::model::{
    BatchnormInferenceAttributes, ConvolutionFwdAttributes, Graph, Node, PointwiseAttributes,
    ResampleFwdAttributes, TensorAttributes,
};
use hipdnn_flatbuffers_sdk::wire::{ConvMode, PaddingMode, PointwiseMode, ResampleMode};

/// Accumulates tensors and nodes with fresh uids.
#[derive(Debug, Default)]
struct ModelBuilder {
    graph: Graph,
    next_uid: i64,
}

impl ModelBuilder {
    fn new(name: &str) -> Self {
        let graph = Graph {
            name: name.to_owned(),
            compute_data_type: DataType::Float,
            intermediate_data_type: DataType::Float,
            io_data_type: DataType::Float,
            ..Graph::default()
        };
        Self { graph, next_uid: 1 }
    }

    fn tensor(&mut self, name: &str, dims: &[i64], is_virtual: bool) -> i64 {
        let uid = self.next_uid;
        self.next_uid += 1;
        self.graph.tensors.push(TensorAttributes {
            uid,
            name: name.to_owned(),
            strides: packed_strides(dims, TensorLayout::Packed).expect("sample dims are valid"),
            dims: dims.to_vec(),
            is_virtual,
            ..TensorAttributes::default()
        });
        uid
    }

    fn node(
        &mut self,
        name: &str,
        attributes: impl Into<hipdnn_flatbuffers_sdk::model::NodeAttributes>,
    ) {
        self.graph.nodes.push(Node::new(name, attributes));
    }

    fn pointwise(
        &mut self,
        name: &str,
        operation: PointwiseMode,
        a: i64,
        b: Option<i64>,
        out: i64,
    ) {
        self.node(
            name,
            PointwiseAttributes {
                operation,
                in_0_tensor_uid: a,
                in_1_tensor_uid: b,
                out_0_tensor_uid: out,
                ..PointwiseAttributes::default()
            },
        );
    }

    /// A 2-D pool with square window `k`, stride `stride` and padding `pad`.
    fn pool(
        &mut self,
        name: &str,
        mode: ResampleMode,
        x: i64,
        y: i64,
        (k, stride, pad): (i64, i64, i64),
    ) {
        let padding_mode = if mode == ResampleMode::MAXPOOL {
            PaddingMode::NEG_INF_PAD
        } else {
            PaddingMode::ZERO_PAD
        };
        self.node(
            name,
            ResampleFwdAttributes {
                x_tensor_uid: x,
                y_tensor_uid: y,
                index_tensor_uid: None,
                pre_padding: vec![pad, pad],
                post_padding: vec![pad, pad],
                stride: vec![stride, stride],
                window: vec![k, k],
                resample_mode: mode,
                padding_mode,
                generate_index: false,
            },
        );
    }

    fn conv(&mut self, name: &str, x: i64, w: i64, y: i64, pad: i64, stride: i64) {
        self.node(
            name,
            ConvolutionFwdAttributes {
                x_tensor_uid: x,
                w_tensor_uid: w,
                y_tensor_uid: y,
                pre_padding: vec![pad, pad],
                post_padding: vec![pad, pad],
                stride: vec![stride, stride],
                dilation: vec![1, 1],
                conv_mode: ConvMode::CROSS_CORRELATION,
                ..ConvolutionFwdAttributes::default()
            },
        );
    }
}

/// A 3×3 convolution followed by a bias add and a ReLU, with virtual intermediates.
///
/// Tensors (uid: name, dims): 1 `x` `[1, 3, 8, 8]`, 2 `w` `[4, 3, 3, 3]`, 3 `conv_out`
/// (virtual), 4 `bias` `[1, 4, 1, 1]`, 5 `bias_out` (virtual), 6 `y` `[1, 4, 8, 8]`; all
/// `FLOAT`.
/// Its serialized form is the golden file `flatbuffers-sdk/tests/data/conv_bias_relu.bin`.
pub fn conv_bias_relu() -> Graph {
    let mut b = ModelBuilder::new("conv_bias_relu");
    let x = b.tensor("x", &[1, 3, 8, 8], false);
    let w = b.tensor("w", &[4, 3, 3, 3], false);
    let conv_out = b.tensor("conv_out", &[1, 4, 8, 8], true);
    let bias = b.tensor("bias", &[1, 4, 1, 1], false);
    let bias_out = b.tensor("bias_out", &[1, 4, 8, 8], true);
    let y = b.tensor("y", &[1, 4, 8, 8], false);
    b.conv("conv", x, w, conv_out, 1, 1);
    b.pointwise("bias", PointwiseMode::ADD, conv_out, Some(bias), bias_out);
    b.pointwise("relu", PointwiseMode::RELU_FWD, bias_out, None, y);
    b.graph
}

/// A chain of `len` unary pointwise nodes over a `[1, 64]` tensor (ReLU, tanh, sigmoid,
/// in turn); every intermediate is virtual.
pub fn pointwise_chain(len: usize) -> Graph {
    const MODES: [PointwiseMode; 3] = [
        PointwiseMode::RELU_FWD,
        PointwiseMode::TANH_FWD,
        PointwiseMode::SIGMOID_FWD,
    ];
    let mut b = ModelBuilder::new("pointwise_chain");
    b.graph.tensors.reserve(len + 1);
    b.graph.nodes.reserve(len);
    let mut current = b.tensor("t0", &[1, 64], false);
    for i in 0..len {
        let next = b.tensor(&format!("t{}", i + 1), &[1, 64], i + 1 < len);
        b.pointwise(
            &format!("pw{i}"),
            MODES[i % MODES.len()],
            current,
            None,
            next,
        );
        current = next;
    }
    b.graph
}

/// ResNet-50 inference at batch `n` and 224×224 input: the stem (7×7/2 convolution,
/// batch norm, ReLU, 3×3/2 max pool with padding 1), then 3, 4, 6 and 3 bottleneck
/// blocks (1×1, 3×3, 1×1 convolutions, each followed by batch norm, with a projection
/// shortcut opening each stage, a residual add and a ReLU), a global average pool and
/// the classifier (1×1 convolution 2048 → 1000 plus a bias). 54 convolutions, 53 batch
/// norms, 49 ReLUs, 17 additions, 2 pools.
pub fn resnet50(n: i64) -> Graph {
    let mut b = ModelBuilder::new("resnet50");
    let mut x = b.tensor("image", &[n, 3, 224, 224], false);
    let mut channels = 3;
    let mut size = 224;

    // conv → batch norm (→ ReLU); returns the output uid.
    let unit = |b: &mut ModelBuilder,
                tag: &str,
                x: i64,
                (cin, cout): (i64, i64),
                (k, stride, size_out): (i64, i64, i64),
                relu: bool| {
        let w = b.tensor(&format!("{tag}.w"), &[cout, cin, k, k], false);
        let c = b.tensor(&format!("{tag}.conv"), &[n, cout, size_out, size_out], true);
        b.conv(&format!("{tag}.conv"), x, w, c, k / 2, stride);
        let stats: Vec<i64> = ["mean", "inv_var", "scale", "bias"]
            .iter()
            .map(|s| b.tensor(&format!("{tag}.bn.{s}"), &[1, cout, 1, 1], false))
            .collect();
        let y = b.tensor(&format!("{tag}.bn"), &[n, cout, size_out, size_out], true);
        b.node(
            &format!("{tag}.bn"),
            BatchnormInferenceAttributes {
                x_tensor_uid: c,
                mean_tensor_uid: stats[0],
                inv_variance_tensor_uid: stats[1],
                scale_tensor_uid: stats[2],
                bias_tensor_uid: stats[3],
                y_tensor_uid: y,
            },
        );
        if !relu {
            return y;
        }
        let r = b.tensor(&format!("{tag}.relu"), &[n, cout, size_out, size_out], true);
        b.pointwise(&format!("{tag}.relu"), PointwiseMode::RELU_FWD, y, None, r);
        r
    };

    x = unit(&mut b, "stem", x, (channels, 64), (7, 2, size / 2), true);
    size /= 4;
    let pooled = b.tensor("stem.pool", &[n, 64, size, size], true);
    b.pool("stem.pool", ResampleMode::MAXPOOL, x, pooled, (3, 2, 1));
    x = pooled;
    channels = 64;
    let stages = [(3, 64, 1), (4, 128, 2), (6, 256, 2), (3, 512, 2)];
    for (stage, &(blocks, width, first_stride)) in stages.iter().enumerate() {
        for block in 0..blocks {
            let stride = if block == 0 { first_stride } else { 1 };
            let size_out = size / stride;
            let tag = format!("s{stage}b{block}");
            let a = unit(
                &mut b,
                &format!("{tag}.a"),
                x,
                (channels, width),
                (1, 1, size),
                true,
            );
            let c2 = unit(
                &mut b,
                &format!("{tag}.b"),
                a,
                (width, width),
                (3, stride, size_out),
                true,
            );
            let c3 = unit(
                &mut b,
                &format!("{tag}.c"),
                c2,
                (width, width * 4),
                (1, 1, size_out),
                false,
            );
            let shortcut = if block == 0 {
                let proj = (1, stride, size_out);
                unit(
                    &mut b,
                    &format!("{tag}.proj"),
                    x,
                    (channels, width * 4),
                    proj,
                    false,
                )
            } else {
                x
            };
            let sum = b.tensor(
                &format!("{tag}.add"),
                &[n, width * 4, size_out, size_out],
                true,
            );
            b.pointwise(
                &format!("{tag}.add"),
                PointwiseMode::ADD,
                c3,
                Some(shortcut),
                sum,
            );
            let out = b.tensor(
                &format!("{tag}.out"),
                &[n, width * 4, size_out, size_out],
                true,
            );
            b.pointwise(
                &format!("{tag}.out"),
                PointwiseMode::RELU_FWD,
                sum,
                None,
                out,
            );
            x = out;
            channels = width * 4;
            size = size_out;
        }
    }
    let pooled = b.tensor("pool", &[n, channels, 1, 1], true);
    b.pool(
        "pool",
        ResampleMode::AVGPOOL_EXCLUDE_PADDING,
        x,
        pooled,
        (size, size, 0),
    );
    let w = b.tensor("fc.w", &[1000, channels, 1, 1], false);
    let fc = b.tensor("fc.conv", &[n, 1000, 1, 1], true);
    b.conv("fc.conv", pooled, w, fc, 0, 1);
    let bias = b.tensor("fc.bias", &[1, 1000, 1, 1], false);
    let logits = b.tensor("logits", &[n, 1000, 1, 1], false);
    b.pointwise("fc.bias", PointwiseMode::ADD, fc, Some(bias), logits);
    b.graph
}
