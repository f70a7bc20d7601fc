//! Fused chains against the same ops run one node per graph.

use hipdnn_cpu_provider::{CpuSettings, HostTensors, Plan};
use hipdnn_data_sdk::DataType;
use hipdnn_frontend::{
    BatchnormInferenceAttrs, ConvAttrs, GraphBuilder, MatmulAttrs, PointwiseAttrs, PointwiseMode,
    Tensor,
};

use crate::support::*;

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
        let mut g = f32_graph("fused");
        let x = input(&mut g, 1, &xd, &s(&xd), f);
        let w = input(&mut g, 2, &wd, &s(&wd), f);
        let bias = input(&mut g, 4, &cd, &s(&cd), f);
        let [mean, inv_variance, scale, shift] =
            [6, 7, 8, 9].map(|u| input(&mut g, u, &cd, &s(&cd), f));
        let conv = g
            .conv_fprop(x, w, ConvAttrs::new().name("conv").padding([1, 1]))
            .unwrap();
        result(&mut g, conv, 3, &s(&yd), false);
        let add = PointwiseAttrs::new(PointwiseMode::ADD).name("bias");
        let biased = g.pointwise(&[conv, bias], add).unwrap();
        result(&mut g, biased, 5, &s(&yd), false);
        let bn = g
            .batchnorm_inference(
                biased,
                mean,
                inv_variance,
                scale,
                shift,
                BatchnormInferenceAttrs::new().name("bn"),
            )
            .unwrap();
        result(&mut g, bn, 10, &s(&yd), false);
        let relu = PointwiseAttrs::new(PointwiseMode::RELU_FWD).name("relu");
        let y = g.pointwise(&[bn], relu).unwrap();
        result(&mut g, y, 11, &s(&yd), true);
        let graph = build(&g);
        let plan = Plan::from_model(&graph, &settings()).unwrap();
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

/// A batch norm whose mean an earlier stage computes (here `m1 + m2`) is folded after
/// that stage, every execution: the other folds run before the first stage.
#[test]
fn a_batch_norm_with_a_computed_parameter_folds_after_it_is_computed() {
    let order: &[usize] = &[0, 2, 3, 1];
    let (xd, wd, yd, cd) = (
        [1i64, 16, 5, 5],
        [24i64, 16, 1, 1],
        [1i64, 24, 5, 5],
        [1i64, 24, 1, 1],
    );
    let s = |d: &[i64]| strides_in(d, order);
    let f = DataType::Float;
    let mut g = f32_graph("computed_mean");
    let x = input(&mut g, 1, &xd, &s(&xd), f);
    let w = input(&mut g, 2, &wd, &s(&wd), f);
    let [m1, m2, inv_variance, scale, shift] =
        [3, 4, 5, 6, 7].map(|u| input(&mut g, u, &cd, &s(&cd), f));
    let mean = g
        .pointwise(
            &[m1, m2],
            PointwiseAttrs::new(PointwiseMode::ADD).name("mean"),
        )
        .unwrap();
    result(&mut g, mean, 8, &s(&cd), false);
    let conv = g.conv_fprop(x, w, ConvAttrs::new().name("conv")).unwrap();
    result(&mut g, conv, 9, &s(&yd), false);
    let bn = g
        .batchnorm_inference(
            conv,
            mean,
            inv_variance,
            scale,
            shift,
            BatchnormInferenceAttrs::new().name("bn"),
        )
        .unwrap();
    result(&mut g, bn, 10, &s(&yd), true);
    let graph = build(&g);
    let plan = Plan::from_model(&graph, &settings()).unwrap();
    assert_eq!(plan.stage_count(), 2, "{:?}", plan.describe());
    let x = values(xd.iter().product::<i64>() as usize, 1);
    let w = values(wd.iter().product::<i64>() as usize, 2);
    let mut c: Vec<Vec<f32>> = (0..5).map(|i| values(24, 10 + i)).collect();
    let conv = naive_conv2d(&x, &xd, &s(&xd), &w, &wd, &s(&wd), &yd, 0, 1, 1, false);
    let hw = (yd[2] * yd[3]) as usize;
    let mut ws = vec![0u8; plan.workspace_size()];
    for round in 0..2 {
        let mut y = vec![0f32; yd.iter().product::<i64>() as usize];
        plan.run_in(
            &mut HostTensors::new()
                .input(1, &x)
                .input(2, &w)
                .input(3, &c[0])
                .input(4, &c[1])
                .input(5, &c[2])
                .input(6, &c[3])
                .input(7, &c[4])
                .output(10, &mut y),
            &mut ws,
        )
        .unwrap();
        let want: Vec<f32> = conv
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let ch = (i / hw) % 24;
                (v - (c[0][ch] + c[1][ch])) * c[2][ch] * c[3][ch] + c[4][ch]
            })
            .collect();
        let got = dense(&y, &yd, &s(&yd));
        assert_close(&got, &want, 1e-4, &format!("round {round}"));
        // New values for one addend of the mean, in place.
        c[0].iter_mut().for_each(|v| *v = *v * 3.0 - 1.0);
    }
}

/// matmul → bias → GELU fused; an intermediate read twice is materialised and both
/// readers see it.
#[test]
fn matmul_chain_and_shared_intermediate() {
    let f = DataType::Float;
    let mut g = f32_graph("mm");
    let a = input(&mut g, 1, &[3, 5, 7], &[35, 7, 1], f);
    let b = input(&mut g, 2, &[1, 7, 20], &[140, 20, 1], f);
    let bias = input(&mut g, 4, &[1, 1, 20], &[20, 20, 1], f);
    let mm = g.matmul(a, b, MatmulAttrs::new().name("mm")).unwrap();
    result(&mut g, mm, 3, &[100, 20, 1], false);
    let add = PointwiseAttrs::new(PointwiseMode::ADD).name("bias");
    let biased = g.pointwise(&[mm, bias], add).unwrap();
    result(&mut g, biased, 5, &[100, 20, 1], false);
    for (uid, mode, node) in [
        (6, PointwiseMode::GELU_FWD, "gelu"),
        (7, PointwiseMode::TANH_FWD, "tanh"),
    ] {
        let out = g
            .pointwise(&[biased], PointwiseAttrs::new(mode).name(node))
            .unwrap();
        result(&mut g, out, uid, &[100, 20, 1], true);
    }
    let graph = build(&g);
    let plan = Plan::from_model(&graph, &settings()).unwrap();
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

/// matmul → bias (per column) → residual add (a full matrix) → ReLU, the chain the
/// GEMM's kernels apply in registers where the CPU has AVX-512 (A's rows read in
/// place): several K blocks, partial row tiles and panels, a broadcast B, 1–3 threads;
/// and the same chain into a column-major output (not fused: the general epilogue) and
/// from a column-major A (packed, not read in place).
#[test]
fn matmul_bias_residual_relu_matches_naive() {
    let (batch, m, k, n) = (2usize, 13usize, 300usize, 45usize);
    let f = DataType::Float;
    let a_v = values(batch * m * k, 21);
    let b_v = values(k * n, 22);
    let bias_v = values(n, 23);
    let r_v = values(batch * m * n, 24);
    let mut want = vec![0f32; batch * m * n];
    for bi in 0..batch {
        for i in 0..m {
            for j in 0..n {
                let mut t = 0f32;
                for q in 0..k {
                    t += a_v[(bi * m + i) * k + q] * b_v[q * n + j];
                }
                let at = (bi * m + i) * n + j;
                want[at] = (t + bias_v[j] + r_v[at]).max(0.0);
            }
        }
    }
    let (bd, md, kd, nd) = (batch as i64, m as i64, k as i64, n as i64);
    // The same A stored column-major in each batch.
    let mut a_cm = vec![0f32; a_v.len()];
    for bi in 0..batch {
        for i in 0..m {
            for q in 0..k {
                a_cm[bi * m * k + q * m + i] = a_v[(bi * m + i) * k + q];
            }
        }
    }
    for (threads, column_major, a_column_major) in [
        (1, false, false),
        (2, false, false),
        (3, false, false),
        (2, true, false),
        (2, false, true),
    ] {
        let mut g = f32_graph("mm_chain");
        let a_strides = if a_column_major {
            [md * kd, 1, md]
        } else {
            [md * kd, kd, 1]
        };
        let a = input(&mut g, 1, &[bd, md, kd], &a_strides, f);
        let b = input(&mut g, 2, &[1, kd, nd], &[kd * nd, nd, 1], f);
        let bias = input(&mut g, 3, &[1, 1, nd], &[nd, nd, 1], f);
        let res = input(&mut g, 4, &[bd, md, nd], &[md * nd, nd, 1], f);
        let mm = g.matmul(a, b, MatmulAttrs::new().name("mm")).unwrap();
        result(&mut g, mm, 5, &[md * nd, nd, 1], false);
        let add = |name: &str| PointwiseAttrs::new(PointwiseMode::ADD).name(name);
        let biased = g.pointwise(&[mm, bias], add("bias")).unwrap();
        result(&mut g, biased, 6, &[md * nd, nd, 1], false);
        let summed = g.pointwise(&[biased, res], add("residual")).unwrap();
        result(&mut g, summed, 7, &[md * nd, nd, 1], false);
        let relu = PointwiseAttrs::new(PointwiseMode::RELU_FWD).name("relu");
        let y = g.pointwise(&[summed], relu).unwrap();
        let y_strides = if column_major {
            [md * nd, 1, md]
        } else {
            [md * nd, nd, 1]
        };
        result(&mut g, y, 8, &y_strides, true);
        let graph = build(&g);
        let settings = CpuSettings {
            threads,
            ..CpuSettings::default()
        };
        let plan = Plan::from_model(&graph, &settings).unwrap();
        assert_eq!(plan.stage_count(), 1, "{:?}", plan.describe());
        let mut y = vec![f32::NAN; batch * m * n];
        plan.run(
            &mut HostTensors::new()
                .input(1, if a_column_major { &a_cm } else { &a_v })
                .input(2, &b_v)
                .input(3, &bias_v)
                .input(4, &r_v)
                .output(8, &mut y),
        )
        .unwrap();
        let got = dense(&y, &[bd, md, nd], &y_strides);
        let what = format!(
            "{threads} threads, column-major output {column_major}, column-major A {a_column_major}"
        );
        assert_close(&got, &want, 1e-4, &what);
    }
}

/// matmul → bias → GELU with HALF or BFLOAT16 virtual intermediates (FLOAT inputs and
/// output): the intermediates hold values of their type, so the engine rounds them as
/// the reference executor does, and the two agree to fp32 accuracy (unrounded, they
/// differ by the 16-bit type's precision).
#[test]
fn virtual_half_and_bf16_intermediates_are_rounded_like_the_reference() {
    use std::collections::BTreeMap;

    use hipdnn_test_sdk::data::{decode, encode};
    use hipdnn_test_sdk::executor::execute_graph;
    use hipdnn_test_sdk::tensor::HostTensor;

    for narrow in [DataType::Half, DataType::Bfloat16] {
        let f = DataType::Float;
        let (ad, bd, cd, biasd) = ([1i64, 16, 32], [1i64, 32, 8], [1i64, 16, 8], [1i64, 1, 8]);
        let packed = |d: &[i64]| strides_in(d, &[0, 1, 2]);
        let mut g = f32_graph("narrow_intermediates");
        let a = input(&mut g, 1, &ad, &packed(&ad), f);
        let b = input(&mut g, 2, &bd, &packed(&bd), f);
        let bias = input(&mut g, 3, &biasd, &packed(&biasd), f);
        let c = g.matmul(a, b, MatmulAttrs::new().name("matmul")).unwrap();
        result(&mut g, c, 4, &packed(&cd), false);
        g.set_data_type(c, narrow).unwrap();
        let add = PointwiseAttrs::new(PointwiseMode::ADD).name("bias");
        let biased = g.pointwise(&[c, bias], add).unwrap();
        result(&mut g, biased, 5, &packed(&cd), false);
        g.set_data_type(biased, narrow).unwrap();
        let gelu = PointwiseAttrs::new(PointwiseMode::GELU_FWD).name("gelu");
        let y = g.pointwise(&[biased], gelu).unwrap();
        result(&mut g, y, 6, &packed(&cd), true);
        let graph = build(&g);

        let inputs: Vec<Vec<f32>> = [(ad, 1), (bd, 2), (biasd, 3)]
            .iter()
            .map(|(d, seed)| {
                values(d.iter().product::<i64>() as usize, *seed)
                    .iter()
                    .map(|v| v * 4.0)
                    .collect()
            })
            .collect();
        let plan = Plan::from_model(&graph, &settings()).unwrap();
        let mut got = vec![0f32; cd.iter().product::<i64>() as usize];
        plan.run(
            &mut HostTensors::new()
                .input(1, &inputs[0])
                .input(2, &inputs[1])
                .input(3, &inputs[2])
                .output(6, &mut got),
        )
        .unwrap();

        let mut buffers: BTreeMap<i64, Vec<u8>> = [(1, &ad), (2, &bd), (3, &biasd)]
            .iter()
            .zip(&inputs)
            .map(|((uid, d), v)| {
                let dims: Vec<usize> = d.iter().map(|&x| x as usize).collect();
                (*uid, encode(f, &HostTensor::from_vec(dims, v)).unwrap())
            })
            .collect();
        buffers.insert(6, vec![0; got.len() * 4]);
        execute_graph(&graph, &mut buffers).unwrap();
        let want = decode(f, &buffers[&6], &[1, 16, 8], &[128, 8, 1])
            .unwrap()
            .logical();
        assert_close(&got, &want, 1e-5, &format!("{narrow:?} intermediates"));
    }
}

/// A bottleneck block (three fused conv chains, the last reading the block input again
/// for the residual add) in both layouts and under each convolution algorithm, against
/// the whole-graph reference. Channels-last stays channels-last through the two
/// materialised intermediates (whose declared strides are channels-first), so every
/// convolution runs the indirect kernel with the whole epilogue in its tile stores.
#[test]
fn bottleneck_block_epilogues_match_the_reference_in_both_layouts() {
    use std::collections::BTreeMap;

    use hipdnn_cpu_provider::kernels::ConvAlgo;
    use hipdnn_data_sdk::TensorLayout;
    use hipdnn_frontend::samples;
    use hipdnn_test_sdk::executor::execute_graph;

    for layout in [TensorLayout::Packed, TensorLayout::ChannelsLast] {
        // 2 images of 9×9: tiles cross image boundaries; 16 channels in the middle
        // (channels-last: the 3×3 runs Winograd where the CPU has AVX-512).
        let graph = samples::resnet_bottleneck(2, 64, 9, DataType::Float, layout);
        let io: Vec<_> = graph.tensors.iter().filter(|t| !t.is_virtual).collect();
        let out_uid = io.iter().find(|t| t.name == "y").unwrap().uid;
        let data: BTreeMap<i64, Vec<f32>> = io
            .iter()
            .map(|t| {
                let n = span(&t.dims, &t.strides);
                let v = if t.uid == out_uid {
                    vec![0.0; n]
                } else {
                    values(n, t.uid as u64)
                };
                (t.uid, v)
            })
            .collect();
        let mut buffers: BTreeMap<i64, Vec<u8>> = data
            .iter()
            .map(|(&uid, v)| (uid, v.iter().flat_map(|x| x.to_le_bytes()).collect()))
            .collect();
        execute_graph(&graph, &mut buffers).unwrap();
        let want: Vec<f32> = buffers[&out_uid]
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
            .collect();
        let winograd = winograd_runs_here();
        for conv_algo in [
            ConvAlgo::Auto,
            ConvAlgo::Gemm,
            ConvAlgo::Direct,
            ConvAlgo::Winograd,
        ] {
            let settings = CpuSettings {
                conv_algo,
                ..settings()
            };
            let plan = Plan::from_model(&graph, &settings).unwrap();
            let stages = plan.describe();
            assert_eq!(stages.len(), 3, "{stages:?}");
            if layout == TensorLayout::ChannelsLast && conv_algo == ConvAlgo::Auto {
                let middle = if winograd {
                    "conv Winograd"
                } else {
                    "conv Indirect"
                };
                assert!(stages[1].starts_with(middle), "{stages:?}");
                assert!(
                    [&stages[0], &stages[2]]
                        .iter()
                        .all(|s| s.starts_with("conv Indirect")),
                    "{stages:?}"
                );
            }
            let mut y = vec![0f32; want.len()];
            let mut tensors = HostTensors::new();
            for (uid, v) in data.iter().filter(|(u, _)| **u != out_uid) {
                tensors = tensors.input(*uid, v);
            }
            plan.run(&mut tensors.output(out_uid, &mut y)).unwrap();
            assert_close(&y, &want, 1e-4, &format!("{layout:?} {conv_algo:?}"));
        }
    }
}

/// `cpu.constant_weights`: executions after the first reuse the packed filters and give
/// the first one's values bit for bit; filters at another address are packed again.
#[test]
fn constant_weights_reuse_packed_filters_and_repack_at_a_new_address() {
    use std::collections::BTreeMap;

    use hipdnn_data_sdk::TensorLayout;
    use hipdnn_frontend::samples;

    let graph = samples::resnet_bottleneck(2, 32, 9, DataType::Float, TensorLayout::ChannelsLast);
    let io: Vec<_> = graph.tensors.iter().filter(|t| !t.is_virtual).collect();
    let out_uid = io.iter().find(|t| t.name == "y").unwrap().uid;
    let data: BTreeMap<i64, Vec<f32>> = io
        .iter()
        .filter(|t| t.uid != out_uid)
        .map(|t| (t.uid, values(span(&t.dims, &t.strides), t.uid as u64)))
        .collect();
    let out_len = {
        let t = io.iter().find(|t| t.uid == out_uid).unwrap();
        span(&t.dims, &t.strides)
    };
    let run = |plan: &Plan, data: &BTreeMap<i64, Vec<f32>>| {
        let mut y = vec![0f32; out_len];
        let mut tensors = HostTensors::new();
        for (uid, v) in data {
            tensors = tensors.input(*uid, v);
        }
        plan.run(&mut tensors.output(out_uid, &mut y)).unwrap();
        y
    };
    let plain = Plan::from_model(&graph, &settings()).unwrap();
    let constant = CpuSettings {
        constant_weights: true,
        ..settings()
    };
    let cached = Plan::from_model(&graph, &constant).unwrap();
    let want = run(&plain, &data);
    let first = run(&cached, &data);
    let second = run(&cached, &data);
    assert_eq!(first, want, "the first execution packs as usual");
    assert_eq!(second, want, "later executions reuse the packed filters");
    // New filter values in new buffers: packed again, so the results follow them.
    let filters: Vec<i64> = graph
        .tensors
        .iter()
        .filter(|t| t.name.ends_with("_w"))
        .map(|t| t.uid)
        .collect();
    assert_eq!(filters.len(), 3, "{filters:?}");
    let mut changed = data.clone();
    for uid in &filters {
        let w = changed.get_mut(uid).unwrap();
        *w = w.iter().map(|v| -v).collect();
    }
    let want_changed = run(&plain, &changed);
    assert_ne!(want_changed, want);
    assert_eq!(run(&cached, &changed), want_changed);
    // The packed filters are really kept: values changed in place (which the knob
    // promises never happens) are not seen, the plain plan sees them.
    let first_changed = run(&cached, &changed);
    let mut in_place = changed;
    for uid in &filters {
        for v in in_place.get_mut(uid).unwrap().iter_mut() {
            *v = -*v;
        }
    }
    assert_eq!(run(&plain, &in_place), want);
    assert_eq!(run(&cached, &in_place), first_changed);
}

/// Executions reuse the last execution's epilogues only while the buffers and the
/// workspace stay where they were: values changed in place are read (the input, the
/// biases, the batch-norm parameters, folded again every execution), and an output at
/// a new address is written there, the old one left alone.
#[test]
fn executions_follow_their_buffers_and_values() {
    use std::collections::BTreeMap;

    use hipdnn_data_sdk::TensorLayout;
    use hipdnn_frontend::samples;

    let nhwc = TensorLayout::ChannelsLast;
    for (graph, input, output) in [
        (
            samples::resnet_bottleneck(2, 32, 9, DataType::Float, nhwc),
            "x",
            "y",
        ),
        (samples::resnet50_scaled(1, 32, 8, nhwc), "image", "logits"),
    ] {
        let io: Vec<_> = graph.tensors.iter().filter(|t| !t.is_virtual).collect();
        let out = io.iter().find(|t| t.name == output).unwrap();
        let (out_uid, out_len) = (out.uid, span(&out.dims, &out.strides));
        // The tensors given new values in place.
        let changing: Vec<i64> = io
            .iter()
            .filter(|t| t.name == input || t.name.ends_with("_bias") || t.name.contains(".bn."))
            .map(|t| t.uid)
            .collect();
        assert!(changing.len() > 1, "{}: {changing:?}", graph.name);
        let mut data: BTreeMap<i64, Vec<f32>> = io
            .iter()
            .filter(|t| t.uid != out_uid)
            .map(|t| (t.uid, values(span(&t.dims, &t.strides), t.uid as u64)))
            .collect();
        let plan = Plan::from_model(&graph, &settings()).unwrap();
        let mut ws = vec![0u8; plan.workspace_size()];
        let mut run_in = |data: &BTreeMap<i64, Vec<f32>>, y: &mut [f32]| {
            let mut tensors = HostTensors::new();
            for (uid, v) in data {
                tensors = tensors.input(*uid, v);
            }
            plan.run_in(&mut tensors.output(out_uid, y), &mut ws)
                .unwrap();
        };
        // What a plan that never ran computes.
        let want = |data: &BTreeMap<i64, Vec<f32>>| {
            let fresh = Plan::from_model(&graph, &settings()).unwrap();
            let mut y = vec![0f32; out_len];
            let mut tensors = HostTensors::new();
            for (uid, v) in data {
                tensors = tensors.input(*uid, v);
            }
            fresh.run(&mut tensors.output(out_uid, &mut y)).unwrap();
            y
        };
        let mut y = vec![0f32; out_len];
        run_in(&data, &mut y);
        assert_eq!(y, want(&data), "{}", graph.name);
        for uid in &changing {
            let v = data.get_mut(uid).unwrap();
            v.iter_mut().for_each(|e| *e = *e * 0.5 + 0.25);
        }
        run_in(&data, &mut y);
        let changed = want(&data);
        assert_eq!(
            y, changed,
            "{}: values changed in place are read",
            graph.name
        );
        let mut y2 = vec![0f32; out_len];
        let before = y.clone();
        run_in(&data, &mut y2);
        assert_eq!(
            y2, changed,
            "{}: a new output address is written",
            graph.name
        );
        assert_eq!(y, before, "{}: the old output is left alone", graph.name);
    }
}

/// Runs `graph` through the engine under each convolution algorithm and checks the
/// graph outputs `outs` against the whole-graph reference; `check` sees each plan's
/// stage descriptions (and what the run is, for messages).
fn matches_the_reference_under_every_algorithm(
    graph: &hipdnn_flatbuffers_sdk::model::Graph,
    outs: &[i64],
    check: impl Fn(&[String], &str),
) {
    use std::collections::BTreeMap;

    use hipdnn_cpu_provider::kernels::ConvAlgo;
    use hipdnn_test_sdk::executor::execute_graph;

    let io: Vec<_> = graph.tensors.iter().filter(|t| !t.is_virtual).collect();
    let data: BTreeMap<i64, Vec<f32>> = io
        .iter()
        .filter(|t| !outs.contains(&t.uid))
        .map(|t| (t.uid, values(span(&t.dims, &t.strides), t.uid as u64)))
        .collect();
    let len = |uid: i64| {
        let t = io.iter().find(|t| t.uid == uid).unwrap();
        span(&t.dims, &t.strides)
    };
    let mut buffers: BTreeMap<i64, Vec<u8>> = data
        .iter()
        .map(|(&uid, v)| (uid, v.iter().flat_map(|x| x.to_le_bytes()).collect()))
        .collect();
    for &o in outs {
        buffers.insert(o, vec![0; 4 * len(o)]);
    }
    execute_graph(graph, &mut buffers).unwrap();
    for conv_algo in [ConvAlgo::Auto, ConvAlgo::Gemm, ConvAlgo::Direct] {
        let what = format!("{} {conv_algo:?}", graph.name);
        let settings = CpuSettings {
            conv_algo,
            ..settings()
        };
        let plan = Plan::from_model(graph, &settings).unwrap();
        check(&plan.describe(), &what);
        let mut got: BTreeMap<i64, Vec<f32>> =
            outs.iter().map(|&o| (o, vec![0f32; len(o)])).collect();
        let mut tensors = HostTensors::new();
        for (uid, v) in &data {
            tensors = tensors.input(*uid, v);
        }
        for (uid, v) in got.iter_mut() {
            tensors = tensors.output(*uid, v);
        }
        plan.run(&mut tensors).unwrap();
        for (uid, y) in &got {
            let want: Vec<f32> = buffers[uid]
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
                .collect();
            assert_close(y, &want, 1e-4, &format!("{what} uid {uid}"));
        }
    }
}

/// Checks the in-place rule on a plan of `r = relu(op0(x))`, `y = op1(x) + r`,
/// `out = op3(y)` (and, with `read_later`, `late = op2(r)` after the add): the add's
/// stage stores `y` over `r`'s bytes unless `r` is read after it.
fn residual_in_place(read_later: bool) -> impl Fn(&[String], &str) {
    move |stages: &[String], what: &str| {
        let add = stages.iter().position(|s| s.contains("-> add")).unwrap();
        if read_later {
            let late = stages.iter().position(|s| s.contains("op2")).unwrap();
            assert!(late > add, "{what}: op2 reads r after the add: {stages:?}");
            assert!(
                stages.iter().all(|s| !s.contains("in place")),
                "{what}: {stages:?}"
            );
        } else {
            assert!(
                stages[add].ends_with("(in place of 't10')"),
                "{what}: {stages:?}"
            );
        }
    }
}

/// `r = relu(op0(x))`, `y = op1(x) + r`, `out = op3(y)` (uids 10, 11, 12; `x` is uid 1,
/// the weights 2, 3, 5) and, with `read_later`, `late = op2(r)` after the add (uid 13,
/// weights 4): every tensor of `xd` dims, every weight of `wd`, packed in `order`.
fn residual_graph(
    name: &str,
    (xd, wd, order): (&[i64], &[i64], &[usize]),
    read_later: bool,
    op: impl Fn(&mut GraphBuilder, Tensor, Tensor, &str) -> Tensor,
) -> hipdnn_flatbuffers_sdk::model::Graph {
    let s = |d: &[i64]| strides_in(d, order);
    let f = DataType::Float;
    let mut g = f32_graph(&format!("{name} read_later={read_later}"));
    let x = input(&mut g, 1, xd, &s(xd), f);
    let [w0, w1, w3] = [2, 3, 5].map(|u| input(&mut g, u, wd, &s(wd), f));
    let c0 = op(&mut g, x, w0, "op0");
    let relu = PointwiseAttrs::new(PointwiseMode::RELU_FWD).name("relu");
    let r = g.pointwise(&[c0], relu).unwrap();
    result(&mut g, r, 10, &s(xd), false);
    let c1 = op(&mut g, x, w1, "op1");
    let add = PointwiseAttrs::new(PointwiseMode::ADD).name("add");
    let y = g.pointwise(&[c1, r], add).unwrap();
    result(&mut g, y, 11, &s(xd), false);
    let out = op(&mut g, y, w3, "op3");
    result(&mut g, out, 12, &s(xd), true);
    if read_later {
        let w2 = input(&mut g, 4, wd, &s(wd), f);
        let late = op(&mut g, r, w2, "op2");
        result(&mut g, late, 13, &s(xd), true);
    }
    build(&g)
}

/// A stage that is the last reader of the residual it adds stores its output over the
/// residual's bytes; one whose residual is read again later does not. Both match the
/// whole-graph reference in either layout and under every convolution algorithm (each
/// kernel's epilogue reads a residual element before storing the output over it).
#[test]
fn a_residual_read_last_is_added_in_place_and_one_read_later_is_kept() {
    let conv = |g: &mut GraphBuilder, x, w, name: &str| {
        g.conv_fprop(x, w, ConvAttrs::new().name(name)).unwrap()
    };
    for nhwc in [false, true] {
        let order: &[usize] = if nhwc { &[0, 2, 3, 1] } else { &[0, 1, 2, 3] };
        let dims: (&[i64], &[i64], &[usize]) = (&[2, 16, 5, 7], &[16, 16, 1, 1], order);
        for read_later in [false, true] {
            let outs: &[i64] = if read_later { &[12, 13] } else { &[12] };
            let name = format!("conv residual nhwc={nhwc}");
            matches_the_reference_under_every_algorithm(
                &residual_graph(&name, dims, read_later, conv),
                outs,
                residual_in_place(read_later),
            );
        }
    }
}

/// The same rule for matmul chains (a transformer's residual stream).
#[test]
fn a_matmul_residual_read_last_is_added_in_place_and_one_read_later_is_kept() {
    let matmul = |g: &mut GraphBuilder, a, b, name: &str| {
        g.matmul(a, b, MatmulAttrs::new().name(name)).unwrap()
    };
    let dims: (&[i64], &[i64], &[usize]) = (&[3, 20, 24], &[3, 24, 24], &[0, 1, 2]);
    for read_later in [false, true] {
        let outs: &[i64] = if read_later { &[12, 13] } else { &[12] };
        matches_the_reference_under_every_algorithm(
            &residual_graph("matmul residual", dims, read_later, matmul),
            outs,
            residual_in_place(read_later),
        );
    }
}

/// A channels-first network computes what the same network channels-last computes, bit
/// for bit: its activations are stored channels-last inside either way, the stem runs
/// over a channels-last copy of the image, and the filters are packed in the same
/// order whatever their layout. Only the caller's tensors differ in layout.
#[test]
fn a_channels_first_network_computes_what_its_channels_last_twin_does() {
    use hipdnn_data_sdk::TensorLayout;
    use hipdnn_flatbuffers_sdk::model::Graph;
    use hipdnn_frontend::samples;

    // The logits of `g` for inputs whose values depend on the tensor's name and
    // logical index only.
    let logits = |g: &Graph| {
        let io: Vec<_> = g.tensors.iter().filter(|t| !t.is_virtual).collect();
        let out = io.iter().find(|t| t.name == "logits").unwrap();
        let data: Vec<(i64, Vec<f32>)> = io
            .iter()
            .filter(|t| t.uid != out.uid)
            .map(|t| {
                let seed = (t.name.bytes())
                    .fold(7u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b)));
                let logical = values(t.dims.iter().product::<i64>() as usize, seed);
                (t.uid, strided(&logical, &t.dims, &t.strides))
            })
            .collect();
        let plan = Plan::from_model(g, &settings()).unwrap();
        assert!(
            plan.describe().iter().all(|d| !d.contains("ImplicitGemm")),
            "{:#?}",
            plan.describe()
        );
        let mut y = vec![0f32; span(&out.dims, &out.strides)];
        let mut tensors = HostTensors::new();
        for (uid, v) in &data {
            tensors = tensors.input(*uid, v);
        }
        plan.run(&mut tensors.output(out.uid, &mut y)).unwrap();
        dense(&y, &out.dims, &out.strides)
    };
    let first = logits(&samples::resnet50_scaled(1, 32, 8, TensorLayout::Nchw));
    let last = logits(&samples::resnet50_scaled(
        1,
        32,
        8,
        TensorLayout::ChannelsLast,
    ));
    assert!(first.iter().any(|&v| v != 0.0));
    assert_eq!(first, last);
}

/// A 3 × 3 convolution whose input and output are a caller's channels-first (NCHW)
/// images runs Winograd on a channels-last copy of its input (where the CPU has the
/// vector pair kernels; else the indirect GEMM on the copy) and writes its output,
/// with the chain of bias, ReLU and residual add, in channel rows: the reference's
/// values under every algorithm (the GEMM algorithm's indirect GEMM on the copy too). With
/// the convolution's own value also a graph output (two stores, no vector chain) the
/// blocks take the general epilogue.
#[test]
fn a_channels_first_3x3_runs_winograd_on_a_channels_last_copy() {
    // Two images of 13 × 11 (partial F(2×2) and F(4×4) tiles, tiles crossing rows of
    // tiles), 24 → 40 channels (a partial block of 16 output channels).
    let (xd, wd, cd) = ([2i64, 24, 13, 11], [40i64, 24, 3, 3], [1i64, 40, 1, 1]);
    let yd = [2i64, 40, 13, 11];
    let winograd = winograd_runs_here();
    for conv_stored in [false, true] {
        let nchw = |d: &[i64]| strides_in(d, &[0, 1, 2, 3]);
        let f = DataType::Float;
        let mut g = f32_graph(&format!("nchw 3x3 conv_stored={conv_stored}"));
        let x = input(&mut g, 1, &xd, &nchw(&xd), f);
        let w = input(&mut g, 2, &wd, &nchw(&wd), f);
        let bias = input(&mut g, 3, &cd, &nchw(&cd), f);
        let residual = input(&mut g, 4, &yd, &nchw(&yd), f);
        let attrs = ConvAttrs::new().name("conv").padding([1, 1]);
        let conv = g.conv_fprop(x, w, attrs).unwrap();
        result(&mut g, conv, 5, &nchw(&yd), conv_stored);
        let add = PointwiseAttrs::new(PointwiseMode::ADD).name("bias");
        let biased = g.pointwise(&[conv, bias], add).unwrap();
        result(&mut g, biased, 6, &nchw(&yd), false);
        let relu = PointwiseAttrs::new(PointwiseMode::RELU_FWD).name("relu");
        let r = g.pointwise(&[biased], relu).unwrap();
        result(&mut g, r, 7, &nchw(&yd), false);
        let add = PointwiseAttrs::new(PointwiseMode::ADD).name("residual");
        let y = g.pointwise(&[r, residual], add).unwrap();
        result(&mut g, y, 8, &nchw(&yd), true);
        let outs: &[i64] = if conv_stored { &[5, 8] } else { &[8] };
        matches_the_reference_under_every_algorithm(&build(&g), outs, |stages, what| {
            assert_eq!(stages.len(), 1, "{what}: {stages:?}");
            if what.ends_with("Auto") {
                let want = if winograd {
                    "conv Winograd"
                } else {
                    "conv Indirect"
                };
                assert!(stages[0].starts_with(want), "{what}: {stages:?}");
            }
        });
    }
}
