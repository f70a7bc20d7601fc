//! Status codes become errors that name the call: [`MiopenError`] and [`HipError`].

use super::load::{c_text, hip_error_text};
use super::sys::{HipApi, MiopenApi, hipError_t, miopenStatus_t};

/// A MIOpen call that failed: the call, the status and MIOpen's text for it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{call} failed with {status} ({text}){context}")]
pub struct MiopenError {
    /// The C function.
    pub call: &'static str,
    /// What it returned.
    pub status: miopenStatus_t,
    /// `miopenGetErrorString`'s text.
    pub text: String,
    /// What we were doing (`": while ..."`), when known.
    pub context: String,
}

impl MiopenError {
    /// Adds what we were doing to the message.
    #[must_use]
    pub fn context(mut self, what: impl std::fmt::Display) -> Self {
        self.context = format!(": {what}");
        self
    }

    /// Whether MIOpen said the configuration is not supported (rather than failing).
    pub fn is_unsupported(&self) -> bool {
        matches!(
            self.status,
            miopenStatus_t::miopenStatusUnsupportedOp | miopenStatus_t::miopenStatusNotImplemented
        )
    }
}

/// A HIP call that failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{call} failed with {status} ({text})")]
pub struct HipError {
    /// The C function.
    pub call: &'static str,
    /// What it returned.
    pub status: hipError_t,
    /// `hipGetErrorString`'s text.
    pub text: String,
}

/// `Ok` for success, else the error for `call`.
#[inline]
pub fn check(
    api: &MiopenApi,
    status: miopenStatus_t,
    call: &'static str,
) -> Result<(), MiopenError> {
    if status == miopenStatus_t::miopenStatusSuccess {
        Ok(())
    } else {
        Err(miopen_error(api, status, call))
    }
}

#[cold]
#[inline(never)]
fn miopen_error(api: &MiopenApi, status: miopenStatus_t, call: &'static str) -> MiopenError {
    // SAFETY: takes any status; returns a static string or null.
    let text = unsafe { c_text((api.miopenGetErrorString)(status)) };
    MiopenError {
        call,
        status,
        text,
        context: String::new(),
    }
}

/// `Ok` for success, else the error for `call`.
#[inline]
pub fn check_hip(api: &HipApi, status: hipError_t, call: &'static str) -> Result<(), HipError> {
    if status == hipError_t::hipSuccess {
        Ok(())
    } else {
        Err(HipError {
            call,
            status,
            text: hip_error_text(api, status),
        })
    }
}
