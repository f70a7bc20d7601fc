//! RAII descriptors and the typed MIOpen calls the plans make.
//!
//! [`Miopen`] is the plugin handle's state: the loaded [`Runtime`] and one MIOpen
//! handle, which MIOpen does not let two threads use at once, so calls that take it go
//! through [`Miopen::lock`]'s [`Bound`]. Descriptors keep an `Arc<Miopen>` and destroy
//! themselves on drop, so a plan owns exactly what it uses and the libraries outlive
//! it.
//!
//! Calls that take device memory are `unsafe`: the caller vouches that each pointer is
//! device memory of the handle's device, valid for the extent its descriptor
//! describes, and that nothing else writes it while the work runs.

use std::ffi::{c_int, c_void};
use std::sync::{Arc, Mutex, MutexGuard};

use super::load::Runtime;
use super::result::{MiopenError, check};
use super::sys::{self, *};

/// A MIOpen handle, owned.
#[derive(Debug)]
struct RawHandle(miopenHandle_t);

// SAFETY: a MIOpen handle may move between threads; it is only used under the mutex.
unsafe impl Send for RawHandle {}

/// The plugin handle's state: the libraries and one MIOpen handle.
#[derive(Debug)]
pub struct Miopen {
    /// HIP and MIOpen.
    pub runtime: Runtime,
    handle: Mutex<RawHandle>,
}

/// The MIOpen handle, locked for the calls of one plan step.
#[derive(Debug)]
pub struct Bound<'a> {
    api: &'a MiopenApi,
    handle: MutexGuard<'a, RawHandle>,
}

impl Miopen {
    /// Loads the libraries ([`Runtime::open`]) and creates a MIOpen handle on the
    /// default stream.
    ///
    /// # Errors
    /// Why this machine cannot run the engine, or the handle creation's error.
    pub fn open() -> Result<Arc<Self>, String> {
        let runtime = Runtime::open()?;
        let mut handle = std::ptr::null_mut();
        // SAFETY: a valid out-pointer; a null stream is the default stream.
        let status =
            unsafe { (runtime.miopen.miopenCreateWithStream)(&mut handle, std::ptr::null_mut()) };
        check(&runtime.miopen, status, "miopenCreateWithStream").map_err(|e| e.to_string())?;
        Ok(Arc::new(Self {
            runtime,
            handle: Mutex::new(RawHandle(handle)),
        }))
    }

    /// MIOpen's functions.
    pub fn api(&self) -> &MiopenApi {
        &self.runtime.miopen
    }

    /// The handle, for a sequence of calls.
    pub fn lock(&self) -> Bound<'_> {
        Bound {
            api: &self.runtime.miopen,
            handle: self.handle.lock().unwrap_or_else(|e| e.into_inner()),
        }
    }
}

impl Drop for Miopen {
    fn drop(&mut self) {
        let handle = self.handle.get_mut().unwrap_or_else(|e| e.into_inner()).0;
        if !handle.is_null() {
            // SAFETY: created by miopenCreateWithStream, destroyed once; every
            // descriptor holding an `Arc<Miopen>` is gone.
            let status = unsafe { (self.runtime.miopen.miopenDestroy)(handle) };
            if let Err(e) = check(&self.runtime.miopen, status, "miopenDestroy") {
                tracing::warn!("{e}");
            }
        }
    }
}

/// Converts a dimension, stride or parameter to MIOpen's `int`.
pub fn to_int(what: &str, v: i64) -> Result<c_int, String> {
    c_int::try_from(v).map_err(|_| format!("{what} {v} does not fit MIOpen's 32-bit int"))
}

/// Declares an RAII descriptor type.
macro_rules! descriptor {
    ($(#[$meta:meta])* $name:ident($raw:ty), $create:ident, $destroy:ident) => {
        $(#[$meta])*
        #[derive(Debug)]
        pub struct $name {
            miopen: Arc<Miopen>,
            raw: $raw,
        }

        // SAFETY: descriptors are plain host objects MIOpen never mutates behind our
        // back; they are only changed through `&mut self`.
        unsafe impl Send for $name {}
        // SAFETY: as above; shared use only reads them.
        unsafe impl Sync for $name {}

        impl $name {
            fn create(miopen: &Arc<Miopen>) -> Result<Self, MiopenError> {
                let mut raw = std::ptr::null_mut();
                // SAFETY: a valid out-pointer.
                let status = unsafe { (miopen.api().$create)(&mut raw) };
                check(miopen.api(), status, stringify!($create))?;
                Ok(Self { miopen: Arc::clone(miopen), raw })
            }

            /// The raw descriptor (valid while `self` lives).
            pub fn raw(&self) -> $raw {
                self.raw
            }
        }

        impl Drop for $name {
            fn drop(&mut self) {
                // SAFETY: created by the matching create call, destroyed once.
                let status = unsafe { (self.miopen.api().$destroy)(self.raw) };
                if let Err(e) = check(self.miopen.api(), status, stringify!($destroy)) {
                    tracing::warn!("{e}");
                }
            }
        }
    };
}

descriptor!(
    /// `miopenTensorDescriptor_t`.
    TensorDesc(miopenTensorDescriptor_t),
    miopenCreateTensorDescriptor,
    miopenDestroyTensorDescriptor
);
descriptor!(
    /// `miopenConvolutionDescriptor_t`.
    ConvDesc(miopenConvolutionDescriptor_t),
    miopenCreateConvolutionDescriptor,
    miopenDestroyConvolutionDescriptor
);
descriptor!(
    /// `miopenActivationDescriptor_t`.
    ActivationDesc(miopenActivationDescriptor_t),
    miopenCreateActivationDescriptor,
    miopenDestroyActivationDescriptor
);

impl TensorDesc {
    /// A tensor of `dtype` with these dims and strides (in elements).
    ///
    /// # Errors
    /// A dimension over `i32::MAX`, or MIOpen's refusal.
    pub fn new(
        miopen: &Arc<Miopen>,
        dtype: miopenDataType_t,
        dims: &[i64],
        strides: &[i64],
    ) -> Result<Self, String> {
        let dims = dims
            .iter()
            .map(|&d| to_int("dimension", d))
            .collect::<Result<Vec<_>, _>>()?;
        let strides = strides
            .iter()
            .map(|&s| to_int("stride", s))
            .collect::<Result<Vec<_>, _>>()?;
        let desc = Self::create(miopen).map_err(|e| e.to_string())?;
        // SAFETY: both arrays hold `dims.len()` ints.
        let status = unsafe {
            (miopen.api().miopenSetTensorDescriptor)(
                desc.raw,
                dtype,
                dims.len() as c_int,
                dims.as_ptr(),
                strides.as_ptr(),
            )
        };
        check(miopen.api(), status, "miopenSetTensorDescriptor").map_err(|e| e.to_string())?;
        Ok(desc)
    }
}

/// A convolution's geometry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConvGeometry {
    /// Symmetric padding per spatial dim.
    pub padding: Vec<i64>,
    /// Stride per spatial dim.
    pub stride: Vec<i64>,
    /// Dilation per spatial dim.
    pub dilation: Vec<i64>,
    /// Group count.
    pub groups: i64,
}

impl ConvDesc {
    /// A cross-correlation with `geometry`, restricted to deterministic kernels when
    /// `deterministic`.
    ///
    /// # Errors
    /// A parameter over `i32::MAX`, or MIOpen's refusal.
    pub fn new(
        miopen: &Arc<Miopen>,
        geometry: &ConvGeometry,
        deterministic: bool,
    ) -> Result<Self, String> {
        let ints = |what: &str, v: &[i64]| {
            v.iter()
                .map(|&x| to_int(what, x))
                .collect::<Result<Vec<_>, _>>()
        };
        let pad = ints("padding", &geometry.padding)?;
        let stride = ints("stride", &geometry.stride)?;
        let dilation = ints("dilation", &geometry.dilation)?;
        let desc = Self::create(miopen).map_err(|e| e.to_string())?;
        let api = miopen.api();
        // SAFETY: the three arrays hold `pad.len()` ints each.
        let status = unsafe {
            (api.miopenInitConvolutionNdDescriptor)(
                desc.raw,
                pad.len() as c_int,
                pad.as_ptr(),
                stride.as_ptr(),
                dilation.as_ptr(),
                miopenConvolutionMode_t::miopenConvolution,
            )
        };
        check(api, status, "miopenInitConvolutionNdDescriptor").map_err(|e| e.to_string())?;
        if geometry.groups != 1 {
            let groups = to_int("group count", geometry.groups)?;
            // SAFETY: a live descriptor.
            let status = unsafe { (api.miopenSetConvolutionGroupCount)(desc.raw, groups) };
            check(api, status, "miopenSetConvolutionGroupCount").map_err(|e| e.to_string())?;
        }
        if deterministic {
            // SAFETY: a live descriptor.
            let status = unsafe {
                (api.miopenSetConvolutionAttribute)(
                    desc.raw,
                    miopenConvolutionAttrib_t::MIOPEN_CONVOLUTION_ATTRIB_DETERMINISTIC,
                    1,
                )
            };
            check(api, status, "miopenSetConvolutionAttribute").map_err(|e| e.to_string())?;
        }
        Ok(desc)
    }
}

impl ActivationDesc {
    /// An activation of `mode` with MIOpen's `alpha`, `beta`, `gamma` parameters.
    ///
    /// # Errors
    /// MIOpen's refusal.
    pub fn new(miopen: &Arc<Miopen>, activation: Activation) -> Result<Self, MiopenError> {
        let desc = Self::create(miopen)?;
        // SAFETY: a live descriptor.
        let status = unsafe {
            (miopen.api().miopenSetActivationDescriptor)(
                desc.raw,
                activation.mode,
                activation.alpha,
                activation.beta,
                activation.gamma,
            )
        };
        check(miopen.api(), status, "miopenSetActivationDescriptor")?;
        Ok(desc)
    }
}

/// A MIOpen activation: its mode and parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Activation {
    /// The mode.
    pub mode: miopenActivationMode_t,
    /// `activAlpha`.
    pub alpha: f64,
    /// `activBeta`.
    pub beta: f64,
    /// `activGamma`.
    pub gamma: f64,
}

impl Activation {
    /// A mode with parameters.
    pub fn new(mode: miopenActivationMode_t, alpha: f64, beta: f64) -> Self {
        Self {
            mode,
            alpha,
            beta,
            gamma: 0.0,
        }
    }
}

/// The direction of a convolution.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConvDirection {
    /// `y = conv(x, w)`.
    Forward,
    /// `dx = conv_bwd_data(dy, w)`.
    BackwardData,
    /// `dw = conv_bwd_weights(dy, x)`.
    BackwardWeights,
}

/// The three tensors of a convolution problem, in the order MIOpen's immediate-mode
/// calls of each direction take them.
#[derive(Debug, Clone, Copy)]
pub struct ConvProblem<'a> {
    /// Direction.
    pub direction: ConvDirection,
    /// Forward: `w`; data gradient: `dy`; weight gradient: `dy`.
    pub a: &'a TensorDesc,
    /// Forward: `x`; data gradient: `w`; weight gradient: `x`.
    pub b: &'a TensorDesc,
    /// The convolution.
    pub conv: &'a ConvDesc,
    /// Forward: `y`; data gradient: `dx`; weight gradient: `dw` (the output).
    pub out: &'a TensorDesc,
}

impl Bound<'_> {
    fn raw(&self) -> miopenHandle_t {
        self.handle.0
    }

    fn check(&self, status: miopenStatus_t, call: &'static str) -> Result<(), MiopenError> {
        check(self.api, status, call)
    }

    /// `miopenSetStream`.
    ///
    /// # Safety
    /// `stream` is a HIP stream of the handle's device, or null.
    pub unsafe fn set_stream(&mut self, stream: hipStream_t) -> Result<(), MiopenError> {
        // SAFETY: a live handle; the caller vouches for the stream.
        let status = unsafe { (self.api.miopenSetStream)(self.raw(), stream) };
        self.check(status, "miopenSetStream")
    }

    /// The immediate-mode solutions of a convolution problem, best first.
    pub fn solutions(&self, p: &ConvProblem<'_>) -> Result<Vec<miopenConvSolution_t>, MiopenError> {
        let (h, a, b, c, o) = (self.raw(), p.a.raw(), p.b.raw(), p.conv.raw(), p.out.raw());
        let mut count = 0usize;
        // SAFETY: live descriptors and a valid out-pointer.
        let (status, call) = unsafe {
            match p.direction {
                ConvDirection::Forward => (
                    (self.api.miopenConvolutionForwardGetSolutionCount)(h, a, b, c, o, &mut count),
                    "miopenConvolutionForwardGetSolutionCount",
                ),
                ConvDirection::BackwardData => (
                    (self.api.miopenConvolutionBackwardDataGetSolutionCount)(
                        h, a, b, c, o, &mut count,
                    ),
                    "miopenConvolutionBackwardDataGetSolutionCount",
                ),
                ConvDirection::BackwardWeights => (
                    (self.api.miopenConvolutionBackwardWeightsGetSolutionCount)(
                        h, a, b, c, o, &mut count,
                    ),
                    "miopenConvolutionBackwardWeightsGetSolutionCount",
                ),
            }
        };
        self.check(status, call)?;
        let mut solutions = vec![
            miopenConvSolution_t {
                time: 0.0,
                workspace_size: 0,
                solution_id: 0,
                algorithm: miopenConvAlgorithm_t(0),
            };
            count
        ];
        let mut returned = 0usize;
        let out = solutions.as_mut_ptr();
        // SAFETY: `solutions` holds `count` entries; live descriptors.
        let (status, call) = unsafe {
            match p.direction {
                ConvDirection::Forward => (
                    (self.api.miopenConvolutionForwardGetSolution)(
                        h,
                        a,
                        b,
                        c,
                        o,
                        count,
                        &mut returned,
                        out,
                    ),
                    "miopenConvolutionForwardGetSolution",
                ),
                ConvDirection::BackwardData => (
                    (self.api.miopenConvolutionBackwardDataGetSolution)(
                        h,
                        a,
                        b,
                        c,
                        o,
                        count,
                        &mut returned,
                        out,
                    ),
                    "miopenConvolutionBackwardDataGetSolution",
                ),
                ConvDirection::BackwardWeights => (
                    (self.api.miopenConvolutionBackwardWeightsGetSolution)(
                        h,
                        a,
                        b,
                        c,
                        o,
                        count,
                        &mut returned,
                        out,
                    ),
                    "miopenConvolutionBackwardWeightsGetSolution",
                ),
            }
        };
        self.check(status, call)?;
        solutions.truncate(returned.min(count));
        Ok(solutions)
    }

    /// Compiles solution `id` of the problem.
    pub fn compile(&self, p: &ConvProblem<'_>, id: u64) -> Result<(), MiopenError> {
        let (h, a, b, c, o) = (self.raw(), p.a.raw(), p.b.raw(), p.conv.raw(), p.out.raw());
        // SAFETY: live descriptors.
        let (status, call) = unsafe {
            match p.direction {
                ConvDirection::Forward => (
                    (self.api.miopenConvolutionForwardCompileSolution)(h, a, b, c, o, id),
                    "miopenConvolutionForwardCompileSolution",
                ),
                ConvDirection::BackwardData => (
                    (self.api.miopenConvolutionBackwardDataCompileSolution)(h, a, b, c, o, id),
                    "miopenConvolutionBackwardDataCompileSolution",
                ),
                ConvDirection::BackwardWeights => (
                    (self.api.miopenConvolutionBackwardWeightsCompileSolution)(h, a, b, c, o, id),
                    "miopenConvolutionBackwardWeightsCompileSolution",
                ),
            }
        };
        self.check(status, call)
    }

    /// Runs solution `id` of the problem: `out = op(a, b)`.
    ///
    /// # Safety
    /// Device pointers valid for their descriptors (see the module docs); `workspace`
    /// valid for `workspace_size` bytes.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn run_conv(
        &self,
        p: &ConvProblem<'_>,
        id: u64,
        a: *const c_void,
        b: *const c_void,
        out: *mut c_void,
        workspace: *mut c_void,
        workspace_size: usize,
    ) -> Result<(), MiopenError> {
        let (h, ad, bd, c, od) = (self.raw(), p.a.raw(), p.b.raw(), p.conv.raw(), p.out.raw());
        let (ws, wn) = (workspace, workspace_size);
        // SAFETY: the caller vouches for the memory; live descriptors.
        let (status, call) = unsafe {
            match p.direction {
                ConvDirection::Forward => (
                    (self.api.miopenConvolutionForwardImmediate)(
                        h, ad, a, bd, b, c, od, out, ws, wn, id,
                    ),
                    "miopenConvolutionForwardImmediate",
                ),
                ConvDirection::BackwardData => (
                    (self.api.miopenConvolutionBackwardDataImmediate)(
                        h, ad, a, bd, b, c, od, out, ws, wn, id,
                    ),
                    "miopenConvolutionBackwardDataImmediate",
                ),
                ConvDirection::BackwardWeights => (
                    (self.api.miopenConvolutionBackwardWeightsImmediate)(
                        h, ad, a, bd, b, c, od, out, ws, wn, id,
                    ),
                    "miopenConvolutionBackwardWeightsImmediate",
                ),
            }
        };
        self.check(status, call)
    }

    /// MIOpen's Find for the problem (exhaustive search when `exhaustive`): it runs the
    /// candidate kernels on the given buffers and remembers their times, which later
    /// [`solutions`](Self::solutions) queries report. Returns the measured results.
    ///
    /// # Safety
    /// As [`run_conv`](Self::run_conv) (the output is overwritten).
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn find(
        &self,
        p: &ConvProblem<'_>,
        a: *const c_void,
        b: *mut c_void,
        out: *mut c_void,
        workspace: *mut c_void,
        workspace_size: usize,
        exhaustive: bool,
    ) -> Result<Vec<miopenConvAlgoPerf_t>, MiopenError> {
        const REQUEST: usize = 8;
        let mut results = [miopenConvAlgoPerf_t {
            algo: 0,
            time: 0.0,
            memory: 0,
        }; REQUEST];
        let mut returned: c_int = 0;
        let (h, ad, bd, c, od) = (self.raw(), p.a.raw(), p.b.raw(), p.conv.raw(), p.out.raw());
        let (ws, wn, r, n) = (
            workspace,
            workspace_size,
            results.as_mut_ptr(),
            REQUEST as c_int,
        );
        // Find takes the tensors in the cuDNN-like order (x, w for forward).
        // SAFETY: the caller vouches for the memory; `results` holds REQUEST entries.
        let (status, call) = unsafe {
            match p.direction {
                // REQUEST entries.
                ConvDirection::Forward => (
                    (self.api.miopenFindConvolutionForwardAlgorithm)(
                        h,
                        bd,
                        b,
                        ad,
                        a,
                        c,
                        od,
                        out,
                        n,
                        &mut returned,
                        r,
                        ws,
                        wn,
                        exhaustive,
                    ),
                    "miopenFindConvolutionForwardAlgorithm",
                ),
                ConvDirection::BackwardData => (
                    (self.api.miopenFindConvolutionBackwardDataAlgorithm)(
                        h,
                        ad,
                        a,
                        bd,
                        b,
                        c,
                        od,
                        out,
                        n,
                        &mut returned,
                        r,
                        ws,
                        wn,
                        exhaustive,
                    ),
                    "miopenFindConvolutionBackwardDataAlgorithm",
                ),
                ConvDirection::BackwardWeights => (
                    (self.api.miopenFindConvolutionBackwardWeightsAlgorithm)(
                        h,
                        ad,
                        a,
                        bd,
                        b,
                        c,
                        od,
                        out,
                        n,
                        &mut returned,
                        r,
                        ws,
                        wn,
                        exhaustive,
                    ),
                    "miopenFindConvolutionBackwardWeightsAlgorithm",
                ),
            }
        };
        self.check(status, call)?;
        Ok(results[..(returned.max(0) as usize).min(REQUEST)].to_vec())
    }

    /// `miopenActivationForward` with `alpha = 1, beta = 0`.
    ///
    /// # Safety
    /// Device pointers valid for their descriptors.
    pub unsafe fn activation(
        &self,
        desc: &ActivationDesc,
        x_desc: &TensorDesc,
        x: *const c_void,
        y_desc: &TensorDesc,
        y: *mut c_void,
    ) -> Result<(), MiopenError> {
        let (one, zero) = (1f32, 0f32);
        // SAFETY: the caller vouches for the memory; alpha and beta are host floats.
        let status = unsafe {
            (self.api.miopenActivationForward)(
                self.raw(),
                desc.raw(),
                (&raw const one).cast(),
                x_desc.raw(),
                x,
                (&raw const zero).cast(),
                y_desc.raw(),
                y,
            )
        };
        self.check(status, "miopenActivationForward")
    }

    /// `miopenOpTensor`: `c = op(alpha1·a, alpha2·b)` (beta = 0).
    ///
    /// # Safety
    /// Device pointers valid for their descriptors.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn op_tensor(
        &self,
        op: miopenTensorOp_t,
        alpha1: f32,
        a_desc: &TensorDesc,
        a: *const c_void,
        alpha2: f32,
        b_desc: &TensorDesc,
        b: *const c_void,
        c_desc: &TensorDesc,
        c: *mut c_void,
    ) -> Result<(), MiopenError> {
        let zero = 0f32;
        // SAFETY: the caller vouches for the memory; the scalars are host floats.
        let status = unsafe {
            (self.api.miopenOpTensor)(
                self.raw(),
                op,
                (&raw const alpha1).cast(),
                a_desc.raw(),
                a,
                (&raw const alpha2).cast(),
                b_desc.raw(),
                b,
                (&raw const zero).cast(),
                c_desc.raw(),
                c,
            )
        };
        self.check(status, "miopenOpTensor")
    }

    /// The raw handle and the functions, for the batch-norm calls (their argument
    /// lists are long and used once each: the plan calls them directly).
    pub fn raw_parts(&self) -> (miopenHandle_t, &MiopenApi) {
        (self.raw(), self.api)
    }

    /// `Ok` or the error of `call` (for calls made through [`raw_parts`](Self::raw_parts)).
    pub fn checked(&self, status: miopenStatus_t, call: &'static str) -> Result<(), MiopenError> {
        self.check(status, call)
    }
}

/// A fusion plan: convolution forward, optional bias, activation, compiled.
#[derive(Debug)]
pub struct FusionPlan {
    miopen: Arc<Miopen>,
    raw: miopenFusionPlanDescriptor_t,
    has_bias: bool,
}

// SAFETY: a compiled plan is only read after creation; execution goes through the
// locked handle.
unsafe impl Send for FusionPlan {}
// SAFETY: as above.
unsafe impl Sync for FusionPlan {}

impl FusionPlan {
    /// Creates and compiles `conv(x, w) [+ bias] → activation`.
    ///
    /// # Errors
    /// MIOpen's refusal (`miopenStatusUnsupportedOp` when it has no fused kernel).
    pub fn conv_bias_activation(
        bound: &Bound<'_>,
        miopen: &Arc<Miopen>,
        x: &TensorDesc,
        conv: &ConvDesc,
        w: &TensorDesc,
        bias: Option<&TensorDesc>,
        mode: miopenActivationMode_t,
    ) -> Result<Self, MiopenError> {
        let api = miopen.api();
        let mut raw = std::ptr::null_mut();
        // SAFETY: a valid out-pointer and a live descriptor.
        let status = unsafe {
            (api.miopenCreateFusionPlan)(
                &mut raw,
                miopenFusionDirection_t::miopenVerticalFusion,
                x.raw(),
            )
        };
        check(api, status, "miopenCreateFusionPlan")?;
        let plan = Self {
            miopen: Arc::clone(miopen),
            raw,
            has_bias: bias.is_some(),
        };
        let mut op = std::ptr::null_mut();
        // SAFETY: live plan and descriptors; `op` is an out-pointer (owned by the plan).
        let status =
            unsafe { (api.miopenCreateOpConvForward)(plan.raw, &mut op, conv.raw(), w.raw()) };
        check(api, status, "miopenCreateOpConvForward")?;
        if let Some(bias) = bias {
            // SAFETY: as above.
            let status = unsafe { (api.miopenCreateOpBiasForward)(plan.raw, &mut op, bias.raw()) };
            check(api, status, "miopenCreateOpBiasForward")?;
        }
        // SAFETY: as above.
        let status = unsafe { (api.miopenCreateOpActivationForward)(plan.raw, &mut op, mode) };
        check(api, status, "miopenCreateOpActivationForward")?;
        // SAFETY: a live handle and plan.
        let status = unsafe { (api.miopenCompileFusionPlan)(bound.raw(), plan.raw) };
        check(api, status, "miopenCompileFusionPlan")?;
        Ok(plan)
    }

    /// Binds the arguments and runs the plan: `y = act(conv(x, w) [+ bias])`.
    ///
    /// # Safety
    /// Device pointers valid for their descriptors; `workspace` for `workspace_size`.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn execute(
        &self,
        bound: &Bound<'_>,
        x_desc: &TensorDesc,
        x: *const c_void,
        w: *const c_void,
        bias: *const c_void,
        activation: Activation,
        y_desc: &TensorDesc,
        y: *mut c_void,
        workspace: *mut c_void,
        workspace_size: usize,
    ) -> Result<(), MiopenError> {
        let api = self.miopen.api();
        let mut args = std::ptr::null_mut();
        // SAFETY: a valid out-pointer.
        let status = unsafe { (api.miopenCreateOperatorArgs)(&mut args) };
        check(api, status, "miopenCreateOperatorArgs")?;
        let args = OperatorArgs { api, raw: args };
        let op = |index: c_int| {
            let mut op = std::ptr::null_mut();
            // SAFETY: a live plan; `index` is below its op count.
            let status = unsafe { (api.miopenFusionPlanGetOp)(self.raw, index, &mut op) };
            check(api, status, "miopenFusionPlanGetOp").map(|()| op)
        };
        let null = std::ptr::null::<c_void>();
        let conv_op = op(0)?;
        // SAFETY: live args and op; null alpha/beta mean 1 and 0; `w` is device memory.
        let status = unsafe { (api.miopenSetOpArgsConvForward)(args.raw, conv_op, null, null, w) };
        check(api, status, "miopenSetOpArgsConvForward")?;
        let mut next = 1;
        if self.has_bias {
            let bias_op = op(1)?;
            // SAFETY: as above.
            let status =
                unsafe { (api.miopenSetOpArgsBiasForward)(args.raw, bias_op, null, null, bias) };
            check(api, status, "miopenSetOpArgsBiasForward")?;
            next = 2;
        }
        let act_op = op(next)?;
        // SAFETY: as above.
        let status = unsafe {
            (api.miopenSetOpArgsActivForward)(
                args.raw,
                act_op,
                null,
                null,
                activation.alpha,
                activation.beta,
                activation.gamma,
            )
        };
        check(api, status, "miopenSetOpArgsActivForward")?;
        // SAFETY: the caller vouches for the memory; plan, args and descriptors live.
        let status = unsafe {
            (api.miopenExecuteFusionPlan_v2)(
                bound.raw(),
                self.raw,
                x_desc.raw(),
                x,
                y_desc.raw(),
                y,
                args.raw,
                workspace,
                workspace_size,
            )
        };
        check(api, status, "miopenExecuteFusionPlan_v2")
    }
}

impl Drop for FusionPlan {
    fn drop(&mut self) {
        // SAFETY: created by miopenCreateFusionPlan, destroyed once (its ops with it).
        let status = unsafe { (self.miopen.api().miopenDestroyFusionPlan)(self.raw) };
        if let Err(e) = check(self.miopen.api(), status, "miopenDestroyFusionPlan") {
            tracing::warn!("{e}");
        }
    }
}

/// `miopenOperatorArgs_t` for one execution.
struct OperatorArgs<'a> {
    api: &'a MiopenApi,
    raw: miopenOperatorArgs_t,
}

impl Drop for OperatorArgs<'_> {
    fn drop(&mut self) {
        // SAFETY: created by miopenCreateOperatorArgs, destroyed once.
        let status = unsafe { (self.api.miopenDestroyOperatorArgs)(self.raw) };
        if let Err(e) = check(self.api, status, "miopenDestroyOperatorArgs") {
            tracing::warn!("{e}");
        }
    }
}

/// Device memory from `hipMalloc`, freed on drop (plan-time scratch for Find).
#[derive(Debug)]
pub struct HipBuffer<'a> {
    hip: &'a sys::HipApi,
    ptr: *mut c_void,
}

impl<'a> HipBuffer<'a> {
    /// `len` bytes (at least one).
    ///
    /// # Errors
    /// `hipMalloc`'s error.
    pub fn new(hip: &'a sys::HipApi, len: usize) -> Result<Self, super::HipError> {
        let mut ptr = std::ptr::null_mut();
        // SAFETY: a valid out-pointer.
        let status = unsafe { (hip.hipMalloc)(&mut ptr, len.max(1)) };
        super::result::check_hip(hip, status, "hipMalloc")?;
        Ok(Self { hip, ptr })
    }

    /// The device address.
    pub fn ptr(&self) -> *mut c_void {
        self.ptr
    }
}

impl Drop for HipBuffer<'_> {
    fn drop(&mut self) {
        // SAFETY: from hipMalloc, freed once; the work using it was synchronous.
        let status = unsafe { (self.hip.hipFree)(self.ptr) };
        if let Err(e) = super::result::check_hip(self.hip, status, "hipFree") {
            tracing::warn!("{e}");
        }
    }
}
