//! Round trips (owned → bytes → verified view → owned, and through JSON) for every
//! table, and the golden wire files.

use hipdnn_data_sdk::DataType;

use crate::model::*;

#[path = "../tests/support/model_graphs.rs"]
#[allow(dead_code, reason = "the unit tests use only the golden graph")]
mod samples;
use crate::{
    EngineConfigView, EngineDetailsView, GraphAndPlanView, GraphView, TensorValue, VerifyLimits,
    wire,
};

fn graph_with(attributes: NodeAttributes) -> Graph {
    Graph {
        nodes: vec![Node {
            name: "n".into(),
            compute_data_type: DataType::Float,
            attributes,
        }],
        ..Graph::default()
    }
}

fn through_wire(graph: &Graph) -> Graph {
    let bytes = graph.to_bytes();
    let view = GraphView::from_bytes(&bytes).expect("own output verifies");
    view.to_model().expect("own output converts")
}

fn through_json<T: serde::Serialize + serde::de::DeserializeOwned>(value: &T) -> T {
    serde_json::from_str(&serde_json::to_string(value).unwrap()).unwrap()
}

#[test]
fn node_attributes_union_has_hipdnn_order() {
    let samples = NodeAttributes::all_samples(true);
    assert_eq!(samples.len(), 23);
    for (i, attributes) in samples.iter().enumerate() {
        assert_eq!(
            usize::from(attributes.tag().0),
            i + 1,
            "{}",
            attributes.type_name()
        );
        assert_eq!(
            wire::NodeAttributes::ENUM_VALUES[i + 1].variant_name(),
            Some(attributes.type_name())
        );
    }
}

#[test]
fn every_node_attributes_member_round_trips_with_all_fields_set() {
    for attributes in NodeAttributes::all_samples(true) {
        let graph = graph_with(attributes.clone());
        assert_eq!(through_wire(&graph), graph, "{}", attributes.type_name());
        assert_eq!(through_json(&graph), graph, "{}", attributes.type_name());
    }
}

#[test]
fn every_node_attributes_member_round_trips_with_optional_fields_absent() {
    for attributes in NodeAttributes::all_samples(false) {
        let graph = graph_with(attributes.clone());
        assert_eq!(through_wire(&graph), graph, "{}", attributes.type_name());
        assert_eq!(through_json(&graph), graph, "{}", attributes.type_name());
    }
}

#[test]
fn optional_scalars_are_absent_not_zero() {
    let absent = PointwiseAttributes {
        operation: wire::PointwiseMode::RELU_FWD,
        ..Default::default()
    };
    let zero = PointwiseAttributes {
        in_1_tensor_uid: Some(0),
        relu_lower_clip: Some(0.0),
        axis_tensor_uid: Some(0),
        ..absent.clone()
    };
    for (attributes, present) in [(absent, false), (zero, true)] {
        let bytes = graph_with(attributes.into()).to_bytes();
        let view = GraphView::from_bytes(&bytes).unwrap();
        let node = view.nodes().next().unwrap();
        let NodeAttributesRef::PointwiseAttributes(raw) = node.attributes() else {
            panic!("pointwise")
        };
        assert_eq!(raw.in_1_tensor_uid(), present.then_some(0));
        assert_eq!(raw.relu_lower_clip(), present.then_some(0.0));
        assert_eq!(raw.axis_tensor_uid(), present.then_some(0));
        assert_eq!(raw.in_2_tensor_uid(), None);
    }
}

/// The floor a graph needs is the highest of what it declares and what its features
/// need, in both forms; a declared floor above every feature's stands.
#[test]
fn the_required_engine_api_version_is_the_highest_floor() {
    let required = |g: &Graph| {
        let bytes = g.to_bytes();
        let from_view = GraphView::from_bytes(&bytes)
            .unwrap()
            .required_engine_api_version();
        assert_eq!(from_view, g.required_engine_api_version());
        from_view
    };
    let mut g = samples::conv_bias_relu();
    assert_eq!(required(&g), EngineApiVersion::BASELINE);
    g.is_override_shape_enabled = true;
    assert_eq!(required(&g), EngineApiVersion::new(1, 1, 0));
    g.tensors[3].is_runtime_pass_by_value = true;
    assert_eq!(required(&g), EngineApiVersion::new(1, 2, 0));
    g.tensors[0].alignment = 64;
    assert_eq!(required(&g), EngineApiVersion::new(1, 3, 0));
    g.min_required_engine_api_version = Some(EngineApiVersion::new(1, 1, 0));
    assert_eq!(required(&g), EngineApiVersion::new(1, 3, 0));
    g.min_required_engine_api_version = Some(EngineApiVersion::new(99, 0, 0));
    assert_eq!(required(&g), EngineApiVersion::new(99, 0, 0));
    let mut ragged = samples::conv_bias_relu();
    ragged.tensors[0].ragged_offset_tensor_uid = Some(4);
    assert_eq!(required(&ragged), EngineApiVersion::new(1, 3, 0));
}

/// A JSON number that overflows a float field is refused, naming it, rather than read
/// as an infinity the JSON form cannot write back; binary graphs may carry one, and say
/// where.
#[test]
fn json_numbers_overflowing_a_float_are_refused() {
    let mut graph = samples::conv_bias_relu();
    graph.tensors[3].value = Some(TensorValue::Float32(1.0));
    let json = graph
        .to_json()
        .replace("\"value\": 1.0", "\"value\": 1e300");
    assert!(json.contains("1e300"), "{json}");
    let error = Graph::from_json(&json).unwrap_err().to_string();
    assert!(
        error.contains("tensor uid 4 (\"bias\"): its value overflows to infinity"),
        "{error}"
    );
    graph.tensors[3].value = Some(TensorValue::Float32(f32::INFINITY));
    assert!(graph.non_finite_value().is_some());
    let mut pointwise = samples::conv_bias_relu();
    if let NodeAttributes::PointwiseAttributes(a) = &mut pointwise.nodes[2].attributes {
        a.relu_upper_clip = Some(3.0);
    }
    let json = pointwise
        .to_json()
        .replace("\"relu_upper_clip\": 3.0", "\"relu_upper_clip\": 1e39");
    let error = Graph::from_json(&json).unwrap_err().to_string();
    assert!(error.contains("node \"relu\": relu_upper_clip"), "{error}");
    assert_eq!(samples::conv_bias_relu().non_finite_value(), None);
}

#[test]
fn graph_level_fields_round_trip() {
    let mut graph = samples::conv_bias_relu();
    graph.preferred_engine_id = Some(hipdnn_data_sdk::engine_name_to_id("CPU_ENGINE"));
    graph.is_override_shape_enabled = true;
    graph.min_required_engine_api_version = Some(EngineApiVersion::new(1, 3, 0));
    graph.id = Some("00112233-4455-6677-8899-aabbccddeeff".parse().unwrap());
    graph.tensors[0].alignment = 64;
    graph.tensors[0].ragged_offset_tensor_uid = Some(4);
    graph.tensors[0].ragged_offset_multiplier = 8;
    graph.tensors[0].is_runtime_pass_by_value = true;
    assert_eq!(through_wire(&graph), graph);
    assert_eq!(through_json(&graph), graph);
    let bytes = graph.to_bytes();
    let view = GraphView::from_bytes(&bytes).unwrap();
    assert_eq!(
        view.min_required_engine_api_version(),
        EngineApiVersion::new(1, 3, 0)
    );
    assert_eq!(view.preferred_engine_id(), graph.preferred_engine_id);
    // Absent version means the 1.0.0 baseline; absent preferred engine is None, not 0.
    let bytes = samples::conv_bias_relu().to_bytes();
    let view = GraphView::from_bytes(&bytes).unwrap();
    assert_eq!(
        view.min_required_engine_api_version(),
        EngineApiVersion::BASELINE
    );
    assert_eq!(view.preferred_engine_id(), None);
    assert!(view.raw().id().is_none());
}

#[test]
fn every_tensor_value_variant_round_trips() {
    let values = [
        TensorValue::Float32(1.5),
        TensorValue::Float16(-2.0),
        TensorValue::BFloat16(0.25),
        TensorValue::Float8(0x7e),
        TensorValue::Int32(-7),
        TensorValue::Float64(1e-300),
        TensorValue::Int64(i64::MIN),
        TensorValue::Bool(true),
    ];
    let mut graph = samples::conv_bias_relu();
    for (i, value) in values.iter().enumerate() {
        graph.tensors.push(TensorAttributes {
            uid: 100 + i as i64,
            dims: vec![1],
            strides: vec![1],
            value: Some(*value),
            ..Default::default()
        });
    }
    assert_eq!(through_wire(&graph), graph);
    assert_eq!(through_json(&graph), graph);
    let bytes = graph.to_bytes();
    let view = GraphView::from_bytes(&bytes).unwrap();
    let read: Vec<_> = view.tensors().filter_map(|t| t.value()).collect();
    assert_eq!(read, values);
    assert!(view.tensor(1).unwrap().value().is_none());
}

fn all_knob_kinds() -> Vec<Knob> {
    vec![
        Knob {
            knob_id: "cpu.conv.algorithm".into(),
            description: "convolution algorithm".into(),
            default_value: KnobValue::String("auto".into()),
            constraint: Some(KnobConstraint::String(StringConstraint {
                max_length: 16,
                valid_values: vec!["auto".into(), "gemm".into(), "direct".into()],
            })),
            deprecated: false,
        },
        Knob {
            knob_id: "cpu.threads".into(),
            description: String::new(),
            default_value: KnobValue::Int(0),
            constraint: Some(KnobConstraint::Int(IntConstraint {
                min_value: 0,
                max_value: 256,
                step: 2,
                valid_values: vec![],
            })),
            deprecated: true,
        },
        Knob {
            knob_id: "cpu.tile".into(),
            description: "tile".into(),
            default_value: KnobValue::Int(32),
            constraint: Some(KnobConstraint::Int(IntConstraint {
                valid_values: vec![16, 32, 64],
                ..IntConstraint::default()
            })),
            deprecated: false,
        },
        Knob {
            knob_id: "cpu.alpha".into(),
            description: "a float".into(),
            default_value: KnobValue::Float(0.5),
            constraint: Some(KnobConstraint::Float(FloatConstraint {
                min_value: -1.0,
                max_value: 1.0,
            })),
            deprecated: false,
        },
        Knob {
            knob_id: "global.benchmarking".into(),
            description: "run variants".into(),
            default_value: KnobValue::Int(0),
            constraint: None,
            deprecated: false,
        },
    ]
}

#[test]
fn int_constraint_step_defaults_to_one() {
    assert_eq!(IntConstraint::default().step, 1);
    let knob = Knob {
        constraint: Some(KnobConstraint::Int(IntConstraint::default())),
        ..all_knob_kinds()[1].clone()
    };
    let details = EngineDetails {
        knobs: vec![knob],
        ..Default::default()
    };
    let bytes = details.to_bytes();
    let view = EngineDetailsView::from_bytes(&bytes).unwrap();
    let raw = view.knobs().next().unwrap().raw();
    assert_eq!(raw.constraint_as_int_constraint().unwrap().step(), 1);
}

#[test]
fn engine_details_round_trip_with_every_knob_kind() {
    let details = EngineDetails {
        engine_id: hipdnn_data_sdk::engine_name_to_id("CPU_ENGINE"),
        knobs: all_knob_kinds(),
        behavior_notes: vec![0, 2, 4, 99],
        name: "CPU_ENGINE".into(),
        candidate_page: Some(EngineCandidatePage {
            graph_id: "g".into(),
            device_id: "0".into(),
            device_arch: "x86_64".into(),
            problem_features: "{}".into(),
            device_features: "{}".into(),
            total_count: 2,
            offset: 1,
            candidates: vec![EngineCandidate {
                id: "c1".into(),
                knob_settings: vec![KnobSetting::new("cpu.tile", KnobValue::Int(64))],
                kernel_features: String::new(),
            }],
            engine_name: "CPU_ENGINE".into(),
            engine_descriptor_id: String::new(),
        }),
    };
    let bytes = details.to_bytes();
    let view = EngineDetailsView::from_bytes(&bytes).unwrap();
    assert_eq!(view.to_model(), details);
    assert_eq!(view.knobs().len(), 5);
    assert_eq!(
        view.knobs().map(|k| k.knob_id()).collect::<Vec<_>>()[1],
        "cpu.threads"
    );
    assert!(view.knobs().nth(1).unwrap().deprecated());
    assert_eq!(view.behavior_notes().collect::<Vec<_>>(), vec![0, 2, 4, 99]);
    for knob in view.knobs() {
        assert_eq!(
            &knob.to_model(),
            details
                .knobs
                .iter()
                .find(|k| k.knob_id == knob.knob_id())
                .unwrap()
        );
    }
    assert_eq!(through_json(&details), details);
}

#[test]
fn engine_config_round_trips_with_every_setting_kind() {
    let config = EngineConfig {
        engine_id: -42,
        knobs: vec![
            KnobSetting::new("global.deterministic", KnobValue::Int(1)),
            KnobSetting::new("cpu.alpha", KnobValue::Float(-0.75)),
            KnobSetting::new("cpu.conv.algorithm", KnobValue::String("gemm".into())),
        ],
        ranking_metric: "tflops".into(),
    };
    let bytes = config.to_bytes();
    let view = EngineConfigView::from_bytes(&bytes).unwrap();
    assert_eq!(view.engine_id(), -42);
    assert_eq!(view.to_model(), config);
    assert_eq!(view.knob_settings(), config.knobs);
    assert_eq!(through_json(&config), config);
    let empty = EngineConfig::default();
    assert_eq!(
        EngineConfigView::from_bytes(&empty.to_bytes())
            .unwrap()
            .to_model(),
        empty
    );
}

#[test]
fn engine_prediction_round_trips() {
    let prediction = EnginePrediction {
        engine_id: 7,
        kind: wire::PredictionKind::CONFIGURATION,
        status: wire::PredictionStatus::AVAILABLE,
        value: 12.5,
        uhd_id: "u".into(),
        reason: String::new(),
        engine_config: Some(EngineConfig {
            engine_id: 7,
            ..Default::default()
        }),
        binding_json: "{}".into(),
        features_json: "{}".into(),
        metric: "time".into(),
    };
    let bytes = prediction.to_bytes();
    let raw = flatbuffers::root::<wire::EnginePrediction<'_>>(&bytes).unwrap();
    assert_eq!(EnginePrediction::from_view(&raw).unwrap(), prediction);
    assert_eq!(through_json(&prediction), prediction);
}

#[test]
fn graph_and_plan_container_carries_its_identifier() {
    let graph = samples::conv_bias_relu().to_bytes();
    let container = SerializedGraphAndPlan {
        graph_blob: graph.clone(),
        plan_blob: vec![1, 2, 3],
    };
    let bytes = container.to_bytes();
    assert_eq!(&bytes[4..8], b"HDGP");
    let view = GraphAndPlanView::from_bytes_with_limits(&bytes, &VerifyLimits::DEFAULT).unwrap();
    assert_eq!(view.graph_blob(), graph.as_slice());
    assert_eq!(view.plan_blob(), &[1, 2, 3]);
    GraphView::from_bytes(view.graph_blob()).unwrap();
}

fn golden_path(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// Compares `actual` with a committed file; `HIPDNN_BLESS=1` rewrites the file instead.
fn check_golden(name: &str, actual: &[u8]) {
    let path = golden_path(name);
    if std::env::var_os("HIPDNN_BLESS").is_some() {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (HIPDNN_BLESS=1 writes it)", path.display()));
    if expected != actual {
        let at = expected
            .iter()
            .zip(actual)
            .position(|(a, b)| a != b)
            .unwrap_or(expected.len().min(actual.len()));
        panic!(
            "{name} drifted: {} bytes committed, {} produced, first difference at byte {at}; \
             if the change is intended, rerun with HIPDNN_BLESS=1",
            expected.len(),
            actual.len()
        );
    }
}

#[test]
fn golden_conv_bias_relu_binary_is_byte_exact() {
    let mut graph = samples::conv_bias_relu();
    graph.validate().unwrap();
    check_golden("conv_bias_relu.bin", &graph.to_bytes());
}

#[test]
fn golden_conv_bias_relu_json_matches_and_round_trips() {
    let mut graph = samples::conv_bias_relu();
    graph.validate().unwrap();
    let json = graph.to_json() + "\n";
    check_golden("conv_bias_relu.json", json.as_bytes());
    let committed = std::fs::read_to_string(golden_path("conv_bias_relu.json")).unwrap();
    let parsed = Graph::from_json(&committed).unwrap();
    assert_eq!(parsed, graph);
    // JSON and binary describe the same graph: the JSON's bytes are the golden bytes.
    assert_eq!(
        parsed.to_bytes(),
        std::fs::read(golden_path("conv_bias_relu.bin")).unwrap()
    );
    let bin = std::fs::read(golden_path("conv_bias_relu.bin")).unwrap();
    let from_bin = GraphView::from_bytes(&bin).unwrap().to_model().unwrap();
    assert_eq!(from_bin, parsed);
}

#[test]
fn json_names_enums_and_rejects_unknown_ones() {
    let json = samples::conv_bias_relu().to_json();
    assert!(json.contains("\"CROSS_CORRELATION\""));
    assert!(json.contains("\"RELU_FWD\""));
    assert!(json.contains("\"FLOAT\""));
    let bad = json.replace("\"RELU_FWD\"", "\"RELU_SIDEWAYS\"");
    let err = Graph::from_json(&bad).unwrap_err().to_string();
    assert!(err.contains("RELU_SIDEWAYS"), "{err}");
    let unknown_field = json.replacen("\"name\"", "\"nmae\"", 1);
    assert!(Graph::from_json(&unknown_field).is_err());
    // Numbers are accepted for enums, for values newer than this schema.
    let numeric = json.replace("\"RELU_FWD\"", "34");
    assert_eq!(
        Graph::from_json(&numeric).unwrap(),
        samples::conv_bias_relu()
    );
}

/// A chain of multiplications by one pass-by-value scalar of every `TensorValue` type.
fn scalars_graph() -> Graph {
    let values = [
        TensorValue::Float32(1.5),
        TensorValue::Float16(-2.0),
        TensorValue::BFloat16(0.25),
        TensorValue::Float8(0x38),
        TensorValue::Int32(-7),
        TensorValue::Float64(0.125),
        TensorValue::Int64(1 << 40),
        TensorValue::Bool(true),
    ];
    let tensor = |uid: i64, name: String, is_virtual| TensorAttributes {
        uid,
        name,
        dims: vec![2, 4],
        strides: vec![4, 1],
        is_virtual,
        ..Default::default()
    };
    let mut graph = Graph {
        name: "scalars".into(),
        io_data_type: DataType::Float,
        intermediate_data_type: DataType::Float,
        compute_data_type: DataType::Float,
        tensors: vec![tensor(1, "x".into(), false)],
        ..Default::default()
    };
    let mut current = 1;
    for (i, value) in values.iter().enumerate() {
        let scalar = 100 + i as i64;
        graph.tensors.push(TensorAttributes {
            uid: scalar,
            name: format!("scalar{i}"),
            dims: vec![1],
            strides: vec![1],
            value: Some(*value),
            ..Default::default()
        });
        let out = 2 + i as i64;
        graph
            .tensors
            .push(tensor(out, format!("t{i}"), i + 1 < values.len()));
        graph.nodes.push(Node::new(
            format!("mul{i}"),
            PointwiseAttributes {
                operation: wire::PointwiseMode::MUL,
                in_0_tensor_uid: current,
                in_1_tensor_uid: Some(scalar),
                out_0_tensor_uid: out,
                ..Default::default()
            },
        ));
        current = out;
    }
    graph.validate().expect("the scalars fixture is valid");
    graph
}

fn engine_details_fixture() -> EngineDetails {
    EngineDetails {
        engine_id: hipdnn_data_sdk::engine_name_to_id("CPU_ENGINE"),
        knobs: all_knob_kinds(),
        behavior_notes: vec![2, 4],
        name: "CPU_ENGINE".into(),
        candidate_page: None,
    }
}

fn engine_config_fixture() -> EngineConfig {
    EngineConfig {
        engine_id: hipdnn_data_sdk::engine_name_to_id("CPU_ENGINE"),
        knobs: vec![
            KnobSetting::new("global.deterministic", KnobValue::Int(1)),
            KnobSetting::new("cpu.alpha", KnobValue::Float(-0.75)),
            KnobSetting::new("cpu.conv.algorithm", KnobValue::String("gemm".into())),
        ],
        ranking_metric: "tflops".into(),
    }
}

#[test]
fn golden_scalars_engine_details_and_engine_config() {
    let graph = scalars_graph();
    check_golden("scalars.bin", &graph.to_bytes());
    check_golden("scalars.json", (graph.to_json() + "\n").as_bytes());
    let details = engine_details_fixture();
    check_golden("engine_details.bin", &details.to_bytes());
    check_golden(
        "engine_details.json",
        (serde_json::to_string_pretty(&details).unwrap() + "\n").as_bytes(),
    );
    let config = engine_config_fixture();
    check_golden("engine_config.bin", &config.to_bytes());
    check_golden(
        "engine_config.json",
        (serde_json::to_string_pretty(&config).unwrap() + "\n").as_bytes(),
    );
}

/// flatc's own (C++) implementation, run on the wire schema by
/// `scripts/check-wire-compat.sh`, decoded our golden binaries to `*.flatc.json` and
/// encoded our JSON to `*.flatc.bin`: both must hold the fixture's values.
#[test]
fn flatc_reads_our_buffers_and_writes_buffers_we_read() {
    let read = |name: &str| {
        std::fs::read(golden_path(name)).unwrap_or_else(|e| {
            panic!("{name}: {e} (scripts/check-wire-compat.sh --bless writes it)")
        })
    };
    let text = |name: &str| String::from_utf8(read(name)).unwrap();
    let mut conv = samples::conv_bias_relu();
    conv.validate().unwrap();
    for (name, expected) in [("conv_bias_relu", conv), ("scalars", scalars_graph())] {
        let bytes = read(&format!("{name}.flatc.bin"));
        let view = GraphView::from_bytes(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        view.validate().unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(view.to_model().unwrap(), expected, "{name}.flatc.bin");
        assert_eq!(
            Graph::from_json(&text(&format!("{name}.flatc.json"))).unwrap(),
            expected,
            "{name}.flatc.json"
        );
    }
    let details = engine_details_fixture();
    assert_eq!(
        EngineDetailsView::from_bytes(&read("engine_details.flatc.bin"))
            .unwrap()
            .to_model(),
        details
    );
    assert_eq!(
        serde_json::from_str::<EngineDetails>(&text("engine_details.flatc.json")).unwrap(),
        details
    );
    let config = engine_config_fixture();
    assert_eq!(
        EngineConfigView::from_bytes(&read("engine_config.flatc.bin"))
            .unwrap()
            .to_model(),
        config
    );
    assert_eq!(
        serde_json::from_str::<EngineConfig>(&text("engine_config.flatc.json")).unwrap(),
        config
    );
}

#[test]
fn json_doc_example_is_the_golden_graph() {
    let doc = include_str!("../../docs/graph-json.md");
    let example = doc
        .split("```json\n")
        .nth(2)
        .and_then(|s| s.split("```").next())
        .expect("the example block");
    let mut golden = samples::conv_bias_relu();
    golden.validate().unwrap();
    assert_eq!(Graph::from_json(example).unwrap(), golden);
}

#[test]
fn view_helpers_give_effective_types_packing_and_the_single_node() {
    let tensor = |uid: i64, dims: &[i64], strides: &[i64], dt: DataType, is_virtual: bool| {
        TensorAttributes {
            uid,
            name: format!("t{uid}"),
            data_type: dt,
            dims: dims.to_vec(),
            strides: strides.to_vec(),
            is_virtual,
            ..TensorAttributes::default()
        }
    };
    let mut graph = graph_with(NodeAttributes::all_samples(false).remove(0));
    graph.io_data_type = DataType::Half;
    graph.intermediate_data_type = DataType::Float;
    graph.tensors = vec![
        tensor(1, &[2, 3, 4], &[12, 4, 1], DataType::Unset, false),
        tensor(2, &[2, 3, 4], &[12, 1, 3], DataType::Unset, true),
        tensor(3, &[2, 3], &[3, 1], DataType::Bfloat16, false),
        tensor(4, &[2, 3], &[4, 1], DataType::Float, false),
    ];
    let bytes = graph.to_bytes();
    let view = GraphView::from_bytes(&bytes).unwrap();
    let t = |uid| view.tensor(uid).unwrap();
    assert_eq!(view.data_type_of(&t(1)), DataType::Half);
    assert_eq!(view.data_type_of(&t(2)), DataType::Float);
    assert_eq!(view.data_type_of(&t(3)), DataType::Bfloat16);
    assert!(t(1).is_packed() && t(3).is_packed());
    assert!(
        !t(2).is_packed(),
        "channels-last strides are not packed in dims order"
    );
    assert!(!t(4).is_packed(), "a padded row is not packed");
    assert_eq!(t(1).element_count(), 24);
    assert_eq!(view.single_node().unwrap().name(), "n");
    graph.nodes.push(graph.nodes[0].clone());
    let bytes = graph.to_bytes();
    assert!(
        GraphView::from_bytes(&bytes)
            .unwrap()
            .single_node()
            .is_none()
    );
}
