//! Unit tests of the builder: shape inference per op, uids, layouts, errors.

use hipdnn_flatbuffers_sdk::GraphError;
use hipdnn_flatbuffers_sdk::model::NodeAttributes;

use super::*;

fn builder() -> GraphBuilder {
    GraphBuilder::new("test")
        .io_data_type(DataType::Float)
        .intermediate_data_type(DataType::Float)
        .compute_data_type(DataType::Float)
}

fn input(g: &mut GraphBuilder, name: &str, dims: &[i64]) -> Tensor {
    g.tensor(TensorDescriptor::new(name, dims)).unwrap()
}

fn nhwc(g: &mut GraphBuilder, name: &str, dims: &[i64]) -> Tensor {
    g.tensor(TensorDescriptor::new(name, dims).layout(TensorLayout::ChannelsLast))
        .unwrap()
}

fn scalar(g: &mut GraphBuilder, name: &str, v: f32) -> Tensor {
    g.tensor(TensorDescriptor::scalar(name, TensorValue::Float32(v)))
        .unwrap()
}

fn dims(g: &GraphBuilder, t: Tensor) -> Vec<i64> {
    g.tensor_info(t).unwrap().dims().to_vec()
}

fn strides(g: &GraphBuilder, t: Tensor) -> Vec<i64> {
    g.tensor_info(t).unwrap().strides().to_vec()
}

// ---------------------------------------------------------------------------------------
// Convolutions
// ---------------------------------------------------------------------------------------

#[test]
fn conv_fprop_infers_padding_stride_dilation() {
    let mut g = builder();
    let x = input(&mut g, "x", &[2, 3, 32, 20]);
    let w = input(&mut g, "w", &[16, 3, 5, 3]);
    let attrs = ConvAttrs::new()
        .pre_padding([2, 0])
        .post_padding([1, 0])
        .stride([2, 1])
        .dilation([1, 3]);
    let y = g.conv_fprop(x, w, attrs).unwrap();
    // H: (32 + 3 - 5) / 2 + 1 = 16; W: (20 - 7) / 1 + 1 = 14.
    assert_eq!(dims(&g, y), [2, 16, 16, 14]);
    assert_eq!(strides(&g, y), [16 * 16 * 14, 16 * 14, 14, 1]);
    let info = g.tensor_info(y).unwrap();
    assert!(info.is_virtual());
    assert_eq!(info.name(), "conv_fprop_0.y");
    assert_eq!(info.uid(), None);
}

#[test]
fn conv_fprop_grouped_1d_and_3d() {
    let mut g = builder();
    // 1-D, depthwise-ish: 8 channels in 4 groups of 2, 12 outputs.
    let x1 = input(&mut g, "x1", &[1, 8, 100]);
    let w1 = input(&mut g, "w1", &[12, 2, 7]);
    let y1 = g
        .conv_fprop(x1, w1, ConvAttrs::new().padding([3]).stride([4]))
        .unwrap();
    // (100 + 6 - 7) / 4 + 1 = 25
    assert_eq!(dims(&g, y1), [1, 12, 25]);

    // 3-D, NDHWC in, so NDHWC out.
    let x3 = nhwc(&mut g, "x3", &[2, 4, 6, 8, 8]);
    let w3 = nhwc(&mut g, "w3", &[6, 4, 3, 3, 3]);
    let y3 = g
        .conv_fprop(
            x3,
            w3,
            ConvAttrs::new().padding([1, 1, 1]).stride([1, 2, 2]),
        )
        .unwrap();
    assert_eq!(dims(&g, y3), [2, 6, 6, 4, 4]);
    assert_eq!(strides(&g, y3), [6 * 4 * 4 * 6, 1, 4 * 4 * 6, 4 * 6, 6]);
}

#[test]
fn conv_fprop_output_follows_nhwc_input() {
    let mut g = builder();
    let x = nhwc(&mut g, "x", &[1, 3, 8, 8]);
    let w = input(&mut g, "w", &[4, 3, 3, 3]);
    let y = g
        .conv_fprop(x, w, ConvAttrs::new().padding([1, 1]))
        .unwrap();
    assert_eq!(strides(&g, x), [192, 1, 24, 3]);
    assert_eq!(strides(&g, y), [256, 1, 32, 4]);
}

#[test]
fn conv_fprop_errors_name_the_node_and_numbers() {
    let mut g = builder();
    let x = input(&mut g, "x", &[1, 6, 8, 8]);
    let w = g
        .tensor(TensorDescriptor::new("w", [4, 4, 3, 3]).uid(7))
        .unwrap();
    let e = g
        .conv_fprop(x, w, ConvAttrs::new().name("conv1"))
        .unwrap_err();
    assert!(matches!(e, FrontendError::Convolution { ref node, .. } if node == "conv1"));
    let msg = e.to_string();
    assert!(msg.contains("conv1") && msg.contains("6 channels") && msg.contains("4 input"));

    let w2 = input(&mut g, "w2", &[4, 6, 3]);
    let e = g.conv_fprop(x, w2, ConvAttrs::new().name("c")).unwrap_err();
    assert_eq!(
        e,
        FrontendError::RankMismatch {
            node: "c".into(),
            tensor: TensorLabel {
                name: "w2".into(),
                uid: None
            },
            expected: "4 (the rank of \"x\")".into(),
            got: 3,
        }
    );

    let w3 = input(&mut g, "w3", &[4, 6, 3, 3]);
    let e = g
        .conv_fprop(x, w3, ConvAttrs::new().name("c").stride([1, 1, 1]))
        .unwrap_err();
    assert!(
        matches!(e, FrontendError::InvalidAttribute { attribute: "stride", ref reason, .. }
            if reason.contains("3 entries for 2 spatial dims")),
        "{e}"
    );
    let e = g
        .conv_fprop(x, w3, ConvAttrs::new().dilation([1, 0]))
        .unwrap_err();
    assert!(matches!(
        e,
        FrontendError::InvalidAttribute {
            attribute: "dilation",
            ..
        }
    ));
    let e = g
        .conv_fprop(x, w3, ConvAttrs::new().output_dims([1, 4, 8, 8]))
        .unwrap_err();
    assert!(e.to_string().contains("[1, 4, 6, 6]"), "{e}");
    let e = g
        .conv_fprop(x, w3, ConvAttrs::new().mode(ConvMode::UNSET))
        .unwrap_err();
    assert!(matches!(
        e,
        FrontendError::InvalidAttribute {
            attribute: "conv_mode",
            ..
        }
    ));
    // Nothing was added by the failed calls.
    assert_eq!(g.node_count(), 0);
    assert_eq!(g.tensor_count(), 4);
}

#[test]
fn conv_dgrad_needs_and_checks_output_dims() {
    let mut g = builder();
    let dy = input(&mut g, "dy", &[2, 8, 4, 4]);
    let w = input(&mut g, "w", &[8, 3, 3, 3]);
    let attrs = ConvAttrs::new()
        .padding([1, 1])
        .stride([2, 2])
        .name("dgrad");
    let e = g.conv_dgrad(dy, w, attrs.clone()).unwrap_err();
    assert_eq!(
        e,
        FrontendError::MissingAttribute {
            node: "dgrad".into(),
            attribute: "output_dims"
        }
    );
    // Stride 2 makes both 7 and 8 valid input extents for an output of 4.
    for extent in [7, 8] {
        let dx = g
            .conv_dgrad(dy, w, attrs.clone().output_dims([2, 3, extent, extent]))
            .unwrap();
        assert_eq!(dims(&g, dx), [2, 3, extent, extent]);
    }
    let e = g
        .conv_dgrad(dy, w, attrs.output_dims([2, 3, 10, 10]))
        .unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("[2, 8, 4, 4]") && msg.contains("[2, 8, 5, 5]"),
        "{msg}"
    );
}

#[test]
fn conv_wgrad_checks_against_dy() {
    let mut g = builder();
    let x = nhwc(&mut g, "x", &[2, 3, 8, 8]);
    let dy = nhwc(&mut g, "dy", &[2, 8, 6, 6]);
    let dw = g
        .conv_wgrad(x, dy, ConvAttrs::new().output_dims([8, 3, 3, 3]))
        .unwrap();
    assert_eq!(dims(&g, dw), [8, 3, 3, 3]);
    assert_eq!(strides(&g, dw), [27, 1, 9, 3]);
    let e = g
        .conv_wgrad(x, dy, ConvAttrs::new().output_dims([8, 3, 5, 5]))
        .unwrap_err();
    assert!(matches!(e, FrontendError::Convolution { .. }), "{e}");
    let e = g
        .conv_wgrad(x, dy, ConvAttrs::new().output_dims([8, 3, 3]))
        .unwrap_err();
    assert!(matches!(
        e,
        FrontendError::InvalidAttribute {
            attribute: "output_dims",
            ..
        }
    ));
}

// ---------------------------------------------------------------------------------------
// Pointwise, matmul, reduction
// ---------------------------------------------------------------------------------------

#[test]
fn pointwise_broadcasts_inputs() {
    let mut g = builder();
    let a = input(&mut g, "a", &[4, 1, 5]);
    let b = input(&mut g, "b", &[3, 1]);
    let c = input(&mut g, "c", &[1]);
    let add = g
        .pointwise(&[a, b], PointwiseAttrs::new(PointwiseMode::ADD))
        .unwrap();
    assert_eq!(dims(&g, add), [4, 3, 5]);
    assert_eq!(strides(&g, add), [15, 5, 1]);
    let select = g
        .pointwise(
            &[add, c, a],
            PointwiseAttrs::new(PointwiseMode::BINARY_SELECT),
        )
        .unwrap();
    assert_eq!(dims(&g, select), [4, 3, 5]);

    let bad = input(&mut g, "bad", &[2, 4]);
    let e = g
        .pointwise(
            &[a, bad],
            PointwiseAttrs::new(PointwiseMode::MUL).name("mul"),
        )
        .unwrap_err();
    assert_eq!(
        e,
        FrontendError::Broadcast {
            node: "mul".into(),
            tensor: TensorLabel {
                name: "bad".into(),
                uid: None
            },
            dims: vec![2, 4],
            target: vec![4, 1, 5],
        }
    );
}

#[test]
fn pointwise_output_takes_layout_of_full_size_input() {
    let mut g = builder();
    let bias = input(&mut g, "bias", &[1, 4, 1, 1]);
    let x = nhwc(&mut g, "x", &[2, 4, 3, 3]);
    let y = g
        .pointwise(&[bias, x], PointwiseAttrs::new(PointwiseMode::ADD))
        .unwrap();
    assert_eq!(strides(&g, y), [36, 1, 12, 4]);
}

#[test]
fn pointwise_arity_and_parameters_are_checked() {
    let mut g = builder();
    let a = input(&mut g, "a", &[2, 2]);
    let e = g
        .pointwise(&[a], PointwiseAttrs::new(PointwiseMode::ADD).name("p"))
        .unwrap_err();
    assert_eq!(
        e,
        FrontendError::Arity {
            node: "p".into(),
            mode: "ADD".into(),
            expected: 2,
            got: 1
        }
    );
    let e = g
        .pointwise(&[a, a], PointwiseAttrs::new(PointwiseMode::RELU_FWD))
        .unwrap_err();
    assert!(matches!(
        e,
        FrontendError::Arity {
            expected: 1,
            got: 2,
            ..
        }
    ));
    let e = g
        .pointwise(&[a], PointwiseAttrs::new(PointwiseMode::UNSET))
        .unwrap_err();
    assert!(matches!(
        e,
        FrontendError::InvalidAttribute {
            attribute: "operation",
            ..
        }
    ));
    let e = g
        .pointwise(
            &[a],
            PointwiseAttrs::new(PointwiseMode::TANH_FWD).swish_beta(1.0),
        )
        .unwrap_err();
    assert!(
        matches!(e, FrontendError::InvalidAttribute { attribute: "swish_beta", ref reason, .. }
            if reason.contains("TANH_FWD"))
    );
    let e = g
        .pointwise(&[a], PointwiseAttrs::new(PointwiseMode::GEN_INDEX))
        .unwrap_err();
    assert!(matches!(
        e,
        FrontendError::MissingAttribute {
            attribute: "axis",
            ..
        }
    ));
    let e = g
        .pointwise(&[a], PointwiseAttrs::new(PointwiseMode::GEN_INDEX).axis(2))
        .unwrap_err();
    assert!(matches!(
        e,
        FrontendError::InvalidAttribute {
            attribute: "axis",
            ..
        }
    ));
    assert_eq!(g.node_count(), 0);

    // Parameters that apply are carried to the schema.
    let relu = g
        .pointwise(
            &[a],
            PointwiseAttrs::new(PointwiseMode::RELU_FWD)
                .name("relu")
                .relu_lower_clip(0.0)
                .relu_upper_clip(6.0)
                .relu_lower_clip_slope(0.1),
        )
        .unwrap();
    let idx = g
        .pointwise(
            &[relu],
            PointwiseAttrs::new(PointwiseMode::GEN_INDEX).axis(1),
        )
        .unwrap();
    g.set_output(idx, true).unwrap();
    let built = g.build().unwrap();
    let NodeAttributes::PointwiseAttributes(p) = &built.graph().nodes[0].attributes else {
        panic!("not pointwise")
    };
    assert_eq!(
        (
            p.relu_lower_clip,
            p.relu_upper_clip,
            p.relu_lower_clip_slope
        ),
        (Some(0.0), Some(6.0), Some(0.1))
    );
    let NodeAttributes::PointwiseAttributes(p) = &built.graph().nodes[1].attributes else {
        panic!("not pointwise")
    };
    assert_eq!(p.axis_tensor_uid, Some(1));
}

#[test]
fn matmul_broadcasts_batch_dims() {
    let mut g = builder();
    let a = input(&mut g, "a", &[3, 1, 4, 5]);
    let b = input(&mut g, "b", &[7, 5, 6]);
    let c = g.matmul(a, b, MatmulAttrs::new()).unwrap();
    assert_eq!(dims(&g, c), [3, 7, 4, 6]);
    assert_eq!(strides(&g, c), [168, 24, 6, 1]);
    let m = input(&mut g, "m", &[5, 2]);
    let c2 = g.matmul(a, m, MatmulAttrs::new()).unwrap();
    assert_eq!(dims(&g, c2), [3, 1, 4, 2]);

    let e = g.matmul(b, a, MatmulAttrs::new().name("mm")).unwrap_err();
    assert_eq!(
        e,
        FrontendError::MatmulInnerDim {
            node: "mm".into(),
            a_dims: vec![7, 5, 6],
            b_dims: vec![3, 1, 4, 5],
            k_a: 6,
            k_b: 4
        }
    );
    let b2 = input(&mut g, "b2", &[2, 1, 5, 6]);
    let e = g.matmul(a, b2, MatmulAttrs::new()).unwrap_err();
    assert!(matches!(e, FrontendError::Broadcast { .. }), "{e}");
    let v = input(&mut g, "v", &[5]);
    let e = g.matmul(a, v, MatmulAttrs::new()).unwrap_err();
    assert!(matches!(e, FrontendError::RankMismatch { got: 1, .. }));
}

#[test]
fn resample_fwd_infers_pooled_dims_and_writes_the_schema_fields() {
    let mut g = builder();
    let x = nhwc(&mut g, "x", &[1, 64, 112, 112]);
    let attrs = ResampleAttrs::max_pool([3, 3])
        .stride([2, 2])
        .padding([1, 1])
        .name("pool");
    let y = g.resample_fwd(x, attrs).unwrap();
    // (112 + 1 + 1 - 3) / 2 + 1 = 56, NHWC like x.
    assert_eq!(dims(&g, y), [1, 64, 56, 56]);
    assert_eq!(strides(&g, y), [56 * 56 * 64, 1, 56 * 64, 64]);
    // Stride defaults to the window: a global average pool.
    let z = g
        .resample_fwd(y, ResampleAttrs::avg_pool([56, 56], false))
        .unwrap();
    assert_eq!(dims(&g, z), [1, 64, 1, 1]);
    let w = g
        .resample_fwd(z, ResampleAttrs::avg_pool([1, 1], true))
        .unwrap();
    g.set_output(w, true).unwrap();
    let built = g.build().unwrap();
    let NodeAttributes::ResampleFwdAttributes(a) = &built.graph().nodes[0].attributes else {
        panic!("{:?}", built.graph().nodes[0]);
    };
    assert_eq!(
        (a.window.as_slice(), a.stride.as_slice()),
        (&[3, 3][..], &[2, 2][..])
    );
    assert_eq!(a.pre_padding, [1, 1]);
    assert_eq!(a.resample_mode, ResampleMode::MAXPOOL);
    assert_eq!(a.padding_mode, PaddingMode::NEG_INF_PAD);
    assert!(!a.generate_index && a.index_tensor_uid.is_none());
    let NodeAttributes::ResampleFwdAttributes(b) = &built.graph().nodes[2].attributes else {
        panic!()
    };
    assert_eq!(b.resample_mode, ResampleMode::AVGPOOL_INCLUDE_PADDING);
    assert_eq!(b.padding_mode, PaddingMode::ZERO_PAD);
    // One spatial dim: (10 + 0 + 2 - 4) / 4 + 1 = 3.
    let mut g = builder();
    let v = input(&mut g, "v", &[2, 3, 10]);
    let attrs = ResampleAttrs::avg_pool([4], true).post_padding([2]);
    let w = g.resample_fwd(v, attrs).unwrap();
    assert_eq!(dims(&g, w), [2, 3, 3]);
}

#[test]
fn resample_fwd_errors_name_the_attribute() {
    let mut g = builder();
    let x = input(&mut g, "x", &[1, 2, 4, 4]);
    let attribute = |e: FrontendError| match e {
        FrontendError::InvalidAttribute { attribute, .. } => attribute,
        other => panic!("{other}"),
    };
    let e = g
        .resample_fwd(x, ResampleAttrs::max_pool([2, 2]).padding([2, 0]))
        .unwrap_err();
    assert_eq!(attribute(e), "pre_padding");
    let e = g
        .resample_fwd(x, ResampleAttrs::max_pool([2, 2]).post_padding([0, 3]))
        .unwrap_err();
    assert_eq!(attribute(e), "post_padding");
    let e = g
        .resample_fwd(x, ResampleAttrs::max_pool([5, 5]))
        .unwrap_err();
    assert_eq!(attribute(e), "window");
    let e = g.resample_fwd(x, ResampleAttrs::max_pool([2])).unwrap_err();
    assert_eq!(attribute(e), "window");
    let e = g
        .resample_fwd(x, ResampleAttrs::max_pool([2, 2]).stride([0, 1]))
        .unwrap_err();
    assert_eq!(attribute(e), "stride");
    let e = g
        .resample_fwd(x, ResampleAttrs::new(ResampleMode::NOT_SET, [2, 2]))
        .unwrap_err();
    assert_eq!(attribute(e), "resample_mode");
    let flat = input(&mut g, "f", &[4, 4]);
    let e = g
        .resample_fwd(flat, ResampleAttrs::max_pool([2]))
        .unwrap_err();
    assert!(
        matches!(e, FrontendError::RankMismatch { got: 2, .. }),
        "{e}"
    );
}

#[test]
fn reduction_checks_output_dims() {
    let mut g = builder();
    let x = nhwc(&mut g, "x", &[2, 8, 4, 4]);
    let y = g
        .reduction(
            x,
            ReductionAttrs::new(ReductionMode::ADD).output_dims([1, 8, 1, 1]),
        )
        .unwrap();
    assert_eq!(dims(&g, y), [1, 8, 1, 1]);
    let e = g
        .reduction(x, ReductionAttrs::new(ReductionMode::MAX_OP).name("r"))
        .unwrap_err();
    assert_eq!(
        e,
        FrontendError::MissingAttribute {
            node: "r".into(),
            attribute: "output_dims"
        }
    );
    let e = g
        .reduction(
            x,
            ReductionAttrs::new(ReductionMode::ADD).output_dims([2, 4, 1, 1]),
        )
        .unwrap_err();
    assert!(e.to_string().contains("dim 1 is 4"), "{e}");
    let e = g
        .reduction(
            x,
            ReductionAttrs::new(ReductionMode::NOT_SET).output_dims([1, 1, 1, 1]),
        )
        .unwrap_err();
    assert!(matches!(
        e,
        FrontendError::InvalidAttribute {
            attribute: "mode",
            ..
        }
    ));
}

// ---------------------------------------------------------------------------------------
// Normalizations
// ---------------------------------------------------------------------------------------

#[test]
fn batchnorm_inference_checks_per_channel_dims() {
    let mut g = builder();
    let x = nhwc(&mut g, "x", &[2, 4, 5, 5]);
    let p: Vec<Tensor> = ["mean", "inv_variance", "scale"]
        .iter()
        .map(|n| input(&mut g, n, &[1, 4, 1, 1]))
        .collect();
    let bad_bias = g
        .tensor(TensorDescriptor::new("bias", [1, 5, 1, 1]).uid(9))
        .unwrap();
    let e = g
        .batchnorm_inference(
            x,
            p[0],
            p[1],
            p[2],
            bad_bias,
            BatchnormInferenceAttrs::new().name("bn"),
        )
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "node \"bn\": tensor \"bias\" (uid 9) has dims [1, 5, 1, 1], expected [1, 4, 1, 1]"
    );
    let bias = input(&mut g, "bias2", &[1, 4, 1, 1]);
    let y = g
        .batchnorm_inference(x, p[0], p[1], p[2], bias, BatchnormInferenceAttrs::new())
        .unwrap();
    assert_eq!(dims(&g, y), [2, 4, 5, 5]);
    assert_eq!(strides(&g, y), strides(&g, x));
}

#[test]
fn batchnorm_inference_variance_checks_epsilon_and_emits_the_ext_node() {
    let operands = |g: &mut GraphBuilder| {
        let x = nhwc(g, "x", &[2, 4, 5, 5]);
        let p: Vec<Tensor> = ["mean", "variance", "scale", "bias"]
            .iter()
            .map(|n| input(g, n, &[1, 4, 1, 1]))
            .collect();
        (x, p)
    };
    let mut bad = builder();
    let (x, p) = operands(&mut bad);
    let not_scalar = bad
        .tensor(TensorDescriptor::new("eps", [1, 2]).uid(20))
        .unwrap();
    let e = bad
        .batchnorm_inference_variance(
            x,
            p[0],
            p[1],
            p[2],
            p[3],
            BatchnormInferenceVarianceAttrs::new(not_scalar).name("bn"),
        )
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "node \"bn\": tensor \"eps\" (uid 20) has dims [1, 2], expected [1, 1]"
    );
    let mut g = builder();
    let (x, p) = operands(&mut g);
    let eps = scalar(&mut g, "epsilon", 1e-5);
    let y = g
        .batchnorm_inference_variance(
            x,
            p[0],
            p[1],
            p[2],
            p[3],
            BatchnormInferenceVarianceAttrs::new(eps).name("bn"),
        )
        .unwrap();
    assert_eq!(dims(&g, y), [2, 4, 5, 5]);
    assert_eq!(strides(&g, y), strides(&g, x));
    g.set_output(y, true).unwrap();
    let built = g.build().unwrap();
    let uid = |t| built.uid(t).unwrap();
    match &built.graph().nodes[0].attributes {
        NodeAttributes::BatchnormInferenceAttributesVarianceExt(a) => {
            assert_eq!(
                [
                    a.x_tensor_uid,
                    a.variance_tensor_uid,
                    a.epsilon_tensor_uid,
                    a.y_tensor_uid
                ],
                [uid(x), uid(p[1]), uid(eps), uid(y)]
            );
        }
        other => panic!("unexpected node {other:?}"),
    }
}

#[test]
fn batchnorm_training_outputs_and_pruned_statistics() {
    let mut g = builder();
    let x = input(&mut g, "x", &[2, 3, 4, 4]);
    let scale = input(&mut g, "scale", &[1, 3, 1, 1]);
    let bias = input(&mut g, "bias", &[1, 3, 1, 1]);
    let eps = scalar(&mut g, "eps", 1e-5);
    let out = g
        .batchnorm(x, scale, bias, BatchnormAttrs::new(eps).name("bn"))
        .unwrap();
    assert_eq!(dims(&g, out.y), [2, 3, 4, 4]);
    assert_eq!(dims(&g, out.mean), [1, 3, 1, 1]);
    assert_eq!(dims(&g, out.inv_variance), [1, 3, 1, 1]);
    assert_eq!(out.next_running_mean, None);
    g.set_output(out.y, true).unwrap();

    // Statistics nobody reads are left out.
    let built = g.build().unwrap();
    assert_eq!(built.graph().tensors.len(), 5);
    assert_eq!(built.uid(out.mean), None);
    let NodeAttributes::BatchnormAttributes(a) = &built.graph().nodes[0].attributes else {
        panic!("not batchnorm")
    };
    assert_eq!((a.mean_tensor_uid, a.inv_variance_tensor_uid), (None, None));

    // Marked as outputs, they stay.
    g.set_output(out.mean, true).unwrap();
    g.set_output(out.inv_variance, true).unwrap();
    let built = g.build().unwrap();
    let NodeAttributes::BatchnormAttributes(a) = &built.graph().nodes[0].attributes else {
        panic!("not batchnorm")
    };
    assert_eq!(a.mean_tensor_uid, built.uid(out.mean));
    assert!(a.mean_tensor_uid.is_some());
    assert_eq!(built.graph().tensors.len(), 7);
}

#[test]
fn batchnorm_training_with_running_stats() {
    let mut g = builder();
    let x = input(&mut g, "x", &[2, 3, 4, 4]);
    let c: Vec<Tensor> = ["scale", "bias", "rm", "rv"]
        .iter()
        .map(|n| input(&mut g, n, &[1, 3, 1, 1]))
        .collect();
    let eps = scalar(&mut g, "eps", 1e-5);
    let momentum = scalar(&mut g, "momentum", 0.1);
    let out = g
        .batchnorm(
            x,
            c[0],
            c[1],
            BatchnormAttrs::new(eps).running_stats(c[2], c[3], momentum),
        )
        .unwrap();
    let (nm, nv) = (
        out.next_running_mean.unwrap(),
        out.next_running_variance.unwrap(),
    );
    assert_eq!(dims(&g, nm), [1, 3, 1, 1]);
    for t in [out.y, nm, nv] {
        g.set_output(t, true).unwrap();
    }
    let built = g.build().unwrap();
    let NodeAttributes::BatchnormAttributes(a) = &built.graph().nodes[0].attributes else {
        panic!("not batchnorm")
    };
    assert_eq!(a.momentum_tensor_uid, built.uid(momentum));
    assert_eq!(a.next_running_variance_tensor_uid, built.uid(nv));

    // A non-scalar momentum is refused.
    let e = g
        .batchnorm(
            x,
            c[0],
            c[1],
            BatchnormAttrs::new(eps).running_stats(c[2], c[3], c[0]),
        )
        .unwrap_err();
    assert!(
        matches!(e, FrontendError::ShapeMismatch { ref expected, .. } if *expected == [1, 1, 1, 1])
    );
}

#[test]
fn batchnorm_backward_outputs() {
    let mut g = builder();
    let x = input(&mut g, "x", &[2, 3, 4, 4]);
    let dy = input(&mut g, "dy", &[2, 3, 4, 4]);
    let scale = input(&mut g, "scale", &[1, 3, 1, 1]);
    let mean = input(&mut g, "mean", &[1, 3, 1, 1]);
    let inv = input(&mut g, "inv", &[1, 3, 1, 1]);
    let out = g
        .batchnorm_backward(
            dy,
            x,
            scale,
            BatchnormBackwardAttrs::new().saved_stats(mean, inv),
        )
        .unwrap();
    assert_eq!(dims(&g, out.dx), [2, 3, 4, 4]);
    assert_eq!(dims(&g, out.dscale), [1, 3, 1, 1]);
    assert_eq!(dims(&g, out.dbias), [1, 3, 1, 1]);
    let short_dy = input(&mut g, "short_dy", &[2, 3, 4, 2]);
    let e = g
        .batchnorm_backward(short_dy, x, scale, BatchnormBackwardAttrs::new())
        .unwrap_err();
    assert!(matches!(e, FrontendError::ShapeMismatch { ref got, .. } if *got == [2, 3, 4, 2]));
}

#[test]
fn layernorm_dims_and_phases() {
    let mut g = builder();
    let x = input(&mut g, "x", &[2, 3, 4, 5]);
    let scale = input(&mut g, "scale", &[1, 1, 4, 5]);
    let bias = input(&mut g, "bias", &[1, 1, 4, 5]);
    let eps = scalar(&mut g, "eps", 1e-5);
    let out = g
        .layernorm(
            x,
            scale,
            bias,
            LayernormAttrs::new(eps)
                .normalized_dims(2)
                .phase(NormFwdPhase::TRAINING),
        )
        .unwrap();
    assert_eq!(dims(&g, out.y), [2, 3, 4, 5]);
    assert_eq!(dims(&g, out.mean.unwrap()), [2, 3, 1, 1]);
    assert_eq!(dims(&g, out.inv_variance.unwrap()), [2, 3, 1, 1]);

    // Inference: no statistics; the default normalizes all but the batch dim.
    let e = g
        .layernorm(x, scale, bias, LayernormAttrs::new(eps).name("ln"))
        .unwrap_err();
    assert!(
        matches!(e, FrontendError::ShapeMismatch { ref expected, .. } if *expected == [1, 3, 4, 5])
    );
    let e = g
        .layernorm(x, scale, bias, LayernormAttrs::new(eps).normalized_dims(5))
        .unwrap_err();
    assert!(matches!(
        e,
        FrontendError::InvalidAttribute {
            attribute: "normalized_dim_count",
            ..
        }
    ));
    let e = g
        .layernorm(x, scale, bias, LayernormAttrs::new(x).normalized_dims(2))
        .unwrap_err();
    assert!(matches!(e, FrontendError::ShapeMismatch { ref tensor, .. } if tensor.name == "x"));
    let inf = g
        .layernorm(x, scale, bias, LayernormAttrs::new(eps).normalized_dims(2))
        .unwrap();
    assert_eq!((inf.mean, inf.inv_variance), (None, None));
}

#[test]
fn rmsnorm_infers_inv_rms_from_scale() {
    let mut g = builder();
    let x = input(&mut g, "x", &[2, 3, 4, 5]);
    let scale = input(&mut g, "scale", &[1, 3, 4, 5]);
    let bias = input(&mut g, "bias", &[1, 3, 4, 5]);
    let eps = scalar(&mut g, "eps", 1e-6);
    let out = g
        .rmsnorm(
            x,
            scale,
            RmsnormAttrs::new(eps)
                .bias(bias)
                .phase(NormFwdPhase::TRAINING),
        )
        .unwrap();
    assert_eq!(dims(&g, out.y), [2, 3, 4, 5]);
    assert_eq!(dims(&g, out.inv_rms.unwrap()), [2, 1, 1, 1]);
    let inf = g.rmsnorm(x, scale, RmsnormAttrs::new(eps)).unwrap();
    assert_eq!(inf.inv_rms, None);

    let bad = input(&mut g, "bad", &[1, 3, 2, 5]);
    let e = g
        .rmsnorm(x, bad, RmsnormAttrs::new(eps).name("rms"))
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "node \"rms\": tensor \"bad\" with dims [1, 3, 2, 5] does not broadcast with [2, 3, 4, 5]"
    );
    let e = g
        .rmsnorm(
            x,
            scale,
            RmsnormAttrs::new(eps).phase(NormFwdPhase::NOT_SET),
        )
        .unwrap_err();
    assert!(matches!(
        e,
        FrontendError::InvalidAttribute {
            attribute: "forward_phase",
            ..
        }
    ));
}

// ---------------------------------------------------------------------------------------
// Tensors, uids, layouts
// ---------------------------------------------------------------------------------------

#[test]
fn uids_are_assigned_around_explicit_ones() {
    let mut g = builder();
    let a = input(&mut g, "a", &[4]);
    let b = g.tensor(TensorDescriptor::new("b", [4]).uid(1)).unwrap();
    let c = input(&mut g, "c", &[4]);
    let d = g.tensor(TensorDescriptor::new("d", [4]).uid(3)).unwrap();
    let s1 = g
        .pointwise(&[a, b], PointwiseAttrs::new(PointwiseMode::ADD))
        .unwrap();
    let s2 = g
        .pointwise(&[c, d], PointwiseAttrs::new(PointwiseMode::ADD))
        .unwrap();
    let out = g
        .pointwise(&[s1, s2], PointwiseAttrs::new(PointwiseMode::MUL))
        .unwrap();
    g.set_output(out, true).unwrap().set_uid(out, 100).unwrap();
    let built = g.build().unwrap();
    let uid = |t| built.uid(t).unwrap();
    assert_eq!([a, b, c, d, s1, s2, out].map(uid), [2, 1, 4, 3, 5, 6, 100]);
    // The built graph carries the same uids.
    let mut graph_uids: Vec<i64> = built.graph().tensors.iter().map(|t| t.uid).collect();
    graph_uids.sort_unstable();
    assert_eq!(graph_uids, [1, 2, 3, 4, 5, 6, 100]);
}

#[test]
fn uid_collisions_are_errors() {
    let mut g = builder();
    let a = g.tensor(TensorDescriptor::new("a", [4]).uid(5)).unwrap();
    let e = g
        .tensor(TensorDescriptor::new("b", [4]).uid(5))
        .unwrap_err();
    assert_eq!(
        e,
        FrontendError::DuplicateUid {
            uid: 5,
            first: "a".into(),
            second: "b".into()
        }
    );
    assert_eq!(g.tensor_count(), 1);
    let b = g.tensor(TensorDescriptor::new("b", [4]).uid(6)).unwrap();
    assert!(matches!(
        g.set_uid(b, 5),
        Err(FrontendError::DuplicateUid { uid: 5, .. })
    ));
    // Re-giving a tensor its own uid is fine; moving a uid frees the old one.
    g.set_uid(a, 5).unwrap();
    g.set_uid(a, 7).unwrap();
    g.set_uid(b, 5).unwrap();
    assert_eq!(g.tensor_info(a).unwrap().uid(), Some(7));
    assert_eq!(g.tensor_info(b).unwrap().uid(), Some(5));
}

#[test]
fn layouts_give_packed_strides() {
    let mut g = builder();
    let cases: [(TensorLayout, &[i64], &[i64]); 5] = [
        (TensorLayout::Packed, &[2, 3, 4, 5], &[60, 20, 5, 1]),
        (TensorLayout::Nchw, &[2, 3, 4, 5], &[60, 20, 5, 1]),
        (TensorLayout::Nhwc, &[2, 3, 4, 5], &[60, 1, 15, 3]),
        (TensorLayout::ChannelsLast, &[2, 3, 7], &[21, 1, 3]),
        (TensorLayout::Ndhwc, &[1, 2, 3, 4, 5], &[120, 1, 40, 10, 2]),
    ];
    for (layout, d, s) in cases {
        let t = g
            .tensor(TensorDescriptor::new("t", d).layout(layout))
            .unwrap();
        assert_eq!(strides(&g, t), s, "{layout:?}");
    }
    let t = g
        .tensor(TensorDescriptor::new("explicit", [2, 3]).strides([1, 2]))
        .unwrap();
    assert_eq!(strides(&g, t), [1, 2]);

    let e = g
        .tensor(TensorDescriptor::new("bad", [2, 3, 4]).layout(TensorLayout::Nhwc))
        .unwrap_err();
    assert!(matches!(e, FrontendError::InvalidTensor { ref tensor, .. } if tensor == "bad"));
    for bad in [
        TensorDescriptor::new("zero", [2, 0]),
        TensorDescriptor::new("negative", [2, -1]),
        TensorDescriptor::new("empty", Vec::<i64>::new()),
        TensorDescriptor::new("short", [2, 3]).strides([1]),
    ] {
        let name = bad.name.clone();
        assert!(
            matches!(g.tensor(bad), Err(FrontendError::InvalidTensor { ref tensor, .. }) if *tensor == name),
            "{name}"
        );
    }

    // set_layout / set_strides change an output, and what later ops derive from it.
    let x = input(&mut g, "x", &[1, 2, 3, 3]);
    let y = g
        .pointwise(&[x], PointwiseAttrs::new(PointwiseMode::RELU_FWD))
        .unwrap();
    g.set_layout(y, TensorLayout::Nhwc).unwrap();
    assert_eq!(strides(&g, y), [18, 1, 6, 2]);
    let z = g
        .pointwise(&[y], PointwiseAttrs::new(PointwiseMode::NEG))
        .unwrap();
    assert_eq!(strides(&g, z), [18, 1, 6, 2]);
    g.set_strides(z, [18, 9, 3, 1]).unwrap();
    assert!(matches!(
        g.set_strides(z, [1, 1]),
        Err(FrontendError::InvalidTensor { .. })
    ));
}

#[test]
fn scalars_take_their_value_type() {
    let mut g = GraphBuilder::new("s");
    let cases = [
        (TensorValue::Float32(1.0), DataType::Float),
        (TensorValue::Float16(1.0), DataType::Half),
        (TensorValue::Float64(1.0), DataType::Double),
        (TensorValue::Int64(3), DataType::Int64),
        (TensorValue::Bool(true), DataType::Unset),
    ];
    for (v, dt) in cases {
        let t = g.tensor(TensorDescriptor::scalar("s", v)).unwrap();
        let info = g.tensor_info(t).unwrap();
        assert_eq!(
            (info.data_type(), info.dims(), info.value()),
            (dt, &[1][..], Some(v))
        );
    }
}

#[test]
fn handles_of_another_graph_are_refused() {
    let mut g1 = builder();
    let mut g2 = builder();
    let a = input(&mut g1, "a", &[2]);
    let b = input(&mut g2, "b", &[2]);
    let e = g2
        .pointwise(&[b, a], PointwiseAttrs::new(PointwiseMode::ADD).name("add"))
        .unwrap_err();
    assert_eq!(
        e,
        FrontendError::UnknownTensor {
            context: "node \"add\" input in_1".into()
        }
    );
    assert!(matches!(
        g2.set_output(a, true),
        Err(FrontendError::UnknownTensor { .. })
    ));
    // A clone shares the handles.
    let mut g3 = g1.clone();
    assert!(g3.set_output(a, true).is_ok());
    // A built graph knows only its own handles.
    let y = g1
        .pointwise(&[a], PointwiseAttrs::new(PointwiseMode::ABS))
        .unwrap();
    g1.set_output(y, true).unwrap();
    let built = g1.build().unwrap();
    assert_eq!(built.uid(b), None);
    assert_eq!(built.uid(a), Some(1));
}

// ---------------------------------------------------------------------------------------
// Build and validation
// ---------------------------------------------------------------------------------------

#[test]
fn validation_errors_name_nodes_and_tensors() {
    // A virtual output nobody reads.
    let mut g = builder();
    let x = input(&mut g, "x", &[2, 2]);
    g.pointwise(
        &[x],
        PointwiseAttrs::new(PointwiseMode::RELU_FWD).name("relu"),
    )
    .unwrap();
    let e = g.build().unwrap_err();
    assert_eq!(
        e,
        FrontendError::Validation(GraphError::VirtualWithoutReader {
            uid: 2,
            tensor: "relu.out".into(),
            node: "relu".into()
        })
    );
    assert!(e.to_string().contains("relu"));

    // A tensor no node uses.
    let mut g = builder();
    let x = input(&mut g, "x", &[2, 2]);
    let _unused = g
        .tensor(TensorDescriptor::new("unused", [3]).uid(9))
        .unwrap();
    let y = g
        .pointwise(&[x], PointwiseAttrs::new(PointwiseMode::EXP))
        .unwrap();
    g.set_output(y, true).unwrap();
    assert_eq!(
        g.build().unwrap_err(),
        FrontendError::Validation(GraphError::DanglingTensor {
            uid: 9,
            name: "unused".into()
        })
    );

    // No data type anywhere.
    let mut g = GraphBuilder::new("untyped");
    let x = input(&mut g, "x", &[2]);
    let y = g
        .pointwise(&[x], PointwiseAttrs::new(PointwiseMode::EXP))
        .unwrap();
    g.set_output(y, true).unwrap();
    assert!(matches!(
        g.build(),
        Err(FrontendError::Validation(GraphError::UnresolvedDataType {
            uid: 1,
            ..
        }))
    ));
    // Typing the tensors explicitly is enough.
    g.set_data_type(x, DataType::Half).unwrap();
    g.set_data_type(y, DataType::Half).unwrap();
    g.build().unwrap();

    // An empty graph.
    assert_eq!(
        builder().build().unwrap_err(),
        FrontendError::Validation(GraphError::NoNodes)
    );
}

#[test]
fn build_fills_graph_fields() {
    let mut g = GraphBuilder::new("fields")
        .io_data_type(DataType::Half)
        .intermediate_data_type(DataType::Float)
        .compute_data_type(DataType::Float)
        .preferred_engine("MIOPEN_ENGINE")
        .override_shape_enabled(true);
    let x = input(&mut g, "x", &[2, 2]);
    let s = g
        .tensor(
            TensorDescriptor::scalar("s", TensorValue::Float32(2.0)).runtime_pass_by_value(true),
        )
        .unwrap();
    let y = g
        .pointwise(
            &[x, s],
            PointwiseAttrs::new(PointwiseMode::MUL).compute_data_type(DataType::Double),
        )
        .unwrap();
    let z = g
        .pointwise(&[y], PointwiseAttrs::new(PointwiseMode::SQRT))
        .unwrap();
    g.set_output(z, true).unwrap().set_name(z, "z").unwrap();
    let built = g.build().unwrap();
    let graph = built.graph();
    assert_eq!(graph.name, "fields");
    assert_eq!(
        graph.preferred_engine_id,
        Some(hipdnn_data_sdk::engine_name_to_id("MIOPEN_ENGINE"))
    );
    assert!(graph.is_override_shape_enabled);
    assert_eq!(
        graph.min_required_engine_api_version,
        Some(hipdnn_flatbuffers_sdk::model::EngineApiVersion::new(
            1, 2, 0
        ))
    );
    assert_eq!(graph.nodes[0].compute_data_type, DataType::Double);
    assert_eq!(graph.nodes[1].compute_data_type, DataType::Float);
    let types: Vec<_> = graph
        .tensors
        .iter()
        .map(|t| (t.name.as_str(), t.data_type, t.is_virtual))
        .collect();
    assert_eq!(
        types,
        [
            ("x", DataType::Half, false),
            ("s", DataType::Float, false),
            ("pointwise_0.out", DataType::Float, true),
            ("z", DataType::Half, false),
        ]
    );
}
