//! Epilogues (chains of pointwise steps applied to a producer's values) and the
//! strided, broadcasting elementwise engine that runs them over a whole tensor.
//!
//! A chain starts from a value per element of a *logical index space* (the producer's
//! output dims). Each [`Step`] applies a [`PwOp`] whose inputs are the running value and
//! other operands (tensors broadcast into the index space, or scalars), and may store its
//! result to a tensor (the stage output, or an intermediate the graph wants to see).
//! The GEMM kernels run epilogues on their output tiles; everything else runs them
//! through [`elementwise`].

mod block;
mod vector;

use std::mem::MaybeUninit;

pub(crate) use self::block::{BlockAt, Linear};
use super::exec::{Exec, SendPtr, split};
use super::pointwise::PwOp;
use crate::tensor::{RawIn, RawOut, Shape};

/// A value a step reads besides the running value.
#[derive(Debug, Clone)]
pub enum Operand {
    /// A tensor whose shape is the logical index space (broadcast dims have stride 0).
    Tensor(RawIn),
    /// The same value everywhere.
    Scalar(f32),
}

/// One pointwise step of a chain.
#[derive(Debug, Clone)]
pub struct Step {
    /// The function.
    pub op: PwOp,
    /// Which input (0, 1, 2) is the running value.
    pub chain_input: usize,
    /// The other inputs (`None` at `chain_input` and for inputs the function lacks).
    pub others: [Option<Operand>; 3],
    /// Where to store the result, if anywhere.
    pub store: Option<RawOut>,
}

impl Step {
    /// A unary step on the running value.
    pub fn unary(op: PwOp) -> Self {
        Self {
            op,
            chain_input: 0,
            others: [None, None, None],
            store: None,
        }
    }

    /// A binary step: `op(running, other)`.
    pub fn binary(op: PwOp, other: Operand) -> Self {
        Self {
            op,
            chain_input: 0,
            others: [None, Some(other), None],
            store: None,
        }
    }

    /// Stores the result to `out`.
    pub fn store_to(mut self, out: RawOut) -> Self {
        self.store = Some(out);
        self
    }

    /// The step's operands besides the running value, by slot: `scalar(v)` for a scalar,
    /// `tensor(k, buf)` for tensor operand `k` (in [`Epilogue::tensors`] input order; each
    /// gets its own of the two buffers), `unset` elsewhere. `in_k` counts every tensor
    /// operand of the step, those past the function's arity too, so that the indices of
    /// later steps stay aligned.
    fn operands<'b, B, T: Copy>(
        &self,
        in_k: &mut usize,
        bufs: &'b mut [B; 2],
        unset: T,
        scalar: impl Fn(f32) -> T,
        mut tensor: impl FnMut(usize, &'b mut B) -> T,
    ) -> [T; 3] {
        let arity = self.op.arity();
        let [b0, b1] = bufs;
        let mut spare = [Some(b0), Some(b1)];
        let mut values = [unset; 3];
        for (slot, other) in self.others.iter().enumerate() {
            match other {
                Some(Operand::Tensor(_)) => {
                    if slot < arity && slot != self.chain_input {
                        let buf = spare
                            .iter_mut()
                            .find_map(Option::take)
                            .expect("at most two operands besides the running value");
                        values[slot] = tensor(*in_k, buf);
                    }
                    *in_k += 1;
                }
                Some(Operand::Scalar(v)) => values[slot] = scalar(*v),
                None => {}
            }
        }
        values
    }
}

/// What happens to a producer's values: an optional store of the raw value, then the
/// steps in order. Every tensor's shape is in the producer's logical index space.
#[derive(Debug, Clone, Default)]
pub struct Epilogue {
    /// Store of the producer's value itself.
    pub store: Option<RawOut>,
    /// The steps.
    pub steps: Vec<Step>,
}

impl Epilogue {
    /// Store the values to `out` and do nothing else.
    pub fn store(out: RawOut) -> Self {
        Self {
            store: Some(out),
            steps: Vec::new(),
        }
    }

    /// Whether this is a plain store (no steps).
    pub fn is_plain(&self) -> bool {
        self.steps.is_empty()
    }

    /// Every tensor the epilogue touches, inputs then outputs, in a fixed order (the
    /// order [`Epilogue::for_each_tensor`] visits them).
    pub(crate) fn tensors(&self) -> (Vec<&RawIn>, Vec<&RawOut>) {
        let mut ins = Vec::new();
        let mut outs = Vec::new();
        if let Some(o) = &self.store {
            outs.push(o);
        }
        for s in &self.steps {
            for o in s.others.iter().flatten() {
                if let Operand::Tensor(t) = o {
                    ins.push(t);
                }
            }
            if let Some(o) = &s.store {
                outs.push(o);
            }
        }
        (ins, outs)
    }
}

/// Longest run the chain evaluates at once.
pub(crate) const CHUNK: usize = 64;

/// An operand's values along a run: one value for the whole run (a broadcast or a
/// scalar), or one per element.
#[derive(Clone, Copy)]
enum Run<'b> {
    Splat(f32),
    Each(&'b [f32]),
}

impl Run<'_> {
    #[inline(always)]
    fn at(&self, i: usize) -> f32 {
        match self {
            Run::Splat(v) => *v,
            Run::Each(s) => s[i],
        }
    }
}

/// The values of `t` along the run of `n` elements at `off` with stride `stride`: read
/// in place when they are contiguous `f32`s, one value when the stride is 0, else
/// gathered into `buf`.
#[inline]
fn operand_run<'b>(
    t: &'b RawIn,
    off: usize,
    stride: usize,
    n: usize,
    buf: &'b mut [MaybeUninit<f32>; CHUNK],
) -> Run<'b> {
    assert!(
        n > 0 && off + (n - 1) * stride < t.shape().span(),
        "run out of bounds"
    );
    if stride == 0 {
        // SAFETY: `off` is inside the tensor's span (checked above).
        return Run::Splat(unsafe { t.load(off) });
    }
    if stride == 1 && t.dtype() == crate::tensor::DType::F32 {
        // SAFETY: the run is inside the tensor's span (checked above); inputs are only
        // read while a plan runs.
        return Run::Each(unsafe { std::slice::from_raw_parts(t.ptr_as::<f32>().add(off), n) });
    }
    for (i, v) in buf[..n].iter_mut().enumerate() {
        // SAFETY: `off + i * stride` is inside the span (checked above).
        v.write(unsafe { t.load(off + i * stride) });
    }
    // SAFETY: the first `n` elements were written just above.
    Run::Each(unsafe { std::slice::from_raw_parts(buf.as_ptr().cast::<f32>(), n) })
}

/// `v[i] = f(v[i], o[i])` (or `f(o[i], v[i])` when `swapped`), with the common modes
/// as plain loops over contiguous runs so that they vectorize.
#[inline]
fn binary_in_place(op: PwOp, vals: &mut [f32], other: Run<'_>, swapped: bool) {
    #[inline(always)]
    fn each(vals: &mut [f32], other: Run<'_>, f: impl Fn(f32, f32) -> f32) {
        match other {
            Run::Splat(b) => vals.iter_mut().for_each(|v| *v = f(*v, b)),
            Run::Each(b) => vals.iter_mut().zip(b).for_each(|(v, &b)| *v = f(*v, b)),
        }
    }
    match (op, swapped) {
        (PwOp::Add, _) => each(vals, other, |a, b| a + b),
        (PwOp::Mul, _) => each(vals, other, |a, b| a * b),
        (PwOp::Max, false) => each(vals, other, f32::max),
        (PwOp::Min, false) => each(vals, other, f32::min),
        (PwOp::Sub, false) => each(vals, other, |a, b| a - b),
        (PwOp::Sub, true) => each(vals, other, |a, b| b - a),
        (op, false) => each(vals, other, |a, b| op.eval1(a, b, 0.0)),
        (op, true) => each(vals, other, |a, b| op.eval1(b, a, 0.0)),
    }
}

/// Runs the steps on `vals` in place. Operand `k` (in [`Epilogue::tensors`] input
/// order) is `ins[k]` along the run at `in_at(k) = (offset, stride)`; output `k` (in
/// output order) is stored to `outs[k]` at `out_at(k)`.
pub(crate) fn run_chain(
    ep: &Epilogue,
    ins: &[&RawIn],
    outs: &[&RawOut],
    vals: &mut [f32],
    in_at: impl Fn(usize) -> (usize, usize),
    out_at: impl Fn(usize) -> (usize, usize),
) {
    let n = vals.len();
    debug_assert!(n <= CHUNK);
    let mut out_k = 0;
    let store = |out_k: &mut usize, vals: &[f32]| {
        let (b, s) = out_at(*out_k);
        store_run(outs[*out_k], b, s, vals);
        *out_k += 1;
    };
    if ep.store.is_some() {
        store(&mut out_k, vals);
    }
    let mut in_k = 0;
    // Gather buffers, written before they are read (a zeroed pair would cost more
    // than the short runs of a GEMM tile).
    let mut bufs = [[MaybeUninit::<f32>::uninit(); CHUNK]; 2];
    for step in &ep.steps {
        let arity = step.op.arity();
        let runs = step.operands(
            &mut in_k,
            &mut bufs,
            Run::Splat(0.0),
            Run::Splat,
            |k, buf| {
                let (b, s) = in_at(k);
                operand_run(ins[k], b, s, n, buf)
            },
        );
        match arity {
            1 => unary_in_place(step.op, vals),
            2 => {
                let other = 1 - step.chain_input.min(1);
                binary_in_place(step.op, vals, runs[other], step.chain_input == 1);
            }
            _ if step.op == PwOp::ScaleShift && step.chain_input == 0 => {
                scale_shift_in_place(vals, runs[1], runs[2]);
            }
            _ => {
                let (op, ci) = (step.op, step.chain_input);
                for (i, v) in vals.iter_mut().enumerate() {
                    let mut abc = [runs[0].at(i), runs[1].at(i), runs[2].at(i)];
                    abc[ci] = *v;
                    *v = match op {
                        PwOp::ScaleShift => abc[0] * abc[1] + abc[2],
                        op => op.eval1(abc[0], abc[1], abc[2]),
                    };
                }
            }
        }
        if step.store.is_some() {
            store(&mut out_k, vals);
        }
    }
}

/// `v[i] = v[i] · b[i] + c[i]`, as [`PwOp::ScaleShift`].
#[inline]
fn scale_shift_in_place(vals: &mut [f32], b: Run<'_>, c: Run<'_>) {
    match (b, c) {
        (Run::Splat(b), Run::Splat(c)) => vals.iter_mut().for_each(|v| *v = *v * b + c),
        (Run::Each(b), Run::Splat(c)) => {
            vals.iter_mut().zip(b).for_each(|(v, &b)| *v = *v * b + c);
        }
        (Run::Splat(b), Run::Each(c)) => {
            vals.iter_mut().zip(c).for_each(|(v, &c)| *v = *v * b + c);
        }
        (Run::Each(b), Run::Each(c)) => vals
            .iter_mut()
            .zip(b.iter().zip(c))
            .for_each(|(v, (&b, &c))| *v = *v * b + c),
    }
}

/// `v[i] = f(v[i])`, plain ReLU as its own loop.
#[inline(always)]
fn unary_in_place(op: PwOp, vals: &mut [f32]) {
    match op {
        PwOp::ReluFwd {
            lower: 0.0,
            upper: f32::INFINITY,
            slope: 0.0,
        } => vals.iter_mut().for_each(|v| *v = v.max(0.0)),
        PwOp::Identity => {}
        op => vals.iter_mut().for_each(|v| *v = op.eval1(*v, 0.0, 0.0)),
    }
}

/// A tensor's offsets along a simplified iteration space.
#[derive(Debug, Clone)]
struct Iter {
    /// Extents, outermost first; the last is the inner loop.
    dims: Vec<usize>,
}

/// Reorders and merges the dims of the index space so that the inner loop runs along
/// the first output's fastest dimension and contiguous runs are merged. Returns the
/// new dims and each tensor's strides in them.
fn simplify(dims: &[usize], strides: &[Vec<usize>]) -> (Iter, Vec<Vec<usize>>) {
    let rank = dims.len();
    let key = &strides[0];
    let mut order: Vec<usize> = (0..rank).filter(|&d| dims[d] > 1).collect();
    // Outermost first: descending stride of the primary tensor (stable on ties).
    order.sort_by(|&a, &b| key[b].cmp(&key[a]));
    let mut out_dims: Vec<usize> = Vec::new();
    let mut out_strides: Vec<Vec<usize>> = vec![Vec::new(); strides.len()];
    for &d in &order {
        if let Some(&last) = out_dims.last() {
            let mergeable = strides.iter().enumerate().all(|(t, s)| {
                let prev = *out_strides[t].last().expect("same length");
                prev == s[d] * dims[d]
            });
            if mergeable {
                let _ = last;
                *out_dims.last_mut().expect("non-empty") *= dims[d];
                for (t, s) in strides.iter().enumerate() {
                    *out_strides[t].last_mut().expect("non-empty") = s[d];
                }
                continue;
            }
        }
        out_dims.push(dims[d]);
        for (t, s) in strides.iter().enumerate() {
            out_strides[t].push(s[d]);
        }
    }
    if out_dims.is_empty() {
        out_dims.push(1);
        for s in &mut out_strides {
            s.push(0);
        }
    }
    (Iter { dims: out_dims }, out_strides)
}

/// Computes `init` (broadcast into `dims`) through `ep` for every element of `dims`,
/// in parallel.
///
/// Every tensor in `ep` and `init` must have `dims` as its shape (broadcast
/// dimensions with stride 0); outputs must not overlap each other or the inputs.
pub fn elementwise(init: &Operand, ep: &Epilogue, dims: &[usize], exec: &Exec) {
    let (ins, outs) = ep.tensors();
    for t in ins
        .iter()
        .map(|t| t.shape())
        .chain(outs.iter().map(|t| t.shape()))
    {
        assert_eq!(t.dims, dims, "epilogue tensor outside the index space");
    }
    if transposed_blocks(init, ep, dims, exec) {
        return;
    }
    let mut strides: Vec<Vec<usize>> = Vec::new();
    // The primary (first) tensor decides the loop order: the first output.
    for o in &outs {
        strides.push(o.shape().strides.clone());
    }
    if let Operand::Tensor(t) = init {
        assert_eq!(t.shape().dims, dims);
        strides.push(t.shape().strides.clone());
    }
    for i in &ins {
        strides.push(i.shape().strides.clone());
    }
    if strides.is_empty() {
        return;
    }
    let (iter, strides) = simplify(dims, &strides);
    let nouts = outs.len();
    let has_init = matches!(init, Operand::Tensor(_));
    let inner = *iter.dims.last().expect("rank >= 1");
    let outer: usize = iter.dims[..iter.dims.len() - 1].iter().product();
    let total = outer * inner;
    let parts = if total < 1 << 14 {
        1
    } else {
        (exec.threads() * 4).min(outer.max(1))
    };
    let outer_dims = &iter.dims[..iter.dims.len() - 1];
    exec.for_each(parts, |part| {
        let range = split(outer, parts, part);
        let mut idx = vec![0usize; outer_dims.len()];
        let mut base = vec![0usize; strides.len()];
        let mut vals = [0f32; CHUNK];
        for o in range {
            // Decompose the outer index.
            let mut rem = o;
            for d in (0..outer_dims.len()).rev() {
                idx[d] = rem % outer_dims[d];
                rem /= outer_dims[d];
            }
            for (t, b) in base.iter_mut().enumerate() {
                *b = idx.iter().zip(&strides[t]).map(|(i, s)| i * s).sum();
            }
            let inner_stride = |t: usize| *strides[t].last().expect("rank >= 1");
            let mut j0 = 0;
            while j0 < inner {
                let n = CHUNK.min(inner - j0);
                let vals = &mut vals[..n];
                match init {
                    Operand::Tensor(t) => {
                        let (b, s) = (base[nouts], inner_stride(nouts));
                        load_run(t, b + j0 * s, s, vals);
                    }
                    Operand::Scalar(v) => vals.fill(*v),
                }
                let first_in = nouts + usize::from(has_init);
                run_chain(
                    ep,
                    &ins,
                    &outs,
                    vals,
                    |k| {
                        let t = first_in + k;
                        (base[t] + j0 * inner_stride(t), inner_stride(t))
                    },
                    |k| (base[k] + j0 * inner_stride(k), inner_stride(k)),
                );
                j0 += n;
            }
        }
    });
}

/// [`elementwise`] between layouts: from a channels-last `f32` image into a chain whose
/// first output is channels-first ([`Prepared::channel_rows`]: a caller's NCHW tensor
/// after a channels-last stage), or from a channels-first one into a chain whose first
/// output is channels-last (a caller's NCHW image into the channels-last activations
/// of a network). Per image and [`gemm::NR`] channels, blocks of that many pixels are
/// transposed (8 × 8 AVX2 transposes) into the output's order and run through
/// [`Prepared::apply_block`], so that the chain reads and writes whole runs of the
/// output's rows; the general path would read the source one strided element at a
/// time. `false` (nothing done) for any other case. The values are the general path's:
/// the same chain, element by element.
fn transposed_blocks(init: &Operand, ep: &Epilogue, dims: &[usize], exec: &Exec) -> bool {
    use super::gemm::{self, NR};
    let Operand::Tensor(t) = init else {
        return false;
    };
    if t.dtype() != crate::tensor::DType::F32 || dims.len() < 3 || t.shape().dims != dims {
        return false;
    }
    let Some(src) = Linear::of(t.shape()) else {
        return false;
    };
    let (n, c) = (dims[0], dims[1]);
    let hw: usize = dims[2..].iter().product();
    // Channels-last source: pixels `ps` apart, channels contiguous; channels-first:
    // the other way round.
    let cl_src = src.cs == 1 && src.ps >= c && hw > 1;
    let cf_src = src.ps == 1 && src.cs >= hw && c > 1;
    if !cl_src && !cf_src {
        return false;
    }
    let prepared = Prepared::new(ep);
    let rows_out = prepared.channel_rows();
    let cl_out = prepared
        .linear
        .as_ref()
        .and_then(|(_, outs)| outs.first())
        .is_some_and(|o| o.cs == 1 && o.ps > 1);
    // Channel rows into a channels-first output, pixel rows into a channels-last one.
    if !(cl_src && rows_out || cf_src && cl_out) {
        return false;
    }
    if n * c * hw == 0 {
        return true;
    }
    let cblocks = c.div_ceil(NR);
    let units = n * cblocks;
    let parts = if n * c * hw < 1 << 14 {
        1
    } else {
        (exec.threads() * 4).min(units)
    };
    let x = SendPtr(t.ptr_as::<f32>());
    let span = t.shape().span();
    exec.for_each(parts, |part| {
        let x = x.get();
        let mut block = [0f32; NR * NR];
        for u in split(units, parts, part) {
            let (img, c0) = (u / cblocks, (u % cblocks) * NR);
            let chans = NR.min(c - c0);
            let mut p0 = 0;
            while p0 < hw {
                let pixels = NR.min(hw - p0);
                let at = img * src.ns + p0 * src.ps + c0 * src.cs;
                assert!(
                    at + (pixels - 1) * src.ps + (chans - 1) * src.cs < span,
                    "image block out of bounds"
                );
                // The block's source rows (pixels of a channels-last image, channels
                // of a channels-first one) become its columns: `lines` rows of `len`.
                let (lines, len, step) = if cl_src {
                    (pixels, chans, src.ps)
                } else {
                    (chans, pixels, src.cs)
                };
                let mut r = 0;
                while r + 8 <= lines {
                    // SAFETY: source rows `r..r + 8` hold `len` floats from
                    // `at + r * step`, inside x (checked above); the destination is
                    // columns `r..r + 8` of `len` block rows `NR` apart.
                    unsafe {
                        gemm::transpose_8_rows(
                            x.add(at + r * step),
                            step,
                            len,
                            block.as_mut_ptr().add(r),
                            NR,
                        );
                    }
                    r += 8;
                }
                for r in r..lines {
                    for q in 0..len {
                        // SAFETY: inside x (checked above).
                        block[q * NR + r] = unsafe { *x.add(at + r * step + q) };
                    }
                }
                // Rows are the block's channels (into a channels-first output) or its
                // pixels (into a channels-last one).
                let (rows, cols) = if cl_src {
                    (chans, pixels)
                } else {
                    (pixels, chans)
                };
                prepared.apply_block(&mut block, NR, rows, cols, |l| {
                    let (rs, cs) = if cl_src { (l.cs, l.ps) } else { (l.ps, l.cs) };
                    BlockAt {
                        base: img * l.ns + c0 * l.cs + p0 * l.ps,
                        rs,
                        cs,
                    }
                });
                p0 += pixels;
            }
        }
    });
    true
}

/// Reads `out.len()` elements starting at `off` with stride `stride`.
#[inline]
pub(crate) fn load_run(t: &RawIn, off: usize, stride: usize, out: &mut [f32]) {
    let n = out.len();
    if n == 0 {
        return;
    }
    assert!(
        off + (n - 1) * stride < t.shape().span(),
        "run out of bounds"
    );
    use crate::tensor::DType;
    // SAFETY: the whole run is inside the tensor's span (checked above) and the
    // pointer addresses `span` elements of its dtype.
    unsafe {
        match t.dtype() {
            DType::F32 => {
                let p = t.ptr_as::<f32>().add(off);
                if stride == 1 {
                    out.copy_from_slice(std::slice::from_raw_parts(p, n));
                } else {
                    for (i, o) in out.iter_mut().enumerate() {
                        *o = *p.add(i * stride);
                    }
                }
            }
            _ => {
                for (i, o) in out.iter_mut().enumerate() {
                    *o = t.load(off + i * stride);
                }
            }
        }
    }
}

/// Writes `vals` starting at `off` with stride `stride`.
#[inline]
pub(crate) fn store_run(t: &RawOut, off: usize, stride: usize, vals: &[f32]) {
    let n = vals.len();
    if n == 0 {
        return;
    }
    assert!(
        off + (n - 1) * stride < t.shape().span(),
        "run out of bounds"
    );
    // SAFETY: in bounds (checked above); callers partition outputs so that this run
    // is written by this thread only.
    unsafe {
        if stride == 1 && t.dtype() == crate::tensor::DType::F32 {
            std::ptr::copy_nonoverlapping(vals.as_ptr(), t.ptr_as::<f32>().add(off), n);
        } else {
            for (i, &v) in vals.iter().enumerate() {
                t.store(off + i * stride, v);
            }
        }
    }
}

/// The shape of `t` broadcast into `dims` (right-aligned; size-1 dims get stride 0).
///
/// # Panics
/// When `t` does not broadcast to `dims` (callers check applicability first).
pub fn broadcast(t: &Shape, dims: &[usize]) -> Shape {
    let strides = t
        .broadcast_strides(dims)
        .unwrap_or_else(|| panic!("{:?} does not broadcast to {dims:?}", t.dims));
    Shape::new(dims, &strides)
}

/// An epilogue with its tensor lists resolved once (for the many small runs of a GEMM
/// tile writer).
#[derive(Debug)]
pub(crate) struct Prepared<'a> {
    ep: &'a Epilogue,
    ins: Vec<&'a RawIn>,
    outs: Vec<&'a RawOut>,
    /// Every tensor's pixel-linear view, when all have one (see [`Linear`]).
    linear: Option<(Vec<Linear>, Vec<Linear>)>,
    /// The epilogue's vector form, where it has one (run on blocks when every tensor
    /// is pixel-linear, and in the GEMM's registers by `fused_rows`/`fused_matrix`).
    vector: Option<vector::VectorChain>,
}

impl<'a> Prepared<'a> {
    pub(crate) fn new(ep: &'a Epilogue) -> Self {
        let (ins, outs) = ep.tensors();
        let linear = block::linear_views(&ins, &outs);
        let vector = vector::VectorChain::of(ep, &ins, &outs);
        Self {
            ep,
            ins,
            outs,
            linear,
            vector,
        }
    }

    /// The single fp32 output with no steps, if that is all the epilogue is.
    pub(crate) fn plain_f32_out(&self) -> Option<&'a RawOut> {
        match (self.ep.steps.is_empty(), self.outs.as_slice()) {
            (true, [o]) if o.dtype() == crate::tensor::DType::F32 => Some(o),
            _ => None,
        }
    }

    /// Whether every tensor is pixel-linear ([`Prepared::blockwise`]) and the first
    /// output's pixels are closer together than its channels (a channels-first image):
    /// blocks of channel rows over consecutive pixels write it in runs.
    pub(crate) fn channel_rows(&self) -> bool {
        self.linear
            .as_ref()
            .and_then(|(_, outs)| outs.first())
            .is_some_and(|o| o.ps < o.cs)
    }

    /// Applies the epilogue to `vals`, the producer's values at `vals.len()` consecutive
    /// positions along `axis` of the logical index space starting at `idx` (at most
    /// [`CHUNK`]).
    pub(crate) fn apply_along(&self, idx: &[usize], axis: usize, vals: &mut [f32]) {
        debug_assert!(vals.len() <= CHUNK);
        let at = |s: &Shape| -> (usize, usize) { (s.offset(idx), s.strides[axis]) };
        run_chain(
            self.ep,
            &self.ins,
            &self.outs,
            vals,
            |k| at(self.ins[k].shape()),
            |k| at(self.outs[k].shape()),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::vector::tests::{input, output, value};
    use super::*;
    use crate::kernels::exec::Exec;

    /// `y = relu((x + bias[c]) + r)` from a channels-last `x` into a channels-first `y`
    /// (with `r` channels-first) and the other way round, over blocks with whole and
    /// partial transposes (21 channels, 481 pixels), on one and two threads: the
    /// transposing path runs and gives the scalar chain's values bit for bit.
    #[test]
    fn transposed_blocks_compute_the_chain_between_layouts() {
        let dims = [2, 21, 13, 37];
        let n: usize = dims.iter().product();
        let x: Vec<f32> = (0..n).map(|i| value(i, 1)).collect();
        let r: Vec<f32> = (0..n).map(|i| value(i, 2)).collect();
        let bias: Vec<f32> = (0..dims[1]).map(|i| value(i, 3)).collect();
        let nhwc = Shape::channels_last(&dims);
        let nchw = Shape::packed(&dims);
        let per_channel = Shape::new(&dims, &[0, 1, 0, 0]);
        for (src, dst) in [(&nhwc, &nchw), (&nchw, &nhwc)] {
            for threads in [1, 2] {
                let mut y = vec![f32::NAN; n];
                let (xin, rin) = (input(&x, src.clone()), input(&r, dst.clone()));
                let bin = input(&bias, per_channel.clone());
                let out = output(&mut y, dst.clone());
                let relu = PwOp::ReluFwd {
                    lower: 0.0,
                    upper: f32::INFINITY,
                    slope: 0.0,
                };
                let ep = Epilogue {
                    store: None,
                    steps: vec![
                        Step::binary(PwOp::Add, Operand::Tensor(bin)),
                        Step::binary(PwOp::Add, Operand::Tensor(rin)),
                        Step::unary(relu).store_to(out),
                    ],
                };
                let exec = Exec::new(threads);
                assert!(
                    transposed_blocks(&Operand::Tensor(xin), &ep, &dims, &exec),
                    "the transposing path did not run"
                );
                for b in 0..dims[0] {
                    for (c, &bc) in bias.iter().enumerate() {
                        for h in 0..dims[2] {
                            for w in 0..dims[3] {
                                let idx = [b, c, h, w];
                                let want =
                                    ((x[src.offset(&idx)] + bc) + r[dst.offset(&idx)]).max(0.0);
                                let got = y[dst.offset(&idx)];
                                assert_eq!(
                                    got.to_bits(),
                                    want.to_bits(),
                                    "{idx:?} from {:?}: {got} vs {want}",
                                    src.strides
                                );
                            }
                        }
                    }
                }
            }
        }
    }
}
