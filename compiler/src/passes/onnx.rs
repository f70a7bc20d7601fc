//! ONNX-level passes: `simplify-onnx`, `onnx-loop-outline`, `convert-onnx-to-hip`.

use melior::ir::{
    Attribute, TypeLike, Value, ValueLike, attribute::AttributeLike, attribute::FloatAttribute,
    attribute::IntegerAttribute, operation::OperationBuilder, r#type::IntegerType,
};
use mlir_sys::{
    mlirAttributeGetType, mlirAttributeIsAFloat, mlirAttributeIsAInteger,
    mlirFloatAttrGetValueDouble, mlirIntegerAttrGetValueInt, mlirIntegerAttrGetValueSInt,
    mlirIntegerTypeIsSigned, mlirOpResultGetOwner, mlirValueIsAOpResult,
};

use crate::ir::{self, Op, PassError, StaticShape};
use crate::pipeline::PassOptions;

/// The operation defining `value`, when it is an op result.
pub fn defining_op<'c>(value: Value<'c, '_>) -> Option<Op<'c>> {
    // SAFETY: live value; the owner of an op result is a live operation.
    unsafe {
        mlirValueIsAOpResult(value.to_raw())
            .then(|| Op::from_raw(mlirOpResultGetOwner(value.to_raw())))
    }
}

/// An integer attribute's value (signed or signless).
pub fn int_attr(op: Op<'_>, name: &str) -> Option<i64> {
    let attr = op.attr(name)?;
    let raw = attr.to_raw();
    // SAFETY: attribute queries on a live attribute, accessors only after the isa check.
    unsafe {
        if !mlirAttributeIsAInteger(raw) {
            return None;
        }
        if mlirIntegerTypeIsSigned(mlirAttributeGetType(raw)) {
            Some(mlirIntegerAttrGetValueSInt(raw))
        } else {
            Some(mlirIntegerAttrGetValueInt(raw))
        }
    }
}

/// A float attribute's value.
pub fn float_attr(op: Op<'_>, name: &str) -> Option<f64> {
    let attr = op.attr(name)?;
    // SAFETY: as above.
    unsafe {
        mlirAttributeIsAFloat(attr.to_raw()).then(|| mlirFloatAttrGetValueDouble(attr.to_raw()))
    }
}

/// `simplify-onnx`: removes `onnx.Identity`, folds `Relu(Relu(x))`, and erases ONNX ops whose
/// results are unused.
pub(crate) fn simplify_onnx(func: Op<'_>, _: &PassOptions) -> Result<(), PassError> {
    for op in func.nested_ops() {
        match op.name() {
            "onnx.Identity" => {
                let (operands, results) = (op.operands(), op.results());
                if operands.len() != 1 || results.len() != 1 {
                    return Err(PassError::at(
                        op,
                        "onnx.Identity takes one operand and has one result",
                    ));
                }
                ir::replace_all_uses(results[0], operands[0]);
                op.erase();
            }
            "onnx.Relu" => {
                let operands = op.operands();
                if let Some(inner) = operands.first().and_then(|v| defining_op(*v))
                    && inner.name() == "onnx.Relu"
                {
                    ir::replace_all_uses(op.results()[0], operands[0]);
                    op.erase();
                }
            }
            _ => {}
        }
    }
    // Dead ONNX ops (ONNX ops are side-effect free), last to first so chains go at once.
    for op in func.nested_ops().into_iter().rev() {
        if op.dialect() == "onnx" && op.results().into_iter().all(ir::has_no_uses) {
            op.erase();
        }
    }
    Ok(())
}

/// `onnx-loop-outline`: control flow with regions (`onnx.Loop`, `onnx.If`, `onnx.Scan`) would
/// be outlined into functions here; this compiler does not lower it, so the pass refuses it
/// with the op named instead of failing later in conversion.
pub(crate) fn onnx_loop_outline(module: Op<'_>, _: &PassOptions) -> Result<(), PassError> {
    for op in module.nested_ops() {
        if matches!(op.name(), "onnx.Loop" | "onnx.If" | "onnx.Scan") {
            return Err(PassError::at(
                op,
                format!(
                    "{} (ONNX control flow) is not supported by this compiler",
                    op.name()
                ),
            ));
        }
    }
    Ok(())
}

/// True when `operand`'s dims (leading 1s dropped) are a suffix of `out`'s: the broadcast the
/// runtime's elementwise wrappers implement.
fn is_suffix_broadcast(operand: &StaticShape<'_>, out: &StaticShape<'_>) -> bool {
    let dims: Vec<i64> = operand
        .dims
        .iter()
        .copied()
        .skip_while(|&d| d == 1)
        .collect();
    dims.len() <= out.dims.len() && out.dims[out.dims.len() - dims.len()..] == dims[..]
}

fn build<'c>(
    op: Op<'c>,
    name: &str,
    operands: &[Value<'c, '_>],
    attributes: &[(&str, Attribute<'c>)],
) -> Result<melior::ir::Operation<'c>, PassError> {
    let ctx = op.ctx();
    let result_types: Vec<_> = op.results().iter().map(|r| r.r#type()).collect();
    let attributes: Vec<_> = attributes
        .iter()
        .map(|(n, a)| (ir::identifier(ctx, n), *a))
        .collect();
    OperationBuilder::new(name, op.location())
        .add_operands(operands)
        .add_results(&result_types)
        .add_attributes(&attributes)
        .build()
        .map_err(|e| PassError::at(op, format!("cannot build {name}: {e}")))
}

fn convert_one(op: Op<'_>) -> Result<(), PassError> {
    let name = op.name();
    let operands = op.operands();
    let results = op.results();
    let expect = |n_in: &[usize], n_out: usize| -> Result<(), PassError> {
        if !n_in.contains(&operands.len()) || results.len() != n_out {
            return Err(PassError::at(
                op,
                format!(
                    "{name}: expected {n_in:?} operands and {n_out} result(s), got {} and {}",
                    operands.len(),
                    results.len()
                ),
            ));
        }
        Ok(())
    };
    let new = match name {
        "onnx.Add" | "onnx.Sub" | "onnx.Mul" => {
            expect(&[2], 1)?;
            let out = ir::f32_shape(op, results[0], "the result")?;
            for (i, v) in operands.iter().enumerate() {
                let shape = ir::f32_shape(op, *v, &format!("operand #{i}"))?;
                if !is_suffix_broadcast(&shape, &out) {
                    return Err(PassError::at(
                        op,
                        format!(
                            "{name}: operand #{i} of shape [{}] does not broadcast to the result [{}] as a trailing suffix (the only broadcast supported)",
                            shape.dims_text(),
                            out.dims_text()
                        ),
                    ));
                }
            }
            let hip = match name {
                "onnx.Add" => "hip.add",
                "onnx.Sub" => "hip.sub",
                _ => "hip.mul",
            };
            build(op, hip, &operands, &[])?
        }
        "onnx.Relu" => {
            expect(&[1], 1)?;
            let x = ir::f32_shape(op, operands[0], "the input")?;
            let out = ir::f32_shape(op, results[0], "the result")?;
            if x.dims != out.dims {
                return Err(PassError::at(
                    op,
                    "onnx.Relu: input and result shapes differ",
                ));
            }
            build(op, "hip.relu", &operands, &[])?
        }
        "onnx.MatMul" => {
            expect(&[2], 1)?;
            let a = ir::f32_shape(op, operands[0], "A")?;
            let b = ir::f32_shape(op, operands[1], "B")?;
            let out = ir::f32_shape(op, results[0], "the result")?;
            if a.dims.len() != 2
                || b.dims.len() != 2
                || a.dims[1] != b.dims[0]
                || out.dims != [a.dims[0], b.dims[1]]
            {
                return Err(PassError::at(
                    op,
                    format!(
                        "onnx.MatMul: only 2-D [M,K]x[K,N]->[M,N] is supported, got [{}]x[{}]->[{}]",
                        a.dims_text(),
                        b.dims_text(),
                        out.dims_text()
                    ),
                ));
            }
            build(op, "hip.matmul", &operands, &[])?
        }
        "onnx.Gemm" => {
            expect(&[2, 3], 1)?;
            let ctx = op.ctx();
            let trans_a = int_attr(op, "transA").unwrap_or(0) != 0;
            let trans_b = int_attr(op, "transB").unwrap_or(0) != 0;
            let alpha = float_attr(op, "alpha").unwrap_or(1.0);
            let beta = float_attr(op, "beta").unwrap_or(1.0);
            let a = ir::f32_shape(op, operands[0], "A")?;
            let b = ir::f32_shape(op, operands[1], "B")?;
            let out = ir::f32_shape(op, results[0], "the result")?;
            let bad = |why: &str| PassError::at(op, format!("onnx.Gemm: {why}"));
            if a.dims.len() != 2 || b.dims.len() != 2 || out.dims.len() != 2 {
                return Err(bad("A, B and the result must be 2-D"));
            }
            let (m, k) = if trans_a {
                (a.dims[1], a.dims[0])
            } else {
                (a.dims[0], a.dims[1])
            };
            let (kb, n) = if trans_b {
                (b.dims[1], b.dims[0])
            } else {
                (b.dims[0], b.dims[1])
            };
            if k != kb || out.dims != [m, n] {
                return Err(bad(&format!(
                    "shapes A [{}] B [{}] (transA={trans_a}, transB={trans_b}) do not give the result [{}]",
                    a.dims_text(),
                    b.dims_text(),
                    out.dims_text()
                )));
            }
            let mut new_operands = vec![operands[0], operands[1]];
            if let Some(c) = operands.get(2)
                && !c.r#type().is_none()
            {
                let cs = ir::f32_shape(op, *c, "C")?;
                let (cm, cn) = match cs.dims[..] {
                    [] => (1, 1),
                    [n1] => (1, n1),
                    [m1, n1] => (m1, n1),
                    _ => return Err(bad("C must have rank 0, 1 or 2")),
                };
                if !(cm == 1 || cm == m) || !(cn == 1 || cn == n) {
                    return Err(bad(&format!(
                        "C of shape [{}] does not broadcast to [{m}x{n}]",
                        cs.dims_text()
                    )));
                }
                new_operands.push(*c);
            }
            let i64t = IntegerType::new(ctx, 64).into();
            let f32t = melior::ir::Type::float32(ctx);
            let segments = format!("array<i32: 1, 1, {}, 0>", new_operands.len() - 2);
            build(
                op,
                "hip.gemm",
                &new_operands,
                &[
                    ("alpha", FloatAttribute::new(ctx, f32t, alpha).into()),
                    ("beta", FloatAttribute::new(ctx, f32t, beta).into()),
                    ("transA", IntegerAttribute::new(i64t, trans_a as i64).into()),
                    ("transB", IntegerAttribute::new(i64t, trans_b as i64).into()),
                    ("operandSegmentSizes", ir::parse_attr(op, &segments)),
                ],
            )?
        }
        "onnx.NoValue" => return Ok(()),
        other => {
            return Err(PassError::at(
                op,
                format!(
                    "no lowering for '{other}' (supported: onnx.Add, Sub, Mul, Relu, MatMul, Gemm; onnx.Identity is removed by simplify-onnx)"
                ),
            ));
        }
    };
    op.replace_with(new);
    Ok(())
}

/// `convert-onnx-to-hip`: `onnx.{Add,Sub,Mul,Relu,MatMul,Gemm}` on static f32 tensors become
/// `hip.*` ops on tensors; shapes and the supported broadcasts are checked here, with the op
/// named on failure. Ops of other dialects (a plugin's `vendor.*`) are left alone.
pub(crate) fn convert_onnx_to_hip(func: Op<'_>, _: &PassOptions) -> Result<(), PassError> {
    for op in func.nested_ops() {
        if op.dialect() == "onnx" {
            convert_one(op)?;
        }
    }
    for op in func.nested_ops() {
        if op.name() == "onnx.NoValue" && op.results().into_iter().all(ir::has_no_uses) {
            op.erase();
        }
    }
    Ok(())
}
