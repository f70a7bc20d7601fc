//! Integration tests of `hipdnn-flatbuffers-sdk`, built as one test binary.

mod malformed;
#[path = "../support/model_graphs.rs"]
mod samples;
mod upstream_json;
mod validation;
