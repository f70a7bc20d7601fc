//! Small IR helpers for passes (in-tree and plugin): an [`Op`] handle with the queries and
//! rewrites our passes need (walk, attributes, replace, erase), shape helpers, and
//! [`PassError`].
//!
//! An [`Op`] is a copyable handle into IR owned elsewhere (a module being compiled), as
//! melior's `OperationRef` is. It must not be used after the operation was erased; the
//! rewriting helpers ([`Op::replace_with`], [`Op::erase`]) take `self` to make that visible
//! at the call site. Types, attributes and values are melior's.

use melior::{
    Context, ContextRef,
    ir::{
        Attribute, AttributeLike, Location, Operation, OperationRef, Type, TypeLike, Value,
        ValueLike,
    },
};
use mlir_sys::{
    MlirOperation, MlirWalkResult_MlirWalkResultAdvance, mlirBlockGetFirstOperation,
    mlirBlockInsertOwnedOperationBefore, mlirEmitError, mlirIdentifierGet, mlirIdentifierStr,
    mlirOperationDestroy, mlirOperationGetAttributeByName, mlirOperationGetBlock,
    mlirOperationGetContext, mlirOperationGetFirstRegion, mlirOperationGetLocation,
    mlirOperationGetName, mlirOperationGetNextInBlock, mlirOperationGetNumOperands,
    mlirOperationGetNumResults, mlirOperationGetOperand, mlirOperationGetParentOperation,
    mlirOperationGetResult, mlirOperationRemoveAttributeByName, mlirOperationRemoveFromParent,
    mlirOperationSetAttributeByName, mlirOperationWalk, mlirRegionGetFirstBlock,
    mlirShapedTypeGetDimSize, mlirShapedTypeGetElementType, mlirShapedTypeGetRank,
    mlirShapedTypeHasStaticShape, mlirTypeIsAMemRef, mlirTypeIsARankedTensor,
    mlirValueReplaceAllUsesOfWith,
};
use std::ffi::{CString, c_void};
use std::fmt;
use std::marker::PhantomData;

use crate::ffi::string_ref;

/// A failure of a pass, reported as an MLIR error at `location` (or at the pass's root op).
#[derive(Debug, Clone)]
pub struct PassError {
    location: Option<mlir_sys::MlirLocation>,
    message: String,
}

impl PassError {
    /// An error located at `op`.
    pub fn at(op: Op<'_>, message: impl Into<String>) -> Self {
        // SAFETY: `op` is a live operation (Op invariant).
        let location = unsafe { mlirOperationGetLocation(op.raw) };
        Self {
            location: Some(location),
            message: message.into(),
        }
    }

    /// An error without a location of its own (reported at the pass's root op).
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            location: None,
            message: message.into(),
        }
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Emits the error through MLIR's diagnostics, at its location or `fallback`'s.
    pub(crate) fn emit(&self, pass: &str, fallback: Op<'_>) {
        // SAFETY: `fallback` is live; the location came from a live op of the same context.
        let location = self
            .location
            .unwrap_or_else(|| unsafe { mlirOperationGetLocation(fallback.raw) });
        let text = CString::new(format!("{pass}: {}", self.message).replace('\0', " "))
            .expect("nul bytes were replaced");
        // SAFETY: location is valid; text is a nul-terminated string read during the call.
        unsafe { mlirEmitError(location, text.as_ptr()) };
    }
}

impl fmt::Display for PassError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for PassError {}

/// A handle to an operation of IR that lives for `'c` (see the module docs).
#[derive(Clone, Copy)]
pub struct Op<'c> {
    raw: MlirOperation,
    _ir: PhantomData<&'c ()>,
}

impl PartialEq for Op<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.raw.ptr == other.raw.ptr
    }
}

impl Eq for Op<'_> {}

impl fmt::Debug for Op<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Op({})", self.name())
    }
}

impl<'c> Op<'c> {
    /// A handle to the operation `op` refers to.
    pub fn new(op: OperationRef<'c, '_>) -> Self {
        Self {
            raw: op.to_raw(),
            _ir: PhantomData,
        }
    }

    /// Wraps a raw operation.
    ///
    /// # Safety
    /// `raw` must be a live operation whose IR outlives `'c`.
    pub unsafe fn from_raw(raw: MlirOperation) -> Self {
        Self {
            raw,
            _ir: PhantomData,
        }
    }

    /// The raw handle.
    pub fn to_raw(self) -> MlirOperation {
        self.raw
    }

    /// A melior reference to the operation.
    pub fn as_ref(self) -> OperationRef<'c, 'c> {
        // SAFETY: live operation (Op invariant).
        unsafe { OperationRef::from_raw(self.raw) }
    }

    /// The operation name, e.g. `onnx.Add`.
    pub fn name(self) -> &'c str {
        // SAFETY: live operation; identifiers are owned by the context and live as long.
        unsafe {
            let s = mlirIdentifierStr(mlirOperationGetName(self.raw));
            let bytes = std::slice::from_raw_parts(s.data.cast::<u8>(), s.length);
            std::str::from_utf8(bytes).unwrap_or("<non-utf8>")
        }
    }

    /// The symbol name (`sym_name`), for functions and globals.
    pub fn symbol_name(self) -> Option<&'c str> {
        self.attr("sym_name")
            .and_then(|a| melior::ir::attribute::StringAttribute::try_from(a).ok())
            .map(|s| s.value())
    }

    /// The strings of an array-of-strings attribute (empty when absent).
    pub fn string_array_attr(self, name: &str) -> Vec<&'c str> {
        use melior::ir::attribute::{ArrayAttribute, StringAttribute};
        let Some(array) = self
            .attr(name)
            .and_then(|a| ArrayAttribute::try_from(a).ok())
        else {
            return Vec::new();
        };
        (0..array.len())
            .filter_map(|i| array.element(i).ok())
            .filter_map(|a| StringAttribute::try_from(a).ok())
            .map(|s| s.value())
            .collect()
    }

    /// Appends `entry` to an array-of-strings attribute (created when absent); returns the
    /// new length.
    pub fn append_string_attr(self, name: &str, entry: &str) -> usize {
        use melior::ir::attribute::{ArrayAttribute, StringAttribute};
        let ctx = self.ctx();
        let mut items: Vec<Attribute<'c>> = self
            .string_array_attr(name)
            .into_iter()
            .map(|s| StringAttribute::new(ctx, s).into())
            .collect();
        items.push(StringAttribute::new(ctx, entry).into());
        self.set_attr(name, ArrayAttribute::new(ctx, &items).into());
        items.len()
    }

    /// The dialect namespace (the part before the first `.`).
    pub fn dialect(self) -> &'c str {
        let name = self.name();
        name.split_once('.').map_or(name, |(d, _)| d)
    }

    /// The context.
    pub fn context(self) -> ContextRef<'c> {
        // SAFETY: live operation.
        unsafe { ContextRef::from_raw(mlirOperationGetContext(self.raw)) }
    }

    /// The context as `&Context`, for melior constructors.
    pub fn ctx(self) -> &'c Context {
        // SAFETY: live operation; its context outlives the IR, hence `'c`.
        unsafe { context_from_raw(mlirOperationGetContext(self.raw)) }
    }

    /// The location.
    pub fn location(self) -> Location<'c> {
        // SAFETY: live operation.
        unsafe { Location::from_raw(mlirOperationGetLocation(self.raw)) }
    }

    /// The operands.
    pub fn operands(self) -> Vec<Value<'c, 'c>> {
        // SAFETY: live operation; indices are in range.
        unsafe {
            (0..mlirOperationGetNumOperands(self.raw))
                .map(|i| Value::from_raw(mlirOperationGetOperand(self.raw, i)))
                .collect()
        }
    }

    /// The results.
    pub fn results(self) -> Vec<Value<'c, 'c>> {
        // SAFETY: live operation; indices are in range.
        unsafe {
            (0..mlirOperationGetNumResults(self.raw))
                .map(|i| Value::from_raw(mlirOperationGetResult(self.raw, i)))
                .collect()
        }
    }

    /// An attribute (inherent or discardable) by name.
    pub fn attr(self, name: &str) -> Option<Attribute<'c>> {
        // SAFETY: live operation; the string ref is valid for the call.
        let raw = unsafe { mlirOperationGetAttributeByName(self.raw, string_ref(name)) };
        // SAFETY: a null attribute means "absent".
        unsafe { Attribute::from_option_raw(raw) }
    }

    /// Sets an attribute.
    pub fn set_attr(self, name: &str, value: Attribute<'c>) {
        // SAFETY: live operation and attribute of the same context.
        unsafe { mlirOperationSetAttributeByName(self.raw, string_ref(name), value.to_raw()) }
    }

    /// Removes an attribute (no-op when absent).
    pub fn remove_attr(self, name: &str) {
        // SAFETY: live operation.
        unsafe {
            mlirOperationRemoveAttributeByName(self.raw, string_ref(name));
        }
    }

    /// The operation this one is nested in.
    pub fn parent(self) -> Option<Op<'c>> {
        // SAFETY: live operation; a null parent means "top level".
        let raw = unsafe { mlirOperationGetParentOperation(self.raw) };
        (!raw.ptr.is_null()).then_some(Op {
            raw,
            _ir: PhantomData,
        })
    }

    /// The operations of the first block of the first region, in order (empty without one).
    pub fn body_ops(self) -> Vec<Op<'c>> {
        let mut out = Vec::new();
        // SAFETY: live operation; null regions/blocks/ops end the iteration.
        unsafe {
            let region = mlirOperationGetFirstRegion(self.raw);
            if region.ptr.is_null() {
                return out;
            }
            let block = mlirRegionGetFirstBlock(region);
            if block.ptr.is_null() {
                return out;
            }
            let mut op = mlirBlockGetFirstOperation(block);
            while !op.ptr.is_null() {
                out.push(Op {
                    raw: op,
                    _ir: PhantomData,
                });
                op = mlirOperationGetNextInBlock(op);
            }
        }
        out
    }

    /// Every operation nested in this one (not itself), in pre-order. Collected first, so
    /// the caller may rewrite while iterating over the result.
    pub fn nested_ops(self) -> Vec<Op<'c>> {
        unsafe extern "C" fn collect(
            op: MlirOperation,
            data: *mut c_void,
        ) -> mlir_sys::MlirWalkResult {
            // SAFETY: `data` is the Vec passed below, alive for the walk.
            let out = unsafe { &mut *data.cast::<Vec<MlirOperation>>() };
            out.push(op);
            MlirWalkResult_MlirWalkResultAdvance
        }
        let mut raw: Vec<MlirOperation> = Vec::new();
        // SAFETY: live operation; the callback only pushes handles.
        unsafe {
            mlirOperationWalk(
                self.raw,
                Some(collect),
                (&mut raw as *mut Vec<MlirOperation>).cast(),
                mlir_sys::MlirWalkOrder_MlirWalkPreOrder,
            );
        }
        raw.into_iter()
            .filter(|r| r.ptr != self.raw.ptr)
            .map(|raw| Op {
                raw,
                _ir: PhantomData,
            })
            .collect()
    }

    /// Inserts `new` right before this operation (same block) and returns it.
    pub fn insert_before(self, new: Operation<'c>) -> Op<'c> {
        // SAFETY: live operation with a parent block (passes only rewrite nested ops);
        // ownership of `new` moves into the block.
        unsafe {
            let block = mlirOperationGetBlock(self.raw);
            assert!(
                !block.ptr.is_null(),
                "insert_before on a top-level operation"
            );
            let raw = new.into_raw();
            mlirBlockInsertOwnedOperationBefore(block, self.raw, raw);
            Op {
                raw,
                _ir: PhantomData,
            }
        }
    }

    /// Replaces this operation by `new`: inserts it here, redirects each use of result `i`
    /// to `new`'s result `i`, and erases this one. Result counts must match.
    pub fn replace_with(self, new: Operation<'c>) -> Op<'c> {
        let new = self.insert_before(new);
        let old_results = self.results();
        let new_results = new.results();
        assert_eq!(
            old_results.len(),
            new_results.len(),
            "replace_with: {} has {} results, {} has {}",
            self.name(),
            old_results.len(),
            new.name(),
            new_results.len()
        );
        for (old, new) in old_results.iter().zip(&new_results) {
            replace_all_uses(*old, *new);
        }
        self.erase();
        new
    }

    /// Erases this operation (its results must have no uses left).
    pub fn erase(self) {
        // SAFETY: live operation; after this call the handle is dead (taken by value).
        unsafe {
            mlirOperationRemoveFromParent(self.raw);
            mlirOperationDestroy(self.raw);
        }
    }
}

/// `&Context` for a raw context, valid as long as the context. melior's
/// `ContextRef::to_ref` hands out a reference to the `ContextRef` itself, so the `ContextRef`
/// must outlive the result: we keep one per raw context, leaked, in a process-wide table
/// (a few bytes per distinct context address; a reused address maps to the same raw pointer,
/// which is all the reference holds).
///
/// # Safety
/// `raw` must be a live context that outlives `'c`.
pub unsafe fn context_from_raw<'c>(raw: mlir_sys::MlirContext) -> &'c Context {
    use std::collections::HashMap;
    use std::sync::Mutex;
    // Values are addresses of leaked `ContextRef`s (raw pointers are not Send).
    static TABLE: Mutex<Option<HashMap<usize, usize>>> = Mutex::new(None);
    let key = raw.ptr as usize;
    let mut table = TABLE.lock().unwrap_or_else(|e| e.into_inner());
    let address = *table
        .get_or_insert_with(HashMap::new)
        .entry(key)
        .or_insert_with(|| {
            // SAFETY: the leaked ContextRef only holds the raw pointer.
            let leaked: &'static ContextRef<'static> =
                Box::leak(Box::new(unsafe { ContextRef::from_raw(raw) }));
            leaked as *const ContextRef<'static> as usize
        });
    // SAFETY: `address` is a leaked, never-freed ContextRef for `raw`; `to_ref` reinterprets
    // it as the `Context` it stands for, live for `'c` by the caller's guarantee.
    unsafe {
        let leaked: &'static ContextRef<'static> = &*(address as *const ContextRef<'static>);
        std::mem::transmute::<&'static Context, &'c Context>(leaked.to_ref())
    }
}

/// Redirects every use of `of` to `with`.
pub fn replace_all_uses(of: Value<'_, '_>, with: Value<'_, '_>) {
    // SAFETY: both values are live values of the same context.
    unsafe { mlirValueReplaceAllUsesOfWith(of.to_raw(), with.to_raw()) }
}

/// True when the value has no uses.
pub fn has_no_uses(value: Value<'_, '_>) -> bool {
    // SAFETY: live value; a null first use means "no uses".
    unsafe { mlir_sys::mlirValueGetFirstUse(value.to_raw()).ptr.is_null() }
}

/// An identifier (for OperationBuilder attributes).
pub fn identifier<'c>(ctx: &'c Context, name: &str) -> melior::ir::Identifier<'c> {
    // SAFETY: the context is live; the identifier is uniqued in it.
    unsafe { melior::ir::Identifier::from_raw(mlirIdentifierGet(ctx.to_raw(), string_ref(name))) }
}

/// A statically shaped ranked tensor or memref: its kind, dims and element type.
#[derive(Debug, Clone, PartialEq)]
pub struct StaticShape<'c> {
    /// True for a memref, false for a ranked tensor.
    pub is_memref: bool,
    /// The dimensions.
    pub dims: Vec<i64>,
    /// The element type.
    pub element: Type<'c>,
}

impl StaticShape<'_> {
    /// The number of elements.
    pub fn numel(&self) -> i64 {
        self.dims.iter().product()
    }

    /// `4x8` for dims `[4, 8]` (empty for rank 0).
    pub fn dims_text(&self) -> String {
        self.dims
            .iter()
            .map(i64::to_string)
            .collect::<Vec<_>>()
            .join("x")
    }
}

/// The static shape of a ranked tensor or memref type; `None` for anything else or a
/// dynamic shape.
pub fn static_shape(ty: Type<'_>) -> Option<StaticShape<'_>> {
    let raw = ty.to_raw();
    // SAFETY: type queries on a live type; shaped accessors only after the isa checks.
    unsafe {
        let is_memref = mlirTypeIsAMemRef(raw);
        if !(is_memref || mlirTypeIsARankedTensor(raw)) || !mlirShapedTypeHasStaticShape(raw) {
            return None;
        }
        let rank = mlirShapedTypeGetRank(raw);
        let dims = (0..rank)
            .map(|i| mlirShapedTypeGetDimSize(raw, i as isize))
            .collect();
        Some(StaticShape {
            is_memref,
            dims,
            element: Type::from_raw(mlirShapedTypeGetElementType(raw)),
        })
    }
}

/// The static shape of `value`'s type when it is an f32 tensor/memref; otherwise an error
/// naming `op` and the operand role.
pub fn f32_shape<'c>(
    op: Op<'c>,
    value: Value<'c, '_>,
    role: &str,
) -> Result<StaticShape<'c>, PassError> {
    let ty = value.r#type();
    match static_shape(ty) {
        Some(shape) if shape.element == Type::float32(op.ctx()) => Ok(shape),
        _ => Err(PassError::at(
            op,
            format!(
                "{}: {role} has type {ty}; only statically shaped f32 tensors are supported",
                op.name()
            ),
        )),
    }
}

/// Parses a type in `op`'s context.
pub fn parse_type<'c>(op: Op<'c>, text: &str) -> Type<'c> {
    Type::parse(op.ctx(), text)
        .unwrap_or_else(|| panic!("internal type text does not parse: {text}"))
}

/// Parses an attribute in `op`'s context.
pub fn parse_attr<'c>(op: Op<'c>, text: &str) -> Attribute<'c> {
    Attribute::parse(op.ctx(), text)
        .unwrap_or_else(|| panic!("internal attribute text does not parse: {text}"))
}

/// Returns true when `ty` is a (ranked or unranked) tensor type.
pub fn is_tensor(ty: Type<'_>) -> bool {
    ty.is_ranked_tensor() || ty.is_tensor()
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn static_shape_of_tensor() {
        let ctx = crate::dialects::create_context();
        let ty = Type::parse(&ctx, "tensor<2x3xf32>").unwrap();
        let s = static_shape(ty).unwrap();
        assert_eq!(s.dims, [2, 3]);
        assert_eq!(s.element, Type::float32(&ctx));
    }
}
