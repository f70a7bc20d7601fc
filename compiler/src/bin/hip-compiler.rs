//! `hip-compiler`: compiles a model (MLIR with `onnx.*` ops) to LLVM bitcode (`model.bc`,
//! the default), a native shared object (`--mode native`), or runs it in-process.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, ValueEnum};
use hip_ep_compiler::driver::{CompileOptions, compile};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Mode {
    /// LLVM bitcode with the runtime linked in (loaded by an in-process JIT).
    Llvm,
    /// A shared object exporting `inference_compute`, linked with the plugins' libraries.
    Native,
}

/// Compile a model with the built-in pipeline (or `HIPDNN_EP_PIPELINE`) and the plugins
/// selected into this build.
#[derive(Debug, Parser)]
#[command(name = "hip-compiler", version)]
struct Args {
    /// The model: MLIR text with one public function of `onnx.*` ops (`-` for stdin).
    #[arg(required_unless_present = "list_plugins")]
    input: Option<PathBuf>,
    /// Output file (default `model.bc`, or `model.so` with `--mode native`).
    #[arg(short = 'o', long)]
    output: Option<PathBuf>,
    /// What to produce.
    #[arg(long, value_enum, default_value_t = Mode::Llvm)]
    mode: Mode,
    /// Run LLVM's O2 pipeline on the linked module (cross-module inlining of the wrappers).
    #[arg(long = "O2")]
    optimize: bool,
    /// Print the linked LLVM IR to stdout as well.
    #[arg(long)]
    print_llvm: bool,
    /// List the plugins selected into this build and their contributions, then exit.
    #[arg(long, conflicts_with = "output")]
    list_plugins: bool,
}

fn main() -> ExitCode {
    hip_ep_compiler::init_tool_logging();
    let args = Args::parse();
    if args.list_plugins {
        let store = hip_ep_compiler::dispatch_plugin_registrations_once();
        println!(
            "plugin API version {}",
            hip_ep_compiler::plugin::HIP_EP_PLUGIN_API_VERSION
        );
        for id in hip_ep_compiler::selected_plugins() {
            println!("plugin {id}");
            for p in store.passes().iter().filter(|c| c.plugin == id) {
                println!("  pass {}", p.value.argument);
            }
            for p in store.pipelines().iter().filter(|c| c.plugin == id) {
                println!("  pipeline {}", p.value.name);
            }
            for r in store.slot_requests().iter().filter(|r| r.plugin == id) {
                println!("  slot {} -> {}", r.slot, r.pass_name);
            }
            for b in store
                .plugin_bitcode_buffers()
                .iter()
                .filter(|c| c.plugin == id)
            {
                println!("  bitcode {} bytes", b.value.len());
            }
            for l in store
                .plugin_library_paths()
                .iter()
                .filter(|c| c.plugin == id)
            {
                println!("  library path {}", l.value.display());
            }
            for l in store.plugin_libraries().iter().filter(|c| c.plugin == id) {
                println!("  library {}", l.value);
            }
        }
        return ExitCode::SUCCESS;
    }
    let input = args.input.unwrap_or_else(|| "-".into());
    let source = match hip_ep_compiler::driver::read_input(&input) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("hip-compiler: {e}");
            return ExitCode::FAILURE;
        }
    };
    let options = CompileOptions {
        optimize: args.optimize,
        ..CompileOptions::from_env()
    };
    let compiled = match compile(&source, &options) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("hip-compiler: {e}");
            return ExitCode::FAILURE;
        }
    };
    if args.print_llvm {
        print!("{}", compiled.llvm().to_ir_text());
    }
    let result = match args.mode {
        Mode::Llvm => {
            let out = args.output.unwrap_or_else(|| "model.bc".into());
            compiled.write_bitcode(&out).map(|()| out)
        }
        Mode::Native => {
            let out = args.output.unwrap_or_else(|| "model.so".into());
            compiled.write_shared_object(&out).map(|()| out)
        }
    };
    match result {
        Ok(out) => {
            eprintln!("hip-compiler: wrote {}", out.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("hip-compiler: {e}");
            ExitCode::FAILURE
        }
    }
}
