//! The device path of `hipdnn run`: device buffers for an engine that takes device
//! memory, a stream for the handle, and timing with events on it. The memory is HIP's
//! when a HIP runtime with a device is there ([`crate::hip`]: the runtime hipDNN's
//! engines are written for; `HIPDNN_HIP_LIBRARY` names one), else CUDA's (from
//! `hipdnn-gpu`, the CUDA driver loaded at run time).
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

/// Device buffers, the workspace and a stream, on a HIP or a CUDA device.
///
/// Declare it before the [`Handle`] it is set on, so that it is dropped after: the
/// handle's plugins keep the stream.
pub enum DeviceRun {
    /// HIP device memory.
    Hip(crate::hip::HipRun),
    /// CUDA device memory.
    Cuda(CudaRun),
}

impl DeviceRun {
    /// Opens the device (HIP if a HIP runtime with a device is there, else CUDA),
    /// allocates a buffer per tensor (a copy of its host buffer) and the plan's
    /// workspace, and creates the stream.
    ///
    /// # Errors
    /// No device (both reasons, naming the engine that needs it); the runtime's
    /// failures, naming the tensor.
    pub fn new(
        engine: &str,
        tensors: &[IoTensor],
        host: &[AlignedBuffer],
        workspace_size: usize,
    ) -> CliResult<Self> {
        match hipdnn_rocm_sys::hip::Hip::open() {
            Ok(hip) => crate::hip::HipRun::new(hip, tensors, host, workspace_size).map(Self::Hip),
            Err(hip_reason) => {
                CudaRun::new(engine, tensors, host, workspace_size, &hip_reason).map(Self::Cuda)
            }
        }
    }

    /// `CUDA device 0 (NVIDIA H200)`, `HIP device 0 (libamdhip64.so.6)`.
    pub fn device_name(&self) -> String {
        match self {
            Self::Hip(d) => d.device_name(),
            Self::Cuda(d) => d.device_name(),
        }
    }

    /// Sets the stream on every plugin handle of `handle`.
    ///
    /// # Errors
    /// A plugin refusing the stream.
    pub fn set_stream(&self, handle: &Handle) -> CliResult<()> {
        match self {
            Self::Hip(d) => d.set_stream(handle),
            Self::Cuda(d) => d.set_stream(handle),
        }
    }

    /// The variant pack: each tensor's device buffer.
    pub fn pack(&self, tensors: &[IoTensor]) -> VariantPack {
        match self {
            Self::Hip(d) => d.pack(tensors),
            Self::Cuda(d) => d.pack(tensors),
        }
    }

    /// Waits for the stream.
    ///
    /// # Errors
    /// The runtime's.
    pub fn synchronize(&self) -> CliResult<()> {
        match self {
            Self::Hip(d) => d.synchronize(),
            Self::Cuda(d) => d.synchronize(),
        }
    }

    /// Runs the plan once, timed with events around it; milliseconds of device time.
    ///
    /// # Errors
    /// The execution's or the runtime's.
    pub fn execute_once(&self, plan: &Plan<'_>, pack: &VariantPack) -> CliResult<f64> {
        Ok(self.execute_timed(plan, pack, 1, || {})?[0])
    }

    /// Runs the plan `n` times back to back on the stream with an event between
    /// executions, waits, and gives each execution's device time in milliseconds;
    /// `tick` runs after each enqueue (the progress bar).
    ///
    /// # Errors
    /// The execution's or the runtime's.
    pub fn execute_timed(
        &self,
        plan: &Plan<'_>,
        pack: &VariantPack,
        n: usize,
        tick: impl FnMut(),
    ) -> CliResult<Vec<f64>> {
        match self {
            Self::Hip(d) => d.execute_timed(plan, pack, n, tick),
            Self::Cuda(d) => d.execute_timed(plan, pack, n, tick),
        }
    }

    /// Copies every tensor back into its host buffer (after [`synchronize`](Self::synchronize)).
    ///
    /// # Errors
    /// The runtime's, naming the tensor (a kernel fault shows here at the latest).
    pub fn copy_back(&self, tensors: &[IoTensor], host: &mut [AlignedBuffer]) -> CliResult<()> {
        match self {
            Self::Hip(d) => d.copy_back(tensors, host),
            Self::Cuda(d) => d.copy_back(tensors, host),
        }
    }
}

/// A CUDA device, a device buffer per tensor, the workspace and the stream.
pub struct CudaRun {
    gpu: Gpu,
    stream: Stream,
    buffers: Vec<DeviceBuffer>,
    workspace: Option<DeviceBuffer>,
}

impl Drop for CudaRun {
    fn drop(&mut self) {
        // On an early error executions may still be queued: let them finish before
        // their buffers are freed.
        let _ = self.stream.synchronize();
    }
}

impl CudaRun {
    fn new(
        engine: &str,
        tensors: &[IoTensor],
        host: &[AlignedBuffer],
        workspace_size: usize,
        hip_reason: &str,
    ) -> CliResult<Self> {
        let gpu = Gpu::open_default().map_err(|e| {
            CliError::failed(format!(
                "engine {engine} takes device memory, and no GPU is available: HIP: {hip_reason}; CUDA: {e}"
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

    fn device_name(&self) -> String {
        self.gpu.to_string()
    }

    fn set_stream(&self, handle: &Handle) -> CliResult<()> {
        // SAFETY: the stream is a live stream of the device the plugins run on, and
        // `self` outlives the handle's use of it (the type's contract: declared before
        // the handle, dropped after it).
        unsafe { handle.set_stream(self.stream.as_raw().cast()) }
            .map_err(|e| CliError::backend("setting the stream on the handle", e))
    }

    fn pack(&self, tensors: &[IoTensor]) -> VariantPack {
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

    fn synchronize(&self) -> CliResult<()> {
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

    fn execute_timed(
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

    fn copy_back(&self, tensors: &[IoTensor], host: &mut [AlignedBuffer]) -> CliResult<()> {
        for ((t, d), h) in tensors.iter().zip(&self.buffers).zip(host) {
            d.copy_to_host(h.as_mut_slice())
                .map_err(self.gpu_error(&format!("copying tensor {} back", t.label())))?;
        }
        Ok(())
    }
}
