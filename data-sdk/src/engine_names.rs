//! Well-known engine names, with their ids.
//!
//! Each `NAME` is the string an engine reports and `NAME_ID` its id,
//! [`engine_name_to_id(NAME)`](crate::engine_name_to_id). Names are never
//! renamed: the id is derived from the spelling.
//!
//! An engine does **not** need to be listed here to work. Its id is the hash of
//! its name, which a plugin and the backend compute alike, so an engine built
//! outside this project runs, ranks and is selected by name or id without any
//! edit to this file (the plugin SDK's `Engine::new` and the graph builder's
//! `preferred_engine` note an unregistered name at `debug` level only). The
//! registry is for:
//!
//! * **well-known names**: constants for the engines of hipDNN's providers and
//!   of this project, so code and tests spell them once
//!   (`engine_names::MIOPEN_ENGINE_ID`);
//! * **collision checks**: the macro rejects, at compile time, two listed names
//!   with the same id; a provider can run the same check over its own names
//!   with [`register_engine_names!`](crate::register_engine_names) in its own
//!   module;
//! * **names from ids**: [`engine_name_from_id`](crate::engine_name_from_id)
//!   names an engine whose plugin does not export
//!   `hipdnnEnginePluginGetEngineName` (the backend shows the id in hex for an
//!   engine that is neither named by its plugin nor listed here), and
//!   [`engine_name_or_id_to_id`](crate::engine_name_or_id_to_id) reads listed
//!   names first.
//!
//! Listing an engine here is worth it for engines that ship with hipDNN or this
//! project; adding one means adding one line below.

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
