//! MIOpen's version, error strings, handles and the tensor, convolution and activation
//! descriptors.

use std::ffi::{CStr, c_char, c_double, c_int};

use crate::hip::render_stream;
use crate::objects::{
    ActivDesc, ConvDesc, ConvGeometry, Object, TensorDesc, activ_name, dtype_name,
};
use crate::state::{R, bad, miopen_entry, not_impl, out, record_only, render_ints, render_list};
use crate::sys::{
    hipStream_t, miopen_fn, miopenActivationDescriptor_t, miopenActivationMode_t,
    miopenConvolutionAttrib_t, miopenConvolutionDescriptor_t, miopenConvolutionMode_t,
    miopenDataType_t, miopenHandle_t, miopenStatus_t, miopenTensorDescriptor_t,
};

/// The environment variable with the version `miopenGetVersion` reports
/// (`major.minor.patch`, default [`DEFAULT_VERSION`]).
pub const VERSION_ENV: &str = "HIPDNN_SOFT_MIOPEN_VERSION";
/// The version reported when [`VERSION_ENV`] is unset.
pub const DEFAULT_VERSION: &str = "3.5.0";

/// Largest tensor rank MIOpen's descriptors take here.
pub(crate) const MAX_RANK: usize = 5;

fn version() -> R<[usize; 3]> {
    let text = std::env::var(VERSION_ENV).unwrap_or_else(|_| DEFAULT_VERSION.to_owned());
    let parts: Vec<Option<usize>> = text.trim().split('.').map(|p| p.parse().ok()).collect();
    match parts.as_slice() {
        [Some(a), Some(b), Some(c)] => Ok([*a, *b, *c]),
        _ => Err(bad(format!(
            "{VERSION_ENV}={text:?} is not major.minor.patch"
        ))),
    }
}

/// The version from `HIPDNN_SOFT_MIOPEN_VERSION` (default 3.5.0); null out-pointers
/// are skipped, as MIOpen documents.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn miopenGetVersion(
    major: *mut usize,
    minor: *mut usize,
    patch: *mut usize,
) -> miopenStatus_t {
    miopen_entry(
        "miopenGetVersion",
        |_| String::new(),
        |_| {
            let v = version()?;
            for (p, value) in [major, minor, patch].into_iter().zip(v) {
                // SAFETY: MIOpen's contract: each pointer is writable when non-null.
                if let Some(p) = unsafe { p.as_mut() } {
                    *p = value;
                }
            }
            Ok(format!("{}.{}.{}", v[0], v[1], v[2]))
        },
    )
}
const _: miopen_fn::miopenGetVersion = miopenGetVersion;

fn status_cstr(s: miopenStatus_t) -> &'static CStr {
    match s {
        miopenStatus_t::miopenStatusSuccess => c"miopenStatusSuccess",
        miopenStatus_t::miopenStatusNotInitialized => c"miopenStatusNotInitialized",
        miopenStatus_t::miopenStatusInvalidValue => c"miopenStatusInvalidValue",
        miopenStatus_t::miopenStatusBadParm => c"miopenStatusBadParm",
        miopenStatus_t::miopenStatusAllocFailed => c"miopenStatusAllocFailed",
        miopenStatus_t::miopenStatusInternalError => c"miopenStatusInternalError",
        miopenStatus_t::miopenStatusNotImplemented => c"miopenStatusNotImplemented",
        miopenStatus_t::miopenStatusUnsupportedOp => c"miopenStatusUnsupportedOp",
        miopenStatus_t::miopenStatusGpuOperationsSkipped => c"miopenStatusGpuOperationsSkipped",
        miopenStatus_t::miopenStatusVersionMismatch => c"miopenStatusVersionMismatch",
        _ => c"miopenStatusUnknownError",
    }
}

/// A static name per status (`miopenStatusUnknownError` for unknown values).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn miopenGetErrorString(error: miopenStatus_t) -> *const c_char {
    record_only("miopenGetErrorString", |_| error.0.to_string());
    status_cstr(error).as_ptr()
}
const _: miopen_fn::miopenGetErrorString = miopenGetErrorString;

/// A handle on `stream` (null: the default stream).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn miopenCreateWithStream(
    handle: *mut miopenHandle_t,
    stream: hipStream_t,
) -> miopenStatus_t {
    miopen_entry(
        "miopenCreateWithStream",
        |st| render_stream(st, stream),
        |st| {
            // SAFETY: MIOpen's contract: `handle` is writable when non-null.
            let handle = unsafe { out(handle, "handle") }?;
            st.objects.stream(stream as usize, "stream")?;
            let h = st.objects.create(Object::Handle {
                stream: stream as usize,
            });
            *handle = h as miopenHandle_t;
            Ok(String::new())
        },
    )
}
const _: miopen_fn::miopenCreateWithStream = miopenCreateWithStream;

#[unsafe(no_mangle)]
pub unsafe extern "C" fn miopenDestroy(handle: miopenHandle_t) -> miopenStatus_t {
    miopen_entry(
        "miopenDestroy",
        |st| st.objects.render(handle as usize),
        |st| destroy(st, handle as usize, "MIOpen handle", "handle"),
    )
}
const _: miopen_fn::miopenDestroy = miopenDestroy;

#[unsafe(no_mangle)]
pub unsafe extern "C" fn miopenSetStream(
    handle: miopenHandle_t,
    stream: hipStream_t,
) -> miopenStatus_t {
    miopen_entry(
        "miopenSetStream",
        |st| {
            format!(
                "{}, {}",
                st.objects.render(handle as usize),
                render_stream(st, stream)
            )
        },
        |st| {
            st.objects.stream(stream as usize, "stream")?;
            *st.objects.handle_mut(handle as usize)? = stream as usize;
            Ok(String::new())
        },
    )
}
const _: miopen_fn::miopenSetStream = miopenSetStream;

/// Destroys `p` (of `kind`); null is a no-op, as in MIOpen.
fn destroy(st: &mut crate::state::State, p: usize, kind: &str, what: &str) -> R<String> {
    if p != 0 {
        st.objects.destroy(p, kind, what)?;
    }
    Ok(String::new())
}

// ---------------------------------------------------------------------------------
// Tensor descriptors
// ---------------------------------------------------------------------------------

#[unsafe(no_mangle)]
pub unsafe extern "C" fn miopenCreateTensorDescriptor(
    desc: *mut miopenTensorDescriptor_t,
) -> miopenStatus_t {
    miopen_entry(
        "miopenCreateTensorDescriptor",
        |_| String::new(),
        |st| {
            // SAFETY: MIOpen's contract: `desc` is writable when non-null.
            let desc = unsafe { out(desc, "tensorDesc") }?;
            *desc = st.objects.create(Object::Tensor(None)) as miopenTensorDescriptor_t;
            Ok(String::new())
        },
    )
}
const _: miopen_fn::miopenCreateTensorDescriptor = miopenCreateTensorDescriptor;

/// Validates a tensor descriptor's contents: half, float or bfloat16, rank 1 to 5,
/// extents and strides ≥ 1 (null strides: packed row-major).
fn tensor_desc(
    dtype: miopenDataType_t,
    dims: &[c_int],
    strides: Option<&[c_int]>,
) -> R<TensorDesc> {
    match dtype {
        miopenDataType_t::miopenHalf
        | miopenDataType_t::miopenFloat
        | miopenDataType_t::miopenBFloat16 => {}
        other => {
            return Err(not_impl(format!(
                "data type {other} (only half, float and bfloat16 are implemented)"
            )));
        }
    }
    let positive = |v: &[c_int], what: &str| -> R<Vec<usize>> {
        v.iter()
            .map(|&d| usize::try_from(d).ok().filter(|&d| d >= 1))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| bad(format!("{what} {v:?} must all be at least 1")))
    };
    let dims = positive(dims, "dims")?;
    let strides = match strides {
        Some(s) => positive(s, "strides")?,
        None => hipdnn_reference::tensor::row_major_strides(&dims),
    };
    // The extent in bytes must be computable.
    let mut extent: usize = 1;
    for (d, s) in dims.iter().zip(&strides) {
        extent = (d - 1)
            .checked_mul(*s)
            .and_then(|v| v.checked_add(extent))
            .ok_or_else(|| bad("the tensor's extent overflows"))?;
    }
    extent
        .checked_mul(4)
        .filter(|&b| isize::try_from(b).is_ok())
        .ok_or_else(|| bad("the tensor's extent overflows"))?;
    Ok(TensorDesc {
        dtype,
        dims,
        strides,
    })
}

/// Sets type, extents and strides (null strides: packed row-major, as MIOpen allows).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn miopenSetTensorDescriptor(
    desc: miopenTensorDescriptor_t,
    data_type: miopenDataType_t,
    nb_dims: c_int,
    dims: *const c_int,
    strides: *const c_int,
) -> miopenStatus_t {
    miopen_entry(
        "miopenSetTensorDescriptor",
        |st| {
            // SAFETY: MIOpen's contract: `dims` and `strides` hold `nb_dims` ints when
            // non-null (only read for a plausible `nb_dims`).
            let (d, s) = unsafe { (render_ints(dims, nb_dims), render_ints(strides, nb_dims)) };
            format!(
                "{}, {}, {nb_dims}, {d}, {s}",
                st.objects.render(desc as usize),
                dtype_name(data_type)
            )
        },
        |st| {
            st.objects.tensor_slot_mut(desc as usize, "tensorDesc")?;
            let n = usize::try_from(nb_dims)
                .ok()
                .filter(|n| (1..=MAX_RANK).contains(n))
                .ok_or_else(|| bad(format!("nbDims {nb_dims} is not in 1..=5")))?;
            // SAFETY: MIOpen's contract: `dims` holds `nbDims` ints.
            let dims = unsafe { crate::state::ints(dims, n, "dims") }?;
            let strides = if strides.is_null() {
                None
            } else {
                // SAFETY: MIOpen's contract: non-null `strides` holds `nbDims` ints.
                Some(unsafe { crate::state::ints(strides, n, "strides") }?)
            };
            let t = tensor_desc(data_type, &dims, strides.as_deref())?;
            *st.objects.tensor_slot_mut(desc as usize, "tensorDesc")? = Some(t);
            Ok(String::new())
        },
    )
}
const _: miopen_fn::miopenSetTensorDescriptor = miopenSetTensorDescriptor;

#[unsafe(no_mangle)]
pub unsafe extern "C" fn miopenDestroyTensorDescriptor(
    desc: miopenTensorDescriptor_t,
) -> miopenStatus_t {
    miopen_entry(
        "miopenDestroyTensorDescriptor",
        |st| st.objects.render(desc as usize),
        |st| destroy(st, desc as usize, "tensor descriptor", "tensorDesc"),
    )
}
const _: miopen_fn::miopenDestroyTensorDescriptor = miopenDestroyTensorDescriptor;

// ---------------------------------------------------------------------------------
// Convolution descriptors
// ---------------------------------------------------------------------------------

/// A descriptor with groups 1, not deterministic, and no geometry until
/// `miopenInitConvolutionNdDescriptor` (using it before is an error here).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn miopenCreateConvolutionDescriptor(
    desc: *mut miopenConvolutionDescriptor_t,
) -> miopenStatus_t {
    miopen_entry(
        "miopenCreateConvolutionDescriptor",
        |_| String::new(),
        |st| {
            // SAFETY: MIOpen's contract: `desc` is writable when non-null.
            let desc = unsafe { out(desc, "convDesc") }?;
            *desc = st.objects.create(Object::Conv(ConvDesc::default()))
                as miopenConvolutionDescriptor_t;
            Ok(String::new())
        },
    )
}
const _: miopen_fn::miopenCreateConvolutionDescriptor = miopenCreateConvolutionDescriptor;

/// 2 or 3 spatial dimensions (MIOpen's Nd convolutions take 4-D and 5-D tensors; a
/// 1-D convolution must be written as 2-D with a unit dimension), symmetric pads ≥ 0,
/// strides and dilations ≥ 1, mode `miopenConvolution` (cross-correlation) only.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn miopenInitConvolutionNdDescriptor(
    desc: miopenConvolutionDescriptor_t,
    spatial_dim: c_int,
    pad: *const c_int,
    stride: *const c_int,
    dilation: *const c_int,
    mode: miopenConvolutionMode_t,
) -> miopenStatus_t {
    miopen_entry(
        "miopenInitConvolutionNdDescriptor",
        |st| {
            // SAFETY: MIOpen's contract: each array holds `spatialDim` ints.
            let (p, s, d) = unsafe {
                (
                    render_ints(pad, spatial_dim),
                    render_ints(stride, spatial_dim),
                    render_ints(dilation, spatial_dim),
                )
            };
            format!(
                "{}, {spatial_dim}, pad={p}, stride={s}, dil={d}, {mode}",
                st.objects.render(desc as usize)
            )
        },
        |st| {
            st.objects.conv_mut(desc as usize, "convDesc")?;
            let n = match spatial_dim {
                2 | 3 => spatial_dim as usize,
                1 => {
                    return Err(not_impl(
                        "spatialDim 1: MIOpen's Nd convolution needs 4-D or 5-D tensors \
                         (write a 1-D convolution as 2-D with a unit dimension)",
                    ));
                }
                _ => return Err(bad(format!("spatialDim {spatial_dim} is not 2 or 3"))),
            };
            if mode != miopenConvolutionMode_t::miopenConvolution {
                return Err(not_impl(format!(
                    "convolution mode {mode} (only miopenConvolution is implemented)"
                )));
            }
            let read = |p, what: &str, min: c_int| -> R<Vec<usize>> {
                // SAFETY: MIOpen's contract: the array holds `spatialDim` ints.
                let v = unsafe { crate::state::ints(p, n, what) }?;
                if v.iter().any(|&x| x < min) {
                    return Err(bad(format!("{what} {v:?} must all be at least {min}")));
                }
                Ok(v.iter().map(|&x| x as usize).collect())
            };
            let geometry = ConvGeometry {
                pad: read(pad, "pad", 0)?,
                stride: read(stride, "stride", 1)?,
                dilation: read(dilation, "dilation", 1)?,
            };
            st.objects.conv_mut(desc as usize, "convDesc")?.geometry = Some(geometry);
            Ok(String::new())
        },
    )
}
const _: miopen_fn::miopenInitConvolutionNdDescriptor = miopenInitConvolutionNdDescriptor;

#[unsafe(no_mangle)]
pub unsafe extern "C" fn miopenSetConvolutionGroupCount(
    desc: miopenConvolutionDescriptor_t,
    groups: c_int,
) -> miopenStatus_t {
    miopen_entry(
        "miopenSetConvolutionGroupCount",
        |st| format!("{}, {groups}", st.objects.render(desc as usize)),
        |st| {
            let c = st.objects.conv_mut(desc as usize, "convDesc")?;
            c.groups = usize::try_from(groups)
                .ok()
                .filter(|&g| g >= 1)
                .ok_or_else(|| bad(format!("group count {groups} must be at least 1")))?;
            Ok(String::new())
        },
    )
}
const _: miopen_fn::miopenSetConvolutionGroupCount = miopenSetConvolutionGroupCount;

/// `DETERMINISTIC` (0 or 1) and `FP16_ALT_IMPL` (-1, 0 or 1; recorded, no effect).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn miopenSetConvolutionAttribute(
    desc: miopenConvolutionDescriptor_t,
    attr: miopenConvolutionAttrib_t,
    value: c_int,
) -> miopenStatus_t {
    miopen_entry(
        "miopenSetConvolutionAttribute",
        |st| format!("{}, {attr}, {value}", st.objects.render(desc as usize)),
        |st| {
            let c = st.objects.conv_mut(desc as usize, "convDesc")?;
            match attr {
                miopenConvolutionAttrib_t::MIOPEN_CONVOLUTION_ATTRIB_DETERMINISTIC => {
                    c.deterministic = match value {
                        0 => false,
                        1 => true,
                        _ => return Err(bad(format!("DETERMINISTIC value {value} is not 0 or 1"))),
                    }
                }
                miopenConvolutionAttrib_t::MIOPEN_CONVOLUTION_ATTRIB_FP16_ALT_IMPL => {
                    if !(-1..=1).contains(&value) {
                        return Err(bad(format!(
                            "FP16_ALT_IMPL value {value} is not -1, 0 or 1"
                        )));
                    }
                    c.fp16_alt = value;
                }
                other => return Err(bad(format!("unknown convolution attribute {other}"))),
            }
            Ok(String::new())
        },
    )
}
const _: miopen_fn::miopenSetConvolutionAttribute = miopenSetConvolutionAttribute;

#[unsafe(no_mangle)]
pub unsafe extern "C" fn miopenDestroyConvolutionDescriptor(
    desc: miopenConvolutionDescriptor_t,
) -> miopenStatus_t {
    miopen_entry(
        "miopenDestroyConvolutionDescriptor",
        |st| st.objects.render(desc as usize),
        |st| destroy(st, desc as usize, "convolution descriptor", "convDesc"),
    )
}
const _: miopen_fn::miopenDestroyConvolutionDescriptor = miopenDestroyConvolutionDescriptor;

// ---------------------------------------------------------------------------------
// Activation descriptors
// ---------------------------------------------------------------------------------

#[unsafe(no_mangle)]
pub unsafe extern "C" fn miopenCreateActivationDescriptor(
    desc: *mut miopenActivationDescriptor_t,
) -> miopenStatus_t {
    miopen_entry(
        "miopenCreateActivationDescriptor",
        |_| String::new(),
        |st| {
            // SAFETY: MIOpen's contract: `desc` is writable when non-null.
            let desc = unsafe { out(desc, "activDesc") }?;
            *desc = st.objects.create(Object::Activation(None)) as miopenActivationDescriptor_t;
            Ok(String::new())
        },
    )
}
const _: miopen_fn::miopenCreateActivationDescriptor = miopenCreateActivationDescriptor;

/// Any of the eleven modes, with finite `alpha`, `beta`, `gamma`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn miopenSetActivationDescriptor(
    desc: miopenActivationDescriptor_t,
    mode: miopenActivationMode_t,
    alpha: c_double,
    beta: c_double,
    gamma: c_double,
) -> miopenStatus_t {
    miopen_entry(
        "miopenSetActivationDescriptor",
        |st| {
            format!(
                "{}, {}, {alpha}, {beta}, {gamma}",
                st.objects.render(desc as usize),
                activ_name(mode)
            )
        },
        |st| {
            st.objects.activation_slot_mut(desc as usize, "activDesc")?;
            if mode.name().is_none() {
                return Err(bad(format!("unknown activation mode {mode}")));
            }
            if ![alpha, beta, gamma].iter().all(|v| v.is_finite()) {
                return Err(bad(format!(
                    "activation parameters {} must be finite",
                    render_list(&[alpha, beta, gamma])
                )));
            }
            *st.objects.activation_slot_mut(desc as usize, "activDesc")? = Some(ActivDesc {
                mode,
                alpha,
                beta,
                gamma,
            });
            Ok(String::new())
        },
    )
}
const _: miopen_fn::miopenSetActivationDescriptor = miopenSetActivationDescriptor;

#[unsafe(no_mangle)]
pub unsafe extern "C" fn miopenDestroyActivationDescriptor(
    desc: miopenActivationDescriptor_t,
) -> miopenStatus_t {
    miopen_entry(
        "miopenDestroyActivationDescriptor",
        |st| st.objects.render(desc as usize),
        |st| destroy(st, desc as usize, "activation descriptor", "activDesc"),
    )
}
const _: miopen_fn::miopenDestroyActivationDescriptor = miopenDestroyActivationDescriptor;
