//! The LLVM backend: MLIR (LLVM dialect) → LLVM IR, linking of the in-tree runtime bitcode and
//! plugin bitcode (override-from-source, last contributor wins), optimisation, `model.bc`,
//! native shared objects and the in-process ORC JIT.
//!
//! Each [`LlvmModule`] owns its own LLVM context, so modules may be built on different
//! threads; an LLVM context (and its module) is used by one thread at a time.

use std::ffi::{CStr, CString, c_char, c_void};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::ptr;
use std::sync::{Mutex, Once};

use llvm_sys::{
    LLVMDiagnosticSeverity,
    bit_reader::LLVMParseBitcodeInContext2,
    bit_writer::LLVMWriteBitcodeToMemoryBuffer,
    core::{
        LLVMContextCreate, LLVMContextDispose, LLVMContextSetDiagnosticHandler,
        LLVMCreateMemoryBufferWithMemoryRangeCopy, LLVMDisposeMemoryBuffer, LLVMDisposeMessage,
        LLVMDisposeModule, LLVMGetBufferSize, LLVMGetBufferStart, LLVMGetDiagInfoDescription,
        LLVMGetDiagInfoSeverity, LLVMGetNamedFunction, LLVMPrintModuleToString, LLVMSetTarget,
    },
    error::{LLVMDisposeErrorMessage, LLVMErrorRef, LLVMGetErrorMessage},
    orc2::{
        LLVMOrcCreateDynamicLibrarySearchGeneratorForPath,
        LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess,
        LLVMOrcCreateNewThreadSafeContextFromLLVMContext, LLVMOrcCreateNewThreadSafeModule,
        LLVMOrcDisposeThreadSafeContext, LLVMOrcExecutorAddress, LLVMOrcJITDylibAddGenerator,
        LLVMOrcJITTargetMachineBuilderCreateFromTargetMachine,
        lljit::{
            LLVMOrcCreateLLJIT, LLVMOrcCreateLLJITBuilder, LLVMOrcDisposeLLJIT,
            LLVMOrcLLJITAddLLVMIRModule, LLVMOrcLLJITBuilderSetJITTargetMachineBuilder,
            LLVMOrcLLJITGetGlobalPrefix, LLVMOrcLLJITGetMainJITDylib, LLVMOrcLLJITLookup,
            LLVMOrcLLJITRef,
        },
    },
    prelude::{LLVMContextRef, LLVMDiagnosticInfoRef, LLVMModuleRef},
    target::{
        LLVMDisposeTargetData, LLVMInitializeX86AsmParser, LLVMInitializeX86AsmPrinter,
        LLVMInitializeX86Target, LLVMInitializeX86TargetInfo, LLVMInitializeX86TargetMC,
        LLVMSetModuleDataLayout,
    },
    target_machine::{
        LLVMCodeGenFileType, LLVMCodeGenOptLevel, LLVMCodeModel, LLVMCreateTargetDataLayout,
        LLVMCreateTargetMachine, LLVMDisposeTargetMachine, LLVMGetDefaultTargetTriple,
        LLVMGetHostCPUFeatures, LLVMGetHostCPUName, LLVMGetTargetFromTriple, LLVMRelocMode,
        LLVMTargetMachineEmitToFile, LLVMTargetMachineRef,
    },
    transforms::pass_builder::{
        LLVMCreatePassBuilderOptions, LLVMDisposePassBuilderOptions, LLVMRunPasses,
    },
};

use crate::error::CompileError;

/// The in-tree runtime (`runtime/hip_runtime.c`, compiled by build.rs).
pub const IN_TREE_RUNTIME_BITCODE: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/hip_runtime.bc"));

fn initialize_native_target() {
    static ONCE: Once = Once::new();
    // SAFETY: LLVM's target initialisers are idempotent registrations, run once here.
    ONCE.call_once(|| unsafe {
        LLVMInitializeX86TargetInfo();
        LLVMInitializeX86Target();
        LLVMInitializeX86TargetMC();
        LLVMInitializeX86AsmPrinter();
        LLVMInitializeX86AsmParser();
    });
}

/// Takes an LLVM message string (freed here).
///
/// # Safety
/// `message` is null or a string LLVM allocated for `LLVMDisposeMessage`.
unsafe fn take_message(message: *mut c_char) -> String {
    if message.is_null() {
        return String::new();
    }
    // SAFETY: non-null LLVM string, freed right after copying.
    unsafe {
        let text = CStr::from_ptr(message).to_string_lossy().into_owned();
        LLVMDisposeMessage(message);
        text
    }
}

/// Takes an `LLVMErrorRef` (consumed) as a string.
///
/// # Safety
/// `error` is a live error.
unsafe fn take_error(error: LLVMErrorRef) -> String {
    // SAFETY: the message is owned by us until disposed.
    unsafe {
        let message = LLVMGetErrorMessage(error);
        let text = CStr::from_ptr(message).to_string_lossy().into_owned();
        LLVMDisposeErrorMessage(message);
        text
    }
}

/// An LLVM module with the context it lives in (both owned).
#[derive(Debug)]
pub struct LlvmModule {
    context: LLVMContextRef,
    module: LLVMModuleRef,
    /// Error diagnostics of the context, collected by [`collect_diagnostic`] (boxed: its
    /// address is the handler's user data).
    diagnostics: Box<Mutex<Vec<String>>>,
}

/// The context's diagnostic handler: LLVM's default one exits the process on an error (a
/// bad bitcode signature, a symbol defined twice); this one collects errors for the
/// `CompileError` and logs the rest.
extern "C" fn collect_diagnostic(info: LLVMDiagnosticInfoRef, data: *mut c_void) {
    // SAFETY: LLVM passes a live diagnostic for the call; its description is ours to free.
    let (text, severity) = unsafe {
        (
            take_message(LLVMGetDiagInfoDescription(info)),
            LLVMGetDiagInfoSeverity(info),
        )
    };
    if severity != LLVMDiagnosticSeverity::LLVMDSError || data.is_null() {
        tracing::debug!("LLVM: {text}");
        return;
    }
    // SAFETY: non-null `data` is the `Mutex` boxed in the LlvmModule that owns the context,
    // alive while the context is (the handler is reset before the context is handed on).
    let sink = unsafe { &*data.cast::<Mutex<Vec<String>>>() };
    sink.lock().unwrap_or_else(|e| e.into_inner()).push(text);
}

// SAFETY: the module and its context are owned exclusively by this value and only touched
// through `&mut self`/`&self` of it; LLVM contexts may move between threads.
unsafe impl Send for LlvmModule {}

impl Drop for LlvmModule {
    fn drop(&mut self) {
        // SAFETY: owned; the module goes before its context.
        unsafe {
            if !self.module.is_null() {
                LLVMDisposeModule(self.module);
            }
            if !self.context.is_null() {
                LLVMContextDispose(self.context);
            }
        }
    }
}

impl LlvmModule {
    /// Wraps a fresh context (and module, if any), installing the diagnostic handler.
    ///
    /// # Safety
    /// `context` is a fresh, owned context; `module` is null or owned and of that context.
    unsafe fn own(context: LLVMContextRef, module: LLVMModuleRef) -> Self {
        let diagnostics: Box<Mutex<Vec<String>>> = Box::default();
        // SAFETY: the handler's data is the boxed Mutex, which lives as long as `Self`.
        unsafe {
            LLVMContextSetDiagnosticHandler(
                context,
                Some(collect_diagnostic),
                (&*diagnostics as *const Mutex<Vec<String>>)
                    .cast_mut()
                    .cast(),
            )
        };
        Self {
            context,
            module,
            diagnostics,
        }
    }

    /// Takes the collected error diagnostics, `; `-separated.
    fn take_diagnostics(&self) -> String {
        std::mem::take(&mut *self.diagnostics.lock().unwrap_or_else(|e| e.into_inner())).join("; ")
    }

    /// Translates an MLIR module in the LLVM dialect into LLVM IR.
    pub fn from_mlir(module: &melior::ir::Module<'_>) -> Result<Self, CompileError> {
        // SAFETY: a fresh context; the translation reads the live MLIR module. mlir-sys and
        // llvm-sys declare the same opaque LLVM types separately, hence the casts.
        unsafe {
            let context = LLVMContextCreate();
            let raw = mlir_sys::mlirTranslateModuleToLLVMIR(
                module.as_operation().to_raw(),
                context.cast(),
            );
            if raw.is_null() {
                LLVMContextDispose(context);
                return Err(CompileError::Translate(
                    "the module does not translate to LLVM IR (ops outside the LLVM dialect left?)"
                        .into(),
                ));
            }
            Ok(Self::own(context, raw.cast()))
        }
    }

    /// Parses a bitcode file's bytes (e.g. `model.bc`) into a module with its own context.
    pub fn from_bitcode(bitcode: &[u8], what: &str) -> Result<Self, CompileError> {
        // SAFETY: a fresh context, owned by the result (disposed with it on failure).
        let mut shell = unsafe { Self::own(LLVMContextCreate(), ptr::null_mut()) };
        shell.module = shell.parse_bitcode(bitcode, what)?;
        Ok(shell)
    }

    /// Parses bitcode into a module of this context.
    fn parse_bitcode(&self, bitcode: &[u8], what: &str) -> Result<LLVMModuleRef, CompileError> {
        let name = CString::new(what).unwrap_or_default();
        // SAFETY: the buffer copies the bytes; parsing takes a reference to the buffer, which
        // is disposed afterwards (the module does not keep it with ParseBitcode2).
        unsafe {
            let buffer = LLVMCreateMemoryBufferWithMemoryRangeCopy(
                bitcode.as_ptr().cast(),
                bitcode.len(),
                name.as_ptr(),
            );
            let mut module = ptr::null_mut();
            let failed = LLVMParseBitcodeInContext2(self.context, buffer, &mut module);
            LLVMDisposeMemoryBuffer(buffer);
            if failed != 0 || module.is_null() {
                return Err(CompileError::Link(format!(
                    "{what}: not valid LLVM bitcode ({})",
                    self.take_diagnostics()
                )));
            }
            Ok(module)
        }
    }

    /// Links bitcode into the model; with `override_from_src`, its definitions replace
    /// existing ones of the same name.
    pub fn link_bitcode(
        &mut self,
        bitcode: &[u8],
        what: &str,
        override_from_src: bool,
    ) -> Result<(), CompileError> {
        let src = self.parse_bitcode(bitcode, what)?;
        // SAFETY: both modules live in this context; the shim consumes `src`.
        let ok = unsafe { crate::ffi::hip_ep_link_modules(self.module, src, override_from_src) };
        if ok {
            Ok(())
        } else {
            Err(CompileError::Link(format!(
                "linking {what} failed: {}",
                self.take_diagnostics()
            )))
        }
    }

    /// True when the module defines or declares a function named `name`.
    pub fn has_function(&self, name: &str) -> bool {
        let name = CString::new(name).unwrap_or_default();
        // SAFETY: live module; the name is nul-terminated.
        unsafe { !LLVMGetNamedFunction(self.module, name.as_ptr()).is_null() }
    }

    /// Runs LLVM's `default<O2>` pipeline for the host.
    pub fn optimize(&mut self) -> Result<(), CompileError> {
        let tm = TargetMachine::host()?;
        // SAFETY: live module and target machine; options are created and disposed here.
        unsafe {
            let options = LLVMCreatePassBuilderOptions();
            let error = LLVMRunPasses(self.module, c"default<O2>".as_ptr(), tm.raw, options);
            LLVMDisposePassBuilderOptions(options);
            if !error.is_null() {
                return Err(CompileError::Link(format!(
                    "LLVM optimisation failed: {}",
                    take_error(error)
                )));
            }
        }
        Ok(())
    }

    /// The module as bitcode.
    pub fn to_bitcode(&self) -> Vec<u8> {
        // SAFETY: live module; the buffer is copied and disposed.
        unsafe {
            let buffer = LLVMWriteBitcodeToMemoryBuffer(self.module);
            let bytes = std::slice::from_raw_parts(
                LLVMGetBufferStart(buffer).cast::<u8>(),
                LLVMGetBufferSize(buffer),
            )
            .to_vec();
            LLVMDisposeMemoryBuffer(buffer);
            bytes
        }
    }

    /// The module as LLVM IR text.
    pub fn to_ir_text(&self) -> String {
        // SAFETY: live module; the string is freed by take_message.
        unsafe { take_message(LLVMPrintModuleToString(self.module)) }
    }

    /// Emits an object file for the host.
    pub fn write_object(&self, path: &Path) -> Result<(), CompileError> {
        let tm = TargetMachine::host()?;
        let file = CString::new(path.to_string_lossy().as_bytes())
            .map_err(|_| CompileError::Io(format!("{}: path has a nul byte", path.display())))?;
        let mut message = ptr::null_mut();
        // SAFETY: live module and target machine; the path is nul-terminated; the message is
        // freed by take_message.
        unsafe {
            let triple = LLVMGetDefaultTargetTriple();
            LLVMSetTarget(self.module, triple);
            LLVMDisposeMessage(triple);
            let layout = LLVMCreateTargetDataLayout(tm.raw);
            LLVMSetModuleDataLayout(self.module, layout);
            LLVMDisposeTargetData(layout);
            let failed = LLVMTargetMachineEmitToFile(
                tm.raw,
                self.module,
                file.as_ptr(),
                LLVMCodeGenFileType::LLVMObjectFile,
                &mut message,
            );
            if failed != 0 {
                return Err(CompileError::Io(format!(
                    "emitting {}: {}",
                    path.display(),
                    take_message(message)
                )));
            }
        }
        Ok(())
    }

    /// Builds a shared object: the object file linked with `clang-22 -shared` against the
    /// library paths and libraries (plugins' after the in-tree ones), with an rpath for each
    /// path so the result loads without `LD_LIBRARY_PATH`.
    pub fn write_shared_object(&self, path: &Path, libs: &LinkInputs) -> Result<(), CompileError> {
        let object = path.with_extension("o");
        self.write_object(&object)?;
        let mut cmd = Command::new(format!("{}/bin/clang", crate::LLVM_PREFIX));
        cmd.arg("-shared").arg("-o").arg(path).arg(&object);
        for dir in &libs.library_paths {
            cmd.arg(format!("-L{}", dir.display()));
            cmd.arg(format!("-Wl,-rpath,{}", dir.display()));
        }
        for lib in &libs.libraries {
            if lib.contains('/') {
                cmd.arg(lib);
            } else {
                cmd.arg(format!("-l{lib}"));
            }
        }
        let output = cmd
            .output()
            .map_err(|e| CompileError::Io(format!("running {cmd:?}: {e}")))?;
        let _ = std::fs::remove_file(&object);
        if !output.status.success() {
            return Err(CompileError::Link(format!(
                "native link failed ({cmd:?}): {}",
                String::from_utf8_lossy(&output.stderr).trim()
            )));
        }
        Ok(())
    }

    /// Hands the module to a new ORC JIT that resolves external symbols in the process and in
    /// the given libraries.
    pub fn into_jit(mut self, libs: &LinkInputs, codegen: Codegen) -> Result<Jit, CompileError> {
        initialize_native_target();
        let mut jit: LLVMOrcLLJITRef = ptr::null_mut();
        // SAFETY: ORC objects are created, transferred and disposed per the LLVM-C contracts:
        // the thread-safe context takes our context, the thread-safe module takes our module,
        // and LLJIT takes the thread-safe module.
        unsafe {
            let builder = LLVMOrcCreateLLJITBuilder();
            let tm = TargetMachine::host_with_level(codegen.level())?;
            let jtmb = LLVMOrcJITTargetMachineBuilderCreateFromTargetMachine(tm.raw);
            std::mem::forget(tm);
            LLVMOrcLLJITBuilderSetJITTargetMachineBuilder(builder, jtmb);
            let error = LLVMOrcCreateLLJIT(&mut jit, builder);
            if !error.is_null() {
                return Err(CompileError::Jit(take_error(error)));
            }
            let jit = Jit { raw: jit };
            let dylib = LLVMOrcLLJITGetMainJITDylib(jit.raw);
            let mut generator = ptr::null_mut();
            let error = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(
                &mut generator,
                LLVMOrcLLJITGetGlobalPrefix(jit.raw),
                None,
                ptr::null_mut(),
            );
            if !error.is_null() {
                return Err(CompileError::Jit(take_error(error)));
            }
            LLVMOrcJITDylibAddGenerator(dylib, generator);
            for lib in libs.resolve()? {
                let path = CString::new(lib.to_string_lossy().as_bytes()).map_err(|_| {
                    CompileError::Jit(format!("{}: nul byte in path", lib.display()))
                })?;
                let mut generator = ptr::null_mut();
                let error = LLVMOrcCreateDynamicLibrarySearchGeneratorForPath(
                    &mut generator,
                    path.as_ptr(),
                    LLVMOrcLLJITGetGlobalPrefix(jit.raw),
                    None,
                    ptr::null_mut(),
                );
                if !error.is_null() {
                    return Err(CompileError::Jit(format!(
                        "{}: {}",
                        lib.display(),
                        take_error(error)
                    )));
                }
                LLVMOrcJITDylibAddGenerator(dylib, generator);
            }
            // The JIT outlives our diagnostics box: later diagnostics are only logged.
            LLVMContextSetDiagnosticHandler(
                self.context,
                Some(collect_diagnostic),
                ptr::null_mut(),
            );
            let tsc = LLVMOrcCreateNewThreadSafeContextFromLLVMContext(self.context);
            self.context = ptr::null_mut();
            let tsm = LLVMOrcCreateNewThreadSafeModule(self.module, tsc);
            self.module = ptr::null_mut();
            LLVMOrcDisposeThreadSafeContext(tsc);
            let error = LLVMOrcLLJITAddLLVMIRModule(jit.raw, dylib, tsm);
            if !error.is_null() {
                return Err(CompileError::Jit(take_error(error)));
            }
            Ok(jit)
        }
    }
}

/// A host target machine.
struct TargetMachine {
    raw: LLVMTargetMachineRef,
}

/// How hard the code generator works (the JIT's and the native object's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Codegen {
    /// Fast instruction selection, no machine-level optimisation: the JIT default. The
    /// runtime bitcode is already optimised IR (clang -O2), so this mostly costs register
    /// allocation quality, and saves most of the JIT time (about 5 vs 30 ms for the small
    /// model in BENCHMARKS.md).
    #[default]
    Fast,
    /// LLVM's default code generation level (`-O2`): the native shared object's.
    Optimized,
}

impl Codegen {
    fn level(self) -> LLVMCodeGenOptLevel {
        match self {
            Codegen::Fast => LLVMCodeGenOptLevel::LLVMCodeGenLevelNone,
            Codegen::Optimized => LLVMCodeGenOptLevel::LLVMCodeGenLevelDefault,
        }
    }
}

impl TargetMachine {
    fn host() -> Result<Self, CompileError> {
        Self::host_with_level(LLVMCodeGenOptLevel::LLVMCodeGenLevelDefault)
    }

    fn host_with_level(level: LLVMCodeGenOptLevel) -> Result<Self, CompileError> {
        initialize_native_target();
        // SAFETY: LLVM-C target queries; every returned string is disposed.
        unsafe {
            let triple = LLVMGetDefaultTargetTriple();
            let mut target = ptr::null_mut();
            let mut message = ptr::null_mut();
            if LLVMGetTargetFromTriple(triple, &mut target, &mut message) != 0 {
                LLVMDisposeMessage(triple);
                return Err(CompileError::Jit(format!(
                    "no LLVM target for the host: {}",
                    take_message(message)
                )));
            }
            let cpu = LLVMGetHostCPUName();
            let features = LLVMGetHostCPUFeatures();
            let raw = LLVMCreateTargetMachine(
                target,
                triple,
                cpu,
                features,
                level,
                LLVMRelocMode::LLVMRelocPIC,
                LLVMCodeModel::LLVMCodeModelDefault,
            );
            LLVMDisposeMessage(triple);
            LLVMDisposeMessage(cpu);
            LLVMDisposeMessage(features);
            Ok(Self { raw })
        }
    }
}

impl Drop for TargetMachine {
    fn drop(&mut self) {
        // SAFETY: owned.
        unsafe { LLVMDisposeTargetMachine(self.raw) }
    }
}

/// Library search paths and libraries for the native link and the JIT.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LinkInputs {
    /// `-L` directories, in order.
    pub library_paths: Vec<PathBuf>,
    /// `-l` names or full paths, in order.
    pub libraries: Vec<String>,
}

impl LinkInputs {
    /// Each library as a file: a full path as given, a name found as `lib<name>.so` in the
    /// search paths (first match), as a linker would.
    pub fn resolve(&self) -> Result<Vec<PathBuf>, CompileError> {
        self.libraries
            .iter()
            .map(|lib| {
                if lib.contains('/') {
                    return Ok(PathBuf::from(lib));
                }
                self.library_paths
                    .iter()
                    .map(|dir| dir.join(format!("lib{lib}.so")))
                    .find(|p| p.is_file())
                    .ok_or_else(|| {
                        CompileError::Link(format!(
                            "library '{lib}' not found as lib{lib}.so in [{}]",
                            self.library_paths
                                .iter()
                                .map(|p| p.display().to_string())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ))
                    })
            })
            .collect()
    }
}

/// An ORC JIT holding one model.
#[derive(Debug)]
pub struct Jit {
    raw: LLVMOrcLLJITRef,
}

// SAFETY: LLJIT is thread-safe for lookups; the handle is owned by this value.
unsafe impl Send for Jit {}
// SAFETY: as above.
unsafe impl Sync for Jit {}

impl Jit {
    /// The address of a JIT-compiled symbol (compiles on first lookup).
    pub fn lookup(&self, name: &str) -> Result<LLVMOrcExecutorAddress, CompileError> {
        let cname =
            CString::new(name).map_err(|_| CompileError::Jit("nul byte in symbol name".into()))?;
        let mut address: LLVMOrcExecutorAddress = 0;
        // SAFETY: live JIT; the name is nul-terminated.
        let error = unsafe { LLVMOrcLLJITLookup(self.raw, &mut address, cname.as_ptr()) };
        if !error.is_null() {
            // SAFETY: a live error, consumed.
            let message = unsafe { take_error(error) };
            return Err(CompileError::Jit(format!("looking up {name}: {message}")));
        }
        Ok(address)
    }
}

impl Drop for Jit {
    fn drop(&mut self) {
        // SAFETY: owned; disposing releases the compiled code (no function pointer taken from
        // it may be called afterwards, which `JitModel` guarantees by owning this value).
        unsafe {
            let error = LLVMOrcDisposeLLJIT(self.raw);
            if !error.is_null() {
                let _ = take_error(error);
            }
        }
    }
}
