//! The HIP runtime functions: devices from the environment, memory on the host,
//! streams and events as registered values (everything runs synchronously).

use std::ffi::{CStr, c_char, c_float, c_int, c_void};
use std::time::Instant;

use crate::state::{Fail, R, State, hip_entry, out, record_only};
use crate::sys::{hip_fn, hipError_t, hipEvent_t, hipMemcpyKind, hipStream_t};

/// `hipErrorUnknown` (not among the values the provider tells apart).
pub(crate) const HIP_ERROR_UNKNOWN: c_int = 999;

/// What `hipRuntimeGetVersion` reports: HIP 6.4.43483 (ROCm 6.4), in HIP's
/// `major·10⁷ + minor·10⁵ + patch` encoding.
pub const HIP_RUNTIME_VERSION: c_int = 60_443_483;

/// The environment variable with the number of devices (default 1).
pub const DEVICES_ENV: &str = "HIPDNN_SOFT_HIP_DEVICES";

/// The header name of a HIP error, `hipErrorUnknown` for values not listed.
fn error_cstr(e: hipError_t) -> &'static CStr {
    match e.0 {
        0 => c"hipSuccess",
        1 => c"hipErrorInvalidValue",
        2 => c"hipErrorOutOfMemory",
        3 => c"hipErrorNotInitialized",
        4 => c"hipErrorDeinitialized",
        9 => c"hipErrorInvalidConfiguration",
        17 => c"hipErrorInvalidDevicePointer",
        21 => c"hipErrorInvalidMemcpyDirection",
        35 => c"hipErrorInsufficientDriver",
        98 => c"hipErrorInvalidDeviceFunction",
        100 => c"hipErrorNoDevice",
        101 => c"hipErrorInvalidDevice",
        201 => c"hipErrorInvalidContext",
        400 => c"hipErrorInvalidHandle",
        600 => c"hipErrorNotReady",
        700 => c"hipErrorIllegalAddress",
        801 => c"hipErrorNotSupported",
        _ => c"hipErrorUnknown",
    }
}

/// The header name of a HIP error.
pub(crate) fn error_name(e: hipError_t) -> &'static str {
    error_cstr(e).to_str().expect("ASCII names")
}

fn invalid(message: impl Into<String>) -> Fail {
    Fail::hip(hipError_t::hipErrorInvalidValue, message)
}

/// The out-parameter `p` as a HIP error.
///
/// # Safety
/// As [`out`].
unsafe fn hip_out<'a, T>(p: *mut T, what: &str) -> R<&'a mut T> {
    // SAFETY: forwarded.
    unsafe { out(p, what) }.map_err(|f| invalid(f.message))
}

fn device_count() -> R<c_int> {
    match std::env::var(DEVICES_ENV) {
        Err(_) => Ok(1),
        Ok(v) => v
            .trim()
            .parse::<c_int>()
            .ok()
            .filter(|n| *n >= 0)
            .ok_or_else(|| invalid(format!("{DEVICES_ENV}={v:?} is not a device count"))),
    }
}

/// Devices: `HIPDNN_SOFT_HIP_DEVICES` (default 1); with 0, writes 0 and returns
/// `hipErrorNoDevice`, as HIP does on a machine without GPUs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipGetDeviceCount(count: *mut c_int) -> hipError_t {
    hip_entry(
        "hipGetDeviceCount",
        |_| String::new(),
        |_| {
            // SAFETY: HIP's contract: `count` is writable when non-null.
            let count = unsafe { hip_out(count, "count") }?;
            let n = device_count()?;
            *count = n;
            if n == 0 {
                return Err(
                    Fail::hip(hipError_t::hipErrorNoDevice, format!("{DEVICES_ENV}=0")).quiet(),
                );
            }
            Ok(n.to_string())
        },
    )
}
const _: hip_fn::hipGetDeviceCount = hipGetDeviceCount;

/// [`HIP_RUNTIME_VERSION`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipRuntimeGetVersion(version: *mut c_int) -> hipError_t {
    hip_entry(
        "hipRuntimeGetVersion",
        |_| String::new(),
        |_| {
            // SAFETY: HIP's contract: `version` is writable when non-null.
            *unsafe { hip_out(version, "version") }? = HIP_RUNTIME_VERSION;
            Ok(HIP_RUNTIME_VERSION.to_string())
        },
    )
}
const _: hip_fn::hipRuntimeGetVersion = hipRuntimeGetVersion;

/// A static name for every value (`hipErrorUnknown` for values without one).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipGetErrorString(error: hipError_t) -> *const c_char {
    record_only("hipGetErrorString", |_| error.0.to_string());
    error_cstr(error).as_ptr()
}
const _: hip_fn::hipGetErrorString = hipGetErrorString;

/// Host memory aligned to 256 bytes, filled with `0xCD`; size 0 gives null.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipMalloc(ptr: *mut *mut c_void, size: usize) -> hipError_t {
    hip_entry(
        "hipMalloc",
        |_| size.to_string(),
        |st| {
            // SAFETY: HIP's contract: `ptr` is writable when non-null.
            let ptr = unsafe { hip_out(ptr, "ptr") }?;
            if size == 0 {
                *ptr = std::ptr::null_mut();
                return Ok("null".to_owned());
            }
            let p = st.mem.alloc(size).ok_or_else(|| {
                Fail::hip(
                    hipError_t::hipErrorOutOfMemory,
                    format!("the host cannot allocate {size} bytes"),
                )
            })?;
            *ptr = p.cast();
            Ok(st.mem.render(p.cast()))
        },
    )
}
const _: hip_fn::hipMalloc = hipMalloc;

/// Frees a `hipMalloc` allocation (its start address); null is a no-op.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipFree(ptr: *mut c_void) -> hipError_t {
    hip_entry(
        "hipFree",
        |st| st.mem.render(ptr),
        |st| {
            if ptr.is_null() {
                return Ok(String::new());
            }
            st.mem.free(ptr).map_err(invalid)?;
            Ok(String::new())
        },
    )
}
const _: hip_fn::hipFree = hipFree;

/// Checks the device side(s) of a copy against `kind`.
fn check_copy(
    st: &State,
    dst: *const c_void,
    src: *const c_void,
    size: usize,
    kind: hipMemcpyKind,
) -> R<()> {
    let device = |p, what| st.mem.check(p, size, what).map_err(invalid);
    let host = |p: *const c_void, what: &str| {
        if p.is_null() {
            Err(invalid(format!("{what} is null")))
        } else if st.mem.is_device(p) {
            Err(Fail::hip(
                hipError_t::hipErrorInvalidMemcpyDirection,
                format!("{what} is device memory but the copy kind is {kind}"),
            ))
        } else {
            Ok(())
        }
    };
    match kind {
        hipMemcpyKind::hipMemcpyHostToHost => {
            host(dst, "dst")?;
            host(src, "src")
        }
        hipMemcpyKind::hipMemcpyHostToDevice => {
            device(dst, "dst")?;
            if src.is_null() {
                return Err(invalid("src is null"));
            }
            Ok(())
        }
        hipMemcpyKind::hipMemcpyDeviceToHost => {
            device(src, "src")?;
            if dst.is_null() {
                return Err(invalid("dst is null"));
            }
            Ok(())
        }
        hipMemcpyKind::hipMemcpyDeviceToDevice => {
            device(dst, "dst")?;
            device(src, "src")
        }
        hipMemcpyKind::hipMemcpyDefault => {
            for (p, what) in [(dst, "dst"), (src, "src")] {
                if p.is_null() {
                    return Err(invalid(format!("{what} is null")));
                }
                if st.mem.is_device(p) {
                    device(p, what)?;
                }
            }
            Ok(())
        }
        other => Err(Fail::hip(
            hipError_t::hipErrorInvalidMemcpyDirection,
            format!("unknown copy kind {other}"),
        )),
    }
}

/// A synchronous copy; device sides must lie inside one live allocation (checked
/// against `kind`; `hipMemcpyDefault` checks whichever sides are device memory, and
/// `hipMemcpyHostToHost` refuses device pointers). Size 0 copies nothing.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipMemcpy(
    dst: *mut c_void,
    src: *const c_void,
    size: usize,
    kind: hipMemcpyKind,
) -> hipError_t {
    hip_entry(
        "hipMemcpy",
        |st| {
            format!(
                "{}, {}, {size}, {kind}",
                st.mem.render(dst),
                st.mem.render(src)
            )
        },
        |st| {
            if size == 0 {
                return Ok(String::new());
            }
            check_copy(st, dst, src, size, kind)?;
            // SAFETY: device sides were checked to hold `size` bytes; host sides are
            // the caller's (HIP's contract: valid for `size` bytes). `copy` allows
            // overlap.
            unsafe { std::ptr::copy(src.cast::<u8>(), dst.cast::<u8>(), size) };
            Ok(String::new())
        },
    )
}
const _: hip_fn::hipMemcpy = hipMemcpy;

/// Succeeds: everything runs synchronously.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipDeviceSynchronize() -> hipError_t {
    hip_entry(
        "hipDeviceSynchronize",
        |_| String::new(),
        |_| Ok(String::new()),
    )
}
const _: hip_fn::hipDeviceSynchronize = hipDeviceSynchronize;

/// Succeeds for the null stream or a live stream: everything runs synchronously.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipStreamSynchronize(stream: hipStream_t) -> hipError_t {
    hip_entry(
        "hipStreamSynchronize",
        |st| render_stream(st, stream),
        |st| {
            st.objects
                .stream(stream as usize, "stream")
                .map_err(invalid_handle)?;
            Ok(String::new())
        },
    )
}
const _: hip_fn::hipStreamSynchronize = hipStreamSynchronize;

/// A new stream (an opaque value; work on it runs synchronously like all work here).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipStreamCreate(stream: *mut hipStream_t) -> hipError_t {
    hip_entry(
        "hipStreamCreate",
        |_| String::new(),
        |st| {
            // SAFETY: HIP's contract: `stream` is writable when non-null.
            let out = unsafe { hip_out(stream, "stream") }?;
            let s = st.objects.create_stream();
            *out = s as hipStream_t;
            Ok(st.objects.render(s))
        },
    )
}
const _: hip_fn::hipStreamCreate = hipStreamCreate;

/// Destroys a stream made by `hipStreamCreate`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipStreamDestroy(stream: hipStream_t) -> hipError_t {
    hip_entry(
        "hipStreamDestroy",
        |st| render_stream(st, stream),
        |st| {
            if stream.is_null() {
                return Err(invalid_handle_msg(
                    "stream is null (the default stream is not destroyed)",
                ));
            }
            st.objects
                .destroy(stream as usize, "HIP stream", "stream")
                .map_err(invalid_handle)?;
            Ok(String::new())
        },
    )
}
const _: hip_fn::hipStreamDestroy = hipStreamDestroy;

/// A new event, not yet recorded.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipEventCreate(event: *mut hipEvent_t) -> hipError_t {
    hip_entry(
        "hipEventCreate",
        |_| String::new(),
        |st| {
            // SAFETY: HIP's contract: `event` is writable when non-null.
            let out = unsafe { hip_out(event, "event") }?;
            let e = st.objects.create_event();
            *out = e as hipEvent_t;
            Ok(st.objects.render(e))
        },
    )
}
const _: hip_fn::hipEventCreate = hipEventCreate;

/// Records the host clock now (everything before it on any stream has finished).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipEventRecord(event: hipEvent_t, stream: hipStream_t) -> hipError_t {
    hip_entry(
        "hipEventRecord",
        |st| {
            format!(
                "{}, {}",
                st.objects.render(event as usize),
                render_stream(st, stream)
            )
        },
        |st| {
            st.objects
                .stream(stream as usize, "stream")
                .map_err(invalid_handle)?;
            *st.objects
                .event_mut(event as usize, "event")
                .map_err(invalid_handle)? = Some(Instant::now());
            Ok(String::new())
        },
    )
}
const _: hip_fn::hipEventRecord = hipEventRecord;

/// Succeeds for a live event (recorded or not, as HIP).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipEventSynchronize(event: hipEvent_t) -> hipError_t {
    hip_entry(
        "hipEventSynchronize",
        |st| st.objects.render(event as usize),
        |st| {
            st.objects
                .event_mut(event as usize, "event")
                .map_err(invalid_handle)?;
            Ok(String::new())
        },
    )
}
const _: hip_fn::hipEventSynchronize = hipEventSynchronize;

/// Milliseconds of host time between two recorded events (not logged: it varies).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipEventElapsedTime(
    ms: *mut c_float,
    start: hipEvent_t,
    stop: hipEvent_t,
) -> hipError_t {
    hip_entry(
        "hipEventElapsedTime",
        |st| {
            format!(
                "{}, {}",
                st.objects.render(start as usize),
                st.objects.render(stop as usize)
            )
        },
        |st| {
            // SAFETY: HIP's contract: `ms` is writable when non-null.
            let ms = unsafe { hip_out(ms, "ms") }?;
            let mut when = [None, None];
            for (slot, (e, what)) in when.iter_mut().zip([(start, "start"), (stop, "stop")]) {
                let recorded = *st
                    .objects
                    .event_mut(e as usize, what)
                    .map_err(invalid_handle)?;
                *slot = Some(recorded.ok_or_else(|| {
                    invalid_handle_msg(format!("{what} was never recorded (hipEventRecord)"))
                })?);
            }
            let [Some(a), Some(b)] = when else {
                unreachable!("both set above")
            };
            let elapsed = if b >= a {
                (b - a).as_secs_f64()
            } else {
                -(a - b).as_secs_f64()
            };
            *ms = (elapsed * 1e3) as c_float;
            Ok(String::new())
        },
    )
}
const _: hip_fn::hipEventElapsedTime = hipEventElapsedTime;

/// Destroys an event made by `hipEventCreate`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipEventDestroy(event: hipEvent_t) -> hipError_t {
    hip_entry(
        "hipEventDestroy",
        |st| st.objects.render(event as usize),
        |st| {
            if event.is_null() {
                return Err(invalid_handle_msg("event is null"));
            }
            st.objects
                .destroy(event as usize, "HIP event", "event")
                .map_err(invalid_handle)?;
            Ok(String::new())
        },
    )
}
const _: hip_fn::hipEventDestroy = hipEventDestroy;

/// `null`, `S<n>` for a stream made here, or a note that the value is unknown.
pub(crate) fn render_stream(st: &State, stream: hipStream_t) -> String {
    st.objects.render(stream as usize)
}

/// `hipErrorInvalidHandle` (400).
const HIP_ERROR_INVALID_HANDLE: c_int = 400;

fn invalid_handle_msg(message: impl Into<String>) -> Fail {
    Fail::hip(hipError_t(HIP_ERROR_INVALID_HANDLE), message)
}

/// A registry lookup's failure as `hipErrorInvalidHandle`.
fn invalid_handle(f: Fail) -> Fail {
    invalid_handle_msg(f.message)
}
