//! The compile driver shared by `hip-compiler`, `hip-mlir-opt` and library users: parse,
//! run the pipeline (built-in or `HIPDNN_EP_PIPELINE`), translate, link the runtime bitcode,
//! then write `model.bc`, a shared object, or JIT and run `inference_compute`.

use std::ffi::c_void;
use std::path::Path;
use std::sync::{Arc, Mutex};

use melior::{
    Context,
    ir::{Module, block::BlockLike, operation::OperationLike},
    pass::PassManager,
    utility::parse_pass_pipeline,
};

use crate::error::CompileError;
use crate::ir::Op;
use crate::llvm::{Codegen, IN_TREE_RUNTIME_BITCODE, Jit, LinkInputs, LlvmModule};
use crate::passes::lower::{INTERFACE_SYMBOL, Interface};
use crate::pipeline::PipelineChoice;

/// How to compile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompileOptions {
    /// The MLIR pipeline.
    pub pipeline: PipelineChoice,
    /// Run LLVM's `default<O2>` on the linked module (inlines the wrappers into the model).
    /// Off by default: the runtime bitcode is optimised already and O2 costs ~50 ms.
    pub optimize: bool,
    /// Code generation of the JIT (the native shared object always uses `Optimized`).
    pub jit_codegen: Codegen,
}

impl Default for CompileOptions {
    fn default() -> Self {
        Self {
            pipeline: PipelineChoice::Default,
            optimize: false,
            jit_codegen: Codegen::Fast,
        }
    }
}

impl CompileOptions {
    /// The defaults, with `HIPDNN_EP_PIPELINE` honoured.
    pub fn from_env() -> Self {
        Self {
            pipeline: PipelineChoice::from_env(),
            ..Self::default()
        }
    }
}

/// Collects a context's error diagnostics (with locations) while alive.
#[derive(Debug)]
pub struct Diagnostics<'c> {
    context: &'c Context,
    id: melior::diagnostic::DiagnosticHandlerId,
    messages: Arc<Mutex<Vec<String>>>,
}

impl<'c> Diagnostics<'c> {
    /// Starts collecting (errors and warnings; notes are appended to their diagnostic).
    pub fn capture(context: &'c Context) -> Self {
        let messages = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&messages);
        let id = context.attach_diagnostic_handler(move |diagnostic| {
            let text = format!("{}: {}", diagnostic.location(), diagnostic);
            sink.lock().unwrap_or_else(|e| e.into_inner()).push(text);
            true
        });
        Self {
            context,
            id,
            messages,
        }
    }

    /// Takes the collected messages, one per line.
    pub fn take(&self) -> String {
        std::mem::take(&mut *self.messages.lock().unwrap_or_else(|e| e.into_inner())).join("\n")
    }
}

impl Drop for Diagnostics<'_> {
    fn drop(&mut self) {
        self.context.detach_diagnostic_handler(self.id);
    }
}

/// Reads a tool's input: a file, or stdin for `-`.
pub fn read_input(path: &Path) -> Result<String, CompileError> {
    if path.as_os_str() == "-" {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)
            .map_err(|e| CompileError::Io(format!("reading stdin: {e}")))?;
        return Ok(text);
    }
    std::fs::read_to_string(path)
        .map_err(|e| CompileError::Io(format!("reading {}: {e}", path.display())))
}

/// Parses MLIR text in `context`; diagnostics locations name `source_name` (a file name, or
/// `-`). A single top-level op other than `builtin.module` is wrapped in one.
pub fn parse_module<'c>(
    context: &'c Context,
    source: &str,
    source_name: &str,
) -> Result<Module<'c>, CompileError> {
    let diagnostics = Diagnostics::capture(context);
    // SAFETY: live context; both strings are valid for the call (MLIR copies what it keeps).
    let raw = unsafe {
        mlir_sys::mlirOperationCreateParse(
            context.to_raw(),
            crate::ffi::string_ref(source),
            crate::ffi::string_ref(source_name),
        )
    };
    if raw.ptr.is_null() {
        return Err(CompileError::Parse(diagnostics.take()));
    }
    // SAFETY: a freshly parsed, owned top-level operation.
    let op = unsafe { melior::ir::Operation::from_raw(raw) };
    if op.name().as_string_ref().as_str() == Ok("builtin.module") {
        return Module::from_operation(op)
            .ok_or_else(|| CompileError::Parse("not a module".into()));
    }
    let module = Module::new(melior::ir::Location::unknown(context));
    module.body().append_operation(op);
    Ok(module)
}

/// Runs pipeline text (a pass list, optionally wrapped in `builtin.module(...)`) on `module`.
pub fn run_pass_pipeline(
    context: &Context,
    module: &mut Module<'_>,
    pipeline: &str,
) -> Result<(), CompileError> {
    crate::dispatch_plugin_registrations_once();
    let diagnostics = Diagnostics::capture(context);
    let pm = PassManager::new(context);
    let inner = crate::pipeline::strip_module_wrapper(pipeline);
    parse_pass_pipeline(
        pm.as_operation_pass_manager(),
        &format!("builtin.module({inner})"),
    )
    .map_err(|e| {
        let extra = diagnostics.take();
        CompileError::Pipeline(if extra.is_empty() {
            e.to_string()
        } else {
            format!("{e}\n{extra}")
        })
    })?;
    let _span = tracing::debug_span!("pipeline", pipeline = inner).entered();
    pm.run(module)
        .map_err(|_| CompileError::PassFailed(diagnostics.take()))
}

/// True when the module defines `inference_compute` (as `llvm.func` or `func.func`).
pub fn has_interface(module: &Module<'_>) -> bool {
    Op::new(module.as_operation())
        .body_ops()
        .into_iter()
        .any(|op| {
            matches!(op.name(), "llvm.func" | "func.func")
                && op.symbol_name() == Some(INTERFACE_SYMBOL)
        })
}

/// Runs the chosen pipeline: the built-in one, or an override (which warns once when plugin
/// slot requests are pending and must produce `inference_compute`).
pub fn run_pipeline(
    context: &Context,
    module: &mut Module<'_>,
    choice: &PipelineChoice,
) -> Result<(), CompileError> {
    let store = crate::dispatch_plugin_registrations_once();
    if let PipelineChoice::Override(_) = choice {
        crate::pipeline::warn_pending_slots_once(store);
    }
    let text = choice.pass_list();
    match run_pass_pipeline(context, module, &text) {
        Err(CompileError::Pipeline(e)) if matches!(choice, PipelineChoice::Override(_)) => {
            return Err(CompileError::Override(format!(
                "cannot parse '{text}': {e}"
            )));
        }
        other => other?,
    }
    if matches!(choice, PipelineChoice::Override(_)) && !has_interface(module) {
        return Err(CompileError::Override(format!(
            "the pipeline '{text}' produced no {INTERFACE_SYMBOL} entry point; end it with hip-to-llvm-pipeline (which runs generate-interface)"
        )));
    }
    Ok(())
}

/// The plugins' library paths and libraries, in contribution order.
fn plugin_link_inputs(store: &crate::plugin::Contributions) -> LinkInputs {
    LinkInputs {
        library_paths: store
            .plugin_library_paths()
            .iter()
            .map(|c| c.value.clone())
            .collect(),
        libraries: store
            .plugin_libraries()
            .iter()
            .map(|c| c.value.clone())
            .collect(),
    }
}

/// `inference_compute` in a JIT holding a model made by `generate-interface`.
fn entry_point(jit: &Jit) -> Result<InferenceCompute, CompileError> {
    let address = jit.lookup(INTERFACE_SYMBOL)?;
    // SAFETY: generate-interface emits `i32 inference_compute(ptr, ptr)`; the address stays
    // valid while `jit` lives, which every JitModel owns next to the pointer.
    Ok(unsafe { std::mem::transmute::<usize, InferenceCompute>(address as usize) })
}

/// A compiled model: linked LLVM IR plus what running it needs.
#[derive(Debug)]
pub struct CompiledModel {
    llvm: LlvmModule,
    interface: Interface,
    link: LinkInputs,
    jit_codegen: Codegen,
}

/// Compiles MLIR text (ONNX dialect ops in one public function) to linked LLVM IR.
pub fn compile(source: &str, options: &CompileOptions) -> Result<CompiledModel, CompileError> {
    let store = crate::dispatch_plugin_registrations_once();
    let context = crate::dialects::create_context();
    let mut module = parse_module(&context, source, "model.mlir")?;
    run_pipeline(&context, &mut module, &options.pipeline)?;
    let interface = Interface::read(Op::new(module.as_operation())).ok_or_else(|| {
        CompileError::PassFailed(
            "no hip.interface attribute after the pipeline (hip-bufferize did not run)".into(),
        )
    })?;
    Op::new(module.as_operation()).remove_attr(crate::passes::bufferize::INTERFACE_ATTR);
    let diagnostics = Diagnostics::capture(&context);
    let mut llvm = LlvmModule::from_mlir(&module).map_err(|e| match e {
        CompileError::Translate(m) => {
            CompileError::Translate(format!("{m}\n{}", diagnostics.take()))
        }
        other => other,
    })?;
    drop(diagnostics);
    llvm.link_bitcode(IN_TREE_RUNTIME_BITCODE, "the in-tree runtime", false)?;
    for bitcode in store.plugin_bitcode_buffers() {
        llvm.link_bitcode(
            &bitcode.value,
            &format!("plugin '{}' runtime bitcode", bitcode.plugin),
            true,
        )?;
    }
    if options.optimize {
        llvm.optimize()?;
    }
    let link = plugin_link_inputs(store);
    Ok(CompiledModel {
        llvm,
        interface,
        link,
        jit_codegen: options.jit_codegen,
    })
}

impl CompiledModel {
    /// The entry point's buffers.
    pub fn interface(&self) -> &Interface {
        &self.interface
    }
    /// The plugin library paths and libraries.
    pub fn link_inputs(&self) -> &LinkInputs {
        &self.link
    }
    /// The linked module.
    pub fn llvm(&self) -> &LlvmModule {
        &self.llvm
    }
    /// Writes `model.bc`.
    pub fn write_bitcode(&self, path: &Path) -> Result<(), CompileError> {
        std::fs::write(path, self.llvm.to_bitcode())
            .map_err(|e| CompileError::Io(format!("writing {}: {e}", path.display())))
    }
    /// Writes a native shared object exporting `inference_compute`.
    pub fn write_shared_object(&self, path: &Path) -> Result<(), CompileError> {
        self.llvm.write_shared_object(path, &self.link)
    }
    /// JIT-compiles the model in this process.
    pub fn jit(self) -> Result<JitModel, CompileError> {
        let jit = self.llvm.into_jit(&self.link, self.jit_codegen)?;
        let entry = entry_point(&jit)?;
        Ok(JitModel {
            _jit: jit,
            entry,
            interface: self.interface,
        })
    }
}

/// `int32_t inference_compute(void *const *inputs, void *const *outputs)`.
pub type InferenceCompute = unsafe extern "C" fn(*const *mut c_void, *const *mut c_void) -> i32;

/// A model compiled in this process.
#[derive(Debug)]
pub struct JitModel {
    _jit: Jit,
    entry: InferenceCompute,
    interface: Interface,
}

impl JitModel {
    /// JIT-loads a `model.bc` written by `hip-compiler` (or [`CompiledModel::write_bitcode`]),
    /// resolving external symbols in this process and in the library paths and libraries of
    /// the plugins compiled into it. The buffer shapes come from the `inference_interface`
    /// string the model carries.
    pub fn load_bitcode(bitcode: &[u8], codegen: Codegen) -> Result<JitModel, CompileError> {
        let store = crate::dispatch_plugin_registrations_once();
        let llvm = LlvmModule::from_bitcode(bitcode, "model bitcode")?;
        if !llvm.has_function(INTERFACE_SYMBOL) {
            return Err(CompileError::Link(format!(
                "the bitcode does not define {INTERFACE_SYMBOL}"
            )));
        }
        let link = plugin_link_inputs(store);
        let jit = llvm.into_jit(&link, codegen)?;
        let description = jit.lookup(crate::passes::lower::INTERFACE_DESCRIPTION_SYMBOL)?;
        // SAFETY: generate-interface emits the description as a NUL-terminated constant
        // array; its address stays valid while `jit` lives.
        let text =
            unsafe { std::ffi::CStr::from_ptr(description as usize as *const std::ffi::c_char) }
                .to_string_lossy()
                .into_owned();
        let interface = Interface::parse(&text)
            .ok_or_else(|| CompileError::Link(format!("malformed inference_interface '{text}'")))?;
        let entry = entry_point(&jit)?;
        Ok(JitModel {
            _jit: jit,
            entry,
            interface,
        })
    }

    /// The entry point's buffers.
    pub fn interface(&self) -> &Interface {
        &self.interface
    }

    /// Runs `inference_compute` after checking the buffer counts and sizes against the
    /// interface (dense row-major f32).
    pub fn run(&self, inputs: &[&[f32]], outputs: &mut [&mut [f32]]) -> Result<(), CompileError> {
        let check =
            |kind: &str, shapes: &[Vec<i64>], lens: Vec<usize>| -> Result<(), CompileError> {
                if shapes.len() != lens.len() {
                    return Err(CompileError::Run(format!(
                        "the model takes {} {kind}, got {}",
                        shapes.len(),
                        lens.len()
                    )));
                }
                for (i, (shape, len)) in shapes.iter().zip(lens).enumerate() {
                    let want: i64 = shape.iter().product();
                    if want as usize != len {
                        return Err(CompileError::Run(format!(
                            "{kind} #{i} needs {want} f32 values (shape {shape:?}), got {len}"
                        )));
                    }
                }
                Ok(())
            };
        check(
            "inputs",
            &self.interface.inputs,
            inputs.iter().map(|s| s.len()).collect(),
        )?;
        check(
            "outputs",
            &self.interface.outputs,
            outputs.iter().map(|s| s.len()).collect(),
        )?;
        let ins: Vec<*mut c_void> = inputs
            .iter()
            .map(|s| s.as_ptr().cast_mut().cast())
            .collect();
        let outs: Vec<*mut c_void> = outputs.iter_mut().map(|s| s.as_mut_ptr().cast()).collect();
        // SAFETY: the code was generated for exactly these buffer counts and sizes (checked
        // above); inputs are only read, outputs written within their lengths.
        let status = unsafe { (self.entry)(ins.as_ptr(), outs.as_ptr()) };
        if status != 0 {
            return Err(CompileError::Run(format!(
                "{INTERFACE_SYMBOL} returned {status}"
            )));
        }
        Ok(())
    }

    /// The raw entry point (valid while this value lives).
    pub fn entry(&self) -> InferenceCompute {
        self.entry
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs with or without plugins selected (same-shape adds may become `vendor.add`).
    #[test]
    fn compiles_and_runs_a_small_model() {
        let model = r#"
func.func @main_graph(%x: tensor<3xf32>, %y: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "onnx.Sub"(%x, %y) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %1 = "onnx.Relu"(%0) : (tensor<3xf32>) -> tensor<3xf32>
  %2 = "onnx.Add"(%1, %y) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %2 : tensor<3xf32>
}"#;
        let jit = compile(model, &CompileOptions::default())
            .unwrap()
            .jit()
            .unwrap();
        let mut out = [0.0f32; 3];
        jit.run(&[&[1.0, 2.0, 3.0], &[2.0, 2.0, 2.0]], &mut [&mut out])
            .unwrap();
        assert_eq!(out, [2.0, 2.0, 3.0]);
    }

    #[test]
    fn override_wrapper_is_stripped() {
        assert_eq!(
            crate::pipeline::strip_module_wrapper(" builtin.module(a, b) "),
            "a, b"
        );
        assert_eq!(crate::pipeline::strip_module_wrapper("a,b"), "a,b");
        assert_eq!(
            PipelineChoice::Override("builtin.module(x)".into()).pass_list(),
            "x"
        );
    }
}
