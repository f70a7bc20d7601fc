//! The ONNX→HIP→LLVM pipeline: pass options, the pipeline builder with its slot hooks,
//! registration of Rust passes and pipelines in MLIR's registry, and the
//! `HIPDNN_EP_PIPELINE` override.
//!
//! The built-in pipeline is `onnx-to-hip-pipeline,hip-to-llvm-pipeline` with plugin slots on:
//!
//! ```text
//! simplify-onnx            [AfterSimplifyOnnx]
//! onnx-loop-outline        [AfterOnnxLoopOutline]
//! convert-onnx-to-hip      [AfterConvertOnnxToHip]      (end of onnx-to-hip-pipeline)
//!                          [BeforeBufferization]
//! hip-bufferize
//! hip-pool-allocs          [AfterPoolAllocs]
//!                          [BeforeConvertHipToLLVM]
//! convert-hip-to-llvm
//! generate-interface       [AfterGenerateInterface]     (end of hip-to-llvm-pipeline)
//! ```

use std::collections::{HashMap, HashSet};
use std::ffi::c_void;
use std::sync::{Arc, Mutex, OnceLock};

use melior::{
    ContextRef,
    ir::{OperationRef, r#type::TypeId},
    pass::{ExternalPass, Pass, RunExternalPass, create_external},
};
use mlir_sys::{
    MlirOpPassManager, MlirPass, MlirStringRef, mlirOpPassManagerAddOwnedPass,
    mlirOpPassManagerAddPipeline, mlirOpPassManagerGetNestedUnder,
};

use crate::ffi::{self, string_ref};
use crate::ir::Op;
use crate::plugin::{Contributions, PassAnchor, PassDefinition, PipelineDefinition, PipelineSlot};

/// The built-in pipeline, as pipeline text. Slot injection is on only here: the registered
/// pipelines default to `plugin-slots=false`, so a pipeline written by hand (an override,
/// `hip-mlir-opt --pass-pipeline`) runs exactly the passes it names.
pub const DEFAULT_PIPELINE: &str =
    "onnx-to-hip-pipeline{plugin-slots=true},hip-to-llvm-pipeline{plugin-slots=true}";

/// The environment variable that replaces the built-in pipeline.
pub const PIPELINE_ENV: &str = "HIPDNN_EP_PIPELINE";

/// Options given to a pass or pipeline as `name{key=value key2=value2}`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PassOptions {
    entries: Vec<(String, String)>,
}

impl PassOptions {
    /// Parses `key=value` pairs separated by spaces (a bare `key` means `key=true`).
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut entries: Vec<(String, String)> = Vec::new();
        for item in text.split_whitespace() {
            let (key, value) = item.split_once('=').unwrap_or((item, "true"));
            if key.is_empty() {
                return Err(format!("option '{item}' has no name"));
            }
            if entries.iter().any(|(k, _)| k == key) {
                return Err(format!("option '{key}' given twice"));
            }
            entries.push((key.to_string(), value.to_string()));
        }
        Ok(Self { entries })
    }

    /// The value of `key`, if given.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.entries
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// An unsigned integer option.
    pub fn get_u64(&self, key: &str, default: u64) -> Result<u64, String> {
        match self.get(key) {
            None => Ok(default),
            Some(v) => v
                .parse()
                .map_err(|_| format!("option '{key}={v}' is not an unsigned integer")),
        }
    }

    /// A boolean option (`true`/`false`/`1`/`0`).
    pub fn get_bool(&self, key: &str, default: bool) -> Result<bool, String> {
        match self.get(key) {
            None => Ok(default),
            Some("true" | "1") => Ok(true),
            Some("false" | "0") => Ok(false),
            Some(v) => Err(format!("option '{key}={v}' is not a boolean")),
        }
    }

    /// Fails on a key not in `known`, naming `owner` and the keys it accepts.
    pub fn check_known(&self, owner: &str, known: &[&str]) -> Result<(), String> {
        for (key, _) in &self.entries {
            if !known.contains(&key.as_str()) {
                return Err(format!(
                    "{owner}: unknown option '{key}' (accepted: {})",
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                ));
            }
        }
        Ok(())
    }

    /// True when no option was given.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// 8-byte aligned storage whose address is a pass's MLIR TypeID.
#[repr(align(8))]
#[derive(Debug)]
struct TypeIdSlot(#[allow(dead_code, reason = "only the address is used")] u64);

/// A Rust pass as registered with MLIR.
#[derive(Debug)]
pub(crate) struct RegisteredPass {
    def: &'static PassDefinition,
    type_id: &'static TypeIdSlot,
}

/// The pass instance MLIR runs: the definition plus its options.
#[derive(Clone)]
struct RustPass {
    def: &'static PassDefinition,
    options: Arc<PassOptions>,
}

impl<'c> RunExternalPass<'c> for RustPass {
    fn initialize(&mut self, _context: ContextRef<'c>) {}

    fn run(&mut self, operation: OperationRef<'c, '_>, pass: ExternalPass<'_>) {
        let op = Op::new(operation);
        let _span = tracing::debug_span!("pass", name = self.def.argument).entered();
        let def = self.def;
        let options = Arc::clone(&self.options);
        let result =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (def.run)(op, &options)));
        let error = match result {
            Ok(Ok(())) => return,
            Ok(Err(e)) => e,
            Err(payload) => crate::ir::PassError::new(format!(
                "panicked: {}",
                payload
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_default()
            )),
        };
        error.emit(def.argument, op);
        pass.signal_failure();
    }
}

impl RegisteredPass {
    fn create(&'static self, options: PassOptions) -> Pass {
        create_external(
            RustPass {
                def: self.def,
                options: Arc::new(options),
            },
            TypeId::create(self.type_id),
            self.def.argument,
            self.def.argument,
            self.def.description,
            self.def.anchor.op_name(),
            &[],
        )
    }
}

unsafe extern "C" fn pass_factory(user: *mut c_void) -> MlirPass {
    // SAFETY: `user` is a leaked `RegisteredPass` (see `register_with_mlir`).
    let registered: &'static RegisteredPass = unsafe { &*user.cast::<RegisteredPass>() };
    registered.create(PassOptions::default()).to_raw()
}

unsafe extern "C" fn pipeline_builder(
    user: *mut c_void,
    pm: MlirOpPassManager,
    options: MlirStringRef,
    report: ffi::ReportFn,
    report_ctx: *mut c_void,
) -> bool {
    // SAFETY: `user` is a `&'static PipelineDefinition` (see `register_with_mlir`); the
    // option text is valid for the call.
    let (def, options) = unsafe { (&*user.cast::<PipelineDefinition>(), ffi::to_string(options)) };
    let result = std::panic::catch_unwind(|| {
        let options = PassOptions::parse(&options).map_err(|e| format!("{}: {e}", def.name))?;
        let mut builder = PipelineBuilder { pm, slots: false };
        (def.build)(&mut builder, &options)
    });
    let message = match result {
        Ok(Ok(())) => return true,
        Ok(Err(message)) => message,
        Err(_) => format!("{}: pipeline builder panicked", def.name),
    };
    // SAFETY: `report` and `report_ctx` come from the shim, valid for this call.
    unsafe { report(report_ctx, string_ref(&message)) };
    false
}

static RUST_PASSES: OnceLock<HashMap<&'static str, &'static RegisteredPass>> = OnceLock::new();

/// Registers every Rust pass and pipeline of `store` in MLIR's registry. Called once, from
/// `dispatch_plugin_registrations_once`, after the names were checked to be free.
pub(crate) fn register_with_mlir(store: &'static Contributions) {
    let mut table = HashMap::new();
    for contribution in store.passes() {
        let registered: &'static RegisteredPass = Box::leak(Box::new(RegisteredPass {
            def: &contribution.value,
            type_id: Box::leak(Box::new(TypeIdSlot(0))),
        }));
        table.insert(contribution.value.argument, registered);
        // SAFETY: `registered` lives for the process; the name is free (checked).
        unsafe {
            ffi::hip_ep_register_pass(
                (registered as *const RegisteredPass).cast_mut().cast(),
                pass_factory,
            )
        };
    }
    for contribution in store.pipelines() {
        let def: &'static PipelineDefinition = &contribution.value;
        // SAFETY: `def` lives for the process; strings are copied by MLIR.
        unsafe {
            ffi::hip_ep_register_pipeline(
                string_ref(def.name),
                string_ref(def.description),
                (def as *const PipelineDefinition).cast_mut().cast(),
                pipeline_builder,
            )
        };
    }
    RUST_PASSES
        .set(table)
        .expect("register_with_mlir runs once");
}

/// Adds passes to a pass manager (given to pipeline builders).
#[derive(Debug)]
pub struct PipelineBuilder {
    pm: MlirOpPassManager,
    /// Whether `add_plugin_passes_for_slot` adds anything (the built-in pipeline only).
    slots: bool,
}

impl PipelineBuilder {
    /// Parses pipeline text (`func.func(cse),canonicalize`, registered names, …) into the
    /// pass manager.
    pub fn add(&mut self, pipeline: &str) -> Result<(), String> {
        let mut message: Option<String> = None;
        unsafe extern "C" fn collect(s: MlirStringRef, data: *mut c_void) {
            // SAFETY: `data` is the Option below, alive for the call; `s` is valid for it.
            let out = unsafe { &mut *data.cast::<Option<String>>() };
            // SAFETY: MLIR passes a valid string ref for the call.
            let piece = unsafe { ffi::to_string(s) };
            out.get_or_insert_with(String::new).push_str(&piece);
        }
        // SAFETY: `pm` is the live pass manager MLIR handed to the builder.
        let result = unsafe {
            mlirOpPassManagerAddPipeline(
                self.pm,
                string_ref(pipeline),
                Some(collect),
                (&mut message as *mut Option<String>).cast(),
            )
        };
        if result.value == 1 {
            Ok(())
        } else {
            Err(format!(
                "cannot add '{pipeline}': {}",
                message.unwrap_or_else(|| "unknown error".into()).trim()
            ))
        }
    }

    /// Adds the Rust pass `name` with `options` (`key=value …`), nested under `func.func` when
    /// that is its anchor.
    pub fn add_pass(&mut self, name: &str, options: &str) -> Result<(), String> {
        let Some(registered) = RUST_PASSES.get().and_then(|t| t.get(name)) else {
            return Err(format!("no Rust pass named '{name}'"));
        };
        let options = PassOptions::parse(options).map_err(|e| format!("{name}: {e}"))?;
        options.check_known(name, registered.def.options)?;
        let pass = registered.create(options);
        // SAFETY: `pm` is live; ownership of the pass moves to the pass manager.
        unsafe {
            let target = match registered.def.anchor {
                PassAnchor::Module => self.pm,
                PassAnchor::Func => {
                    mlirOpPassManagerGetNestedUnder(self.pm, string_ref("func.func"))
                }
            };
            mlirOpPassManagerAddOwnedPass(target, pass.to_raw());
        }
        Ok(())
    }

    /// Adds the plugin passes requested at `slot`, in registration order, when the pipeline
    /// runs with `plugin-slots=true` (the built-in pipeline); otherwise nothing. A name that
    /// resolves neither to a Rust pass nor to a registered MLIR pass or pipeline is warned
    /// about (once per process) and skipped.
    pub fn add_plugin_passes_for_slot(&mut self, slot: PipelineSlot) -> Result<(), String> {
        if !self.slots {
            return Ok(());
        }
        let store = crate::dispatch_plugin_registrations_once();
        for request in store.plugin_passes_for_slot(slot) {
            let name = request.pass_name.as_str();
            if store.pass(name).is_some() {
                self.add_pass(name, "")?;
            } else if ffi::mlir_name_registered(name) {
                self.add(name)?;
            } else {
                warn_unresolved(request.plugin, slot, name);
            }
        }
        Ok(())
    }
}

fn warn_unresolved(plugin: &str, slot: PipelineSlot, name: &str) {
    static WARNED: Mutex<Option<HashSet<(PipelineSlot, String)>>> = Mutex::new(None);
    let mut warned = WARNED.lock().unwrap_or_else(|e| e.into_inner());
    if warned
        .get_or_insert_with(HashSet::new)
        .insert((slot, name.to_string()))
    {
        tracing::warn!(
            "plugin '{plugin}' requested pass '{name}' at slot {slot}, but no pass or pipeline of that name is registered; skipped"
        );
    }
}

/// The pipeline to run: the built-in one or an override.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PipelineChoice {
    /// `onnx-to-hip-pipeline,hip-to-llvm-pipeline` with the plugins' slot passes.
    Default,
    /// Pipeline text replacing the built-in pipeline wholesale (slot requests do not run).
    Override(String),
}

impl PipelineChoice {
    /// `HIPDNN_EP_PIPELINE` when set (and not blank), else the default.
    pub fn from_env() -> Self {
        match std::env::var(PIPELINE_ENV) {
            Ok(text) if !text.trim().is_empty() => PipelineChoice::Override(text),
            _ => PipelineChoice::Default,
        }
    }

    /// The pass list to parse under `builtin.module(...)`: an override with its optional
    /// `builtin.module(...)` wrapper stripped.
    pub fn pass_list(&self) -> String {
        match self {
            PipelineChoice::Default => DEFAULT_PIPELINE.to_string(),
            PipelineChoice::Override(text) => strip_module_wrapper(text).to_string(),
        }
    }
}

/// `builtin.module(a,b)` → `a,b`; anything else unchanged (trimmed).
pub fn strip_module_wrapper(text: &str) -> &str {
    let t = text.trim();
    if let Some(inner) = t
        .strip_prefix("builtin.module(")
        .and_then(|r| r.strip_suffix(')'))
    {
        inner.trim()
    } else {
        t
    }
}

/// Warns once per process that an override leaves plugin slot requests unrun.
pub(crate) fn warn_pending_slots_once(store: &Contributions) {
    static ONCE: std::sync::Once = std::sync::Once::new();
    if store.slot_requests().is_empty() {
        return;
    }
    ONCE.call_once(|| {
        let list: Vec<String> = store
            .slot_requests()
            .iter()
            .map(|r| format!("{}@{}", r.pass_name, r.slot))
            .collect();
        tracing::warn!(
            "{PIPELINE_ENV} replaces the built-in pipeline: {} plugin slot request(s) will not run ({}); name plugin passes in the pipeline text instead",
            list.len(),
            list.join(", ")
        );
    });
}

fn pipeline_onnx_to_hip(b: &mut PipelineBuilder, options: &PassOptions) -> Result<(), String> {
    options.check_known("onnx-to-hip-pipeline", &["plugin-slots"])?;
    b.slots = options.get_bool("plugin-slots", false)?;
    b.add_pass("simplify-onnx", "")?;
    b.add_plugin_passes_for_slot(PipelineSlot::AfterSimplifyOnnx)?;
    b.add_pass("onnx-loop-outline", "")?;
    b.add_plugin_passes_for_slot(PipelineSlot::AfterOnnxLoopOutline)?;
    b.add_pass("convert-onnx-to-hip", "")?;
    b.add_plugin_passes_for_slot(PipelineSlot::AfterConvertOnnxToHip)
}

fn pipeline_hip_to_llvm(b: &mut PipelineBuilder, options: &PassOptions) -> Result<(), String> {
    options.check_known(
        "hip-to-llvm-pipeline",
        &["pool", "pool-alignment", "plugin-slots"],
    )?;
    b.slots = options.get_bool("plugin-slots", false)?;
    let pool = options.get_bool("pool", true)?;
    let alignment = options.get_u64("pool-alignment", 64)?;
    b.add_plugin_passes_for_slot(PipelineSlot::BeforeBufferization)?;
    b.add_pass("hip-bufferize", "")?;
    if pool {
        b.add_pass("hip-pool-allocs", &format!("alignment={alignment}"))?;
    }
    b.add_plugin_passes_for_slot(PipelineSlot::AfterPoolAllocs)?;
    b.add_plugin_passes_for_slot(PipelineSlot::BeforeConvertHipToLLVM)?;
    b.add("convert-hip-to-llvm")?;
    b.add_pass("generate-interface", "")?;
    b.add_plugin_passes_for_slot(PipelineSlot::AfterGenerateInterface)
}

fn pipeline_convert_hip_to_llvm(
    b: &mut PipelineBuilder,
    options: &PassOptions,
) -> Result<(), String> {
    options.check_known("convert-hip-to-llvm", &[])?;
    b.add_pass("hip-lower-to-runtime-calls", "")?;
    b.add("finalize-memref-to-llvm,convert-arith-to-llvm,convert-func-to-llvm,reconcile-unrealized-casts")
}

/// The in-tree pipelines, registered by name.
pub(crate) const IN_TREE_PIPELINES: &[PipelineDefinition] = &[
    PipelineDefinition {
        name: "onnx-to-hip-pipeline",
        description: "simplify-onnx, onnx-loop-outline, convert-onnx-to-hip; option plugin-slots=true runs the plugin slot requests after each",
        build: pipeline_onnx_to_hip,
    },
    PipelineDefinition {
        name: "hip-to-llvm-pipeline",
        description: "hip-bufferize, hip-pool-allocs, convert-hip-to-llvm, generate-interface; options pool=true|false, pool-alignment=N, plugin-slots=true|false",
        build: pipeline_hip_to_llvm,
    },
    PipelineDefinition {
        name: "convert-hip-to-llvm",
        description: "hip-lower-to-runtime-calls, then MLIR's memref/arith/func conversions to the LLVM dialect",
        build: pipeline_convert_hip_to_llvm,
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_parse_and_check() {
        let o = PassOptions::parse("alignment=128 pool=false verbose").unwrap();
        assert_eq!(o.get_u64("alignment", 64), Ok(128));
        assert_eq!(o.get_bool("pool", true), Ok(false));
        assert_eq!(o.get_bool("verbose", false), Ok(true));
        assert_eq!(o.get_u64("missing", 7), Ok(7));
        assert!(
            o.get_u64("pool", 0)
                .unwrap_err()
                .contains("'pool=false' is not an unsigned integer")
        );
        let e = o.check_known("p", &["alignment", "pool"]).unwrap_err();
        assert_eq!(e, "p: unknown option 'verbose' (accepted: alignment, pool)");
        assert!(
            PassOptions::parse("a=1 a=2")
                .unwrap_err()
                .contains("given twice")
        );
        assert!(PassOptions::parse("").unwrap().is_empty());
    }
}
