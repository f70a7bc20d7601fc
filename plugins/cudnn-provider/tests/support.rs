//! The plugin libraries for the tests: the ones named by `HIPDNN_CUDNN_PLUGIN` (and
//! `HIPDNN_CPU_PLUGIN`) when set, e.g. on a GPU machine without cargo, else built here
//! with a nested cargo.

use std::path::PathBuf;

/// `[cuDNN provider, CPU provider]`.
pub fn plugins() -> [PathBuf; 2] {
    if let (Some(cudnn), Some(cpu)) = (
        std::env::var_os("HIPDNN_CUDNN_PLUGIN"),
        std::env::var_os("HIPDNN_CPU_PLUGIN"),
    ) {
        return [cudnn.into(), cpu.into()];
    }
    let libs = hipdnn_conformance::cdylib::build_cdylibs(
        env!("CARGO_MANIFEST_DIR"),
        &["hipdnn-cudnn-provider", "hipdnn-cpu-provider"],
        "cudnn-plugin-test",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    [libs[0].clone(), libs[1].clone()]
}
