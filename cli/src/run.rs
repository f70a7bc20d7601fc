//! `hipdnn run GRAPH`: bind buffers to a graph's tensors (host buffers, or device
//! buffers for an engine that takes device memory), build a plan, execute it
//! (optionally timed), write the outputs and compare them with the CPU reference.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Instant;

use hipdnn_backend::status::HIPDNN_STATUS_BAD_PARAM;
use hipdnn_backend::{Handle, MemoryKind, OperationGraph, Plan, VariantPack};
use hipdnn_data_sdk::{DataType, engine_id_to_hex, engine_name_or_id_to_id};
use hipdnn_flatbuffers_sdk::VerifyLimits;
use hipdnn_flatbuffers_sdk::model::{Graph, KnobSetting, NodeAttributes};
use hipdnn_reference::data::{decode_logical, element_size, encode_into};
use hipdnn_reference::executor::execute_graph;
use hipdnn_reference::tensor::{HostTensor, for_each_index};
use hipdnn_reference::tolerance::{OpFamily, Tolerance, compare_rounded, tolerance};
use indicatif::{ProgressBar, ProgressStyle};

use crate::device::DeviceRun;
use crate::error::{CliError, CliResult};
use crate::knobs::{KnobArg, settings_for};
use crate::npy::{self, NpyType};
use crate::tensors::{AlignedBuffer, IoTensor, Role, generator, io_tensors, value_range};

/// Options of `hipdnn run`.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// The graph: JSON in our form or upstream hipDNN's dialect (docs/graph-json.md),
    /// or a binary FlatBuffer `Graph` (told apart by content)
    pub graph: PathBuf,
    /// Read input tensors from DIR/UID.npy, UID being the tensor uid (shape = dims; float32, or float16 for
    /// HALF tensors); inputs without a file are generated from --seed
    #[arg(long, value_name = "DIR")]
    pub inputs: Option<PathBuf>,
    /// Write every output tensor to DIR/UID.npy (created if missing)
    #[arg(long, value_name = "DIR")]
    pub outputs: Option<PathBuf>,
    /// Seed of the generated inputs (decimal or 0x hex)
    #[arg(long, value_name = "N", default_value = "1", value_parser = parse_seed)]
    pub seed: u64,
    /// Compare the outputs with the CPU reference; exit 1 if any is out of
    /// tolerance
    #[arg(long)]
    pub check: bool,
    /// Run on this engine (name or id) instead of the best-ranked one
    #[arg(long, value_name = "NAME|ID")]
    pub engine: Option<String>,
    /// Set a knob (repeatable); the value takes the type the engine gives the knob
    #[arg(long = "knob", value_name = "ID=VALUE")]
    pub knobs: Vec<KnobArg>,
    /// Time N executions after one warm-up and print median/min/max (wall clock for
    /// host engines, events on the stream for device engines)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub iters: Option<u32>,
    /// Run on an engine that takes device memory (the best-ranked one, or the one
    /// --engine names, which must be one): device buffers and a stream on HIP device 0,
    /// else CUDA device 0; fails when no GPU is available
    #[arg(long)]
    pub device: bool,
}

fn parse_seed(s: &str) -> Result<u64, String> {
    hipdnn_reference::data::parse_seed(s)
        .ok_or_else(|| format!("'{s}' is not a u64 (decimal or 0x hex)"))
}

/// Reads a graph file, JSON or binary (JSON starts with `{` after whitespace), and
/// validates it. JSON may be in either dialect, ours or upstream hipDNN's (as
/// `HIPDNN_LOG_GRAPH_DIR` dumps write it): [`Graph::from_json`] tells them apart.
///
/// # Errors
/// Unreadable file, malformed graph, invalid graph (naming the uid at fault).
pub fn load_graph(path: &Path) -> CliResult<OperationGraph> {
    let at = path.display();
    // The verifier's limit on a binary graph; a JSON graph is not larger in practice.
    let limit = VerifyLimits::DEFAULT.max_bytes as u64;
    let bytes = crate::files::read_regular(path, limit).map_err(CliError::usage)?;
    let is_json = bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
    if is_json {
        let text = std::str::from_utf8(&bytes)
            .map_err(|e| CliError::usage(format!("{at}: the JSON is not UTF-8: {e}")))?;
        let graph = Graph::from_json(text).map_err(|e| CliError::usage(format!("{at}: {e}")))?;
        OperationGraph::new(graph).map_err(|e| CliError::usage(format!("{at}: {}", e.message)))
    } else {
        OperationGraph::from_bytes(&bytes)
            .map_err(|e| CliError::usage(format!("{at}: {}", e.message)))
    }
}

/// Runs the command.
pub fn run(args: &RunArgs) -> CliResult<()> {
    let graph = load_graph(&args.graph)?;
    let g = graph.graph();
    let at = args.graph.display();
    let tensors = io_tensors(g).map_err(|e| CliError::usage(format!("{at}: {e}")))?;
    if args.outputs.is_some() {
        for t in tensors.iter().filter(|t| t.role == Role::Output) {
            if NpyType::for_dtype(t.dtype).is_none() {
                return Err(CliError::usage(format!(
                    "--outputs: output tensor {}: {}",
                    t.label(),
                    npy::unsupported_dtype(t.dtype)
                )));
            }
        }
    }
    let files = match &args.inputs {
        Some(dir) => input_files(dir, &tensors)?,
        None => BTreeMap::new(),
    };
    println!(
        "graph: '{}' ({}, {}) from {at}",
        g.name,
        count(g.nodes.len(), "node"),
        count(g.tensors.len(), "tensor")
    );

    // An engine is asked first: a graph no engine runs costs no buffers and no inputs.
    // Declared before the handle, so dropped after it: the handle's plugins keep the
    // device run's stream.
    let mut device: Option<DeviceRun> = None;
    let handle = Handle::new();
    let plan = make_plan(&handle, &graph, args)?;
    let plugin = handle
        .plugin_for_engine(plan.engine_id())
        .map(|p| format!(" from plugin {} {}", p.name(), p.version()))
        .unwrap_or_default();
    println!(
        "engine: {} ({}){plugin}, {} memory",
        plan.engine_name(),
        engine_id_to_hex(plan.engine_id()),
        plan.memory_kind()
    );
    if plan.workspace_size() > 0 {
        println!("workspace: {} bytes", plan.workspace_size());
    }

    // Buffers: zeroed, then inputs written (from files or generated) and outputs
    // poisoned with 0xFF (NaN for the float types) so an output the engine never writes
    // cannot pass, element by element at the tensor's offsets: the pages of a buffer
    // between sparse elements are never touched.
    let mut buffers = Vec::with_capacity(tensors.len());
    let mut input_bytes: BTreeMap<i64, Vec<u8>> = BTreeMap::new();
    let mut sources = Vec::new();
    for t in &tensors {
        let mut buffer = AlignedBuffer::new(t.byte_len, t.alignment, 0)
            .map_err(|e| CliError::failed(format!("tensor {}: {e}", t.label())))?;
        if t.role == Role::Input {
            let (values, source) = input_values(g, t, files.get(&t.uid), args.seed)?;
            let encode = |out: &mut [u8]| {
                encode_into(t.dtype, &values, &t.dims, &t.strides, out)
                    .map_err(|e| CliError::usage(format!("tensor {}: {e}", t.label())))
            };
            encode(buffer.as_mut_slice())?;
            if args.check {
                // The reference's own copy (and the proof the engine left it alone).
                let mut bytes = vec![0; t.byte_len];
                encode(&mut bytes)?;
                input_bytes.insert(t.uid, bytes);
            }
            sources.push(format!("{} {source}", t.label()));
        } else {
            poison(t, buffer.as_mut_slice());
        }
        buffers.push(buffer);
    }
    if !sources.is_empty() {
        println!("inputs: {}", sources.join(", "));
    }
    // Buffers follow the engine's declared memory.
    match plan.memory_kind() {
        MemoryKind::Host => run_on_host(&plan, &tensors, &mut buffers, args.iters, g)?,
        MemoryKind::Device => {
            let d = device.insert(DeviceRun::new(
                plan.engine_name(),
                &tensors,
                &buffers,
                plan.workspace_size(),
            )?);
            run_on_device(d, &handle, &plan, &tensors, &mut buffers, args.iters, g)?;
        }
    }

    if let Some(dir) = &args.outputs {
        write_outputs(dir, &tensors, &buffers)?;
    }
    if args.check {
        check(g, &tensors, &buffers, input_bytes)?;
    }
    Ok(())
}

/// Runs the plan on host buffers, timed with the wall clock.
fn run_on_host(
    plan: &Plan<'_>,
    tensors: &[IoTensor],
    buffers: &mut [AlignedBuffer],
    iters: Option<u32>,
    g: &Graph,
) -> CliResult<()> {
    let size = plan.workspace_size();
    let mut workspace = match size {
        0 => None,
        size => Some(
            AlignedBuffer::new(size, 256, 0)
                .map_err(|e| CliError::failed(format!("workspace of {size} bytes: {e}")))?,
        ),
    };
    let workspace_ptr = workspace
        .as_mut()
        .map_or(std::ptr::null_mut(), AlignedBuffer::as_mut_ptr);
    let mut pack = VariantPack::new();
    for (t, b) in tensors.iter().zip(buffers.iter_mut()) {
        pack.set(t.uid, b.as_mut_ptr());
    }
    let execute = || -> CliResult<f64> {
        let start = Instant::now();
        // SAFETY: every pointer in `pack` is a live `AlignedBuffer` of `byte_len`
        // bytes, the extent of its tensor's dims, strides and data type, aligned to
        // at least the tensor's alignment; the buffers are distinct, and the workspace
        // (when the plan needs one) has `workspace_size` bytes. All stay alive and
        // untouched until the call returns. The engine takes host memory (the
        // caller's match on `Plan::memory_kind`).
        unsafe { plan.execute(&pack, workspace_ptr) }
            .map_err(|e| CliError::backend("execution failed", e))?;
        Ok(start.elapsed().as_secs_f64() * 1e3)
    };
    match iters {
        None => println!("time: {:.3} ms (one execution)", execute()?),
        Some(n) => {
            execute()?;
            let bar = progress_bar(n);
            let mut times = Vec::with_capacity(n as usize);
            for _ in 0..n {
                times.push(execute()?);
                bar.inc(1);
            }
            bar.finish_and_clear();
            println!("{}", timing_summary(&mut times, graph_flops(g)));
        }
    }
    Ok(())
}

/// Runs the plan on device buffers on the device run's stream (set on the handle),
/// timed with events on that stream, then copies every tensor back into `buffers`.
fn run_on_device(
    device: &DeviceRun,
    handle: &Handle,
    plan: &Plan<'_>,
    tensors: &[IoTensor],
    buffers: &mut [AlignedBuffer],
    iters: Option<u32>,
    g: &Graph,
) -> CliResult<()> {
    println!(
        "device: {}, {} device buffers, a stream set on the handle",
        device.device_name(),
        tensors.len()
    );
    device.set_stream(handle)?;
    let pack = device.pack(tensors);
    match iters {
        None => println!(
            "time: {:.3} ms (one execution, device events)",
            device.execute_once(plan, &pack)?
        ),
        Some(n) => {
            device.execute_once(plan, &pack)?;
            let bar = progress_bar(n);
            let mut times = device.execute_timed(plan, &pack, n as usize, || bar.inc(1))?;
            bar.finish_and_clear();
            println!(
                "{} (device time, events on the stream)",
                timing_summary(&mut times, graph_flops(g))
            );
        }
    }
    device.synchronize()?;
    device.copy_back(tensors, buffers)
}

/// `1 node`, `3 nodes`.
fn count(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

/// The `.npy` files of `dir` by uid; files that name no input are reported and
/// ignored.
fn input_files(dir: &Path, tensors: &[IoTensor]) -> CliResult<BTreeMap<i64, PathBuf>> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| CliError::usage(format!("--inputs {}: {e}", dir.display())))?;
    let mut files = BTreeMap::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().and_then(|e| e.to_str()) != Some("npy") {
            continue;
        }
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default();
        match stem
            .parse::<i64>()
            .ok()
            .and_then(|uid| tensors.iter().find(|t| t.uid == uid))
        {
            Some(t) if t.role == Role::Input => {
                files.insert(t.uid, path);
            }
            Some(t) => eprintln!(
                "hipdnn: warning: {}: tensor {} is an output; file ignored",
                path.display(),
                t.label()
            ),
            None => eprintln!(
                "hipdnn: warning: {}: names no input tensor of the graph (files are <uid>.npy); ignored",
                path.display()
            ),
        }
    }
    Ok(files)
}

/// Sets every byte of each of `t`'s elements in `bytes` to 0xFF (NaN in the float
/// types), leaving the bytes between elements as they are.
fn poison(t: &IoTensor, bytes: &mut [u8]) {
    let size = element_size(t.dtype).unwrap_or(1);
    for_each_index(&t.dims, |idx| {
        let off = idx
            .iter()
            .zip(&t.strides)
            .map(|(&i, &s)| i * s)
            .sum::<usize>()
            * size;
        bytes[off..off + size].fill(0xFF);
    });
}

/// An input's logical values (row-major), from its `.npy` file or generated, and where
/// they came from.
fn input_values(
    g: &Graph,
    t: &IoTensor,
    file: Option<&PathBuf>,
    seed: u64,
) -> CliResult<(Vec<f32>, String)> {
    let (host, source) = match file {
        Some(path) => {
            let ty = NpyType::for_dtype(t.dtype).ok_or_else(|| {
                CliError::usage(format!(
                    "{}: tensor {}: {}",
                    path.display(),
                    t.label(),
                    npy::unsupported_dtype(t.dtype)
                ))
            })?;
            let values = npy::read(path, &t.dims, ty)
                .map_err(|e| CliError::usage(format!("tensor {}: {e}", t.label())))?;
            (values, format!("from {}", path.display()))
        }
        None => {
            // Packed: the values come in row-major logical order whatever the strides.
            let mut host = HostTensor::packed(t.dims.clone());
            let (lo, hi) = value_range(g, t.uid);
            generator(seed, t.uid).fill_as(&mut host, lo, hi, t.dtype);
            (host.data, "generated".to_owned())
        }
    };
    Ok((host, source))
}

/// The id of the engine the user named.
fn resolve_engine(handle: &Handle, text: &str) -> CliResult<i64> {
    let id = engine_name_or_id_to_id(text.trim());
    let engines = handle.engines();
    if engines.iter().any(|e| e.id == id) {
        return Ok(id);
    }
    let known: Vec<String> = engines
        .iter()
        .map(|e| format!("{} ({})", e.name, engine_id_to_hex(e.id)))
        .collect();
    Err(CliError::usage(if known.is_empty() {
        format!(
            "--engine: unknown engine '{text}': no engine plugin is loaded (see `hipdnn plugins`)"
        )
    } else {
        format!(
            "--engine: unknown engine '{text}'; available: {}",
            known.join(", ")
        )
    }))
}

/// The knob settings for engine `id`, typed by the knobs its details advertise.
fn knob_settings(
    handle: &Handle,
    id: i64,
    name: &str,
    graph: &OperationGraph,
    args: &[KnobArg],
) -> CliResult<Vec<KnobSetting>> {
    if args.is_empty() {
        return Ok(Vec::new());
    }
    let details = handle
        .engine_details(id, graph)
        .map_err(|e| CliError::backend("", e))?;
    settings_for(name, &details.knobs, args)
}

/// The memory engine `id` takes for `graph`, from its details.
fn memory_kind(handle: &Handle, id: i64, graph: &OperationGraph) -> CliResult<MemoryKind> {
    let details = handle
        .engine_details(id, graph)
        .map_err(|e| CliError::backend("", e))?;
    Ok(MemoryKind::from_behavior_notes(&details.behavior_notes))
}

/// A plan on the named engine, or on the best-ranked engine that builds one with the
/// given knobs (with `--device`, among the engines that take device memory).
fn make_plan<'h>(
    handle: &'h Handle,
    graph: &OperationGraph,
    args: &RunArgs,
) -> CliResult<Plan<'h>> {
    if let Some(text) = &args.engine {
        let id = resolve_engine(handle, text)?;
        if args.device && memory_kind(handle, id, graph)? != MemoryKind::Device {
            return Err(CliError::usage(format!(
                "--device: engine {text} takes host memory"
            )));
        }
        let settings = knob_settings(handle, id, text, graph, &args.knobs)?;
        return handle
            .create_plan(graph, id, &settings)
            .map_err(|e| CliError::backend("", e));
    }
    let mut ranked = handle
        .ranked_engines(graph)
        .map_err(|e| CliError::backend("", e))?;
    if args.device {
        let mut candidates = Vec::new();
        let mut device = Vec::new();
        for engine in ranked {
            let kind = memory_kind(handle, engine.id, graph)?;
            candidates.push(format!("{} ({kind} memory)", engine.name));
            if kind == MemoryKind::Device {
                device.push(engine);
            }
        }
        if device.is_empty() {
            return Err(CliError::usage(format!(
                "--device: no engine that takes device memory accepts graph '{}'; the engines that accept it: {}",
                graph.graph().name,
                candidates.join(", ")
            )));
        }
        ranked = device;
    }
    let mut last = None;
    for engine in ranked {
        let settings = match knob_settings(handle, engine.id, &engine.name, graph, &args.knobs) {
            Ok(s) => s,
            Err(e) => {
                last = Some(e);
                continue;
            }
        };
        match handle.create_plan(graph, engine.id, &settings) {
            Ok(plan) => return Ok(plan),
            Err(e) if e.status == HIPDNN_STATUS_BAD_PARAM => {
                return Err(CliError::backend("", e));
            }
            Err(e) => {
                eprintln!(
                    "hipdnn: engine {} could not build a plan: {}; trying the next",
                    engine.name, e.message
                );
                last = Some(CliError::backend("", e));
            }
        }
    }
    Err(last.unwrap_or_else(|| CliError::usage("no engine can run this graph")))
}

fn progress_bar(n: u32) -> ProgressBar {
    if n <= 1 || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let style = ProgressStyle::with_template("{bar:40} {pos}/{len} executions ({elapsed})")
        .unwrap_or_else(|_| ProgressStyle::default_bar());
    ProgressBar::new(u64::from(n)).with_style(style)
}

/// `time over N executions (after 1 warm-up): median …, min …, max … ms[, … GFLOP/s]`.
fn timing_summary(times_ms: &mut [f64], flops: f64) -> String {
    times_ms.sort_by(f64::total_cmp);
    let n = times_ms.len();
    let median = if n % 2 == 1 {
        times_ms[n / 2]
    } else {
        (times_ms[n / 2 - 1] + times_ms[n / 2]) / 2.0
    };
    let mut text = format!(
        "time over {n} executions (after 1 warm-up): median {median:.3} ms, min {:.3} ms, max {:.3} ms",
        times_ms[0],
        times_ms[n - 1]
    );
    if flops > 0.0 && median > 0.0 {
        text.push_str(&format!(
            ", {:.2} GFLOP/s ({:.3} GFLOP per execution)",
            flops / (median * 1e-3) / 1e9,
            flops / 1e9
        ));
    }
    text
}

/// The dims of tensor `uid` as floats (empty for an unknown uid), for counting.
fn dims_f64(g: &Graph, uid: i64) -> Vec<f64> {
    g.tensors
        .iter()
        .find(|t| t.uid == uid)
        .map(|t| t.dims.iter().map(|&d| d as f64).collect())
        .unwrap_or_default()
}

fn product(d: &[f64]) -> f64 {
    d.iter().product()
}

/// Floating-point operations of the graph's convolutions and matmuls (a
/// multiply-add counts two); 0 when it has none.
fn graph_flops(g: &Graph) -> f64 {
    let dims = |uid: i64| dims_f64(g, uid);
    let conv = |out: i64, w: i64| {
        let w = dims(w);
        2.0 * product(&dims(out)) * product(w.get(1..).unwrap_or(&[]))
    };
    g.nodes
        .iter()
        .map(|n| match &n.attributes {
            NodeAttributes::ConvolutionFwdAttributes(a) => conv(a.y_tensor_uid, a.w_tensor_uid),
            NodeAttributes::ConvolutionBwdAttributes(a) => conv(a.dy_tensor_uid, a.w_tensor_uid),
            NodeAttributes::ConvolutionWrwAttributes(a) => conv(a.dy_tensor_uid, a.dw_tensor_uid),
            NodeAttributes::MatmulAttributes(a) => {
                let k = dims(a.a_tensor_uid).last().copied().unwrap_or(0.0);
                2.0 * product(&dims(a.c_tensor_uid)) * k
            }
            _ => 0.0,
        })
        .sum()
}

/// The logical values of a tensor's buffer (read at its elements' offsets only).
fn logical(t: &IoTensor, bytes: &[u8]) -> CliResult<Vec<f32>> {
    decode_logical(t.dtype, bytes, &t.dims, &t.strides)
        .map_err(|e| CliError::failed(format!("tensor {}: {e}", t.label())))
}

fn write_outputs(dir: &Path, tensors: &[IoTensor], buffers: &[AlignedBuffer]) -> CliResult<()> {
    std::fs::create_dir_all(dir)
        .map_err(|e| CliError::usage(format!("--outputs {}: {e}", dir.display())))?;
    let mut written = Vec::new();
    for (t, b) in tensors
        .iter()
        .zip(buffers)
        .filter(|(t, _)| t.role == Role::Output)
    {
        let ty = NpyType::for_dtype(t.dtype).expect("checked before running");
        let path = dir.join(format!("{}.npy", t.uid));
        npy::write(&path, &t.dims, ty, &logical(t, b.as_slice())?)
            .map_err(|e| CliError::failed(format!("cannot write {}: {e}", path.display())))?;
        written.push(format!("{}.npy", t.uid));
    }
    println!(
        "outputs: {} written to {}",
        written.join(", "),
        dir.display()
    );
    Ok(())
}

/// The op family of a node, for its tolerance.
fn family(a: &NodeAttributes) -> OpFamily {
    use NodeAttributes as N;
    match a {
        N::BatchnormInferenceAttributes(_) => OpFamily::BatchnormInference,
        N::BatchnormInferenceAttributesVarianceExt(_) => OpFamily::BatchnormInferenceVariance,
        N::BatchnormAttributes(_) => OpFamily::BatchnormTraining,
        N::BatchnormBackwardAttributes(_) => OpFamily::BatchnormBackward,
        N::ConvolutionFwdAttributes(_) => OpFamily::ConvFprop,
        N::ConvolutionBwdAttributes(_) => OpFamily::ConvDgrad,
        N::ConvolutionWrwAttributes(_) => OpFamily::ConvWgrad,
        N::MatmulAttributes(_) => OpFamily::Matmul,
        N::ReductionAttributes(_) => OpFamily::Reduction,
        N::LayernormAttributes(_) => OpFamily::Layernorm,
        N::RMSNormAttributes(_) => OpFamily::Rmsnorm,
        N::ResampleFwdAttributes(a)
            if a.resample_mode == hipdnn_flatbuffers_sdk::wire::ResampleMode::MAXPOOL =>
        {
            OpFamily::MaxPool
        }
        N::ResampleFwdAttributes(_) => OpFamily::AvgPool,
        _ => OpFamily::Pointwise,
    }
}

/// The loosest family of the graph's nodes for outputs of `dtype` (on a tie, the first
/// in graph order, so a conv → bias → ReLU chain is checked as a convolution).
fn loosest_family(g: &Graph, dtype: DataType) -> OpFamily {
    let looseness = |f: OpFamily| {
        let t = tolerance(f, dtype);
        t.atol + t.rtol
    };
    g.nodes
        .iter()
        .map(|n| family(&n.attributes))
        .reduce(|best, f| {
            if looseness(f) > looseness(best) {
                f
            } else {
                best
            }
        })
        .unwrap_or(OpFamily::Pointwise)
}

/// Unit roundoff of fp32 arithmetic, the compute type of the engines this checks.
const FP32_UNIT_ROUNDOFF: f64 = 1.0 / 16_777_216.0;

/// How many products the longest accumulation chain of the graph sums: for each
/// convolution or matmul its reduction length (fprop: input channels per group × filter
/// volume; dgrad: output channels × filter volume; wgrad: batch × output positions;
/// matmul: the inner dimension), added over the graph's nodes.
fn accumulation_depth(g: &Graph) -> f64 {
    let dims = |uid: i64| dims_f64(g, uid);
    g.nodes
        .iter()
        .map(|n| match &n.attributes {
            NodeAttributes::ConvolutionFwdAttributes(a) => {
                product(dims(a.w_tensor_uid).get(1..).unwrap_or(&[]))
            }
            NodeAttributes::ConvolutionBwdAttributes(a) => {
                let w = dims(a.w_tensor_uid);
                w.first().copied().unwrap_or(1.0) * product(w.get(2..).unwrap_or(&[]))
            }
            NodeAttributes::ConvolutionWrwAttributes(a) => {
                let dy = dims(a.dy_tensor_uid);
                dy.first().copied().unwrap_or(1.0) * product(dy.get(2..).unwrap_or(&[]))
            }
            NodeAttributes::MatmulAttributes(a) => {
                dims(a.a_tensor_uid).last().copied().unwrap_or(0.0)
            }
            _ => 0.0,
        })
        .sum()
}

/// The tolerance for an output: the op table's (hipDNN's per-op numbers, made for single
/// ops of modest size), widened for graphs whose accumulations are long. Rounding errors
/// of a sum of `n` products in fp32 grow like `√n·u` times the size of the terms (the
/// usual statistical estimate; `n·u` is the worst case), so the absolute part is at least
/// `2·√depth · u · max|expected|` (u = 2⁻²⁴, depth = [`accumulation_depth`]).
///
/// An output computed from virtual intermediates of a narrower type (HALF or BFLOAT16
/// between FLOAT tensors) is held to that type's tolerance: engine and reference both
/// round the intermediate, and a last-bit difference before the rounding becomes one
/// unit of the intermediate's precision after it.
fn output_tolerance(g: &Graph, dtype: DataType, expected: &[f32]) -> (Tolerance, OpFamily, bool) {
    let dtype = precision_type(g, dtype);
    let fam = loosest_family(g, dtype);
    let mut tol = tolerance(fam, dtype);
    let scale = expected
        .iter()
        .fold(0.0f64, |m, v| m.max(f64::from(v.abs())));
    let bound = 2.0 * accumulation_depth(g).sqrt() * FP32_UNIT_ROUNDOFF * scale;
    let widened = bound > tol.atol;
    if widened {
        tol.atol = bound;
    }
    (tol, fam, widened)
}

/// The type whose tolerance bounds an output of `dtype`: its own, or the loosest of the
/// graph's virtual tensors' types when that is looser.
fn precision_type(g: &Graph, dtype: DataType) -> DataType {
    let looseness = |d: DataType| {
        let t = tolerance(loosest_family(g, d), d);
        t.atol + t.rtol
    };
    g.tensors
        .iter()
        .filter(|t| t.is_virtual)
        .map(|t| t.data_type)
        .fold(dtype, |best, d| {
            if looseness(d) > looseness(best) {
                d
            } else {
                best
            }
        })
}

/// Runs the reference on the same inputs and compares every output.
fn check(
    g: &Graph,
    tensors: &[IoTensor],
    buffers: &[AlignedBuffer],
    inputs: BTreeMap<i64, Vec<u8>>,
) -> CliResult<()> {
    // The reference reads the inputs and writes only the outputs' elements (zeroed
    // buffers: untouched pages stay unallocated).
    let mut expected = inputs;
    for t in tensors.iter().filter(|t| t.role == Role::Output) {
        expected.insert(t.uid, vec![0; t.byte_len]);
    }
    execute_graph(g, &mut expected).map_err(|e| {
        CliError::failed(format!("--check: the reference cannot run this graph: {e}"))
    })?;
    println!("check against the CPU reference:");
    let mut failures = Vec::new();
    for (t, b) in tensors.iter().zip(buffers) {
        if t.role == Role::Input {
            let bits = |bytes: &[u8]| -> CliResult<Vec<u32>> {
                Ok(logical(t, bytes)?.iter().map(|v| v.to_bits()).collect())
            };
            if bits(b.as_slice())? != bits(&expected[&t.uid])? {
                println!("  input  {}: modified by the engine  FAIL", t.label());
                failures.push(t.label());
            }
            continue;
        }
        let got = logical(t, b.as_slice())?;
        let want = logical(t, &expected[&t.uid])?;
        let (tol, fam, widened) = output_tolerance(g, t.dtype, &want);
        let cmp = compare_rounded(&got, &want, tol, t.dtype, 1.0);
        let precision = precision_type(g, t.dtype);
        let intermediates = if precision == t.dtype {
            String::new()
        } else {
            format!(" at {} intermediates", precision.name())
        };
        println!(
            "  output {} {}: max abs err {:.3e}, max rel err {:.3e} (atol {:.3e}{}, rtol {:e}, {fam:?}{intermediates})  {}",
            t.label(),
            t.dtype.name(),
            cmp.max_abs,
            cmp.max_rel,
            tol.atol,
            if widened {
                " for the accumulation depth"
            } else {
                ""
            },
            tol.rtol,
            if cmp.passed { "pass" } else { "FAIL" }
        );
        if !cmp.passed {
            println!("         {cmp}");
            failures.push(t.label());
        }
    }
    if failures.is_empty() {
        println!("check: passed");
        Ok(())
    } else {
        Err(CliError::failed(format!(
            "check failed for tensor {}",
            failures.join(", ")
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hipdnn_test_sdk::graphs::{ConvSpec, Layout, conv_bias_relu, matmul};

    #[test]
    fn flops_count_convolutions_and_matmuls() {
        let spec = ConvSpec::new(&[1, 3, 8, 8], &[4, 3, 3, 3]).with(|p| p.padding(1));
        let g = conv_bias_relu(&spec, &Layout::Nchw, DataType::Float);
        assert_eq!(graph_flops(&g), 2.0 * (4.0 * 64.0) * 27.0);
        let g = matmul(&[2, 4, 8], &[2, 8, 3], &Layout::Nchw, DataType::Float);
        assert_eq!(graph_flops(&g), 2.0 * 24.0 * 8.0);
        assert_eq!(loosest_family(&g, DataType::Float), OpFamily::Matmul);
    }

    #[test]
    fn timing_summary_reports_median_min_max() {
        let s = timing_summary(&mut [3.0, 1.0, 2.0, 10.0], 2e9);
        assert!(
            s.contains("median 2.500 ms")
                && s.contains("min 1.000 ms")
                && s.contains("max 10.000 ms"),
            "{s}"
        );
        assert!(s.contains("800.00 GFLOP/s"), "{s}");
        assert!(!timing_summary(&mut [1.0], 0.0).contains("GFLOP"));
    }

    #[test]
    fn narrower_virtual_intermediates_set_the_precision() {
        let spec = ConvSpec::new(&[1, 3, 8, 8], &[4, 3, 3, 3]);
        let mut g = conv_bias_relu(&spec, &Layout::Nchw, DataType::Float);
        assert_eq!(precision_type(&g, DataType::Float), DataType::Float);
        for t in g.tensors.iter_mut().filter(|t| t.is_virtual) {
            t.data_type = DataType::Half;
        }
        assert_eq!(precision_type(&g, DataType::Float), DataType::Half);
        let (tol, ..) = output_tolerance(&g, DataType::Float, &[1.0]);
        assert_eq!(
            tol.rtol,
            tolerance(OpFamily::ConvFprop, DataType::Half).rtol
        );
    }

    #[test]
    fn the_loosest_family_wins() {
        let spec = ConvSpec::new(&[1, 3, 8, 8], &[4, 3, 3, 3]);
        let g = conv_bias_relu(&spec, &Layout::Nchw, DataType::Half);
        // fp16: conv fprop (0.1 + 0.01) is looser than pointwise (1e-3 + 1e-3).
        assert_eq!(loosest_family(&g, DataType::Half), OpFamily::ConvFprop);
    }
}
