//! Fused chains against the same ops run one node per graph.

use hipdnn_cpu_provider::{CpuSettings, HostTensors, Plan};
use hipdnn_data_sdk::DataType;
use hipdnn_flatbuffers_sdk::model::{
    BatchnormInferenceAttributes, ConvolutionFwdAttributes, MatmulAttributes, PointwiseAttributes,
};
use hipdnn_flatbuffers_sdk::wire::{ConvMode, PointwiseMode};

use crate::support::*;

fn conv_attrs(x: i64, w: i64, y: i64) -> ConvolutionFwdAttributes {
    ConvolutionFwdAttributes {
        x_tensor_uid: x,
        w_tensor_uid: w,
        y_tensor_uid: y,
        pre_padding: vec![1, 1],
        post_padding: vec![1, 1],
        stride: vec![1, 1],
        dilation: vec![1, 1],
        conv_mode: ConvMode::CROSS_CORRELATION,
        ..ConvolutionFwdAttributes::default()
    }
}

fn pw(op: PointwiseMode, a: i64, b: Option<i64>, out: i64) -> PointwiseAttributes {
    PointwiseAttributes {
        operation: op,
        in_0_tensor_uid: a,
        in_1_tensor_uid: b,
        out_0_tensor_uid: out,
        ..PointwiseAttributes::default()
    }
}

fn settings() -> CpuSettings {
    CpuSettings {
        threads: 2,
        ..CpuSettings::default()
    }
}

/// conv → bias → BN inference → ReLU as one stage vs. four single-node graphs.
#[test]
fn conv_bias_bn_relu_runs_as_one_stage_and_matches_unfused() {
    for nhwc in [false, true] {
        let order: &[usize] = if nhwc { &[0, 2, 3, 1] } else { &[0, 1, 2, 3] };
        let (xd, wd, yd, cd) = (
            [2i64, 16, 6, 7],
            [24i64, 16, 3, 3],
            [2i64, 24, 6, 7],
            [1i64, 24, 1, 1],
        );
        let s = |d: &[i64]| strides_in(d, order);
        let f = DataType::Float;
        let mut g = G::new("fused");
        g.tensor(1, &xd, &s(&xd), f, false);
        g.tensor(2, &wd, &s(&wd), f, false);
        g.tensor(3, &yd, &s(&yd), f, true);
        g.tensor(4, &cd, &s(&cd), f, false);
        g.tensor(5, &yd, &s(&yd), f, true);
        for u in 6..=9 {
            g.tensor(u, &cd, &s(&cd), f, false);
        }
        g.tensor(10, &yd, &s(&yd), f, true);
        g.tensor(11, &yd, &s(&yd), f, false);
        g.node("conv", conv_attrs(1, 2, 3));
        g.node("bias", pw(PointwiseMode::ADD, 3, Some(4), 5));
        g.node(
            "bn",
            BatchnormInferenceAttributes {
                x_tensor_uid: 5,
                mean_tensor_uid: 6,
                inv_variance_tensor_uid: 7,
                scale_tensor_uid: 8,
                bias_tensor_uid: 9,
                y_tensor_uid: 10,
            },
        );
        g.node("relu", pw(PointwiseMode::RELU_FWD, 10, None, 11));
        let plan = Plan::from_model(&g.graph, &settings()).unwrap();
        assert_eq!(plan.stage_count(), 1, "{:?}", plan.describe());
        let x = values(xd.iter().product::<i64>() as usize, 1);
        let w = values(wd.iter().product::<i64>() as usize, 2);
        let c: Vec<Vec<f32>> = (0..5)
            .map(|i| {
                values(24, 10 + i)
                    .iter()
                    .map(|v| if i == 2 { v.abs() + 0.5 } else { *v })
                    .collect()
            })
            .collect();
        let mut y = vec![0f32; yd.iter().product::<i64>() as usize];
        plan.run(
            &mut HostTensors::new()
                .input(1, &x)
                .input(2, &w)
                .input(4, &c[0])
                .input(6, &c[1])
                .input(7, &c[2])
                .input(8, &c[3])
                .input(9, &c[4])
                .output(11, &mut y),
        )
        .unwrap();
        // Unfused reference: naive conv, then the per-channel math.
        let conv = naive_conv2d(&x, &xd, &s(&xd), &w, &wd, &s(&wd), &yd, 1, 1, 1, false);
        let got = dense(&y, &yd, &s(&yd));
        let hw = (yd[2] * yd[3]) as usize;
        let want: Vec<f32> = conv
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let ch = (i / hw) % 24;
                let t = v + c[0][ch];
                let t = (t - c[1][ch]) * c[2][ch] * c[3][ch] + c[4][ch];
                t.max(0.0)
            })
            .collect();
        assert_close(&got, &want, 1e-4, &format!("fused nhwc={nhwc}"));
    }
}

/// matmul → bias → GELU fused; an intermediate read twice is materialised and both
/// readers see it.
#[test]
fn matmul_chain_and_shared_intermediate() {
    let f = DataType::Float;
    let mut g = G::new("mm");
    g.tensor(1, &[3, 5, 7], &[35, 7, 1], f, false);
    g.tensor(2, &[1, 7, 20], &[140, 20, 1], f, false);
    g.tensor(3, &[3, 5, 20], &[100, 20, 1], f, true);
    g.tensor(4, &[1, 1, 20], &[20, 20, 1], f, false);
    g.tensor(5, &[3, 5, 20], &[100, 20, 1], f, true);
    g.tensor(6, &[3, 5, 20], &[100, 20, 1], f, false);
    g.tensor(7, &[3, 5, 20], &[100, 20, 1], f, false);
    g.node(
        "mm",
        MatmulAttributes {
            a_tensor_uid: 1,
            b_tensor_uid: 2,
            c_tensor_uid: 3,
            ..MatmulAttributes::default()
        },
    );
    g.node("bias", pw(PointwiseMode::ADD, 3, Some(4), 5));
    g.node("gelu", pw(PointwiseMode::GELU_FWD, 5, None, 6));
    g.node("tanh", pw(PointwiseMode::TANH_FWD, 5, None, 7));
    let plan = Plan::from_model(&g.graph, &settings()).unwrap();
    assert_eq!(plan.stage_count(), 2, "{:?}", plan.describe());
    let a = values(105, 1);
    let b = values(140, 2);
    let bias = values(20, 3);
    let (mut y1, mut y2) = (vec![0f32; 300], vec![0f32; 300]);
    plan.run(
        &mut HostTensors::new()
            .input(1, &a)
            .input(2, &b)
            .input(4, &bias)
            .output(6, &mut y1)
            .output(7, &mut y2),
    )
    .unwrap();
    for bi in 0..3 {
        for i in 0..5 {
            for j in 0..20 {
                let mut t = bias[j];
                for k in 0..7 {
                    t += a[bi * 35 + i * 7 + k] * b[k * 20 + j];
                }
                let gelu = 0.5
                    * t
                    * (1.0
                        + hipdnn_cpu_provider::kernels::pointwise::erf(
                            t / std::f32::consts::SQRT_2,
                        ));
                let at = bi * 100 + i * 20 + j;
                assert!(
                    (y1[at] - gelu).abs() < 1e-5 && (y2[at] - t.tanh()).abs() < 1e-5,
                    "at {at}"
                );
            }
        }
    }
}
