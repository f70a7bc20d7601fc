//! Lowering passes: `hip-lower-to-runtime-calls` (buffer-form ops → `func.call @wrap_*`) and
//! `generate-interface` (the C-ABI `inference_compute` entry point).

use std::collections::HashMap;

use melior::ir::{
    Module, Type, TypeLike, Value, ValueLike,
    attribute::AttributeLike,
    attribute::{
        DenseI64ArrayAttribute, FloatAttribute, IntegerAttribute, StringAttribute, TypeAttribute,
    },
    operation::OperationBuilder,
    r#type::{FunctionType, IntegerType},
};
use mlir_sys::{mlirBlockAppendOwnedOperation, mlirModuleGetBody};

use super::Lowering;
use super::bufferize::INTERFACE_ATTR;
use super::onnx::{float_attr, int_attr};
use crate::ir::{self, Op, PassError};
use crate::pipeline::PassOptions;

/// The entry point `generate-interface` emits.
pub const INTERFACE_SYMBOL: &str = "inference_compute";

/// The NUL-terminated string constant `generate-interface` emits next to the entry point:
/// the buffers' shapes as `inputs=[4,8][8];outputs=[4,8]` (see [`Interface::parse`]).
pub const INTERFACE_DESCRIPTION_SYMBOL: &str = "inference_interface";

struct CallBuilder<'c> {
    op: Op<'c>,
    args: Vec<Value<'c, 'c>>,
    types: Vec<Type<'c>>,
}

impl<'c> CallBuilder<'c> {
    fn new(op: Op<'c>) -> Self {
        Self {
            op,
            args: Vec::new(),
            types: Vec::new(),
        }
    }

    fn emit(
        &self,
        name: &str,
        operands: &[Value<'c, 'c>],
        result: Type<'c>,
        attrs: &[(&str, melior::ir::Attribute<'c>)],
    ) -> Result<Value<'c, 'c>, PassError> {
        let ctx = self.op.ctx();
        let attrs: Vec<_> = attrs
            .iter()
            .map(|(n, a)| (ir::identifier(ctx, n), *a))
            .collect();
        let new = OperationBuilder::new(name, self.op.location())
            .add_operands(operands)
            .add_results(&[result])
            .add_attributes(&attrs)
            .build()
            .map_err(|e| PassError::at(self.op, format!("cannot build {name}: {e}")))?;
        Ok(self.op.insert_before(new).results()[0])
    }

    fn ptr(&mut self, buffer: Value<'c, 'c>) -> Result<(), PassError> {
        let ctx = self.op.ctx();
        let index = self.emit(
            "memref.extract_aligned_pointer_as_index",
            &[buffer],
            Type::index(ctx),
            &[],
        )?;
        let i64t: Type<'c> = IntegerType::new(ctx, 64).into();
        let int = self.emit("arith.index_cast", &[index], i64t, &[])?;
        let ptr_type = ir::parse_type(self.op, "!llvm.ptr");
        let ptr = self.emit("llvm.inttoptr", &[int], ptr_type, &[])?;
        self.args.push(ptr);
        self.types.push(ptr_type);
        Ok(())
    }

    fn null(&mut self) -> Result<(), PassError> {
        let ptr_type = ir::parse_type(self.op, "!llvm.ptr");
        let ptr = self.emit("llvm.mlir.zero", &[], ptr_type, &[])?;
        self.args.push(ptr);
        self.types.push(ptr_type);
        Ok(())
    }

    fn int(&mut self, v: i64) -> Result<(), PassError> {
        let i64t: Type<'c> = IntegerType::new(self.op.ctx(), 64).into();
        let c = self.emit(
            "arith.constant",
            &[],
            i64t,
            &[("value", IntegerAttribute::new(i64t, v).into())],
        )?;
        self.args.push(c);
        self.types.push(i64t);
        Ok(())
    }

    fn float(&mut self, v: f64) -> Result<(), PassError> {
        let ctx = self.op.ctx();
        let f32t = Type::float32(ctx);
        let c = self.emit(
            "arith.constant",
            &[],
            f32t,
            &[("value", FloatAttribute::new(ctx, f32t, v).into())],
        )?;
        self.args.push(c);
        self.types.push(f32t);
        Ok(())
    }
}

fn shape(op: Op<'_>, v: Value<'_, '_>, role: &str) -> Result<Vec<i64>, PassError> {
    Ok(ir::f32_shape(op, v, role)?.dims)
}

fn numel(op: Op<'_>, v: Value<'_, '_>, role: &str) -> Result<i64, PassError> {
    Ok(shape(op, v, role)?.iter().product())
}

/// `hip-lower-to-runtime-calls`: each buffer-form op with a lowering (in-tree `hip.*`, plugin
/// ops from `add_op_model`) becomes a `func.call` of its runtime wrapper with raw pointers and
/// sizes; the wrappers are declared once per module (a clashing declaration is an error).
pub(crate) fn hip_lower_to_runtime_calls(module: Op<'_>, _: &PassOptions) -> Result<(), PassError> {
    let ctx = module.ctx();
    let store = crate::dispatch_plugin_registrations_once();
    let mut declared: HashMap<String, Type<'_>> = HashMap::new();
    for op in module.body_ops() {
        if op.name() == "func.func"
            && let Some(name) = op.symbol_name()
            && let Some(ty) = op
                .attr("function_type")
                .and_then(|a| TypeAttribute::try_from(a).ok())
        {
            declared.insert(name.to_string(), ty.value());
        }
    }
    let first_func = module
        .body_ops()
        .into_iter()
        .find(|o| o.name() == "func.func");
    for op in module.nested_ops() {
        let Some(lowering) = super::lowering_for(store, op.name()) else {
            continue;
        };
        let operands = op.operands();
        if !op.results().is_empty() || operands.iter().any(|v| !v.r#type().is_mem_ref()) {
            return Err(PassError::at(
                op,
                format!(
                    "{}: expected the buffer form (memref operands, no results); run hip-bufferize first",
                    op.name()
                ),
            ));
        }
        let mut call = CallBuilder::new(op);
        let symbol: String = match lowering {
            Lowering::Binary(symbol) => {
                let [a, b, out] = operands[..] else {
                    return Err(PassError::at(
                        op,
                        format!("{}: expects 3 buffers", op.name()),
                    ));
                };
                call.ptr(a)?;
                call.int(numel(op, a, "lhs")?)?;
                call.ptr(b)?;
                call.int(numel(op, b, "rhs")?)?;
                call.ptr(out)?;
                call.int(numel(op, out, "out")?)?;
                symbol.to_string()
            }
            Lowering::Unary(symbol) => {
                let [x, out] = operands[..] else {
                    return Err(PassError::at(
                        op,
                        format!("{}: expects 2 buffers", op.name()),
                    ));
                };
                call.ptr(x)?;
                call.ptr(out)?;
                call.int(numel(op, out, "out")?)?;
                symbol.to_string()
            }
            Lowering::MatMul => {
                let [a, b, out] = operands[..] else {
                    return Err(PassError::at(op, "hip.matmul: expects 3 buffers"));
                };
                let (sa, sb) = (shape(op, a, "A")?, shape(op, b, "B")?);
                call.ptr(a)?;
                call.ptr(b)?;
                call.ptr(out)?;
                call.int(sa[0])?;
                call.int(sb[1])?;
                call.int(sa[1])?;
                "wrap_matmul".to_string()
            }
            Lowering::Gemm => {
                let (a, b, c, out) = match operands[..] {
                    [a, b, out] => (a, b, None, out),
                    [a, b, c, out] => (a, b, Some(c), out),
                    _ => return Err(PassError::at(op, "hip.gemm: expects 3 or 4 buffers")),
                };
                let trans_a = int_attr(op, "transA").unwrap_or(0);
                let trans_b = int_attr(op, "transB").unwrap_or(0);
                let sa = shape(op, a, "A")?;
                let so = shape(op, out, "out")?;
                let (m, n) = (so[0], so[1]);
                let k = if trans_a != 0 { sa[0] } else { sa[1] };
                call.ptr(a)?;
                call.ptr(b)?;
                let (cm, cn) = match c {
                    Some(c) => {
                        call.ptr(c)?;
                        match shape(op, c, "C")?[..] {
                            [] => (1, 1),
                            [n1] => (1, n1),
                            [m1, n1] => (m1, n1),
                            _ => return Err(PassError::at(op, "hip.gemm: C must have rank <= 2")),
                        }
                    }
                    None => {
                        call.null()?;
                        (1, 1)
                    }
                };
                call.ptr(out)?;
                call.int(m)?;
                call.int(n)?;
                call.int(k)?;
                call.int(trans_a)?;
                call.int(trans_b)?;
                call.float(float_attr(op, "alpha").unwrap_or(1.0))?;
                call.float(float_attr(op, "beta").unwrap_or(1.0))?;
                call.int(cm)?;
                call.int(cn)?;
                "wrap_gemm".to_string()
            }
            Lowering::Plugin(crate::plugin::RuntimeCall::PointersAndCount(symbol)) => {
                for v in &operands {
                    call.ptr(*v)?;
                }
                let out = *operands
                    .last()
                    .ok_or_else(|| PassError::at(op, "no operands"))?;
                call.int(numel(op, out, "out")?)?;
                symbol.to_string()
            }
        };
        let fn_type: Type<'_> = FunctionType::new(ctx, &call.types, &[]).into();
        match declared.get(&symbol) {
            Some(existing) if *existing != fn_type => {
                return Err(PassError::at(
                    op,
                    format!(
                        "runtime function @{symbol} is already declared as {existing}, not {fn_type}"
                    ),
                ));
            }
            Some(_) => {}
            None => {
                let decl = OperationBuilder::new("func.func", op.location())
                    .add_attributes(&[
                        (
                            ir::identifier(ctx, "sym_name"),
                            StringAttribute::new(ctx, &symbol).into(),
                        ),
                        (
                            ir::identifier(ctx, "sym_visibility"),
                            StringAttribute::new(ctx, "private").into(),
                        ),
                        (
                            ir::identifier(ctx, "function_type"),
                            TypeAttribute::new(fn_type).into(),
                        ),
                    ])
                    .add_regions([melior::ir::Region::new()])
                    .build()
                    .map_err(|e| PassError::at(op, format!("declaration of @{symbol}: {e}")))?;
                let anchor =
                    first_func.ok_or_else(|| PassError::at(op, "no function in the module"))?;
                anchor.insert_before(decl);
                declared.insert(symbol.clone(), fn_type);
            }
        }
        let new = OperationBuilder::new("func.call", op.location())
            .add_operands(&call.args)
            .add_attributes(&[(
                ir::identifier(ctx, "callee"),
                ir::parse_attr(op, &format!("@{symbol}")),
            )])
            .build()
            .map_err(|e| PassError::at(op, format!("func.call @{symbol}: {e}")))?;
        op.insert_before(new);
        op.erase();
    }
    Ok(())
}

/// The entry point's buffers, as recorded by `hip-bufferize` in `hip.interface`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interface {
    /// The model function's name.
    pub entry: String,
    /// The input buffers' shapes (f32, row-major).
    pub inputs: Vec<Vec<i64>>,
    /// The output buffers' shapes.
    pub outputs: Vec<Vec<i64>>,
}

impl Interface {
    /// `inputs=[4,8][8];outputs=[4,8]` (a rank-0 buffer is `[]`).
    pub fn describe(&self) -> String {
        let list = |shapes: &[Vec<i64>]| -> String {
            shapes
                .iter()
                .map(|s| {
                    let dims: Vec<String> = s.iter().map(i64::to_string).collect();
                    format!("[{}]", dims.join(","))
                })
                .collect()
        };
        format!(
            "inputs={};outputs={}",
            list(&self.inputs),
            list(&self.outputs)
        )
    }

    /// Parses [`Interface::describe`]'s form (the entry is `inference_compute`'s callee,
    /// unknown after compilation: `entry` is left empty).
    pub fn parse(text: &str) -> Option<Interface> {
        let shapes = |part: &str, key: &str| -> Option<Vec<Vec<i64>>> {
            let body = part.strip_prefix(key)?.strip_prefix('=')?;
            if body.is_empty() {
                return Some(Vec::new());
            }
            body.strip_prefix('[')?
                .strip_suffix(']')?
                .split("][")
                .map(|dims| {
                    if dims.is_empty() {
                        Some(Vec::new())
                    } else {
                        dims.split(',').map(|d| d.parse().ok()).collect()
                    }
                })
                .collect()
        };
        let (inputs, outputs) = text.split_once(';')?;
        Some(Interface {
            entry: String::new(),
            inputs: shapes(inputs, "inputs")?,
            outputs: shapes(outputs, "outputs")?,
        })
    }

    /// Reads `hip.interface` from a module op.
    pub fn read(module: Op<'_>) -> Option<Interface> {
        let dict = module.attr(INTERFACE_ATTR)?;
        let raw = dict.to_raw();
        let field = |name: &str| {
            // SAFETY: live dictionary attribute (checked below); the name is valid for the call.
            unsafe {
                if !mlir_sys::mlirAttributeIsADictionary(raw) {
                    return None;
                }
                melior::ir::Attribute::from_option_raw(
                    mlir_sys::mlirDictionaryAttrGetElementByName(raw, crate::ffi::string_ref(name)),
                )
            }
        };
        let shapes = |name: &str| -> Option<Vec<Vec<i64>>> {
            let array = melior::ir::attribute::ArrayAttribute::try_from(field(name)?).ok()?;
            (0..array.len())
                .map(|i| {
                    let dims = DenseI64ArrayAttribute::try_from(array.element(i).ok()?).ok()?;
                    (0..dims.len()).map(|d| dims.element(d).ok()).collect()
                })
                .collect()
        };
        Some(Interface {
            entry: StringAttribute::try_from(field("entry")?)
                .ok()?
                .value()
                .to_string(),
            inputs: shapes("inputs")?,
            outputs: shapes("outputs")?,
        })
    }
}

/// `generate-interface`: after the LLVM conversion, emits
/// `i32 inference_compute(void *const *inputs, void *const *outputs)`, which reads one
/// pointer per input and output buffer (dense row-major f32, shapes from `hip.interface`),
/// returns 1 when an array or a pointer is null, else calls the model function with a memref
/// descriptor per buffer and returns 0. The model function becomes internal. Also emits the
/// constant string `inference_interface` ([`Interface::describe`]) for loaders of the output.
pub(crate) fn generate_interface(module: Op<'_>, _: &PassOptions) -> Result<(), PassError> {
    let ctx = module.ctx();
    let Some(interface) = Interface::read(module) else {
        return Err(PassError::at(
            module,
            format!("no {INTERFACE_ATTR} attribute on the module (hip-bufferize records it)"),
        ));
    };
    let mut entry = None;
    for op in module.body_ops() {
        let Some(name) = op.symbol_name() else {
            continue;
        };
        if name == INTERFACE_SYMBOL {
            return Err(PassError::at(
                op,
                format!("the module already defines @{INTERFACE_SYMBOL}"),
            ));
        }
        if name == interface.entry {
            entry = Some(op);
        }
    }
    let Some(entry) = entry.filter(|op| op.name() == "llvm.func") else {
        return Err(PassError::at(
            module,
            format!(
                "@{} is not an llvm.func yet (run convert-hip-to-llvm before generate-interface)",
                interface.entry
            ),
        ));
    };

    let mut text = String::new();
    use std::fmt::Write as _;
    let buffers: Vec<(&str, usize, &Vec<i64>)> = interface
        .inputs
        .iter()
        .enumerate()
        .map(|(i, s)| ("%inputs", i, s))
        .chain(
            interface
                .outputs
                .iter()
                .enumerate()
                .map(|(i, s)| ("%outputs", i, s)),
        )
        .collect();
    writeln!(
        text,
        "llvm.func @{INTERFACE_SYMBOL}(%inputs: !llvm.ptr, %outputs: !llvm.ptr) -> i32 {{"
    )
    .unwrap();
    writeln!(text, "  %null = llvm.mlir.zero : !llvm.ptr").unwrap();
    writeln!(text, "  %ok = llvm.mlir.constant(0 : i32) : i32").unwrap();
    writeln!(text, "  %bad = llvm.mlir.constant(1 : i32) : i32").unwrap();
    writeln!(
        text,
        "  %in_null = llvm.icmp \"eq\" %inputs, %null : !llvm.ptr"
    )
    .unwrap();
    writeln!(
        text,
        "  %out_null = llvm.icmp \"eq\" %outputs, %null : !llvm.ptr"
    )
    .unwrap();
    writeln!(text, "  %arrays_null = llvm.or %in_null, %out_null : i1").unwrap();
    writeln!(text, "  llvm.cond_br %arrays_null, ^fail, ^load").unwrap();
    writeln!(text, "^load:").unwrap();
    writeln!(text, "  %any0 = llvm.mlir.constant(false) : i1").unwrap();
    for (j, (array, index, _)) in buffers.iter().enumerate() {
        writeln!(
            text,
            "  %slot{j} = llvm.getelementptr {array}[{index}] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr"
        )
        .unwrap();
        writeln!(
            text,
            "  %p{j} = llvm.load %slot{j} : !llvm.ptr -> !llvm.ptr"
        )
        .unwrap();
        writeln!(
            text,
            "  %isnull{j} = llvm.icmp \"eq\" %p{j}, %null : !llvm.ptr"
        )
        .unwrap();
        writeln!(text, "  %any{} = llvm.or %any{j}, %isnull{j} : i1", j + 1).unwrap();
    }
    writeln!(text, "  llvm.cond_br %any{}, ^fail, ^run", buffers.len()).unwrap();
    writeln!(text, "^run:").unwrap();
    let mut args = Vec::new();
    let mut types = Vec::new();
    let mut constants = std::collections::BTreeSet::new();
    constants.insert(0i64);
    for (j, (_, _, dims)) in buffers.iter().enumerate() {
        args.push(format!("%p{j}"));
        args.push(format!("%p{j}"));
        args.push("%c0".to_string());
        types.extend(["!llvm.ptr", "!llvm.ptr", "i64"]);
        for d in dims.iter() {
            constants.insert(*d);
            args.push(format!("%c{d}"));
            types.push("i64");
        }
        let mut stride = 1i64;
        let mut strides = vec![0i64; dims.len()];
        for (i, d) in dims.iter().enumerate().rev() {
            strides[i] = stride;
            stride *= d;
        }
        for s in strides {
            constants.insert(s);
            args.push(format!("%c{s}"));
            types.push("i64");
        }
    }
    for c in &constants {
        writeln!(text, "  %c{c} = llvm.mlir.constant({c} : i64) : i64").unwrap();
    }
    writeln!(
        text,
        "  llvm.call @{}({}) : ({}) -> ()",
        interface.entry,
        args.join(", "),
        types.join(", ")
    )
    .unwrap();
    writeln!(text, "  llvm.return %ok : i32").unwrap();
    writeln!(text, "^fail:").unwrap();
    writeln!(text, "  llvm.return %bad : i32").unwrap();
    writeln!(text, "}}").unwrap();
    // A declaration so the text verifies on its own; only the wrapper moves over.
    // The buffers' shapes, for loaders of model.bc or model.so (`Interface::parse`).
    let described = interface.describe();
    writeln!(
        text,
        "llvm.mlir.global external constant @{INTERFACE_DESCRIPTION_SYMBOL}(\"{described}\\00\") : !llvm.array<{} x i8>",
        described.len() + 1
    )
    .unwrap();
    writeln!(text, "llvm.func @{}({})", interface.entry, types.join(", ")).unwrap();

    let parsed = Module::parse(ctx, &text).ok_or_else(|| {
        PassError::at(
            module,
            "internal error: the generated inference_compute does not parse",
        )
    })?;
    // The wrapper and the description move over; the declaration stays behind.
    let moved: Vec<_> = Op::new(parsed.as_operation())
        .body_ops()
        .into_iter()
        .take(2)
        .collect();
    for op in moved {
        let raw = op.to_raw();
        // SAFETY: `raw` is a live op of `parsed`; after removal it is owned by nobody until
        // it is appended to the module's body, which takes ownership. Same context.
        unsafe {
            mlir_sys::mlirOperationRemoveFromParent(raw);
            let module_op = mlir_sys::mlirModuleFromOperation(module.to_raw());
            mlirBlockAppendOwnedOperation(mlirModuleGetBody(module_op), raw);
        }
    }
    drop(parsed);
    entry.set_attr("linkage", ir::parse_attr(entry, "#llvm.linkage<internal>"));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interface_description_round_trips() {
        let i = Interface {
            entry: String::new(),
            inputs: vec![vec![4, 8], vec![], vec![8]],
            outputs: vec![vec![4, 8]],
        };
        assert_eq!(i.describe(), "inputs=[4,8][][8];outputs=[4,8]");
        assert_eq!(Interface::parse(&i.describe()), Some(i));
        assert_eq!(
            Interface::parse("inputs=;outputs=[1]")
                .unwrap()
                .inputs
                .len(),
            0
        );
        assert_eq!(Interface::parse("inputs=[x];outputs=[1]"), None);
        assert_eq!(Interface::parse("garbage"), None);
    }
}
