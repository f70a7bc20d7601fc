//! The one global state, the C boundary every export runs through, and the checked
//! reads of the caller's host pointers.
//!
//! Every export locks [`State`] once, renders its arguments for the call log, runs its
//! body inside `catch_unwind` and turns the outcome into a status: success, a [`Fail`]
//! (status, reason, whether it is printed to stderr) or a panic
//! (`miopenStatusInternalError` / `hipErrorUnknown`). Everything runs synchronously
//! under that one lock, so calls from several threads are serialised.

use std::collections::HashSet;
use std::ffi::{c_int, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{LazyLock, Mutex, MutexGuard};

use hipdnn_data_sdk::panic_message;

use crate::log::CallLog;
use crate::memory::Memory;
use crate::objects::Objects;
use crate::sys::{hipError_t, miopenStatus_t};

/// Everything the library knows: allocations, descriptors, convolution problems that
/// were compiled or benchmarked, and the call log.
#[derive(Debug, Default)]
pub(crate) struct State {
    pub(crate) mem: Memory,
    pub(crate) objects: Objects,
    /// Problems (see `conv::Problem::key`) a Find ran for.
    pub(crate) found: HashSet<String>,
    /// `(problem key, solution id)` pairs compiled by `…CompileSolution`.
    pub(crate) compiled: HashSet<(String, u64)>,
    pub(crate) log: CallLog,
}

static STATE: LazyLock<Mutex<State>> = LazyLock::new(|| Mutex::new(State::default()));

/// Locks the global state (a poisoned lock is taken over: bodies run under
/// `catch_unwind`, so a panic never leaves it half-updated across a call).
pub(crate) fn lock() -> MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Why a call fails: the status it returns and the reason logged with it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Fail {
    code: c_int,
    status: String,
    pub(crate) message: String,
    /// Printed to stderr (everything but the statuses that are answers, not misuse:
    /// `miopenStatusUnsupportedOp` from a fusion compile, `hipErrorNoDevice`).
    loud: bool,
}

impl Fail {
    pub(crate) fn miopen(status: miopenStatus_t, message: impl Into<String>) -> Self {
        Self {
            code: status.0,
            status: status.to_string(),
            message: message.into(),
            loud: true,
        }
    }

    pub(crate) fn hip(error: hipError_t, message: impl Into<String>) -> Self {
        Self {
            code: error.0,
            status: crate::hip::error_name(error).to_owned(),
            message: message.into(),
            loud: true,
        }
    }

    /// The same failure, logged but not printed.
    pub(crate) fn quiet(mut self) -> Self {
        self.loud = false;
        self
    }
}

pub(crate) type R<T> = Result<T, Fail>;

/// `miopenStatusBadParm`: an argument is wrong.
pub(crate) fn bad(message: impl Into<String>) -> Fail {
    Fail::miopen(miopenStatus_t::miopenStatusBadParm, message)
}

/// `miopenStatusNotImplemented`: a valid MIOpen request this library does not model.
pub(crate) fn not_impl(message: impl Into<String>) -> Fail {
    Fail::miopen(miopenStatus_t::miopenStatusNotImplemented, message)
}

/// Runs one MIOpen export: `args` renders the arguments for the log (before the
/// body runs, so it shows descriptors as they were passed), `body` does the work and
/// returns the call's result for the log (`""` when there is none to show).
pub(crate) fn miopen_entry(
    name: &'static str,
    args: impl FnOnce(&State) -> String,
    body: impl FnOnce(&mut State) -> R<String>,
) -> miopenStatus_t {
    let internal = Fail::miopen(miopenStatus_t::miopenStatusInternalError, "");
    miopenStatus_t(run(name, args, body, internal))
}

/// Runs one HIP export (as [`miopen_entry`]).
pub(crate) fn hip_entry(
    name: &'static str,
    args: impl FnOnce(&State) -> String,
    body: impl FnOnce(&mut State) -> R<String>,
) -> hipError_t {
    let internal = Fail::hip(hipError_t(crate::hip::HIP_ERROR_UNKNOWN), "");
    hipError_t(run(name, args, body, internal))
}

/// Records a call that has no status (the error-string lookups).
pub(crate) fn record_only(name: &'static str, args: impl FnOnce(&State) -> String) {
    let mut st = lock();
    let args = catch_unwind(AssertUnwindSafe(|| args(&st)))
        .unwrap_or_else(|_| "<arguments not renderable>".to_owned());
    st.log.push(format!("{name}({args})"));
}

fn run(
    name: &'static str,
    args: impl FnOnce(&State) -> String,
    body: impl FnOnce(&mut State) -> R<String>,
    internal: Fail,
) -> c_int {
    let mut st = lock();
    let args = catch_unwind(AssertUnwindSafe(|| args(&st)))
        .unwrap_or_else(|_| "<arguments not renderable>".to_owned());
    let outcome = catch_unwind(AssertUnwindSafe(|| body(&mut st))).unwrap_or_else(|payload| {
        Err(Fail {
            message: format!("panic: {}", panic_message(payload.as_ref())),
            ..internal
        })
    });
    match outcome {
        Ok(result) => {
            let line = if result.is_empty() {
                format!("{name}({args})")
            } else {
                format!("{name}({args}) = {result}")
            };
            st.log.push(line);
            0
        }
        Err(fail) => {
            if fail.loud {
                eprintln!("soft MIOpen: {name}: {}", fail.message);
            }
            st.log.push(format!(
                "{name}({args}) -> {}: {}",
                fail.status, fail.message
            ));
            fail.code
        }
    }
}

// ---------------------------------------------------------------------------------
// The caller's host pointers (out-parameters, scalars, small arrays). None of these
// can be checked beyond null: they are the caller's, under MIOpen's and HIP's contract.
// ---------------------------------------------------------------------------------

/// The out-parameter `p`, checked for null.
///
/// # Safety
/// `p`, when non-null, is valid for writes of a `T` for the rest of the call.
pub(crate) unsafe fn out<'a, T>(p: *mut T, what: &str) -> R<&'a mut T> {
    // SAFETY: non-null is checked by `as_mut`; validity is the caller's promise.
    unsafe { p.as_mut() }.ok_or_else(|| bad(format!("{what} is null")))
}

/// The host `float` at `p` (MIOpen's alpha/beta scalars for half, float and bfloat16).
///
/// # Safety
/// `p`, when non-null, points to a readable `f32` (any alignment).
pub(crate) unsafe fn scalar(p: *const c_void, what: &str) -> R<f32> {
    if p.is_null() {
        return Err(bad(format!("{what} is null (a host float is required)")));
    }
    // SAFETY: non-null; readable per the caller's promise; unaligned reads allowed.
    Ok(unsafe { p.cast::<f32>().read_unaligned() })
}

/// `n` ints at `p`.
///
/// # Safety
/// `p`, when non-null, points to `n` readable `c_int`s.
pub(crate) unsafe fn ints(p: *const c_int, n: usize, what: &str) -> R<Vec<c_int>> {
    if p.is_null() {
        return Err(bad(format!("{what} is null")));
    }
    // SAFETY: non-null; `n` readable ints per the caller's promise.
    Ok(unsafe { std::slice::from_raw_parts(p, n) }.to_vec())
}

/// Renders the host float at `p` for the log (`null` when null).
///
/// # Safety
/// As [`scalar`].
pub(crate) unsafe fn render_scalar(p: *const c_void) -> String {
    if p.is_null() {
        "null".to_owned()
    } else {
        // SAFETY: the caller's promise, forwarded.
        format!("{}", unsafe { scalar(p, "") }.unwrap_or(f32::NAN))
    }
}

/// Renders `n` ints at `p` as `[a,b,…]` for the log (`null`, or `?` when `n` is not a
/// plausible rank, so that a bad count is never used to read).
///
/// # Safety
/// As [`ints`] when `1 ≤ n ≤ 8`.
pub(crate) unsafe fn render_ints(p: *const c_int, n: c_int) -> String {
    if p.is_null() {
        return "null".to_owned();
    }
    match usize::try_from(n) {
        Ok(n @ 1..=8) => {
            // SAFETY: the caller's promise, forwarded.
            let v = unsafe { ints(p, n, "") }.unwrap_or_default();
            render_list(&v)
        }
        _ => "?".to_owned(),
    }
}

/// `[a,b,c]`.
pub(crate) fn render_list<T: std::fmt::Display>(v: &[T]) -> String {
    let items: Vec<String> = v.iter().map(ToString::to_string).collect();
    format!("[{}]", items.join(","))
}

/// One argument for [`render_args`].
#[derive(Debug)]
pub(crate) enum Arg {
    /// A handle, descriptor, plan, op or argument set (rendered by content).
    Obj(usize),
    /// A device pointer (`@n+off`, `null` or `host`).
    Ptr(*const c_void),
    /// Anything already rendered (numbers, enum names, scalars).
    Text(String),
}

/// The arguments, comma-separated.
pub(crate) fn render_args(st: &State, args: &[Arg]) -> String {
    let items: Vec<String> = args
        .iter()
        .map(|a| match a {
            Arg::Obj(p) => st.objects.render(*p),
            Arg::Ptr(p) => st.mem.render(*p),
            Arg::Text(t) => t.clone(),
        })
        .collect();
    items.join(", ")
}
