//! Host-side GPU memory, streams and timing for hipDNN applications and tools (the
//! `hipdnn` command, the conformance runner): what a program needs around a device
//! engine's `Plan::execute`, and nothing an engine itself needs.
//!
//! # Design
//!
//! * **The CUDA driver API, loaded at run time.** Through `cudarc` with dynamic
//!   loading: the crate builds on machines without CUDA, and a binary using it runs on
//!   machines without a GPU, where [`Gpu::open`] says why there is none.
//! * **Probe first, never panic.** `cudarc` resolves each driver function on its first
//!   call and panics when the library or the function is missing. [`Gpu::open`] loads
//!   the library and resolves every function this crate calls ([`SYMBOLS`]) before
//!   calling any (and catches a panic should one happen all the same), then runs
//!   `cuInit` and counts the devices. The failures are [`GpuError`]s with the reason:
//!   `libcuda.so.1 not found: …`, `the CUDA driver library has no cuEventElapsedTime_v2:
//!   …`, `no CUDA device`, `CUDA driver error CUDA_ERROR_… in cuInit`.
//! * **The primary context.** A [`Gpu`] retains the device's primary context, the one
//!   the CUDA runtime, cuDNN and cuBLAS use, so a plugin built on them sees the buffers
//!   and streams made here. Every operation makes that context current on the calling
//!   thread first (cheap: a driver query, and a set only when it is not current), so a
//!   `Gpu` works from any thread.
//! * **Three layers** (as `cudarc` itself, see STYLE.md): `cudarc::driver::sys` (the raw
//!   bindings), this crate's private `driver` module (one thin wrapper per function,
//!   returning [`GpuResult`] with the function's name, callable only once the probe
//!   passed), and the safe RAII types: [`Gpu`], [`DeviceBuffer`], [`Stream`], [`Event`].
//! * **Blocking copies, non-blocking streams.** [`DeviceBuffer`]'s copies are complete
//!   when they return; [`Stream`]s are non-blocking (work on them does not wait for the
//!   default stream, and the copies do not wait for them), so synchronize a stream
//!   before reading back what it wrote, as a `hipdnn run` does.
//!
//! # Where the driver library comes from
//!
//! `cudarc` offers no path override: it `dlopen`s, in order, the names of
//! [`library_candidates`] (`libcuda.so`, `libcuda64.so`, …, `libcuda.so.13`,
//! `libcuda.so.12`, …, `libcuda.so.1`), each searched by the dynamic loader
//! (`LD_LIBRARY_PATH`, then the `ld.so` cache, then `/lib` and `/usr/lib`). To choose a
//! driver library, put its directory first on `LD_LIBRARY_PATH`; keep the CUDA
//! toolkit's `compat/` directory off it unless the forward-compatibility driver is meant.
//!
//! # Example
//!
//! ```no_run
//! use hipdnn_gpu::Gpu;
//!
//! # fn main() -> Result<(), hipdnn_gpu::GpuError> {
//! let gpu = match Gpu::open_default() {
//!     Ok(gpu) => gpu,
//!     Err(e) if e.is_unavailable() => {
//!         eprintln!("no GPU: {e}");
//!         return Ok(());
//!     }
//!     Err(e) => return Err(e),
//! };
//! let input = gpu.copy_from_host(&[0u8; 4096])?;
//! let output = gpu.alloc_zeroed(4096)?;
//! let stream = gpu.stream()?;
//! let (start, end) = (gpu.event()?, gpu.event()?);
//! start.record(&stream)?;
//! // ... enqueue work reading `input.as_ptr()` and writing `output.as_ptr()` on
//! // `stream.as_raw()` ...
//! end.record(&stream)?;
//! stream.synchronize()?;
//! println!("{:.3} ms on {gpu}", start.elapsed_ms(&end)?);
//! let bytes = output.to_host_vec()?;
//! # let _ = (input, bytes);
//! # Ok(())
//! # }
//! ```

#![deny(missing_docs)]

mod device;
mod driver;
mod error;
mod memory;
mod stream;

pub use device::Gpu;
pub use driver::{SYMBOLS, library_candidates};
pub use error::{GpuError, GpuResult, error_name};
pub use memory::DeviceBuffer;
pub use stream::{Event, Stream};
