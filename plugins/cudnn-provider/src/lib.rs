//! The cuDNN engine plugin (in progress).
