//! The engine as the SDK sees it: applicability with reasons, knobs, workspace limits.

use hipdnn_cpu_provider::{
    CpuSettings, ENGINE_ID, KNOB_CONV_ALGO, KNOB_THREADS, engine, plan_for, unsupported_reason,
};
use hipdnn_data_sdk::DataType;
use hipdnn_flatbuffers_sdk::GraphView;
use hipdnn_flatbuffers_sdk::model::{
    EngineConfig, Graph, Node, PointwiseAttributes, SdpaAttributes, TensorAttributes,
};
use hipdnn_flatbuffers_sdk::wire::PointwiseMode;
use hipdnn_frontend::{PointwiseAttrs, samples};
use hipdnn_plugin_sdk::abi::{HIPDNN_PLUGIN_STATUS_BAD_PARAM, HIPDNN_PLUGIN_STATUS_NOT_APPLICABLE};
use hipdnn_plugin_sdk::knobs::KnobSettingFactory;
use hipdnn_plugin_sdk::{Handle, IEngine};

use crate::support::*;

fn relu_graph(dt: DataType) -> Vec<u8> {
    let mut g = f32_graph("relu");
    let x = input(&mut g, 1, &[2, 8], &[8, 1], dt);
    let relu = PointwiseAttrs::new(PointwiseMode::RELU_FWD).name("relu");
    let y = g.pointwise(&[x], relu).unwrap();
    result(&mut g, y, 2, &[8, 1], true);
    g.set_data_type(y, dt).unwrap();
    build(&g).to_bytes()
}

/// A graph the frontend refuses to build (an unsupported node type, a `GEN_INDEX` without
/// its axis), written in the model: `FLOAT` tensors of `dims` and `strides` with uids
/// `uids`, and `node`.
fn model_graph(
    name: &str,
    (dims, strides): (&[i64], &[i64]),
    uids: std::ops::RangeInclusive<i64>,
    node: Node,
) -> Vec<u8> {
    let tensors = uids
        .map(|uid| TensorAttributes {
            uid,
            name: format!("t{uid}"),
            data_type: DataType::Float,
            dims: dims.to_vec(),
            strides: strides.to_vec(),
            ..TensorAttributes::default()
        })
        .collect();
    Graph {
        name: name.into(),
        io_data_type: DataType::Float,
        compute_data_type: DataType::Float,
        intermediate_data_type: DataType::Float,
        tensors,
        nodes: vec![node],
        ..Graph::default()
    }
    .to_bytes()
}

#[test]
fn engine_id_is_the_registered_hash() {
    assert_eq!(ENGINE_ID, hipdnn_data_sdk::engine_name_to_id("CPU_ENGINE"));
    assert_eq!(engine().id(), ENGINE_ID);
}

#[test]
fn claims_what_it_runs_and_rejects_the_rest_with_reasons() {
    let e = engine();
    let h = Handle::new(());
    for bytes in [
        samples::conv_bias_relu().to_bytes(),
        samples::pointwise_chain(5).to_bytes(),
        relu_graph(DataType::Half),
    ] {
        let v = GraphView::from_bytes(&bytes).unwrap();
        assert!(e.is_applicable(&h, &v), "{:?}", unsupported_reason(&v));
    }
    let bytes = relu_graph(DataType::Double);
    let v = GraphView::from_bytes(&bytes).unwrap();
    assert!(!e.is_applicable(&h, &v));
    let reason = unsupported_reason(&v).unwrap();
    assert!(
        reason.contains("uid 1") && reason.contains("DOUBLE"),
        "{reason}"
    );
    let Err(err) = e.create_plan(
        &h,
        &EngineConfig {
            engine_id: ENGINE_ID,
            ..EngineConfig::default()
        },
        &v,
    ) else {
        panic!("applied")
    };
    assert_eq!(err.status, HIPDNN_PLUGIN_STATUS_NOT_APPLICABLE);

    let bytes = model_graph(
        "sdpa",
        (&[1, 1, 4, 8], &[32, 32, 8, 1]),
        1..=4,
        Node::new(
            "attn",
            SdpaAttributes {
                q_tensor_uid: 1,
                k_tensor_uid: 2,
                v_tensor_uid: 3,
                o_tensor_uid: 4,
                ..SdpaAttributes::default()
            },
        ),
    );
    let reason = unsupported_reason(&GraphView::from_bytes(&bytes).unwrap()).unwrap();
    assert!(
        reason.contains("\"attn\"") && reason.contains("SdpaAttributes"),
        "{reason}"
    );

    let bytes = model_graph(
        "gen_index",
        (&[2, 8], &[8, 1]),
        1..=2,
        Node::new(
            "gi",
            PointwiseAttributes {
                operation: PointwiseMode::GEN_INDEX,
                in_0_tensor_uid: 1,
                out_0_tensor_uid: 2,
                ..PointwiseAttributes::default()
            },
        ),
    );
    let reason = unsupported_reason(&GraphView::from_bytes(&bytes).unwrap()).unwrap();
    assert!(reason.contains("axis"), "{reason}");
}

#[test]
fn knobs_are_advertised_and_validated() {
    let e = engine();
    let h = Handle::new(());
    let bytes = samples::conv_bias_relu().to_bytes();
    let v = GraphView::from_bytes(&bytes).unwrap();
    let details = e.details(&h, &v).unwrap();
    let ids: Vec<&str> = details.knobs.iter().map(|k| k.knob_id.as_str()).collect();
    for id in [
        KNOB_THREADS,
        KNOB_CONV_ALGO,
        "global.deterministic",
        "global.workspace_size_limit",
    ] {
        assert!(ids.contains(&id), "{ids:?}");
    }
    let config = |s: Vec<_>| EngineConfig {
        engine_id: ENGINE_ID,
        knobs: s,
        ..EngineConfig::default()
    };
    for bad in [
        KnobSettingFactory::string(KNOB_CONV_ALGO, "fft"),
        KnobSettingFactory::int(KNOB_THREADS, -1),
        KnobSettingFactory::float(KNOB_THREADS, 1.0),
        KnobSettingFactory::int("global.deterministic", 2),
    ] {
        let Err(err) = e.create_plan(&h, &config(vec![bad.clone()]), &v) else {
            panic!("{bad:?} accepted")
        };
        assert_eq!(
            err.status, HIPDNN_PLUGIN_STATUS_BAD_PARAM,
            "{bad:?}: {}",
            err.message
        );
    }
    let ok = config(vec![
        KnobSettingFactory::string(KNOB_CONV_ALGO, "direct"),
        KnobSettingFactory::int(KNOB_THREADS, 1),
        KnobSettingFactory::int("global.deterministic", 1),
    ]);
    let workspace = |c: &EngineConfig| e.create_plan(&h, c, &v).unwrap().workspace_size();
    assert_eq!(
        workspace(&ok),
        0,
        "direct conv + fused epilogue needs no workspace"
    );
    let gemm = config(vec![KnobSettingFactory::string(KNOB_CONV_ALGO, "gemm")]);
    let need = workspace(&gemm);
    assert!(need > 0);
    // A limit below the GEMM's need falls back to the direct algorithm.
    let limited = config(vec![
        KnobSettingFactory::string(KNOB_CONV_ALGO, "gemm"),
        KnobSettingFactory::int("global.workspace_size_limit", 16),
    ]);
    assert_eq!(workspace(&limited), 0);
}

#[test]
fn results_do_not_depend_on_thread_count() {
    let bytes = samples::conv_bias_relu().to_bytes();
    let v = GraphView::from_bytes(&bytes).unwrap();
    let x = values(192, 1);
    let w = values(108, 2);
    let b = values(4, 3);
    let mut outs = Vec::new();
    for threads in [1, 2, 3] {
        let plan = plan_for(
            &v,
            &CpuSettings {
                threads,
                ..CpuSettings::default()
            },
        )
        .unwrap();
        let mut y = vec![0f32; 256];
        plan.run(
            &mut hipdnn_cpu_provider::HostTensors::new()
                .input(1, &x)
                .input(2, &w)
                .input(4, &b)
                .output(6, &mut y),
        )
        .unwrap();
        outs.push(y);
    }
    assert!(outs.windows(2).all(|p| p[0] == p[1]));
}

#[test]
fn execution_errors_name_the_tensor() {
    let bytes = samples::conv_bias_relu().to_bytes();
    let plan = plan_for(
        &GraphView::from_bytes(&bytes).unwrap(),
        &CpuSettings::default(),
    )
    .unwrap();
    let (x, w, b) = (vec![0f32; 192], vec![0f32; 108], vec![0f32; 4]);
    let mut y = vec![0f32; 256];
    let err = plan
        .run(
            &mut hipdnn_cpu_provider::HostTensors::new()
                .input(1, &x)
                .input(2, &w)
                .output(6, &mut y),
        )
        .unwrap_err();
    assert!(err.message.contains("uid 4"), "{}", err.message);
    let short = vec![0f32; 10];
    let err = plan
        .run(
            &mut hipdnn_cpu_provider::HostTensors::new()
                .input(1, &short)
                .input(2, &w)
                .input(4, &b)
                .output(6, &mut y),
        )
        .unwrap_err();
    assert!(err.message.contains("uid 1"), "{}", err.message);
}
