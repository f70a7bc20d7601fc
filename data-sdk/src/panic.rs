//! Reading a caught panic.

use std::any::Any;

/// The message of a panic payload as caught by [`std::panic::catch_unwind`]: the text
/// of `panic!("...")` (a `&str` or `String` payload), else a fixed note for payloads
/// of other types (`std::panic::panic_any(42)`).
///
/// ```
/// use hipdnn_data_sdk::panic_message;
///
/// let caught = std::panic::catch_unwind(|| panic!("bad {}", 1)).unwrap_err();
/// assert_eq!(panic_message(caught.as_ref()), "bad 1");
/// let caught = std::panic::catch_unwind(|| std::panic::panic_any(42)).unwrap_err();
/// assert_eq!(panic_message(caught.as_ref()), "a panic with a non-string payload");
/// ```
pub fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic with a non-string payload".to_owned()
    }
}
