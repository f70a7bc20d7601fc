//! The C declarations of the HIP runtime and MIOpen functions the provider calls, as
//! tables of function pointers resolved from a library loaded at run time.
//!
//! Names, argument order and types follow HIP's `hip_runtime_api.h` and MIOpen's
//! `miopen/miopen.h`. Enumerations are `#[repr(transparent)]` integers with the
//! header's values as constants (a value another implementation returns that we do not
//! know stays representable), opaque handles are pointers to zero-sized structs.
//!
//! [`library!`] writes, for each table, the struct of function pointers, its loader
//! (every symbol resolved up front: a missing one is an error naming it, never a crash
//! later), the list of symbol names and one signature alias per function in a module
//! of its own (`hip_fn`, `miopen_fn`), which an implementation of the same functions
//! (the software MIOpen the tests run on) checks its definitions against.
//!
//! [`CType`] spells every type the way the headers do, so that each table can write its
//! declarations back as C ([`HipApi::c_checks`]) and a C compiler can hold them against
//! the real headers (`tests/headers.rs`: every function pointer initialised from the
//! header's function, every enumeration value and struct layout asserted).

#![allow(
    non_camel_case_types,
    non_snake_case,
    non_upper_case_globals,
    missing_docs
)]

use std::ffi::{c_char, c_double, c_float, c_int, c_void};

/// A type as the C headers spell it (`size_t` for `usize`, `hipStream_t*` as
/// `struct ihipStream_t**`, `const int*` as `int const*`).
pub trait CType {
    /// The C spelling.
    fn c_type() -> String;
}

macro_rules! c_scalars {
    ($($ty:ty => $c:literal),* $(,)?) => {
        $( impl CType for $ty {
            fn c_type() -> String {
                $c.to_string()
            }
        } )*
    };
}

c_scalars!(
    c_void => "void",
    c_char => "char",
    c_int => "int",
    c_float => "float",
    c_double => "double",
    usize => "size_t",
    u64 => "uint64_t",
    bool => "bool",
);

impl<T: CType> CType for *mut T {
    fn c_type() -> String {
        format!("{}*", T::c_type())
    }
}

impl<T: CType> CType for *const T {
    fn c_type() -> String {
        format!("{} const*", T::c_type())
    }
}

/// Declares a table of C functions loaded from one library.
macro_rules! library {
    (
        $(#[$meta:meta])*
        pub struct $table:ident in $sig:ident {
            $( fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty; )*
        }
    ) => {
        $(#[$meta])*
        pub struct $table {
            $( pub $name: unsafe extern "C" fn($($ty),*) -> $ret, )*
            _library: libloading::os::unix::Library,
        }

        impl $table {
            /// Every function of the table, by symbol name.
            pub const SYMBOLS: &'static [&'static str] = &[$(stringify!($name)),*];

            /// Each function's declaration as a C pointer definition initialised from
            /// the function itself (`hipError_t (*check_hipFree)(void*) = hipFree;`): C
            /// code that compiles against the real header only if the signatures agree
            /// (with `-Werror=incompatible-pointer-types`).
            pub fn c_checks() -> Vec<String> {
                vec![$({
                    let args: Vec<String> = vec![$(<$ty as CType>::c_type()),*];
                    let args = if args.is_empty() { "void".to_string() } else { args.join(", ") };
                    format!(
                        "{} (*check_{name})({args}) = {name};",
                        <$ret as CType>::c_type(),
                        name = stringify!($name),
                    )
                }),*]
            }

            /// Resolves every function of the table in `library`.
            ///
            /// # Errors
            /// The first symbol `library` lacks.
            ///
            /// # Safety
            /// `library` must export these symbols with the declared signatures (the
            /// C headers' contract for the library this table names).
            pub unsafe fn resolve(
                library: libloading::os::unix::Library,
            ) -> Result<Self, &'static str> {
                Ok(Self {
                    $( $name: {
                        // SAFETY: the caller vouches for the signature.
                        let symbol = unsafe {
                            library.get::<unsafe extern "C" fn($($ty),*) -> $ret>(
                                concat!(stringify!($name), "\0").as_bytes(),
                            )
                        };
                        *symbol.map_err(|_| stringify!($name))?
                    }, )*
                    _library: library,
                })
            }
        }

        impl std::fmt::Debug for $table {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($table)).finish_non_exhaustive()
            }
        }

        /// One signature alias per function of the table, for implementations to be
        /// checked against (`const _: hip_fn::hipMalloc = hipMalloc;`).
        pub mod $sig {
            #[allow(unused_imports)]
            use super::*;
            $( pub type $name = unsafe extern "C" fn($($ty),*) -> $ret; )*
        }
    };
}

/// Declares a C enumeration as a transparent integer with named values.
macro_rules! c_enum {
    ($(#[$meta:meta])* $name:ident { $($variant:ident = $value:expr),* $(,)? }) => {
        $(#[$meta])*
        #[repr(transparent)]
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub struct $name(pub c_int);

        impl $name {
            $( pub const $variant: Self = Self($value); )*

            /// Every named value, as in the header.
            pub const VALUES: &'static [(&'static str, c_int)] =
                &[$((stringify!($variant), $value)),*];

            /// The header's name of the value, if it has one.
            pub fn name(self) -> Option<&'static str> {
                match self.0 {
                    $( $value => Some(stringify!($variant)), )*
                    _ => None,
                }
            }
        }

        impl CType for $name {
            fn c_type() -> String {
                stringify!($name).to_string()
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                match self.name() {
                    Some(name) => f.write_str(name),
                    None => write!(f, "{}({})", stringify!($name), self.0),
                }
            }
        }
    };
}

/// Declares opaque handle types (`name_t` is a pointer to `name`).
macro_rules! opaque {
    ($($name:ident => $ptr:ident),* $(,)?) => {
        $(
            #[repr(C)]
            #[derive(Debug)]
            pub struct $name {
                _private: [u8; 0],
            }
            pub type $ptr = *mut $name;

            impl CType for $name {
                fn c_type() -> String {
                    concat!("struct ", stringify!($name)).to_string()
                }
            }
        )*
    };
}

// ---------------------------------------------------------------------------------
// HIP runtime
// ---------------------------------------------------------------------------------

c_enum!(
    /// `hipError_t` (the values the provider tells apart; others print as numbers).
    hipError_t {
        hipSuccess = 0,
        hipErrorInvalidValue = 1,
        hipErrorOutOfMemory = 2,
        hipErrorNotInitialized = 3,
        hipErrorInvalidDevicePointer = 17,
        hipErrorInvalidMemcpyDirection = 21,
        hipErrorInsufficientDriver = 35,
        hipErrorNoDevice = 100,
        hipErrorInvalidDevice = 101,
        hipErrorNotSupported = 801,
    }
);

c_enum!(
    /// `hipMemcpyKind`.
    hipMemcpyKind {
        hipMemcpyHostToHost = 0,
        hipMemcpyHostToDevice = 1,
        hipMemcpyDeviceToHost = 2,
        hipMemcpyDeviceToDevice = 3,
        hipMemcpyDefault = 4,
    }
);

opaque!(ihipStream_t => hipStream_t, ihipEvent_t => hipEvent_t);

library! {
    /// The HIP runtime functions the provider uses, and those hosts use for device
    /// memory, streams and timing (the tests, `hipdnn run`).
    pub struct HipApi in hip_fn {
        fn hipGetDeviceCount(count: *mut c_int) -> hipError_t;
        fn hipRuntimeGetVersion(version: *mut c_int) -> hipError_t;
        fn hipGetErrorString(error: hipError_t) -> *const c_char;
        fn hipMalloc(ptr: *mut *mut c_void, size: usize) -> hipError_t;
        fn hipFree(ptr: *mut c_void) -> hipError_t;
        fn hipMemcpy(dst: *mut c_void, src: *const c_void, size: usize, kind: hipMemcpyKind) -> hipError_t;
        fn hipDeviceSynchronize() -> hipError_t;
        fn hipStreamSynchronize(stream: hipStream_t) -> hipError_t;
        fn hipStreamCreate(stream: *mut hipStream_t) -> hipError_t;
        fn hipStreamDestroy(stream: hipStream_t) -> hipError_t;
        fn hipEventCreate(event: *mut hipEvent_t) -> hipError_t;
        fn hipEventRecord(event: hipEvent_t, stream: hipStream_t) -> hipError_t;
        fn hipEventSynchronize(event: hipEvent_t) -> hipError_t;
        fn hipEventElapsedTime(ms: *mut c_float, start: hipEvent_t, stop: hipEvent_t) -> hipError_t;
        fn hipEventDestroy(event: hipEvent_t) -> hipError_t;
    }
}

// ---------------------------------------------------------------------------------
// MIOpen
// ---------------------------------------------------------------------------------

c_enum!(
    /// `miopenStatus_t`.
    miopenStatus_t {
        miopenStatusSuccess = 0,
        miopenStatusNotInitialized = 1,
        miopenStatusInvalidValue = 2,
        miopenStatusBadParm = 3,
        miopenStatusAllocFailed = 4,
        miopenStatusInternalError = 5,
        miopenStatusNotImplemented = 6,
        miopenStatusUnknownError = 7,
        miopenStatusUnsupportedOp = 8,
        miopenStatusGpuOperationsSkipped = 9,
        miopenStatusVersionMismatch = 10,
    }
);

c_enum!(
    /// `miopenDataType_t`.
    miopenDataType_t {
        miopenHalf = 0,
        miopenFloat = 1,
        miopenInt32 = 2,
        miopenInt8 = 3,
        miopenBFloat16 = 5,
        miopenDouble = 6,
        miopenFloat8_fnuz = 7,
        miopenBFloat8_fnuz = 8,
        miopenInt64 = 9,
    }
);

c_enum!(
    /// `miopenTensorOp_t`: `C = op(alpha1·A, alpha2·B) + beta·C`.
    miopenTensorOp_t {
        miopenTensorOpAdd = 0,
        miopenTensorOpMul = 1,
        miopenTensorOpMin = 2,
        miopenTensorOpMax = 3,
    }
);

c_enum!(
    /// `miopenConvolutionMode_t` (`miopenConvolution` is cross-correlation).
    miopenConvolutionMode_t {
        miopenConvolution = 0,
        miopenTranspose = 1,
        miopenGroupConv = 2,
        miopenDepthwise = 3,
    }
);

c_enum!(
    /// `miopenConvolutionAttrib_t`.
    miopenConvolutionAttrib_t {
        MIOPEN_CONVOLUTION_ATTRIB_FP16_ALT_IMPL = 0,
        MIOPEN_CONVOLUTION_ATTRIB_DETERMINISTIC = 1,
    }
);

c_enum!(
    /// `miopenConvAlgorithm_t`.
    miopenConvAlgorithm_t {
        miopenConvolutionAlgoGEMM = 0,
        miopenConvolutionAlgoDirect = 1,
        miopenConvolutionAlgoFFT = 2,
        miopenConvolutionAlgoWinograd = 3,
        miopenConvolutionAlgoImplicitGEMM = 5,
    }
);

c_enum!(
    /// `miopenBatchNormMode_t`.
    miopenBatchNormMode_t {
        miopenBNPerActivation = 0,
        miopenBNSpatial = 1,
    }
);

c_enum!(
    /// `miopenActivationMode_t` (`CLAMP`: `min(max(x, alpha), beta)`).
    miopenActivationMode_t {
        miopenActivationPASTHRU = 0,
        miopenActivationLOGISTIC = 1,
        miopenActivationTANH = 2,
        miopenActivationRELU = 3,
        miopenActivationSOFTRELU = 4,
        miopenActivationABS = 5,
        miopenActivationPOWER = 6,
        miopenActivationCLIPPEDRELU = 7,
        miopenActivationLEAKYRELU = 8,
        miopenActivationELU = 9,
        miopenActivationCLAMP = 10,
    }
);

c_enum!(
    /// `miopenFusionDirection_t`.
    miopenFusionDirection_t {
        miopenVerticalFusion = 0,
        miopenHorizontalFusion = 1,
    }
);

opaque!(
    miopenHandle => miopenHandle_t,
    miopenTensorDescriptor => miopenTensorDescriptor_t,
    miopenConvolutionDescriptor => miopenConvolutionDescriptor_t,
    miopenActivationDescriptor => miopenActivationDescriptor_t,
    miopenFusionPlanDescriptor => miopenFusionPlanDescriptor_t,
    miopenFusionOpDescriptor => miopenFusionOpDescriptor_t,
    miopenOperatorArgs => miopenOperatorArgs_t,
);

/// `miopenConvSolution_t`: one immediate-mode solution.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct miopenConvSolution_t {
    /// Expected (or, after a Find, measured) time in milliseconds.
    pub time: c_float,
    /// Workspace bytes it needs.
    pub workspace_size: usize,
    pub solution_id: u64,
    pub algorithm: miopenConvAlgorithm_t,
}

impl CType for miopenConvSolution_t {
    fn c_type() -> String {
        "miopenConvSolution_t".to_string()
    }
}

/// `miopenConvAlgoPerf_t`: one Find result (the header's union of the three direction's
/// algorithm enums is one `int`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct miopenConvAlgoPerf_t {
    pub algo: c_int,
    pub time: c_float,
    pub memory: usize,
}

impl CType for miopenConvAlgoPerf_t {
    fn c_type() -> String {
        "miopenConvAlgoPerf_t".to_string()
    }
}

type Handle = miopenHandle_t;
type TensorDesc = miopenTensorDescriptor_t;
type ConvDesc = miopenConvolutionDescriptor_t;
type ActivDesc = miopenActivationDescriptor_t;
type Plan = miopenFusionPlanDescriptor_t;
type OpDesc = miopenFusionOpDescriptor_t;
type Args = miopenOperatorArgs_t;
type Status = miopenStatus_t;
type BnMode = miopenBatchNormMode_t;

library! {
    /// The MIOpen functions the provider calls.
    pub struct MiopenApi in miopen_fn {
        fn miopenGetVersion(major: *mut usize, minor: *mut usize, patch: *mut usize) -> Status;
        fn miopenGetErrorString(error: Status) -> *const c_char;
        fn miopenCreateWithStream(handle: *mut Handle, stream: hipStream_t) -> Status;
        fn miopenDestroy(handle: Handle) -> Status;
        fn miopenSetStream(handle: Handle, stream: hipStream_t) -> Status;

        fn miopenCreateTensorDescriptor(desc: *mut TensorDesc) -> Status;
        fn miopenSetTensorDescriptor(desc: TensorDesc, data_type: miopenDataType_t, nb_dims: c_int, dims: *const c_int, strides: *const c_int) -> Status;
        fn miopenDestroyTensorDescriptor(desc: TensorDesc) -> Status;
        fn miopenOpTensor(handle: Handle, op: miopenTensorOp_t, alpha1: *const c_void, a_desc: TensorDesc, a: *const c_void, alpha2: *const c_void, b_desc: TensorDesc, b: *const c_void, beta: *const c_void, c_desc: TensorDesc, c: *mut c_void) -> Status;

        fn miopenCreateConvolutionDescriptor(desc: *mut ConvDesc) -> Status;
        fn miopenInitConvolutionNdDescriptor(desc: ConvDesc, spatial_dim: c_int, pad: *const c_int, stride: *const c_int, dilation: *const c_int, mode: miopenConvolutionMode_t) -> Status;
        fn miopenSetConvolutionGroupCount(desc: ConvDesc, groups: c_int) -> Status;
        fn miopenSetConvolutionAttribute(desc: ConvDesc, attr: miopenConvolutionAttrib_t, value: c_int) -> Status;
        fn miopenDestroyConvolutionDescriptor(desc: ConvDesc) -> Status;

        fn miopenConvolutionForwardGetSolutionCount(handle: Handle, w_desc: TensorDesc, x_desc: TensorDesc, conv: ConvDesc, y_desc: TensorDesc, count: *mut usize) -> Status;
        fn miopenConvolutionForwardGetSolution(handle: Handle, w_desc: TensorDesc, x_desc: TensorDesc, conv: ConvDesc, y_desc: TensorDesc, max_count: usize, count: *mut usize, solutions: *mut miopenConvSolution_t) -> Status;
        fn miopenConvolutionForwardCompileSolution(handle: Handle, w_desc: TensorDesc, x_desc: TensorDesc, conv: ConvDesc, y_desc: TensorDesc, solution_id: u64) -> Status;
        fn miopenConvolutionForwardImmediate(handle: Handle, w_desc: TensorDesc, w: *const c_void, x_desc: TensorDesc, x: *const c_void, conv: ConvDesc, y_desc: TensorDesc, y: *mut c_void, workspace: *mut c_void, workspace_size: usize, solution_id: u64) -> Status;
        fn miopenFindConvolutionForwardAlgorithm(handle: Handle, x_desc: TensorDesc, x: *const c_void, w_desc: TensorDesc, w: *const c_void, conv: ConvDesc, y_desc: TensorDesc, y: *mut c_void, request_count: c_int, returned_count: *mut c_int, results: *mut miopenConvAlgoPerf_t, workspace: *mut c_void, workspace_size: usize, exhaustive: bool) -> Status;

        fn miopenConvolutionBackwardDataGetSolutionCount(handle: Handle, dy_desc: TensorDesc, w_desc: TensorDesc, conv: ConvDesc, dx_desc: TensorDesc, count: *mut usize) -> Status;
        fn miopenConvolutionBackwardDataGetSolution(handle: Handle, dy_desc: TensorDesc, w_desc: TensorDesc, conv: ConvDesc, dx_desc: TensorDesc, max_count: usize, count: *mut usize, solutions: *mut miopenConvSolution_t) -> Status;
        fn miopenConvolutionBackwardDataCompileSolution(handle: Handle, dy_desc: TensorDesc, w_desc: TensorDesc, conv: ConvDesc, dx_desc: TensorDesc, solution_id: u64) -> Status;
        fn miopenConvolutionBackwardDataImmediate(handle: Handle, dy_desc: TensorDesc, dy: *const c_void, w_desc: TensorDesc, w: *const c_void, conv: ConvDesc, dx_desc: TensorDesc, dx: *mut c_void, workspace: *mut c_void, workspace_size: usize, solution_id: u64) -> Status;
        fn miopenFindConvolutionBackwardDataAlgorithm(handle: Handle, dy_desc: TensorDesc, dy: *const c_void, w_desc: TensorDesc, w: *const c_void, conv: ConvDesc, dx_desc: TensorDesc, dx: *mut c_void, request_count: c_int, returned_count: *mut c_int, results: *mut miopenConvAlgoPerf_t, workspace: *mut c_void, workspace_size: usize, exhaustive: bool) -> Status;

        fn miopenConvolutionBackwardWeightsGetSolutionCount(handle: Handle, dy_desc: TensorDesc, x_desc: TensorDesc, conv: ConvDesc, dw_desc: TensorDesc, count: *mut usize) -> Status;
        fn miopenConvolutionBackwardWeightsGetSolution(handle: Handle, dy_desc: TensorDesc, x_desc: TensorDesc, conv: ConvDesc, dw_desc: TensorDesc, max_count: usize, count: *mut usize, solutions: *mut miopenConvSolution_t) -> Status;
        fn miopenConvolutionBackwardWeightsCompileSolution(handle: Handle, dy_desc: TensorDesc, x_desc: TensorDesc, conv: ConvDesc, dw_desc: TensorDesc, solution_id: u64) -> Status;
        fn miopenConvolutionBackwardWeightsImmediate(handle: Handle, dy_desc: TensorDesc, dy: *const c_void, x_desc: TensorDesc, x: *const c_void, conv: ConvDesc, dw_desc: TensorDesc, dw: *mut c_void, workspace: *mut c_void, workspace_size: usize, solution_id: u64) -> Status;
        fn miopenFindConvolutionBackwardWeightsAlgorithm(handle: Handle, dy_desc: TensorDesc, dy: *const c_void, x_desc: TensorDesc, x: *const c_void, conv: ConvDesc, dw_desc: TensorDesc, dw: *mut c_void, request_count: c_int, returned_count: *mut c_int, results: *mut miopenConvAlgoPerf_t, workspace: *mut c_void, workspace_size: usize, exhaustive: bool) -> Status;

        fn miopenCreateActivationDescriptor(desc: *mut ActivDesc) -> Status;
        fn miopenSetActivationDescriptor(desc: ActivDesc, mode: miopenActivationMode_t, alpha: c_double, beta: c_double, gamma: c_double) -> Status;
        fn miopenDestroyActivationDescriptor(desc: ActivDesc) -> Status;
        fn miopenActivationForward(handle: Handle, desc: ActivDesc, alpha: *const c_void, x_desc: TensorDesc, x: *const c_void, beta: *const c_void, y_desc: TensorDesc, y: *mut c_void) -> Status;

        fn miopenBatchNormalizationForwardInference_V2(handle: Handle, mode: BnMode, alpha: *mut c_void, beta: *mut c_void, x_desc: TensorDesc, x: *const c_void, y_desc: TensorDesc, y: *mut c_void, scale_desc: TensorDesc, bias_desc: TensorDesc, mean_desc: TensorDesc, var_desc: TensorDesc, scale: *mut c_void, bias: *mut c_void, mean: *mut c_void, variance: *mut c_void, epsilon: c_double) -> Status;
        fn miopenBatchNormalizationForwardInferenceInvVariance(handle: Handle, mode: BnMode, alpha: *mut c_void, beta: *mut c_void, x_desc: TensorDesc, x: *const c_void, y_desc: TensorDesc, y: *mut c_void, scale_desc: TensorDesc, bias_desc: TensorDesc, mean_desc: TensorDesc, inv_var_desc: TensorDesc, scale: *mut c_void, bias: *mut c_void, mean: *mut c_void, inv_variance: *mut c_void) -> Status;
        fn miopenBatchNormForwardInferenceActivation(handle: Handle, mode: BnMode, alpha: *mut c_void, beta: *mut c_void, x_desc: TensorDesc, x: *const c_void, y_desc: TensorDesc, y: *mut c_void, scale_desc: TensorDesc, bias_desc: TensorDesc, mean_desc: TensorDesc, var_desc: TensorDesc, scale: *mut c_void, bias: *mut c_void, mean: *mut c_void, variance: *mut c_void, epsilon: c_double, activ: ActivDesc) -> Status;
        fn miopenBatchNormForwardInferenceActivationInvVariance(handle: Handle, mode: BnMode, alpha: *mut c_void, beta: *mut c_void, x_desc: TensorDesc, x: *const c_void, y_desc: TensorDesc, y: *mut c_void, scale_desc: TensorDesc, bias_desc: TensorDesc, mean_desc: TensorDesc, inv_var_desc: TensorDesc, scale: *mut c_void, bias: *mut c_void, mean: *mut c_void, inv_variance: *mut c_void, activ: ActivDesc) -> Status;
        fn miopenBatchNormalizationForwardTraining_V3(handle: Handle, mode: BnMode, alpha: *mut c_void, beta: *mut c_void, x_desc: TensorDesc, x: *const c_void, y_desc: TensorDesc, y: *mut c_void, scale_desc: TensorDesc, bias_desc: TensorDesc, saved_mean_desc: TensorDesc, saved_var_desc: TensorDesc, scale: *mut c_void, bias: *mut c_void, exp_avg_factor: c_double, prev_running_mean: *const c_void, prev_running_variance: *const c_void, next_running_mean: *mut c_void, next_running_variance: *mut c_void, epsilon: c_double, saved_mean: *mut c_void, saved_inv_variance: *mut c_void) -> Status;
        fn miopenBatchNormForwardTrainingActivation_V2(handle: Handle, mode: BnMode, alpha: *mut c_void, beta: *mut c_void, x_desc: TensorDesc, x: *const c_void, y_desc: TensorDesc, y: *mut c_void, scale_desc: TensorDesc, bias_desc: TensorDesc, saved_mean_desc: TensorDesc, saved_var_desc: TensorDesc, scale: *mut c_void, bias: *mut c_void, exp_avg_factor: c_double, prev_running_mean: *const c_void, prev_running_variance: *const c_void, next_running_mean: *mut c_void, next_running_variance: *mut c_void, epsilon: c_double, saved_mean: *mut c_void, saved_inv_variance: *mut c_void, activ: ActivDesc) -> Status;
        fn miopenBatchNormalizationBackward_V2(handle: Handle, mode: BnMode, alpha_data: *const c_void, beta_data: *const c_void, alpha_param: *const c_void, beta_param: *const c_void, x_desc: TensorDesc, x: *const c_void, dy_desc: TensorDesc, dy: *const c_void, dx_desc: TensorDesc, dx: *mut c_void, scale_desc: TensorDesc, bias_desc: TensorDesc, saved_mean_desc: TensorDesc, saved_var_desc: TensorDesc, scale: *const c_void, dscale: *mut c_void, dbias: *mut c_void, epsilon: c_double, saved_mean: *const c_void, saved_inv_variance: *const c_void) -> Status;
        fn miopenBatchNormBackwardActivation(handle: Handle, mode: BnMode, alpha_data: *const c_void, beta_data: *const c_void, alpha_param: *const c_void, beta_param: *const c_void, x_desc: TensorDesc, x: *const c_void, dy_desc: TensorDesc, dy: *const c_void, dx_desc: TensorDesc, dx: *mut c_void, scale_desc: TensorDesc, bias_desc: TensorDesc, saved_mean_desc: TensorDesc, saved_var_desc: TensorDesc, scale: *const c_void, bias: *const c_void, dscale: *mut c_void, dbias: *mut c_void, epsilon: c_double, saved_mean: *const c_void, saved_inv_variance: *const c_void, activ: ActivDesc) -> Status;

        fn miopenCreateFusionPlan(plan: *mut Plan, direction: miopenFusionDirection_t, input_desc: TensorDesc) -> Status;
        fn miopenDestroyFusionPlan(plan: Plan) -> Status;
        fn miopenCompileFusionPlan(handle: Handle, plan: Plan) -> Status;
        fn miopenFusionPlanGetOp(plan: Plan, index: c_int, op: *mut OpDesc) -> Status;
        fn miopenCreateOpConvForward(plan: Plan, op: *mut OpDesc, conv: ConvDesc, w_desc: TensorDesc) -> Status;
        fn miopenCreateOpBiasForward(plan: Plan, op: *mut OpDesc, bias_desc: TensorDesc) -> Status;
        fn miopenCreateOpActivationForward(plan: Plan, op: *mut OpDesc, mode: miopenActivationMode_t) -> Status;
        fn miopenCreateOperatorArgs(args: *mut Args) -> Status;
        fn miopenDestroyOperatorArgs(args: Args) -> Status;
        fn miopenSetOpArgsConvForward(args: Args, op: OpDesc, alpha: *const c_void, beta: *const c_void, w: *const c_void) -> Status;
        fn miopenSetOpArgsBiasForward(args: Args, op: OpDesc, alpha: *const c_void, beta: *const c_void, bias: *const c_void) -> Status;
        fn miopenSetOpArgsActivForward(args: Args, op: OpDesc, alpha: *const c_void, beta: *const c_void, activ_alpha: c_double, activ_beta: c_double, activ_gamma: c_double) -> Status;
        fn miopenExecuteFusionPlan_v2(handle: Handle, plan: Plan, input_desc: TensorDesc, input: *const c_void, output_desc: TensorDesc, output: *mut c_void, args: Args, workspace: *mut c_void, workspace_size: usize) -> Status;
    }
}
