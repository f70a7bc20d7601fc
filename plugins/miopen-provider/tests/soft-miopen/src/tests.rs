//! The exports called directly, as a caller of MIOpen and HIP would.
//!
//! The library's state (allocations, call log) is process-wide, so every test holds
//! [`serial`] for its whole run.

use std::ffi::{CStr, c_int, c_void};
use std::ptr::{null, null_mut};
use std::sync::{Mutex, MutexGuard};

use hipdnn_data_sdk::DataType;
use hipdnn_reference::data::{DataGen, decode, encode};
use hipdnn_reference::kernels::{
    ConvParams, RunningStats, batchnorm_backward, batchnorm_training, conv_dgrad, conv_fprop,
    conv_wgrad,
};
use hipdnn_reference::tensor::{HostTensor, layout_strides, row_major_strides};

use crate::batchnorm::*;
use crate::conv::*;
use crate::descriptors::*;
use crate::fusion::*;
use crate::hip::*;
use crate::log::take_call_log;
use crate::pointwise::*;
use crate::sys::*;

static SERIAL: Mutex<()> = Mutex::new(());

/// Serialises the tests and clears the call log.
fn serial() -> MutexGuard<'static, ()> {
    let guard = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    take_call_log();
    guard
}

#[track_caller]
fn ok(s: miopenStatus_t) {
    assert_eq!(
        s,
        miopenStatus_t::miopenStatusSuccess,
        "log:\n{}",
        take_call_log()
    );
}

#[track_caller]
fn hip_ok(e: hipError_t) {
    assert_eq!(e, hipError_t::hipSuccess, "log:\n{}", take_call_log());
}

fn dtype_of(d: miopenDataType_t) -> DataType {
    match d {
        miopenDataType_t::miopenHalf => DataType::Half,
        miopenDataType_t::miopenBFloat16 => DataType::Bfloat16,
        _ => DataType::Float,
    }
}

fn handle() -> miopenHandle_t {
    let mut h = null_mut();
    // SAFETY: a valid out-pointer; null stream.
    ok(unsafe { miopenCreateWithStream(&mut h, null_mut()) });
    h
}

fn tensor(dtype: miopenDataType_t, dims: &[usize], strides: &[usize]) -> miopenTensorDescriptor_t {
    let mut d = null_mut();
    let dims: Vec<c_int> = dims.iter().map(|&v| v as c_int).collect();
    let strides: Vec<c_int> = strides.iter().map(|&v| v as c_int).collect();
    // SAFETY: valid pointers, `nbDims` ints each.
    unsafe {
        ok(miopenCreateTensorDescriptor(&mut d));
        ok(miopenSetTensorDescriptor(
            d,
            dtype,
            dims.len() as c_int,
            dims.as_ptr(),
            strides.as_ptr(),
        ));
    }
    d
}

fn packed(dtype: miopenDataType_t, dims: &[usize]) -> miopenTensorDescriptor_t {
    tensor(dtype, dims, &row_major_strides(dims))
}

fn malloc(len: usize) -> *mut c_void {
    let mut p = null_mut();
    // SAFETY: a valid out-pointer.
    hip_ok(unsafe { hipMalloc(&mut p, len) });
    p
}

/// A device copy of `t` in `dtype` (laid out by `t`'s strides).
fn upload(dtype: miopenDataType_t, t: &HostTensor) -> *mut c_void {
    let bytes = encode(dtype_of(dtype), t).unwrap();
    let p = malloc(bytes.len());
    // SAFETY: `p` holds `bytes.len()` bytes.
    hip_ok(unsafe {
        hipMemcpy(
            p,
            bytes.as_ptr().cast(),
            bytes.len(),
            hipMemcpyKind::hipMemcpyHostToDevice,
        )
    });
    p
}

fn download(
    dtype: miopenDataType_t,
    dims: &[usize],
    strides: &[usize],
    p: *const c_void,
) -> HostTensor {
    let len = hipdnn_reference::data::byte_len(dtype_of(dtype), dims, strides).unwrap();
    let mut bytes = vec![0u8; len];
    // SAFETY: `bytes` holds `len` bytes.
    hip_ok(unsafe {
        hipMemcpy(
            bytes.as_mut_ptr().cast(),
            p,
            len,
            hipMemcpyKind::hipMemcpyDeviceToHost,
        )
    });
    decode(dtype_of(dtype), &bytes, dims, strides).unwrap()
}

fn random(dims: &[usize], strides: &[usize], seed: u64, dtype: miopenDataType_t) -> HostTensor {
    let mut t = HostTensor::zeros(dims.to_vec(), strides.to_vec());
    DataGen::new(seed).fill_as(&mut t, -1.0, 1.0, dtype_of(dtype));
    t
}

fn conv_desc(pad: &[c_int], stride: &[c_int], dil: &[c_int]) -> miopenConvolutionDescriptor_t {
    let mut c = null_mut();
    // SAFETY: valid pointers, `spatialDim` ints each.
    unsafe {
        ok(miopenCreateConvolutionDescriptor(&mut c));
        ok(miopenInitConvolutionNdDescriptor(
            c,
            pad.len() as c_int,
            pad.as_ptr(),
            stride.as_ptr(),
            dil.as_ptr(),
            miopenConvolutionMode_t::miopenConvolution,
        ));
    }
    c
}

fn activation(
    mode: miopenActivationMode_t,
    a: f64,
    b: f64,
    g: f64,
) -> miopenActivationDescriptor_t {
    let mut d = null_mut();
    // SAFETY: a valid out-pointer.
    unsafe {
        ok(miopenCreateActivationDescriptor(&mut d));
        ok(miopenSetActivationDescriptor(d, mode, a, b, g));
    }
    d
}

#[track_caller]
fn assert_close(got: &[f32], want: &[f32], tol: f32) {
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= tol * (1.0 + w.abs()),
            "element {i}: {g} vs {w}"
        );
    }
}

fn ptr<T>(v: &T) -> *const c_void {
    (v as *const T).cast()
}

const ONE: f32 = 1.0;
const ZERO: f32 = 0.0;

// ---------------------------------------------------------------------------------
// Memory
// ---------------------------------------------------------------------------------

#[test]
fn memory_is_checked_against_the_allocations() {
    let _g = serial();
    let p = malloc(100);
    assert_eq!(p as usize % 256, 0);
    // SAFETY: 100 bytes were allocated at `p`.
    let fresh = unsafe { std::slice::from_raw_parts(p.cast::<u8>(), 100) };
    assert!(fresh.iter().all(|&b| b == 0xCD), "filled with garbage");

    let src = [7u8; 128];
    let mut dst = [0u8; 128];
    // SAFETY: every call below passes host buffers of the sizes given; device pointers
    // are what is being checked.
    unsafe {
        hip_ok(hipMemcpy(
            p,
            src.as_ptr().cast(),
            100,
            hipMemcpyKind::hipMemcpyHostToDevice,
        ));
        // Past the end of the allocation.
        assert_eq!(
            hipMemcpy(
                p,
                src.as_ptr().cast(),
                101,
                hipMemcpyKind::hipMemcpyHostToDevice
            ),
            hipError_t::hipErrorInvalidValue
        );
        assert_eq!(
            hipMemcpy(
                p.cast::<u8>().add(50).cast(),
                src.as_ptr().cast(),
                51,
                hipMemcpyKind::hipMemcpyHostToDevice
            ),
            hipError_t::hipErrorInvalidValue
        );
        // A host pointer where device memory is needed.
        assert_eq!(
            hipMemcpy(
                dst.as_mut_ptr().cast(),
                src.as_ptr().cast(),
                4,
                hipMemcpyKind::hipMemcpyDeviceToHost
            ),
            hipError_t::hipErrorInvalidValue
        );
        // Device memory where host memory is promised.
        assert_eq!(
            hipMemcpy(
                dst.as_mut_ptr().cast(),
                p,
                4,
                hipMemcpyKind::hipMemcpyHostToHost
            ),
            hipError_t::hipErrorInvalidMemcpyDirection
        );
        assert_eq!(
            hipMemcpy(p, src.as_ptr().cast(), 4, hipMemcpyKind(9)),
            hipError_t::hipErrorInvalidMemcpyDirection
        );
        let q = malloc(64);
        hip_ok(hipMemcpy(q, p, 64, hipMemcpyKind::hipMemcpyDeviceToDevice));
        hip_ok(hipMemcpy(
            dst.as_mut_ptr().cast(),
            q,
            64,
            hipMemcpyKind::hipMemcpyDefault,
        ));
        assert!(dst[..64].iter().all(|&b| b == 7));
        // Frees: interior pointers, unknown pointers and double frees fail; null is fine.
        assert_eq!(
            hipFree(p.cast::<u8>().add(1).cast()),
            hipError_t::hipErrorInvalidValue
        );
        assert_eq!(
            hipFree(dst.as_mut_ptr().cast()),
            hipError_t::hipErrorInvalidValue
        );
        hip_ok(hipFree(p));
        assert_eq!(hipFree(p), hipError_t::hipErrorInvalidValue);
        hip_ok(hipFree(null_mut()));
        hip_ok(hipFree(q));
        let mut z = p;
        hip_ok(hipMalloc(&mut z, 0));
        assert!(z.is_null());
        assert_eq!(hipMalloc(null_mut(), 8), hipError_t::hipErrorInvalidValue);
    }
    let log = take_call_log();
    assert!(log.contains("hipFree(@"), "{log}");
    assert!(log.contains("-> hipErrorInvalidValue: dst (@"), "{log}");
}

#[test]
fn versions_devices_streams_events_and_error_strings() {
    let _g = serial();
    let (mut n, mut v) = (0, 0);
    let (mut major, mut minor) = (0usize, 0usize);
    // SAFETY: valid out-pointers; error strings are static.
    unsafe {
        hip_ok(hipGetDeviceCount(&mut n));
        hip_ok(hipRuntimeGetVersion(&mut v));
        ok(miopenGetVersion(&mut major, &mut minor, null_mut()));
        assert_eq!(
            CStr::from_ptr(hipGetErrorString(hipError_t::hipErrorNoDevice)),
            c"hipErrorNoDevice"
        );
        assert_eq!(
            CStr::from_ptr(hipGetErrorString(hipError_t(12345))),
            c"hipErrorUnknown"
        );
        assert_eq!(
            CStr::from_ptr(miopenGetErrorString(
                miopenStatus_t::miopenStatusUnsupportedOp
            )),
            c"miopenStatusUnsupportedOp"
        );
        let mut s = null_mut();
        hip_ok(hipStreamCreate(&mut s));
        let mut h = null_mut();
        ok(miopenCreateWithStream(&mut h, s));
        hip_ok(hipStreamSynchronize(s));
        let (mut a, mut b) = (null_mut(), null_mut());
        hip_ok(hipEventCreate(&mut a));
        hip_ok(hipEventCreate(&mut b));
        let mut ms = -1.0;
        assert_eq!(hipEventElapsedTime(&mut ms, a, b).0, 400, "not recorded");
        hip_ok(hipEventRecord(a, s));
        hip_ok(hipEventRecord(b, null_mut()));
        hip_ok(hipEventSynchronize(b));
        hip_ok(hipEventElapsedTime(&mut ms, a, b));
        assert!(ms >= 0.0);
        hip_ok(hipEventDestroy(a));
        hip_ok(hipEventDestroy(b));
        ok(miopenDestroy(h));
        hip_ok(hipStreamDestroy(s));
        assert_eq!(hipStreamSynchronize(s).0, 400);
        assert_eq!(
            miopenCreateWithStream(&mut h, s),
            miopenStatus_t::miopenStatusBadParm
        );
    }
    assert_eq!((n, v), (1, HIP_RUNTIME_VERSION));
    assert_eq!((major, minor), (3, 5));
    let log = take_call_log();
    assert!(log.contains("hipStreamCreate() = S"), "{log}");
    assert!(log.contains("hipEventRecord(E"), "{log}");
    assert!(log.contains("miopenGetVersion() = 3.5.0"), "{log}");
}

// ---------------------------------------------------------------------------------
// Convolution
// ---------------------------------------------------------------------------------

struct ConvCase {
    x: HostTensor,
    w: HostTensor,
    y_dims: Vec<usize>,
    y_strides: Vec<usize>,
    p: ConvParams,
    pad: Vec<c_int>,
    stride: Vec<c_int>,
}

fn conv_case(layout: hipdnn_data_sdk::TensorLayout, dtype: miopenDataType_t) -> ConvCase {
    let (xd, wd) = ([2, 4, 7, 7], [6, 4, 3, 3]);
    let p = ConvParams::new(2).padding(1).stride(2);
    let y_dims = p.output_dims(&xd, &wd).unwrap();
    ConvCase {
        x: random(&xd, &layout_strides(&xd, layout), 1, dtype),
        w: random(&wd, &layout_strides(&wd, layout), 2, dtype),
        y_strides: layout_strides(&y_dims, layout),
        y_dims,
        p,
        pad: vec![1, 1],
        stride: vec![2, 2],
    }
}

/// Runs a forward convolution through GetSolution → Compile → Immediate and returns y.
fn fprop(c: &ConvCase, dtype: miopenDataType_t) -> HostTensor {
    let h = handle();
    let xd = tensor(dtype, &c.x.dims, &c.x.strides);
    let wd = tensor(dtype, &c.w.dims, &c.w.strides);
    let yd = tensor(dtype, &c.y_dims, &c.y_strides);
    let conv = conv_desc(&c.pad, &c.stride, &[1, 1]);
    let (x, w) = (upload(dtype, &c.x), upload(dtype, &c.w));
    let y =
        malloc(hipdnn_reference::data::byte_len(dtype_of(dtype), &c.y_dims, &c.y_strides).unwrap());
    let mut n = 0;
    let mut sols = [miopenConvSolution_t {
        time: 0.0,
        workspace_size: 0,
        solution_id: 0,
        algorithm: miopenConvAlgorithm_t(0),
    }; 4];
    // SAFETY: valid descriptors, buffers and out-pointers.
    unsafe {
        ok(miopenConvolutionForwardGetSolutionCount(
            h, wd, xd, conv, yd, &mut n,
        ));
        assert_eq!(n, 3);
        ok(miopenConvolutionForwardGetSolution(
            h,
            wd,
            xd,
            conv,
            yd,
            4,
            &mut n,
            sols.as_mut_ptr(),
        ));
        assert_eq!(n, 3);
        assert_eq!(
            sols[0].algorithm,
            miopenConvAlgorithm_t::miopenConvolutionAlgoGEMM
        );
        assert!(sols[0].time <= sols[1].time && sols[1].time <= sols[2].time);
        let s = sols[0];
        assert_eq!(s.workspace_size, 4 * 2 * 4 * 7 * 7);
        ok(miopenConvolutionForwardCompileSolution(
            h,
            wd,
            xd,
            conv,
            yd,
            s.solution_id,
        ));
        let ws = malloc(s.workspace_size);
        ok(miopenConvolutionForwardImmediate(
            h,
            wd,
            w,
            xd,
            x,
            conv,
            yd,
            y,
            ws,
            s.workspace_size,
            s.solution_id,
        ));
    }
    download(dtype, &c.y_dims, &c.y_strides, y)
}

#[test]
fn conv_fprop_matches_the_reference() {
    let _g = serial();
    let c = conv_case(
        hipdnn_data_sdk::TensorLayout::Nchw,
        miopenDataType_t::miopenFloat,
    );
    let got = fprop(&c, miopenDataType_t::miopenFloat);
    let mut want = HostTensor::packed(c.y_dims.clone());
    conv_fprop(&c.x, &c.w, &mut want, &c.p).unwrap();
    assert_eq!(got.logical(), want.logical());
}

#[test]
fn conv_fprop_reads_and_writes_nhwc_strides_in_half() {
    let _g = serial();
    let dt = miopenDataType_t::miopenHalf;
    let c = conv_case(hipdnn_data_sdk::TensorLayout::Nhwc, dt);
    assert_ne!(c.x.strides, row_major_strides(&c.x.dims));
    let got = fprop(&c, dt);
    let mut want = HostTensor::packed(c.y_dims.clone());
    conv_fprop(&c.x, &c.w, &mut want, &c.p).unwrap();
    let want: Vec<f32> = want
        .logical()
        .iter()
        .map(|&v| half::f16::from_f32(v).to_f32())
        .collect();
    assert_eq!(got.logical(), want);
    let log = take_call_log();
    assert!(log.contains("T(half,[2,4,7,7],[196,1,28,4])"), "{log}");
}

#[test]
fn conv_gradients_match_the_reference_and_find_reorders_solutions() {
    let _g = serial();
    let dt = miopenDataType_t::miopenFloat;
    let c = conv_case(hipdnn_data_sdk::TensorLayout::Nchw, dt);
    let dy = random(&c.y_dims, &c.y_strides, 3, dt);
    let h = handle();
    let xd = tensor(dt, &c.x.dims, &c.x.strides);
    let wd = tensor(dt, &c.w.dims, &c.w.strides);
    let yd = tensor(dt, &c.y_dims, &c.y_strides);
    let conv = conv_desc(&c.pad, &c.stride, &[1, 1]);
    let (x, w, dyp) = (upload(dt, &c.x), upload(dt, &c.w), upload(dt, &dy));
    let dx = malloc(4 * c.x.data.len());
    let dw = malloc(4 * c.w.data.len());
    let blank = miopenConvSolution_t {
        time: 0.0,
        workspace_size: 0,
        solution_id: 0,
        algorithm: miopenConvAlgorithm_t(0),
    };
    let mut sols = [blank; 3];
    let mut n = 0;
    // SAFETY: valid descriptors, buffers and out-pointers.
    unsafe {
        // Backward data with Direct (no workspace).
        ok(miopenConvolutionBackwardDataCompileSolution(
            h, yd, wd, conv, xd, 2,
        ));
        ok(miopenConvolutionBackwardDataImmediate(
            h,
            yd,
            dyp,
            wd,
            w,
            conv,
            xd,
            dx,
            null_mut(),
            0,
            2,
        ));

        // Backward weights: GEMM first by heuristics; a Find reorders (Direct first).
        ok(miopenConvolutionBackwardWeightsGetSolution(
            h,
            yd,
            xd,
            conv,
            wd,
            3,
            &mut n,
            sols.as_mut_ptr(),
        ));
        assert_eq!(sols[0].solution_id, 1);
        let mut perf = [miopenConvAlgoPerf_t {
            algo: -1,
            time: 0.0,
            memory: 0,
        }; 3];
        let mut returned = 0;
        let ws = malloc(1 << 16);
        ok(miopenFindConvolutionBackwardWeightsAlgorithm(
            h,
            yd,
            dyp,
            xd,
            x,
            conv,
            wd,
            dw,
            3,
            &mut returned,
            perf.as_mut_ptr(),
            ws,
            1 << 16,
            true,
        ));
        assert_eq!(returned, 3);
        assert_eq!(
            perf[0].algo,
            miopenConvAlgorithm_t::miopenConvolutionAlgoDirect.0
        );
        ok(miopenConvolutionBackwardWeightsGetSolution(
            h,
            yd,
            xd,
            conv,
            wd,
            3,
            &mut n,
            sols.as_mut_ptr(),
        ));
        assert_eq!((n, sols[0].solution_id), (3, 2));
        ok(miopenConvolutionBackwardWeightsCompileSolution(
            h, yd, xd, conv, wd, 2,
        ));
        ok(miopenConvolutionBackwardWeightsImmediate(
            h,
            yd,
            dyp,
            xd,
            x,
            conv,
            wd,
            dw,
            null_mut(),
            0,
            2,
        ));

        // Deterministic: only Direct is listed for backward weights.
        ok(miopenSetConvolutionAttribute(
            conv,
            miopenConvolutionAttrib_t::MIOPEN_CONVOLUTION_ATTRIB_DETERMINISTIC,
            1,
        ));
        ok(miopenConvolutionBackwardWeightsGetSolutionCount(
            h, yd, xd, conv, wd, &mut n,
        ));
        assert_eq!(n, 1);
        ok(miopenConvolutionForwardGetSolutionCount(
            h, wd, xd, conv, yd, &mut n,
        ));
        assert_eq!(n, 3);
    }
    let mut want_dx = HostTensor::packed(c.x.dims.clone());
    conv_dgrad(&dy, &c.w, &mut want_dx, &c.p).unwrap();
    assert_eq!(
        download(dt, &c.x.dims, &c.x.strides, dx).logical(),
        want_dx.logical()
    );
    let mut want_dw = HostTensor::packed(c.w.dims.clone());
    conv_wgrad(&c.x, &dy, &mut want_dw, &c.p).unwrap();
    assert_eq!(
        download(dt, &c.w.dims, &c.w.strides, dw).logical(),
        want_dw.logical()
    );
    let log = take_call_log();
    assert!(
        log.contains("exhaustive=true) = [Direct(time=0.5,mem=0)"),
        "{log}"
    );
}

#[test]
fn conv_failures_are_loud() {
    let _g = serial();
    let dt = miopenDataType_t::miopenFloat;
    let h = handle();
    let xd = packed(dt, &[1, 4, 8, 8]);
    let wd = packed(dt, &[6, 4, 3, 3]);
    let yd = packed(dt, &[1, 6, 8, 8]);
    let bad_y = packed(dt, &[1, 6, 6, 6]);
    let conv = conv_desc(&[1, 1], &[1, 1], &[1, 1]);
    let (x, w, y) = (malloc(4 * 256), malloc(4 * 216), malloc(4 * 384));
    let ws = malloc(64);
    let mut n = 0;
    let bad = miopenStatus_t::miopenStatusBadParm;
    // SAFETY: valid pointers; what is wrong is what is being checked.
    unsafe {
        // Wrong output dims, named.
        assert_eq!(
            miopenConvolutionForwardGetSolutionCount(h, wd, xd, conv, bad_y, &mut n),
            bad
        );
        // Immediate without a compile.
        assert_eq!(
            miopenConvolutionForwardImmediate(h, wd, w, xd, x, conv, yd, y, null_mut(), 0, 2),
            bad
        );
        // GEMM needs 4·256 bytes of workspace.
        ok(miopenConvolutionForwardCompileSolution(
            h, wd, xd, conv, yd, 1,
        ));
        assert_eq!(
            miopenConvolutionForwardImmediate(h, wd, w, xd, x, conv, yd, y, ws, 64, 1),
            bad
        );
        // A workspace size larger than its allocation.
        assert_eq!(
            miopenConvolutionForwardImmediate(h, wd, w, xd, x, conv, yd, y, ws, 4096, 1),
            bad
        );
        // An id the problem does not list.
        assert_eq!(
            miopenConvolutionForwardCompileSolution(h, wd, xd, conv, yd, 77),
            bad
        );
        // A too-small data buffer.
        ok(miopenConvolutionForwardCompileSolution(
            h, wd, xd, conv, yd, 2,
        ));
        assert_eq!(
            miopenConvolutionForwardImmediate(h, wd, w, xd, ws, conv, yd, y, null_mut(), 0, 2),
            bad
        );
        // Descriptor settings refused.
        let mut c1 = null_mut();
        ok(miopenCreateConvolutionDescriptor(&mut c1));
        let one = [1];
        assert_eq!(
            miopenInitConvolutionNdDescriptor(
                c1,
                1,
                one.as_ptr(),
                one.as_ptr(),
                one.as_ptr(),
                miopenConvolutionMode_t::miopenConvolution
            ),
            miopenStatus_t::miopenStatusNotImplemented
        );
        let two = [1, 1];
        assert_eq!(
            miopenInitConvolutionNdDescriptor(
                c1,
                2,
                two.as_ptr(),
                two.as_ptr(),
                two.as_ptr(),
                miopenConvolutionMode_t::miopenTranspose
            ),
            miopenStatus_t::miopenStatusNotImplemented
        );
        assert_eq!(
            miopenConvolutionForwardGetSolutionCount(h, wd, xd, c1, yd, &mut n),
            bad
        );
        assert_eq!(miopenSetConvolutionGroupCount(c1, 0), bad);
        assert_eq!(
            miopenSetConvolutionAttribute(c1, miopenConvolutionAttrib_t(7), 1),
            bad
        );
        // A destroyed descriptor.
        ok(miopenDestroyTensorDescriptor(yd));
        assert_eq!(
            miopenConvolutionForwardGetSolutionCount(h, wd, xd, conv, yd, &mut n),
            bad
        );
        assert_eq!(miopenDestroyTensorDescriptor(yd), bad);
        // Something that is not a tensor descriptor at all.
        assert_eq!(
            miopenConvolutionForwardGetSolutionCount(h, wd, conv.cast(), conv, bad_y, &mut n),
            bad
        );
    }
    let log = take_call_log();
    for needle in [
        "-> miopenStatusBadParm: yDesc has dims [1, 6, 6, 6] but the convolution",
        "was not compiled for this problem",
        "workspace of 64 bytes is smaller than the 1024 bytes solution 1 (GEMM) needs",
        "workspace (@",
        "solution 77 is not listed",
        "x (@",
        "-> miopenStatusNotImplemented: spatialDim 1",
        "yDesc is a tensor descriptor that was destroyed",
        "xDesc is a convolution descriptor, not a tensor descriptor",
    ] {
        assert!(log.contains(needle), "{needle:?} not in\n{log}");
    }
}

// ---------------------------------------------------------------------------------
// Activation and OpTensor
// ---------------------------------------------------------------------------------

#[test]
fn activation_modes_and_blending() {
    let _g = serial();
    let dt = miopenDataType_t::miopenFloat;
    let h = handle();
    let xs = [-2.0f32, -0.5, 0.0, 0.5, 2.0];
    let x = upload(dt, &HostTensor::from_vec([5], &xs));
    let d = packed(dt, &[5]);
    let y = malloc(20);
    use miopenActivationMode_t as M;
    let cases: [(M, f64, f64, f64, [f32; 5]); 5] = [
        (
            M::miopenActivationRELU,
            0.0,
            0.0,
            0.0,
            [0.0, 0.0, 0.0, 0.5, 2.0],
        ),
        (
            M::miopenActivationCLAMP,
            -1.0,
            1.0,
            0.0,
            [-1.0, -0.5, 0.0, 0.5, 1.0],
        ),
        (
            M::miopenActivationCLIPPEDRELU,
            1.0,
            0.0,
            0.0,
            [0.0, 0.0, 0.0, 0.5, 1.0],
        ),
        (
            M::miopenActivationLEAKYRELU,
            0.1,
            0.0,
            0.0,
            [-0.2, -0.05, 0.0, 0.5, 2.0],
        ),
        (
            M::miopenActivationPOWER,
            1.0,
            2.0,
            2.0,
            [9.0, 0.0, 1.0, 4.0, 25.0],
        ),
    ];
    for (mode, a, b, g, want) in cases {
        let act = activation(mode, a, b, g);
        // Garbage (NaN) in y must not leak when beta is 0.
        let nan = HostTensor::from_vec([5], &[f32::NAN; 5]);
        let nan_bytes = encode(DataType::Float, &nan).unwrap();
        // SAFETY: valid descriptors and buffers of 5 floats.
        unsafe {
            hip_ok(hipMemcpy(
                y,
                nan_bytes.as_ptr().cast(),
                20,
                hipMemcpyKind::hipMemcpyHostToDevice,
            ));
            ok(miopenActivationForward(
                h,
                act,
                ptr(&ONE),
                d,
                x,
                ptr(&ZERO),
                d,
                y,
            ));
        }
        assert_close(&download(dt, &[5], &[1], y).logical(), &want, 1e-6);
    }
    // y = 2·relu(x) + 0.5·y_old.
    let act = activation(M::miopenActivationRELU, 0.0, 0.0, 0.0);
    let (two, half) = (2.0f32, 0.5f32);
    // SAFETY: as above; `y` holds the POWER results.
    unsafe {
        ok(miopenActivationForward(
            h,
            act,
            ptr(&two),
            d,
            x,
            ptr(&half),
            d,
            y,
        ))
    };
    assert_close(
        &download(dt, &[5], &[1], y).logical(),
        &[4.5, 0.0, 0.5, 3.0, 16.5],
        1e-6,
    );
    // SAFETY: as above; the failures are what is checked.
    unsafe {
        let mut a = null_mut();
        ok(miopenCreateActivationDescriptor(&mut a));
        assert_eq!(
            miopenSetActivationDescriptor(a, M(42), 0.0, 0.0, 0.0),
            miopenStatus_t::miopenStatusBadParm
        );
        assert_eq!(
            miopenActivationForward(h, a, ptr(&ONE), d, x, ptr(&ZERO), d, y),
            miopenStatus_t::miopenStatusBadParm
        );
        assert_eq!(
            miopenActivationForward(h, act, null(), d, x, ptr(&ZERO), d, y),
            miopenStatus_t::miopenStatusBadParm
        );
    }
    let log = take_call_log();
    assert!(
        log.contains("miopenActivationForward(handle, A(CLAMP,-1,1,0), 1, T(float,[5],[1]), @"),
        "{log}"
    );
    assert!(
        log.contains("unknown activation mode miopenActivationMode_t(42)"),
        "{log}"
    );
    assert!(log.contains("activDesc was never set"), "{log}");
}

#[test]
fn op_tensor_broadcasts_only_b() {
    let _g = serial();
    let dt = miopenDataType_t::miopenFloat;
    let h = handle();
    let a_t = random(&[2, 3, 2, 2], &row_major_strides(&[2, 3, 2, 2]), 5, dt);
    let b_t = HostTensor::from_vec([1, 3, 1, 1], &[1.0, -2.0, 3.0]);
    let (a, b) = (upload(dt, &a_t), upload(dt, &b_t));
    let (ad, bd) = (packed(dt, &[2, 3, 2, 2]), packed(dt, &[1, 3, 1, 1]));
    let c = malloc(4 * 24);
    let minus = -1.0f32;
    // SAFETY: valid descriptors and buffers.
    unsafe {
        ok(miopenOpTensor(
            h,
            miopenTensorOp_t::miopenTensorOpAdd,
            ptr(&ONE),
            ad,
            a,
            ptr(&minus),
            bd,
            b,
            ptr(&ZERO),
            ad,
            c,
        ));
    }
    let got = download(dt, &[2, 3, 2, 2], &row_major_strides(&[2, 3, 2, 2]), c);
    let mut want = Vec::new();
    hipdnn_reference::tensor::for_each_index(&[2, 3, 2, 2], |i| {
        want.push(a_t.at(i) - b_t.at(&[0, i[1], 0, 0]));
    });
    assert_eq!(got.logical(), want);
    // C = max(A, B) + 1·C.
    // SAFETY: as above.
    unsafe {
        ok(miopenOpTensor(
            h,
            miopenTensorOp_t::miopenTensorOpMax,
            ptr(&ONE),
            ad,
            a,
            ptr(&ONE),
            bd,
            b,
            ptr(&ONE),
            ad,
            c,
        ));
    }
    let got2 = download(dt, &[2, 3, 2, 2], &row_major_strides(&[2, 3, 2, 2]), c);
    let mut k = 0;
    hipdnn_reference::tensor::for_each_index(&[2, 3, 2, 2], |i| {
        let m = a_t.at(i).max(b_t.at(&[0, i[1], 0, 0]));
        assert!((got2.at(i) - (m + want[k])).abs() < 1e-6);
        k += 1;
    });
    let bad = miopenStatus_t::miopenStatusBadParm;
    let b_wrong = packed(dt, &[1, 3, 3, 1]);
    let b_rank = packed(dt, &[3, 1, 1]);
    let c_small = packed(dt, &[1, 3, 2, 2]);
    // SAFETY: as above; the failures are what is checked.
    unsafe {
        let add = miopenTensorOp_t::miopenTensorOpAdd;
        assert_eq!(
            miopenOpTensor(
                h,
                add,
                ptr(&ONE),
                ad,
                a,
                ptr(&ONE),
                b_wrong,
                b,
                ptr(&ZERO),
                ad,
                c
            ),
            bad
        );
        assert_eq!(
            miopenOpTensor(
                h,
                add,
                ptr(&ONE),
                ad,
                a,
                ptr(&ONE),
                b_rank,
                b,
                ptr(&ZERO),
                ad,
                c
            ),
            bad
        );
        // A broadcasting: refused.
        assert_eq!(
            miopenOpTensor(
                h,
                add,
                ptr(&ONE),
                bd,
                b,
                ptr(&ONE),
                ad,
                a,
                ptr(&ZERO),
                ad,
                c
            ),
            bad
        );
        assert_eq!(
            miopenOpTensor(
                h,
                add,
                ptr(&ONE),
                ad,
                a,
                ptr(&ONE),
                bd,
                b,
                ptr(&ZERO),
                c_small,
                c
            ),
            bad
        );
        assert_eq!(
            miopenOpTensor(
                h,
                miopenTensorOp_t(9),
                ptr(&ONE),
                ad,
                a,
                ptr(&ONE),
                bd,
                b,
                ptr(&ZERO),
                ad,
                c
            ),
            bad
        );
        let bf = packed(miopenDataType_t::miopenBFloat16, &[2, 3, 2, 2]);
        let bfb = packed(miopenDataType_t::miopenBFloat16, &[1, 3, 1, 1]);
        assert_eq!(
            miopenOpTensor(
                h,
                add,
                ptr(&ONE),
                bf,
                a,
                ptr(&ONE),
                bfb,
                b,
                ptr(&ZERO),
                bf,
                c
            ),
            miopenStatus_t::miopenStatusNotImplemented
        );
    }
    let log = take_call_log();
    assert!(
        log.contains(
            "miopenOpTensor(handle, miopenTensorOpAdd, 1, T(float,[2,3,2,2],[12,4,2,1]), @"
        ),
        "{log}"
    );
    assert!(
        log.contains("bDesc dims [1, 3, 3, 1] do not broadcast"),
        "{log}"
    );
    assert!(
        log.contains("unknown tensor op miopenTensorOp_t(9)"),
        "{log}"
    );
    assert!(
        log.contains("cDesc: type bfloat16 (MIOpen's kernels here take float and half)"),
        "{log}"
    );
}

// ---------------------------------------------------------------------------------
// Batch norm
// ---------------------------------------------------------------------------------

#[test]
fn batchnorm_training_with_running_stats_and_backward_match_the_reference() {
    let _g = serial();
    let dt = miopenDataType_t::miopenFloat;
    let f = miopenDataType_t::miopenFloat;
    let h = handle();
    let dims = [2, 3, 4, 4];
    let strides = layout_strides(&dims, hipdnn_data_sdk::TensorLayout::Nhwc);
    let x_t = random(&dims, &strides, 7, dt);
    let pc = [1, 3, 1, 1];
    let scale_t = HostTensor::from_vec(pc, &[1.0, 0.5, 2.0]);
    let bias_t = HostTensor::from_vec(pc, &[0.0, 0.25, -1.0]);
    let rmean_t = HostTensor::from_vec(pc, &[0.1, 0.2, 0.3]);
    let rvar_t = HostTensor::from_vec(pc, &[1.0, 2.0, 3.0]);
    let xd = tensor(dt, &dims, &strides);
    let pd = packed(f, &pc);
    let (x, scale, bias) = (upload(dt, &x_t), upload(f, &scale_t), upload(f, &bias_t));
    let (rmean, rvar) = (upload(f, &rmean_t), upload(f, &rvar_t));
    let (smean, sinv) = (malloc(12), malloc(12));
    let y = malloc(4 * 96);
    let mode = miopenBatchNormMode_t::miopenBNSpatial;
    let (one, zero) = (ONE, ZERO);
    let (pone, pzero) = (ptr(&one).cast_mut(), ptr(&zero).cast_mut());
    // SAFETY: valid descriptors and buffers; running statistics updated in place.
    unsafe {
        ok(miopenBatchNormalizationForwardTraining_V3(
            h, mode, pone, pzero, xd, x, xd, y, pd, pd, pd, pd, scale, bias, 0.1, rmean, rvar,
            rmean, rvar, 1e-5, smean, sinv,
        ));
    }
    let mut want_y = HostTensor::zeros(dims.to_vec(), strides.clone());
    let stats = batchnorm_training(
        &x_t,
        &scale_t,
        &bias_t,
        1e-5,
        Some(RunningStats {
            mean: &rmean_t,
            variance: &rvar_t,
            momentum: 0.1,
        }),
        &mut want_y,
    )
    .unwrap();
    let pcs = row_major_strides(&pc);
    assert_eq!(download(dt, &dims, &strides, y).logical(), want_y.logical());
    assert_eq!(
        download(f, &pc, &pcs, rmean).logical(),
        stats.next_running_mean.unwrap()
    );
    assert_eq!(
        download(f, &pc, &pcs, rvar).logical(),
        stats.next_running_variance.unwrap()
    );
    assert_eq!(download(f, &pc, &pcs, smean).logical(), stats.mean);
    assert_eq!(download(f, &pc, &pcs, sinv).logical(), stats.inv_variance);

    // Backward from the saved statistics; through a ReLU.
    let dy_t = random(&dims, &strides, 8, dt);
    let dy = upload(dt, &dy_t);
    let dx = malloc(4 * 96);
    let (dscale, dbias) = (malloc(12), malloc(12));
    let relu = activation(miopenActivationMode_t::miopenActivationRELU, 0.0, 0.0, 0.0);
    // SAFETY: as above.
    unsafe {
        ok(miopenBatchNormalizationBackward_V2(
            h, mode, pone, pzero, pone, pzero, xd, x, xd, dy, xd, dx, pd, pd, pd, pd, scale,
            dscale, dbias, 1e-5, smean, sinv,
        ));
    }
    let mean_t = HostTensor::from_vec([3], &stats.mean);
    let inv_t = HostTensor::from_vec([3], &stats.inv_variance);
    let mut want_dx = HostTensor::zeros(dims.to_vec(), strides.clone());
    let g = batchnorm_backward(&dy_t, &x_t, &mean_t, &inv_t, &scale_t, &mut want_dx).unwrap();
    assert_eq!(
        download(dt, &dims, &strides, dx).logical(),
        want_dx.logical()
    );
    assert_eq!(download(f, &pc, &pcs, dscale).logical(), g.dscale);
    assert_eq!(download(f, &pc, &pcs, dbias).logical(), g.dbias);
    // SAFETY: as above.
    unsafe {
        ok(miopenBatchNormBackwardActivation(
            h, mode, pone, pzero, pone, pzero, xd, x, xd, dy, xd, dx, pd, pd, pd, pd, scale, bias,
            dscale, dbias, 1e-5, smean, sinv, relu,
        ));
    }
    // dy masked where the forward output (y above) is not positive.
    let mut masked = dy_t.clone();
    hipdnn_reference::tensor::for_each_index(&dims, |i| {
        if want_y.at(i) <= 0.0 {
            masked.set(i, 0.0);
        }
    });
    let mut want_dx = HostTensor::zeros(dims.to_vec(), strides.clone());
    batchnorm_backward(&masked, &x_t, &mean_t, &inv_t, &scale_t, &mut want_dx).unwrap();
    assert_close(
        &download(dt, &dims, &strides, dx).logical(),
        &want_dx.logical(),
        1e-5,
    );

    // Refusals: per-activation mode, a half per-channel descriptor, blend scalars, an
    // activation batch norm does not fuse, running pointers half given.
    let half_pd = packed(miopenDataType_t::miopenHalf, &pc);
    let two = 2.0f32;
    let tanh = activation(miopenActivationMode_t::miopenActivationTANH, 1.0, 1.0, 0.0);
    // SAFETY: as above; the failures are what is checked.
    unsafe {
        let per_act = miopenBatchNormMode_t::miopenBNPerActivation;
        assert_eq!(
            miopenBatchNormalizationForwardInference_V2(
                h, per_act, pone, pzero, xd, x, xd, y, pd, pd, pd, pd, scale, bias, rmean, rvar,
                1e-5
            ),
            miopenStatus_t::miopenStatusNotImplemented
        );
        assert_eq!(
            miopenBatchNormalizationForwardInference_V2(
                h, mode, pone, pzero, xd, x, xd, y, half_pd, pd, pd, pd, scale, bias, rmean, rvar,
                1e-5
            ),
            miopenStatus_t::miopenStatusBadParm
        );
        assert_eq!(
            miopenBatchNormalizationForwardInference_V2(
                h,
                mode,
                ptr(&two).cast_mut(),
                pzero,
                xd,
                x,
                xd,
                y,
                pd,
                pd,
                pd,
                pd,
                scale,
                bias,
                rmean,
                rvar,
                1e-5
            ),
            miopenStatus_t::miopenStatusNotImplemented
        );
        assert_eq!(
            miopenBatchNormForwardInferenceActivation(
                h, mode, pone, pzero, xd, x, xd, y, pd, pd, pd, pd, scale, bias, rmean, rvar, 1e-5,
                tanh
            ),
            miopenStatus_t::miopenStatusNotImplemented
        );
        assert_eq!(
            miopenBatchNormalizationForwardTraining_V3(
                h,
                mode,
                pone,
                pzero,
                xd,
                x,
                xd,
                y,
                pd,
                pd,
                pd,
                pd,
                scale,
                bias,
                0.1,
                rmean,
                rvar,
                null_mut(),
                rvar,
                1e-5,
                null_mut(),
                null_mut()
            ),
            miopenStatus_t::miopenStatusBadParm
        );
        // Inference from the running statistics, activated.
        ok(miopenBatchNormForwardInferenceActivation(
            h, mode, pone, pzero, xd, x, xd, y, pd, pd, pd, pd, scale, bias, rmean, rvar, 1e-5,
            relu,
        ));
    }
    assert!(
        download(dt, &dims, &strides, y)
            .logical()
            .iter()
            .all(|&v| v >= 0.0)
    );
    let log = take_call_log();
    assert!(
        log.contains("scaleDesc has type half, expected float")
            || log.contains("scaleDesc has type miopenHalf"),
        "{log}"
    );
    assert!(log.contains("activation TANH is not fused"), "{log}");
    assert!(log.contains("miopenBatchNormalizationForwardTraining_V3(handle, miopenBNSpatial, 1, 0, T(float,[2,3,4,4],[48,1,12,3])"), "{log}");
}

// ---------------------------------------------------------------------------------
// Fusion
// ---------------------------------------------------------------------------------

#[test]
fn fusion_compiles_supported_plans_only_and_executes_them() {
    let _g = serial();
    let dt = miopenDataType_t::miopenHalf;
    let h = handle();
    let (xdims, wdims, ydims) = ([1, 3, 6, 6], [4, 3, 3, 3], [1, 4, 6, 6]);
    let x_t = random(&xdims, &row_major_strides(&xdims), 11, dt);
    let w_t = random(&wdims, &row_major_strides(&wdims), 12, dt);
    let b_t = HostTensor::from_vec([1, 4, 1, 1], &[0.5, -0.5, 0.0, 1.0]);
    let (xd, wd, yd, bd) = (
        packed(dt, &xdims),
        packed(dt, &wdims),
        packed(dt, &ydims),
        packed(dt, &[1, 4, 1, 1]),
    );
    let (x, w, b) = (upload(dt, &x_t), upload(dt, &w_t), upload(dt, &b_t));
    let y = malloc(2 * 144);
    let conv = conv_desc(&[1, 1], &[1, 1], &[1, 1]);
    let (mut plan, mut c_op, mut b_op, mut a_op) = (null_mut(), null_mut(), null_mut(), null_mut());
    let mut args = null_mut();
    // SAFETY: valid descriptors, buffers and out-pointers.
    unsafe {
        ok(miopenCreateFusionPlan(
            &mut plan,
            miopenFusionDirection_t::miopenVerticalFusion,
            xd,
        ));
        ok(miopenCreateOpConvForward(plan, &mut c_op, conv, wd));
        // MIOpen copies the descriptor: destroying the caller's is fine.
        ok(miopenDestroyConvolutionDescriptor(conv));
        // conv → bias alone is not a supported fusion.
        ok(miopenCreateOpBiasForward(plan, &mut b_op, bd));
        assert_eq!(
            miopenCompileFusionPlan(h, plan),
            miopenStatus_t::miopenStatusUnsupportedOp
        );
        ok(miopenCreateOpActivationForward(
            plan,
            &mut a_op,
            miopenActivationMode_t::miopenActivationRELU,
        ));
        ok(miopenCompileFusionPlan(h, plan));
        let mut again = null_mut();
        ok(miopenFusionPlanGetOp(plan, 1, &mut again));
        assert_eq!(again, b_op);
        assert_eq!(
            miopenFusionPlanGetOp(plan, 3, &mut again),
            miopenStatus_t::miopenStatusBadParm
        );

        ok(miopenCreateOperatorArgs(&mut args));
        ok(miopenSetOpArgsConvForward(
            args,
            c_op,
            ptr(&ONE),
            ptr(&ZERO),
            w,
        ));
        ok(miopenSetOpArgsBiasForward(args, b_op, null(), null(), b));
        // The activation's arguments are missing.
        assert_eq!(
            miopenExecuteFusionPlan_v2(h, plan, xd, x, yd, y, args, null_mut(), 0),
            miopenStatus_t::miopenStatusBadParm
        );
        ok(miopenSetOpArgsActivForward(
            args,
            a_op,
            null(),
            null(),
            0.0,
            0.0,
            0.0,
        ));
        ok(miopenExecuteFusionPlan_v2(
            h,
            plan,
            xd,
            x,
            yd,
            y,
            args,
            null_mut(),
            0,
        ));
        // Arguments for the wrong kind of op.
        assert_eq!(
            miopenSetOpArgsBiasForward(args, c_op, null(), null(), b),
            miopenStatus_t::miopenStatusBadParm
        );
        ok(miopenDestroyOperatorArgs(args));
        ok(miopenDestroyFusionPlan(plan));
        assert_eq!(
            miopenCompileFusionPlan(h, plan),
            miopenStatus_t::miopenStatusBadParm
        );
    }
    let mut acc = HostTensor::packed(ydims.to_vec());
    conv_fprop(&x_t, &w_t, &mut acc, &ConvParams::new(2).padding(1)).unwrap();
    let mut want = Vec::new();
    hipdnn_reference::tensor::for_each_index(&ydims, |i| {
        let v = (f64::from(acc.at(i)) + f64::from(b_t.at(&[0, i[1], 0, 0]))).max(0.0);
        want.push(half::f16::from_f64(v).to_f32());
    });
    assert_eq!(
        download(dt, &ydims, &row_major_strides(&ydims), y).logical(),
        want
    );

    // conv → activ with an activation the fusion does not take: UnsupportedOp, not
    // printed as misuse but logged.
    let conv = conv_desc(&[1, 1], &[1, 1], &[1, 1]);
    let mut plan = null_mut();
    // SAFETY: as above.
    unsafe {
        ok(miopenCreateFusionPlan(
            &mut plan,
            miopenFusionDirection_t::miopenVerticalFusion,
            xd,
        ));
        ok(miopenCreateOpConvForward(plan, &mut c_op, conv, wd));
        ok(miopenCreateOpActivationForward(
            plan,
            &mut a_op,
            miopenActivationMode_t::miopenActivationLOGISTIC,
        ));
        assert_eq!(
            miopenCompileFusionPlan(h, plan),
            miopenStatus_t::miopenStatusUnsupportedOp
        );
        assert_eq!(
            miopenExecuteFusionPlan_v2(h, plan, xd, x, yd, y, args, null_mut(), 0),
            miopenStatus_t::miopenStatusBadParm
        );
        assert_eq!(
            miopenCreateFusionPlan(
                &mut plan,
                miopenFusionDirection_t::miopenHorizontalFusion,
                xd
            ),
            miopenStatus_t::miopenStatusNotImplemented
        );
    }
    let log = take_call_log();
    for needle in [
        "miopenCreateOpConvForward(P(T(half,[1,3,6,6],[108,36,6,1]),0 ops), C(pad=[1,1],stride=[1,1],dil=[1,1],groups=1,det=0), T(half,[4,3,3,3],[27,9,3,1])) = op0:conv",
        "miopenCompileFusionPlan(handle, P(T(half,[1,3,6,6],[108,36,6,1]),2 ops)) -> miopenStatusUnsupportedOp: op sequence [conv→bias] is not fused",
        "op2:activ has no arguments bound in args",
        "op is op0:conv, not a bias op",
        "activation LOGISTIC is not fused",
        "fusePlanDesc is a fusion plan that was destroyed",
    ] {
        assert!(log.contains(needle), "{needle:?} not in\n{log}");
    }
}

// ---------------------------------------------------------------------------------
// Descriptors and the log
// ---------------------------------------------------------------------------------

#[test]
fn tensor_descriptors_refuse_what_miopen_would_and_the_log_shows_contents() {
    let _g = serial();
    let mut d = null_mut();
    let dims = [2, 4, 8, 8];
    let strides = [256, 64, 8, 1];
    let zero_dims = [2, 0, 8, 8];
    // SAFETY: valid pointers, `nbDims` ints each.
    unsafe {
        ok(miopenCreateTensorDescriptor(&mut d));
        ok(miopenSetTensorDescriptor(
            d,
            miopenDataType_t::miopenFloat,
            4,
            dims.as_ptr(),
            strides.as_ptr(),
        ));
        ok(miopenSetTensorDescriptor(
            d,
            miopenDataType_t::miopenFloat,
            4,
            dims.as_ptr(),
            null(),
        ));
        assert_eq!(
            miopenSetTensorDescriptor(d, miopenDataType_t::miopenInt8, 4, dims.as_ptr(), null()),
            miopenStatus_t::miopenStatusNotImplemented
        );
        assert_eq!(
            miopenSetTensorDescriptor(d, miopenDataType_t(77), 4, dims.as_ptr(), null()),
            miopenStatus_t::miopenStatusNotImplemented
        );
        assert_eq!(
            miopenSetTensorDescriptor(d, miopenDataType_t::miopenFloat, 6, dims.as_ptr(), null()),
            miopenStatus_t::miopenStatusBadParm
        );
        assert_eq!(
            miopenSetTensorDescriptor(
                d,
                miopenDataType_t::miopenFloat,
                4,
                zero_dims.as_ptr(),
                null()
            ),
            miopenStatus_t::miopenStatusBadParm
        );
        assert_eq!(
            miopenSetTensorDescriptor(
                null_mut(),
                miopenDataType_t::miopenFloat,
                4,
                dims.as_ptr(),
                null()
            ),
            miopenStatus_t::miopenStatusBadParm
        );
        ok(miopenDestroyTensorDescriptor(d));
        ok(miopenDestroyTensorDescriptor(null_mut()));
    }
    let p = malloc(1024);
    let log = take_call_log();
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(lines[0], "miopenCreateTensorDescriptor()");
    assert_eq!(
        lines[1],
        "miopenSetTensorDescriptor(T(unset), float, 4, [2,4,8,8], [256,64,8,1])"
    );
    assert_eq!(
        lines[2],
        "miopenSetTensorDescriptor(T(float,[2,4,8,8],[256,64,8,1]), float, 4, [2,4,8,8], null)"
    );
    assert_eq!(
        lines[3],
        "miopenSetTensorDescriptor(T(float,[2,4,8,8],[256,64,8,1]), miopenInt8, 4, [2,4,8,8], null) \
         -> miopenStatusNotImplemented: data type miopenInt8 (only half, float and bfloat16 are implemented)"
    );
    assert!(lines[4].contains("miopenDataType_t(77)"), "{log}");
    assert!(
        lines[5].ends_with("-> miopenStatusBadParm: nbDims 6 is not in 1..=5"),
        "{log}"
    );
    assert!(
        lines[6].ends_with("-> miopenStatusBadParm: dims [2, 0, 8, 8] must all be at least 1"),
        "{log}"
    );
    assert!(
        lines[7].starts_with("miopenSetTensorDescriptor(null, ")
            && lines[7].ends_with("tensorDesc is null"),
        "{log}"
    );
    assert_eq!(
        lines[8],
        "miopenDestroyTensorDescriptor(T(float,[2,4,8,8],[256,64,8,1]))"
    );
    assert_eq!(lines[9], "miopenDestroyTensorDescriptor(null)");
    assert!(
        lines[10].starts_with("hipMalloc(1024) = @") && lines[10].ends_with("+0"),
        "{log}"
    );
    assert_eq!(lines.len(), 11, "{log}");
    // SAFETY: allocated above.
    hip_ok(unsafe { hipFree(p) });
}

#[test]
fn the_c_log_hook_returns_and_clears_the_log() {
    let _g = serial();
    // SAFETY: a valid out-pointer.
    unsafe { ok(miopenGetVersion(null_mut(), null_mut(), null_mut())) };
    let raw = crate::log::hipdnnSoftMiopenTakeCallLog();
    // SAFETY: the hook returns a NUL-terminated string, freed with its partner.
    let text = unsafe {
        let text = CStr::from_ptr(raw).to_str().unwrap().to_owned();
        crate::log::hipdnnSoftMiopenFreeString(raw);
        crate::log::hipdnnSoftMiopenFreeString(null_mut());
        text
    };
    assert_eq!(text, "miopenGetVersion() = 3.5.0\n");
    assert_eq!(take_call_log(), "");
}

#[test]
fn a_panic_becomes_an_internal_error() {
    let _g = serial();
    let s = crate::state::miopen_entry("miopenTest", |_| "1".to_owned(), |_| panic!("boom"));
    assert_eq!(s, miopenStatus_t::miopenStatusInternalError);
    let e = crate::state::hip_entry("hipTest", |_| String::new(), |_| panic!("boom"));
    assert_eq!(e.0, 999);
    let log = take_call_log();
    assert_eq!(
        log,
        "miopenTest(1) -> miopenStatusInternalError: panic: boom\n\
         hipTest() -> hipErrorUnknown: panic: boom\n"
    );
}
