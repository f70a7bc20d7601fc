//! The parts of the `hipdnn` command that read untrusted files, as a library: `.npy`
//! arrays ([`npy`]) and the opening of user-named paths ([`files`]). The command itself
//! is `src/main.rs`; the fuzzing harness (`fuzz/`) feeds these the bytes it mutates.

pub mod files;
pub mod npy;
