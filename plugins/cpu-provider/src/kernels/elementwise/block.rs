//! Epilogues over whole tile blocks: the fast path of the GEMM tile writers.
//!
//! A block is `rows × cols` values of the producer, row `i` at `vals[i * ld..]`. Where
//! every tensor of the epilogue is *pixel-linear* (its spatial dims step like one flat
//! pixel index, as packed NCHW and NHWC tensors and per-channel broadcasts are), element
//! `(i, j)` of a block lies at `base + i * rs + j * cs` in each tensor. Offsets, bounds
//! and operand kinds are then worked out once per block and step, not once per row: a
//! fused chain costs one pass over the tile while it is still in cache.

use std::mem::MaybeUninit;

use super::{Prepared, Run, scale_shift_in_place, unary_in_place};
use crate::kernels::gemm::{NR, TILE};
use crate::kernels::pointwise::PwOp;
use crate::tensor::{DType, RawIn, RawOut, Shape};

/// A tensor's strides in the `(image, channel, pixel)` view of the index space
/// `[N, C, spatial...]`, when its spatial dims step like one flat pixel index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Linear {
    /// Stride between images.
    pub ns: usize,
    /// Stride between channels.
    pub cs: usize,
    /// Stride between consecutive (flat) pixels.
    pub ps: usize,
}

impl Linear {
    /// The view of `s` (index space `[N, C, spatial...]`, rank >= 3), if its pixels are
    /// linear.
    pub(crate) fn of(s: &Shape) -> Option<Self> {
        let rank = s.rank();
        if rank < 3 {
            return None;
        }
        // The step of the innermost spatial dim that moves; every outer one must step
        // by it times the pixels inside it.
        let inner = (2..rank).rev().find(|&d| s.dims[d] > 1);
        let ps = inner.map_or(0, |d| s.strides[d]);
        let mut inside = 1;
        for d in (2..rank).rev() {
            if s.dims[d] > 1 && s.strides[d] != ps * inside {
                return None;
            }
            inside *= s.dims[d];
        }
        Some(Self {
            ns: s.strides[0],
            cs: s.strides[1],
            ps,
        })
    }
}

/// Where a block's elements are in one tensor: `(i, j)` at `base + i * rs + j * cs`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BlockAt {
    pub base: usize,
    pub rs: usize,
    pub cs: usize,
}

/// An operand's values over a block.
#[derive(Clone, Copy)]
enum BlockRun<'b> {
    /// One value everywhere.
    Splat(f32),
    /// One value per row.
    PerRow(&'b [f32]),
    /// Contiguous `f32` rows read in place: row `i` from `ptr + i * rs`.
    Rows(*const f32, usize),
    /// Gathered: row `i` at `vals[i * cols..]`.
    Gathered(&'b [f32]),
}

impl BlockRun<'_> {
    #[inline(always)]
    fn row(&self, i: usize, cols: usize) -> Run<'_> {
        match *self {
            BlockRun::Splat(v) => Run::Splat(v),
            BlockRun::PerRow(v) => Run::Splat(v[i]),
            BlockRun::Rows(p, rs) => {
                // SAFETY: `block_operand` checked that the block's rows (`i < rows`)
                // lie inside the tensor, which is only read while the plan runs.
                Run::Each(unsafe { std::slice::from_raw_parts(p.add(i * rs), cols) })
            }
            BlockRun::Gathered(v) => Run::Each(&v[i * cols..(i + 1) * cols]),
        }
    }
}

/// The last element a block touches, for the bounds check.
pub(super) fn last_offset(at: BlockAt, rows: usize, cols: usize) -> usize {
    at.base + (rows - 1) * at.rs + (cols - 1) * at.cs
}

/// `t`'s values over the block at `at`, read in place where possible, else into `buf`.
fn block_operand<'b>(
    t: &'b RawIn,
    at: BlockAt,
    rows: usize,
    cols: usize,
    buf: &'b mut [MaybeUninit<f32>; TILE],
) -> BlockRun<'b> {
    assert!(
        last_offset(at, rows, cols) < t.shape().span(),
        "block out of bounds"
    );
    if at.cs == 0 {
        if at.rs == 0 {
            // SAFETY: `base` is inside the span (checked above).
            return BlockRun::Splat(unsafe { t.load(at.base) });
        }
        for (i, v) in buf[..rows].iter_mut().enumerate() {
            // SAFETY: at most `last_offset`, inside the span (checked above).
            v.write(unsafe { t.load(at.base + i * at.rs) });
        }
        // SAFETY: the first `rows` elements were written just above.
        return BlockRun::PerRow(unsafe { written(buf, rows) });
    }
    if at.cs == 1 && t.dtype() == DType::F32 {
        return BlockRun::Rows(t.ptr_as::<f32>().wrapping_add(at.base), at.rs);
    }
    for i in 0..rows {
        for j in 0..cols {
            // SAFETY: at most `last_offset`, inside the span (checked above).
            let v = unsafe { t.load(at.base + i * at.rs + j * at.cs) };
            buf[i * cols + j].write(v);
        }
    }
    // SAFETY: the first `rows * cols` elements were written just above.
    BlockRun::Gathered(unsafe { written(buf, rows * cols) })
}

/// The first `n` elements of `buf`, which the caller has written.
///
/// # Safety
/// `buf[..n]` is initialised.
unsafe fn written(buf: &[MaybeUninit<f32>; TILE], n: usize) -> &[f32] {
    // SAFETY: per the contract; `MaybeUninit<f32>` has the layout of `f32`.
    unsafe { std::slice::from_raw_parts(buf.as_ptr().cast::<f32>(), n) }
}

/// Stores the block to `t` at `at`.
fn store_block(t: &RawOut, at: BlockAt, vals: &[f32], ld: usize, rows: usize, cols: usize) {
    assert!(
        last_offset(at, rows, cols) < t.shape().span(),
        "block out of bounds"
    );
    for i in 0..rows {
        let src = &vals[i * ld..i * ld + cols];
        let base = at.base + i * at.rs;
        // SAFETY: in bounds (checked above); the caller owns these elements of the
        // output (tiles are disjoint across threads).
        unsafe {
            if t.dtype() == DType::F32 {
                crate::kernels::gemm::store_strided(t.ptr_as::<f32>().add(base), at.cs, src);
            } else {
                for (j, &v) in src.iter().enumerate() {
                    t.store(base + j * at.cs, v);
                }
            }
        }
    }
}

impl Prepared<'_> {
    /// Whether [`Prepared::apply_block`] can run this epilogue (every tensor
    /// pixel-linear).
    pub(crate) fn blockwise(&self) -> bool {
        self.linear.is_some()
    }

    /// Applies the epilogue to a block of the producer's values: row `i` at
    /// `vals[i * ld..i * ld + cols]`; `at` maps each tensor's [`Linear`] view to where
    /// the block lies in it.
    ///
    /// # Panics
    /// When the epilogue is not [`Prepared::blockwise`], or a block leaves a tensor.
    pub(crate) fn apply_block(
        &self,
        vals: &mut [f32],
        ld: usize,
        rows: usize,
        cols: usize,
        at: impl Fn(&Linear) -> BlockAt,
    ) {
        let (lin_in, lin_out) = self.linear.as_ref().expect("a blockwise epilogue");
        if let Some(v) = &self.vector
            && v.run(
                &self.ins,
                self.outs[0],
                (lin_in, &lin_out[0]),
                &at,
                (vals, ld, rows, cols),
            )
        {
            return;
        }
        debug_assert!(rows > 0 && cols > 0 && (rows - 1) * ld + cols <= vals.len());
        let ep = self.ep;
        let mut out_k = 0;
        let store = |k: &mut usize, vals: &[f32]| {
            store_block(self.outs[*k], at(&lin_out[*k]), vals, ld, rows, cols);
            *k += 1;
        };
        if ep.store.is_some() {
            store(&mut out_k, vals);
        }
        let mut in_k = 0;
        let mut bufs = [[MaybeUninit::<f32>::uninit(); TILE]; 2];
        for step in &ep.steps {
            let arity = step.op.arity();
            let ops = step.operands(
                &mut in_k,
                &mut bufs,
                BlockRun::Splat(0.0),
                BlockRun::Splat,
                |k, buf| block_operand(self.ins[k], at(&lin_in[k]), rows, cols, buf),
            );
            let (op, ci) = (step.op, step.chain_input);
            // The mode and operand kind are matched once per block; the rows then run
            // fixed-width loops (a full tile row is two vector operations).
            match arity {
                1 => {
                    for i in 0..rows {
                        unary_in_place(op, &mut vals[i * ld..i * ld + cols]);
                    }
                }
                2 => {
                    let o = ops[1 - ci.min(1)];
                    let (v, (ld, rows, cols)) = (&mut *vals, (ld, rows, cols));
                    match (op, ci == 1) {
                        (PwOp::Add, _) => zip_rows(v, ld, rows, cols, o, |a, b| a + b),
                        (PwOp::Mul, _) => zip_rows(v, ld, rows, cols, o, |a, b| a * b),
                        (PwOp::Sub, false) => zip_rows(v, ld, rows, cols, o, |a, b| a - b),
                        (PwOp::Sub, true) => zip_rows(v, ld, rows, cols, o, |a, b| b - a),
                        (PwOp::Max, false) => zip_rows(v, ld, rows, cols, o, f32::max),
                        (PwOp::Min, false) => zip_rows(v, ld, rows, cols, o, f32::min),
                        (op, false) => zip_rows(v, ld, rows, cols, o, |a, b| op.eval1(a, b, 0.0)),
                        (op, true) => zip_rows(v, ld, rows, cols, o, |a, b| op.eval1(b, a, 0.0)),
                    }
                }
                _ if op == PwOp::ScaleShift && ci == 0 => {
                    for i in 0..rows {
                        let v = &mut vals[i * ld..i * ld + cols];
                        let (b, c) = (ops[1].row(i, cols), ops[2].row(i, cols));
                        match <&mut [f32; NR]>::try_from(&mut *v) {
                            // Through local copies (see `map_row`).
                            Ok(r) => {
                                let (x, b, c) = (*r, full_row(b), full_row(c));
                                *r = std::array::from_fn(|j| x[j] * b[j] + c[j]);
                            }
                            Err(_) => scale_shift_in_place(v, b, c),
                        }
                    }
                }
                _ => {
                    for i in 0..rows {
                        let v = &mut vals[i * ld..i * ld + cols];
                        let runs = [
                            ops[0].row(i, cols),
                            ops[1].row(i, cols),
                            ops[2].row(i, cols),
                        ];
                        for (j, x) in v.iter_mut().enumerate() {
                            let mut abc = [runs[0].at(j), runs[1].at(j), runs[2].at(j)];
                            abc[ci] = *x;
                            *x = op.eval1(abc[0], abc[1], abc[2]);
                        }
                    }
                }
            }
            if step.store.is_some() {
                store(&mut out_k, vals);
            }
        }
    }
}

/// A whole tile row of an operand as a local array.
#[inline(always)]
fn full_row(r: Run<'_>) -> [f32; NR] {
    match r {
        Run::Splat(v) => [v; NR],
        Run::Each(s) => std::array::from_fn(|j| s[j]),
    }
}

/// `x = f(x)` over one row, as a fixed-width loop when it is a whole tile row.
#[inline(always)]
fn map_row(r: &mut [f32], f: impl Fn(f32) -> f32) {
    if let Ok(r) = <&mut [f32; NR]>::try_from(&mut *r) {
        r.iter_mut().for_each(|x| *x = f(*x));
    } else {
        r.iter_mut().for_each(|x| *x = f(*x));
    }
}

/// `x = f(x, o)` over every row of a block, `o` the operand's values there.
#[inline(always)]
fn zip_rows(
    vals: &mut [f32],
    ld: usize,
    rows: usize,
    cols: usize,
    o: BlockRun<'_>,
    f: impl Fn(f32, f32) -> f32,
) {
    for i in 0..rows {
        let r = &mut vals[i * ld..i * ld + cols];
        match o.row(i, cols) {
            Run::Splat(b) => map_row(r, |a| f(a, b)),
            Run::Each(b) => {
                if let (Ok(r), Ok(b)) = (
                    <&mut [f32; NR]>::try_from(&mut *r),
                    <&[f32; NR]>::try_from(b),
                ) {
                    // Both rows through local copies (see `map_row`).
                    let (x, y): ([f32; NR], [f32; NR]) = (*r, *b);
                    *r = std::array::from_fn(|j| f(x[j], y[j]));
                } else {
                    r.iter_mut().zip(b).for_each(|(a, &b)| *a = f(*a, b));
                }
            }
        }
    }
}

/// The [`Linear`] views of an epilogue's inputs and outputs, if every one has one.
pub(crate) fn linear_views(ins: &[&RawIn], outs: &[&RawOut]) -> Option<(Vec<Linear>, Vec<Linear>)> {
    let lin_in = ins
        .iter()
        .map(|t| Linear::of(t.shape()))
        .collect::<Option<_>>()?;
    let lin_out = outs
        .iter()
        .map(|t| Linear::of(t.shape()))
        .collect::<Option<_>>()?;
    Some((lin_in, lin_out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_views_of_common_layouts() {
        let nchw = Shape::packed(&[2, 3, 4, 5]);
        assert_eq!(
            Linear::of(&nchw),
            Some(Linear {
                ns: 60,
                cs: 20,
                ps: 1
            })
        );
        let nhwc = Shape::channels_last(&[2, 3, 4, 5]);
        assert_eq!(
            Linear::of(&nhwc),
            Some(Linear {
                ns: 60,
                cs: 1,
                ps: 3
            })
        );
        // A per-channel bias broadcast into the index space.
        let bias = Shape::new(&[2, 3, 4, 5], &[0, 1, 0, 0]);
        assert_eq!(
            Linear::of(&bias),
            Some(Linear {
                ns: 0,
                cs: 1,
                ps: 0
            })
        );
        // Width 1: the pixel step is the height's.
        let tall = Shape::new(&[1, 2, 3, 1], &[6, 3, 1, 7]);
        assert_eq!(
            Linear::of(&tall),
            Some(Linear {
                ns: 6,
                cs: 3,
                ps: 1
            })
        );
        // Rows padded to 8: pixels are not linear.
        let padded = Shape::new(&[1, 1, 4, 5], &[32, 32, 8, 1]);
        assert_eq!(Linear::of(&padded), None);
        assert_eq!(Linear::of(&Shape::packed(&[4, 5])), None);
    }
}
