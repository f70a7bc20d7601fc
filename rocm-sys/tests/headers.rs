//! The declarations against the real thing: HIP's headers and runtime (Debian 12's
//! `libamdhip64-dev` 5.2, which `scripts/setup-debian.sh` installs, or a ROCm install),
//! and MIOpen's header where ROCm provides one.
//!
//! * Every function of a table becomes a C function pointer initialised from the
//!   header's function; the C compiler refuses the file if any argument or return type
//!   differs (`-Werror=incompatible-pointer-types`). Every enumeration value and struct
//!   layout is a `_Static_assert`.
//! * The runtime: every declared function resolves, its error names match our values,
//!   and [`Hip::open`] reports this machine's devices (none without `/dev/kfd`).
//!
//! The headers are looked for in `HIPDNN_HIP_INCLUDE_DIR`, `$HIP_PATH/include`,
//! `$ROCM_PATH/include`, `/opt/rocm/include` and `/usr/include`.

use std::ffi::c_int;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use hipdnn_rocm_sys::hip::{self, HIP_LIBRARY_ENV, HIP_NAMES, Hip};
use hipdnn_rocm_sys::*;

const INSTALL: &str = "scripts/setup-debian.sh installs them (Debian's libamdhip64-dev), \
                       or set HIPDNN_HIP_INCLUDE_DIR";

/// The first include directory holding `header`.
fn include_dir(header: &str) -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Some(dir) = std::env::var_os("HIPDNN_HIP_INCLUDE_DIR") {
        dirs.push(dir.into());
    }
    for var in ["HIP_PATH", "ROCM_PATH"] {
        if let Some(root) = std::env::var_os(var).filter(|v| !v.is_empty()) {
            dirs.push(Path::new(&root).join("include"));
        }
    }
    dirs.extend(["/opt/rocm/include", "/usr/include"].map(PathBuf::from));
    dirs.into_iter().find(|dir| dir.join(header).is_file())
}

fn hip_include() -> PathBuf {
    include_dir("hip/hip_runtime_api.h")
        .unwrap_or_else(|| panic!("HIP's headers (hip/hip_runtime_api.h) not found: {INSTALL}"))
}

fn enum_asserts(out: &mut String, values: &[(&str, c_int)]) {
    for (name, value) in values {
        writeln!(
            out,
            "_Static_assert((int){name} == {value}, \"{name} is {value}\");"
        )
        .unwrap();
    }
}

/// Compiles `source` (syntax and types only); the compiler's messages on failure.
fn compile(source: &str, includes: &[PathBuf], label: &str) -> Result<(), String> {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("rocm-sys-headers");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("{label}.c"));
    std::fs::write(&file, source).unwrap();
    let mut cc = Command::new("cc");
    cc.args(["-std=c11", "-fsyntax-only", "-D__HIP_PLATFORM_AMD__"])
        .args([
            "-Werror=incompatible-pointer-types",
            "-Werror=int-conversion",
        ]);
    for dir in includes {
        cc.arg("-I").arg(dir);
    }
    let output = cc
        .arg(&file)
        .output()
        .unwrap_or_else(|e| panic!("cannot run cc: {e}"));
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{}:\n{}",
            file.display(),
            String::from_utf8_lossy(&output.stderr)
        ))
    }
}

fn hip_source(extra: &str) -> String {
    let mut source = String::from("#include <stdbool.h>\n#include <hip/hip_runtime_api.h>\n\n");
    for check in HipApi::c_checks() {
        writeln!(source, "static {check}").unwrap();
    }
    enum_asserts(&mut source, hipError_t::VALUES);
    enum_asserts(&mut source, hipMemcpyKind::VALUES);
    source.push_str(extra);
    source
}

#[test]
fn hip_declarations_agree_with_the_hip_headers() {
    let checks = HipApi::c_checks();
    assert_eq!(checks.len(), HipApi::SYMBOLS.len());
    assert!(
        checks.contains(
            &"hipError_t (*check_hipMemcpy)(void*, void const*, size_t, hipMemcpyKind) = hipMemcpy;"
                .to_string()
        ),
        "{checks:#?}"
    );
    compile(&hip_source(""), &[hip_include()], "hip").unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn a_wrong_declaration_or_value_does_not_compile_against_the_hip_headers() {
    let include = [hip_include()];
    let wrong_signature = "static hipError_t (*check_wrong)(int*, int) = hipGetDeviceCount;\n";
    let error = compile(
        &hip_source(wrong_signature),
        &include,
        "hip-wrong-signature",
    )
    .expect_err("a wrong signature compiled");
    assert!(error.contains("check_wrong"), "{error}");
    let wrong_value = "_Static_assert((int)hipErrorNoDevice == 101, \"wrong\");\n";
    compile(&hip_source(wrong_value), &include, "hip-wrong-value")
        .expect_err("a wrong value compiled");
}

#[test]
#[ignore = "needs MIOpen's header (miopen/miopen.h, from ROCm; Debian 12 has none): run with \
            --ignored where it is installed"]
fn miopen_declarations_agree_with_the_miopen_header() {
    let miopen = include_dir("miopen/miopen.h").unwrap_or_else(|| {
        panic!(
            "MIOpen's header (miopen/miopen.h) not found in ROCM_PATH/include or /opt/rocm/include"
        )
    });
    // miopen.h names `miopenTensorArgument_t` without `struct` (valid C++ only); the
    // typedef lets a C compiler read it.
    let mut source = String::from(
        "#include <stdbool.h>\n#include <stddef.h>\n\
         typedef struct miopenTensorArgument_t miopenTensorArgument_t;\n\
         #include <miopen/miopen.h>\n\n",
    );
    for check in MiopenApi::c_checks() {
        writeln!(source, "static {check}").unwrap();
    }
    for values in [
        miopenStatus_t::VALUES,
        miopenDataType_t::VALUES,
        miopenTensorOp_t::VALUES,
        miopenConvolutionMode_t::VALUES,
        miopenConvolutionAttrib_t::VALUES,
        miopenConvAlgorithm_t::VALUES,
        miopenBatchNormMode_t::VALUES,
        miopenActivationMode_t::VALUES,
        miopenFusionDirection_t::VALUES,
    ] {
        enum_asserts(&mut source, values);
    }
    macro_rules! layout {
        ($ty:ident { $($field:ident),* }) => {
            writeln!(
                source,
                "_Static_assert(sizeof({ty}) == {size}, \"size of {ty}\");",
                ty = stringify!($ty),
                size = std::mem::size_of::<$ty>()
            )
            .unwrap();
            $( writeln!(
                source,
                "_Static_assert(offsetof({ty}, {field}) == {offset}, \"{ty}.{field}\");",
                ty = stringify!($ty),
                field = stringify!($field),
                offset = std::mem::offset_of!($ty, $field)
            )
            .unwrap(); )*
        };
    }
    layout!(miopenConvSolution_t {
        time,
        workspace_size,
        solution_id,
        algorithm
    });
    layout!(miopenConvAlgoPerf_t { time, memory });
    let mut includes = vec![miopen];
    includes.extend(include_dir("hip/hip_runtime_api.h"));
    compile(&source, &includes, "miopen").unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn the_hip_runtime_resolves_every_declared_function_and_reports_its_devices() {
    // The runtime the search finds (the override, when set, is what the user chose).
    let (library, path) = hip::open_library(HIP_LIBRARY_ENV, HIP_NAMES)
        .unwrap_or_else(|e| panic!("no HIP runtime: {e}; {INSTALL}"));
    // SAFETY: a HIP runtime exports these functions with the declared signatures (the
    // header test above checks the declarations).
    let api = unsafe { HipApi::resolve(library) }
        .unwrap_or_else(|symbol| panic!("{} lacks {symbol}", path.display()));

    let mut version: c_int = 0;
    // SAFETY: a valid out-pointer.
    let status = unsafe { (api.hipRuntimeGetVersion)(&mut version) };
    assert_eq!(status, hipError_t::hipSuccess, "hipRuntimeGetVersion");
    let major = version / 10_000_000;
    assert!((5..=20).contains(&major), "version {version}");

    // Our error values against the runtime's own texts: each value is one the runtime
    // knows (not its text for an unknown value); HIP 5 prints the enumerator's name.
    let unknown = hip::error_text(&api, hipError_t(12_345));
    for &(name, value) in hipError_t::VALUES {
        let text = hip::error_text(&api, hipError_t(value));
        assert_ne!(
            text,
            unknown,
            "{name} = {value} is unknown to {}",
            path.display()
        );
        if major == 5 {
            assert_eq!(text, name, "value {value}");
        }
    }

    // SAFETY: this binary's tests do not read the variable concurrently with the set:
    // the other tests never look at it.
    unsafe { std::env::set_var(HIP_LIBRARY_ENV, &path) };
    match Hip::open() {
        Ok(hip) => {
            assert!(Path::new("/dev/kfd").exists(), "devices without /dev/kfd");
            assert!(hip.devices >= 1);
        }
        Err(reason) => {
            assert!(!Path::new("/dev/kfd").exists(), "{reason}");
            assert_eq!(reason, "no HIP device");
        }
    }
}
