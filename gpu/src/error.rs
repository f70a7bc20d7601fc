//! [`GpuError`]: why the GPU cannot be opened or an operation on it failed.

use cudarc::driver::sys::CUresult;

/// Why [`Gpu::open`](crate::Gpu::open) or an operation on the GPU failed.
///
/// The messages are one line, lowercase, naming what failed; the unavailable ones
/// ([`GpuError::is_unavailable`]) say why this machine has no usable GPU.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GpuError {
    /// No CUDA driver library could be loaded.
    #[error(
        "libcuda.so.1 not found: no CUDA driver library loads under the names {}, searched by the dynamic loader (LD_LIBRARY_PATH, the ld.so cache, /lib, /usr/lib)",
        searched.join(", ")
    )]
    LibraryNotFound {
        /// The names tried, in order.
        searched: Vec<String>,
    },
    /// The driver library lacks a function this crate calls (a driver too old).
    #[error(
        "the CUDA driver library has no {symbol}: the driver is too old (CUDA 12.8 or later is needed)"
    )]
    MissingSymbol {
        /// The function's name.
        symbol: String,
    },
    /// The driver found no device (or none visible: `CUDA_VISIBLE_DEVICES`).
    #[error("no CUDA device{}", detail.as_deref().map(|d| format!(" ({d})")).unwrap_or_default())]
    NoDevice {
        /// The driver's own words, when it said more (e.g. `cuInit: CUDA_ERROR_NO_DEVICE`).
        detail: Option<String>,
    },
    /// The device ordinal asked for does not exist.
    #[error("no CUDA device {ordinal}: the driver sees {count}")]
    NoSuchDevice {
        /// The ordinal asked for.
        ordinal: usize,
        /// How many devices the driver sees.
        count: usize,
    },
    /// A driver call failed.
    #[error("CUDA driver error {} in {call}", error_name(*code))]
    Driver {
        /// The driver function.
        call: &'static str,
        /// Its result.
        code: CUresult,
    },
    /// Loading the library or a symbol panicked inside `cudarc` (caught).
    #[error("loading the CUDA driver failed: {message}")]
    LoadPanicked {
        /// The panic's message.
        message: String,
    },
    /// A copy whose host and device sizes differ.
    #[error("{op}: the host slice has {host} bytes, the device buffer {device}")]
    SizeMismatch {
        /// The operation.
        op: &'static str,
        /// Bytes of the host slice.
        host: usize,
        /// Bytes of the device buffer.
        device: usize,
    },
}

impl GpuError {
    /// Whether the error says that this machine has no usable GPU (no library, a
    /// driver too old, no device, or the driver failing to start), as opposed to an
    /// operation failing on a GPU that opened.
    pub fn is_unavailable(&self) -> bool {
        match self {
            Self::LibraryNotFound { .. }
            | Self::MissingSymbol { .. }
            | Self::NoDevice { .. }
            | Self::NoSuchDevice { .. }
            | Self::LoadPanicked { .. } => true,
            Self::Driver { call, .. } => *call == "cuInit",
            Self::SizeMismatch { .. } => false,
        }
    }

    /// The failure of driver function `call`.
    pub(crate) fn driver(call: &'static str, error: cudarc::driver::DriverError) -> Self {
        Self::Driver {
            call,
            code: error.0,
        }
    }
}

/// `CUDA_ERROR_OUT_OF_MEMORY` for a result code (its name in the driver's headers),
/// without calling the driver.
pub fn error_name(code: CUresult) -> String {
    format!("{code:?}")
}

/// Result of this crate's operations.
pub type GpuResult<T> = Result<T, GpuError>;

/// Wraps a `cudarc` driver result with the name of the call.
pub(crate) trait Call<T> {
    /// The result, its error naming `call`.
    fn call(self, call: &'static str) -> GpuResult<T>;
}

impl<T> Call<T> for Result<T, cudarc::driver::DriverError> {
    fn call(self, call: &'static str) -> GpuResult<T> {
        self.map_err(|e| GpuError::driver(call, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_what_failed() {
        let e = GpuError::Driver {
            call: "cuMemAlloc_v2",
            code: CUresult::CUDA_ERROR_OUT_OF_MEMORY,
        };
        assert_eq!(
            e.to_string(),
            "CUDA driver error CUDA_ERROR_OUT_OF_MEMORY in cuMemAlloc_v2"
        );
        assert!(!e.is_unavailable());
        let init = GpuError::Driver {
            call: "cuInit",
            code: CUresult::CUDA_ERROR_INVALID_DEVICE,
        };
        assert!(init.is_unavailable());
        assert_eq!(
            GpuError::NoDevice { detail: None }.to_string(),
            "no CUDA device"
        );
        assert_eq!(
            GpuError::NoDevice {
                detail: Some("cuInit: CUDA_ERROR_NO_DEVICE".into())
            }
            .to_string(),
            "no CUDA device (cuInit: CUDA_ERROR_NO_DEVICE)"
        );
        let lib = GpuError::LibraryNotFound {
            searched: vec!["libcuda.so".into(), "libcuda.so.1".into()],
        };
        assert!(
            lib.to_string().starts_with("libcuda.so.1 not found: "),
            "{lib}"
        );
        assert!(
            lib.to_string().contains("libcuda.so, libcuda.so.1"),
            "{lib}"
        );
    }
}
