//! RAII over the backend API: descriptors that destroy themselves, a cuDNN handle, and
//! the few multi-call sequences every plan needs (heuristics, plan finalization,
//! execution through a variant pack).

use std::ffi::c_void;

use super::result::{self, CudnnError};
use super::sys::{
    self, cudnnBackendAttributeName_t as Attr, cudnnBackendAttributeType_t as AttrType,
    cudnnBackendDescriptorType_t as DescKind,
};

/// One backend descriptor, destroyed on drop.
#[derive(Debug)]
pub struct Descriptor {
    raw: sys::cudnnBackendDescriptor_t,
    kind: DescKind,
}

// SAFETY: a backend descriptor is a heap object of cuDNN's, not tied to a thread. We
// mutate descriptors only while building (one owner); finalized ones are only read,
// and executions that use them are serialized on the cuDNN handle.
unsafe impl Send for Descriptor {}
// SAFETY: as above.
unsafe impl Sync for Descriptor {}

impl Drop for Descriptor {
    fn drop(&mut self) {
        // SAFETY: created by `Descriptor::new` and owned by us.
        unsafe { result::destroy_descriptor(self.raw) }
    }
}

impl Descriptor {
    /// A new, empty descriptor of `kind`.
    ///
    /// # Errors
    /// cuDNN's.
    pub fn new(kind: DescKind) -> Result<Self, CudnnError> {
        Ok(Self {
            raw: result::create_descriptor(kind)?,
            kind,
        })
    }

    /// The raw descriptor (valid while `self` lives).
    pub fn raw(&self) -> sys::cudnnBackendDescriptor_t {
        self.raw
    }

    /// What kind of descriptor this is.
    pub fn kind(&self) -> DescKind {
        self.kind
    }

    fn set<T>(
        &mut self,
        name: Attr,
        kind: AttrType,
        values: &[T],
    ) -> Result<&mut Self, CudnnError> {
        let count = i64::try_from(values.len()).expect("attribute arrays are short");
        // SAFETY: `values` holds `count` elements of the C type `kind` names (each
        // caller below pairs the Rust type with its attribute type).
        unsafe { result::set_attribute(self.raw, name, kind, count, values.as_ptr().cast()) }?;
        Ok(self)
    }

    /// Sets an `INT64` array attribute.
    pub fn set_i64s(&mut self, name: Attr, values: &[i64]) -> Result<&mut Self, CudnnError> {
        self.set(name, AttrType::CUDNN_TYPE_INT64, values)
    }

    /// Sets an `INT64` attribute.
    pub fn set_i64(&mut self, name: Attr, value: i64) -> Result<&mut Self, CudnnError> {
        self.set_i64s(name, &[value])
    }

    /// Sets a `BOOLEAN` attribute.
    pub fn set_bool(&mut self, name: Attr, value: bool) -> Result<&mut Self, CudnnError> {
        // cudnnBackendAttributeType_t BOOLEAN is C `bool` (one byte).
        self.set(name, AttrType::CUDNN_TYPE_BOOLEAN, &[value])
    }

    /// Sets a `FLOAT` attribute.
    pub fn set_f32(&mut self, name: Attr, value: f32) -> Result<&mut Self, CudnnError> {
        self.set(name, AttrType::CUDNN_TYPE_FLOAT, &[value])
    }

    /// Sets a `DOUBLE` attribute.
    pub fn set_f64(&mut self, name: Attr, value: f64) -> Result<&mut Self, CudnnError> {
        self.set(name, AttrType::CUDNN_TYPE_DOUBLE, &[value])
    }

    /// Sets a `DATA_TYPE` attribute.
    pub fn set_data_type(
        &mut self,
        name: Attr,
        value: sys::cudnnDataType_t,
    ) -> Result<&mut Self, CudnnError> {
        self.set(name, AttrType::CUDNN_TYPE_DATA_TYPE, &[value])
    }

    /// Sets a `CONVOLUTION_MODE` attribute.
    pub fn set_conv_mode(
        &mut self,
        name: Attr,
        value: sys::cudnnConvolutionMode_t,
    ) -> Result<&mut Self, CudnnError> {
        self.set(name, AttrType::CUDNN_TYPE_CONVOLUTION_MODE, &[value])
    }

    /// Sets a `POINTWISE_MODE` attribute.
    pub fn set_pointwise_mode(
        &mut self,
        name: Attr,
        value: sys::cudnnPointwiseMode_t,
    ) -> Result<&mut Self, CudnnError> {
        self.set(name, AttrType::CUDNN_TYPE_POINTWISE_MODE, &[value])
    }

    /// Sets a `NORM_MODE` attribute.
    pub fn set_norm_mode(
        &mut self,
        name: Attr,
        value: sys::cudnnBackendNormMode_t,
    ) -> Result<&mut Self, CudnnError> {
        self.set(name, AttrType::CUDNN_TYPE_NORM_MODE, &[value])
    }

    /// Sets a `NORM_FWD_PHASE` attribute.
    pub fn set_norm_phase(
        &mut self,
        name: Attr,
        value: sys::cudnnBackendNormFwdPhase_t,
    ) -> Result<&mut Self, CudnnError> {
        self.set(name, AttrType::CUDNN_TYPE_NORM_FWD_PHASE, &[value])
    }

    /// Sets a `HEUR_MODE` attribute.
    pub fn set_heur_mode(
        &mut self,
        name: Attr,
        value: sys::cudnnBackendHeurMode_t,
    ) -> Result<&mut Self, CudnnError> {
        self.set(name, AttrType::CUDNN_TYPE_HEUR_MODE, &[value])
    }

    /// Sets a `HANDLE` attribute.
    pub fn set_handle(
        &mut self,
        name: Attr,
        handle: &CudnnHandle,
    ) -> Result<&mut Self, CudnnError> {
        self.set(name, AttrType::CUDNN_TYPE_HANDLE, &[handle.raw])
    }

    /// Sets a `BACKEND_DESCRIPTOR` array attribute.
    pub fn set_descriptors(
        &mut self,
        name: Attr,
        values: &[&Descriptor],
    ) -> Result<&mut Self, CudnnError> {
        let raw: Vec<sys::cudnnBackendDescriptor_t> = values.iter().map(|d| d.raw).collect();
        self.set(name, AttrType::CUDNN_TYPE_BACKEND_DESCRIPTOR, &raw)
    }

    /// Sets a `BACKEND_DESCRIPTOR` attribute.
    pub fn set_descriptor(
        &mut self,
        name: Attr,
        value: &Descriptor,
    ) -> Result<&mut Self, CudnnError> {
        self.set_descriptors(name, &[value])
    }

    /// Sets a `VOID_PTR` array attribute.
    pub fn set_pointers(
        &mut self,
        name: Attr,
        values: &[*mut c_void],
    ) -> Result<&mut Self, CudnnError> {
        self.set(name, AttrType::CUDNN_TYPE_VOID_PTR, values)
    }

    /// Finalizes the descriptor.
    ///
    /// # Errors
    /// cuDNN's (for operation graphs and plans: the graph or configuration is not
    /// supported).
    pub fn finalize(&mut self) -> Result<&mut Self, CudnnError> {
        // SAFETY: `raw` is live.
        unsafe { result::finalize(self.raw) }?;
        Ok(self)
    }

    /// Reads an `INT64` attribute.
    ///
    /// # Errors
    /// cuDNN's.
    pub fn get_i64(&self, name: Attr) -> Result<i64, CudnnError> {
        let mut value = 0i64;
        // SAFETY: room for one INT64.
        unsafe {
            result::get_attribute(
                self.raw,
                name,
                AttrType::CUDNN_TYPE_INT64,
                1,
                (&raw mut value).cast(),
            )
        }?;
        Ok(value)
    }

    /// Reads up to `capacity` numerical notes (`ENGINE_NUMERICAL_NOTE`).
    ///
    /// # Errors
    /// cuDNN's.
    pub fn numerical_notes(&self) -> Result<Vec<sys::cudnnBackendNumericalNote_t>, CudnnError> {
        const CAPACITY: usize = 16;
        let mut notes =
            [sys::cudnnBackendNumericalNote_t::CUDNN_NUMERICAL_NOTE_TENSOR_CORE; CAPACITY];
        // SAFETY: room for CAPACITY notes (C enums, 4 bytes each like the Rust enum).
        let count = unsafe {
            result::get_attribute(
                self.raw,
                Attr::CUDNN_ATTR_ENGINE_NUMERICAL_NOTE,
                AttrType::CUDNN_TYPE_NUMERICAL_NOTE,
                CAPACITY as i64,
                notes.as_mut_ptr().cast(),
            )
        }?;
        let count = usize::try_from(count).unwrap_or(0).min(CAPACITY);
        Ok(notes[..count].to_vec())
    }

    /// Reads a `CHAR` array attribute (e.g. a plan's JSON representation).
    ///
    /// # Errors
    /// cuDNN's.
    pub fn get_text(&self, name: Attr) -> Result<String, CudnnError> {
        // SAFETY: capacity 0 with a null array asks only for the length.
        let len = unsafe {
            result::get_attribute(
                self.raw,
                name,
                AttrType::CUDNN_TYPE_CHAR,
                0,
                std::ptr::null_mut(),
            )
        }?;
        let mut bytes = vec![0u8; usize::try_from(len).unwrap_or(0)];
        // SAFETY: room for `len` chars.
        let got = unsafe {
            result::get_attribute(
                self.raw,
                name,
                AttrType::CUDNN_TYPE_CHAR,
                len,
                bytes.as_mut_ptr().cast(),
            )
        }?;
        bytes.truncate(usize::try_from(got).unwrap_or(0));
        while bytes.last() == Some(&0) {
            bytes.pop();
        }
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }
}

/// A cuDNN handle, destroyed on drop. cuDNN handles are not for concurrent use: the
/// plugin keeps each behind a lock.
#[derive(Debug)]
pub struct CudnnHandle {
    raw: sys::cudnnHandle_t,
}

// SAFETY: a cuDNN handle may move between threads; concurrent use is prevented by the
// plugin's lock around every call that takes it.
unsafe impl Send for CudnnHandle {}
// SAFETY: as above.
unsafe impl Sync for CudnnHandle {}

impl CudnnHandle {
    /// `cudnnCreate` (on the calling thread's current CUDA device).
    ///
    /// # Errors
    /// cuDNN's (e.g. no device, driver too old).
    pub fn new() -> Result<Self, CudnnError> {
        Ok(Self {
            raw: result::create_handle()?,
        })
    }

    /// The raw handle.
    pub fn raw(&self) -> sys::cudnnHandle_t {
        self.raw
    }

    /// Makes the handle enqueue on `stream` (a CUDA stream; null for the default one).
    ///
    /// # Safety
    /// `stream` is a live CUDA stream of the handle's device, or null.
    ///
    /// # Errors
    /// cuDNN's.
    pub unsafe fn set_stream(&self, stream: *mut c_void) -> Result<(), CudnnError> {
        // SAFETY: per the contract.
        unsafe { result::set_stream(self.raw, stream.cast()) }
    }
}

impl Drop for CudnnHandle {
    fn drop(&mut self) {
        // SAFETY: created by `cudnnCreate` and owned by us.
        let _ = unsafe { result::destroy_handle(self.raw) };
    }
}

/// Asks cuDNN's heuristics for up to `max` engine configurations of a finalized
/// operation graph, best first.
///
/// # Errors
/// cuDNN's.
pub fn heuristics(
    graph: &Descriptor,
    mode: sys::cudnnBackendHeurMode_t,
    max: usize,
) -> Result<Vec<Descriptor>, CudnnError> {
    let mut heur = Descriptor::new(DescKind::CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR)?;
    heur.set_descriptor(Attr::CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph)?
        .set_heur_mode(Attr::CUDNN_ATTR_ENGINEHEUR_MODE, mode)?
        .finalize()?;
    // SAFETY: capacity 0 with a null array asks only for the count.
    let available = unsafe {
        result::get_attribute(
            heur.raw,
            Attr::CUDNN_ATTR_ENGINEHEUR_RESULTS,
            AttrType::CUDNN_TYPE_BACKEND_DESCRIPTOR,
            0,
            std::ptr::null_mut(),
        )
    }?;
    let count = usize::try_from(available).unwrap_or(0).min(max);
    let configs = (0..count)
        .map(|_| Descriptor::new(DescKind::CUDNN_BACKEND_ENGINECFG_DESCRIPTOR))
        .collect::<Result<Vec<_>, _>>()?;
    let mut raw: Vec<_> = configs.iter().map(|c| c.raw).collect();
    // SAFETY: `raw` holds `count` created ENGINECFG descriptors for cuDNN to fill.
    let filled = unsafe {
        result::get_attribute(
            heur.raw,
            Attr::CUDNN_ATTR_ENGINEHEUR_RESULTS,
            AttrType::CUDNN_TYPE_BACKEND_DESCRIPTOR,
            count as i64,
            raw.as_mut_ptr().cast(),
        )
    }?;
    let mut configs = configs;
    configs.truncate(usize::try_from(filled).unwrap_or(0).min(count));
    Ok(configs)
}

/// The engine of an engine configuration (to read its notes).
///
/// # Errors
/// cuDNN's.
pub fn engine_of(config: &Descriptor) -> Result<Descriptor, CudnnError> {
    let engine = Descriptor::new(DescKind::CUDNN_BACKEND_ENGINE_DESCRIPTOR)?;
    let mut raw = engine.raw;
    // SAFETY: room for one descriptor, created above, for cuDNN to fill.
    unsafe {
        result::get_attribute(
            config.raw,
            Attr::CUDNN_ATTR_ENGINECFG_ENGINE,
            AttrType::CUDNN_TYPE_BACKEND_DESCRIPTOR,
            1,
            (&raw mut raw).cast(),
        )
    }?;
    Ok(engine)
}

/// Finalizes an execution plan for `config` on `handle`.
///
/// # Errors
/// cuDNN's (the configuration cannot run this graph on this device).
pub fn execution_plan(handle: &CudnnHandle, config: &Descriptor) -> Result<Descriptor, CudnnError> {
    let mut plan = Descriptor::new(DescKind::CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR)?;
    plan.set_handle(Attr::CUDNN_ATTR_EXECUTION_PLAN_HANDLE, handle)?
        .set_descriptor(Attr::CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, config)?
        .finalize()?;
    Ok(plan)
}

/// A finalized variant pack: one pointer per uid and the workspace.
#[derive(Debug)]
pub struct VariantPack {
    desc: Descriptor,
    pointers: Vec<*mut c_void>,
    workspace: *mut c_void,
}

// SAFETY: the pointers are addresses handed to cuDNN, never dereferenced here; the
// descriptor is as `Descriptor`.
unsafe impl Send for VariantPack {}
// SAFETY: as above.
unsafe impl Sync for VariantPack {}

impl VariantPack {
    /// Finalizes a pack binding `pointers[i]` to `uids[i]`, and `workspace`.
    ///
    /// # Errors
    /// cuDNN's.
    pub fn new(
        uids: &[i64],
        pointers: &[*mut c_void],
        workspace: *mut c_void,
    ) -> Result<Self, CudnnError> {
        let mut desc = Descriptor::new(DescKind::CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR)?;
        desc.set_i64s(Attr::CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, uids)?
            .set_pointers(Attr::CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, pointers)?
            .set_pointers(Attr::CUDNN_ATTR_VARIANT_PACK_WORKSPACE, &[workspace])?
            .finalize()?;
        Ok(Self {
            desc,
            pointers: pointers.to_vec(),
            workspace,
        })
    }

    /// Whether the pack binds exactly these pointers.
    pub fn binds(&self, pointers: &[*mut c_void], workspace: *mut c_void) -> bool {
        self.workspace == workspace && self.pointers == pointers
    }
}

/// Runs `plan` with a variant pack on the handle's stream.
///
/// # Safety
/// `plan` was finalized on `handle`; the pack's pointers address each tensor (device
/// memory, or a host scalar for by-value tensors) and at least the plan's workspace,
/// alive until the enqueued work completes.
///
/// # Errors
/// cuDNN's.
pub unsafe fn execute_pack(
    handle: &CudnnHandle,
    plan: &Descriptor,
    pack: &VariantPack,
) -> Result<(), CudnnError> {
    // SAFETY: per the contract.
    unsafe { result::execute(handle.raw, plan.raw, pack.desc.raw) }
}

/// Runs `plan` with one pointer per uid and the workspace, on the handle's stream.
///
/// # Safety
/// As [`execute_pack`], for the pointers given.
///
/// # Errors
/// cuDNN's.
pub unsafe fn execute(
    handle: &CudnnHandle,
    plan: &Descriptor,
    uids: &[i64],
    pointers: &[*mut c_void],
    workspace: *mut c_void,
) -> Result<(), CudnnError> {
    let pack = VariantPack::new(uids, pointers, workspace)?;
    // SAFETY: per the contract.
    unsafe { execute_pack(handle, plan, &pack) }
}
