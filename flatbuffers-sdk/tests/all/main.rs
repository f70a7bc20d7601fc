//! Integration tests of `hipdnn-flatbuffers-sdk`, built as one test binary.

mod malformed;
mod validation;
