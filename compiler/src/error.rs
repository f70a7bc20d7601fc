//! The compiler's error type.

use crate::pipeline::PIPELINE_ENV;

/// Why a compilation failed. MLIR diagnostics (with their locations) are in the messages.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CompileError {
    /// The input is not valid MLIR.
    #[error("cannot parse the input module: {0}")]
    Parse(String),
    /// The pipeline text does not parse or names an unknown pass.
    #[error("cannot build the pass pipeline: {0}")]
    Pipeline(String),
    /// A pass failed.
    #[error("pass pipeline failed: {0}")]
    PassFailed(String),
    /// The `HIPDNN_EP_PIPELINE` override produced an unusable module.
    #[error("{PIPELINE_ENV} override: {0}")]
    Override(String),
    /// MLIR → LLVM IR translation failed.
    #[error("translation to LLVM IR failed: {0}")]
    Translate(String),
    /// Linking bitcode or the native link failed.
    #[error("link failed: {0}")]
    Link(String),
    /// The JIT failed.
    #[error("JIT failed: {0}")]
    Jit(String),
    /// Reading or writing a file failed.
    #[error("{0}")]
    Io(String),
    /// Running a compiled model was refused or failed.
    #[error("run: {0}")]
    Run(String),
}
