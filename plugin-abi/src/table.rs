//! Tables of resolved entry points: what a host holds of a loaded plugin.

use std::ffi::{CStr, c_void};
use std::fmt;

use crate::*;

/// A required symbol the library does not export (or exports as null).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MissingSymbol {
    /// The symbol's name.
    pub symbol: &'static str,
}

impl fmt::Display for MissingSymbol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the required symbol `{}` is missing", self.symbol)
    }
}

impl std::error::Error for MissingSymbol {}

/// The NUL-terminated name of the symbol whose pointer type is `$alias`.
macro_rules! c_symbol {
    ($alias:ident) => {
        const {
            match CStr::from_bytes_with_nul(concat!(symbol_of!($alias), "\0").as_bytes()) {
                Ok(name) => name,
                Err(_) => panic!("symbol names hold no NUL"),
            }
        }
    };
}

/// Resolves the symbol of `$alias` from `$resolver`, typed as `$alias`: the name and the
/// type come from the same entry of the list, so they cannot disagree.
macro_rules! required {
    ($resolver:ident, $alias:ident) => {
        // SAFETY: `$alias` is the pointer type of the symbol's own declaration; the
        // lookup's contract is the caller's (`resolve`).
        unsafe { $resolver.required::<$alias>(c_symbol!($alias), symbol_of!($alias)) }
    };
}

/// As [`required!`], for a symbol that may be absent.
macro_rules! optional {
    ($resolver:ident, $alias:ident) => {
        // SAFETY: as in `required!`.
        unsafe { $resolver.optional::<$alias>(c_symbol!($alias)) }
    };
}

/// Pushes the symbol name of `$alias` to `$missing` when `$field` is `None`.
macro_rules! note_missing {
    ($missing:ident, $field:expr, $alias:ident) => {
        if $field.is_none() {
            $missing.push(symbol_of!($alias));
        }
    };
}

/// Looks symbols up through a caller's function and casts them to their types.
struct Resolver<F> {
    lookup: F,
}

impl<F: FnMut(&CStr) -> *mut c_void> Resolver<F> {
    /// # Safety
    /// `T` is the function-pointer type of `name`'s declaration, and a non-null address
    /// the lookup returns for `name` is that function's.
    unsafe fn optional<T: Copy>(&mut self, name: &CStr) -> Option<T> {
        const { assert!(size_of::<T>() == size_of::<*mut c_void>()) };
        let address = (self.lookup)(name);
        if address.is_null() {
            return None;
        }
        // SAFETY: `T` is a function-pointer type of the size of an address (asserted
        // above), and `address` is the non-null address of a function of that type (the
        // contract).
        Some(unsafe { std::mem::transmute_copy::<*mut c_void, T>(&address) })
    }

    /// # Safety
    /// As [`Resolver::optional`].
    unsafe fn required<T: Copy>(
        &mut self,
        name: &CStr,
        symbol: &'static str,
    ) -> Result<T, MissingSymbol> {
        // SAFETY: forwarded contract.
        unsafe { self.optional(name) }.ok_or(MissingSymbol { symbol })
    }
}

/// The functions every hipDNN plugin exports (`PluginApi.h`).
#[derive(Debug, Clone, Copy)]
pub struct BaseApi {
    /// `hipdnnPluginGetLastErrorString`.
    pub get_last_error_string: hipdnnPluginGetLastErrorString_fn,
    /// `hipdnnPluginGetName`.
    pub get_name: hipdnnPluginGetName_fn,
    /// `hipdnnPluginGetVersion`.
    pub get_version: hipdnnPluginGetVersion_fn,
    /// `hipdnnPluginGetType`.
    pub get_type: hipdnnPluginGetType_fn,
    /// `hipdnnPluginGetApiVersion` (optional: absent means `1.0.0`).
    pub get_api_version: Option<hipdnnPluginGetApiVersion_fn>,
    /// `hipdnnPluginSetLoggingCallback` (optional).
    pub set_logging_callback: Option<hipdnnPluginSetLoggingCallback_fn>,
    /// `hipdnnPluginSetLogLevel` (optional).
    pub set_log_level: Option<hipdnnPluginSetLogLevel_fn>,
}

impl BaseApi {
    /// Resolves the base functions through `lookup`, which returns a symbol's address or
    /// null. Required symbols are looked up first, in the field order.
    ///
    /// # Safety
    /// Every non-null address `lookup` returns for a name is the address of the hipDNN
    /// function of that name, with the signature its C declaration gives it, and stays
    /// valid as long as the table (or a copy of it) is used: the library it comes from
    /// stays loaded.
    ///
    /// # Errors
    /// The first required symbol that is missing.
    pub unsafe fn resolve(lookup: impl FnMut(&CStr) -> *mut c_void) -> Result<Self, MissingSymbol> {
        let mut r = Resolver { lookup };
        Ok(Self {
            get_last_error_string: required!(r, hipdnnPluginGetLastErrorString_fn)?,
            get_name: required!(r, hipdnnPluginGetName_fn)?,
            get_version: required!(r, hipdnnPluginGetVersion_fn)?,
            get_type: required!(r, hipdnnPluginGetType_fn)?,
            get_api_version: optional!(r, hipdnnPluginGetApiVersion_fn),
            set_logging_callback: optional!(r, hipdnnPluginSetLoggingCallback_fn),
            set_log_level: optional!(r, hipdnnPluginSetLogLevel_fn),
        })
    }

    /// The optional symbols the plugin does not export.
    pub fn missing_optional(&self) -> Vec<&'static str> {
        let mut missing = Vec::new();
        note_missing!(missing, self.get_api_version, hipdnnPluginGetApiVersion_fn);
        note_missing!(
            missing,
            self.set_logging_callback,
            hipdnnPluginSetLoggingCallback_fn
        );
        note_missing!(missing, self.set_log_level, hipdnnPluginSetLogLevel_fn);
        missing
    }
}

/// The three plan-serialization functions, which count only all together.
#[derive(Debug, Clone, Copy)]
pub struct SerializationApi {
    /// `hipdnnEnginePluginSerializeExecutionContext`.
    pub serialize: hipdnnEnginePluginSerializeExecutionContext_fn,
    /// `hipdnnEnginePluginDestroySerializedExecutionContext`.
    pub destroy_serialized: hipdnnEnginePluginDestroySerializedExecutionContext_fn,
    /// `hipdnnEnginePluginCreateExecutionContextFromSerialized`.
    pub create_from_serialized: hipdnnEnginePluginCreateExecutionContextFromSerialized_fn,
}

/// The engine functions (`EnginePluginApi.h`): 12 required, the rest optional.
#[derive(Debug, Clone, Copy)]
pub struct EngineApi {
    /// `hipdnnEnginePluginGetAllEngineIds`.
    pub get_all_engine_ids: hipdnnEnginePluginGetAllEngineIds_fn,
    /// `hipdnnEnginePluginCreate`.
    pub create: hipdnnEnginePluginCreate_fn,
    /// `hipdnnEnginePluginDestroy`.
    pub destroy: hipdnnEnginePluginDestroy_fn,
    /// `hipdnnEnginePluginSetStream`.
    pub set_stream: hipdnnEnginePluginSetStream_fn,
    /// `hipdnnEnginePluginGetApplicableEngineIds`.
    pub get_applicable_engine_ids: hipdnnEnginePluginGetApplicableEngineIds_fn,
    /// `hipdnnEnginePluginGetEngineDetails`.
    pub get_engine_details: hipdnnEnginePluginGetEngineDetails_fn,
    /// `hipdnnEnginePluginDestroyEngineDetails`.
    pub destroy_engine_details: hipdnnEnginePluginDestroyEngineDetails_fn,
    /// `hipdnnEnginePluginGetWorkspaceSize`.
    pub get_workspace_size: hipdnnEnginePluginGetWorkspaceSize_fn,
    /// `hipdnnEnginePluginCreateExecutionContext`.
    pub create_execution_context: hipdnnEnginePluginCreateExecutionContext_fn,
    /// `hipdnnEnginePluginDestroyExecutionContext`.
    pub destroy_execution_context: hipdnnEnginePluginDestroyExecutionContext_fn,
    /// `hipdnnEnginePluginGetWorkspaceSizeFromExecutionContext`.
    pub get_workspace_size_from_execution_context:
        hipdnnEnginePluginGetWorkspaceSizeFromExecutionContext_fn,
    /// `hipdnnEnginePluginExecuteOpGraph`.
    pub execute_op_graph: hipdnnEnginePluginExecuteOpGraph_fn,
    /// `hipdnnEnginePluginGetEngineName` (optional, ABI 1.4).
    pub get_engine_name: Option<hipdnnEnginePluginGetEngineName_fn>,
    /// `hipdnnEnginePluginExecuteOpGraphWithOverrides` (optional, ABI 1.1).
    pub execute_op_graph_with_overrides: Option<hipdnnEnginePluginExecuteOpGraphWithOverrides_fn>,
    /// `hipdnnEnginePluginSerializeExecutionContext` (optional, see
    /// [`EngineApi::serialization`]).
    pub serialize_execution_context: Option<hipdnnEnginePluginSerializeExecutionContext_fn>,
    /// `hipdnnEnginePluginDestroySerializedExecutionContext` (optional).
    pub destroy_serialized_execution_context:
        Option<hipdnnEnginePluginDestroySerializedExecutionContext_fn>,
    /// `hipdnnEnginePluginCreateExecutionContextFromSerialized` (optional).
    pub create_execution_context_from_serialized:
        Option<hipdnnEnginePluginCreateExecutionContextFromSerialized_fn>,
}

impl EngineApi {
    /// Resolves the engine functions through `lookup`, as [`BaseApi::resolve`].
    ///
    /// # Safety
    /// As [`BaseApi::resolve`].
    ///
    /// # Errors
    /// The first required symbol that is missing.
    pub unsafe fn resolve(lookup: impl FnMut(&CStr) -> *mut c_void) -> Result<Self, MissingSymbol> {
        let mut r = Resolver { lookup };
        Ok(Self {
            get_all_engine_ids: required!(r, hipdnnEnginePluginGetAllEngineIds_fn)?,
            create: required!(r, hipdnnEnginePluginCreate_fn)?,
            destroy: required!(r, hipdnnEnginePluginDestroy_fn)?,
            set_stream: required!(r, hipdnnEnginePluginSetStream_fn)?,
            get_applicable_engine_ids: required!(r, hipdnnEnginePluginGetApplicableEngineIds_fn)?,
            get_engine_details: required!(r, hipdnnEnginePluginGetEngineDetails_fn)?,
            destroy_engine_details: required!(r, hipdnnEnginePluginDestroyEngineDetails_fn)?,
            get_workspace_size: required!(r, hipdnnEnginePluginGetWorkspaceSize_fn)?,
            create_execution_context: required!(r, hipdnnEnginePluginCreateExecutionContext_fn)?,
            destroy_execution_context: required!(r, hipdnnEnginePluginDestroyExecutionContext_fn)?,
            get_workspace_size_from_execution_context: required!(
                r,
                hipdnnEnginePluginGetWorkspaceSizeFromExecutionContext_fn
            )?,
            execute_op_graph: required!(r, hipdnnEnginePluginExecuteOpGraph_fn)?,
            get_engine_name: optional!(r, hipdnnEnginePluginGetEngineName_fn),
            execute_op_graph_with_overrides: optional!(
                r,
                hipdnnEnginePluginExecuteOpGraphWithOverrides_fn
            ),
            serialize_execution_context: optional!(
                r,
                hipdnnEnginePluginSerializeExecutionContext_fn
            ),
            destroy_serialized_execution_context: optional!(
                r,
                hipdnnEnginePluginDestroySerializedExecutionContext_fn
            ),
            create_execution_context_from_serialized: optional!(
                r,
                hipdnnEnginePluginCreateExecutionContextFromSerialized_fn
            ),
        })
    }

    /// The plan-serialization functions, when all three are exported.
    pub fn serialization(&self) -> Option<SerializationApi> {
        Some(SerializationApi {
            serialize: self.serialize_execution_context?,
            destroy_serialized: self.destroy_serialized_execution_context?,
            create_from_serialized: self.create_execution_context_from_serialized?,
        })
    }

    /// Whether some but not all of the three plan-serialization functions are exported
    /// (serialization is then unsupported).
    pub fn has_partial_serialization(&self) -> bool {
        let present = [
            self.serialize_execution_context.is_some(),
            self.destroy_serialized_execution_context.is_some(),
            self.create_execution_context_from_serialized.is_some(),
        ];
        present.contains(&true) && present.contains(&false)
    }

    /// The optional symbols the plugin does not export.
    pub fn missing_optional(&self) -> Vec<&'static str> {
        let mut missing = Vec::new();
        note_missing!(
            missing,
            self.get_engine_name,
            hipdnnEnginePluginGetEngineName_fn
        );
        note_missing!(
            missing,
            self.execute_op_graph_with_overrides,
            hipdnnEnginePluginExecuteOpGraphWithOverrides_fn
        );
        note_missing!(
            missing,
            self.serialize_execution_context,
            hipdnnEnginePluginSerializeExecutionContext_fn
        );
        note_missing!(
            missing,
            self.destroy_serialized_execution_context,
            hipdnnEnginePluginDestroySerializedExecutionContext_fn
        );
        note_missing!(
            missing,
            self.create_execution_context_from_serialized,
            hipdnnEnginePluginCreateExecutionContextFromSerialized_fn
        );
        missing
    }
}

/// Every function of an engine plugin: [`BaseApi`] and [`EngineApi`] resolved together.
#[derive(Debug, Clone, Copy)]
pub struct EnginePluginApi {
    /// The base functions.
    pub base: BaseApi,
    /// The engine functions.
    pub engine: EngineApi,
}

impl EnginePluginApi {
    /// Resolves both tables through `lookup` (base functions first).
    ///
    /// # Safety
    /// As [`BaseApi::resolve`].
    ///
    /// # Errors
    /// The first required symbol that is missing.
    pub unsafe fn resolve(
        mut lookup: impl FnMut(&CStr) -> *mut c_void,
    ) -> Result<Self, MissingSymbol> {
        // SAFETY: the caller's contract is the one both resolutions need.
        unsafe {
            Ok(Self {
                base: BaseApi::resolve(&mut lookup)?,
                engine: EngineApi::resolve(&mut lookup)?,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// Addresses of local functions with each declared signature, keyed by symbol name.
    fn fake_exports() -> HashMap<&'static str, *mut c_void> {
        unsafe extern "C" fn string(_: *mut *const std::ffi::c_char) -> hipdnnPluginStatus_t {
            HIPDNN_PLUGIN_STATUS_SUCCESS
        }
        unsafe extern "C" fn last_error(_: *mut *const std::ffi::c_char) {}
        unsafe extern "C" fn plugin_type(out: *mut hipdnnPluginType_t) -> hipdnnPluginStatus_t {
            // SAFETY: the test passes a writable out-parameter.
            unsafe { out.write(HIPDNN_PLUGIN_TYPE_ENGINE) };
            HIPDNN_PLUGIN_STATUS_SUCCESS
        }
        let get_name: hipdnnPluginGetName_fn = string;
        let get_version: hipdnnPluginGetVersion_fn = string;
        let get_last_error: hipdnnPluginGetLastErrorString_fn = last_error;
        let get_type: hipdnnPluginGetType_fn = plugin_type;
        HashMap::from([
            ("hipdnnPluginGetName", get_name as *mut c_void),
            ("hipdnnPluginGetVersion", get_version as *mut c_void),
            (
                "hipdnnPluginGetLastErrorString",
                get_last_error as *mut c_void,
            ),
            ("hipdnnPluginGetType", get_type as *mut c_void),
        ])
    }

    fn lookup_in<'a>(
        exports: &'a HashMap<&'static str, *mut c_void>,
    ) -> impl FnMut(&CStr) -> *mut c_void + 'a {
        |name| {
            let name = name.to_str().expect("ASCII symbol names");
            exports.get(name).copied().unwrap_or(std::ptr::null_mut())
        }
    }

    #[test]
    fn base_functions_resolve_with_their_types_and_report_missing_optional_ones() {
        let exports = fake_exports();
        // SAFETY: each address is a function with the signature of the name it is under.
        let base = unsafe { BaseApi::resolve(lookup_in(&exports)) }.expect("all required");
        let mut kind = HIPDNN_PLUGIN_TYPE_UNSPECIFIED;
        // SAFETY: resolved with its declared type; a writable out-parameter.
        let status = unsafe { (base.get_type)(&mut kind) };
        assert_eq!(status, HIPDNN_PLUGIN_STATUS_SUCCESS);
        assert_eq!(kind, HIPDNN_PLUGIN_TYPE_ENGINE);
        assert_eq!(
            base.missing_optional(),
            [
                "hipdnnPluginGetApiVersion",
                "hipdnnPluginSetLoggingCallback",
                "hipdnnPluginSetLogLevel"
            ]
        );
    }

    #[test]
    fn a_missing_required_symbol_is_named() {
        let mut exports = fake_exports();
        exports.remove("hipdnnPluginGetVersion");
        // SAFETY: as above.
        let error = unsafe { BaseApi::resolve(lookup_in(&exports)) }.unwrap_err();
        assert_eq!(error.symbol, "hipdnnPluginGetVersion");
        assert_eq!(
            error.to_string(),
            "the required symbol `hipdnnPluginGetVersion` is missing"
        );
        // SAFETY: as above.
        let error = unsafe { EngineApi::resolve(lookup_in(&exports)) }.unwrap_err();
        assert_eq!(error.symbol, "hipdnnEnginePluginGetAllEngineIds");
    }
}
