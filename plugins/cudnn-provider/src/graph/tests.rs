use super::*;

#[test]
fn packed_layouts_in_any_order() {
    assert!(is_packed(&[2, 3, 4, 5], &[60, 20, 5, 1])); // NCHW
    assert!(is_packed(&[2, 3, 4, 5], &[60, 1, 15, 3])); // NHWC
    assert!(is_packed(&[1, 3, 1, 1], &[3, 1, 1, 1]));
    assert!(!is_packed(&[2, 3, 4, 5], &[120, 40, 10, 2]));
    assert!(!is_packed(&[2, 3], &[0, 1]));
}

#[test]
fn layouts_are_rebuilt_from_stride_order() {
    let nhwc = [802816, 1, 14336, 256];
    assert_eq!(stride_order(&nhwc), [0, 2, 3, 1]);
    assert_eq!(
        packed_strides(&[1, 64, 56, 56], &[0, 2, 3, 1]),
        [200704, 1, 3584, 64]
    );
    assert_eq!(packed_strides(&[2, 3, 4, 5], &[0, 1, 2, 3]), [60, 20, 5, 1]);
}

use hipdnn_frontend::samples;
use hipdnn_plugin_sdk::graph::{AnyEpilogue, GraphIndex, partition};
use hipdnn_test_sdk::graphs::{self, Layout};

fn block(dtype: DataType) -> Graph {
    samples::resnet_bottleneck(
        2,
        256,
        8,
        dtype,
        hipdnn_data_sdk::TensorLayout::ChannelsLast,
    )
}

#[test]
fn a_bottleneck_block_is_claimed_with_nhwc_intermediates() {
    let g = block(DataType::Half);
    let t = Translation::new(&g).unwrap();
    assert_eq!(t.nodes.len(), 10);
    let names: Vec<&str> = [
        "x",
        "conv1_w",
        "conv2_w",
        "conv3_w",
        "conv1_bias",
        "conv2_bias",
        "conv3_bias",
        "y",
    ]
    .to_vec();
    let uid = |n: &str| graphs::uid_of(&g, n);
    let bound: BTreeSet<i64> = names.iter().map(|n| uid(n)).collect();
    assert_eq!(t.bound, bound);
    // Every intermediate follows x's NHWC order and is FLOAT inside cuDNN.
    for v in &t.virtuals {
        let spec = &t.tensors[v];
        assert_eq!(stride_order(&spec.strides), [0, 2, 3, 1], "uid {v}");
        assert_eq!(spec.data_type, cudnnDataType_t::CUDNN_DATA_FLOAT);
    }
    assert_eq!(
        t.tensors[&uid("x")].data_type,
        cudnnDataType_t::CUDNN_DATA_HALF
    );
    let whole = t.stage(&(0..10).collect::<Vec<_>>());
    assert_eq!(whole.ops.len(), 10);
    assert_eq!(whole.bound().count(), 8);
    assert!(t.scratch(&[whole]).is_empty());
}

#[test]
fn chains_pass_their_outputs_through_scratch() {
    let g = block(DataType::Bfloat16);
    let t = Translation::new(&g).unwrap();
    let index = GraphIndex::new(&g).unwrap();
    let chains = partition(&index, &AnyEpilogue);
    let stages: Vec<Stage> = chains
        .iter()
        .map(|c| t.stage(&c.nodes().collect::<Vec<_>>()))
        .collect();
    assert_eq!(
        stages.iter().map(|s| s.ops.len()).collect::<Vec<_>>(),
        [3, 3, 4],
        "conv + bias + relu twice, then conv + bias + residual add + relu"
    );
    let scratch = t.scratch(&stages);
    assert_eq!(scratch.len(), 2, "{scratch:?}");
    for (uid, bytes) in scratch {
        assert_eq!(
            bytes,
            2 * 64 * 8 * 8 * 2,
            "uid {uid}: BFLOAT16 [2, 64, 8, 8], as conv1's input"
        );
        assert!(stages[0].bound().any(|s| s.uid == uid) || stages[1].bound().any(|s| s.uid == uid));
    }
    // The stage reading a scratch tensor sees it as bound, not virtual.
    assert_eq!(stages[1].bound().count(), 4);
}

#[test]
fn batch_norm_inference_becomes_four_pointwise_operations() {
    let g = graphs::batchnorm_inference(&[2, 8, 4, 4], true, &Layout::Nhwc, DataType::Float);
    let t = Translation::new(&g).unwrap();
    let ops: Vec<&OpSpec> = t.nodes.iter().flat_map(|(_, ops)| ops).collect();
    assert_eq!(ops.len(), 5, "sub, mul, mul, add, then the ReLU");
    let modes: Vec<cudnnPointwiseMode_t> = ops
        .iter()
        .map(|op| match op {
            OpSpec::Pointwise { mode, .. } => *mode,
            other => panic!("{other:?}"),
        })
        .collect();
    use cudnnPointwiseMode_t as C;
    assert_eq!(
        modes,
        [
            C::CUDNN_POINTWISE_SUB,
            C::CUDNN_POINTWISE_MUL,
            C::CUDNN_POINTWISE_MUL,
            C::CUDNN_POINTWISE_ADD,
            C::CUDNN_POINTWISE_RELU_FWD
        ]
    );
}

#[test]
fn matmul_stages_lift_matrices_to_a_batch_of_one() {
    let g = graphs::matmul(&[16, 32], &[32, 8], &Layout::Nchw, DataType::Half);
    let t = Translation::new(&g).unwrap();
    let stage = t.stage(&[0]);
    for spec in &stage.tensors {
        assert_eq!(spec.dims.len(), 3);
        assert_eq!(spec.dims[0], 1);
    }
    let a = &stage.tensors[0];
    assert_eq!(
        (a.dims.as_slice(), a.strides.as_slice()),
        (&[1, 16, 32][..], &[512, 32, 1][..])
    );
}

#[test]
fn what_cudnn_cannot_run_is_not_claimed() {
    let refuse = |g: &Graph, needle: &str| {
        let err = Translation::new(g).unwrap_err();
        assert!(err.contains(needle), "{err}");
    };
    let training = graphs::batchnorm_training(
        &[2, 8, 4, 4],
        1e-5,
        Some(0.1),
        &Layout::Nchw,
        DataType::Float,
    );
    refuse(&training, "channels-last only");
    let nhwc = graphs::batchnorm_training(
        &[2, 8, 4, 4],
        1e-5,
        Some(0.1),
        &Layout::Nhwc,
        DataType::Half,
    );
    let t = Translation::new(&nhwc).unwrap();
    let OpSpec::NormForward(n) = &t.nodes[0].1[0] else {
        panic!()
    };
    assert_eq!(n.mode, cudnnBackendNormMode_t::CUDNN_BATCH_NORM);
    assert!(n.running.is_some());
    assert_eq!(
        t.nodes[0].1[0].outputs().len(),
        5,
        "y, mean, inv_variance, next running mean and variance"
    );
    let bwd = graphs::batchnorm_backward(&[2, 8, 4, 4], &Layout::Nhwc, DataType::Bfloat16);
    assert!(matches!(
        Translation::new(&bwd).unwrap().nodes[0].1[0],
        OpSpec::NormBackward(_)
    ));
    let strided = Layout::Explicit(vec![("in_0".into(), vec![64, 16, 4, 2])]);
    let p = hipdnn_test_sdk::reference::PointwiseParams::new(PointwiseMode::RELU_FWD);
    let g = graphs::pointwise(
        &p,
        &[vec![1, 4, 4, 2]],
        &[1, 4, 4, 2],
        &strided,
        DataType::Float,
    );
    refuse(&g, "not densely packed");
    let cmp = hipdnn_test_sdk::reference::PointwiseParams::new(PointwiseMode::CMP_GT);
    let g = graphs::pointwise(
        &cmp,
        &[vec![4, 4], vec![4, 4]],
        &[4, 4],
        &Layout::Nchw,
        DataType::Float,
    );
    refuse(&g, "is not supported by CUDNN_ENGINE");
    let mut half_compute = graphs::matmul(&[4, 4], &[4, 4], &Layout::Nchw, DataType::Half);
    half_compute.nodes[0].compute_data_type = DataType::Half;
    refuse(&half_compute, "computes in HALF");
}

#[test]
fn pointwise_stages_are_described_channels_last() {
    let relu = hipdnn_test_sdk::reference::PointwiseParams::new(PointwiseMode::RELU_FWD);
    let g = graphs::pointwise(
        &relu,
        &[vec![2, 3, 4, 4]],
        &[2, 3, 4, 4],
        &Layout::Nchw,
        DataType::Half,
    );
    let stage = Translation::new(&g).unwrap().stage(&[0]);
    let full = &stage.tensors[0];
    assert_eq!(
        (full.dims.as_slice(), full.strides.as_slice()),
        (&[2, 4, 3, 4][..], &[48, 1, 16, 4][..])
    );
    // Rank 2 gets leading unit dimensions.
    let g = graphs::pointwise(
        &relu,
        &[vec![5, 7]],
        &[5, 7],
        &Layout::Nchw,
        DataType::Float,
    );
    let stage = Translation::new(&g).unwrap().stage(&[0]);
    assert_eq!(stage.tensors[0].dims, [1, 7, 1, 5]);
    // A per-channel operand broadcasts in NHWC (channels innermost), not in NCHW.
    let add = hipdnn_test_sdk::reference::PointwiseParams::new(PointwiseMode::ADD);
    let dims = [vec![2, 3, 4, 4], vec![1, 3, 1, 1]];
    let nhwc = graphs::pointwise(&add, &dims, &[2, 3, 4, 4], &Layout::Nhwc, DataType::Half);
    let stage = Translation::new(&nhwc).unwrap().stage(&[0]);
    let chan = stage
        .tensors
        .iter()
        .find(|s| s.uid == graphs::uid_of(&nhwc, "in_1"))
        .unwrap();
    assert_eq!(chan.dims, [1, 3, 1, 1]);
    let nchw = graphs::pointwise(&add, &dims, &[2, 3, 4, 4], &Layout::Nchw, DataType::Half);
    let err = Translation::new(&nchw).unwrap_err();
    assert!(err.contains("cannot broadcast"), "{err}");
    // Fused into a convolution's epilogue, an NCHW bias is fine.
    let spec = graphs::ConvSpec::new(&[1, 3, 8, 8], &[4, 3, 3, 3]);
    assert!(
        Translation::new(&graphs::conv_bias_relu(
            &spec,
            &Layout::Nchw,
            DataType::Half
        ))
        .is_ok()
    );
}

#[test]
fn normalizations_are_viewed_as_outer_by_inner() {
    for layout in [Layout::Nchw, Layout::Nhwc] {
        let g = graphs::layernorm(&[2, 3, 4, 4], 3, 1e-5, true, &layout, DataType::Half);
        let t = Translation::new(&g).unwrap();
        let stage = t.stage(&[0]);
        let OpSpec::NormForward(n) = &stage.ops[0] else {
            panic!("{:?}", stage.ops)
        };
        assert_eq!(n.mode, cudnnBackendNormMode_t::CUDNN_LAYER_NORM);
        assert!(n.mean.is_some() && n.inv_variance.is_some());
        let x = stage.tensors.iter().find(|s| s.uid == n.x).unwrap();
        assert_eq!(
            (x.dims.as_slice(), x.strides.as_slice()),
            (&[2, 48, 1, 1][..], &[48, 1, 48, 48][..])
        );
        let mean = stage
            .tensors
            .iter()
            .find(|s| Some(s.uid) == n.mean)
            .unwrap();
        assert_eq!(mean.dims, [2, 1, 1, 1]);
        assert_eq!(
            stage.bound().count(),
            7,
            "x, scale, bias, epsilon, y, mean, inv_variance"
        );
    }
    let g = graphs::rmsnorm(
        &[2, 3, 4, 4],
        1e-5,
        false,
        false,
        &Layout::Nhwc,
        DataType::Bfloat16,
    );
    let t = Translation::new(&g).unwrap();
    let OpSpec::NormForward(n) = &t.nodes[0].1[0] else {
        panic!()
    };
    assert_eq!(n.mode, cudnnBackendNormMode_t::CUDNN_RMS_NORM);
    assert!(n.bias.is_none() && n.inv_variance.is_none());
    // Normalizing H and W of an NHWC tensor: C sits inside them in memory.
    let g = graphs::layernorm(
        &[2, 3, 4, 4],
        2,
        1e-5,
        false,
        &Layout::Nhwc,
        DataType::Float,
    );
    assert!(Translation::new(&g).unwrap_err().contains("innermost"));
}

#[test]
fn one_dimensional_convolutions_run_as_two_dimensional() {
    let spec = graphs::ConvSpec::new(&[2, 4, 9], &[6, 4, 3]).with(|p| p.stride(2).padding(1));
    for layout in [Layout::Nchw, Layout::Nhwc] {
        for g in [
            graphs::conv_fprop(&spec, &layout, DataType::Half),
            graphs::conv_wgrad(&spec, &layout, DataType::Float),
            graphs::conv_bias_relu(&spec, &layout, DataType::Bfloat16),
        ] {
            let t = Translation::new(&g).unwrap();
            let all: Vec<usize> = (0..t.nodes.len()).collect();
            let stage = t.stage(&all);
            let conv = stage
                .ops
                .iter()
                .find_map(|op| match op {
                    OpSpec::ConvForward { conv, .. } | OpSpec::ConvBackwardFilter { conv, .. } => {
                        Some(conv)
                    }
                    _ => None,
                })
                .unwrap();
            assert!(conv.lifted_1d);
            assert_eq!(
                (conv.stride.as_slice(), conv.pre_padding.as_slice()),
                (&[1, 2][..], &[0, 1][..])
            );
            for s in stage.tensors.iter().filter(|s| s.value.is_none()) {
                assert_eq!(s.dims.len(), 4, "{s:?}");
                assert_eq!(s.dims[2], 1, "{s:?}");
                let d: Vec<usize> = s.dims.iter().map(|&v| v as usize).collect();
                let st: Vec<usize> = s.strides.iter().map(|&v| v as usize).collect();
                assert!(is_packed(&d, &st), "{s:?}");
            }
        }
    }
}
