//! The applicability decision on the conformance suite's graphs and on neighbours of
//! the claimed patterns (no device needed).

use hipdnn_data_sdk::DataType;
use hipdnn_test_sdk::conformance::{Case, standard_cases};

use super::*;
use crate::reason_for_model;

fn case(name: &str) -> Case {
    standard_cases()
        .into_iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no case {name}"))
}

fn claimed(name: &str) -> Pattern {
    Pattern::match_graph(&case(name).graph()).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn refused(name: &str) -> String {
    match Pattern::match_graph(&case(name).graph()) {
        Ok(p) => panic!("{name} claimed as {}", p.label()),
        Err(e) => e,
    }
}

#[test]
fn convolutions_in_every_direction_and_layout_are_claimed() {
    for dir in ["conv_fprop", "conv_dgrad", "conv_wgrad"] {
        for dt in ["fp32", "fp16", "bf16"] {
            for layout in ["nchw", "nhwc"] {
                for shape in ["3x3_pad1", "groups2", "depthwise", "3d_3x3x3", "1x1"] {
                    let name = format!("{dir}/{shape}/{dt}/{layout}");
                    assert!(claimed(&name).is_convolution(), "{name}");
                }
            }
        }
    }
}

#[test]
fn a_1d_convolution_goes_to_miopen_as_2d_with_a_unit_height() {
    for layout in ["nchw", "nhwc"] {
        let Pattern::Conv {
            a,
            b,
            out,
            geometry,
            ..
        } = claimed(&format!("conv_fprop/1d_k3_stride2/fp32/{layout}"))
        else {
            panic!("not a convolution")
        };
        assert_eq!(b.dims, [2, 3, 1, 10]);
        assert_eq!(a.dims, [4, 3, 1, 3]);
        assert_eq!(out.dims, [2, 4, 1, 5]);
        assert_eq!(geometry.padding, [0, 1]);
        assert_eq!(geometry.stride, [1, 2]);
        assert_eq!(geometry.dilation, [1, 1]);
        if layout == "nhwc" {
            // NLC [2, 3, 10] strides [30, 1, 3] → [2, 3, 1, 10] strides [30, 1, 30, 3].
            assert_eq!(b.strides, [30, 1, 30, 3]);
        } else {
            assert_eq!(b.strides, [30, 10, 10, 1]);
        }
    }
}

#[test]
fn forward_arguments_follow_miopens_order() {
    let Pattern::Conv {
        a,
        b,
        out,
        geometry,
        direction,
    } = claimed("conv_fprop/groups2/fp32/nchw")
    else {
        panic!()
    };
    assert_eq!(direction, ConvDirection::Forward);
    assert_eq!(
        (a.dims.as_slice(), b.dims.as_slice(), out.dims.as_slice()),
        (&[6, 2, 3, 3][..], &[1, 4, 6, 6][..], &[1, 6, 6, 6][..])
    );
    assert_eq!(geometry.groups, 2);
    let Pattern::Conv { a, b, out, .. } = claimed("conv_wgrad/3x3_pad1/fp32/nchw") else {
        panic!()
    };
    // weight gradient: (dy, x) → dw
    assert_eq!(
        (a.dims[1], b.dims[1], out.dims.as_slice()),
        (6, 4, &[6, 4, 3, 3][..])
    );
}

#[test]
fn what_miopen_cannot_run_is_refused_with_the_reason() {
    assert!(refused("conv_fprop/2x2_asym_pad/fp32/nchw").contains("asymmetric padding"));
    assert!(refused("conv_fprop/convolution_mode/fp32/nchw").contains("cross-correlation only"));
    assert!(refused("conv_fprop/3x3_pad1/fp32/strided").contains("not densely packed"));
    assert!(refused("matmul/2d_4x5x3/fp32/nchw").contains("not a pattern"));
    assert!(refused("matmul_bias_gelu/2x8x16x4/fp32/nchw").contains("not a pattern"));
    assert!(refused("layernorm/4x3x16_last_inference/fp32/nchw").contains("not a pattern"));
    assert!(refused("pointwise/gelu_fwd/fp32/nchw").contains("GELU_FWD is not supported"));
    assert!(refused("pointwise/relu_fwd/bf16/nchw").contains("FLOAT and HALF"));
    assert!(refused("pointwise/add/fp32/nhwc").contains("channels-first"));
    assert!(refused("pointwise/add_padded_in_nhwc_out/fp32/strided").contains("channels-first"));
}

#[test]
fn fused_and_normalization_patterns_are_claimed() {
    for dt in ["fp32", "fp16", "bf16"] {
        for layout in ["nchw", "nhwc"] {
            let p = claimed(&format!("conv_bias_relu/3x3_pad1/{dt}/{layout}"));
            assert!(matches!(
                p,
                Pattern::ConvBiasActivation { bias: Some(_), .. }
            ));
            for (name, label) in [
                ("batchnorm_inference/2x4x5x5", "batchnorm_inference"),
                (
                    "batchnorm_inference_relu/3d_1x3x3x4x4",
                    "batchnorm_inference",
                ),
                (
                    "batchnorm_inference_variance/2x4x5x5",
                    "batchnorm_inference",
                ),
                ("batchnorm_training/4x3x3x3", "batchnorm_training"),
                ("batchnorm_training/2x4x5x5_running", "batchnorm_training"),
                ("batchnorm_backward/2x4x5x5", "batchnorm_backward"),
            ] {
                assert_eq!(
                    claimed(&format!("{name}/{dt}/{layout}")).label(),
                    label,
                    "{name}"
                );
            }
        }
    }
    let Pattern::BnInference {
        epsilon,
        activation,
        params,
        ..
    } = claimed("batchnorm_inference_relu/2x4x5x5/fp16/nhwc")
    else {
        panic!()
    };
    assert_eq!(epsilon, None);
    assert_eq!(activation.map(|a| a.mode), Some(Mode::miopenActivationRELU));
    assert_eq!(params[0].dims, [1, 4, 1, 1]);
    assert_eq!(params[0].strides, [4, 1, 1, 1]);
}

#[test]
fn activations_map_to_miopen_modes_with_their_parameters() {
    let act = |name: &str| match claimed(name) {
        Pattern::Activation { activation, .. } => activation,
        other => panic!("{name}: {}", other.label()),
    };
    assert_eq!(
        act("pointwise/relu_fwd/fp32/nchw"),
        Activation::new(Mode::miopenActivationRELU, 0.0, 0.0)
    );
    assert_eq!(
        act("pointwise/relu_fwd_clipped/fp16/nhwc"),
        Activation::new(Mode::miopenActivationCLAMP, -0.5, 0.5)
    );
    let leaky = act("pointwise/relu_fwd_leaky/fp32/nchw");
    assert_eq!(leaky.mode, Mode::miopenActivationLEAKYRELU);
    assert!((leaky.alpha - 0.1).abs() < 1e-6);
    assert_eq!(
        act("pointwise/sigmoid_fwd/fp32/nchw").mode,
        Mode::miopenActivationLOGISTIC
    );
    assert_eq!(
        act("pointwise/tanh_fwd/fp16/nchw"),
        Activation::new(Mode::miopenActivationTANH, 1.0, 1.0)
    );
}

#[test]
fn binary_operations_broadcast_in_1_only_and_sub_scales_it() {
    let Pattern::Binary { op, alpha2, b, .. } = claimed("pointwise/sub/fp16/nchw") else {
        panic!()
    };
    assert_eq!((op, alpha2), (miopenTensorOp_t::miopenTensorOpAdd, -1.0));
    assert_eq!(b.dims, [1, 3, 1, 1]);
    for (mode, op) in [
        ("add", miopenTensorOp_t::miopenTensorOpAdd),
        ("mul", miopenTensorOp_t::miopenTensorOpMul),
        ("max_op", miopenTensorOp_t::miopenTensorOpMax),
        ("min_op", miopenTensorOp_t::miopenTensorOpMin),
    ] {
        let Pattern::Binary {
            op: got, alpha2, ..
        } = claimed(&format!("pointwise/{mode}/fp32/nchw"))
        else {
            panic!()
        };
        assert_eq!((got, alpha2), (op, 1.0), "{mode}");
    }
    assert!(refused("pointwise/div/fp32/nchw").contains("DIV is not supported"));
}

#[test]
fn the_deterministic_engine_claims_convolutions_only() {
    let conv = case("conv_wgrad/3x3_pad1/fp32/nchw").graph();
    assert_eq!(reason_for_model(&conv, true), None);
    let fused = case("conv_bias_relu/3x3_pad1/fp32/nchw").graph();
    assert_eq!(reason_for_model(&fused, true), None);
    let bn = case("batchnorm_training/4x3x3x3/fp32/nchw").graph();
    assert!(
        reason_for_model(&bn, true)
            .unwrap()
            .contains("MIOPEN_ENGINE_DETERMINISTIC runs convolutions only")
    );
    assert_eq!(reason_for_model(&bn, false), None);
}

#[test]
fn neighbours_of_the_fused_patterns_are_refused() {
    use hipdnn_flatbuffers_sdk::model::NodeAttributes as N;
    // conv + bias + GELU: MIOpen has no such fusion.
    let mut g = case("conv_bias_relu/3x3_pad1/fp32/nchw").graph();
    if let N::PointwiseAttributes(p) = &mut g.nodes[2].attributes {
        p.operation = PointwiseMode::GELU_FWD;
    }
    assert!(
        Pattern::match_graph(&g)
            .unwrap_err()
            .contains("cannot be fused")
    );
    // Batch-norm with per-activation parameters (not spatial).
    let mut g = case("batchnorm_inference/2x4x5x5/fp32/nchw").graph();
    for t in &mut g.tensors {
        if t.name == "scale" {
            t.dims = vec![1, 4, 5, 5];
            t.strides = vec![100, 25, 5, 1];
        }
    }
    assert!(
        Pattern::match_graph(&g)
            .unwrap_err()
            .contains("spatial batch norm only")
    );
    // A non-FLOAT statistics tensor.
    let mut g = case("batchnorm_training/4x3x3x3/fp32/nchw").graph();
    for t in &mut g.tensors {
        if t.name == "scale" {
            t.data_type = DataType::Half;
        }
    }
    assert!(
        Pattern::match_graph(&g)
            .unwrap_err()
            .contains("must be FLOAT")
    );
}
