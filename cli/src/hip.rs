//! `hipdnn run` on a HIP device: buffers from `hipMalloc`, a `hipStreamCreate` stream
//! set on the handle, timing with HIP events (the HIP runtime loaded at run time
//! through `hipdnn-rocm-sys`; `HIPDNN_HIP_LIBRARY` names one).

use std::ffi::c_void;

use hipdnn_backend::{Handle, Plan, VariantPack};
use hipdnn_rocm_sys::hip::Hip;
use hipdnn_rocm_sys::{hipEvent_t, hipMemcpyKind, hipStream_t};

use crate::error::{CliError, CliResult};
use crate::tensors::{AlignedBuffer, IoTensor};

/// A HIP device, a buffer per tensor, the workspace and a stream; all freed on drop
/// (after the stream's work is done).
pub struct HipRun {
    hip: Hip,
    stream: hipStream_t,
    buffers: Vec<*mut c_void>,
    workspace: *mut c_void,
}

impl Drop for HipRun {
    fn drop(&mut self) {
        let api = &self.hip.api;
        // SAFETY: the stream and buffers were created by this runtime and are released
        // once, after the queued work (if any) has finished.
        unsafe {
            let _ = (api.hipStreamSynchronize)(self.stream);
            for &b in self.buffers.iter().chain([&self.workspace]) {
                if !b.is_null() {
                    let _ = (api.hipFree)(b);
                }
            }
            if !self.stream.is_null() {
                let _ = (api.hipStreamDestroy)(self.stream);
            }
        }
    }
}

impl HipRun {
    /// Allocates a buffer per tensor holding a copy of its host buffer, the workspace,
    /// and a stream.
    ///
    /// # Errors
    /// HIP's failures, naming the tensor.
    pub fn new(
        hip: Hip,
        tensors: &[IoTensor],
        host: &[AlignedBuffer],
        workspace_size: usize,
    ) -> CliResult<Self> {
        let mut run = Self {
            hip,
            stream: std::ptr::null_mut(),
            buffers: Vec::with_capacity(tensors.len()),
            workspace: std::ptr::null_mut(),
        };
        for (t, h) in tensors.iter().zip(host) {
            let what = format!("tensor {}", t.label());
            let ptr = run.alloc(h.as_slice().len(), &what)?;
            run.buffers.push(ptr);
            let bytes = h.as_slice();
            // SAFETY: `ptr` holds `bytes.len()` bytes (at least one was allocated).
            let status = unsafe {
                (run.hip.api.hipMemcpy)(
                    ptr,
                    bytes.as_ptr().cast(),
                    bytes.len(),
                    hipMemcpyKind::hipMemcpyHostToDevice,
                )
            };
            run.check(status, "hipMemcpy", &what)?;
        }
        if workspace_size > 0 {
            run.workspace = run.alloc(
                workspace_size,
                &format!("workspace of {workspace_size} bytes"),
            )?;
        }
        let mut stream = std::ptr::null_mut();
        // SAFETY: a valid out-pointer.
        let status = unsafe { (run.hip.api.hipStreamCreate)(&mut stream) };
        run.check(status, "hipStreamCreate", "creating a stream")?;
        run.stream = stream;
        Ok(run)
    }

    fn check(&self, status: hipdnn_rocm_sys::hipError_t, call: &str, what: &str) -> CliResult<()> {
        self.hip
            .check(status, call)
            .map_err(|e| CliError::failed(format!("{}: {what}: {e}", self.device_name())))
    }

    fn alloc(&self, len: usize, what: &str) -> CliResult<*mut c_void> {
        let mut ptr = std::ptr::null_mut();
        // SAFETY: a valid out-pointer.
        let status = unsafe { (self.hip.api.hipMalloc)(&mut ptr, len.max(1)) };
        self.check(status, "hipMalloc", what)?;
        Ok(ptr)
    }

    /// `HIP device 0 (<library>)`.
    pub fn device_name(&self) -> String {
        format!("HIP device 0 ({})", self.hip.path.display())
    }

    /// Sets the stream on every plugin handle of `handle`.
    ///
    /// # Errors
    /// A plugin refusing the stream.
    pub fn set_stream(&self, handle: &Handle) -> CliResult<()> {
        // SAFETY: a live stream of the device the plugins run on; `self` outlives the
        // handle's use of it (declared before the handle, dropped after it).
        unsafe { handle.set_stream(self.stream.cast()) }
            .map_err(|e| CliError::backend("setting the stream on the handle", e))
    }

    /// The variant pack: each tensor's device buffer.
    pub fn pack(&self, tensors: &[IoTensor]) -> VariantPack {
        let mut pack = VariantPack::new();
        for (t, &b) in tensors.iter().zip(&self.buffers) {
            pack.set(t.uid, b);
        }
        pack
    }

    /// Waits for the stream.
    ///
    /// # Errors
    /// HIP's (a faulting kernel shows here).
    pub fn synchronize(&self) -> CliResult<()> {
        // SAFETY: a live stream.
        let status = unsafe { (self.hip.api.hipStreamSynchronize)(self.stream) };
        self.check(status, "hipStreamSynchronize", "after execution")
    }

    /// Runs the plan `n` times on the stream with an event between executions; each
    /// execution's device time in milliseconds.
    ///
    /// # Errors
    /// The execution's or HIP's.
    pub fn execute_timed(
        &self,
        plan: &Plan<'_>,
        pack: &VariantPack,
        n: usize,
        mut tick: impl FnMut(),
    ) -> CliResult<Vec<f64>> {
        let api = &self.hip.api;
        let events = Events::new(self, n + 1)?;
        let record = |e: hipEvent_t| {
            // SAFETY: a live event and stream.
            let status = unsafe { (api.hipEventRecord)(e, self.stream) };
            self.check(status, "hipEventRecord", "timing")
        };
        record(events.0[0])?;
        for &event in &events.0[1..] {
            // SAFETY: every pointer of `pack` is a live device buffer of its tensor's
            // byte length, one per tensor; the workspace has the plan's size; the engine
            // takes device memory (the caller checked); everything outlives the work,
            // which `synchronize` waits for before anything is freed.
            unsafe { plan.execute(pack, self.workspace) }
                .map_err(|e| CliError::backend("execution failed", e))?;
            record(event)?;
            tick();
        }
        self.synchronize()?;
        events
            .0
            .windows(2)
            .map(|pair| {
                let mut ms = 0f32;
                // SAFETY: two recorded, completed events.
                let status = unsafe { (api.hipEventElapsedTime)(&mut ms, pair[0], pair[1]) };
                self.check(status, "hipEventElapsedTime", "timing")
                    .map(|()| f64::from(ms))
            })
            .collect()
    }

    /// Copies every tensor back into its host buffer (after [`synchronize`](Self::synchronize)).
    ///
    /// # Errors
    /// HIP's, naming the tensor.
    pub fn copy_back(&self, tensors: &[IoTensor], host: &mut [AlignedBuffer]) -> CliResult<()> {
        for ((t, &d), h) in tensors.iter().zip(&self.buffers).zip(host) {
            let out = h.as_mut_slice();
            // SAFETY: `d` holds the tensor's bytes (as many as its host buffer).
            let status = unsafe {
                (self.hip.api.hipMemcpy)(
                    out.as_mut_ptr().cast(),
                    d,
                    out.len(),
                    hipMemcpyKind::hipMemcpyDeviceToHost,
                )
            };
            self.check(
                status,
                "hipMemcpy",
                &format!("copying tensor {} back", t.label()),
            )?;
        }
        Ok(())
    }
}

/// HIP events, destroyed on drop.
struct Events<'a>(Vec<hipEvent_t>, &'a HipRun);

impl<'a> Events<'a> {
    fn new(run: &'a HipRun, n: usize) -> CliResult<Self> {
        let mut events = Self(Vec::with_capacity(n), run);
        for _ in 0..n {
            let mut e = std::ptr::null_mut();
            // SAFETY: a valid out-pointer.
            let status = unsafe { (run.hip.api.hipEventCreate)(&mut e) };
            run.check(status, "hipEventCreate", "timing")?;
            events.0.push(e);
        }
        Ok(events)
    }
}

impl Drop for Events<'_> {
    fn drop(&mut self) {
        for &e in &self.0 {
            // SAFETY: created by hipEventCreate, destroyed once.
            let _ = unsafe { (self.1.hip.api.hipEventDestroy)(e) };
        }
    }
}
