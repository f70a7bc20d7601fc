//! Epilogues (chains of pointwise steps applied to a producer's values) and the
//! strided, broadcasting elementwise engine that runs them over a whole tensor.
//!
//! A chain starts from a value per element of a *logical index space* (the producer's
//! output dims). Each [`Step`] applies a [`PwOp`] whose inputs are the running value and
//! other operands (tensors broadcast into the index space, or scalars), and may store its
//! result to a tensor (the stage output, or an intermediate the graph wants to see).
//! The GEMM kernels run epilogues on their output tiles; everything else runs them
//! through [`elementwise`].

use super::exec::{Exec, split};
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

/// Runs the steps on `vals`, fetching operand `k` (in [`Epilogue::tensors`] input order)
/// with `fetch(k, buf)` and storing output `k` (in output order) with `store(k, vals)`.
pub(crate) fn run_chain(
    ep: &Epilogue,
    vals: &mut [f32],
    mut fetch: impl FnMut(usize, &mut [f32]),
    mut store: impl FnMut(usize, &[f32]),
) {
    let n = vals.len();
    debug_assert!(n <= CHUNK);
    let mut out_k = 0;
    if ep.store.is_some() {
        store(out_k, vals);
        out_k += 1;
    }
    let mut in_k = 0;
    let mut bufs = [[0f32; CHUNK]; 3];
    let mut res = [0f32; CHUNK];
    for step in &ep.steps {
        let arity = step.op.arity();
        for (slot, other) in step.others.iter().enumerate().take(arity) {
            if slot == step.chain_input {
                continue;
            }
            match other {
                Some(Operand::Tensor(_)) => {
                    fetch(in_k, &mut bufs[slot][..n]);
                    in_k += 1;
                }
                Some(Operand::Scalar(v)) => bufs[slot][..n].fill(*v),
                None => bufs[slot][..n].fill(0.0),
            }
        }
        // Tensor operands past the arity are still counted so indices stay aligned.
        for other in step.others.iter().skip(arity).flatten() {
            if matches!(other, Operand::Tensor(_)) {
                in_k += 1;
            }
        }
        bufs[step.chain_input][..n].copy_from_slice(vals);
        let [a, b, c] = &bufs;
        step.op.eval(&mut res[..n], &a[..n], &b[..n], &c[..n]);
        vals.copy_from_slice(&res[..n]);
        if step.store.is_some() {
            store(out_k, vals);
            out_k += 1;
        }
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
                    vals,
                    |k, buf| {
                        let t = first_in + k;
                        let (b, s) = (base[t], inner_stride(t));
                        load_run(ins[k], b + j0 * s, s, buf);
                    },
                    |k, v| {
                        let (b, s) = (base[k], inner_stride(k));
                        store_run(outs[k], b + j0 * s, s, v);
                    },
                );
                j0 += n;
            }
        }
    });
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
}

impl<'a> Prepared<'a> {
    pub(crate) fn new(ep: &'a Epilogue) -> Self {
        let (ins, outs) = ep.tensors();
        Self { ep, ins, outs }
    }

    /// The single fp32 output with no steps, if that is all the epilogue is.
    pub(crate) fn plain_f32_out(&self) -> Option<&'a RawOut> {
        match (self.ep.steps.is_empty(), self.outs.as_slice()) {
            (true, [o]) if o.dtype() == crate::tensor::DType::F32 => Some(o),
            _ => None,
        }
    }

    /// Applies the epilogue to `vals`, the producer's values at `vals.len()` consecutive
    /// positions along `axis` of the logical index space starting at `idx` (at most
    /// [`CHUNK`]).
    pub(crate) fn apply_along(&self, idx: &[usize], axis: usize, vals: &mut [f32]) {
        debug_assert!(vals.len() <= CHUNK);
        let at = |s: &Shape| -> (usize, usize) { (s.offset(idx), s.strides[axis]) };
        run_chain(
            self.ep,
            vals,
            |k, buf| {
                let (b, s) = at(self.ins[k].shape());
                load_run(self.ins[k], b, s, buf);
            },
            |k, v| {
                let (b, s) = at(self.outs[k].shape());
                store_run(self.outs[k], b, s, v);
            },
        );
    }
}
