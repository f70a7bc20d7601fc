//! # hip-ep-compiler
//!
//! An ONNX→HIP→LLVM compiler over MLIR 22 with a static plugin interface: downstream teams add
//! passes, dialect ops, runtime bitcode and link libraries without forking the compiler.
//!
//! ## Design
//!
//! * **Static plugins, selected at build time.** A plugin is a directory of Rust source
//!   (`plugin.rs`, optional `runtime/*.c` and `lib/<name>/*.c`) selected with
//!   `HIPDNN_EP_COMPILER_PLUGINS=<id;id…>`; build.rs compiles it into this crate and generates
//!   a registrar that calls each entry point once, in list order. Plugins and host share one
//!   MLIR instance (one pass registry, one set of TypeIDs) because they are one binary; no
//!   static initialisers or linker sections are involved, so nothing can be dropped by
//!   `--gc-sections`. An unknown id fails the build.
//! * **One registry.** [`dispatch_plugin_registrations_once`] registers MLIR's passes, the
//!   in-tree passes and pipelines, then every plugin's contributions ([`plugin`]), and
//!   registers every Rust pass and pipeline by name in MLIR's pass registry (a small C++ shim),
//!   so `HIPDNN_EP_PIPELINE` and `hip-mlir-opt --pass-pipeline` can name them. Duplicate names
//!   are refused before they reach MLIR (which would abort).
//! * **The pipeline** ([`pipeline`]) is two registered pipelines, `onnx-to-hip-pipeline` and
//!   `hip-to-llvm-pipeline`, with the seven [`plugin::PipelineSlot`]s where plugin passes run.
//! * **Plugin ops flow like in-tree ops.** A plugin op declared with
//!   [`plugin::HipEpPluginRegistry::add_op_model`] is bufferized and lowered to its runtime
//!   call by the in-tree passes, the Rust counterpart of attaching bufferization and LLVM
//!   lowering interface models to the op.
//! * **Runtime** wrappers are C compiled to bitcode at build time (clang-22) and linked at the
//!   LLVM level: in-tree first, then plugin bitcode with override-from-source, so the last
//!   contributor of a symbol wins. This machine has no GPU: the wrappers run on the host.
//!
//! ## Example
//!
//! ```no_run
//! use hip_ep_compiler::driver::{CompileOptions, compile};
//!
//! let model = r#"
//! func.func @main_graph(%x: tensor<2x2xf32>, %y: tensor<2x2xf32>) -> tensor<2x2xf32> {
//!   %0 = "onnx.Add"(%x, %y) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
//!   %1 = "onnx.Relu"(%0) : (tensor<2x2xf32>) -> tensor<2x2xf32>
//!   return %1 : tensor<2x2xf32>
//! }"#;
//! let compiled = compile(model, &CompileOptions::from_env())?;
//! let jit = compiled.jit()?;
//! let mut out = [0.0f32; 4];
//! jit.run(&[&[1.0, -2.0, 3.0, -4.0], &[1.0, 1.0, 1.0, 1.0]], &mut [&mut out])?;
//! assert_eq!(out, [2.0, 0.0, 4.0, 0.0]);
//! # Ok::<(), hip_ep_compiler::error::CompileError>(())
//! ```

#![deny(missing_docs)]

// Plugin sources are compiled into this crate and name the API `hip_ep_compiler::…`.
#[allow(
    unused_extern_crates,
    reason = "plugins compiled into the crate use this name"
)]
extern crate self as hip_ep_compiler;

pub mod dialects;
pub mod driver;
pub mod error;
mod ffi;
pub mod ir;
pub mod llvm;
mod passes;
pub mod pipeline;
pub mod plugin;
mod registrar;

pub use melior;
pub use passes::lower::{INTERFACE_DESCRIPTION_SYMBOL, INTERFACE_SYMBOL, Interface};
pub use registrar::{IN_TREE_ID, dispatch_plugin_registrations_once, selected_plugins};

/// Where Debian's LLVM/MLIR 22 live (tools such as clang for the native link).
pub const LLVM_PREFIX: &str = "/usr/lib/llvm-22";

/// Installs a stderr log subscriber for the tools: `HIPDNN_LOG_LEVEL` (off, error, warn,
/// info, debug, trace; default warn). Does nothing if one is installed already.
pub fn init_tool_logging() {
    let level = std::env::var("HIPDNN_LOG_LEVEL").unwrap_or_else(|_| "warn".into());
    let filter = tracing_subscriber::EnvFilter::try_new(&level)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .without_time()
        .try_init();
}
