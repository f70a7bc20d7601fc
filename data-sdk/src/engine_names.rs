//! The engine names this project knows, with their ids.
//!
//! Each `NAME` is the string an engine reports and `NAME_ID` its id,
//! [`engine_name_to_id(NAME)`](crate::engine_name_to_id). Names are never
//! renamed: the id is derived from the spelling. Adding an engine means adding
//! one line below; the macro rejects a hash collision at compile time.

crate::register_engine_names! {
    /// MIOpen provider: convolutions, batch norm, activations, pointwise ops.
    MIOPEN_ENGINE => MIOPEN_ENGINE_ID,
    /// MIOpen provider, convolutions in deterministic mode.
    MIOPEN_ENGINE_DETERMINISTIC => MIOPEN_ENGINE_DETERMINISTIC_ID,
    /// hipBLASLt provider: matmul with fused bias/activation.
    HIPBLASLT_ENGINE => HIPBLASLT_ENGINE_ID,
    /// Fusilli provider: IREE-based JIT compilation of fused graphs.
    FUSILLI_ENGINE => FUSILLI_ENGINE_ID,
    /// HIP kernel provider: runtime-compiled ML ops.
    HIP_MLOPS_ENGINE => HIP_MLOPS_ENGINE_ID,
    /// HIP kernel provider: assembly scaled-dot-product attention.
    ASM_SDPA_ENGINE => ASM_SDPA_ENGINE_ID,
    /// HIP kernel provider: convolutions written in the rocKE DSL.
    ROCKE_ENGINE => ROCKE_ENGINE_ID,
    /// HIP kernel provider: FlashAttention-2 code objects.
    HIP_FLASH2_ENGINE => HIP_FLASH2_ENGINE_ID,
    /// This project's CPU engine (runs everywhere, no GPU needed).
    CPU_ENGINE => CPU_ENGINE_ID,
    /// This project's engine backed by NVIDIA cuDNN.
    CUDNN_ENGINE => CUDNN_ENGINE_ID,
}
