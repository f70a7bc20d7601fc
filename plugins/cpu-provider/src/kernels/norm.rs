//! Normalizations and reductions: batch-norm statistics and backward, layer-norm and
//! RMS-norm statistics, and general reductions.
//!
//! Statistics are accumulated in `f64`, per channel or per row, one fixed sequential
//! order per output: results do not depend on the thread count. The normalizing
//! multiply-adds themselves run as epilogue steps (see the plan), so activations that
//! follow fuse into them.

use hipdnn_flatbuffers_sdk::wire::ReductionMode;

use super::exec::{Exec, split};
use crate::tensor::{RawIn, RawOut, Shape};

/// Calls `f(offset)` for every element of the sub-space `dims`/`strides` starting at
/// `base`, innermost dimension last.
#[inline]
pub(crate) fn for_each_offset(
    dims: &[usize],
    strides: &[usize],
    base: usize,
    mut f: impl FnMut(usize),
) {
    let r = dims.len();
    if r == 0 {
        f(base);
        return;
    }
    let total: usize = dims.iter().product();
    let (inner, is) = (dims[r - 1], strides[r - 1]);
    let outer = total / inner;
    let mut idx = vec![0usize; r - 1];
    for _ in 0..outer {
        let b = base + idx.iter().zip(strides).map(|(i, s)| i * s).sum::<usize>();
        for j in 0..inner {
            f(b + j * is);
        }
        for d in (0..r - 1).rev() {
            idx[d] += 1;
            if idx[d] < dims[d] {
                break;
            }
            idx[d] = 0;
        }
    }
}

/// Splits `shape` into the dims listed in `keep` and the rest.
/// Extents and strides of a sub-space.
type Sub = (Vec<usize>, Vec<usize>);

fn parts(shape: &Shape, keep: &[bool]) -> (Sub, Sub) {
    let mut k = (Vec::new(), Vec::new());
    let mut r = (Vec::new(), Vec::new());
    for (d, &kp) in keep.iter().enumerate() {
        let t = if kp { &mut k } else { &mut r };
        t.0.push(shape.dims[d]);
        t.1.push(shape.strides[d]);
    }
    (k, r)
}

/// Per-group mean and biased variance of `x` over the dims where `keep` is false; one
/// group per element of the kept dims (row-major). Returns `(mean, var)`.
pub fn moments(x: &RawIn, keep: &[bool], exec: &Exec) -> (Vec<f64>, Vec<f64>) {
    let ((kd, ks), (rd, rs)) = parts(x.shape(), keep);
    let groups: usize = kd.iter().product();
    let count: usize = rd.iter().product();
    let mut mean = vec![0f64; groups];
    let mut var = vec![0f64; groups];
    let parts_n = exec.threads().min(groups).max(1);
    let chunks: Vec<std::sync::Mutex<(&mut [f64], &mut [f64])>> = {
        let mut v = Vec::new();
        let (mut m, mut s) = (&mut mean[..], &mut var[..]);
        for p in 0..parts_n {
            let len = split(groups, parts_n, p).len();
            let (a, b) = m.split_at_mut(len);
            let (c, d) = s.split_at_mut(len);
            v.push(std::sync::Mutex::new((a, c)));
            m = b;
            s = d;
        }
        v
    };
    exec.for_each(parts_n, |p| {
        let mut guard = chunks[p].lock().unwrap_or_else(|e| e.into_inner());
        let (m, s) = &mut *guard;
        for (q, gi) in split(groups, parts_n, p).enumerate() {
            let mut rem = gi;
            let mut base = 0;
            for d in (0..kd.len()).rev() {
                base += (rem % kd[d]) * ks[d];
                rem /= kd[d];
            }
            let mut sum = 0f64;
            // SAFETY: offsets from x's own shape.
            for_each_offset(&rd, &rs, base, |o| sum += f64::from(unsafe { x.load(o) }));
            let mu = sum / count as f64;
            let mut sq = 0f64;
            for_each_offset(&rd, &rs, base, |o| {
                // SAFETY: as above.
                let d = f64::from(unsafe { x.load(o) }) - mu;
                sq += d * d;
            });
            m[q] = mu;
            s[q] = sq / count as f64;
        }
    });
    (mean, var)
}

/// Mean square of `x` per group (RMS norm statistics).
pub fn mean_square(x: &RawIn, keep: &[bool], exec: &Exec) -> Vec<f64> {
    let ((kd, ks), (rd, rs)) = parts(x.shape(), keep);
    let groups: usize = kd.iter().product();
    let count: usize = rd.iter().product();
    let out: Vec<std::sync::Mutex<f64>> = (0..groups).map(|_| std::sync::Mutex::new(0.0)).collect();
    let parts_n = exec.threads().min(groups).max(1);
    exec.for_each(parts_n, |p| {
        for gi in split(groups, parts_n, p) {
            let mut rem = gi;
            let mut base = 0;
            for d in (0..kd.len()).rev() {
                base += (rem % kd[d]) * ks[d];
                rem /= kd[d];
            }
            let mut sq = 0f64;
            for_each_offset(&rd, &rs, base, |o| {
                // SAFETY: offsets from x's own shape.
                let v = f64::from(unsafe { x.load(o) });
                sq += v * v;
            });
            *out[gi].lock().unwrap_or_else(|e| e.into_inner()) = sq / count as f64;
        }
    });
    out.into_iter()
        .map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner()))
        .collect()
}

/// The stride between the `c` per-channel values of a parameter tensor: dim 1's when it
/// has `c` elements (`[1, C, 1, 1]`), else that of the first dim of `c` elements (1 if
/// none: a dense vector).
pub fn channel_stride(s: &Shape, c: usize) -> usize {
    if s.rank() >= 2 && s.dims[1] == c {
        s.strides[1]
    } else {
        s.dims
            .iter()
            .zip(&s.strides)
            .find(|(d, _)| **d == c)
            .map_or(1, |(_, st)| *st)
    }
}

/// Reads a per-channel tensor (`C` elements at dim 1 of its shape, or its only
/// elements) as `f64`.
pub fn per_channel(t: &RawIn, c: usize) -> Vec<f64> {
    let stride = channel_stride(t.shape(), c);
    // SAFETY: the tensor holds `c` elements along that stride (checked by the plan).
    (0..c)
        .map(|i| f64::from(unsafe { t.load(i * stride) }))
        .collect()
}

/// Writes per-channel values to a tensor shaped like [`per_channel`]'s input.
pub fn write_per_channel(t: &RawOut, vals: &[f64]) {
    let c = vals.len();
    let stride = channel_stride(t.shape(), c);
    for (i, &v) in vals.iter().enumerate() {
        // SAFETY: inside the tensor (checked by the plan); single-threaded.
        unsafe { t.store(i * stride, v as f32) };
    }
}

/// Batch-norm backward for `x` `[N, C, ...]`: returns `(dscale, dbias)` and writes `dx`.
#[allow(clippy::too_many_arguments)]
pub fn batchnorm_backward(
    x: &RawIn,
    dy: &RawIn,
    mean: &[f64],
    inv_std: &[f64],
    scale: &[f64],
    dx: &RawOut,
    exec: &Exec,
) -> (Vec<f64>, Vec<f64>) {
    let c = x.shape().dims[1];
    let mut keep = vec![false; x.shape().rank()];
    keep[1] = true;
    let ((_, xs_c), (rd, xrs)) = parts(x.shape(), &keep);
    let (_, (_, dyrs)) = parts(dy.shape(), &keep);
    let (_, (_, dxrs)) = parts(dx.shape(), &keep);
    let (dyc, dxc) = (dy.shape().strides[1], dx.shape().strides[1]);
    let count: usize = rd.iter().product();
    let res: Vec<std::sync::Mutex<(f64, f64)>> =
        (0..c).map(|_| std::sync::Mutex::new((0.0, 0.0))).collect();
    let parts_n = exec.threads().min(c).max(1);
    exec.for_each(parts_n, |p| {
        for ch in split(c, parts_n, p) {
            let (mu, is) = (mean[ch], inv_std[ch]);
            let (mut sdy, mut sdyx) = (0f64, 0f64);
            let mut xo = Vec::with_capacity(count);
            for_each_offset(&rd, &xrs, ch * xs_c[0], |o| xo.push(o));
            let mut dyo = Vec::with_capacity(count);
            for_each_offset(&rd, &dyrs, ch * dyc, |o| dyo.push(o));
            for (a, b) in xo.iter().zip(&dyo) {
                // SAFETY: offsets from the tensors' own shapes.
                let (xv, g) = unsafe { (f64::from(x.load(*a)), f64::from(dy.load(*b))) };
                sdy += g;
                sdyx += g * (xv - mu) * is;
            }
            let k = scale[ch] * is / count as f64;
            let mut q = 0;
            for_each_offset(&rd, &dxrs, ch * dxc, |o| {
                // SAFETY: as above; channel `ch` of dx is written by this task only.
                unsafe {
                    let xh = (f64::from(x.load(xo[q])) - mu) * is;
                    let g = f64::from(dy.load(dyo[q]));
                    dx.store(o, (k * (count as f64 * g - sdy - xh * sdyx)) as f32);
                }
                q += 1;
            });
            *res[ch].lock().unwrap_or_else(|e| e.into_inner()) = (sdyx, sdy);
        }
    });
    res.into_iter()
        .map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner()))
        .unzip()
}

/// A reduction operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReduceOp {
    /// Sum.
    Add,
    /// Product.
    Mul,
    /// Minimum.
    Min,
    /// Maximum.
    Max,
    /// Maximum of absolute values.
    Amax,
    /// Mean.
    Avg,
    /// Sum of absolute values.
    Norm1,
    /// Square root of the sum of squares.
    Norm2,
    /// Product of the non-zero elements.
    MulNoZeros,
}

impl ReduceOp {
    /// The operator for a wire reduction mode, or `None` for `UNSET` and unknown values.
    pub fn from_mode(mode: ReductionMode) -> Option<Self> {
        Some(match mode {
            ReductionMode::ADD => Self::Add,
            ReductionMode::MUL => Self::Mul,
            ReductionMode::MIN_OP => Self::Min,
            ReductionMode::MAX_OP => Self::Max,
            ReductionMode::AMAX => Self::Amax,
            ReductionMode::AVG => Self::Avg,
            ReductionMode::NORM1 => Self::Norm1,
            ReductionMode::NORM2 => Self::Norm2,
            ReductionMode::MUL_NO_ZEROS => Self::MulNoZeros,
            _ => return None,
        })
    }
}

/// Reduces `x` into the dense buffer `out` laid out row-major over `out_dims` (each
/// dim equal to x's or 1).
pub fn reduce(x: &RawIn, out_dims: &[usize], op: ReduceOp, out: &mut [f32], exec: &Exec) {
    let keep: Vec<bool> = x
        .shape()
        .dims
        .iter()
        .zip(out_dims)
        .map(|(a, b)| a == b)
        .collect();
    let ((kd, ks), (rd, rs)) = parts(x.shape(), &keep);
    let groups: usize = kd.iter().product();
    let count: usize = rd.iter().product();
    let cells: Vec<std::sync::Mutex<&mut f32>> = out[..groups]
        .iter_mut()
        .map(std::sync::Mutex::new)
        .collect();
    let parts_n = exec.threads().min(groups).max(1);
    exec.for_each(parts_n, |p| {
        for gi in split(groups, parts_n, p) {
            let mut rem = gi;
            let mut base = 0;
            for d in (0..kd.len()).rev() {
                base += (rem % kd[d]) * ks[d];
                rem /= kd[d];
            }
            let mut acc: f64 = match op {
                ReduceOp::Mul | ReduceOp::MulNoZeros => 1.0,
                ReduceOp::Min => f64::INFINITY,
                ReduceOp::Max => f64::NEG_INFINITY,
                _ => 0.0,
            };
            for_each_offset(&rd, &rs, base, |o| {
                // SAFETY: offsets from x's own shape.
                let v = f64::from(unsafe { x.load(o) });
                acc = match op {
                    ReduceOp::Add | ReduceOp::Avg => acc + v,
                    ReduceOp::Mul => acc * v,
                    ReduceOp::MulNoZeros => {
                        if v != 0.0 {
                            acc * v
                        } else {
                            acc
                        }
                    }
                    ReduceOp::Min => acc.min(v),
                    ReduceOp::Max => acc.max(v),
                    ReduceOp::Amax => acc.max(v.abs()),
                    ReduceOp::Norm1 => acc + v.abs(),
                    ReduceOp::Norm2 => acc + v * v,
                };
            });
            let v = match op {
                ReduceOp::Avg => acc / count as f64,
                ReduceOp::Norm2 => acc.sqrt(),
                _ => acc,
            };
            **cells[gi].lock().unwrap_or_else(|e| e.into_inner()) = v as f32;
        }
    });
}
