//! The hipDNN engine-plugin C ABI, as Rust sees it from both sides.
//!
//! A hipDNN engine plugin is a shared library exporting a fixed set of C functions
//! (`PluginApi.h` and `EnginePluginApi.h`, shipped with the plugin SDK in
//! `plugin-sdk/include/hipdnn_plugin_sdk/`). This crate is that contract and nothing
//! else, so that a host (the backend) and a plugin (through the plugin SDK, which
//! re-exports this crate as `hipdnn_plugin_sdk::abi`) share it without either depending
//! on the other:
//!
//! * the data types, named and numbered exactly as `PluginApiDataTypes.h`: statuses and
//!   other enums, byte spans, device buffers, the opaque handle types, `hipStream_t`, the
//!   version constants;
//! * the host-side signature of every function, as a function-pointer type named like
//!   the headers' typedef (`hipdnnPluginGetName_fn`, ...). They are expanded from one
//!   list of the functions, which also gives [`declare_entry_points!`] for programs
//!   linking a plugin's exports, and against which the SDK's export macro checks what it
//!   exports;
//! * the tables a host fills when it loads a plugin: [`BaseApi`], [`EngineApi`] (with
//!   [`SerializationApi`]) and both together, [`EnginePluginApi`].
//!
//! # Why the tables do not load libraries
//!
//! A table resolves its symbols through a lookup function the caller passes (name in,
//! address or null out). Loading stays with the host, which chooses its loader and its
//! flags (the backend opens plugins with `RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE` through
//! libloading, a benchmark opens them plainly) and keeps the library next to the table,
//! dropping the library last. A table that owned its library would have to pick one
//! loader and one policy for every host; this way the crate has no dependency at all, and
//! what it guarantees is the part every host used to write by hand: each symbol is cast
//! to the type of its own declaration, required symbols are reported by name when
//! missing, and optional ones are `Option`s.
//!
//! ```no_run
//! use std::ffi::{CStr, c_void};
//! use hipdnn_plugin_abi::*;
//!
//! # fn dlsym(_: &CStr) -> *mut c_void { std::ptr::null_mut() }
//! // `dlsym` stands for the host's loader; the library stays loaded while `api` is used.
//! // SAFETY: the addresses are those of the hipDNN functions of the names asked for.
//! let api = unsafe { EnginePluginApi::resolve(dlsym) }.expect("an engine plugin");
//! let mut name = std::ptr::null();
//! // SAFETY: resolved with its declared type; `name` is writable.
//! let status = unsafe { (api.base.get_name)(&mut name) };
//! assert_eq!(status, HIPDNN_PLUGIN_STATUS_SUCCESS);
//! ```

#![deny(missing_docs)]
#![expect(non_camel_case_types, reason = "hipDNN's C names, kept exactly")]

// Before `table`, which uses its crate-private `symbol_of!`.
#[macro_use]
mod entry_points;
mod table;
mod types;

__entry_points!(aliases);

pub use table::{BaseApi, EngineApi, EnginePluginApi, MissingSymbol, SerializationApi};
pub use types::*;
