//! Untrusted bytes: every `from_bytes*` must return `Err` on malformed input and never
//! panic, neither while verifying nor afterwards through the accessors of a view that
//! verified.

use hipdnn_data_sdk::{DataType, TensorLayout, packed_strides};
use hipdnn_flatbuffers_sdk::model::{
    self, EngineCandidate, EngineCandidatePage, FloatConstraint, IntConstraint, Knob,
    KnobConstraint, KnobSetting, KnobValue, Node, PointwiseAttributes, StringConstraint,
    TensorAttributes,
};
use hipdnn_flatbuffers_sdk::{
    EngineConfigView, EngineDetailsView, Error, GraphAndPlanView, GraphView, TensorValue,
    VerifyLimits, has_identifier, wire,
};
use proptest::prelude::*;
use proptest::sample::Index;

use crate::samples;

// ---------------------------------------------------------------------------------------
// A minimal FlatBuffers walker, to find the bytes a test corrupts.
// ---------------------------------------------------------------------------------------

fn u16_at(b: &[u8], pos: usize) -> u16 {
    u16::from_le_bytes(b[pos..pos + 2].try_into().unwrap())
}

fn u32_at(b: &[u8], pos: usize) -> u32 {
    u32::from_le_bytes(b[pos..pos + 4].try_into().unwrap())
}

fn i32_at(b: &[u8], pos: usize) -> i32 {
    i32::from_le_bytes(b[pos..pos + 4].try_into().unwrap())
}

fn i64_at(b: &[u8], pos: usize) -> i64 {
    i64::from_le_bytes(b[pos..pos + 8].try_into().unwrap())
}

fn put_u32(b: &mut [u8], pos: usize, v: u32) {
    b[pos..pos + 4].copy_from_slice(&v.to_le_bytes());
}

/// Follows the uoffset stored at `pos`.
fn deref(b: &[u8], pos: usize) -> usize {
    pos + u32_at(b, pos) as usize
}

/// Position of the root table.
fn root_table(b: &[u8]) -> usize {
    deref(b, 0)
}

/// Position of the vtable of the table at `table` (the soffset is subtracted).
fn vtable_of(b: &[u8], table: usize) -> usize {
    usize::try_from(table as i64 - i64::from(i32_at(b, table))).unwrap()
}

/// Position of the vtable entry for field `voffset` (None when the vtable is shorter).
fn vtable_entry(b: &[u8], table: usize, voffset: u16) -> Option<usize> {
    let vtable = vtable_of(b, table);
    (voffset < u16_at(b, vtable)).then_some(vtable + voffset as usize)
}

/// Position of field `voffset` of the table at `table`, if present.
fn field(b: &[u8], table: usize, voffset: u16) -> Option<usize> {
    let entry = vtable_entry(b, table, voffset)?;
    let off = u16_at(b, entry);
    (off != 0).then_some(table + off as usize)
}

/// Position of the length prefix of the vector in field `voffset`.
fn vector(b: &[u8], table: usize, voffset: u16) -> usize {
    deref(b, field(b, table, voffset).expect("vector field present"))
}

/// Position of table element `i` of the vector whose length prefix is at `vec`.
fn vector_table(b: &[u8], vec: usize, i: usize) -> usize {
    assert!(i < u32_at(b, vec) as usize);
    deref(b, vec + 4 + 4 * i)
}

fn tensor_table(b: &[u8], i: usize) -> usize {
    vector_table(b, vector(b, root_table(b), wire::Graph::VT_TENSORS), i)
}

fn node_table(b: &[u8], i: usize) -> usize {
    vector_table(b, vector(b, root_table(b), wire::Graph::VT_NODES), i)
}

fn string_at(b: &[u8], table: usize, voffset: u16) -> &str {
    let s = deref(b, field(b, table, voffset).expect("string field present"));
    let len = u32_at(b, s) as usize;
    std::str::from_utf8(&b[s + 4..s + 4 + len]).unwrap()
}

// ---------------------------------------------------------------------------------------
// Inputs.
// ---------------------------------------------------------------------------------------

/// The golden graph: `samples::conv_bias_relu()` as serialized (data types left unset).
fn golden() -> Vec<u8> {
    samples::conv_bias_relu().to_bytes()
}

/// The golden graph after validation: every tensor and node carries its data type.
fn golden_validated() -> Vec<u8> {
    let mut g = samples::conv_bias_relu();
    g.validate().unwrap();
    g.to_bytes()
}

/// `y = x * alpha` where `alpha` (uid 2) is a pass-by-value `Float32(1.0)`.
fn scalar_graph() -> model::Graph {
    let tensor = |uid, name: &str, dims: &[i64], value| TensorAttributes {
        uid,
        name: name.into(),
        dims: dims.to_vec(),
        strides: packed_strides(dims, TensorLayout::Packed).unwrap(),
        value,
        ..TensorAttributes::default()
    };
    let mut g = model::Graph {
        name: "scale".into(),
        io_data_type: DataType::Float,
        compute_data_type: DataType::Float,
        tensors: vec![
            tensor(1, "x", &[1, 8], None),
            tensor(2, "alpha", &[1], Some(TensorValue::Float32(1.0))),
            tensor(3, "y", &[1, 8], None),
        ],
        nodes: vec![Node::new(
            "scale",
            PointwiseAttributes {
                operation: wire::PointwiseMode::MUL,
                in_0_tensor_uid: 1,
                in_1_tensor_uid: Some(2),
                out_0_tensor_uid: 3,
                ..PointwiseAttributes::default()
            },
        )],
        ..model::Graph::default()
    };
    g.validate().unwrap();
    g
}

fn engine_details() -> model::EngineDetails {
    model::EngineDetails {
        engine_id: 0x5EED_CAFE_F00D_1234,
        knobs: vec![
            Knob {
                knob_id: "global.tile_m".into(),
                description: "tile rows".into(),
                default_value: KnobValue::Int(64),
                constraint: Some(KnobConstraint::Int(IntConstraint {
                    min_value: 16,
                    max_value: 256,
                    step: 16,
                    valid_values: vec![16, 64, 256],
                })),
                deprecated: false,
            },
            Knob {
                knob_id: "demo.math.alpha".into(),
                description: String::new(),
                default_value: KnobValue::Float(0.5),
                constraint: Some(KnobConstraint::Float(FloatConstraint {
                    min_value: 0.0,
                    max_value: 1.0,
                })),
                deprecated: true,
            },
            Knob {
                knob_id: "demo.kernel.variant".into(),
                description: "kernel family".into(),
                default_value: KnobValue::String("fast".into()),
                constraint: Some(KnobConstraint::String(StringConstraint {
                    max_length: 8,
                    valid_values: vec!["fast".into(), "exact".into()],
                })),
                deprecated: false,
            },
            Knob {
                knob_id: "demo.unconstrained".into(),
                description: String::new(),
                default_value: KnobValue::Int(-1),
                constraint: None,
                deprecated: false,
            },
        ],
        behavior_notes: vec![0, 2, 4],
        name: "demo_engine".into(),
        candidate_page: Some(EngineCandidatePage {
            graph_id: "g".into(),
            device_id: "0".into(),
            device_arch: "gfx942".into(),
            problem_features: "{}".into(),
            device_features: "{}".into(),
            total_count: 1,
            offset: 0,
            candidates: vec![EngineCandidate {
                id: "c0".into(),
                knob_settings: vec![KnobSetting::new("global.tile_m", KnobValue::Int(64))],
                kernel_features: "{}".into(),
            }],
            engine_name: "demo_engine".into(),
            engine_descriptor_id: String::new(),
        }),
    }
}

fn engine_config() -> model::EngineConfig {
    model::EngineConfig {
        engine_id: 0x5EED_CAFE_F00D_1234,
        knobs: vec![
            KnobSetting::new("global.tile_m", KnobValue::Int(128)),
            KnobSetting::new("demo.math.alpha", KnobValue::Float(0.25)),
            KnobSetting::new("demo.kernel.variant", KnobValue::String("exact".into())),
        ],
        ranking_metric: "tflops".into(),
    }
}

fn graph_and_plan() -> Vec<u8> {
    model::SerializedGraphAndPlan {
        graph_blob: golden(),
        plan_blob: vec![1, 2, 3, 4, 5],
    }
    .to_bytes()
}

// ---------------------------------------------------------------------------------------
// Exercising every accessor of whatever verified.
// ---------------------------------------------------------------------------------------

/// Touches everything a `GraphView` offers; returns the view's model, re-serialized.
fn exercise_graph(view: &GraphView<'_>) {
    let _ = (
        view.name(),
        view.bytes().len(),
        view.raw().is_override_shape_enabled(),
    );
    let _ = (
        view.compute_data_type(),
        view.intermediate_data_type(),
        view.io_data_type(),
    );
    let _ = (
        view.preferred_engine_id(),
        view.min_required_engine_api_version(),
    );
    assert_eq!(view.tensors().len(), view.tensor_count());
    assert_eq!(view.nodes().len(), view.node_count());
    for t in view.tensors() {
        let _ = (
            t.uid(),
            t.name(),
            t.data_type(),
            t.is_virtual(),
            t.value(),
            t.alignment(),
        );
        let _: i64 = t.dims().iter().fold(0, i64::wrapping_add);
        let _: i64 = t.strides().iter().fold(0, i64::wrapping_add);
        let _ = t.raw().ragged_offset_tensor_uid();
        let _ = t.to_model();
        assert!(view.tensor(t.uid()).is_some());
    }
    let (mut ins, mut outs) = (Vec::new(), Vec::new());
    for (i, n) in view.nodes().enumerate() {
        assert_eq!(n.index(), i);
        let _ = (n.name(), n.compute_data_type());
        let attributes = n.attributes();
        let _ = attributes.type_name();
        attributes.tensor_uids(&mut ins, &mut outs);
        let _ = attributes.to_owned();
    }
    let _ = view.validate();
    if let Ok(mut graph) = view.to_model() {
        // What a view accepted must survive a round trip through the owned form.
        let bytes = graph.to_bytes();
        let again = GraphView::from_bytes(&bytes).expect("a re-serialized view verifies");
        let again = again.to_model().expect("a re-serialized view converts");
        assert_eq!(again.to_bytes(), bytes, "owned round trip is stable");
        let _ = graph.to_json();
        let _ = graph.validate();
    }
}

fn exercise_engine_details(view: &EngineDetailsView<'_>) {
    let _ = (
        view.engine_id(),
        view.name(),
        view.behavior_notes().fold(0i32, i32::wrapping_add),
    );
    for k in view.knobs() {
        let _ = (k.knob_id(), k.description(), k.deprecated(), k.to_model());
    }
    let details = view.to_model();
    let bytes = details.to_bytes();
    let again = EngineDetailsView::from_bytes(&bytes).expect("re-serialized details verify");
    assert_eq!(again.to_model().to_bytes(), bytes);
}

fn exercise_engine_config(view: &EngineConfigView<'_>) {
    let _ = (
        view.engine_id(),
        view.knob_settings(),
        view.raw().ranking_metric(),
    );
    let config = view.to_model();
    let bytes = config.to_bytes();
    let again = EngineConfigView::from_bytes(&bytes).expect("re-serialized config verifies");
    assert_eq!(again.to_model().to_bytes(), bytes);
}

fn exercise_graph_and_plan(view: &GraphAndPlanView<'_>) {
    let _ = view.plan_blob().len();
    if let Ok(graph) = GraphView::from_bytes(view.graph_blob()) {
        exercise_graph(&graph);
    }
}

/// Feeds `bytes` to every entry point; whatever verifies is exercised.
fn feed_all(bytes: &[u8]) {
    let limits = VerifyLimits::DEFAULT;
    if let Ok(view) = GraphView::from_bytes(bytes) {
        exercise_graph(&view);
    }
    let _ = GraphView::from_bytes_with_limits(
        bytes,
        &VerifyLimits {
            max_depth: 3,
            max_tables: 64,
            max_bytes: 4096,
        },
    );
    if let Ok(view) = EngineDetailsView::from_bytes(bytes) {
        exercise_engine_details(&view);
    }
    let _ = EngineDetailsView::from_bytes_with_limits(bytes, &limits);
    if let Ok(view) = EngineConfigView::from_bytes(bytes) {
        exercise_engine_config(&view);
    }
    let _ = EngineConfigView::from_bytes_with_limits(bytes, &limits);
    if let Ok(view) = GraphAndPlanView::from_bytes_with_limits(bytes, &limits) {
        exercise_graph_and_plan(&view);
    }
    let _ = has_identifier(bytes, model::SerializedGraphAndPlan::IDENTIFIER);
}

/// Overwrites the bytes at `edits` (index into the buffer, new value).
fn mutate(mut bytes: Vec<u8>, edits: &[(Index, u8)]) -> Vec<u8> {
    let len = bytes.len();
    for (at, value) in edits {
        bytes[at.index(len)] = *value;
    }
    bytes
}

// ---------------------------------------------------------------------------------------
// Sanity of the inputs and of the walker.
// ---------------------------------------------------------------------------------------

#[test]
fn inputs_verify_and_walker_finds_fields() {
    let bytes = golden();
    let view = GraphView::from_bytes(&bytes).unwrap();
    exercise_graph(&view);
    assert_eq!(view.tensor_count(), 6);
    assert_eq!(view.node_count(), 3);

    let root = root_table(&bytes);
    assert_eq!(
        string_at(&bytes, root, wire::Graph::VT_NAME),
        "conv_bias_relu"
    );
    assert_eq!(
        u32_at(&bytes, vector(&bytes, root, wire::Graph::VT_TENSORS)),
        6
    );
    assert_eq!(
        u32_at(&bytes, vector(&bytes, root, wire::Graph::VT_NODES)),
        3
    );
    for i in 0..6 {
        let t = tensor_table(&bytes, i);
        assert_eq!(
            i64_at(
                &bytes,
                field(&bytes, t, wire::TensorAttributes::VT_UID).unwrap()
            ),
            i as i64 + 1
        );
        assert_eq!(
            u32_at(&bytes, vector(&bytes, t, wire::TensorAttributes::VT_DIMS)),
            4
        );
    }
    for (i, (name, tag)) in [("conv", 5u8), ("bias", 2), ("relu", 2)]
        .into_iter()
        .enumerate()
    {
        let n = node_table(&bytes, i);
        assert_eq!(string_at(&bytes, n, wire::Node::VT_NAME), name);
        assert_eq!(
            bytes[field(&bytes, n, wire::Node::VT_ATTRIBUTES_TYPE).unwrap()],
            tag
        );
    }

    let validated = golden_validated();
    let t0 = tensor_table(&validated, 0);
    let dt = field(&validated, t0, wire::TensorAttributes::VT_DATA_TYPE)
        .expect("validated tensors carry a type");
    assert_eq!(validated[dt], DataType::Float.to_wire() as u8);

    let details = engine_details().to_bytes();
    let view = EngineDetailsView::from_bytes(&details).unwrap();
    assert_eq!(view.to_model(), engine_details());
    exercise_engine_details(&view);

    let config = engine_config().to_bytes();
    let view = EngineConfigView::from_bytes(&config).unwrap();
    assert_eq!(view.to_model(), engine_config());
    exercise_engine_config(&view);

    let container = graph_and_plan();
    let view =
        GraphAndPlanView::from_bytes_with_limits(&container, &VerifyLimits::DEFAULT).unwrap();
    assert_eq!(view.graph_blob(), &golden()[..]);
    assert_eq!(view.plan_blob(), &[1, 2, 3, 4, 5]);
    exercise_graph_and_plan(&view);

    let scalar = scalar_graph().to_bytes();
    let view = GraphView::from_bytes(&scalar).unwrap();
    assert_eq!(
        view.tensor(2).unwrap().value(),
        Some(TensorValue::Float32(1.0))
    );
    view.validate().unwrap();
}

// ---------------------------------------------------------------------------------------
// Truncation, random bytes, mutations.
// ---------------------------------------------------------------------------------------

/// Checks every prefix of `bytes`: it must be rejected, except when the cut removes only
/// trailing alignment padding (zeros after the last object, fewer than 8: FlatBuffers has
/// no length field, so such a prefix is the same buffer). Those prefixes must decode to
/// exactly what the full buffer decodes to. Returns the accepted prefix lengths.
fn check_prefixes<M: PartialEq + std::fmt::Debug>(
    what: &str,
    bytes: &[u8],
    decode: impl Fn(&[u8]) -> Result<M, Error>,
) -> Vec<usize> {
    let full = decode(bytes).unwrap();
    let mut accepted = Vec::new();
    for len in 0..bytes.len() {
        feed_all(&bytes[..len]);
        let Ok(model) = decode(&bytes[..len]) else {
            continue;
        };
        let cut = &bytes[len..];
        assert!(
            cut.len() < 8 && cut.iter().all(|&b| b == 0),
            "{what}: a {len}-byte prefix of {} bytes verified although it cuts {cut:?}",
            bytes.len()
        );
        assert_eq!(
            model, full,
            "{what}: a {len}-byte prefix verified as something else"
        );
        accepted.push(len);
    }
    // Once a prefix verifies, every longer one does: only a padding tail was cut.
    if let Some(&first) = accepted.first() {
        assert_eq!(accepted, (first..bytes.len()).collect::<Vec<_>>(), "{what}");
    }
    accepted
}

#[test]
fn every_truncation_is_rejected() {
    let bytes = golden();
    let accepted = check_prefixes("Graph", &bytes, |b| {
        GraphView::from_bytes(b).and_then(|v| v.to_model())
    });
    // The graph's name is the first object built, so the last in the buffer; what follows
    // its NUL terminator is padding. Cutting into the terminator or anything before it fails.
    let name = deref(
        &bytes,
        field(&bytes, root_table(&bytes), wire::Graph::VT_NAME).unwrap(),
    );
    let data_end = name + 4 + u32_at(&bytes, name) as usize + 1;
    assert_eq!(accepted, (data_end..bytes.len()).collect::<Vec<_>>());
    for len in 0..data_end {
        assert!(
            GraphView::from_bytes(&bytes[..len]).is_err(),
            "prefix {len}"
        );
    }
}

#[test]
fn every_truncation_of_other_roots_is_rejected() {
    check_prefixes("EngineDetails", &engine_details().to_bytes(), |b| {
        EngineDetailsView::from_bytes(b).map(|v| v.to_model())
    });
    check_prefixes("EngineConfig", &engine_config().to_bytes(), |b| {
        EngineConfigView::from_bytes(b).map(|v| v.to_model())
    });
    check_prefixes("SerializedGraphAndPlan", &graph_and_plan(), |b| {
        GraphAndPlanView::from_bytes_with_limits(b, &VerifyLimits::DEFAULT)
            .map(|v| (v.graph_blob().to_vec(), v.plan_blob().to_vec()))
    });
    check_prefixes("scalar Graph", &scalar_graph().to_bytes(), |b| {
        GraphView::from_bytes(b).and_then(|v| v.to_model())
    });
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        feed_all(&bytes);
    }

    /// Random bytes behind a plausible root offset and vtable, so that the verifier gets
    /// past the first table more often.
    #[test]
    fn random_tables_never_panic(
        root in 4u32..64,
        vtable in prop::collection::vec(any::<u16>(), 2..16),
        tail in prop::collection::vec(any::<u8>(), 0..256),
    ) {
        let mut bytes = vec![0u8; 4];
        put_u32(&mut bytes, 0, root * 4);
        bytes.resize(root as usize * 4, 0);
        let vtable_pos = bytes.len();
        for v in &vtable {
            bytes.extend_from_slice(&v.to_le_bytes());
        }
        bytes[vtable_pos..vtable_pos + 2].copy_from_slice(&((vtable.len() * 2) as u16).to_le_bytes());
        if !bytes.len().is_multiple_of(4) {
            bytes.extend_from_slice(&[0, 0]);
        }
        let table_pos = bytes.len();
        bytes.extend_from_slice(&((table_pos - vtable_pos) as i32).to_le_bytes());
        bytes.extend_from_slice(&tail);
        // Point the root at the table.
        put_u32(&mut bytes, 0, table_pos as u32);
        feed_all(&bytes);
    }

    #[test]
    fn mutated_graph_never_panics(edits in prop::collection::vec((any::<Index>(), any::<u8>()), 1..=8)) {
        feed_all(&mutate(golden(), &edits));
        feed_all(&mutate(golden_validated(), &edits));
    }

    #[test]
    fn mutated_scalar_graph_never_panics(edits in prop::collection::vec((any::<Index>(), any::<u8>()), 1..=8)) {
        feed_all(&mutate(scalar_graph().to_bytes(), &edits));
    }

    #[test]
    fn mutated_engine_details_never_panic(edits in prop::collection::vec((any::<Index>(), any::<u8>()), 1..=8)) {
        feed_all(&mutate(engine_details().to_bytes(), &edits));
    }

    #[test]
    fn mutated_engine_config_never_panics(edits in prop::collection::vec((any::<Index>(), any::<u8>()), 1..=8)) {
        feed_all(&mutate(engine_config().to_bytes(), &edits));
    }

    #[test]
    fn mutated_graph_and_plan_never_panics(edits in prop::collection::vec((any::<Index>(), any::<u8>()), 1..=8)) {
        feed_all(&mutate(graph_and_plan(), &edits));
    }
}

// ---------------------------------------------------------------------------------------
// Wrong roots and identifiers.
// ---------------------------------------------------------------------------------------

#[test]
fn engine_details_are_not_a_graph() {
    let bytes = engine_details().to_bytes();
    let r = GraphView::from_bytes(&bytes);
    assert!(
        r.is_err(),
        "EngineDetails verified as a Graph: {:?}",
        r.map(|v| v.to_model())
    );
}

#[test]
fn engine_config_is_not_a_graph() {
    let bytes = engine_config().to_bytes();
    let r = GraphView::from_bytes(&bytes);
    assert!(
        r.is_err(),
        "EngineConfig verified as a Graph: {:?}",
        r.map(|v| v.to_model())
    );
}

#[test]
fn other_roots_given_to_each_other_never_panic() {
    for bytes in [
        golden(),
        golden_validated(),
        engine_details().to_bytes(),
        engine_config().to_bytes(),
        graph_and_plan(),
    ] {
        feed_all(&bytes);
    }
}

#[test]
fn graph_is_not_a_graph_and_plan() {
    for bytes in [
        golden(),
        golden_validated(),
        engine_details().to_bytes(),
        engine_config().to_bytes(),
    ] {
        let err =
            GraphAndPlanView::from_bytes_with_limits(&bytes, &VerifyLimits::DEFAULT).unwrap_err();
        assert!(
            matches!(
                err,
                Error::WrongIdentifier {
                    root: "SerializedGraphAndPlan",
                    expected: "HDGP"
                }
            ),
            "{err:?}"
        );
        assert!(err.to_string().contains("HDGP"), "{err}");
        assert!(!has_identifier(&bytes, "HDGP"));
    }
    assert!(has_identifier(&graph_and_plan(), "HDGP"));
    assert!(!has_identifier(&graph_and_plan(), "HDGQ"));
}

#[test]
fn too_short_buffers_have_no_identifier() {
    // The identifier sits at bytes 4..8: anything shorter than 8 bytes cannot carry it.
    let full = *b"\x08\0\0\0HDGP";
    for len in 0..8 {
        assert!(!has_identifier(&full[..len], "HDGP"), "{len} bytes");
        assert!(
            !has_identifier(&[0u8; 8][..len], "HDGP"),
            "{len} zero bytes"
        );
        let err = GraphAndPlanView::from_bytes_with_limits(&full[..len], &VerifyLimits::DEFAULT)
            .unwrap_err();
        assert!(
            matches!(err, Error::WrongIdentifier { .. }),
            "{len} bytes: {err:?}"
        );
    }
    assert!(has_identifier(&full, "HDGP"));
    // Eight bytes whose root offset points past the end: identifier present, buffer invalid.
    let err = GraphAndPlanView::from_bytes_with_limits(&full, &VerifyLimits::DEFAULT).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Invalid {
                root: "SerializedGraphAndPlan",
                ..
            }
        ),
        "{err:?}"
    );
    for len in 0..8 {
        assert!(
            GraphView::from_bytes(&full[..len]).is_err(),
            "{len} bytes as a graph"
        );
        assert!(
            EngineDetailsView::from_bytes(&full[..len]).is_err(),
            "{len} bytes as details"
        );
        assert!(
            EngineConfigView::from_bytes(&full[..len]).is_err(),
            "{len} bytes as a config"
        );
    }
}

#[test]
fn container_with_a_corrupt_graph_blob() {
    // The container verifies; the graph inside is untrusted too and is rejected on its own.
    let mut blob = golden();
    blob.truncate(blob.len() / 2);
    let bytes = model::SerializedGraphAndPlan {
        graph_blob: blob,
        plan_blob: Vec::new(),
    }
    .to_bytes();
    let view = GraphAndPlanView::from_bytes_with_limits(&bytes, &VerifyLimits::DEFAULT).unwrap();
    assert!(view.plan_blob().is_empty());
    assert!(GraphView::from_bytes(view.graph_blob()).is_err());
}

// ---------------------------------------------------------------------------------------
// Limits.
// ---------------------------------------------------------------------------------------

fn invalid_source(err: &Error) -> String {
    match err {
        Error::Invalid { source, .. } => source.to_string(),
        other => panic!("expected Error::Invalid, got {other:?}"),
    }
}

#[test]
fn default_limits_accept_the_golden_graph() {
    let bytes = golden();
    GraphView::from_bytes_with_limits(&bytes, &VerifyLimits::DEFAULT).unwrap();
    GraphView::from_bytes_with_limits(&bytes, &VerifyLimits::default()).unwrap();
    // Graph → node → attributes: three levels.
    GraphView::from_bytes_with_limits(
        &bytes,
        &VerifyLimits {
            max_depth: 3,
            ..VerifyLimits::DEFAULT
        },
    )
    .unwrap();
    // Exactly as large as the buffer.
    GraphView::from_bytes_with_limits(
        &bytes,
        &VerifyLimits {
            max_bytes: bytes.len(),
            ..VerifyLimits::DEFAULT
        },
    )
    .unwrap();
}

#[test]
fn depth_limit_rejects_the_golden_graph() {
    let bytes = golden();
    for max_depth in [0, 1, 2] {
        let err = GraphView::from_bytes_with_limits(
            &bytes,
            &VerifyLimits {
                max_depth,
                ..VerifyLimits::DEFAULT
            },
        )
        .unwrap_err();
        assert!(
            invalid_source(&err).contains("depth"),
            "max_depth {max_depth}: {err}"
        );
    }
}

#[test]
fn table_limit_rejects_the_golden_graph() {
    let bytes = golden();
    let err = GraphView::from_bytes_with_limits(
        &bytes,
        &VerifyLimits {
            max_tables: 3,
            ..VerifyLimits::DEFAULT
        },
    )
    .unwrap_err();
    assert!(invalid_source(&err).contains("Too many tables"), "{err}");
    // 1 graph + 6 tensors + 3 nodes + 3 attribute tables.
    GraphView::from_bytes_with_limits(
        &bytes,
        &VerifyLimits {
            max_tables: 13,
            ..VerifyLimits::DEFAULT
        },
    )
    .unwrap();
    let err = GraphView::from_bytes_with_limits(
        &bytes,
        &VerifyLimits {
            max_tables: 12,
            ..VerifyLimits::DEFAULT
        },
    )
    .unwrap_err();
    assert!(invalid_source(&err).contains("Too many tables"), "{err}");
}

#[test]
fn size_limit_rejects_the_golden_graph() {
    let bytes = golden();
    for max_bytes in [16, bytes.len() - 1] {
        let err = GraphView::from_bytes_with_limits(
            &bytes,
            &VerifyLimits {
                max_bytes,
                ..VerifyLimits::DEFAULT
            },
        )
        .unwrap_err();
        match err {
            Error::TooLarge { root, size, limit } => {
                assert_eq!((root, size, limit), ("Graph", bytes.len(), max_bytes));
            }
            other => panic!("expected TooLarge, got {other:?}"),
        }
    }
    let tiny = VerifyLimits {
        max_bytes: 16,
        ..VerifyLimits::DEFAULT
    };
    let details = engine_details().to_bytes();
    assert!(matches!(
        EngineDetailsView::from_bytes_with_limits(&details, &tiny),
        Err(Error::TooLarge {
            root: "EngineDetails",
            ..
        })
    ));
    let config = engine_config().to_bytes();
    assert!(matches!(
        EngineConfigView::from_bytes_with_limits(&config, &tiny),
        Err(Error::TooLarge {
            root: "EngineConfig",
            ..
        })
    ));
    let container = graph_and_plan();
    assert!(matches!(
        GraphAndPlanView::from_bytes_with_limits(&container, &tiny),
        Err(Error::TooLarge {
            root: "SerializedGraphAndPlan",
            ..
        })
    ));
}

// ---------------------------------------------------------------------------------------
// Lengths and offsets.
// ---------------------------------------------------------------------------------------

#[test]
fn huge_tensors_vector_length_is_rejected() {
    for len in [0x7FFF_FFFF, 0xFFFF_FFFF, 7] {
        let mut bytes = golden();
        let vec = vector(&bytes, root_table(&bytes), wire::Graph::VT_TENSORS);
        put_u32(&mut bytes, vec, len);
        let err = GraphView::from_bytes(&bytes).unwrap_err();
        assert!(
            matches!(err, Error::Invalid { root: "Graph", .. }),
            "length {len:#x}: {err:?}"
        );
    }
}

#[test]
fn huge_nodes_vector_length_is_rejected() {
    let mut bytes = golden();
    let vec = vector(&bytes, root_table(&bytes), wire::Graph::VT_NODES);
    put_u32(&mut bytes, vec, 0x7FFF_FFFF);
    assert!(matches!(
        GraphView::from_bytes(&bytes),
        Err(Error::Invalid { .. })
    ));
}

#[test]
fn huge_dims_vector_length_is_rejected() {
    for tensor in 0..6 {
        for voffset in [
            wire::TensorAttributes::VT_DIMS,
            wire::TensorAttributes::VT_STRIDES,
        ] {
            let mut bytes = golden();
            let vec = vector(&bytes, tensor_table(&bytes, tensor), voffset);
            put_u32(&mut bytes, vec, 0x7FFF_FFFF);
            let err = GraphView::from_bytes(&bytes).unwrap_err();
            assert!(
                matches!(err, Error::Invalid { .. }),
                "tensor {tensor}, field {voffset}: {err:?}"
            );
        }
    }
}

#[test]
fn huge_string_length_is_rejected() {
    let mut bytes = golden();
    let node = node_table(&bytes, 1);
    let name = deref(&bytes, field(&bytes, node, wire::Node::VT_NAME).unwrap());
    put_u32(&mut bytes, name, 0x7FFF_FFFF);
    assert!(matches!(
        GraphView::from_bytes(&bytes),
        Err(Error::Invalid { .. })
    ));
}

#[test]
fn offsets_out_of_bounds_are_rejected() {
    let len = golden().len() as u32;
    // The root offset.
    for root in [len, len + 4, u32::MAX - 3, 0x8000_0000] {
        let mut bytes = golden();
        put_u32(&mut bytes, 0, root);
        assert!(
            GraphView::from_bytes(&bytes).is_err(),
            "root offset {root:#x}"
        );
    }
    // A table's soffset to its vtable, both directions.
    for soffset in [i32::MAX, i32::MIN, -(len as i32), len as i32] {
        let mut bytes = golden();
        let node = node_table(&bytes, 0);
        bytes[node..node + 4].copy_from_slice(&soffset.to_le_bytes());
        assert!(GraphView::from_bytes(&bytes).is_err(), "soffset {soffset}");
    }
    // A vtable claiming to be longer than the buffer.
    let mut bytes = golden();
    let vtable = vtable_of(&bytes, root_table(&bytes));
    bytes[vtable..vtable + 2].copy_from_slice(&0xFFFEu16.to_le_bytes());
    assert!(GraphView::from_bytes(&bytes).is_err());
    // A field offset pointing past the end of the buffer.
    let mut bytes = golden();
    let entry = vtable_entry(&bytes, root_table(&bytes), wire::Graph::VT_TENSORS).unwrap();
    bytes[entry..entry + 2].copy_from_slice(&0xFFFCu16.to_le_bytes());
    assert!(GraphView::from_bytes(&bytes).is_err());
    // A tensor's offset in the tensors vector pointing past the end.
    let mut bytes = golden();
    let vec = vector(&bytes, root_table(&bytes), wire::Graph::VT_TENSORS);
    put_u32(&mut bytes, vec + 4 + 4 * 5, len);
    assert!(GraphView::from_bytes(&bytes).is_err());
}

// ---------------------------------------------------------------------------------------
// Unions and enums.
// ---------------------------------------------------------------------------------------

#[test]
fn unknown_node_attributes_tag_is_rejected() {
    for (node, name) in [(0, "conv"), (2, "relu")] {
        for tag in [wire::NodeAttributes::ENUM_MAX + 1, 24, 100, 255] {
            let mut bytes = golden();
            let pos = field(
                &bytes,
                node_table(&bytes, node),
                wire::Node::VT_ATTRIBUTES_TYPE,
            )
            .unwrap();
            bytes[pos] = tag;
            let err = GraphView::from_bytes(&bytes).unwrap_err();
            match &err {
                Error::UnknownUnionTag {
                    location,
                    union,
                    tag: t,
                } => {
                    assert_eq!((*union, *t), ("NodeAttributes", tag));
                    assert!(location.contains(name), "{location}");
                    assert!(location.contains(&format!("node {node}")), "{location}");
                }
                other => panic!("tag {tag}: expected UnknownUnionTag, got {other:?}"),
            }
            let message = err.to_string();
            assert!(
                message.contains(name) && message.contains(&tag.to_string()),
                "{message}"
            );
        }
    }
}

/// The verifier does not look at the value slot of a union whose tag it does not know,
/// so the view must reject the tag before it follows that slot.
#[test]
fn unknown_node_attributes_tag_with_a_bogus_value_slot_is_rejected() {
    for tag in [24u8, 255, 0] {
        for slot in [0xFFF0u16, 0x0400] {
            let mut bytes = scalar_graph().to_bytes();
            let node = node_table(&bytes, 0);
            let pos = field(&bytes, node, wire::Node::VT_ATTRIBUTES_TYPE).unwrap();
            bytes[pos] = tag;
            // The value slot's field offset now points past the end of the buffer.
            let entry = vtable_entry(&bytes, node, wire::Node::VT_ATTRIBUTES).unwrap();
            assert!(node + slot as usize > bytes.len());
            bytes[entry..entry + 2].copy_from_slice(&slot.to_le_bytes());
            let result = std::panic::catch_unwind(|| GraphView::from_bytes(&bytes).map(|_| ()));
            let err = result
                .unwrap_or_else(|_| {
                    panic!("GraphView::from_bytes panicked (tag {tag}, slot offset {slot:#x})")
                })
                .unwrap_err();
            assert!(
                matches!(err, Error::UnknownUnionTag { tag: t, .. } | Error::MissingUnionValue { tag: t, .. } if t == tag)
                    || matches!(err, Error::Invalid { .. }),
                "tag {tag}: {err:?}"
            );
            assert!(
                err.to_string().contains("scale") || matches!(err, Error::Invalid { .. }),
                "{err}"
            );
        }
    }
}

#[test]
fn node_attributes_tag_of_another_member_is_rejected() {
    // conv's table read as a member with required fields or a different layout must not
    // be trusted: either it verifies as that member or it is rejected; never a panic.
    for tag in 1..=wire::NodeAttributes::ENUM_MAX {
        let mut bytes = golden();
        let pos = field(
            &bytes,
            node_table(&bytes, 0),
            wire::Node::VT_ATTRIBUTES_TYPE,
        )
        .unwrap();
        bytes[pos] = tag;
        feed_all(&bytes);
    }
}

#[test]
fn explicit_none_tag_with_a_value_is_rejected() {
    let mut bytes = golden();
    let pos = field(
        &bytes,
        node_table(&bytes, 1),
        wire::Node::VT_ATTRIBUTES_TYPE,
    )
    .unwrap();
    bytes[pos] = 0;
    let err = GraphView::from_bytes(&bytes).unwrap_err();
    assert!(err.to_string().contains("bias"), "{err}");
}

#[test]
fn unknown_tensor_value_tag_is_rejected() {
    for tag in [wire::TensorValueType::ENUM_MAX + 1, 9, 200, 255] {
        let mut bytes = scalar_graph().to_bytes();
        let alpha = tensor_table(&bytes, 1);
        let pos =
            field(&bytes, alpha, wire::TensorAttributes::VT_VALUE_TYPE).expect("alpha has a value");
        assert_eq!(bytes[pos], wire::TensorValueType::Float32Value.0);
        bytes[pos] = tag;
        let err = GraphView::from_bytes(&bytes).unwrap_err();
        match &err {
            Error::UnknownUnionTag {
                location,
                union,
                tag: t,
            } => {
                assert_eq!((*union, *t), ("TensorValue", tag));
                assert!(location.contains("uid 2"), "{location}");
            }
            other => panic!("tag {tag}: expected UnknownUnionTag, got {other:?}"),
        }
        assert!(err.to_string().contains("uid 2"), "{err}");
    }
}

#[test]
fn tensor_value_of_another_member_never_panics() {
    // Retagging Float32 (4 bytes) as Float64/Int64 (8 bytes) may read past the struct;
    // the value verifier must catch an out-of-bounds read, never panic.
    for tag in 1..=wire::TensorValueType::ENUM_MAX {
        let mut bytes = scalar_graph().to_bytes();
        let pos = field(
            &bytes,
            tensor_table(&bytes, 1),
            wire::TensorAttributes::VT_VALUE_TYPE,
        )
        .unwrap();
        bytes[pos] = tag;
        feed_all(&bytes);
    }
}

#[test]
fn tensor_value_slot_removed_is_rejected() {
    let mut bytes = scalar_graph().to_bytes();
    let alpha = tensor_table(&bytes, 1);
    let entry = vtable_entry(&bytes, alpha, wire::TensorAttributes::VT_VALUE_TYPE + 2).unwrap();
    assert_ne!(u16_at(&bytes, entry), 0, "alpha's value slot is present");
    bytes[entry..entry + 2].fill(0);
    let err = GraphView::from_bytes(&bytes).unwrap_err();
    assert!(
        matches!(err, Error::Invalid { .. } | Error::MissingUnionValue { .. }),
        "{err:?}"
    );
}

#[test]
fn tensor_value_offset_out_of_bounds_is_rejected() {
    let mut bytes = scalar_graph().to_bytes();
    let len = bytes.len() as u32;
    let alpha = tensor_table(&bytes, 1);
    let slot = field(&bytes, alpha, wire::TensorAttributes::VT_VALUE_TYPE + 2).unwrap();
    put_u32(&mut bytes, slot, len);
    assert!(matches!(
        GraphView::from_bytes(&bytes),
        Err(Error::Invalid { .. })
    ));
}

#[test]
fn node_attributes_value_removed_is_rejected() {
    let mut bytes = golden();
    let entry = vtable_entry(&bytes, node_table(&bytes, 0), wire::Node::VT_ATTRIBUTES).unwrap();
    bytes[entry..entry + 2].fill(0);
    let err = GraphView::from_bytes(&bytes).unwrap_err();
    assert!(
        matches!(err, Error::Invalid { .. } | Error::MissingUnionValue { .. }),
        "{err:?}"
    );
}

#[test]
fn node_attributes_tag_removed_is_rejected() {
    let mut bytes = golden();
    let entry = vtable_entry(
        &bytes,
        node_table(&bytes, 0),
        wire::Node::VT_ATTRIBUTES_TYPE,
    )
    .unwrap();
    bytes[entry..entry + 2].fill(0);
    let err = GraphView::from_bytes(&bytes).unwrap_err();
    assert!(
        matches!(err, Error::Invalid { .. } | Error::MissingUnionValue { .. }),
        "{err:?}"
    );
}

#[test]
fn unknown_tensor_data_type_is_rejected() {
    for value in [42u8, DataType::ALL.len() as u8, 0x7F, 0xFF] {
        let mut bytes = golden_validated();
        let pos = field(
            &bytes,
            tensor_table(&bytes, 0),
            wire::TensorAttributes::VT_DATA_TYPE,
        )
        .unwrap();
        bytes[pos] = value;
        let err = GraphView::from_bytes(&bytes).unwrap_err();
        match &err {
            Error::UnknownEnumValue {
                location,
                enum_name,
                value: v,
            } => {
                assert_eq!((*enum_name, *v), ("DataType", i64::from(value as i8)));
                assert!(location.contains("uid 1"), "{location}");
            }
            other => panic!("value {value}: expected UnknownEnumValue, got {other:?}"),
        }
    }
}

#[test]
fn unknown_node_and_graph_data_types_are_rejected() {
    let mut bytes = golden_validated();
    let pos = field(
        &bytes,
        node_table(&bytes, 0),
        wire::Node::VT_COMPUTE_DATA_TYPE,
    )
    .expect("validated node type");
    bytes[pos] = 42;
    let err = GraphView::from_bytes(&bytes).unwrap_err();
    assert!(
        matches!(&err, Error::UnknownEnumValue { value: 42, .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("conv"), "{err}");

    for voffset in [
        wire::Graph::VT_COMPUTE_DATA_TYPE,
        wire::Graph::VT_INTERMEDIATE_DATA_TYPE,
        wire::Graph::VT_IO_DATA_TYPE,
    ] {
        let mut bytes = golden();
        let pos = field(&bytes, root_table(&bytes), voffset).expect("sample sets graph types");
        bytes[pos] = 42;
        let err = GraphView::from_bytes(&bytes).unwrap_err();
        assert!(
            matches!(
                &err,
                Error::UnknownEnumValue {
                    value: 42,
                    enum_name: "DataType",
                    ..
                }
            ),
            "{err:?}"
        );
    }
}

#[test]
fn unknown_enum_inside_attributes_does_not_panic() {
    // Pointwise modes are kept as raw values (validation decides): the view verifies and
    // converts; nothing panics.
    let mut bytes = golden();
    let attributes = deref(
        &bytes,
        field(&bytes, node_table(&bytes, 2), wire::Node::VT_ATTRIBUTES).unwrap(),
    );
    let pos = field(&bytes, attributes, wire::PointwiseAttributes::VT_OPERATION)
        .expect("relu's operation");
    bytes[pos] = 0x7F;
    feed_all(&bytes);
}
