//! Reading what a plugin hands out: strings with a length bound, and its last error.

use std::ffi::c_char;

use hipdnn_plugin_abi::{HIPDNN_PLUGIN_ERROR_STRING_MAX_LENGTH, hipdnnPluginGetLastErrorString_fn};

/// Reads a NUL-terminated string of at most `max` bytes (NUL excluded), lossily as
/// UTF-8. `Err` holds the first `max` bytes when no NUL came within them.
///
/// # Safety
/// `ptr` is non-null and points to a NUL-terminated string readable up to its NUL (or
/// to `max` bytes, whichever is first).
pub(crate) unsafe fn read_bounded(ptr: *const c_char, max: usize) -> Result<String, String> {
    let mut len = 0;
    // SAFETY: bytes before the first NUL belong to the string; we stop at the NUL or at
    // `max`, never beyond.
    while len < max && unsafe { *ptr.add(len) } != 0 {
        len += 1;
    }
    // SAFETY: the `len` bytes just scanned are readable.
    let bytes = unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), len) };
    let text = String::from_utf8_lossy(bytes).into_owned();
    // SAFETY: when `len < max` the loop stopped at the NUL, which is readable.
    if len < max || unsafe { *ptr.add(len) } == 0 {
        Ok(text)
    } else {
        Err(text)
    }
}

/// The plugin's last error on this thread, copied (and cut at the SDK's buffer size).
pub(super) fn read_last_error(f: hipdnnPluginGetLastErrorString_fn) -> String {
    let mut out: *const c_char = std::ptr::null();
    // SAFETY: `f` was resolved with its declared type; `out` is writable.
    unsafe { f(&mut out) };
    if out.is_null() {
        return String::new();
    }
    // SAFETY: the plugin wrote a pointer to its NUL-terminated thread-local buffer,
    // valid until this thread's next call into it; it is copied here.
    unsafe { read_bounded(out, HIPDNN_PLUGIN_ERROR_STRING_MAX_LENGTH) }.unwrap_or_else(|cut| cut)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_bounded_stops_at_nul_or_bound() {
        // SAFETY: NUL-terminated literals.
        unsafe {
            assert_eq!(read_bounded(c"abc".as_ptr(), 3), Ok("abc".to_owned()));
            assert_eq!(read_bounded(c"abc".as_ptr(), 10), Ok("abc".to_owned()));
            assert_eq!(read_bounded(c"abcd".as_ptr(), 3), Err("abc".to_owned()));
            assert_eq!(read_bounded(c"".as_ptr(), 0), Ok(String::new()));
            assert_eq!(
                read_bounded(c"\xffa".as_ptr(), 8),
                Ok("\u{fffd}a".to_owned())
            );
        }
    }
}
