//! The CPU engine plugin for hipDNN.
