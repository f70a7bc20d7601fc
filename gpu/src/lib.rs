//! Host-side GPU memory, streams and timing (in progress).
