//! The C API (`hipdnn_backend.h`), as thin functions over the Rust API.
//!
//! Conventions, for every function here:
//! * a null pointer argument is `HIPDNN_STATUS_BAD_PARAM_NULL_POINTER` (destroy functions
//!   accept null and do nothing);
//! * out-parameters are written only on success;
//! * a failure stores a message naming what failed as this thread's last error, read by
//!   `hipdnnGetLastErrorString` (which clears it) or `hipdnnPeekLastErrorString_ext`
//!   (which does not);
//! * no panic crosses the boundary: one becomes `HIPDNN_STATUS_INTERNAL_ERROR`;
//! * strings are returned with the two-call convention: a null buffer asks for the size
//!   (terminating NUL included); a buffer smaller than that is
//!   `HIPDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT` and nothing is written.
//! * a handle is not thread-safe: calls that use one handle, directly or through a
//!   descriptor that refers to it, must not overlap; different handles may be used on
//!   different threads at once;
//! * objects own what they use: a descriptor that refers to a handle keeps it alive, so
//!   the handle may be destroyed first ([`hipdnnDestroy`]);
//! * handles and descriptors are checked against a registry of the live ones before they
//!   are used: a pointer this library did not hand out (a garbage pointer, a handle where
//!   a descriptor is expected or the reverse) or one already destroyed is
//!   `HIPDNN_STATUS_BAD_PARAM`, never dereferenced. A destroyed pointer whose address a
//!   newer object reuses is taken for that object. Other pointers (out-parameters,
//!   arrays, buffers) cannot be checked: invalid ones crash, as in hipDNN.

#![expect(non_camel_case_types, reason = "hipDNN's C names, kept exactly")]

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::ffi::{CStr, c_char, c_void};
use std::os::unix::ffi::OsStrExt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, RwLock};

use hipdnn_plugin_abi::hipStream_t;

use crate::discovery::LoadingMode;
use crate::handle::Handle;
use crate::manager::{self, UnloadMode};
use crate::status::*;

mod descriptors;
pub mod enums;
mod logging;
pub use descriptors::*;
pub use enums::tables::*;
pub use logging::*;

/// Opaque target of [`hipdnnHandle_t`] (declared, never defined, in C).
#[derive(Debug)]
pub struct hipdnnHandle {
    _opaque: [u8; 0],
}

/// A hipDNN handle, created by [`hipdnnCreate`] and released by [`hipdnnDestroy`].
pub type hipdnnHandle_t = *mut hipdnnHandle;

/// The object behind a [`hipdnnHandle_t`]: a [`Handle`] shared by the C caller and by the
/// descriptors that refer to it.
///
/// [`hipdnnCreate`] hands out `Arc::into_raw` of one; [`hipdnnDestroy`] gives the caller's
/// reference back; a descriptor keeps its own `Arc`. The handle is dropped (its plugin
/// handles destroyed) with the last reference, so no descriptor can outlive it.
#[derive(Debug)]
pub(crate) struct SharedHandle(Handle);

// SAFETY: `Handle` is `Send` but not `Sync` because calls into one plugin handle must not
// overlap. The C API only ever takes `&Handle` from a shared handle (never `&mut`), and
// its contract (module docs) is that calls using one handle, directly or through a
// descriptor referring to it, do not overlap: the references of one handle's descriptors
// are never used at the same time.
unsafe impl Sync for SharedHandle {}

impl SharedHandle {
    /// The handle.
    pub(crate) fn handle(&self) -> &Handle {
        &self.0
    }

    /// The C name of this handle: the pointer [`hipdnnCreate`] handed out.
    pub(crate) fn as_raw(this: &Arc<Self>) -> hipdnnHandle_t {
        Arc::as_ptr(this).cast_mut().cast()
    }
}

/// What a pointer handed out to C is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Object {
    /// A [`hipdnnHandle_t`] from [`hipdnnCreate`], not yet destroyed.
    Handle,
    /// A [`hipdnnBackendDescriptor_t`], not yet destroyed.
    Descriptor,
}

impl Object {
    fn name(self) -> &'static str {
        match self {
            Self::Handle => "handle",
            Self::Descriptor => "descriptor",
        }
    }
}

/// Every handle and descriptor handed out and not yet destroyed, by address: pointers
/// coming back from C are looked up here before anything reads through them, which
/// turns a double destroy, a garbage pointer or a handle passed as a descriptor (or the
/// reverse) into `BAD_PARAM` instead of a crash. A lookup is a shared lock and a tree
/// search; only creation and destruction write.
static LIVE: RwLock<BTreeMap<usize, Object>> = RwLock::new(BTreeMap::new());

// A panic never happens while the lock is held (the map operations do not panic), so a
// poisoned lock still holds a consistent map.
fn live_read() -> std::sync::RwLockReadGuard<'static, BTreeMap<usize, Object>> {
    LIVE.read().unwrap_or_else(|e| e.into_inner())
}

fn live_write() -> std::sync::RwLockWriteGuard<'static, BTreeMap<usize, Object>> {
    LIVE.write().unwrap_or_else(|e| e.into_inner())
}

/// Records `ptr` as a live `object` (just allocated, so no live entry has its address).
pub(crate) fn register(ptr: *const c_void, object: Object) {
    live_write().insert(ptr.addr(), object);
}

/// "an" before a descriptor kind starting with a vowel ("an ENGINEHEUR"), else "a".
pub(crate) fn article(kind: &str) -> &'static str {
    if kind.starts_with(['A', 'E', 'I', 'O', 'U']) {
        "an"
    } else {
        "a"
    }
}

/// Why `ptr` is not a live `want`: `found` is what it is instead, if anything. A live
/// descriptor is named by its kind.
fn not_live(ptr: *const c_void, want: Object, found: Option<Object>) -> BackendError {
    let what = match found {
        Some(Object::Descriptor) => {
            // SAFETY: the registry says `ptr` is a live descriptor.
            let kind = unsafe { descriptors::kind_name(ptr.cast_mut().cast()) };
            format!(
                "is {} {kind} descriptor, not a {}",
                article(kind),
                want.name()
            )
        }
        Some(Object::Handle) => format!("is a handle, not a {}", want.name()),
        None => format!(
            "is not a live {} (never made by this library, or already destroyed)",
            want.name()
        ),
    };
    BackendError::bad_param(format!("{} {ptr:p} {what}", want.name()))
}

/// Checks that non-null `ptr` is a live `want`.
pub(crate) fn check_live(ptr: *const c_void, want: Object) -> BackendResult<()> {
    // The lock is released before a refusal is described.
    let found = live_read().get(&ptr.addr()).copied();
    match found {
        Some(found) if found == want => Ok(()),
        found => Err(not_live(ptr, want, found)),
    }
}

/// Removes non-null `ptr` from the live objects, checking that it is a live `want`;
/// the caller then frees it.
pub(crate) fn unregister(ptr: *const c_void, want: Object) -> BackendResult<()> {
    let mut live = live_write();
    match live.get(&ptr.addr()).copied() {
        Some(found) if found == want => {
            live.remove(&ptr.addr());
            Ok(())
        }
        found => {
            drop(live);
            Err(not_live(ptr, want, found))
        }
    }
}

thread_local! {
    static LAST_ERROR: RefCell<String> = const { RefCell::new(String::new()) };
}

fn set_last_error(message: &str) {
    LAST_ERROR.with(|e| message.clone_into(&mut e.borrow_mut()));
}

/// Runs a C function's body: errors become their status (message kept as the thread's
/// last error, logged), a panic becomes `INTERNAL_ERROR`.
fn boundary(entry: &str, body: impl FnOnce() -> BackendResult<()>) -> hipdnnStatus_t {
    let body = || {
        crate::log_output::ensure_installed();
        body()
    };
    let error = match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => return HIPDNN_STATUS_SUCCESS,
        Ok(Err(error)) => error,
        Err(payload) => {
            let text = hipdnn_data_sdk::panic_message(payload.as_ref());
            BackendError::new(HIPDNN_STATUS_INTERNAL_ERROR, format!("panic: {text}"))
        }
    };
    let message = format!("{entry}: {}", error.message);
    let _ = catch_unwind(AssertUnwindSafe(|| {
        tracing::error!(status = error.status.name().unwrap_or("?"), "{message}");
        set_last_error(&message);
    }));
    error.status
}

fn null(what: &str) -> BackendError {
    BackendError::new(
        HIPDNN_STATUS_BAD_PARAM_NULL_POINTER,
        format!("{what} is null"),
    )
}

/// # Safety
/// `out` is null or valid for a write.
unsafe fn write<T>(out: *mut T, what: &str, value: T) -> BackendResult<()> {
    if out.is_null() {
        return Err(null(what));
    }
    // SAFETY: non-null and writable per the caller's contract.
    unsafe { out.write(value) };
    Ok(())
}

/// The handle behind `handle`.
///
/// # Safety
/// `handle` is null, or is a live handle from [`hipdnnCreate`] if the registry says so,
/// not destroyed while the reference is used.
unsafe fn handle_ref<'a>(handle: hipdnnHandle_t) -> BackendResult<&'a Handle> {
    if handle.is_null() {
        return Err(null("handle"));
    }
    check_live(handle.cast_const().cast(), Object::Handle)?;
    // SAFETY: checked live: the `Arc` allocation made by `hipdnnCreate`, alive while the
    // caller holds its reference; only shared references are ever taken.
    Ok(unsafe { &*handle.cast::<SharedHandle>() }.handle())
}

/// A new reference to the handle object behind `handle`, for a descriptor to keep.
///
/// # Safety
/// As [`handle_ref`].
unsafe fn handle_arc(handle: hipdnnHandle_t) -> BackendResult<Arc<SharedHandle>> {
    if handle.is_null() {
        return Err(null("handle"));
    }
    check_live(handle.cast_const().cast(), Object::Handle)?;
    let ptr = handle.cast::<SharedHandle>().cast_const();
    // SAFETY: checked live: a pointer from `Arc::into_raw` whose reference the caller
    // still holds; counting one more reference and taking it is balanced by the drop of
    // the returned `Arc`.
    unsafe {
        Arc::increment_strong_count(ptr);
        Ok(Arc::from_raw(ptr))
    }
}

/// Copies `text` into a caller buffer with the two-call convention.
///
/// # Safety
/// `len` is null or valid for reads and writes; `buffer` is null or valid for `*len`
/// bytes.
unsafe fn write_string(
    text: &str,
    buffer: *mut c_char,
    len: *mut usize,
    what: &str,
) -> BackendResult<()> {
    if len.is_null() {
        return Err(null(&format!("{what} length")));
    }
    let needed = text.len() + 1;
    if buffer.is_null() {
        // SAFETY: non-null, writable per the contract.
        unsafe { len.write(needed) };
        return Ok(());
    }
    // SAFETY: non-null, readable per the contract.
    let capacity = unsafe { len.read() };
    if capacity < needed {
        return Err(BackendError::new(
            HIPDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT,
            format!("{what} needs {needed} bytes, the buffer has {capacity}"),
        ));
    }
    // SAFETY: `buffer` holds at least `needed` bytes per the contract.
    unsafe {
        std::ptr::copy_nonoverlapping(text.as_ptr(), buffer.cast::<u8>(), text.len());
        buffer.add(text.len()).write(0);
        len.write(needed);
    }
    Ok(())
}

/// Creates a handle; release it with [`hipdnnDestroy`]. Plugins are loaded on the first
/// handle of the process (see the Rust `Handle::new`).
///
/// # Safety
/// `handle` is null or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipdnnCreate(handle: *mut hipdnnHandle_t) -> hipdnnStatus_t {
    boundary("hipdnnCreate", || {
        if handle.is_null() {
            return Err(null("handle"));
        }
        let raw = Arc::into_raw(Arc::new(SharedHandle(Handle::new())))
            .cast_mut()
            .cast::<hipdnnHandle>();
        register(raw.cast_const().cast(), Object::Handle);
        // SAFETY: checked non-null; writable per the contract.
        unsafe { handle.write(raw) };
        Ok(())
    })
}

/// Destroys a handle; null does nothing. A pointer that is not a live handle (destroyed
/// already, never made by [`hipdnnCreate`], a descriptor) is `BAD_PARAM` and nothing is
/// freed; hipDNN itself crashes on a double destroy, so portable code must not rely on
/// this.
///
/// The handle and what it owns (its plugin handles; with `HIPDNN_PLUGIN_UNLOAD_EAGER` and
/// no other handle, the plugins) go now, unless descriptors that refer to it are alive:
/// an operation graph set to it, and what was made from that graph (heuristics, engines,
/// engine configs, execution plans). Those keep it alive, and it goes with the last of
/// them. So a plan descriptor may outlive the handle: it can still be queried and
/// destroyed safely, but not executed ([`hipdnnBackendExecute`] needs the live handle).
///
/// # Safety
/// `handle` is null or any pointer; not used afterwards once destroyed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipdnnDestroy(handle: hipdnnHandle_t) -> hipdnnStatus_t {
    boundary("hipdnnDestroy", || {
        if !handle.is_null() {
            unregister(handle.cast_const().cast(), Object::Handle)?;
            // SAFETY: it was live: the `Arc` made by `hipdnnCreate`, whose caller
            // reference is given back once (it is no longer registered).
            drop(unsafe { Arc::from_raw(handle.cast::<SharedHandle>().cast_const()) });
        }
        Ok(())
    })
}

/// Sets the stream every plugin of the handle enqueues work on.
///
/// # Safety
/// `handle` is a live handle; `stream` is null or a valid stream kept alive while used.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipdnnSetStream(
    handle: hipdnnHandle_t,
    stream: hipStream_t,
) -> hipdnnStatus_t {
    boundary("hipdnnSetStream", || {
        // SAFETY: per the contract.
        let handle = unsafe { handle_ref(handle) }?;
        // SAFETY: per the contract.
        unsafe { handle.set_stream(stream) }
    })
}

/// Writes the handle's stream.
///
/// # Safety
/// `handle` is a live handle; `stream` is null or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipdnnGetStream(
    handle: hipdnnHandle_t,
    stream: *mut hipStream_t,
) -> hipdnnStatus_t {
    boundary("hipdnnGetStream", || {
        // SAFETY: per the contract.
        let handle = unsafe { handle_ref(handle) }?;
        // SAFETY: per the contract.
        unsafe { write(stream, "stream", handle.stream()) }
    })
}

/// A static description of `status` (never null; "unknown status" for other values).
#[unsafe(no_mangle)]
pub extern "C" fn hipdnnGetErrorString(status: hipdnnStatus_t) -> *const c_char {
    status.c_description().as_ptr()
}

fn copy_last_error(buffer: *mut c_char, max: usize, clear: bool) {
    if buffer.is_null() || max == 0 {
        return;
    }
    LAST_ERROR.with(|e| {
        let mut e = e.borrow_mut();
        let mut end = e.len().min(max - 1);
        while !e.is_char_boundary(end) {
            end -= 1;
        }
        // SAFETY: the caller provides `max` writable bytes; `end + 1 <= max`.
        unsafe {
            std::ptr::copy_nonoverlapping(e.as_ptr(), buffer.cast::<u8>(), end);
            buffer.add(end).write(0);
        }
        if clear {
            e.clear();
        }
    });
}

/// Copies this thread's last error into `buffer` (at most `max` bytes, NUL included,
/// truncated at a character boundary) and clears it. Null or `max == 0` copies nothing
/// (and still clears).
///
/// # Safety
/// `buffer` is null or valid for `max` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipdnnGetLastErrorString(buffer: *mut c_char, max: usize) {
    let _ = catch_unwind(|| {
        copy_last_error(buffer, max, true);
        LAST_ERROR.with(|e| e.borrow_mut().clear());
    });
}

/// As [`hipdnnGetLastErrorString`], without clearing.
///
/// # Safety
/// `buffer` is null or valid for `max` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipdnnPeekLastErrorString_ext(buffer: *mut c_char, max: usize) {
    let _ = catch_unwind(|| copy_last_error(buffer, max, false));
}

/// Sets the engine plugin search paths for the next load. Fails with `NOT_SUPPORTED`
/// while any handle exists.
///
/// # Safety
/// `paths` is null (only with `num_paths == 0`) or holds `num_paths` NUL-terminated
/// strings.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipdnnSetEnginePluginPaths_ext(
    num_paths: usize,
    paths: *const *const c_char,
    loading_mode: hipdnnPluginLoadingMode_ext_t,
) -> hipdnnStatus_t {
    boundary("hipdnnSetEnginePluginPaths_ext", || {
        let mode = match loading_mode {
            HIPDNN_PLUGIN_LOADING_ADDITIVE => LoadingMode::Additive,
            HIPDNN_PLUGIN_LOADING_ABSOLUTE => LoadingMode::Absolute,
            other => {
                return Err(BackendError::bad_param(format!(
                    "loading mode {other} is not a hipdnnPluginLoadingMode_ext_t"
                )));
            }
        };
        // Not sized from `num_paths`: a wrong count must not become a huge allocation.
        let mut list = Vec::new();
        if num_paths > 0 {
            if paths.is_null() {
                return Err(null("plugin_paths"));
            }
            for i in 0..num_paths {
                // SAFETY: `paths` holds `num_paths` entries per the contract.
                let path = unsafe { paths.add(i).read() };
                if path.is_null() {
                    return Err(null(&format!("plugin_paths[{i}]")));
                }
                // SAFETY: a NUL-terminated string per the contract.
                let path = unsafe { CStr::from_ptr(path) };
                list.push(std::path::PathBuf::from(std::ffi::OsStr::from_bytes(
                    path.to_bytes(),
                )));
            }
        }
        manager::set_engine_plugin_paths(list, mode)
    })
}

/// Sets when plugins are unloaded (`LAZY`: kept after the last handle; `EAGER`: unloaded
/// with it). An unknown value is `BAD_PARAM`.
#[unsafe(no_mangle)]
pub extern "C" fn hipdnnSetPluginUnloadMode_ext(
    mode: hipdnnPluginUnloadingMode_ext_t,
) -> hipdnnStatus_t {
    boundary("hipdnnSetPluginUnloadMode_ext", || {
        let mode = match mode {
            HIPDNN_PLUGIN_UNLOAD_LAZY => UnloadMode::Lazy,
            HIPDNN_PLUGIN_UNLOAD_EAGER => UnloadMode::Eager,
            other => {
                return Err(BackendError::bad_param(format!(
                    "unload mode {other} is not a hipdnnPluginUnloadingMode_ext_t"
                )));
            }
        };
        manager::set_plugin_unload_mode(mode);
        Ok(())
    })
}

/// The paths of the loaded engine plugins, two-call: with `plugin_paths` null, writes the
/// count to `*num_plugin_paths` and the longest path's size (NUL included) to
/// `*max_string_len`. Otherwise `plugin_paths` holds `*num_plugin_paths` buffers of
/// `*max_string_len` bytes each; too few buffers or too short ones are
/// `BAD_PARAM_SIZE_INSUFFICIENT`.
///
/// # Safety
/// `handle` is a live handle; the counts are null or valid for reads and writes;
/// `plugin_paths` is null or holds `*num_plugin_paths` buffers as described.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipdnnGetLoadedEnginePluginPaths_ext(
    handle: hipdnnHandle_t,
    num_plugin_paths: *mut usize,
    plugin_paths: *mut *mut c_char,
    max_string_len: *mut usize,
) -> hipdnnStatus_t {
    boundary("hipdnnGetLoadedEnginePluginPaths_ext", || {
        // SAFETY: per the contract.
        let handle = unsafe { handle_ref(handle) }?;
        if num_plugin_paths.is_null() {
            return Err(null("num_plugin_paths"));
        }
        if max_string_len.is_null() {
            return Err(null("max_string_len"));
        }
        let paths: Vec<Vec<u8>> = handle
            .loaded_plugin_paths()
            .iter()
            .map(|p| p.as_os_str().as_bytes().to_vec())
            .collect();
        let longest = paths.iter().map(|p| p.len() + 1).max().unwrap_or(0);
        if plugin_paths.is_null() {
            // SAFETY: checked non-null; writable per the contract.
            unsafe {
                num_plugin_paths.write(paths.len());
                max_string_len.write(longest);
            }
            return Ok(());
        }
        // SAFETY: checked non-null; readable per the contract.
        let (capacity, length) = unsafe { (num_plugin_paths.read(), max_string_len.read()) };
        if capacity < paths.len() || length < longest {
            return Err(BackendError::new(
                HIPDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT,
                format!(
                    "{} paths of up to {longest} bytes do not fit {capacity} buffers of {length} bytes",
                    paths.len()
                ),
            ));
        }
        for (i, path) in paths.iter().enumerate() {
            // SAFETY: `plugin_paths` holds `capacity >= paths.len()` entries.
            let buffer = unsafe { plugin_paths.add(i).read() };
            if buffer.is_null() {
                return Err(null(&format!("plugin_paths[{i}]")));
            }
            // SAFETY: each buffer holds `length >= path.len() + 1` bytes per the contract.
            unsafe {
                std::ptr::copy_nonoverlapping(path.as_ptr(), buffer.cast::<u8>(), path.len());
                buffer.add(path.len()).write(0);
            }
        }
        // SAFETY: checked non-null; writable per the contract.
        unsafe { num_plugin_paths.write(paths.len()) };
        Ok(())
    })
}

/// The number of engines the handle can route to.
///
/// # Safety
/// `handle` is a live handle; `count` is null or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipdnnGetEngineCount_ext(
    handle: hipdnnHandle_t,
    count: *mut usize,
) -> hipdnnStatus_t {
    boundary("hipdnnGetEngineCount_ext", || {
        // SAFETY: per the contract.
        let handle = unsafe { handle_ref(handle) }?;
        // SAFETY: per the contract.
        unsafe { write(count, "count", handle.engines().len()) }
    })
}

/// The engine at `index` (engines sorted by name, then id, then plugin name): its id and,
/// two-call each, its name, plugin name, plugin version and plugin type. For each string,
/// a null length skips it (its buffer must then be null too: a buffer without its length
/// is `BAD_PARAM_NULL_POINTER`), a null buffer with a length asks for the size (NUL
/// included), and a buffer smaller than that is `BAD_PARAM_SIZE_INSUFFICIENT` with
/// nothing written; null `id` is allowed (not written).
///
/// # Safety
/// `handle` is a live handle; each length is null or valid for reads and writes; each
/// buffer is null or holds `*len` bytes; `id` is null or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipdnnGetEngineInfo_ext(
    handle: hipdnnHandle_t,
    index: usize,
    id: *mut i64,
    name: *mut c_char,
    name_len: *mut usize,
    plugin_name: *mut c_char,
    plugin_name_len: *mut usize,
    version: *mut c_char,
    version_len: *mut usize,
    plugin_type: *mut c_char,
    type_len: *mut usize,
) -> hipdnnStatus_t {
    boundary("hipdnnGetEngineInfo_ext", || {
        // SAFETY: per the contract.
        let handle = unsafe { handle_ref(handle) }?;
        let engines = handle.engines();
        let engine = engines.get(index).ok_or_else(|| {
            BackendError::new(
                HIPDNN_STATUS_BAD_PARAM_OUT_OF_BOUND,
                format!(
                    "engine index {index} is out of range ({} engines)",
                    engines.len()
                ),
            )
        })?;
        let strings = [
            (engine.name.as_str(), name, name_len, "name"),
            (
                engine.plugin_name.as_str(),
                plugin_name,
                plugin_name_len,
                "plugin name",
            ),
            (
                engine.plugin_version.as_str(),
                version,
                version_len,
                "version",
            ),
            (engine.plugin_type, plugin_type, type_len, "type"),
        ];
        // Check every size first, so that nothing is written on failure.
        for &(text, buffer, len, what) in &strings {
            if len.is_null() {
                if !buffer.is_null() {
                    return Err(null(&format!("{what} length (its buffer is not null)")));
                }
                continue;
            }
            // SAFETY: non-null, readable per the contract.
            if !buffer.is_null() && unsafe { len.read() } < text.len() + 1 {
                // SAFETY: forwarded contract; this reports the size error.
                return unsafe { write_string(text, buffer, len, what) };
            }
        }
        for (text, buffer, len, what) in strings {
            if len.is_null() {
                continue;
            }
            // SAFETY: forwarded contract.
            unsafe { write_string(text, buffer, len, what) }?;
        }
        if !id.is_null() {
            // SAFETY: non-null, writable per the contract.
            unsafe { id.write(engine.id) };
        }
        Ok(())
    })
}

/// The id of the engine named `name`; `NOT_SUPPORTED` when the handle has none.
///
/// # Safety
/// `handle` is a live handle; `name` is null or NUL-terminated; `id` is null or valid for
/// a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipdnnGetEngineIdByName_ext(
    handle: hipdnnHandle_t,
    name: *const c_char,
    id: *mut i64,
) -> hipdnnStatus_t {
    boundary("hipdnnGetEngineIdByName_ext", || {
        // SAFETY: per the contract.
        let handle = unsafe { handle_ref(handle) }?;
        if name.is_null() {
            return Err(null("name"));
        }
        // SAFETY: NUL-terminated per the contract.
        let name = unsafe { CStr::from_ptr(name) }.to_string_lossy();
        let found = handle.engine_id_by_name(&name)?;
        // SAFETY: per the contract.
        unsafe { write(id, "id", found) }
    })
}

/// The backend version, `"MAJOR.MINOR.PATCH.TWEAK"` (static, never null).
#[unsafe(no_mangle)]
pub extern "C" fn hipdnnVersionString_ext() -> *const c_char {
    VERSION.as_ptr()
}

/// The backend version as a static string (deprecated form of
/// [`hipdnnVersionString_ext`]).
///
/// # Safety
/// `version` is null or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipdnnGetVersion_ext(version: *mut *const c_char) -> hipdnnStatus_t {
    // SAFETY: per the contract.
    boundary("hipdnnGetVersion_ext", || unsafe {
        write(version, "version", VERSION.as_ptr())
    })
}

const VERSION: &CStr =
    match CStr::from_bytes_with_nul(concat!(env!("CARGO_PKG_VERSION"), ".0\0").as_bytes()) {
        Ok(v) => v,
        Err(_) => panic!("the package version has no NUL"),
    };

#[cfg(test)]
mod tests {
    use std::ffi::CStr;
    use std::ptr::{null, null_mut};
    use std::sync::Mutex;

    use super::*;

    /// The plugin set and handle count are process-wide: these tests take turns.
    static SERIAL: Mutex<()> = Mutex::new(());

    fn last_error(clear: bool) -> String {
        let mut buffer = [0 as c_char; 512];
        // SAFETY: a 512-byte buffer.
        unsafe {
            if clear {
                hipdnnGetLastErrorString(buffer.as_mut_ptr(), buffer.len());
            } else {
                hipdnnPeekLastErrorString_ext(buffer.as_mut_ptr(), buffer.len());
            }
            CStr::from_ptr(buffer.as_ptr())
                .to_string_lossy()
                .into_owned()
        }
    }

    #[test]
    fn create_and_destroy_check_their_pointers() {
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        // SAFETY: every pointer is null or points to a live local.
        unsafe {
            assert_eq!(
                hipdnnCreate(null_mut()),
                HIPDNN_STATUS_BAD_PARAM_NULL_POINTER
            );
            assert_eq!(last_error(false), "hipdnnCreate: handle is null");
            assert_eq!(last_error(true), "hipdnnCreate: handle is null");
            assert_eq!(last_error(true), "", "reading clears");
            assert_eq!(hipdnnDestroy(null_mut()), HIPDNN_STATUS_SUCCESS);

            let mut handle: hipdnnHandle_t = null_mut();
            assert_eq!(hipdnnCreate(&mut handle), HIPDNN_STATUS_SUCCESS);
            assert!(!handle.is_null());
            let mut stream: hipStream_t = 1 as hipStream_t;
            assert_eq!(hipdnnGetStream(handle, &mut stream), HIPDNN_STATUS_SUCCESS);
            assert!(stream.is_null(), "default stream");
            assert_eq!(
                hipdnnGetStream(handle, null_mut()),
                HIPDNN_STATUS_BAD_PARAM_NULL_POINTER
            );
            assert_eq!(
                hipdnnGetStream(null_mut(), &mut stream),
                HIPDNN_STATUS_BAD_PARAM_NULL_POINTER
            );
            assert_eq!(hipdnnDestroy(handle), HIPDNN_STATUS_SUCCESS);
        }
    }

    #[test]
    fn plugin_paths_are_checked_and_frozen_while_a_handle_lives() {
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        // SAFETY: every pointer is null or points to a live local.
        unsafe {
            assert_eq!(
                hipdnnSetEnginePluginPaths_ext(1, null(), HIPDNN_PLUGIN_LOADING_ADDITIVE),
                HIPDNN_STATUS_BAD_PARAM_NULL_POINTER
            );
            let paths = [c"/nonexistent/plugins".as_ptr()];
            assert_eq!(
                hipdnnSetEnginePluginPaths_ext(1, paths.as_ptr(), 7),
                HIPDNN_STATUS_BAD_PARAM
            );
            assert!(last_error(true).contains("loading mode 7"));
            assert_eq!(hipdnnSetPluginUnloadMode_ext(9), HIPDNN_STATUS_BAD_PARAM);
            let mut handle: hipdnnHandle_t = null_mut();
            assert_eq!(hipdnnCreate(&mut handle), HIPDNN_STATUS_SUCCESS);
            assert_eq!(
                hipdnnSetEnginePluginPaths_ext(1, paths.as_ptr(), HIPDNN_PLUGIN_LOADING_ABSOLUTE),
                HIPDNN_STATUS_NOT_SUPPORTED
            );
            assert!(last_error(true).contains("while 1 handle(s) exist"));
            assert_eq!(hipdnnDestroy(handle), HIPDNN_STATUS_SUCCESS);
            assert_eq!(
                hipdnnSetEnginePluginPaths_ext(0, null(), HIPDNN_PLUGIN_LOADING_ADDITIVE),
                HIPDNN_STATUS_SUCCESS
            );
        }
    }

    #[test]
    fn queries_follow_the_two_call_convention() {
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        // SAFETY: every pointer is null or points to a live local.
        unsafe {
            let mut handle: hipdnnHandle_t = null_mut();
            assert_eq!(hipdnnCreate(&mut handle), HIPDNN_STATUS_SUCCESS);
            // No plugin directory next to the test binary: nothing loaded, no engines.
            let (mut count, mut longest) = (usize::MAX, usize::MAX);
            assert_eq!(
                hipdnnGetLoadedEnginePluginPaths_ext(handle, &mut count, null_mut(), &mut longest),
                HIPDNN_STATUS_SUCCESS
            );
            assert_eq!((count, longest), (0, 0));
            assert_eq!(
                hipdnnGetEngineCount_ext(handle, &mut count),
                HIPDNN_STATUS_SUCCESS
            );
            assert_eq!(count, 0);
            let mut len = 0usize;
            assert_eq!(
                hipdnnGetEngineInfo_ext(
                    handle,
                    0,
                    null_mut(),
                    null_mut(),
                    &mut len,
                    null_mut(),
                    &mut len,
                    null_mut(),
                    &mut len,
                    null_mut(),
                    &mut len
                ),
                HIPDNN_STATUS_BAD_PARAM_OUT_OF_BOUND
            );
            let mut id = 0i64;
            assert_eq!(
                hipdnnGetEngineIdByName_ext(handle, c"CPU_ENGINE".as_ptr(), &mut id),
                HIPDNN_STATUS_NOT_SUPPORTED
            );
            assert!(last_error(true).contains("no engine named \"CPU_ENGINE\""));
            assert_eq!(hipdnnDestroy(handle), HIPDNN_STATUS_SUCCESS);
        }
    }

    #[test]
    fn strings_fit_or_report_the_size_needed() {
        let mut len = 0usize;
        let mut buffer = [0 as c_char; 8];
        // SAFETY: pointers to live locals; `len` describes `buffer` when non-null.
        unsafe {
            write_string("engine", null_mut(), &mut len, "name").unwrap();
            assert_eq!(len, 7);
            len = 6;
            let err = write_string("engine", buffer.as_mut_ptr(), &mut len, "name").unwrap_err();
            assert_eq!(err.status, HIPDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT);
            assert_eq!(buffer[0], 0, "nothing written");
            len = 8;
            write_string("engine", buffer.as_mut_ptr(), &mut len, "name").unwrap();
            assert_eq!(CStr::from_ptr(buffer.as_ptr()).to_str().unwrap(), "engine");
            assert_eq!(len, 7);
        }
    }

    #[test]
    fn error_and_version_strings_are_static() {
        // SAFETY: both functions return static NUL-terminated strings.
        unsafe {
            assert_eq!(
                CStr::from_ptr(hipdnnGetErrorString(HIPDNN_STATUS_NOT_SUPPORTED))
                    .to_str()
                    .unwrap(),
                "not supported"
            );
            assert_eq!(
                CStr::from_ptr(hipdnnGetErrorString(hipdnnStatus_t(-3)))
                    .to_str()
                    .unwrap(),
                "unknown status"
            );
            let version = CStr::from_ptr(hipdnnVersionString_ext()).to_str().unwrap();
            assert_eq!(version.split('.').count(), 4, "{version}");
            assert!(version.starts_with(env!("CARGO_PKG_VERSION")));
        }
        for status in 0..15 {
            // SAFETY: static strings.
            let text = unsafe { CStr::from_ptr(hipdnnGetErrorString(hipdnnStatus_t(status))) };
            assert_eq!(text.to_str().unwrap(), hipdnnStatus_t(status).description());
        }
    }
}
