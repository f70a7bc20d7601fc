//! The data types of the ABI (`PluginApiDataTypes.h`).
//!
//! C enums cross the boundary as `int`. They are modelled as transparent newtypes
//! over `c_int` with one constant per enumerator, not as Rust enums: a value coming
//! from C that is not a known enumerator must not be undefined behaviour.

use std::ffi::{c_char, c_int, c_void};

macro_rules! c_enum {
    (
        $(#[$meta:meta])*
        $name:ident { $( $(#[$vmeta:meta])* $variant:ident = $value:expr ),* $(,)? }
    ) => {
        $(#[$meta])*
        #[repr(transparent)]
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub struct $name(pub c_int);

        $( $(#[$vmeta])* pub const $variant: $name = $name($value); )*

        impl $name {
            /// The enumerator's C name, or `None` for a value C does not define.
            pub fn name(self) -> Option<&'static str> {
                match self.0 {
                    $( $value => Some(stringify!($variant)), )*
                    _ => None,
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                match self.name() {
                    Some(name) => write!(f, "{name}({})", self.0),
                    None => write!(f, "{}({})", stringify!($name), self.0),
                }
            }
        }
    };
}

c_enum! {
    /// Status returned by every plugin entry point (`hipdnnPluginStatus_t`).
    hipdnnPluginStatus_t {
        /// The call succeeded.
        HIPDNN_PLUGIN_STATUS_SUCCESS = 0,
        /// A null or otherwise invalid argument.
        HIPDNN_PLUGIN_STATUS_BAD_PARAM = 1,
        /// A well-formed argument with a value the plugin does not know (e.g. an engine id).
        HIPDNN_PLUGIN_STATUS_INVALID_VALUE = 2,
        /// Anything else that went wrong, including a panic inside the plugin.
        HIPDNN_PLUGIN_STATUS_INTERNAL_ERROR = 3,
        /// An allocation failed.
        HIPDNN_PLUGIN_STATUS_ALLOC_FAILED = 4,
        /// A well-formed call for which the plugin has nothing to supply.
        HIPDNN_PLUGIN_STATUS_NOT_APPLICABLE = 5,
        /// The object was not initialized.
        HIPDNN_PLUGIN_STATUS_NOT_INITIALIZED = 6,
    }
}

c_enum! {
    /// What kind of plugin a library is (`hipdnnPluginType_t`).
    hipdnnPluginType_t {
        /// Not set.
        HIPDNN_PLUGIN_TYPE_UNSPECIFIED = 0,
        /// An engine plugin: it executes graphs.
        HIPDNN_PLUGIN_TYPE_ENGINE = 1,
        /// A heuristic plugin: it ranks engines.
        HIPDNN_PLUGIN_TYPE_HEURISTIC = 2,
    }
}

c_enum! {
    /// What a prediction is about (`hipdnnEnginePredictionKind_t`).
    hipdnnEnginePredictionKind_t {
        /// Ordinary execution of an engine, tuning off.
        HIPDNN_ENGINE_PREDICTION_ENGINE = 0,
        /// An exact configuration, selected and predicted.
        HIPDNN_ENGINE_PREDICTION_CONFIGURATION = 1,
    }
}

c_enum! {
    /// Severity of a log message, and the level below which messages are dropped
    /// (`hipdnnSeverity_t`).
    hipdnnSeverity_t {
        /// Informational.
        HIPDNN_SEV_INFO = 0,
        /// Something unexpected that the plugin handled.
        HIPDNN_SEV_WARN = 1,
        /// A failure.
        HIPDNN_SEV_ERROR = 2,
        /// A failure the plugin cannot recover from.
        HIPDNN_SEV_FATAL = 3,
        /// As a level: log nothing.
        HIPDNN_SEV_OFF = 4,
    }
}

/// The host's log sink (`hipdnnCallback_t`): severity and a NUL-terminated message that
/// is valid only during the call.
pub type hipdnnCallback_t =
    Option<unsafe extern "C" fn(severity: hipdnnSeverity_t, message: *const c_char)>;

/// A byte span (`hipdnnPluginConstData_t`): serialized FlatBuffers cross the ABI this way.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct hipdnnPluginConstData_t {
    /// First byte; may be null only when `size` is 0.
    pub ptr: *const c_void,
    /// Number of bytes.
    pub size: usize,
}

impl Default for hipdnnPluginConstData_t {
    fn default() -> Self {
        Self {
            ptr: std::ptr::null(),
            size: 0,
        }
    }
}

/// A tensor's device buffer for one execution (`hipdnnPluginDeviceBuffer_t`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct hipdnnPluginDeviceBuffer_t {
    /// The tensor's uid in the graph.
    pub uid: i64,
    /// Device pointer to the tensor's data.
    pub ptr: *mut c_void,
}

/// Opaque target of [`hipdnnEnginePluginHandle_t`].
#[repr(C)]
#[derive(Debug)]
pub struct HipdnnEnginePluginHandle {
    _opaque: [u8; 0],
}

/// Opaque target of [`hipdnnEnginePluginExecutionContext_t`].
#[repr(C)]
#[derive(Debug)]
pub struct HipdnnEnginePluginExecutionContext {
    _opaque: [u8; 0],
}

/// Opaque target of [`hipStream_t`].
#[repr(C)]
#[derive(Debug)]
pub struct ihipStream_t {
    _opaque: [u8; 0],
}

/// A plugin handle: one per hipDNN handle and plugin.
pub type hipdnnEnginePluginHandle_t = *mut HipdnnEnginePluginHandle;
/// An execution context: a built plan.
pub type hipdnnEnginePluginExecutionContext_t = *mut HipdnnEnginePluginExecutionContext;
/// A HIP stream, opaque to the plugin ABI.
pub type hipStream_t = *mut ihipStream_t;

/// Size of the per-thread last-error buffer, terminating NUL included.
pub const HIPDNN_PLUGIN_ERROR_STRING_MAX_LENGTH: usize = 2048;

/// Major version of the engine plugin C ABI described here.
pub const HIPDNN_ENGINE_API_VERSION_MAJOR: u32 = 1;
/// Minor version of the engine plugin C ABI described here.
pub const HIPDNN_ENGINE_API_VERSION_MINOR: u32 = 4;
/// Patch version of the engine plugin C ABI described here.
pub const HIPDNN_ENGINE_API_VERSION_PATCH: u32 = 0;
/// The engine plugin C ABI version as reported by `hipdnnPluginGetApiVersion`.
pub const HIPDNN_ENGINE_API_VERSION: &std::ffi::CStr = c"1.4.0";

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{align_of, offset_of, size_of};

    #[test]
    fn layouts_match_the_c_headers() {
        assert_eq!(size_of::<hipdnnPluginStatus_t>(), size_of::<c_int>());
        assert_eq!(size_of::<hipdnnPluginConstData_t>(), 2 * size_of::<usize>());
        assert_eq!(
            offset_of!(hipdnnPluginConstData_t, size),
            size_of::<usize>()
        );
        assert_eq!(size_of::<hipdnnPluginDeviceBuffer_t>(), 16);
        assert_eq!(offset_of!(hipdnnPluginDeviceBuffer_t, ptr), 8);
        assert_eq!(align_of::<hipdnnPluginDeviceBuffer_t>(), 8);
    }

    #[test]
    fn status_values_are_hipdnns() {
        let values = [
            (HIPDNN_PLUGIN_STATUS_SUCCESS, 0),
            (HIPDNN_PLUGIN_STATUS_BAD_PARAM, 1),
            (HIPDNN_PLUGIN_STATUS_INVALID_VALUE, 2),
            (HIPDNN_PLUGIN_STATUS_INTERNAL_ERROR, 3),
            (HIPDNN_PLUGIN_STATUS_ALLOC_FAILED, 4),
            (HIPDNN_PLUGIN_STATUS_NOT_APPLICABLE, 5),
            (HIPDNN_PLUGIN_STATUS_NOT_INITIALIZED, 6),
        ];
        for (status, value) in values {
            assert_eq!(status.0, value);
        }
        assert_eq!(HIPDNN_PLUGIN_TYPE_ENGINE.0, 1);
        assert_eq!(HIPDNN_SEV_OFF.0, 4);
        assert_eq!(
            HIPDNN_PLUGIN_STATUS_BAD_PARAM.to_string(),
            "HIPDNN_PLUGIN_STATUS_BAD_PARAM(1)"
        );
        assert_eq!(
            hipdnnPluginStatus_t(42).to_string(),
            "hipdnnPluginStatus_t(42)"
        );
    }
}
