//! The device path of `hipdnn run`: device buffers for an engine that takes device
//! memory (from `hipdnn-gpu`, the CUDA driver loaded at run time), a stream for the
//! handle, and timing with CUDA events on it.
//!
//! The host buffers of `run` stay the staging area: inputs (and the `0xFF`-poisoned
//! outputs) are copied in before the first execution and every tensor is copied back
//! after the last, so writing the outputs and `--check` read host memory as on the
//! host path (including the check that the engine left its inputs alone).

use std::ffi::c_void;

use hipdnn_backend::{Handle, Plan, VariantPack};
use hipdnn_gpu::{DeviceBuffer, Event, Gpu, Stream};

use crate::error::{CliError, CliResult};
use crate::tensors::{AlignedBuffer, IoTensor};

/// The GPU, a device buffer per tensor, the workspace and the stream the handle uses.
///
/// Declare it before the [`Handle`] it is set on, so that it is dropped after: the
/// handle's plugins keep the stream.
pub struct DeviceRun {
    gpu: Gpu,
    stream: Stream,
    buffers: Vec<DeviceBuffer>,
    workspace: Option<DeviceBuffer>,
}

impl Drop for DeviceRun {
    fn drop(&mut self) {
        // On an early error executions may still be queued: let them finish before
        // their buffers are freed.
        let _ = self.stream.synchronize();
    }
}

impl DeviceRun {
    /// Opens the GPU, allocates a buffer per tensor (a copy of its host buffer) and the
    /// plan's workspace, and creates the stream.
    ///
    /// # Errors
    /// No GPU (the reason from [`Gpu::open`], naming the engine that needs it); the
    /// driver's failures, naming the tensor.
    pub fn new(
        engine: &str,
        tensors: &[IoTensor],
        host: &[AlignedBuffer],
        workspace_size: usize,
    ) -> CliResult<Self> {
        let gpu = Gpu::open_default().map_err(|e| {
            CliError::failed(format!(
                "engine {engine} takes device memory, and no GPU is available: {e}"
            ))
        })?;
        let gpu_error = |what: String| {
            let at = gpu.to_string();
            move |e: hipdnn_gpu::GpuError| CliError::failed(format!("{at}: {what}: {e}"))
        };
        let mut buffers = Vec::with_capacity(tensors.len());
        for (t, h) in tensors.iter().zip(host) {
            let buffer = gpu
                .copy_from_host(h.as_slice())
                .map_err(gpu_error(format!("tensor {}", t.label())))?;
            buffers.push(buffer);
        }
        let workspace = match workspace_size {
            0 => None,
            size => Some(
                gpu.alloc(size)
                    .map_err(gpu_error(format!("workspace of {size} bytes")))?,
            ),
        };
        let stream = gpu
            .stream()
            .map_err(gpu_error("creating a stream".to_owned()))?;
        Ok(Self {
            gpu,
            stream,
            buffers,
            workspace,
        })
    }

    /// `CUDA device 0 (NVIDIA H200)`.
    pub fn device_name(&self) -> String {
        self.gpu.to_string()
    }

    /// Sets the stream on every plugin handle of `handle`.
    ///
    /// # Errors
    /// A plugin refusing the stream.
    pub fn set_stream(&self, handle: &Handle) -> CliResult<()> {
        // SAFETY: the stream is a live stream of the device the plugins run on, and
        // `self` outlives the handle's use of it (the type's contract: declared before
        // the handle, dropped after it).
        unsafe { handle.set_stream(self.stream.as_raw().cast()) }
            .map_err(|e| CliError::backend("setting the stream on the handle", e))
    }

    /// The variant pack: each tensor's device buffer.
    pub fn pack(&self, tensors: &[IoTensor]) -> VariantPack {
        let mut pack = VariantPack::new();
        for (t, b) in tensors.iter().zip(&self.buffers) {
            pack.set(t.uid, b.as_ptr());
        }
        pack
    }

    fn workspace_ptr(&self) -> *mut c_void {
        self.workspace
            .as_ref()
            .map_or(std::ptr::null_mut(), DeviceBuffer::as_ptr)
    }

    fn gpu_error(&self, what: &str) -> impl Fn(hipdnn_gpu::GpuError) -> CliError {
        let at = format!("{}: {what}", self.gpu);
        move |e| CliError::failed(format!("{at}: {e}"))
    }

    /// Enqueues one execution on the stream (not waiting for it).
    fn enqueue(&self, plan: &Plan<'_>, pack: &VariantPack) -> CliResult<()> {
        // SAFETY: every pointer of `pack` is a live device buffer of its tensor's
        // `byte_len` (the extent of its dims, strides and data type), 256-byte aligned
        // (`cuMemAlloc`), one per tensor; the workspace has the plan's size. The engine
        // takes device memory (checked by the caller: `Plan::memory_kind`); all of it
        // outlives the work, which `synchronize` waits for before anything is freed.
        unsafe { plan.execute(pack, self.workspace_ptr()) }
            .map_err(|e| CliError::backend("execution failed", e))
    }

    /// Waits for the stream.
    pub fn synchronize(&self) -> CliResult<()> {
        self.stream
            .synchronize()
            .map_err(self.gpu_error("synchronizing the stream after execution"))
    }

    fn events(&self, n: usize) -> CliResult<Vec<Event>> {
        (0..n)
            .map(|_| {
                self.gpu
                    .event()
                    .map_err(self.gpu_error("creating an event"))
            })
            .collect()
    }

    fn record(&self, event: &Event) -> CliResult<()> {
        event
            .record(&self.stream)
            .map_err(self.gpu_error("recording an event"))
    }

    /// Runs the plan once, timed with events around it; milliseconds of device time.
    pub fn execute_once(&self, plan: &Plan<'_>, pack: &VariantPack) -> CliResult<f64> {
        Ok(self.execute_timed(plan, pack, 1, || {})?[0])
    }

    /// Runs the plan `n` times back to back on the stream with an event between
    /// executions, waits, and gives each execution's device time in milliseconds;
    /// `tick` runs after each enqueue (the progress bar).
    pub fn execute_timed(
        &self,
        plan: &Plan<'_>,
        pack: &VariantPack,
        n: usize,
        mut tick: impl FnMut(),
    ) -> CliResult<Vec<f64>> {
        let events = self.events(n + 1)?;
        self.record(&events[0])?;
        for event in &events[1..] {
            self.enqueue(plan, pack)?;
            self.record(event)?;
            tick();
        }
        self.synchronize()?;
        events
            .windows(2)
            .map(|pair| {
                pair[0]
                    .elapsed_ms(&pair[1])
                    .map(f64::from)
                    .map_err(self.gpu_error("reading the event times"))
            })
            .collect()
    }

    /// Copies every tensor back into its host buffer (after [`synchronize`](Self::synchronize)).
    ///
    /// # Errors
    /// The driver's, naming the tensor (a kernel fault shows here at the latest).
    pub fn copy_back(&self, tensors: &[IoTensor], host: &mut [AlignedBuffer]) -> CliResult<()> {
        for ((t, d), h) in tensors.iter().zip(&self.buffers).zip(host) {
            d.copy_to_host(h.as_mut_slice())
                .map_err(self.gpu_error(&format!("copying tensor {} back", t.label())))?;
        }
        Ok(())
    }
}
