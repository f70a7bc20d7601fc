//! The compiler's integration tests (one binary: the MLIR/LLVM link is large).

mod end_to_end;
mod lit;
mod registrar;
