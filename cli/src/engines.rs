//! `hipdnn engines`, `hipdnn plugins`, `hipdnn plugin-dir`.

use std::collections::HashMap;
use std::path::Path;

use hipdnn_backend::discovery::{PathOrigin, PluginPaths, SearchPath, search_paths};
use hipdnn_backend::execution::ENGINE_ORDER_ENV;
use hipdnn_backend::{DroppedEngine, EngineSummary, Handle, OperationGraph, SearchEnvironment};
use hipdnn_data_sdk::{MemoryKind, engine_id_to_hex};
use hipdnn_flatbuffers_sdk::model::Knob;
use serde_json::{Map, Value, json};

use crate::error::{CliError, CliResult};
use crate::knobs::{constraint_text, knob_json, type_text, value_text};
use crate::run::load_graph;
use crate::samples::samples;

/// What an engine's details for one graph say: its knobs and the memory it takes.
enum Details {
    /// The details for the graph.
    Given {
        knobs: Vec<Knob>,
        memory: MemoryKind,
    },
    /// The engine accepts the graph but its details failed.
    Error(String),
}

impl Details {
    fn of(handle: &Handle, id: i64, graph: &OperationGraph) -> Self {
        match handle.engine_details(id, graph) {
            Ok(details) => Self::Given {
                memory: MemoryKind::from_behavior_notes(&details.behavior_notes),
                knobs: details.knobs,
            },
            Err(error) => Self::Error(error.message),
        }
    }

    /// `memory`, `knobs` and `knobs_error` of the JSON listings.
    fn json_fields(&self) -> (Value, Value, Value) {
        match self {
            Self::Given { knobs, memory } => (
                json!(memory.as_str()),
                Value::Array(knobs.iter().map(knob_json).collect()),
                Value::Null,
            ),
            Self::Error(message) => (Value::Null, Value::Null, json!(message)),
        }
    }

    /// The memory kind as a table cell.
    fn memory_text(&self) -> &'static str {
        match self {
            Self::Given { memory, .. } => memory.as_str(),
            Self::Error(_) => "?",
        }
    }

    /// Prints the knobs under an engine's row; `graph` says for which graph, if needed.
    fn print_knobs(&self, graph: Option<&str>) {
        let context = graph.map_or_else(String::new, |g| format!(" (for {g})"));
        match self {
            Self::Error(message) => println!("    knobs: (details failed{context}: {message})"),
            Self::Given { knobs, .. } if knobs.is_empty() => println!("    knobs: none{context}"),
            Self::Given { knobs, .. } => {
                println!("    knobs{context}:");
                print_knobs(knobs);
            }
        }
    }
}

/// The JSON fields identifying an engine.
fn engine_json(e: &EngineSummary) -> Map<String, Value> {
    let mut map = Map::new();
    map.insert("id".to_owned(), json!(engine_id_to_hex(e.id)));
    map.insert("id_decimal".to_owned(), json!(e.id));
    map.insert("name".to_owned(), json!(e.name));
    map.insert("plugin".to_owned(), json!(e.plugin_name));
    map.insert("plugin_version".to_owned(), json!(e.plugin_version));
    map
}

/// The ID, NAME, PLUGIN and VERSION cells of an engine's row.
fn engine_cells(e: &EngineSummary) -> Vec<String> {
    vec![
        engine_id_to_hex(e.id),
        e.name.clone(),
        e.plugin_name.clone(),
        e.plugin_version.clone(),
    ]
}

/// Lines of a table: `header`, then `rows`, columns padded to their widest cell.
fn table(header: &[&str], rows: &[Vec<String>]) -> Vec<String> {
    let widths: Vec<usize> = (0..header.len())
        .map(|c| {
            rows.iter()
                .map(|r| r[c].chars().count())
                .chain([header[c].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: Vec<&str>| {
        let text: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        text.join("  ").trim_end().to_owned()
    };
    std::iter::once(line(header.to_vec()))
        .chain(
            rows.iter()
                .map(|r| line(r.iter().map(String::as_str).collect())),
        )
        .collect()
}

fn no_engines() {
    println!("no engines found");
    println!(
        "(the backend searches {}; see `hipdnn plugins`)",
        plugin_dir_text()
    );
}

/// Lists every engine with its plugin, and its knobs and memory kind for the first
/// sample graph it accepts.
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
    // Per engine: the sample it accepted and what its details say for it.
    let details: Vec<Option<(&str, Details)>> = engines
        .iter()
        .map(|e| {
            first.get(&e.id).map(|&i| {
                let sample = &samples[i];
                (
                    sample.name.as_str(),
                    Details::of(&handle, e.id, &sample.graph),
                )
            })
        })
        .collect();

    if json_output {
        let list: Vec<Value> = engines
            .iter()
            .zip(&details)
            .map(|(e, d)| {
                let (sample, (memory, knobs, error)) = match d {
                    Some((sample, details)) => (json!(sample), details.json_fields()),
                    None => (Value::Null, (Value::Null, Value::Null, Value::Null)),
                };
                let mut v = engine_json(e);
                v.insert("knobs_sample_graph".to_owned(), sample);
                v.insert("memory".to_owned(), memory);
                v.insert("knobs".to_owned(), knobs);
                v.insert("knobs_error".to_owned(), error);
                Value::Object(v)
            })
            .collect();
        println!(
            "{}",
            pretty(&json!({
                "engines": list,
                "unavailable_plugins": unavailable_json(&handle),
                "dropped_engines": dropped_json(&handle),
            }))
        );
        return Ok(());
    }

    if engines.is_empty() {
        no_engines();
        print_unavailable(&handle);
        print_dropped(&handle);
        return Ok(());
    }
    let rows: Vec<Vec<String>> = engines.iter().map(engine_cells).collect();
    let lines = table(&["ID", "NAME", "PLUGIN", "VERSION"], &rows);
    println!("{}", lines[0]);
    for (line, d) in lines[1..].iter().zip(&details) {
        println!("{line}");
        match d {
            None => println!("    knobs: (no sample graph accepted)"),
            Some((sample, details)) => {
                if let Details::Given { memory, .. } = details {
                    println!("    memory: {memory} (for {sample})");
                }
                details.print_knobs(Some(sample));
            }
        }
    }
    print_unavailable(&handle);
    print_dropped(&handle);
    Ok(())
}

/// The loaded plugins that made no handle, as JSON.
fn unavailable_json(handle: &Handle) -> Value {
    handle
        .unavailable_plugins()
        .iter()
        .map(|p| {
            json!({ "plugin": p.name, "path": p.path, "reason": p.reason, "engines": p.engines })
        })
        .collect()
}

/// The engines admission dropped, as JSON.
fn dropped_json(handle: &Handle) -> Value {
    handle
        .dropped_engines()
        .iter()
        .map(|e| {
            json!({
                "id": engine_id_to_hex(e.id),
                "id_decimal": e.id,
                "name": e.name,
                "plugin": e.plugin_name,
                "path": e.plugin_path,
                "reason": e.reason,
            })
        })
        .collect()
}

/// The engines a plugin is not offering here: none, or `; engines not offered: A, B`.
fn not_offered(engines: &[String]) -> String {
    if engines.is_empty() {
        String::new()
    } else {
        format!("; engines not offered: {}", engines.join(", "))
    }
}

/// Says which loaded plugins offer no engines here, and why (e.g. a GPU plugin on a
/// machine without the GPU).
fn print_unavailable(handle: &Handle) {
    for p in handle.unavailable_plugins() {
        println!(
            "plugin {} is loaded but unavailable here: {}{}",
            p.name,
            p.reason,
            not_offered(&p.engines)
        );
    }
}

/// `engine NAME (ID) dropped: why` (the id alone when it is the name).
fn dropped_text(e: &DroppedEngine) -> String {
    let hex = engine_id_to_hex(e.id);
    if e.name == hex {
        format!("engine {hex} dropped: {}", e.reason)
    } else {
        format!("engine {} ({hex}) dropped: {}", e.name, e.reason)
    }
}

/// Says which engines of loaded plugins were dropped at admission, and why.
fn print_dropped(handle: &Handle) {
    for e in handle.dropped_engines() {
        println!(
            "plugin {} ({}): {}",
            e.plugin_name,
            e.plugin_path.display(),
            dropped_text(e)
        );
    }
}

/// Where an applicable engine stands in the ranking for the graph.
enum Rank {
    /// Tried in this place (1 = first) by `hipdnn run` and `build_plan`.
    At(usize),
    /// Accepts the graph but [`ENGINE_ORDER_ENV`] leaves it out.
    LeftOut,
}

/// Lists, for the graph in `path`, every engine that accepts it (best first, with its
/// knobs and memory kind for that graph) and every engine that does not.
pub fn engines_for_graph(path: &Path, json_output: bool) -> CliResult<()> {
    let graph = load_graph(path)?;
    let handle = Handle::new();
    let engines = handle.engines();
    let applicable: Vec<i64> = handle
        .applicable_engines(&graph)
        .iter()
        .map(|e| e.id)
        .collect();
    let (ranked, unsupported) = match handle.ranked_engines(&graph) {
        Ok(ranked) => (ranked.iter().map(|e| e.id).collect(), None),
        Err(error) => (Vec::new(), Some(error.message)),
    };
    // Ranked engines first, then those the engine order leaves out, in load order.
    let mut accepting: Vec<(&EngineSummary, Rank)> = Vec::new();
    for (place, id) in ranked.iter().enumerate() {
        if let Some(e) = engines.iter().find(|e| e.id == *id) {
            accepting.push((e, Rank::At(place + 1)));
        }
    }
    for e in engines.iter().filter(|e| applicable.contains(&e.id)) {
        if !ranked.contains(&e.id) {
            accepting.push((e, Rank::LeftOut));
        }
    }
    let details: Vec<Details> = accepting
        .iter()
        .map(|(e, _)| Details::of(&handle, e.id, &graph))
        .collect();
    let refusing: Vec<&EngineSummary> = engines
        .iter()
        .filter(|e| !applicable.contains(&e.id))
        .collect();
    let name = &graph.graph().name;

    if json_output {
        let list: Vec<Value> = accepting
            .iter()
            .zip(&details)
            .map(|((e, rank), d)| {
                let (memory, knobs, error) = d.json_fields();
                let mut v = engine_json(e);
                let rank = match rank {
                    Rank::At(place) => json!(place),
                    Rank::LeftOut => Value::Null,
                };
                v.insert("rank".to_owned(), rank);
                v.insert("memory".to_owned(), memory);
                v.insert("knobs".to_owned(), knobs);
                v.insert("knobs_error".to_owned(), error);
                Value::Object(v)
            })
            .collect();
        let others: Vec<Value> = refusing
            .iter()
            .map(|e| Value::Object(engine_json(e)))
            .collect();
        let v = json!({
            "graph": { "file": path, "name": name },
            "applicable": list,
            "not_applicable": others,
            "unsupported_reason": unsupported,
        });
        println!("{}", pretty(&v));
        return Ok(());
    }

    println!("graph '{name}' ({})", path.display());
    if engines.is_empty() {
        no_engines();
        return Ok(());
    }
    if accepting.is_empty() {
        println!("applicable engines: none");
    } else {
        println!("applicable engines, in the order `hipdnn run` tries them:");
        let rows: Vec<Vec<String>> = accepting
            .iter()
            .zip(&details)
            .map(|((e, rank), d)| {
                let rank = match rank {
                    Rank::At(place) => place.to_string(),
                    Rank::LeftOut => "-".to_owned(),
                };
                let mut cells = vec![rank];
                cells.extend(engine_cells(e));
                cells.push(d.memory_text().to_owned());
                cells
            })
            .collect();
        let header = ["RANK", "ID", "NAME", "PLUGIN", "VERSION", "MEMORY"];
        let lines = table(&header, &rows);
        println!("{}", lines[0]);
        for ((line, (_, rank)), d) in lines[1..].iter().zip(&accepting).zip(&details) {
            println!("{line}");
            if let Rank::LeftOut = rank {
                println!("    (left out by {ENGINE_ORDER_ENV})");
            }
            d.print_knobs(None);
        }
    }
    if let Some(reason) = &unsupported {
        println!("{reason}");
    }
    if !refusing.is_empty() {
        println!("not applicable:");
        let rows: Vec<Vec<String>> = refusing.iter().map(|e| engine_cells(e)).collect();
        for line in table(&["ID", "NAME", "PLUGIN", "VERSION"], &rows) {
            println!("  {line}");
        }
    }
    Ok(())
}

fn print_knobs(knobs: &[Knob]) {
    let rows: Vec<Vec<String>> = knobs
        .iter()
        .map(|k| {
            let mut description = k.description.clone();
            if k.deprecated {
                description = format!("(deprecated) {description}");
            }
            vec![
                k.knob_id.clone(),
                type_text(&k.default_value).to_owned(),
                format!("default {}", value_text(&k.default_value)),
                constraint_text(k.constraint.as_ref()),
                description,
            ]
        })
        .collect();
    // No header line: skip the first.
    for line in table(&["", "", "", "", ""], &rows).iter().skip(1) {
        println!("      {line}");
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

/// Lists the plugins found and loaded (with the engines dropped from each, and why a
/// plugin is unavailable here), and the paths refused (with why), as the backend
/// recorded them when it loaded the plugins: nothing is loaded again to find out.
pub fn plugins(json_output: bool) -> CliResult<()> {
    let search = default_search_path()?;
    let handle = Handle::new();
    let loaded = handle.loaded_plugin_paths();
    let refused = handle.refused_plugins();
    let origin = match search.origin {
        PathOrigin::Environment => "HIPDNN_PLUGIN_DIR",
        PathOrigin::Default | PathOrigin::Custom => "default",
    };
    if json_output {
        let v = json!({
            "plugin_dir": search.path,
            "plugin_dir_source": origin,
            "loaded": loaded,
            "unavailable": unavailable_json(&handle),
            "dropped_engines": dropped_json(&handle),
            "refused": refused.iter().map(|r| json!({ "path": r.path, "error": r.reason })).collect::<Vec<_>>(),
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
            let why = handle
                .unavailable_plugins()
                .iter()
                .find(|p| &p.path == path);
            match why {
                Some(p) => println!(
                    "  {} (unavailable here: {}{})",
                    path.display(),
                    p.reason,
                    not_offered(&p.engines)
                ),
                None => println!("  {}", path.display()),
            }
            for e in handle
                .dropped_engines()
                .iter()
                .filter(|e| &e.plugin_path == path)
            {
                println!("    {}", dropped_text(e));
            }
        }
    }
    if !refused.is_empty() {
        println!("not loaded:");
        for r in refused {
            println!("  {}: {}", r.path.display(), r.reason);
        }
    }
    Ok(())
}
