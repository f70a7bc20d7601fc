//! `hipdnn engines`, `hipdnn plugins`, `hipdnn plugin-dir`.

use std::collections::HashMap;
use std::path::PathBuf;

use hipdnn_backend::discovery::{PathOrigin, PluginPaths, SearchPath, search_paths};
use hipdnn_backend::{Handle, SearchEnvironment, discover, load_plugins};
use hipdnn_data_sdk::engine_id_to_hex;
use hipdnn_flatbuffers_sdk::model::Knob;
use serde_json::{Value, json};

use crate::error::{CliError, CliResult};
use crate::knobs::{constraint_text, knob_json, type_text, value_text};
use crate::samples::samples;

/// What `engines` reports of one engine's knobs.
enum Knobs {
    /// From the details for the named sample graph.
    For { sample: String, knobs: Vec<Knob> },
    /// The engine accepted a sample but its details failed.
    Error { sample: String, message: String },
    /// No sample graph was accepted.
    NoSample,
}

/// Lists every engine with its plugin and its knobs.
pub fn engines(json_output: bool) -> CliResult<()> {
    let handle = Handle::new();
    let engines = handle.engines();
    // For each sample, the engines that accept it; each engine takes the first.
    let mut first: HashMap<i64, usize> = HashMap::new();
    let samples = if engines.is_empty() {
        Vec::new()
    } else {
        samples()
    };
    for (index, sample) in samples.iter().enumerate() {
        if first.len() == engines.len() {
            break;
        }
        for engine in handle.applicable_engines(&sample.graph) {
            first.entry(engine.id).or_insert(index);
        }
    }
    let knobs: Vec<Knobs> = engines
        .iter()
        .map(|e| match first.get(&e.id) {
            None => Knobs::NoSample,
            Some(&i) => {
                let sample = samples[i].name.clone();
                match handle.engine_details(e.id, &samples[i].graph) {
                    Ok(details) => Knobs::For {
                        sample,
                        knobs: details.knobs,
                    },
                    Err(error) => Knobs::Error {
                        sample,
                        message: error.message,
                    },
                }
            }
        })
        .collect();

    if json_output {
        let list: Vec<Value> = engines
            .iter()
            .zip(&knobs)
            .map(|(e, k)| {
                let (sample, knobs, error) = match k {
                    Knobs::For { sample, knobs } => (
                        json!(sample),
                        Value::Array(knobs.iter().map(knob_json).collect()),
                        Value::Null,
                    ),
                    Knobs::Error { sample, message } => {
                        (json!(sample), Value::Null, json!(message))
                    }
                    Knobs::NoSample => (Value::Null, Value::Null, Value::Null),
                };
                json!({
                    "id": engine_id_to_hex(e.id),
                    "id_decimal": e.id,
                    "name": e.name,
                    "plugin": e.plugin_name,
                    "plugin_version": e.plugin_version,
                    "knobs_sample_graph": sample,
                    "knobs": knobs,
                    "knobs_error": error,
                })
            })
            .collect();
        println!("{}", pretty(&json!({ "engines": list })));
        return Ok(());
    }

    if engines.is_empty() {
        println!("no engines found");
        println!(
            "(the backend searches {}; see `hipdnn plugins`)",
            plugin_dir_text()
        );
        return Ok(());
    }
    let rows: Vec<[String; 4]> = engines
        .iter()
        .map(|e| {
            [
                engine_id_to_hex(e.id),
                e.name.clone(),
                e.plugin_name.clone(),
                e.plugin_version.clone(),
            ]
        })
        .collect();
    let header = ["ID", "NAME", "PLUGIN", "VERSION"];
    let widths: Vec<usize> = (0..4)
        .map(|c| {
            rows.iter()
                .map(|r| r[c].len())
                .chain([header[c].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: [&str; 4]| {
        let text: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        text.join("  ").trim_end().to_owned()
    };
    println!("{}", line(header));
    for (row, k) in rows.iter().zip(&knobs) {
        println!("{}", line([&row[0], &row[1], &row[2], &row[3]]));
        match k {
            Knobs::NoSample => println!("    knobs: (no sample graph accepted)"),
            Knobs::Error { sample, message } => {
                println!("    knobs: (details failed for {sample}: {message})")
            }
            Knobs::For { sample, knobs } if knobs.is_empty() => {
                println!("    knobs: none (for {sample})")
            }
            Knobs::For { sample, knobs } => {
                println!("    knobs (for {sample}):");
                print_knobs(knobs);
            }
        }
    }
    Ok(())
}

fn print_knobs(knobs: &[Knob]) {
    let rows: Vec<[String; 5]> = knobs
        .iter()
        .map(|k| {
            let mut description = k.description.clone();
            if k.deprecated {
                description = format!("(deprecated) {description}");
            }
            [
                k.knob_id.clone(),
                type_text(&k.default_value).to_owned(),
                format!("default {}", value_text(&k.default_value)),
                constraint_text(k.constraint.as_ref()),
                description,
            ]
        })
        .collect();
    let widths: Vec<usize> = (0..5)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    for row in rows {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        println!("      {}", cells.join("  ").trim_end());
    }
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).expect("JSON values serialize")
}

/// The directory the backend searches by default (or `HIPDNN_PLUGIN_DIR`).
fn default_search_path() -> CliResult<SearchPath> {
    let env = SearchEnvironment::from_process()
        .map_err(|e| CliError::failed(format!("cannot locate the backend module: {e}")))?;
    search_paths(&PluginPaths::new(), &env)
        .into_iter()
        .next()
        .ok_or_else(|| CliError::failed("the backend searches no plugin directory"))
}

fn plugin_dir_text() -> String {
    default_search_path().map_or_else(
        |e| format!("<unknown: {e}>"),
        |p| p.path.display().to_string(),
    )
}

/// Prints the directory the backend loads engine plugins from.
pub fn plugin_dir() -> CliResult<()> {
    println!("{}", default_search_path()?.path.display());
    Ok(())
}

/// Lists the plugins found and loaded, and those found but refused (with why).
pub fn plugins(json_output: bool) -> CliResult<()> {
    let search = default_search_path()?;
    let env = SearchEnvironment::from_process()
        .map_err(|e| CliError::failed(format!("cannot locate the backend module: {e}")))?;
    let handle = Handle::new();
    let loaded = handle.loaded_plugin_paths();
    let found = discover(&PluginPaths::new(), &env);
    let mut problems: Vec<(PathBuf, String)> = found
        .problems
        .iter()
        .map(|(p, e)| (p.clone(), e.to_string()))
        .collect();
    let refused: Vec<PathBuf> = found
        .files
        .iter()
        .filter(|f| !loaded.contains(f))
        .cloned()
        .collect();
    if !refused.is_empty() {
        // Loading them again is how to learn why they were refused (the backend only
        // logs it).
        let (_, failed) = load_plugins(&refused);
        problems.extend(failed.into_iter().map(|(p, e)| (p, e.to_string())));
    }
    let origin = match search.origin {
        PathOrigin::Environment => "HIPDNN_PLUGIN_DIR",
        PathOrigin::Default | PathOrigin::Custom => "default",
    };
    if json_output {
        let v = json!({
            "plugin_dir": search.path,
            "plugin_dir_source": origin,
            "loaded": loaded,
            "refused": problems.iter().map(|(p, e)| json!({ "path": p, "error": e })).collect::<Vec<_>>(),
        });
        println!("{}", pretty(&v));
        return Ok(());
    }
    println!("plugin directory: {} ({origin})", search.path.display());
    if loaded.is_empty() {
        println!("loaded plugins: none");
    } else {
        println!("loaded plugins:");
        for path in &loaded {
            println!("  {}", path.display());
        }
    }
    if !problems.is_empty() {
        println!("not loaded:");
        for (path, error) in &problems {
            println!("  {}: {error}", path.display());
        }
    }
    Ok(())
}
