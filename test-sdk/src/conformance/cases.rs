//! The cases: a [`Case`] is an op, a layout and a data type with a unique name, and
//! [`standard_cases`] lists the suite.

use hipdnn_data_sdk::DataType;
use hipdnn_flatbuffers_sdk::model::Graph;
use hipdnn_flatbuffers_sdk::wire::{ConvMode, PointwiseMode, ReductionMode, ResampleMode};

use super::Op;
use crate::graphs::{ConvSpec, Layout};
use crate::reference::{self, PointwiseParams};
use crate::tolerance::{Tolerance, tolerance};

/// One conformance case.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    /// `"<op kind>/<shape tag>/<fp32|fp16|bf16>/<nchw|nhwc|strided>"`, unique in
    /// [`standard_cases`].
    pub name: String,
    /// What runs.
    pub op: Op,
    /// Memory layout of the dense tensors.
    pub layout: Layout,
    /// I/O data type.
    pub dtype: DataType,
}

/// Short name of a data type in case names.
pub fn dtype_tag(dtype: DataType) -> String {
    match dtype {
        DataType::Float => "fp32".into(),
        DataType::Half => "fp16".into(),
        DataType::Bfloat16 => "bf16".into(),
        other => other.name().to_ascii_lowercase(),
    }
}

impl Case {
    /// A case named `"<op kind>/<tag>/<dtype>/<layout>"`.
    pub fn new(tag: &str, op: Op, layout: Layout, dtype: DataType) -> Self {
        Self {
            name: format!("{}/{tag}/{}/{}", op.kind(), dtype_tag(dtype), layout.tag()),
            op,
            layout,
            dtype,
        }
    }

    /// The graph the provider receives.
    pub fn graph(&self) -> Graph {
        self.op.graph(&self.layout, self.dtype)
    }

    /// Tolerance for an output of type `dtype`.
    pub fn tolerance(&self, dtype: DataType) -> Tolerance {
        tolerance(self.op.family(), dtype)
    }
}

const DTYPES: [DataType; 3] = [DataType::Float, DataType::Half, DataType::Bfloat16];

fn push_all(cases: &mut Vec<Case>, tag: &str, op: &Op) {
    for dtype in DTYPES {
        for layout in [Layout::Nchw, Layout::Nhwc] {
            cases.push(Case::new(tag, op.clone(), layout, dtype));
        }
    }
}

/// The pooling cases of the suite, by tag: max and both averages with padding at the
/// borders and stride 2 (the ResNet stem's 3×3/2, pad 1), asymmetric padding, a
/// global average pool, 1-D and 3-D windows.
pub fn pool_cases() -> Vec<(&'static str, Op)> {
    use ResampleMode as R;
    let pool = |mode, x: &[i64], window: &[i64], stride: &[i64], pre: &[i64], post: &[i64]| {
        Op::ResampleFwd {
            mode,
            x_dims: x.to_vec(),
            window: window.to_vec(),
            stride: stride.to_vec(),
            pre_padding: pre.to_vec(),
            post_padding: post.to_vec(),
        }
    };
    let x = [2, 3, 7, 8];
    let (w3, s2, p1) = ([3, 3], [2, 2], [1, 1]);
    vec![
        (
            "max_3x3_stride2_pad1",
            pool(R::MAXPOOL, &x, &w3, &s2, &p1, &p1),
        ),
        (
            "avg_exclude_3x3_stride2_pad1",
            pool(R::AVGPOOL_EXCLUDE_PADDING, &x, &w3, &s2, &p1, &p1),
        ),
        (
            "avg_include_3x3_stride2_pad1",
            pool(R::AVGPOOL_INCLUDE_PADDING, &x, &w3, &s2, &p1, &p1),
        ),
        (
            "max_2x2_asym_pad",
            pool(
                R::MAXPOOL,
                &[1, 4, 5, 6],
                &[2, 2],
                &[1, 2],
                &[1, 0],
                &[0, 1],
            ),
        ),
        (
            "avg_global_2x8x5x5",
            pool(
                R::AVGPOOL_EXCLUDE_PADDING,
                &[2, 8, 5, 5],
                &[5, 5],
                &[1, 1],
                &[0, 0],
                &[0, 0],
            ),
        ),
        (
            "max_1d_k3_stride2_pad1",
            pool(R::MAXPOOL, &[2, 3, 10], &[3], &[2], &[1], &[1]),
        ),
        (
            "avg_include_3d_2x2x2_pad1",
            pool(
                R::AVGPOOL_INCLUDE_PADDING,
                &[1, 2, 3, 4, 4],
                &[2, 2, 2],
                &[2, 2, 2],
                &[1, 1, 1],
                &[0, 1, 1],
            ),
        ),
    ]
}

/// The convolution shapes of the suite, by tag.
pub fn conv_shapes() -> Vec<(&'static str, ConvSpec)> {
    let asym = ConvSpec::new(&[1, 3, 6, 7], &[2, 3, 2, 2]).with(|mut p| {
        p.pre_padding = vec![0, 1];
        p.post_padding = vec![1, 0];
        p
    });
    vec![
        (
            "3x3_pad1",
            ConvSpec::new(&[2, 4, 8, 8], &[6, 4, 3, 3]).with(|p| p.padding(1)),
        ),
        (
            "3x3_stride2_pad1",
            ConvSpec::new(&[1, 3, 9, 9], &[4, 3, 3, 3]).with(|p| p.padding(1).stride(2)),
        ),
        (
            "3x3_dilation2",
            ConvSpec::new(&[1, 2, 9, 9], &[3, 2, 3, 3]).with(|p| p.padding(2).dilation(2)),
        ),
        ("2x2_asym_pad", asym),
        (
            "groups2",
            ConvSpec::new(&[1, 4, 6, 6], &[6, 2, 3, 3]).with(|p| p.padding(1)),
        ),
        (
            "depthwise",
            ConvSpec::new(&[1, 4, 6, 6], &[4, 1, 3, 3]).with(|p| p.padding(1)),
        ),
        (
            "1d_k3_stride2",
            ConvSpec::new(&[2, 3, 10], &[4, 3, 3]).with(|p| p.padding(1).stride(2)),
        ),
        (
            "3d_3x3x3",
            ConvSpec::new(&[1, 2, 4, 5, 5], &[3, 2, 3, 3, 3]).with(|p| p.padding(1)),
        ),
        ("1x1", ConvSpec::new(&[2, 8, 5, 5], &[4, 8, 1, 1])),
        (
            "convolution_mode",
            ConvSpec::new(&[1, 2, 5, 5], &[3, 2, 3, 3]).with(|p| p.mode(ConvMode::CONVOLUTION)),
        ),
    ]
}

/// Every pointwise variant of the suite: `(tag, params, input dims)` on a
/// `[2, 3, 4, 4]` output. Binary forward modes broadcast `in_1` from `[1, 3, 1, 1]`;
/// backward modes take a full-size `dy`.
pub fn pointwise_variants() -> Vec<(String, PointwiseParams, Vec<Vec<i64>>)> {
    use PointwiseMode as M;
    let full = vec![2, 3, 4, 4];
    let chan = vec![1, 3, 1, 1];
    let mut out = Vec::new();
    for v in 1..=M::ENUM_MAX {
        let mode = M(v);
        let Some(name) = mode.variant_name() else {
            continue;
        };
        let Ok(arity) = reference::pointwise_arity(mode) else {
            continue;
        };
        let mut p = PointwiseParams::new(mode);
        if mode == M::GEN_INDEX {
            p.axis = Some(2);
        }
        let is_bwd = name.ends_with("_BWD");
        let dims = match arity {
            1 => vec![full.clone()],
            2 if is_bwd => vec![full.clone(), full.clone()],
            2 => vec![full.clone(), chan.clone()],
            _ => vec![full.clone(), chan.clone(), full.clone()],
        };
        out.push((name.to_ascii_lowercase(), p, dims));
    }
    let with = |tag: &str, mode, f: &dyn Fn(&mut PointwiseParams)| {
        let mut p = PointwiseParams::new(mode);
        f(&mut p);
        let dims = if mode == M::RELU_BWD {
            vec![full.clone(), full.clone()]
        } else {
            vec![full.clone()]
        };
        (tag.to_owned(), p, dims)
    };
    out.push(with("relu_fwd_clipped", M::RELU_FWD, &|p| {
        p.relu_lower_clip = Some(-0.5);
        p.relu_upper_clip = Some(0.5);
    }));
    out.push(with("relu_fwd_leaky", M::RELU_FWD, &|p| {
        p.relu_lower_clip_slope = Some(0.1)
    }));
    out.push(with("relu_bwd_clipped_leaky", M::RELU_BWD, &|p| {
        p.relu_upper_clip = Some(1.0);
        p.relu_lower_clip_slope = Some(0.1);
    }));
    out.push(with("swish_fwd_beta1.5", M::SWISH_FWD, &|p| {
        p.swish_beta = Some(1.5)
    }));
    out.push(with("elu_fwd_alpha0.5", M::ELU_FWD, &|p| {
        p.elu_alpha = Some(0.5)
    }));
    out.push(with("softplus_fwd_beta2", M::SOFTPLUS_FWD, &|p| {
        p.softplus_beta = Some(2.0)
    }));
    out
}

/// The standard cases: every op × fp32/fp16/bf16 × NCHW/NHWC, the convolution shapes
/// of [`conv_shapes`] for fprop, dgrad and wgrad, every pointwise mode, every
/// reduction mode, batched and broadcast matmuls, the fused chains, and a few cases
/// with padded (non-packed) strides.
pub fn standard_cases() -> Vec<Case> {
    let mut cases = Vec::new();
    let c = &mut cases;
    for (tag, spec) in conv_shapes() {
        push_all(c, tag, &Op::ConvFprop(spec.clone()));
        push_all(c, tag, &Op::ConvDgrad(spec.clone()));
        push_all(c, tag, &Op::ConvWgrad(spec));
    }
    for (tag, spec) in conv_shapes() {
        if matches!(tag, "3x3_pad1" | "groups2" | "3x3_stride2_pad1") {
            push_all(c, tag, &Op::ConvBiasRelu(spec));
        }
    }
    for (tag, x_dims) in [
        ("2x4x5x5", vec![2, 4, 5, 5]),
        ("3d_1x3x3x4x4", vec![1, 3, 3, 4, 4]),
    ] {
        for relu in [false, true] {
            push_all(
                c,
                tag,
                &Op::BatchnormInference {
                    x_dims: x_dims.clone(),
                    relu,
                },
            );
        }
        push_all(
            c,
            tag,
            &Op::BatchnormInferenceVariance {
                x_dims: x_dims.clone(),
                epsilon: 1e-5,
            },
        );
    }
    for (tag, x_dims) in [("2x4x5x5", vec![2, 4, 5, 5]), ("4x3x3x3", vec![4, 3, 3, 3])] {
        push_all(
            c,
            tag,
            &Op::BatchnormTraining {
                x_dims: x_dims.clone(),
                epsilon: 1e-5,
                momentum: None,
            },
        );
        push_all(
            c,
            &format!("{tag}_running"),
            &Op::BatchnormTraining {
                x_dims: x_dims.clone(),
                epsilon: 1e-5,
                momentum: Some(0.1),
            },
        );
        push_all(c, tag, &Op::BatchnormBackward { x_dims });
    }
    for (tag, a, b) in [
        ("2d_4x5x3", vec![4, 5], vec![5, 3]),
        ("batched_2x4x5x3", vec![2, 4, 5], vec![2, 5, 3]),
        ("broadcast_2x1_1x3", vec![2, 1, 4, 5], vec![1, 3, 5, 6]),
        ("broadcast_b_batch1", vec![3, 4, 5], vec![1, 5, 2]),
        ("rank4_by_rank2", vec![2, 3, 4, 5], vec![5, 6]),
    ] {
        push_all(
            c,
            tag,
            &Op::Matmul {
                a_dims: a,
                b_dims: b,
            },
        );
    }
    push_all(
        c,
        "2x8x16x4",
        &Op::MatmulBiasGelu {
            a_dims: vec![2, 8, 16],
            b_dims: vec![2, 16, 4],
        },
    );
    for (tag, params, input_dims) in pointwise_variants() {
        push_all(
            c,
            &tag,
            &Op::Pointwise {
                params,
                input_dims,
                out_dims: vec![2, 3, 4, 4],
            },
        );
    }
    for v in 1..=ReductionMode::ENUM_MAX {
        let mode = ReductionMode(v);
        let tag = format!(
            "{}_spatial",
            mode.variant_name()
                .unwrap_or("unknown")
                .to_ascii_lowercase()
        );
        push_all(
            c,
            &tag,
            &Op::Reduction {
                mode,
                in_dims: vec![2, 3, 4, 4],
                out_dims: vec![2, 3, 1, 1],
            },
        );
    }
    push_all(
        c,
        "add_per_channel",
        &Op::Reduction {
            mode: ReductionMode::ADD,
            in_dims: vec![2, 3, 4, 4],
            out_dims: vec![1, 3, 1, 1],
        },
    );
    push_all(
        c,
        "max_op_all",
        &Op::Reduction {
            mode: ReductionMode::MAX_OP,
            in_dims: vec![2, 3, 4, 4],
            out_dims: vec![1, 1, 1, 1],
        },
    );
    for (tag, op) in pool_cases() {
        push_all(c, tag, &op);
    }
    push_all(
        c,
        "2x3x4x4_chw_training",
        &Op::Layernorm {
            x_dims: vec![2, 3, 4, 4],
            normalized_dims: 3,
            epsilon: 1e-5,
            training: true,
        },
    );
    push_all(
        c,
        "4x3x16_last_inference",
        &Op::Layernorm {
            x_dims: vec![4, 3, 16],
            normalized_dims: 1,
            epsilon: 1e-5,
            training: false,
        },
    );
    push_all(
        c,
        "2x3x4x4_bias_training",
        &Op::Rmsnorm {
            x_dims: vec![2, 3, 4, 4],
            epsilon: 1e-5,
            bias: true,
            training: true,
        },
    );
    push_all(
        c,
        "4x16_inference",
        &Op::Rmsnorm {
            x_dims: vec![4, 16],
            epsilon: 1e-5,
            bias: false,
            training: false,
        },
    );
    // Padded strides: rows of x and y padded to a pitch wider than the image.
    for dtype in DTYPES {
        let spec = &conv_shapes()[0].1;
        let layout = Layout::Explicit(vec![
            ("x".into(), vec![4 * 8 * 10, 8 * 10, 10, 1]),
            ("y".into(), vec![6 * 8 * 9, 8 * 9, 9, 1]),
        ]);
        cases.push(Case::new(
            "3x3_pad1",
            Op::ConvFprop(spec.clone()),
            layout,
            dtype,
        ));
        let layout = Layout::Explicit(vec![
            ("in_0".into(), vec![3 * 4 * 6, 4 * 6, 6, 1]),
            ("out".into(), vec![2 * 3 * 4 * 4, 1, 3 * 4, 3]),
        ]);
        let op = Op::Pointwise {
            params: PointwiseParams::new(PointwiseMode::ADD),
            input_dims: vec![vec![2, 3, 4, 4], vec![1, 3, 1, 1]],
            out_dims: vec![2, 3, 4, 4],
        };
        cases.push(Case::new("add_padded_in_nhwc_out", op, layout, dtype));
    }
    cases
}

/// Cases beyond [`standard_cases`] for engines that fuse what the standard suite runs
/// as separate chains or not at all: convolution → ReLU without a bias; batch-norm
/// training → activation (ReLU, clipped ReLU, clamp; with and without running
/// statistics); batch-norm backward through a ReLU whose input batch-norm inference
/// recomputes; and the normalizations at rank 3 and 5 (NCL/NLC, NCDHW/NDHWC). Every
/// op × fp32/fp16/bf16 × channels-first/channels-last.
pub fn extended_cases() -> Vec<Case> {
    let mut cases = Vec::new();
    let c = &mut cases;
    for (tag, spec) in conv_shapes() {
        if matches!(tag, "3x3_pad1" | "1d_k3_stride2" | "3d_3x3x3") {
            push_all(c, tag, &Op::ConvRelu(spec));
        }
    }
    let relu = PointwiseParams::new(PointwiseMode::RELU_FWD);
    let mut clipped = relu;
    clipped.relu_upper_clip = Some(0.5);
    let mut clamp = relu;
    clamp.relu_lower_clip = Some(-0.25);
    clamp.relu_upper_clip = Some(0.75);
    for (tag, act) in [("relu", relu), ("clipped", clipped), ("clamp", clamp)] {
        for (shape, x_dims) in [("2x4x5x5", vec![2, 4, 5, 5]), ("ncl_2x3x7", vec![2, 3, 7])] {
            for momentum in [None, Some(0.1)] {
                let running = if momentum.is_some() { "_running" } else { "" };
                push_all(
                    c,
                    &format!("{shape}{running}_{tag}"),
                    &Op::BatchnormTrainingActivation {
                        x_dims: x_dims.clone(),
                        epsilon: 1e-5,
                        momentum,
                        activation: act,
                    },
                );
            }
        }
    }
    for (tag, x_dims) in [
        ("2x4x5x5", vec![2, 4, 5, 5]),
        ("3d_1x3x3x4x4", vec![1, 3, 3, 4, 4]),
        ("ncl_2x3x7", vec![2, 3, 7]),
    ] {
        push_all(
            c,
            tag,
            &Op::BatchnormBackwardRelu {
                x_dims: x_dims.clone(),
            },
        );
        if tag != "2x4x5x5" {
            push_all(
                c,
                tag,
                &Op::BatchnormBackward {
                    x_dims: x_dims.clone(),
                },
            );
            push_all(
                c,
                &format!("{tag}_running"),
                &Op::BatchnormTraining {
                    x_dims: x_dims.clone(),
                    epsilon: 1e-5,
                    momentum: Some(0.1),
                },
            );
        }
    }
    push_all(
        c,
        "ncl_2x3x7",
        &Op::BatchnormInference {
            x_dims: vec![2, 3, 7],
            relu: true,
        },
    );
    cases
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    #[test]
    fn extended_cases_are_new_names_with_every_dtype_and_layout() {
        let standard: BTreeSet<String> = standard_cases().into_iter().map(|c| c.name).collect();
        let extended = extended_cases();
        let names: BTreeSet<&str> = extended.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names.len(), extended.len(), "duplicate case names");
        assert!(extended.iter().all(|c| !standard.contains(&c.name)));
        for k in [
            "conv_relu",
            "batchnorm_training_activation",
            "batchnorm_backward_relu",
        ] {
            for dt in ["fp32", "fp16", "bf16"] {
                for layout in ["nchw", "nhwc"] {
                    assert!(
                        extended
                            .iter()
                            .any(|c| c.op.kind() == k
                                && c.name.ends_with(&format!("/{dt}/{layout}"))),
                        "no {k} {dt} {layout} case"
                    );
                }
            }
        }
        // Every case's graph builds and validates.
        for c in &extended {
            let mut g = c.graph();
            g.validate().unwrap_or_else(|e| panic!("{}: {e}", c.name));
        }
    }

    #[test]
    fn case_names_are_unique_and_cover_every_op_dtype_layout() {
        let cases = standard_cases();
        let names: BTreeSet<&str> = cases.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names.len(), cases.len(), "duplicate case names");
        let kinds: BTreeSet<&str> = cases.iter().map(|c| c.op.kind()).collect();
        for k in [
            "conv_fprop",
            "conv_bias_relu",
            "conv_dgrad",
            "conv_wgrad",
            "batchnorm_inference",
            "batchnorm_inference_relu",
            "batchnorm_inference_variance",
            "batchnorm_training",
            "batchnorm_backward",
            "matmul",
            "matmul_bias_gelu",
            "pointwise",
            "reduction",
            "layernorm",
            "rmsnorm",
            "resample_fwd",
        ] {
            assert!(kinds.contains(k), "no {k} case");
            for dt in ["fp32", "fp16", "bf16"] {
                for layout in ["nchw", "nhwc"] {
                    assert!(
                        cases
                            .iter()
                            .any(|c| c.op.kind() == k
                                && c.name.ends_with(&format!("/{dt}/{layout}"))),
                        "no {k} {dt} {layout} case"
                    );
                }
            }
        }
        // Every pointwise mode but UNSET, every reduction mode but NOT_SET.
        let pw = pointwise_variants();
        for v in 1..=PointwiseMode::ENUM_MAX {
            assert!(
                pw.iter().any(|(_, p, _)| p.mode == PointwiseMode(v)),
                "mode {v}"
            );
        }
        for v in 1..=ReductionMode::ENUM_MAX {
            let tag = ReductionMode(v)
                .variant_name()
                .unwrap()
                .to_ascii_lowercase();
            assert!(names.contains(format!("reduction/{tag}_spatial/fp32/nchw").as_str()));
        }
        // Every pooling mode, with padding, in 1 to 3 spatial dims.
        let pools: Vec<_> = pool_cases().into_iter().map(|(_, op)| op).collect();
        for mode in 1..=ResampleMode::ENUM_MAX {
            assert!(
                pools.iter().any(
                    |op| matches!(op, Op::ResampleFwd { mode: m, pre_padding, .. }
                    if m.0 == mode && pre_padding.iter().any(|&p| p > 0))
                ),
                "pooling mode {mode}"
            );
        }
        for rank in 3..=5 {
            assert!(
                pools
                    .iter()
                    .any(|op| matches!(op, Op::ResampleFwd { x_dims, .. } if x_dims.len() == rank))
            );
        }
    }
}
