//! `hipdnn-gpu` end to end: without a GPU (no `libcuda`, or no device), opening fails
//! with the reason and nothing panics; with one, memory round-trips, streams
//! synchronize and events time. The tests that need a device are ignored by default
//! (CI has none): run them with `cargo test -p hipdnn-gpu --test gpu -- --ignored` on a
//! machine with an NVIDIA GPU, where they fail if it does not open.

use hipdnn_gpu::{Gpu, GpuError};

/// The GPU, for the tests that need one.
fn gpu() -> Gpu {
    Gpu::open_default().unwrap_or_else(|e| panic!("this test needs a CUDA GPU: {e}"))
}

/// The GPU, or `None` after checking the unavailable error.
fn gpu_or_reason() -> Option<Gpu> {
    match Gpu::open_default() {
        Ok(gpu) => Some(gpu),
        Err(e) => {
            assert!(e.is_unavailable(), "not an unavailable error: {e:?}");
            let text = e.to_string();
            assert!(!text.ends_with('.'), "{text}");
            match &e {
                GpuError::LibraryNotFound { searched } => {
                    assert!(text.starts_with("libcuda.so.1 not found"), "{text}");
                    assert_eq!(searched[0], "libcuda.so");
                }
                GpuError::NoDevice { .. } => assert!(text.starts_with("no CUDA device")),
                _ => {}
            }
            None
        }
    }
}

#[test]
fn open_without_a_gpu_is_an_error_not_a_panic() {
    let first = std::panic::catch_unwind(Gpu::open_default);
    let first = first.expect("Gpu::open panicked");
    // The probe is kept: the same answer again, and for any ordinal.
    let again = Gpu::open(0).map(|g| g.ordinal());
    assert_eq!(
        first
            .as_ref()
            .map(Gpu::ordinal)
            .map_err(ToString::to_string),
        again.map_err(|e| e.to_string())
    );
    match Gpu::device_count() {
        Ok(n) => assert_eq!(n > 0, first.is_ok()),
        Err(e) => assert!(e.is_unavailable() && first.is_err(), "{e}"),
    }
    if let Ok(n) = Gpu::device_count() {
        let Err(e) = Gpu::open(n) else {
            panic!("opened device {n} of {n}")
        };
        assert!(
            matches!(e, GpuError::NoSuchDevice { .. } | GpuError::NoDevice { .. }),
            "{e}"
        );
    }
    let _ = gpu_or_reason();
}

#[test]
#[ignore = "needs a CUDA GPU (run with --ignored on one)"]
fn memory_round_trips_and_fills() {
    let gpu = gpu();
    let bytes: Vec<u8> = (0..1_000_003u32).map(|i| (i * 7) as u8).collect();
    let mut b = gpu.copy_from_host(&bytes).unwrap();
    assert_eq!(b.len(), bytes.len());
    assert_eq!(b.as_ptr() as usize % 256, 0);
    assert_eq!(b.to_host_vec().unwrap(), bytes);
    b.fill(0xAB).unwrap();
    assert!(b.to_host_vec().unwrap().iter().all(|&x| x == 0xAB));
    b.zero().unwrap();
    assert!(b.to_host_vec().unwrap().iter().all(|&x| x == 0));
    let e = b.copy_from_host(&[0; 3]).unwrap_err();
    assert!(matches!(e, GpuError::SizeMismatch { .. }), "{e}");
    let empty = gpu.alloc(0).unwrap();
    assert!(empty.is_empty() && !empty.as_ptr().is_null());
    let z = gpu.alloc_zeroed(4096).unwrap();
    assert_eq!(z.to_host_vec().unwrap(), vec![0; 4096]);
    let huge = gpu.alloc(usize::MAX / 2).unwrap_err();
    assert!(huge.to_string().contains("cuMemAlloc_v2"), "{huge}");
}

#[test]
#[ignore = "needs a CUDA GPU (run with --ignored on one)"]
fn streams_synchronize_and_events_time() {
    let gpu = gpu();
    let stream = gpu.stream().unwrap();
    assert!(!stream.as_raw().is_null());
    let (start, end) = (gpu.event().unwrap(), gpu.event().unwrap());
    start.record(&stream).unwrap();
    end.record(&stream).unwrap();
    stream.synchronize().unwrap();
    let ms = start.elapsed_ms(&end).unwrap();
    assert!((0.0..1000.0).contains(&ms), "{ms}");
    gpu.synchronize().unwrap();
    let never = gpu.event().unwrap();
    assert!(start.elapsed_ms(&never).is_err());
}

#[test]
#[ignore = "needs a CUDA GPU (run with --ignored on one)"]
fn a_gpu_works_from_other_threads() {
    let gpu = gpu();
    let buffer = gpu.copy_from_host(&[5u8; 64]).unwrap();
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                // A fresh thread has no current context: each operation makes it so.
                assert_eq!(buffer.to_host_vec().unwrap(), vec![5u8; 64]);
                let stream = gpu.stream().unwrap();
                stream.synchronize().unwrap();
                drop(gpu.alloc(1 << 20).unwrap());
            });
        }
    });
    println!("{gpu:?} {gpu}");
}
