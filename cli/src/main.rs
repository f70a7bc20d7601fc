//! The `hipdnn` command: list the engines the hipDNN backend finds, and run, check and
//! time graphs through them.
//!
//! ```text
//! hipdnn engines [--json]         engines, their plugins, knobs and memory kinds
//! hipdnn engines --graph FILE     the engines that accept a graph (ranked), and the others
//! hipdnn plugins [--json]         loaded plugins, refused ones, the plugin directory
//! hipdnn plugin-dir               the directory plugins are loaded from
//! hipdnn run GRAPH [options]      run a graph (JSON or FlatBuffer) on host buffers, or
//!                                 on device buffers for an engine that takes device memory
//! ```
//!
//! Exit codes: 0 success; 1 a failed `--check`, a failed execution or plugin error, no
//! GPU for a device engine;
//! 2 a usage or input error (bad arguments, unreadable or invalid graph or `.npy`,
//! unknown engine or knob, knob value out of range, no engine for the graph).

mod device;
mod engines;
mod error;
mod hip;
mod knobs;
mod run;
mod samples;
mod tensors;

use std::path::PathBuf;
use std::process::ExitCode;

use hipdnn_cli::{files, npy};

use clap::{Parser, Subcommand};

use crate::error::CliError;

#[derive(Debug, Parser)]
#[command(
    name = "hipdnn",
    version,
    about = "List hipDNN engines, and run, check and time graphs through them",
    after_help = "Exit codes: 0 success, 1 failed check or execution, 2 usage or input error.\n\
                  Plugins are loaded from `hipdnn plugin-dir` (HIPDNN_PLUGIN_DIR overrides it);\n\
                  HIPDNN_LOG_LEVEL=info (or warn, error, fatal; default off) shows the log of the\n\
                  backend and its plugins on standard error, or in HIPDNN_LOG_FILE when set."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// List every engine with its plugin, knobs and memory kind (for one graph with
    /// --graph)
    ///
    /// Without --graph: id, name, plugin, version, and the knobs (default and constraint)
    /// and memory kind each engine gives for the first sample graph it accepts. With
    /// --graph: the engines that accept that graph, in the order `hipdnn run` tries them,
    /// with their knobs and memory kind for it; why none does, if none does; and the
    /// engines that do not.
    Engines {
        /// The graph to ask the engines about: JSON (ours or upstream hipDNN's dialect)
        /// or a binary FlatBuffer, as `hipdnn run` reads it
        #[arg(long, value_name = "FILE")]
        graph: Option<PathBuf>,
        /// Print JSON instead of a table
        #[arg(long)]
        json: bool,
    },
    /// List the loaded plugins, those refused (with why) and the plugin directory
    Plugins {
        /// Print JSON
        #[arg(long)]
        json: bool,
    },
    /// Print the directory the backend loads engine plugins from
    /// (`install -m755 libmine.so "$(hipdnn plugin-dir)"`)
    PluginDir,
    /// Run a graph: inputs from .npy files or generated, outputs to .npy files,
    /// optionally checked against the reference and timed
    ///
    /// Buffers follow the chosen engine's memory kind: host buffers for a host engine
    /// (timed with the wall clock); for a device engine, device buffers and a stream on
    /// HIP device 0 when a HIP runtime with a device is there (HIPDNN_HIP_LIBRARY names
    /// one), else CUDA device 0 (the CUDA driver; CUDA_VISIBLE_DEVICES picks the
    /// device), both loaded at run time; inputs copied in, outputs copied out after the
    /// stream is synchronized, timed with events on the stream. Without a GPU a device
    /// engine fails with the reasons (exit 1). --device picks among device engines only.
    Run(run::RunArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Before any handle: plugins take the log level when they are loaded.
    hipdnn_backend::log_output::ensure_installed();
    let result = match &cli.command {
        Command::Engines { graph: None, json } => engines::engines(*json),
        Command::Engines {
            graph: Some(graph),
            json,
        } => engines::engines_for_graph(graph, *json),
        Command::Plugins { json } => engines::plugins(*json),
        Command::PluginDir => engines::plugin_dir(),
        Command::Run(args) => run::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => report(&error),
    }
}

fn report(error: &CliError) -> ExitCode {
    // One line: a message spanning lines would break scripts that read the last line.
    let message = error.to_string().replace('\n', " ");
    let message = message.trim();
    eprintln!("hipdnn: error: {message}");
    ExitCode::from(error.exit_code())
}
