//! The call log and its test hooks.
//!
//! Every export appends one line, in call order: `name(args…)`, then ` = result` when
//! the call returns something worth seeing (a count, a list of solutions, an
//! allocation), or ` -> <status name>: <reason>` when it fails. Descriptors appear by
//! content (`T(float,[2,4,8,8],[256,64,8,1])`, `C(pad=[1,1],stride=[1,1],dil=[1,1],
//! groups=1,det=0)`, `A(RELU,0,0,0)`), device pointers as `@<allocation>+<offset>`
//! (allocations numbered from 1 in `hipMalloc` order), other non-null pointers as
//! `host`, scalars as numbers. Out-parameters are not shown as arguments. No raw
//! address ever appears, so lines are stable from run to run.

use std::collections::VecDeque;
use std::ffi::{CString, c_char};

/// Lines kept; older ones are dropped (and counted).
const MAX_LINES: usize = 100_000;

#[derive(Debug, Default)]
pub(crate) struct CallLog {
    lines: VecDeque<String>,
    dropped: u64,
}

impl CallLog {
    pub(crate) fn push(&mut self, line: String) {
        if self.lines.len() == MAX_LINES {
            self.lines.pop_front();
            self.dropped += 1;
        }
        self.lines.push_back(line);
    }

    /// Every line since the last take, one per line (a first line notes how many were
    /// dropped, if any), and clears the log.
    pub(crate) fn take(&mut self) -> String {
        let mut out = String::new();
        if self.dropped > 0 {
            out.push_str(&format!(
                "<{} older calls dropped from the log>\n",
                self.dropped
            ));
            self.dropped = 0;
        }
        for line in self.lines.drain(..) {
            out.push_str(&line);
            out.push('\n');
        }
        out
    }
}

/// Test hook: every call recorded since the last take, one line per call (each ending
/// in `\n`), NUL-terminated; the log is cleared. Free the string with
/// [`hipdnnSoftMiopenFreeString`]. Not part of MIOpen or HIP.
#[unsafe(no_mangle)]
pub extern "C" fn hipdnnSoftMiopenTakeCallLog() -> *mut c_char {
    let text = std::panic::catch_unwind(|| crate::state::lock().log.take())
        .unwrap_or_else(|_| "<call log unavailable>\n".to_owned());
    // Lines never contain NUL (they are built from names and numbers); replace any
    // to be safe rather than lose the log.
    CString::new(text.replace('\0', "\\0"))
        .expect("NULs replaced")
        .into_raw()
}

/// Test hook: frees a string from [`hipdnnSoftMiopenTakeCallLog`] (null is a no-op).
///
/// # Safety
/// `s` is null or a pointer returned by [`hipdnnSoftMiopenTakeCallLog`], not yet freed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipdnnSoftMiopenFreeString(s: *mut c_char) {
    if !s.is_null() {
        // SAFETY: `s` came from `CString::into_raw` in `hipdnnSoftMiopenTakeCallLog`.
        drop(unsafe { CString::from_raw(s) });
    }
}

/// The call log as a Rust string (takes it, as the C hook does).
pub fn take_call_log() -> String {
    crate::state::lock().log.take()
}
