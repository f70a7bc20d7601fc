//! The seed corpus: what `hipdnn-fuzz seed` writes to `fuzz/corpus/` (committed, so
//! that runs do not depend on this code staying the same) and what the C API target
//! deserializes.
//!
//! * graphs: the example graphs (`examples/graphs/*.json`), the frontend's samples and
//!   one conformance case per operation (fp32, plus fp16 and strided variants of a few),
//!   as JSON in both dialects (`graph-json`: ours and upstream hipDNN's) and as validated
//!   FlatBuffers (`graph-fb`);
//! * engine details: the CPU engine's knobs with the standard ones, and hand-made
//!   knobs of every constraint kind;
//! * `.npy`: arrays of both element types in both orders and both header versions;
//! * C API: short call sequences that create, deserialize, set, finalize and destroy.

use std::path::Path;

use hipdnn_data_sdk::{DataType, HOST_MEMORY_BEHAVIOR_NOTE_EXT, engine_name_to_id};
use hipdnn_flatbuffers_sdk::model::{
    EngineDetails, FloatConstraint, Graph, IntConstraint, Knob, KnobConstraint, KnobValue,
    StringConstraint,
};
use hipdnn_test_sdk::conformance::standard_cases;
use hipdnn_test_sdk::graphs::Layout;

use crate::targets::Target;

/// The seed graphs, validated, with a file stem each.
pub fn graphs() -> Vec<(String, Graph)> {
    let mut out = Vec::new();
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/graphs");
    let mut paths: Vec<_> = std::fs::read_dir(&examples)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    paths.sort();
    for path in paths {
        if path.extension().is_some_and(|e| e == "json")
            && let Ok(text) = std::fs::read_to_string(&path)
            && let Ok(graph) = Graph::from_json(&text)
        {
            let stem = path.file_stem().unwrap_or_default().to_string_lossy();
            out.push((format!("example_{stem}"), graph));
        }
    }
    out.push((
        "sample_conv_bias_relu".into(),
        hipdnn_frontend::samples::conv_bias_relu(),
    ));
    out.push((
        "sample_pointwise_chain".into(),
        hipdnn_frontend::samples::pointwise_chain(3),
    ));
    let mut seen = Vec::new();
    for case in standard_cases() {
        let kind = case.op.kind();
        let plain = case.dtype == DataType::Float && case.layout == Layout::Nchw;
        let variant = matches!(kind, "pointwise" | "conv_bias_relu" | "matmul")
            && (case.dtype == DataType::Half || matches!(case.layout, Layout::Explicit(_)));
        let key = (kind, case.dtype, case.layout.tag());
        if (plain || variant) && !seen.contains(&key) {
            seen.push(key);
            out.push((
                format!("case_{}", case.name.replace('/', "_")),
                case.graph(),
            ));
        }
    }
    for (_, graph) in &mut out {
        graph.validate().expect("seed graphs are valid");
    }
    out
}

/// The seed graphs as FlatBuffers.
pub fn binary_graphs() -> Vec<Vec<u8>> {
    graphs().iter().map(|(_, g)| g.to_bytes()).collect()
}

fn details() -> Vec<(String, EngineDetails)> {
    let cpu = engine_name_to_id("CPU_ENGINE");
    let mut knobs = hipdnn_cpu_provider::custom_knobs();
    knobs.push(hipdnn_plugin_sdk::prelude::global_knobs::deterministic());
    knobs.push(hipdnn_plugin_sdk::prelude::global_knobs::workspace_size_limit());
    let hand_made = vec![
        Knob {
            knob_id: "fuzz.int.values".into(),
            description: "an int from a list".into(),
            default_value: KnobValue::Int(4),
            constraint: Some(KnobConstraint::Int(IntConstraint {
                min_value: 0,
                max_value: 64,
                step: 4,
                valid_values: vec![0, 4, 8, 64],
            })),
            deprecated: false,
        },
        Knob {
            knob_id: "fuzz.float.range".into(),
            description: "a float in a range".into(),
            default_value: KnobValue::Float(0.5),
            constraint: Some(KnobConstraint::Float(FloatConstraint {
                min_value: 0.0,
                max_value: 1.0,
            })),
            deprecated: true,
        },
        Knob {
            knob_id: "fuzz.string.length".into(),
            description: "a short string".into(),
            default_value: KnobValue::String("ab".into()),
            constraint: Some(KnobConstraint::String(StringConstraint {
                max_length: 8,
                valid_values: Vec::new(),
            })),
            deprecated: false,
        },
        Knob {
            knob_id: "fuzz.free".into(),
            description: String::new(),
            default_value: KnobValue::Int(-3),
            constraint: None,
            deprecated: false,
        },
    ];
    vec![
        (
            "cpu_engine".into(),
            EngineDetails {
                engine_id: cpu,
                knobs,
                behavior_notes: vec![HOST_MEMORY_BEHAVIOR_NOTE_EXT, 2],
                name: "CPU_ENGINE".into(),
                candidate_page: None,
            },
        ),
        (
            "hand_made_knobs".into(),
            EngineDetails {
                engine_id: 42,
                knobs: hand_made,
                behavior_notes: vec![0, 1, 3, 4],
                name: String::new(),
                candidate_page: None,
            },
        ),
        ("empty".into(), EngineDetails::default()),
    ]
}

fn npy_files() -> Vec<(String, Vec<u8>)> {
    use hipdnn_cli::npy::{self, NpyType};

    let dir = std::env::temp_dir().join(format!("hipdnn_fuzz_seed_{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    let mut out = Vec::new();
    let values: Vec<f32> = (0..24).map(|i| i as f32 * 0.25 - 3.0).collect();
    for (name, dims, ty) in [
        ("f32_2x3x4", &[2usize, 3, 4][..], NpyType::F32),
        ("f16_2x3x4", &[2, 3, 4][..], NpyType::F16),
        ("f32_4", &[4][..], NpyType::F32),
        ("f32_1", &[1][..], NpyType::F32),
    ] {
        let path = dir.join("seed.npy");
        let n: usize = dims.iter().product();
        npy::write(&path, dims, ty, &values[..n]).expect("a scratch file");
        out.push((
            name.to_owned(),
            std::fs::read(&path).expect("a scratch file"),
        ));
    }
    let _ = std::fs::remove_dir_all(&dir);
    // Fortran order, big-endian, and a version 2 header, written by hand.
    let raw = |version: u8, dict: &str, data: &[u8]| {
        let prefix = if version == 1 { 10 } else { 12 };
        let mut header = dict.as_bytes().to_vec();
        while !(prefix + header.len() + 1).is_multiple_of(64) {
            header.push(b' ');
        }
        header.push(b'\n');
        let mut file = b"\x93NUMPY".to_vec();
        file.extend_from_slice(&[version, 0]);
        if version == 1 {
            file.extend_from_slice(&(header.len() as u16).to_le_bytes());
        } else {
            file.extend_from_slice(&(header.len() as u32).to_le_bytes());
        }
        file.extend_from_slice(&header);
        file.extend_from_slice(data);
        file
    };
    let le: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    let be: Vec<u8> = values.iter().flat_map(|v| v.to_be_bytes()).collect();
    out.push((
        "f32_fortran".into(),
        raw(
            1,
            "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3, 4), }",
            &le,
        ),
    ));
    out.push((
        "f32_big_endian".into(),
        raw(
            1,
            "{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3, 4), }",
            &be,
        ),
    ));
    out.push((
        "f32_version2".into(),
        raw(
            2,
            "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }",
            &le[..16],
        ),
    ));
    out
}

/// C API call sequences (see `targets::capi` for how bytes become calls). Operand
/// bytes: a descriptor pick `b` with `b % 8 >= 3` takes live descriptor `b % live`; a
/// set's array words take the handle for selector `0`.
fn capi_scripts() -> Vec<(String, Vec<u8>)> {
    // Set attribute: op 2, descriptor pick, name index, type index, count selector
    // (5 → one element), then 64 word selectors (0: the handle).
    let set = |pick: u8, name: u8, ty: u8| {
        let mut s = vec![2, pick, name, ty, 5];
        s.extend_from_slice(&[0; 64]);
        s
    };
    let mut graph_then_handle = vec![1, 0];
    graph_then_handle.extend(set(3, 11, 0)); // OPERATIONGRAPH_HANDLE, HANDLE
    graph_then_handle.extend([4, 3]); // finalize it
    graph_then_handle.extend([0, 3]); // create an ENGINEHEUR descriptor
    graph_then_handle.extend([6, 4]); // destroy the heuristic
    graph_then_handle.extend([7]); // destroy the handle first
    let mut every_kind = Vec::new();
    for ty in 0..13u8 {
        every_kind.extend([0, ty]);
    }
    every_kind.extend([4, 3, 4, 4, 5, 3, 0, 0, 5]);
    let mut huge_count = vec![0, 11];
    huge_count.extend([2, 3, 13, 1, 0]); // VARIANT_PACK_UNIQUE_IDS, INT64, count 2^62
    huge_count.extend_from_slice(&[4; 64]);
    vec![
        ("graph_handle_finalize".into(), graph_then_handle),
        ("every_descriptor_kind".into(), every_kind),
        ("huge_count".into(), huge_count),
    ]
}

/// Graphs whose JSON is longer are left out of the corpus (the whole ResNet-50 is
/// 170 KB): mutating them costs a parse of the whole graph per case for the few
/// operations they add to the small graphs.
const MAX_SEED_JSON: usize = 32 << 10;

/// Writes the seed corpus of every target under `root` (`fuzz/corpus`), replacing
/// what is there.
///
/// # Errors
/// A file that cannot be written.
pub fn write_corpus(root: &Path) -> std::io::Result<usize> {
    let mut written = 0;
    let mut put = |target: Target, name: &str, ext: &str, bytes: &[u8]| {
        let dir = root.join(target.name());
        std::fs::create_dir_all(&dir)?;
        std::fs::write(dir.join(format!("{name}.{ext}")), bytes)?;
        written += 1;
        Ok::<(), std::io::Error>(())
    };
    for target in Target::ALL {
        let _ = std::fs::remove_dir_all(root.join(target.name()));
    }
    for (name, graph) in graphs() {
        let json = graph.to_json();
        if json.len() > MAX_SEED_JSON {
            continue;
        }
        put(Target::GraphJson, &name, "json", json.as_bytes())?;
        // Upstream hipDNN's dialect too, so mutations reach its reader.
        let upstream = format!("{name}.upstream");
        put(
            Target::GraphJson,
            &upstream,
            "json",
            graph.to_upstream_json().as_bytes(),
        )?;
        put(Target::GraphFb, &name, "bin", &graph.to_bytes())?;
    }
    for (name, d) in details() {
        put(Target::EngineDetails, &name, "bin", &d.to_bytes())?;
    }
    for (name, bytes) in npy_files() {
        put(Target::Npy, &name, "npy", &bytes)?;
    }
    for (name, bytes) in capi_scripts() {
        put(Target::CApi, &name, "bin", &bytes)?;
    }
    Ok(written)
}
