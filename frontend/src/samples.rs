//! Sample graphs for tests, benchmarks and documentation, built with the
//! [`GraphBuilder`]: a conv → bias → ReLU fusion (the golden wire file), a long pointwise
//! chain, and ResNet-50 inference (convolutions, batch norms, ReLUs, residual
//! additions, max and average pooling, the classifier).
//!
//! Every sample is `FLOAT` throughout (graph defaults: I/O, intermediate and compute),
//! packed channels-first, with uids 1, 2, … in the order the tensors are made, and comes
//! back as built: validated, every data type filled in.

use hipdnn_data_sdk::{DataType, TensorLayout};
use hipdnn_flatbuffers_sdk::model::Graph;
use hipdnn_flatbuffers_sdk::wire::PointwiseMode;

use crate::{
    BatchnormInferenceAttrs, ConvAttrs, FrontendError, GraphBuilder, MatmulAttrs, PointwiseAttrs,
    ResampleAttrs, Tensor, TensorDescriptor,
};

type Result<T> = std::result::Result<T, FrontendError>;

fn f32_builder(name: &str) -> GraphBuilder {
    GraphBuilder::new(name)
        .io_data_type(DataType::Float)
        .intermediate_data_type(DataType::Float)
        .compute_data_type(DataType::Float)
}

/// Builds `g`, panicking with the sample's name on an error: the samples are fixed,
/// valid graphs, so an error is a bug in this module.
fn finish(g: &GraphBuilder, made: Result<()>) -> Graph {
    made.and_then(|()| g.build())
        .unwrap_or_else(|e| panic!("sample graph \"{}\": {e}", g.name()))
        .into_graph()
}

/// An element-wise operation on `inputs`, its output named `name` (node `node`).
fn pointwise(
    g: &mut GraphBuilder,
    node: &str,
    mode: PointwiseMode,
    inputs: &[Tensor],
    name: &str,
) -> Result<Tensor> {
    let out = g.pointwise(inputs, PointwiseAttrs::new(mode).name(node))?;
    g.set_name(out, name)?;
    Ok(out)
}

/// A 3×3 convolution followed by a bias add and a ReLU, with virtual intermediates.
///
/// Tensors (uid: name, dims): 1 `x` `[1, 3, 8, 8]`, 2 `w` `[4, 3, 3, 3]`, 3 `conv_out`
/// (virtual), 4 `bias` `[1, 4, 1, 1]`, 5 `bias_out` (virtual), 6 `y` `[1, 4, 8, 8]`; all
/// `FLOAT`.
/// Its serialized form is the golden file `flatbuffers-sdk/tests/data/conv_bias_relu.bin`.
pub fn conv_bias_relu() -> Graph {
    let mut g = f32_builder("conv_bias_relu");
    let made = (|| {
        let x = g.tensor(TensorDescriptor::new("x", [1, 3, 8, 8]))?;
        let w = g.tensor(TensorDescriptor::new("w", [4, 3, 3, 3]))?;
        let conv = g.conv_fprop(x, w, ConvAttrs::new().name("conv").padding([1, 1]))?;
        g.set_name(conv, "conv_out")?;
        let bias = g.tensor(TensorDescriptor::new("bias", [1, 4, 1, 1]))?;
        let biased = pointwise(
            &mut g,
            "bias",
            PointwiseMode::ADD,
            &[conv, bias],
            "bias_out",
        )?;
        let y = pointwise(&mut g, "relu", PointwiseMode::RELU_FWD, &[biased], "y")?;
        g.set_output(y, true)?;
        Ok(())
    })();
    finish(&g, made)
}

/// One fp32 matmul `c[m, n] = a[m, k] · b[k, n]`, row-major (`a`, `b`, `c`).
///
/// ```
/// let g = hipdnn_frontend::samples::matmul(64, 32, 16);
/// assert_eq!(g.nodes.len(), 1);
/// ```
pub fn matmul(m: i64, k: i64, n: i64) -> Graph {
    let mut g = f32_builder(&format!("matmul_{m}x{k}x{n}"));
    let made = (|| {
        let a = g.tensor(TensorDescriptor::new("a", [m, k]))?;
        let b = g.tensor(TensorDescriptor::new("b", [k, n]))?;
        let c = g.matmul(a, b, MatmulAttrs::new().name("matmul"))?;
        g.set_name(c, "c")?;
        g.set_output(c, true)?;
        Ok(())
    })();
    finish(&g, made)
}

/// A chain of `len` unary pointwise nodes over a `[1, 64]` tensor (ReLU, tanh, sigmoid,
/// in turn); every intermediate is virtual.
///
/// # Panics
/// If `len` is 0 (the graph would have no node).
pub fn pointwise_chain(len: usize) -> Graph {
    const MODES: [PointwiseMode; 3] = [
        PointwiseMode::RELU_FWD,
        PointwiseMode::TANH_FWD,
        PointwiseMode::SIGMOID_FWD,
    ];
    assert!(len > 0, "a pointwise chain needs at least one node");
    let mut g = f32_builder("pointwise_chain");
    let made = (|| {
        let mut current = g.tensor(TensorDescriptor::new("t0", [1, 64]))?;
        for i in 0..len {
            let mode = MODES[i % MODES.len()];
            let name = format!("t{}", i + 1);
            current = pointwise(&mut g, &format!("pw{i}"), mode, &[current], &name)?;
        }
        g.set_output(current, true)?;
        Ok(())
    })();
    finish(&g, made)
}

/// A ResNet-50 bottleneck block with an identity shortcut, as inference runs it with
/// batch norms folded into the convolutions: 1×1 conv `c → c/4` + bias + ReLU, 3×3 conv
/// `c/4 → c/4` (padding 1) + bias + ReLU, 1×1 conv `c/4 → c` + bias, add the block
/// input, ReLU. Inputs, weights, biases and the output are `data_type` in `layout`;
/// intermediates are virtual; the graph computes in `FLOAT`.
///
/// Tensors: `x` `[n, c, hw, hw]`, `conv{1,2,3}_w`, `conv{1,2,3}_bias` `[1, cout, 1, 1]`,
/// `y` like `x`. At `c = 256`, `hw = 56` this is the block of ResNet-50's first stage
/// (0.437 GFLOP per image).
///
/// # Panics
/// If `c` is not a positive multiple of 4 or `n`/`hw` is not positive.
pub fn resnet_bottleneck(
    n: i64,
    c: i64,
    hw: i64,
    data_type: DataType,
    layout: hipdnn_data_sdk::TensorLayout,
) -> Graph {
    assert!(c > 0 && c % 4 == 0 && n > 0 && hw > 0, "bottleneck shape");
    let mid = c / 4;
    let mut g = GraphBuilder::new("resnet_bottleneck")
        .io_data_type(data_type)
        .intermediate_data_type(DataType::Float)
        .compute_data_type(DataType::Float);
    let made = (|| {
        let x = g.tensor(TensorDescriptor::new("x", [n, c, hw, hw]).layout(layout))?;
        let mut input = x;
        for (i, (name, cin, cout, k)) in [
            ("conv1", c, mid, 1),
            ("conv2", mid, mid, 3),
            ("conv3", mid, c, 1),
        ]
        .into_iter()
        .enumerate()
        {
            let w = g.tensor(
                TensorDescriptor::new(format!("{name}_w"), [cout, cin, k, k]).layout(layout),
            )?;
            let bias = g.tensor(
                TensorDescriptor::new(format!("{name}_bias"), [1, cout, 1, 1]).layout(layout),
            )?;
            let pad = (k - 1) / 2;
            let conv = g.conv_fprop(input, w, ConvAttrs::new().name(name).padding([pad, pad]))?;
            g.set_name(conv, format!("{name}_out"))?;
            let biased = pointwise(
                &mut g,
                &format!("{name}_bias"),
                PointwiseMode::ADD,
                &[conv, bias],
                &format!("{name}_bias_out"),
            )?;
            input = if i < 2 {
                pointwise(
                    &mut g,
                    &format!("{name}_relu"),
                    PointwiseMode::RELU_FWD,
                    &[biased],
                    &format!("{name}_relu_out"),
                )?
            } else {
                biased
            };
        }
        let sum = pointwise(
            &mut g,
            "residual_add",
            PointwiseMode::ADD,
            &[input, x],
            "residual_out",
        )?;
        let y = pointwise(&mut g, "relu", PointwiseMode::RELU_FWD, &[sum], "y")?;
        g.set_output(y, true)?.set_layout(y, layout)?;
        Ok(())
    })();
    finish(&g, made)
}

/// ResNet-50 v1.5's 23 distinct convolutions (the stride sits in the 3×3 of each
/// stage's first block): `(name, input channels, input height = width, output channels,
/// filter size, stride, padding)`.
pub const RESNET50_CONVS: &[(&str, i64, i64, i64, i64, i64, i64)] = &[
    ("conv1_7x7_s2", 3, 224, 64, 7, 2, 3),
    ("l1_1x1_64_64", 64, 56, 64, 1, 1, 0),
    ("l1_3x3_64", 64, 56, 64, 3, 1, 1),
    ("l1_1x1_64_256", 64, 56, 256, 1, 1, 0),
    ("l1_1x1_256_64", 256, 56, 64, 1, 1, 0),
    ("l2_1x1_256_128", 256, 56, 128, 1, 1, 0),
    ("l2_3x3_128_s2", 128, 56, 128, 3, 2, 1),
    ("l2_1x1_128_512", 128, 28, 512, 1, 1, 0),
    ("l2_down_256_512_s2", 256, 56, 512, 1, 2, 0),
    ("l2_1x1_512_128", 512, 28, 128, 1, 1, 0),
    ("l2_3x3_128", 128, 28, 128, 3, 1, 1),
    ("l3_1x1_512_256", 512, 28, 256, 1, 1, 0),
    ("l3_3x3_256_s2", 256, 28, 256, 3, 2, 1),
    ("l3_1x1_256_1024", 256, 14, 1024, 1, 1, 0),
    ("l3_down_512_1024_s2", 512, 28, 1024, 1, 2, 0),
    ("l3_1x1_1024_256", 1024, 14, 256, 1, 1, 0),
    ("l3_3x3_256", 256, 14, 256, 3, 1, 1),
    ("l4_1x1_1024_512", 1024, 14, 512, 1, 1, 0),
    ("l4_3x3_512_s2", 512, 14, 512, 3, 2, 1),
    ("l4_1x1_512_2048", 512, 7, 2048, 1, 1, 0),
    ("l4_down_1024_2048_s2", 1024, 14, 2048, 1, 2, 0),
    ("l4_1x1_2048_512", 2048, 7, 512, 1, 1, 0),
    ("l4_3x3_512", 512, 7, 512, 3, 1, 1),
];

/// One convolution of [`RESNET50_CONVS`] alone at batch `n`: `x` `[n, cin, hw, hw]` and
/// `w` `[cout, cin, f, f]` in `layout`, `y` (the output) in `layout` too.
pub fn resnet50_conv(
    n: i64,
    (name, cin, hw, cout, f, stride, pad): (&str, i64, i64, i64, i64, i64, i64),
    layout: TensorLayout,
) -> Graph {
    let mut g = f32_builder(name);
    let made = (|| {
        let x = g.tensor(TensorDescriptor::new("x", [n, cin, hw, hw]).layout(layout))?;
        let w = g.tensor(TensorDescriptor::new("w", [cout, cin, f, f]).layout(layout))?;
        let attrs = ConvAttrs::new()
            .name("conv")
            .padding([pad, pad])
            .stride([stride, stride]);
        let y = g.conv_fprop(x, w, attrs)?;
        g.set_name(y, "y")?;
        g.set_output(y, true)?.set_layout(y, layout)?;
        Ok(())
    })();
    finish(&g, made)
}

/// ResNet-50 inference at batch `n` and 224×224 input: the stem (7×7/2 convolution,
/// batch norm, ReLU, 3×3/2 max pool with padding 1), then 3, 4, 6 and 3 bottleneck
/// blocks (1×1, 3×3, 1×1 convolutions, each followed by batch norm, with a projection
/// shortcut opening each stage, a residual add and a ReLU), a global average pool and
/// the classifier (a 1×1 convolution 2048 → 1000 plus a bias). 54 convolutions, 53 batch
/// norms, 49 ReLUs, 17 additions, 2 pools; the one output is `logits` `[n, 1000, 1, 1]`.
pub fn resnet50(n: i64) -> Graph {
    resnet50_scaled(n, 224, 64, TensorLayout::Packed)
}

/// [`resnet50`] on an `image`×`image` input with `width` stem channels (the network has
/// 224 and 64; the stage widths scale with `width`), with the image, the filters, the
/// classifier's bias and the logits in `layout` (the intermediates follow): the same
/// nodes and tensor names, e.g. on smaller tensors for tests that run whole graphs on
/// slow references, or channels-last.
///
/// # Panics
/// If `image` is not a positive multiple of 32 or `width` is not positive.
pub fn resnet50_scaled(n: i64, image: i64, width: i64, layout: TensorLayout) -> Graph {
    assert!(image > 0 && image % 32 == 0 && width > 0, "resnet50 shape");
    let mut g = f32_builder("resnet50");
    let made = (|| {
        let input = TensorDescriptor::new("image", [n, 3, image, image]).layout(layout);
        let mut x = g.tensor(input)?;
        x = conv_bn(&mut g, "stem", x, (3, width), (7, 2), true, layout)?;
        let pool = ResampleAttrs::max_pool([3, 3])
            .stride([2, 2])
            .padding([1, 1])
            .name("stem.pool");
        x = g.resample_fwd(x, pool)?;
        g.set_name(x, "stem.pool")?;
        let mut channels = width;
        let stages = [(3, 1, 1), (4, 2, 2), (6, 4, 2), (3, 8, 2)];
        for (stage, &(blocks, scale, first_stride)) in stages.iter().enumerate() {
            let width = width * scale;
            for block in 0..blocks {
                let stride = if block == 0 { first_stride } else { 1 };
                let tag = format!("s{stage}b{block}");
                let g = &mut g;
                let a = conv_bn(
                    g,
                    &format!("{tag}.a"),
                    x,
                    (channels, width),
                    (1, 1),
                    true,
                    layout,
                )?;
                let b = conv_bn(
                    g,
                    &format!("{tag}.b"),
                    a,
                    (width, width),
                    (3, stride),
                    true,
                    layout,
                )?;
                let c = conv_bn(
                    g,
                    &format!("{tag}.c"),
                    b,
                    (width, width * 4),
                    (1, 1),
                    false,
                    layout,
                )?;
                let shortcut = if block == 0 {
                    let proj = (channels, width * 4);
                    conv_bn(
                        g,
                        &format!("{tag}.proj"),
                        x,
                        proj,
                        (1, stride),
                        false,
                        layout,
                    )?
                } else {
                    x
                };
                let add = format!("{tag}.add");
                let sum = pointwise(g, &add, PointwiseMode::ADD, &[c, shortcut], &add)?;
                let out = format!("{tag}.out");
                x = pointwise(g, &out, PointwiseMode::RELU_FWD, &[sum], &out)?;
                channels = width * 4;
            }
        }
        let last = image / 32;
        let pool = ResampleAttrs::avg_pool([last, last], false).name("pool");
        let pooled = g.resample_fwd(x, pool)?;
        g.set_name(pooled, "pool")?;
        let w = g.tensor(TensorDescriptor::new("fc.w", [1000, channels, 1, 1]).layout(layout))?;
        let fc = g.conv_fprop(pooled, w, ConvAttrs::new().name("fc.conv"))?;
        g.set_name(fc, "fc.conv")?;
        let bias = TensorDescriptor::new("fc.bias", [1, 1000, 1, 1]).layout(layout);
        let bias = g.tensor(bias)?;
        let logits = pointwise(&mut g, "fc.bias", PointwiseMode::ADD, &[fc, bias], "logits")?;
        g.set_output(logits, true)?.set_layout(logits, layout)?;
        Ok(())
    })();
    finish(&g, made)
}

/// Convolution (square `k`×`k` kernel, padding `k / 2`) → batch norm (→ ReLU): tensors
/// `{tag}.w`, `{tag}.conv`, `{tag}.bn.{mean,inv_var,scale,bias}`, `{tag}.bn`
/// (, `{tag}.relu`); returns the last.
fn conv_bn(
    g: &mut GraphBuilder,
    tag: &str,
    x: Tensor,
    (cin, cout): (i64, i64),
    (k, stride): (i64, i64),
    relu: bool,
    layout: TensorLayout,
) -> Result<Tensor> {
    let w = TensorDescriptor::new(format!("{tag}.w"), [cout, cin, k, k]).layout(layout);
    let w = g.tensor(w)?;
    let attrs = ConvAttrs::new()
        .name(format!("{tag}.conv"))
        .padding([k / 2, k / 2])
        .stride([stride, stride]);
    let conv = g.conv_fprop(x, w, attrs)?;
    g.set_name(conv, format!("{tag}.conv"))?;
    let [mean, inv_var, scale, bias] = ["mean", "inv_var", "scale", "bias"]
        .map(|s| TensorDescriptor::new(format!("{tag}.bn.{s}"), [1, cout, 1, 1]));
    let (mean, inv_var) = (g.tensor(mean)?, g.tensor(inv_var)?);
    let (scale, bias) = (g.tensor(scale)?, g.tensor(bias)?);
    let attrs = BatchnormInferenceAttrs::new().name(format!("{tag}.bn"));
    let y = g.batchnorm_inference(conv, mean, inv_var, scale, bias, attrs)?;
    g.set_name(y, format!("{tag}.bn"))?;
    if !relu {
        return Ok(y);
    }
    let name = format!("{tag}.relu");
    pointwise(g, &name, PointwiseMode::RELU_FWD, &[y], &name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hipdnn_flatbuffers_sdk::model::NodeAttributes;

    #[test]
    fn resnet50_has_the_network_counts_and_shapes() {
        let g = resnet50(2);
        let count =
            |f: fn(&NodeAttributes) -> bool| g.nodes.iter().filter(|n| f(&n.attributes)).count();
        assert_eq!(
            count(|a| matches!(a, NodeAttributes::ConvolutionFwdAttributes(_))),
            54
        );
        assert_eq!(
            count(|a| matches!(a, NodeAttributes::ResampleFwdAttributes(_))),
            2
        );
        assert_eq!(
            count(|a| matches!(a, NodeAttributes::BatchnormInferenceAttributes(_))),
            53
        );
        let pointwise = |mode| {
            g.nodes
                .iter()
                .filter(|n| matches!(&n.attributes, NodeAttributes::PointwiseAttributes(p) if p.operation == mode))
                .count()
        };
        assert_eq!(pointwise(PointwiseMode::RELU_FWD), 49);
        assert_eq!(pointwise(PointwiseMode::ADD), 17);
        let dims = |name: &str| {
            g.tensors
                .iter()
                .find(|t| t.name == name)
                .unwrap()
                .dims
                .clone()
        };
        assert_eq!(dims("stem.conv"), [2, 64, 112, 112]);
        assert_eq!(dims("stem.pool"), [2, 64, 56, 56]);
        assert_eq!(dims("s0b0.out"), [2, 256, 56, 56]);
        assert_eq!(dims("s3b2.out"), [2, 2048, 7, 7]);
        assert_eq!(dims("pool"), [2, 2048, 1, 1]);
        assert_eq!(dims("logits"), [2, 1000, 1, 1]);
        let written: Vec<_> = g
            .tensors
            .iter()
            .filter(|t| !t.is_virtual && (t.name.ends_with(".out") || t.name == "logits"))
            .map(|t| t.name.as_str())
            .collect();
        assert_eq!(written, ["logits"]);
        let uids: Vec<i64> = g.tensors.iter().map(|t| t.uid).collect();
        assert_eq!(uids, (1..=g.tensors.len() as i64).collect::<Vec<_>>());
    }

    #[test]
    fn resnet50_scaled_keeps_the_nodes() {
        let small = resnet50_scaled(1, 64, 4, TensorLayout::ChannelsLast);
        let full = resnet50(1);
        let names = |g: &Graph| g.nodes.iter().map(|n| n.name.clone()).collect::<Vec<_>>();
        assert_eq!(names(&small), names(&full));
        let logits = small.tensors.iter().find(|t| t.name == "logits").unwrap();
        assert_eq!(logits.dims, [1, 1000, 1, 1]);
        let pool = small.tensors.iter().find(|t| t.name == "pool").unwrap();
        assert_eq!(pool.dims, [1, 128, 1, 1]);
        assert_eq!(pool.strides, [128, 1, 128, 128]);
        assert_eq!(logits.strides, [1000, 1, 1000, 1000]);
    }

    #[test]
    fn pointwise_chain_alternates_modes() {
        let g = pointwise_chain(4);
        let modes: Vec<_> = g
            .nodes
            .iter()
            .map(|n| match &n.attributes {
                NodeAttributes::PointwiseAttributes(p) => p.operation,
                other => panic!("{other:?}"),
            })
            .collect();
        use PointwiseMode as M;
        assert_eq!(
            modes,
            [M::RELU_FWD, M::TANH_FWD, M::SIGMOID_FWD, M::RELU_FWD]
        );
        assert_eq!(g.tensors.iter().filter(|t| t.is_virtual).count(), 3);
    }
}
