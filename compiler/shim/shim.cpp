// The few MLIR/LLVM facilities the C API does not offer, as plain C functions for the Rust
// side (src/ffi.rs): registering passes and pass pipelines by name in MLIR's global registry
// (so textual pipelines and `hip-mlir-opt` resolve them), looking a name up there, and
// linking LLVM modules with override-from-source semantics.
//
// Nothing here throws (built with -fno-exceptions) and nothing keeps a pointer it was given
// beyond the call, except the `user` pointers of the registration functions, which must stay
// valid for the life of the process.

#include "mlir/CAPI/Pass.h"
#include "mlir/CAPI/Support.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

#include "llvm/IR/Module.h"
#include "llvm/Linker/Linker.h"

#include <memory>
#include <string>

extern "C" {

/// Creates a new pass instance; ownership of the returned pass goes to the caller.
typedef MlirPass (*hip_ep_pass_factory)(void *user);
/// Reports one error line of a pipeline builder.
typedef void (*hip_ep_report_fn)(void *report_ctx, MlirStringRef message);
/// Adds a pipeline's passes to `pm`, given the option text between `{` and `}` (may be empty).
/// Returns false after reporting at least one error through `report`.
typedef bool (*hip_ep_pipeline_builder)(void *user, MlirOpPassManager pm, MlirStringRef options,
                                        hip_ep_report_fn report, void *report_ctx);

/// True when `name` is a pass or a pass pipeline in MLIR's global registry.
bool hip_ep_mlir_name_registered(MlirStringRef name) {
  llvm::StringRef n = unwrap(name);
  return mlir::PassInfo::lookup(n) != nullptr || mlir::PassPipelineInfo::lookup(n) != nullptr;
}

/// True when `name` is a pass (not a pipeline) in MLIR's global registry.
/// Registers a pass under the argument the factory's passes carry. The caller has checked that
/// the name is free: MLIR aborts on a second registration of a name with another pass type.
void hip_ep_register_pass(void *user, hip_ep_pass_factory factory) {
  mlir::registerPass([user, factory]() -> std::unique_ptr<mlir::Pass> {
    return std::unique_ptr<mlir::Pass>(unwrap(factory(user)));
  });
}

namespace {
struct ReportCtx {
  llvm::function_ref<llvm::LogicalResult(const llvm::Twine &)> handler;
};
void report_through_handler(void *ctx, MlirStringRef message) {
  (void)static_cast<ReportCtx *>(ctx)->handler(unwrap(message));
}
} // namespace

/// Registers a pass pipeline whose builder receives the option text.
void hip_ep_register_pipeline(MlirStringRef argument, MlirStringRef description, void *user,
                              hip_ep_pipeline_builder builder) {
  mlir::registerPassPipeline(
      unwrap(argument), unwrap(description),
      [user, builder](mlir::OpPassManager &pm, llvm::StringRef options,
                      llvm::function_ref<llvm::LogicalResult(const llvm::Twine &)> errorHandler)
          -> llvm::LogicalResult {
        ReportCtx ctx{errorHandler};
        bool ok = builder(user, wrap(&pm), wrap(options), report_through_handler, &ctx);
        return ok ? llvm::success() : llvm::failure();
      },
      [](llvm::function_ref<void(const mlir::detail::PassOptions &)>) {});
}

/// Links `src` into `dst` and consumes `src` (also on failure): without `override_from_src`
/// only the definitions `dst` needs; with it, all of them, a symbol defined in both taking
/// `src`'s definition. Returns false on failure (the reason goes
/// to the LLVM context's diagnostic handler).
bool hip_ep_link_modules(LLVMModuleRef dst, LLVMModuleRef src, bool override_from_src) {
  std::unique_ptr<llvm::Module> owned(llvm::unwrap(src));
  // Without override (the in-tree runtime), only definitions the model references are pulled
  // in: unused wrappers would otherwise be compiled by every JIT. With override (plugin
  // bitcode), everything is linked and `src`'s definitions replace existing ones; combined
  // with LinkOnlyNeeded, an already defined symbol would not count as needed and would not
  // be overridden.
  unsigned flags = override_from_src ? llvm::Linker::Flags::OverrideFromSrc
                                     : llvm::Linker::Flags::LinkOnlyNeeded;
  return !llvm::Linker::linkModules(*llvm::unwrap(dst), std::move(owned), flags);
}

} // extern "C"
