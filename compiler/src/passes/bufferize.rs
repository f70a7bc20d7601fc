//! Buffer passes: `hip-bufferize` (tensors → memrefs, destination-passing, outputs as
//! arguments) and `hip-pool-allocs` (one pool per function with liveness-based reuse).

use std::collections::HashMap;

use melior::ir::{
    Type, TypeLike, Value, ValueLike,
    attribute::{IntegerAttribute, StringAttribute, TypeAttribute},
    operation::{OperationBuilder, OperationLike},
    r#type::{FunctionType, IntegerType, MemRefType},
};
use mlir_sys::{
    MlirBlock, mlirBlockAddArgument, mlirBlockGetArgument, mlirBlockGetNumArguments,
    mlirOperationGetFirstRegion, mlirRegionGetFirstBlock, mlirValueSetType,
};

use crate::ir::{self, Op, PassError, StaticShape};
use crate::pipeline::PassOptions;

/// The name of the module attribute `hip-bufferize` records the entry point's buffers in.
pub const INTERFACE_ATTR: &str = "hip.interface";

fn entry_block(func: Op<'_>) -> Option<MlirBlock> {
    // SAFETY: live op; null region/block mean "no body".
    unsafe {
        let region = mlirOperationGetFirstRegion(func.to_raw());
        if region.ptr.is_null() {
            return None;
        }
        let block = mlirRegionGetFirstBlock(region);
        (!block.ptr.is_null()).then_some(block)
    }
}

fn block_args<'c>(block: MlirBlock) -> Vec<Value<'c, 'c>> {
    // SAFETY: live block; indices in range.
    unsafe {
        (0..mlirBlockGetNumArguments(block))
            .map(|i| Value::from_raw(mlirBlockGetArgument(block, i)))
            .collect()
    }
}

/// The public function with a body that is the model's entry point.
pub(crate) fn entry_function<'c>(module: Op<'c>) -> Result<Op<'c>, PassError> {
    let candidates: Vec<Op<'c>> = module
        .body_ops()
        .into_iter()
        .filter(|op| {
            op.name() == "func.func"
                && entry_block(*op).is_some()
                && op
                    .attr("sym_visibility")
                    .and_then(|a| StringAttribute::try_from(a).ok())
                    .is_none_or(|v| v.value() == "public")
        })
        .collect();
    match candidates[..] {
        [one] => Ok(one),
        [] => Err(PassError::new(
            "no public func.func with a body (the model's entry point)",
        )),
        _ => Err(PassError::new(format!(
            "{} public functions with bodies; the model must have exactly one entry point",
            candidates.len()
        ))),
    }
}

fn memref_of<'c>(shape: &StaticShape<'c>) -> Type<'c> {
    let dims: Vec<i64> = shape.dims.clone();
    MemRefType::new(shape.element, &dims, None, None).into()
}

/// `array<i32: a, b, …, 0>` → `array<i32: a, b, …, 1>`.
fn with_output_segment<'c>(
    op: Op<'c>,
    sizes: melior::ir::Attribute<'c>,
) -> melior::ir::Attribute<'c> {
    use melior::ir::attribute::DenseI32ArrayAttribute;
    let Ok(array) = DenseI32ArrayAttribute::try_from(sizes) else {
        return sizes;
    };
    let mut values: Vec<i32> = (0..array.len())
        .filter_map(|i| array.element(i).ok())
        .collect();
    if let Some(last) = values.last_mut() {
        *last = 1;
    }
    DenseI32ArrayAttribute::new(op.ctx(), &values).into()
}

fn shape_list(shapes: &[StaticShape<'_>]) -> String {
    let items: Vec<String> = shapes
        .iter()
        .map(|s| {
            let dims: Vec<String> = s.dims.iter().map(i64::to_string).collect();
            if dims.is_empty() {
                "array<i64>".to_string()
            } else {
                format!("array<i64: {}>", dims.join(", "))
            }
        })
        .collect();
    format!("[{}]", items.join(", "))
}

/// `hip-bufferize`: the entry function's tensor arguments become memrefs, each result becomes
/// an extra memref argument (the caller's output buffer) and the function returns nothing.
/// Every op with a bufferization model (`hip.*`, plugin ops registered with `add_op_model`)
/// is rewritten destination-passing style into a fresh `memref.alloc` (freed before the
/// return) or, when its value is returned, straight into the output buffer. Dense f32
/// `arith.constant`s become private constant `memref.global`s. Records the buffers' shapes in
/// the module attribute `hip.interface` for `generate-interface`.
pub(crate) fn hip_bufferize(module: Op<'_>, _: &PassOptions) -> Result<(), PassError> {
    let ctx = module.ctx();
    let func = entry_function(module)?;
    let block = entry_block(func).expect("entry_function checks the body");
    let f32t = Type::float32(ctx);

    let body = func.body_ops();
    let Some(ret) = body.last().copied().filter(|op| op.name() == "func.return") else {
        return Err(PassError::at(
            func,
            "the entry function must end with func.return",
        ));
    };
    let returned = ret.operands();
    let mut output_shapes = Vec::new();
    for (j, v) in returned.iter().enumerate() {
        let Some(shape) =
            ir::static_shape(v.r#type()).filter(|s| !s.is_memref && s.element == f32t)
        else {
            return Err(PassError::at(
                ret,
                format!(
                    "result #{j} has type {}; only static f32 tensors are supported",
                    v.r#type()
                ),
            ));
        };
        output_shapes.push(shape);
    }

    // Arguments.
    let mut input_shapes = Vec::new();
    for (i, arg) in block_args(block).into_iter().enumerate() {
        let Some(shape) =
            ir::static_shape(arg.r#type()).filter(|s| !s.is_memref && s.element == f32t)
        else {
            return Err(PassError::at(
                func,
                format!(
                    "entry argument #{i} has type {}; only static f32 tensors are supported",
                    arg.r#type()
                ),
            ));
        };
        // SAFETY: live block argument; the new type is a memref of the same shape.
        unsafe { mlirValueSetType(arg.to_raw(), memref_of(&shape).to_raw()) };
        input_shapes.push(shape);
    }

    let mut output_args = Vec::new();
    for shape in &output_shapes {
        let memref = memref_of(shape);
        // SAFETY: live block; the location comes from the function.
        let arg = unsafe {
            Value::from_raw(mlirBlockAddArgument(
                block,
                memref.to_raw(),
                func.location().to_raw(),
            ))
        };
        output_args.push(arg);
    }
    // The first return position of each value produced by a modelled op writes straight
    // into that output buffer.
    let mut dest_for: HashMap<usize, Value<'_, '_>> = HashMap::new();
    let mut needs_copy: Vec<(Value<'_, '_>, Value<'_, '_>)> = Vec::new();

    let store = crate::dispatch_plugin_registrations_once();
    let modelled = |name: &str| super::lowering_for(store, name).is_some();
    for (j, v) in returned.iter().enumerate() {
        let key = v.to_raw().ptr as usize;
        let produced_by_model = super::onnx::defining_op(*v).is_some_and(|d| modelled(d.name()));
        if produced_by_model && !dest_for.contains_key(&key) {
            dest_for.insert(key, output_args[j]);
        } else {
            needs_copy.push((*v, output_args[j]));
        }
    }

    let mut allocs: Vec<Value<'_, '_>> = Vec::new();
    let mut global_count = 0usize;
    for op in body {
        if op == ret {
            continue;
        }
        let name = op.name();
        if modelled(name) {
            let results = op.results();
            if results.len() != 1 {
                return Err(PassError::at(
                    op,
                    format!("{name}: a modelled op must have exactly one tensor result"),
                ));
            }
            let shape = ir::f32_shape(op, results[0], "the result")?;
            let key = results[0].to_raw().ptr as usize;
            let dest = match dest_for.get(&key) {
                Some(out) => *out,
                None => {
                    let alloc = OperationBuilder::new("memref.alloc", op.location())
                        .add_results(&[memref_of(&shape)])
                        .add_attributes(&[(
                            ir::identifier(ctx, "operandSegmentSizes"),
                            ir::parse_attr(op, "array<i32: 0, 0>"),
                        )])
                        .build()
                        .map_err(|e| PassError::at(op, format!("memref.alloc: {e}")))?;
                    let alloc = op.insert_before(alloc);
                    let v = alloc.results()[0];
                    allocs.push(v);
                    v
                }
            };
            let mut operands = op.operands();
            for (i, v) in operands.iter().enumerate() {
                if !v.r#type().is_mem_ref() {
                    return Err(PassError::at(
                        op,
                        format!(
                            "{name}: operand #{i} of type {} has no buffer (produced by an op without a bufferization model)",
                            v.r#type()
                        ),
                    ));
                }
            }
            operands.push(dest);
            let attributes: Vec<_> = op
                .as_ref()
                .attributes()
                .map(|(name, value)| {
                    // Ops with several optional operands carry segment sizes; by convention
                    // the last segment is the optional output buffer, now present.
                    if name.as_string_ref().as_str() == Ok("operandSegmentSizes") {
                        (name, with_output_segment(op, value))
                    } else {
                        (name, value)
                    }
                })
                .collect();
            let new = OperationBuilder::new(name, op.location())
                .add_operands(&operands)
                .add_attributes(&attributes)
                .build()
                .map_err(|e| {
                    PassError::at(op, format!("cannot build buffer form of {name}: {e}"))
                })?;
            op.insert_before(new);
            ir::replace_all_uses(results[0], dest);
            op.erase();
        } else if name == "arith.constant"
            && op
                .results()
                .first()
                .is_some_and(|r| r.r#type().is_ranked_tensor())
        {
            let result = op.results()[0];
            let shape = ir::f32_shape(op, result, "the constant")?;
            let value = op.attr("value").expect("arith.constant has a value");
            let sym = format!("__hip_constant_{global_count}");
            global_count += 1;
            let memref = memref_of(&shape);
            let global = OperationBuilder::new("memref.global", op.location())
                .add_attributes(&[
                    (
                        ir::identifier(ctx, "sym_name"),
                        StringAttribute::new(ctx, &sym).into(),
                    ),
                    (
                        ir::identifier(ctx, "sym_visibility"),
                        StringAttribute::new(ctx, "private").into(),
                    ),
                    (
                        ir::identifier(ctx, "type"),
                        TypeAttribute::new(memref).into(),
                    ),
                    (ir::identifier(ctx, "initial_value"), value),
                    (
                        ir::identifier(ctx, "constant"),
                        melior::ir::Attribute::unit(ctx),
                    ),
                ])
                .build()
                .map_err(|e| PassError::at(op, format!("memref.global: {e}")))?;
            func.insert_before(global);
            let get = OperationBuilder::new("memref.get_global", op.location())
                .add_attributes(&[(
                    ir::identifier(ctx, "name"),
                    ir::parse_attr(op, &format!("@{sym}")),
                )])
                .add_results(&[memref])
                .build()
                .map_err(|e| PassError::at(op, format!("memref.get_global: {e}")))?;
            op.replace_with(get);
        } else {
            let tensor_typed = op
                .results()
                .iter()
                .chain(op.operands().iter())
                .any(|v| ir::is_tensor(v.r#type()));
            if tensor_typed {
                return Err(PassError::at(
                    op,
                    format!("no bufferization model for '{name}' (tensor operands or results)"),
                ));
            }
        }
    }

    // Copies for outputs that are not written in place, then the frees, then the return.
    for (src, out) in &needs_copy {
        if !src.r#type().is_mem_ref() {
            return Err(PassError::at(
                ret,
                format!("a returned value of type {} has no buffer", src.r#type()),
            ));
        }
        let copy = OperationBuilder::new("memref.copy", ret.location())
            .add_operands(&[*src, *out])
            .build()
            .map_err(|e| PassError::at(ret, format!("memref.copy: {e}")))?;
        ret.insert_before(copy);
    }
    for alloc in &allocs {
        let dealloc = OperationBuilder::new("memref.dealloc", ret.location())
            .add_operands(&[*alloc])
            .build()
            .map_err(|e| PassError::at(ret, format!("memref.dealloc: {e}")))?;
        ret.insert_before(dealloc);
    }
    let new_ret = OperationBuilder::new("func.return", ret.location())
        .build()
        .map_err(|e| PassError::at(ret, format!("func.return: {e}")))?;
    ret.insert_before(new_ret);
    ret.erase();

    let inputs: Vec<Type<'_>> = block_args(block).iter().map(|a| a.r#type()).collect();
    func.set_attr(
        "function_type",
        TypeAttribute::new(FunctionType::new(ctx, &inputs, &[]).into()).into(),
    );
    let entry = func.symbol_name().unwrap_or_default();
    let interface = format!(
        "{{entry = \"{entry}\", inputs = {}, outputs = {}}}",
        shape_list(&input_shapes),
        shape_list(&output_shapes)
    );
    module.set_attr(INTERFACE_ATTR, ir::parse_attr(module, &interface));
    Ok(())
}

/// `hip-pool-allocs{alignment=N}`: the statically shaped `memref.alloc`s of each function
/// body share one pool (`memref.alloc` of bytes, `alignment` default 64), each placed by
/// first fit at an offset not used by any buffer live at the same time; their
/// `memref.dealloc`s become one for the pool. Records `hip.pool_bytes` on the function.
pub(crate) fn hip_pool_allocs(func: Op<'_>, options: &PassOptions) -> Result<(), PassError> {
    let alignment = options
        .get_u64("alignment", 64)
        .map_err(PassError::new)?
        .max(1) as i64;
    let ctx = func.ctx();
    let body = func.body_ops();
    let Some(terminator) = body.last().copied() else {
        return Ok(());
    };
    struct Buffer<'c> {
        op: Op<'c>,
        value: Value<'c, 'c>,
        bytes: i64,
        start: usize,
        end: usize,
        offset: i64,
    }
    let mut buffers: Vec<Buffer<'_>> = Vec::new();
    for (index, op) in body.iter().enumerate() {
        if op.name() != "memref.alloc" || !op.operands().is_empty() {
            continue;
        }
        let value = op.results()[0];
        let Some(shape) = ir::static_shape(value.r#type()) else {
            continue;
        };
        if shape.element != Type::float32(ctx) {
            continue;
        }
        buffers.push(Buffer {
            op: *op,
            value,
            bytes: shape.numel() * 4,
            start: index,
            end: index,
            offset: 0,
        });
    }
    if buffers.is_empty() {
        return Ok(());
    }
    // Live ranges over top-level ops (uses inside nested regions count at their parent).
    let mut deallocs = Vec::new();
    for (index, op) in body.iter().enumerate() {
        let mut used: Vec<Value<'_, '_>> = op.operands();
        for nested in op.nested_ops() {
            used.extend(nested.operands());
        }
        for b in buffers.iter_mut() {
            if used.iter().any(|u| u.to_raw().ptr == b.value.to_raw().ptr) {
                // A free ends the buffer's life but is not a use: the pool's single free
                // replaces it.
                if op.name() == "memref.dealloc" {
                    deallocs.push(*op);
                } else {
                    b.end = b.end.max(index);
                }
            }
        }
    }
    // First fit by start order.
    let round = |x: i64| (x + alignment - 1) / alignment * alignment;
    let mut total = 0i64;
    for i in 0..buffers.len() {
        let mut live: Vec<(i64, i64)> = buffers[..i]
            .iter()
            .filter(|o| o.start <= buffers[i].end && buffers[i].start <= o.end)
            .map(|o| (o.offset, o.offset + round(o.bytes)))
            .collect();
        live.sort();
        let mut offset = 0i64;
        for (lo, hi) in live {
            if offset + buffers[i].bytes <= lo {
                break;
            }
            offset = offset.max(hi);
        }
        buffers[i].offset = offset;
        total = total.max(offset + round(buffers[i].bytes));
    }
    let i8 = IntegerType::new(ctx, 8).into();
    let pool_type: Type<'_> = MemRefType::new(i8, &[total], None, None).into();
    let i64t: Type<'_> = IntegerType::new(ctx, 64).into();
    let first = body[0];
    let pool = OperationBuilder::new("memref.alloc", func.location())
        .add_results(&[pool_type])
        .add_attributes(&[
            (
                ir::identifier(ctx, "operandSegmentSizes"),
                ir::parse_attr(func, "array<i32: 0, 0>"),
            ),
            (
                ir::identifier(ctx, "alignment"),
                IntegerAttribute::new(i64t, alignment).into(),
            ),
        ])
        .build()
        .map_err(|e| PassError::at(func, format!("pool memref.alloc: {e}")))?;
    let pool = first.insert_before(pool).results()[0];
    let index_type = Type::index(ctx);
    for b in &buffers {
        let offset = OperationBuilder::new("arith.constant", b.op.location())
            .add_attributes(&[(
                ir::identifier(ctx, "value"),
                IntegerAttribute::new(index_type, b.offset).into(),
            )])
            .add_results(&[index_type])
            .build()
            .map_err(|e| PassError::at(b.op, format!("arith.constant: {e}")))?;
        let offset = b.op.insert_before(offset).results()[0];
        let view = OperationBuilder::new("memref.view", b.op.location())
            .add_operands(&[pool, offset])
            .add_results(&[b.value.r#type()])
            .build()
            .map_err(|e| PassError::at(b.op, format!("memref.view: {e}")))?;
        b.op.replace_with(view);
    }
    for d in deallocs {
        d.erase();
    }
    let dealloc = OperationBuilder::new("memref.dealloc", terminator.location())
        .add_operands(&[pool])
        .build()
        .map_err(|e| PassError::at(terminator, format!("memref.dealloc: {e}")))?;
    terminator.insert_before(dealloc);
    func.set_attr("hip.pool_bytes", IntegerAttribute::new(i64t, total).into());
    Ok(())
}
