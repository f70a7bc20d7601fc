//! The static plugin interface: what a plugin's entry point receives and may contribute.
//!
//! A plugin is a directory named after its id with a `plugin.rs` (plus optional `runtime/*.c`
//! compiled to bitcode and `lib/<name>/*.c` compiled to a shared library). It is selected into
//! the build with `HIPDNN_EP_COMPILER_PLUGINS=<id;id…>`; build.rs compiles its `plugin.rs`
//! into this crate and the generated registrar calls its entry point once, in list order, from
//! [`dispatch_plugin_registrations_once`](crate::dispatch_plugin_registrations_once). The
//! entry point is defined with [`hip_ep_define_plugin!`](crate::hip_ep_define_plugin):
//!
//! ```text
//! use hip_ep_compiler::plugin::{HipEpPluginRegistry, PipelineSlot};
//!
//! hip_ep_compiler::hip_ep_define_plugin!(myvendor, |r: &mut HipEpPluginRegistry| {
//!     let _ = r.register_pass(MY_PASS); // a refused name is logged and returned as Err
//!     r.request_pipeline_slot(PipelineSlot::AfterConvertOnnxToHip, "my-vendor-lowering");
//!     r.add_runtime_bitcode(hip_ep_compiler::hip_ep_plugin_bitcode!(myvendor, "wrap_my_op"));
//!     r.add_library("vendor_kernels");
//! });
//! ```
//!
//! Contributions are staged while the entry point runs and committed when it returns; a
//! plugin whose entry point panics is logged and skipped, and none of its contributions is
//! kept. Passes and pipelines are registered by name in MLIR's pass registry once every plugin
//! has been dispatched, so textual pipelines (`HIPDNN_EP_PIPELINE`, `hip-mlir-opt --pass-pipeline`) resolve them.

use std::collections::HashSet;
use std::fmt;
use std::path::PathBuf;

use melior::dialect::DialectRegistry;

use crate::ir::{Op, PassError};
use crate::pipeline::{PassOptions, PipelineBuilder};

/// The plugin interface's version: bumped when a slot is removed or renamed, or when the
/// registry's surface changes incompatibly. A source-level marker (plugins are compiled into
/// the host, so a mismatch is a build error).
pub const HIP_EP_PLUGIN_API_VERSION: u32 = 3;

/// A plugin's entry point (`hipEpRegisterPlugin_<id>`).
pub type PluginEntry = fn(&mut HipEpPluginRegistry<'_>);

/// A named anchor of the ONNX→HIP→LLVM pipeline where requested plugin passes run.
/// Append-only: new anchors go at the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u32)]
pub enum PipelineSlot {
    /// After `simplify-onnx` (ONNX ops, before loop outlining): introduce custom ops here.
    AfterSimplifyOnnx = 0,
    /// After `onnx-loop-outline`.
    AfterOnnxLoopOutline = 1,
    /// After `convert-onnx-to-hip`: the most common place to lower a custom op.
    AfterConvertOnnxToHip = 2,
    /// Before `hip-bufferize` (tensors still).
    BeforeBufferization = 3,
    /// After `hip-pool-allocs` (buffers, one pool per function).
    AfterPoolAllocs = 4,
    /// Right before `convert-hip-to-llvm`.
    BeforeConvertHipToLLVM = 5,
    /// After `generate-interface` (LLVM dialect with `inference_compute`).
    AfterGenerateInterface = 6,
}

impl PipelineSlot {
    /// Every slot, in pipeline order.
    pub const ALL: [PipelineSlot; 7] = [
        PipelineSlot::AfterSimplifyOnnx,
        PipelineSlot::AfterOnnxLoopOutline,
        PipelineSlot::AfterConvertOnnxToHip,
        PipelineSlot::BeforeBufferization,
        PipelineSlot::AfterPoolAllocs,
        PipelineSlot::BeforeConvertHipToLLVM,
        PipelineSlot::AfterGenerateInterface,
    ];

    /// The slot's name as written in the docs (`AfterConvertOnnxToHip`).
    pub fn name(self) -> &'static str {
        match self {
            PipelineSlot::AfterSimplifyOnnx => "AfterSimplifyOnnx",
            PipelineSlot::AfterOnnxLoopOutline => "AfterOnnxLoopOutline",
            PipelineSlot::AfterConvertOnnxToHip => "AfterConvertOnnxToHip",
            PipelineSlot::BeforeBufferization => "BeforeBufferization",
            PipelineSlot::AfterPoolAllocs => "AfterPoolAllocs",
            PipelineSlot::BeforeConvertHipToLLVM => "BeforeConvertHipToLLVM",
            PipelineSlot::AfterGenerateInterface => "AfterGenerateInterface",
        }
    }
}

impl fmt::Display for PipelineSlot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a pass runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PassAnchor {
    /// `builtin.module`.
    Module,
    /// Each `func.func` (nested automatically when a slot or pipeline adds it).
    Func,
}

impl PassAnchor {
    /// The MLIR operation name.
    pub fn op_name(self) -> &'static str {
        match self {
            PassAnchor::Module => "builtin.module",
            PassAnchor::Func => "func.func",
        }
    }
}

/// A pass's body: runs on one anchor op with the options it was created with.
pub type PassRunFn = for<'c> fn(Op<'c>, &PassOptions) -> Result<(), PassError>;

/// A pass written in Rust. Its `argument` is its name in MLIR's pass registry (what
/// `request_pipeline_slot` and textual pipelines refer to); prefix plugin pass names with the
/// plugin id so they stay unique.
#[derive(Debug, Clone, Copy)]
pub struct PassDefinition {
    /// The command-line name, e.g. `vendor-introduce-add`.
    pub argument: &'static str,
    /// One line for the pass menu and `--help`.
    pub description: &'static str,
    /// The op it runs on.
    pub anchor: PassAnchor,
    /// The option keys it accepts (only through pipelines; see [`PipelineBuilder::add_pass`]).
    pub options: &'static [&'static str],
    /// The body.
    pub run: PassRunFn,
}

/// A pipeline builder: composes passes (and other pipelines) given its option text.
pub type PipelineBuildFn = fn(&mut PipelineBuilder, &PassOptions) -> Result<(), String>;

/// A named pass pipeline whose builder receives options (`name{key=value …}`).
#[derive(Debug, Clone, Copy)]
pub struct PipelineDefinition {
    /// The name, e.g. `hip-to-llvm-pipeline`.
    pub name: &'static str,
    /// One line for the pass menu.
    pub description: &'static str,
    /// The builder.
    pub build: PipelineBuildFn,
}

/// A dialect contribution, applied to every context the compiler creates.
#[derive(Debug, Clone)]
pub enum DialectRegistration {
    /// Inserts upstream MLIR dialects (e.g. `DialectHandle::math().insert_dialect(r)`).
    Upstream(fn(&DialectRegistry)),
    /// A dialect defined at run time in IRDL (the text of a module of `irdl.dialect` ops).
    /// IRDL verifies operand/result counts and the constraints written in it;
    /// [`destination_passing_op_irdl`](crate::dialects::destination_passing_op_irdl) writes
    /// an op that bufferizes like the in-tree ones.
    Irdl(String),
}

/// How the host treats a plugin op in bufferization and in `convert-hip-to-llvm`: the Rust
/// counterpart of attaching bufferization and LLVM-lowering interface models to an op.
#[derive(Debug, Clone, Copy)]
pub struct OpModel {
    /// The op, e.g. `vendor.add`.
    pub op_name: &'static str,
    /// Its lowering once bufferized.
    pub lowering: RuntimeCall,
}

/// The runtime call a bufferized op lowers to. Bufferization is destination-passing for
/// every modelled op: `%r = op(%a, %b) : tensor` becomes `op(%a, %b, %out)` on memrefs, with
/// `%out` a fresh buffer (or the function's output buffer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuntimeCall {
    /// `symbol(ptr operand0, …, ptr out, i64 numel(out))`, all f32 buffers.
    PointersAndCount(&'static str),
}

/// A pass requested at a slot.
#[derive(Debug, Clone)]
pub struct SlotRequest {
    /// The slot.
    pub slot: PipelineSlot,
    /// The pass or pipeline name (resolved when a pipeline is built).
    pub pass_name: String,
    /// The plugin that asked.
    pub plugin: &'static str,
}

/// Something a plugin contributed, with the plugin's id.
#[derive(Debug, Clone)]
pub struct Contribution<T> {
    /// The plugin id (`hip-ep` for in-tree contributions).
    pub plugin: &'static str,
    /// The contribution.
    pub value: T,
}

/// Why a registration was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    /// The name is taken (by a pass or pipeline of MLIR, the host or a plugin).
    #[error("pass name '{name}' from plugin '{plugin}' refused: already registered{by}")]
    DuplicateName {
        /// The name.
        name: String,
        /// The plugin that tried.
        plugin: String,
        /// ` by plugin 'x'` or ` in MLIR's pass registry`.
        by: String,
    },
    /// The name is empty or has characters a pipeline string cannot hold.
    #[error("pass name '{name}' from plugin '{plugin}' refused: names are [a-z0-9-_.]+")]
    BadName {
        /// The name.
        name: String,
        /// The plugin that tried.
        plugin: String,
    },
}

/// Everything registered so far: in-tree passes and pipelines first, then each plugin's.
#[derive(Debug, Default)]
pub struct Contributions {
    pub(crate) passes: Vec<Contribution<PassDefinition>>,
    pub(crate) pipelines: Vec<Contribution<PipelineDefinition>>,
    pub(crate) slot_requests: Vec<SlotRequest>,
    pub(crate) dialects: Vec<Contribution<DialectRegistration>>,
    pub(crate) op_models: Vec<Contribution<OpModel>>,
    pub(crate) bitcode: Vec<Contribution<Vec<u8>>>,
    pub(crate) library_paths: Vec<Contribution<PathBuf>>,
    pub(crate) libraries: Vec<Contribution<String>>,
    pub(crate) refused: Vec<RegistryError>,
    pub(crate) dispatched: Vec<&'static str>,
    pub(crate) failed: Vec<(&'static str, String)>,
}

impl Contributions {
    /// Rust passes (in-tree and plugin), in registration order.
    pub fn passes(&self) -> &[Contribution<PassDefinition>] {
        &self.passes
    }
    /// Registered pipelines, in registration order.
    pub fn pipelines(&self) -> &[Contribution<PipelineDefinition>] {
        &self.pipelines
    }
    /// Plugin passes requested at `slot`, in registration order.
    pub fn plugin_passes_for_slot(&self, slot: PipelineSlot) -> Vec<&SlotRequest> {
        self.slot_requests
            .iter()
            .filter(|r| r.slot == slot)
            .collect()
    }
    /// All slot requests.
    pub fn slot_requests(&self) -> &[SlotRequest] {
        &self.slot_requests
    }
    /// Plugin dialect registrations, in order.
    pub fn plugin_dialect_registrations(&self) -> &[Contribution<DialectRegistration>] {
        &self.dialects
    }
    /// Plugin op models (bufferization + lowering), in order.
    pub fn plugin_op_models(&self) -> &[Contribution<OpModel>] {
        &self.op_models
    }
    /// Plugin runtime bitcode, in link order (after the in-tree runtime).
    pub fn plugin_bitcode_buffers(&self) -> &[Contribution<Vec<u8>>] {
        &self.bitcode
    }
    /// Plugin library search paths, in order.
    pub fn plugin_library_paths(&self) -> &[Contribution<PathBuf>] {
        &self.library_paths
    }
    /// Plugin libraries (names or full paths), in order.
    pub fn plugin_libraries(&self) -> &[Contribution<String>] {
        &self.libraries
    }
    /// Registrations refused (duplicate or malformed names).
    pub fn refused(&self) -> &[RegistryError] {
        &self.refused
    }
    /// Plugins whose entry point ran to completion, in order.
    pub fn dispatched_plugins(&self) -> &[&'static str] {
        &self.dispatched
    }
    /// Plugins whose entry point panicked (skipped), with the panic message.
    pub fn failed_plugins(&self) -> &[(&'static str, String)] {
        &self.failed
    }

    /// The Rust pass named `name`.
    pub fn pass(&self, name: &str) -> Option<&PassDefinition> {
        self.passes
            .iter()
            .map(|c| &c.value)
            .find(|p| p.argument == name)
    }

    /// The owner of a pass or pipeline name, if ours.
    fn owner_of(&self, name: &str) -> Option<&'static str> {
        self.passes
            .iter()
            .find(|c| c.value.argument == name)
            .map(|c| c.plugin)
            .or_else(|| {
                self.pipelines
                    .iter()
                    .find(|c| c.value.name == name)
                    .map(|c| c.plugin)
            })
    }

    fn merge(&mut self, staged: Contributions) {
        self.passes.extend(staged.passes);
        self.pipelines.extend(staged.pipelines);
        self.slot_requests.extend(staged.slot_requests);
        self.dialects.extend(staged.dialects);
        self.op_models.extend(staged.op_models);
        self.bitcode.extend(staged.bitcode);
        self.library_paths.extend(staged.library_paths);
        self.libraries.extend(staged.libraries);
        self.refused.extend(staged.refused);
    }
}

/// The registry a plugin's entry point receives. Each method records a contribution of the
/// plugin being dispatched.
#[derive(Debug)]
pub struct HipEpPluginRegistry<'a> {
    plugin: &'static str,
    committed: &'a Contributions,
    staged: Contributions,
}

impl<'a> HipEpPluginRegistry<'a> {
    pub(crate) fn new(plugin: &'static str, committed: &'a Contributions) -> Self {
        Self {
            plugin,
            committed,
            staged: Contributions::default(),
        }
    }

    /// The id of the plugin being registered.
    pub fn plugin_id(&self) -> &'static str {
        self.plugin
    }

    fn check_name(&mut self, name: &str) -> Result<(), RegistryError> {
        let valid = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "-_.".contains(c));
        let error = if !valid {
            Some(RegistryError::BadName {
                name: name.to_string(),
                plugin: self.plugin.to_string(),
            })
        } else if let Some(owner) = self
            .committed
            .owner_of(name)
            .or_else(|| self.staged.owner_of(name))
        {
            Some(RegistryError::DuplicateName {
                name: name.to_string(),
                plugin: self.plugin.to_string(),
                by: format!(" by plugin '{owner}'"),
            })
        } else if crate::ffi::mlir_name_registered(name) {
            Some(RegistryError::DuplicateName {
                name: name.to_string(),
                plugin: self.plugin.to_string(),
                by: " in MLIR's pass registry".to_string(),
            })
        } else {
            None
        };
        match error {
            Some(e) => {
                tracing::warn!("{e}");
                self.staged.refused.push(e.clone());
                Err(e)
            }
            None => Ok(()),
        }
    }

    /// Registers a pass by its `argument`. A name already taken (by MLIR, the host or another
    /// plugin) is refused with a warning before anything reaches MLIR.
    pub fn register_pass(&mut self, pass: PassDefinition) -> Result<(), RegistryError> {
        self.check_name(pass.argument)?;
        self.staged.passes.push(Contribution {
            plugin: self.plugin,
            value: pass,
        });
        Ok(())
    }

    /// Registers a pass pipeline whose builder receives options (the design's registered
    /// pipeline builder). Names share the pass namespace.
    pub fn register_pipeline(&mut self, pipeline: PipelineDefinition) -> Result<(), RegistryError> {
        self.check_name(pipeline.name)?;
        self.staged.pipelines.push(Contribution {
            plugin: self.plugin,
            value: pipeline,
        });
        Ok(())
    }

    /// Runs the pass or pipeline `pass_name` at `slot` of the built-in pipeline. Resolved when
    /// the pipeline is built; a name that does not resolve then is warned about and skipped.
    pub fn request_pipeline_slot(&mut self, slot: PipelineSlot, pass_name: &str) {
        self.staged.slot_requests.push(SlotRequest {
            slot,
            pass_name: pass_name.to_string(),
            plugin: self.plugin,
        });
    }

    /// Contributes dialects to every compiler context.
    pub fn add_dialect_registration(&mut self, registration: DialectRegistration) {
        self.staged.dialects.push(Contribution {
            plugin: self.plugin,
            value: registration,
        });
    }

    /// Declares how bufferization and `convert-hip-to-llvm` treat a plugin op.
    pub fn add_op_model(&mut self, model: OpModel) {
        self.staged.op_models.push(Contribution {
            plugin: self.plugin,
            value: model,
        });
    }

    /// Contributes LLVM bitcode linked into every model after the in-tree runtime, with
    /// override-from-source (the last contributor of a symbol wins). The bytes are copied;
    /// an empty buffer is warned about and ignored.
    pub fn add_runtime_bitcode(&mut self, bitcode: &[u8]) {
        if bitcode.is_empty() {
            tracing::warn!(
                "plugin '{}' contributed empty runtime bitcode; ignored",
                self.plugin
            );
            return;
        }
        self.staged.bitcode.push(Contribution {
            plugin: self.plugin,
            value: bitcode.to_vec(),
        });
    }

    /// Adds a library search path to the native link (and the JIT's library lookup).
    pub fn add_library_path(&mut self, path: impl Into<PathBuf>) {
        self.staged.library_paths.push(Contribution {
            plugin: self.plugin,
            value: path.into(),
        });
    }

    /// Adds a library (a name as for `-l`, or a full path) to the native link and the JIT.
    pub fn add_library(&mut self, name_or_path: &str) {
        self.staged.libraries.push(Contribution {
            plugin: self.plugin,
            value: name_or_path.to_string(),
        });
    }
}

/// Runs each entry point once, in order, committing what each contributed; a panicking entry
/// point is logged and skipped with nothing kept. The caller registers the committed passes
/// and pipelines with MLIR afterwards (`pipeline::register_with_mlir`). An id listed twice
/// runs once.
pub(crate) fn dispatch(entries: &[(&'static str, PluginEntry)], store: &mut Contributions) {
    let mut seen = HashSet::new();
    for &(id, entry) in entries {
        if !seen.insert(id) {
            continue;
        }
        let mut registry = HipEpPluginRegistry::new(id, store);
        let result =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| entry(&mut registry)));
        match result {
            Ok(()) => {
                let staged = registry.staged;
                tracing::debug!(
                    plugin = id,
                    passes = staged.passes.len(),
                    slot_requests = staged.slot_requests.len(),
                    bitcode = staged.bitcode.len(),
                    "plugin registered"
                );
                store.merge(staged);
                store.dispatched.push(id);
            }
            Err(payload) => {
                let message = payload
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "non-string panic".to_string());
                tracing::error!(
                    "plugin '{id}' panicked during registration ({message}); skipped, none of its contributions kept"
                );
                store.failed.push((id, message));
            }
        }
    }
}

/// Defines a plugin's entry point: the counterpart of `HIP_EP_DEFINE_PLUGIN(id)`. It expands
/// to `HIP_EP_PLUGIN_ID` and `hip_ep_register_plugin` (the `hipEpRegisterPlugin_<id>` of the
/// design) in the plugin's module; the generated registrar calls it and fails the build when
/// `id` differs from the plugin's directory name. The body is a non-capturing closure.
///
/// ```text
/// hip_ep_compiler::hip_ep_define_plugin!(myvendor, |r| {
///     r.add_library("vendor_kernels");
/// });
/// ```
#[macro_export]
macro_rules! hip_ep_define_plugin {
    ($id:ident, $body:expr) => {
        /// The plugin id (checked against the plugin directory's name at build time).
        pub(crate) const HIP_EP_PLUGIN_ID: &str = stringify!($id);
        /// The plugin's entry point, called once by the generated registrar.
        pub(crate) fn hip_ep_register_plugin(
            registry: &mut $crate::plugin::HipEpPluginRegistry<'_>,
        ) {
            let body: fn(&mut $crate::plugin::HipEpPluginRegistry<'_>) = $body;
            body(registry)
        }
    };
}

/// The bitcode build.rs compiled from the plugin's `runtime/<stem>.c`, as `&'static [u8]`.
#[macro_export]
macro_rules! hip_ep_plugin_bitcode {
    ($id:ident, $stem:literal) => {
        include_bytes!(concat!(
            env!("OUT_DIR"),
            "/plugins/",
            stringify!($id),
            "/",
            $stem,
            ".bc"
        ))
        .as_slice()
    };
}

/// The directory holding the shared libraries build.rs built from the plugin's `lib/<name>/`.
#[macro_export]
macro_rules! hip_ep_plugin_lib_dir {
    ($id:ident) => {
        concat!(env!("OUT_DIR"), "/plugins/", stringify!($id), "/lib")
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    fn noop(_: Op<'_>, _: &PassOptions) -> Result<(), PassError> {
        Ok(())
    }

    fn pass(name: &'static str) -> PassDefinition {
        PassDefinition {
            argument: name,
            description: "",
            anchor: PassAnchor::Module,
            options: &[],
            run: noop,
        }
    }

    #[test]
    fn names_taken_by_mlir_the_host_or_a_plugin_are_refused() {
        let store = crate::dispatch_plugin_registrations_once();
        let mut r = HipEpPluginRegistry::new("tester", store);
        let e = r.register_pass(pass("canonicalize")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "pass name 'canonicalize' from plugin 'tester' refused: already registered in MLIR's pass registry"
        );
        let e = r.register_pass(pass("convert-onnx-to-hip")).unwrap_err();
        assert!(
            e.to_string()
                .ends_with("already registered by plugin 'hip-ep'"),
            "{e}"
        );
        r.register_pass(pass("tester-pass")).unwrap();
        let e = r.register_pass(pass("tester-pass")).unwrap_err();
        assert!(
            e.to_string()
                .ends_with("already registered by plugin 'tester'"),
            "{e}"
        );
        let e = r.register_pass(pass("Bad Name")).unwrap_err();
        assert!(matches!(e, RegistryError::BadName { .. }), "{e}");
        assert_eq!(r.staged.refused.len(), 4);
        assert_eq!(r.staged.passes.len(), 1);
    }

    #[test]
    fn runtime_bitcode_is_copied_and_empty_is_ignored() {
        let committed = Contributions::default();
        let mut r = HipEpPluginRegistry::new("tester", &committed);
        let mut bytes = vec![1u8, 2, 3];
        r.add_runtime_bitcode(&bytes);
        bytes[0] = 9;
        r.add_runtime_bitcode(&[]);
        assert_eq!(r.staged.bitcode.len(), 1);
        assert_eq!(r.staged.bitcode[0].value, [1, 2, 3]);
    }

    #[test]
    fn slots_are_append_only_and_numbered() {
        let numbers: Vec<u32> = PipelineSlot::ALL.iter().map(|s| *s as u32).collect();
        assert_eq!(numbers, [0, 1, 2, 3, 4, 5, 6]);
        assert_eq!(
            PipelineSlot::AfterGenerateInterface.to_string(),
            "AfterGenerateInterface"
        );
        assert_eq!(HIP_EP_PLUGIN_API_VERSION, 3);
    }

    #[test]
    fn the_registrar_dispatched_exactly_the_selected_plugins() {
        let selected: Vec<&str> = env!("HIP_EP_SELECTED_PLUGINS")
            .split(';')
            .filter(|s| !s.is_empty())
            .collect();
        let store = crate::dispatch_plugin_registrations_once();
        assert_eq!(crate::selected_plugins(), selected);
        assert_eq!(store.dispatched_plugins(), selected.as_slice());
        if selected.is_empty() {
            // No plugin: every hook is a no-op.
            assert!(store.slot_requests().is_empty());
            assert!(store.plugin_dialect_registrations().is_empty());
            assert!(store.plugin_bitcode_buffers().is_empty());
            assert!(store.plugin_library_paths().is_empty());
            assert!(store.plugin_libraries().is_empty());
            assert!(store.passes().iter().all(|p| p.plugin == crate::IN_TREE_ID));
        }
    }
}
