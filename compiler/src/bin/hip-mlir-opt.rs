//! `hip-mlir-opt`: runs passes and pipelines by name on MLIR text, like `mlir-opt`, with the
//! compiler's dialects, passes and the plugins selected into this build.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use hip_ep_compiler::driver::{parse_module, run_pass_pipeline, run_pipeline};
use hip_ep_compiler::pipeline::PipelineChoice;

/// Run passes by name on an MLIR file and print the result.
#[derive(Debug, Parser)]
#[command(name = "hip-mlir-opt", version)]
struct Args {
    /// Input MLIR (`-` for stdin).
    #[arg(default_value = "-")]
    input: PathBuf,
    /// A textual pipeline, e.g. `builtin.module(func.func(convert-onnx-to-hip))`.
    #[arg(long)]
    pass_pipeline: Option<String>,
    /// A comma-separated pass list at module level (`simplify-onnx,convert-onnx-to-hip`).
    #[arg(short = 'p', long, conflicts_with = "pass_pipeline")]
    passes: Option<String>,
    /// Run the compiler's full pipeline (built-in, or `HIPDNN_EP_PIPELINE` when set).
    #[arg(long, conflicts_with_all = ["pass_pipeline", "passes"])]
    compiler_pipeline: bool,
    /// Write the result here instead of stdout.
    #[arg(short = 'o', long)]
    output: Option<PathBuf>,
    /// Print the Rust passes and pipelines (in-tree and plugin) and exit.
    #[arg(long)]
    list_passes: bool,
}

fn main() -> ExitCode {
    hip_ep_compiler::init_tool_logging();
    let args = Args::parse();
    let store = hip_ep_compiler::dispatch_plugin_registrations_once();
    if args.list_passes {
        for p in store.passes() {
            println!(
                "pass {} [{}] ({}): {}",
                p.value.argument,
                p.value.anchor.op_name(),
                p.plugin,
                p.value.description
            );
        }
        for p in store.pipelines() {
            println!(
                "pipeline {} ({}): {}",
                p.value.name, p.plugin, p.value.description
            );
        }
        return ExitCode::SUCCESS;
    }
    let source = match hip_ep_compiler::driver::read_input(&args.input) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("hip-mlir-opt: {e}");
            return ExitCode::FAILURE;
        }
    };
    let context = hip_ep_compiler::dialects::create_context();
    let name = args.input.display().to_string();
    let mut module = match parse_module(&context, &source, &name) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("hip-mlir-opt: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = if args.compiler_pipeline {
        run_pipeline(&context, &mut module, &PipelineChoice::from_env())
    } else if let Some(text) = args.pass_pipeline.as_deref().or(args.passes.as_deref()) {
        run_pass_pipeline(&context, &mut module, text)
    } else {
        Ok(())
    };
    if let Err(e) = result {
        eprintln!("hip-mlir-opt: {e}");
        return ExitCode::FAILURE;
    }
    let text = module.as_operation().to_string();
    match args.output {
        Some(path) => {
            if let Err(e) = std::fs::write(&path, text) {
                eprintln!("hip-mlir-opt: writing {}: {e}", path.display());
                return ExitCode::FAILURE;
            }
        }
        None => println!("{text}"),
    }
    ExitCode::SUCCESS
}
