//! The common epilogues of convolutions in channels-last layouts as vector code.
//!
//! A ResNet-style stage ends in a short chain over fp32 tensors: a bias add or a
//! batch-norm scale-and-shift (per-channel operands), optionally a residual add (a full
//! tensor), optionally a ReLU, then one store. Where a block's channels are contiguous
//! in every tensor (channels-last, or per-channel operands), each tile row is one
//! 16-float vector per step (AVX-512) or two 8-float halves (AVX), with the operand
//! pointers worked out once per block. [`Prepared::apply_block`] asks this path first
//! and falls back to the general one for anything else.
//!
//! The arithmetic is the general path's, operation for operation (a multiply then an
//! add for the scale-and-shift, `max(x, 0)` for the ReLU), so both give the same values (bit for bit, the sign of a zero ReLU output aside).

use super::block::{BlockAt, Linear, last_offset};
use super::{Epilogue, Operand, Prepared};
use crate::kernels::gemm::{FusedOut, FusedStep, NR};
use crate::kernels::pointwise::PwOp;
use crate::tensor::{DType, RawIn, RawOut};

/// The most tensor operands a vector chain takes.
const MAX_OPERANDS: usize = 6;

/// One step of a vector chain; operands are indices into the epilogue's inputs or
/// scalars.
#[derive(Debug, Clone, Copy, PartialEq)]
enum VStep {
    /// `x · a + b`.
    ScaleShift(usize, usize),
    /// `x + t`.
    Add(usize),
    /// `x + s`.
    AddScalar(f32),
    /// `x · t`.
    Mul(usize),
    /// `x · s`.
    MulScalar(f32),
    /// `max(x, 0)`.
    Relu,
}

/// Which vector instructions run the chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Isa {
    Avx512,
    Avx,
}

/// An epilogue the vector path runs: every step one of [`VStep`], fp32 tensors, one
/// store at the end.
#[derive(Debug, Clone)]
pub(crate) struct VectorChain {
    steps: Vec<VStep>,
    operands: usize,
    isa: Isa,
}

/// Where one operand's block rows are: row `i` at `ptr + i * rs`, a vector of
/// consecutive values or (`splat`) one value for the whole row.
#[derive(Debug, Clone, Copy)]
struct Rows {
    ptr: *const f32,
    rs: usize,
    splat: bool,
}

impl VectorChain {
    /// The vector form of `ep`, if it has one and this CPU runs it.
    pub(crate) fn of(ep: &Epilogue, ins: &[&RawIn], outs: &[&RawOut]) -> Option<Self> {
        let isa = isa()?;
        if ep.store.is_some() || ep.steps.is_empty() || outs.len() != 1 {
            return None;
        }
        if ins.len() > MAX_OPERANDS
            || ins.iter().any(|t| t.dtype() != DType::F32)
            || outs[0].dtype() != DType::F32
        {
            return None;
        }
        let last = ep.steps.len() - 1;
        let mut next = 0;
        let mut steps = Vec::with_capacity(ep.steps.len());
        for (i, step) in ep.steps.iter().enumerate() {
            if step.store.is_some() != (i == last) {
                return None;
            }
            // The step's operands besides the running value, in slot order; tensors
            // take the epilogue's input indices in that order.
            let mut others = Vec::with_capacity(2);
            for (slot, other) in step.others.iter().enumerate() {
                match other {
                    Some(Operand::Tensor(_)) => {
                        others.push(Err(next));
                        next += 1;
                    }
                    Some(Operand::Scalar(v)) => others.push(Ok(*v)),
                    None if slot < step.op.arity() && slot != step.chain_input => return None,
                    None => {}
                }
            }
            steps.push(match (step.op, step.chain_input, others.as_slice()) {
                (PwOp::ScaleShift, 0, [Err(a), Err(b)]) => VStep::ScaleShift(*a, *b),
                // Addition and multiplication commute (exactly, in IEEE arithmetic).
                (PwOp::Add, 0 | 1, [Err(t)]) => VStep::Add(*t),
                (PwOp::Add, 0 | 1, [Ok(s)]) => VStep::AddScalar(*s),
                (PwOp::Mul, 0 | 1, [Err(t)]) => VStep::Mul(*t),
                (PwOp::Mul, 0 | 1, [Ok(s)]) => VStep::MulScalar(*s),
                (
                    PwOp::ReluFwd {
                        lower: 0.0,
                        upper: f32::INFINITY,
                        slope: 0.0,
                    },
                    0,
                    [],
                ) => VStep::Relu,
                _ => return None,
            });
        }
        (next == ins.len()).then_some(Self {
            steps,
            operands: next,
            isa,
        })
    }

    /// Runs the chain over a block (row `i` of the producer's values at
    /// `vals[i * ld..]`, `cols <= NR`) and stores it, when every tensor's block has
    /// contiguous (or, for operands, broadcast) columns. `false`: nothing was done.
    ///
    /// # Panics
    /// When a block leaves a tensor.
    pub(crate) fn run(
        &self,
        ins: &[&RawIn],
        out: &RawOut,
        lin: (&[Linear], &Linear),
        at: &impl Fn(&Linear) -> BlockAt,
        block: (&[f32], usize, usize, usize),
    ) -> bool {
        let (vals, ld, rows, cols) = block;
        let out_at = at(lin.1);
        if out_at.cs != 1 || cols == 0 || cols > NR || rows == 0 {
            return false;
        }
        assert!(
            (rows - 1) * ld + cols <= vals.len(),
            "block past its values"
        );
        let mut operands = [Rows {
            ptr: std::ptr::null(),
            rs: 0,
            splat: true,
        }; MAX_OPERANDS];
        for (k, slot) in operands.iter_mut().enumerate().take(self.operands) {
            let a = at(&lin.0[k]);
            if a.cs > 1 {
                return false;
            }
            assert!(
                last_offset(a, rows, cols) < ins[k].shape().span(),
                "block out of bounds"
            );
            *slot = Rows {
                ptr: ins[k].ptr_as::<f32>().wrapping_add(a.base),
                rs: a.rs,
                splat: a.cs == 0,
            };
        }
        assert!(
            last_offset(out_at, rows, cols) < out.shape().span(),
            "block out of bounds"
        );
        let y = out.ptr_as::<f32>().wrapping_add(out_at.base);
        let operands = &operands[..self.operands];
        // SAFETY: the CPU has the instruction set (`isa`); every operand row `i < rows`
        // holds `cols` values (or one, for a splat) inside its tensor and the output's
        // rows lie inside it (checked above); tensors are only read, and the output's
        // elements of this block written, while the plan runs (tiles are disjoint).
        unsafe {
            match self.isa {
                Isa::Avx512 => {
                    x86::chain_avx512(&self.steps, operands, vals, ld, rows, cols, y, out_at.rs)
                }
                Isa::Avx => {
                    x86::chain_avx(&self.steps, operands, vals, ld, rows, cols, y, out_at.rs)
                }
            }
        }
        true
    }
}

impl Prepared<'_> {
    /// The vector steps the pair kernels run for this epilogue: none for a plain fp32
    /// store, the vector chain's where there is one; `None` otherwise.
    fn pair_steps(&self) -> Option<&[VStep]> {
        if self.ep.steps.is_empty() {
            self.plain_f32_out().map(|_| &[][..])
        } else {
            self.vector.as_ref().map(|v| &v.steps[..])
        }
    }

    /// The epilogue as a chain the GEMM's pair kernels apply in registers, for a GEMM
    /// of `rows × cols` whose row `i` is the flat output pixel `i`
    /// (`n · hw + p`, images one after another) and whose column `j` is channel
    /// `ch0 + j`: when it is a vector chain ending in one fp32 store (or only that
    /// store), and every tensor has contiguous channels and rows that step evenly
    /// (channels-last, and per-channel operands). `None`: the tiles go through
    /// `apply_block` as before.
    ///
    /// # Panics
    /// When the rows and columns leave a tensor (the index space is not the GEMM's).
    pub(crate) fn fused_rows(
        &self,
        hw: usize,
        rows: usize,
        ch0: usize,
        cols: usize,
    ) -> Option<FusedOut> {
        let (lin_in, lin_out) = self.linear.as_ref()?;
        let out = match (self.outs.as_slice(), lin_out.as_slice()) {
            ([o], [l]) if o.dtype() == DType::F32 => (*o, *l),
            _ => return None,
        };
        let vsteps = self.pair_steps()?;
        if rows == 0 || cols == 0 {
            return None;
        }
        // Elements between consecutive GEMM rows, if constant.
        let row_stride = |l: &Linear| -> Option<usize> {
            if rows == 1 {
                Some(0)
            } else if rows <= hw {
                Some(l.ps)
            } else if hw == 1 {
                Some(l.ns)
            } else {
                (l.ns == hw * l.ps).then_some(l.ps)
            }
        };
        let last = |rs: usize| (rows - 1) * rs + ch0 + cols - 1;
        let (y, ylin) = out;
        let ys = row_stride(&ylin)?;
        if ylin.cs != 1 || (rows > 1 && ys < cols) {
            return None;
        }
        assert!(last(ys) < y.shape().span(), "fused output out of bounds");
        // Operand `k`: its channel-`ch0` pointer and row stride (0: per channel).
        let operand = |k: usize| -> Option<(*const f32, usize)> {
            let (t, l) = (self.ins[k], &lin_in[k]);
            let rs = row_stride(l)?;
            if l.cs != 1 || t.dtype() != DType::F32 {
                return None;
            }
            assert!(last(rs) < t.shape().span(), "fused operand out of bounds");
            Some((t.ptr_as::<f32>().wrapping_add(ch0), rs))
        };
        let steps = fused_steps(vsteps, operand)?;
        // SAFETY: rows `i < rows` and columns `j < cols` lie inside the output and
        // every operand (asserted above), output rows do not overlap (`ys >= cols`);
        // the tensors outlive the stage that runs the GEMM, operands are only read
        // and the output only written by it (an operand overlaps it only as the
        // residual the plan lets it take the bytes of: same shape, same elements).
        Some(unsafe { FusedOut::new(steps, y.ptr_as::<f32>().wrapping_add(ch0), ys) })
    }

    /// The epilogue as a chain the GEMM's pair kernels apply in registers, for
    /// a matmul whose index space is `[batch..., rows, cols]`: GEMM row `i`, column `j`
    /// is element `[batch_idx..., i, j]`. As [`Prepared::fused_rows`]: a vector chain
    /// ending in one fp32 store (or only that store), every tensor with contiguous
    /// columns (operands: per column, or a full matrix with its own row stride).
    ///
    /// # Panics
    /// When the rows and columns leave a tensor (the index space is not the matmul's).
    pub(crate) fn fused_matrix(
        &self,
        batch_idx: &[usize],
        rows: usize,
        cols: usize,
    ) -> Option<FusedOut> {
        let y = match self.outs.as_slice() {
            [o] if o.dtype() == DType::F32 => *o,
            _ => return None,
        };
        let vsteps = self.pair_steps()?;
        if rows == 0 || cols == 0 {
            return None;
        }
        // A tensor's element `[batch_idx..., 0, 0]` and its row and column strides.
        let view = |s: &crate::tensor::Shape| -> Option<(usize, usize, usize)> {
            let r = s.rank();
            if r != batch_idx.len() + 2 {
                return None;
            }
            let base: usize = batch_idx.iter().zip(&s.strides).map(|(i, st)| i * st).sum();
            let rs = if rows == 1 { 0 } else { s.strides[r - 2] };
            let cs = if cols == 1 { 1 } else { s.strides[r - 1] };
            Some((base, rs, cs))
        };
        let last = |base: usize, rs: usize| base + (rows - 1) * rs + cols - 1;
        let (ybase, ys, ycs) = view(y.shape())?;
        if ycs != 1 || (rows > 1 && ys < cols) {
            return None;
        }
        assert!(
            last(ybase, ys) < y.shape().span(),
            "fused output out of bounds"
        );
        let operand = |k: usize| -> Option<(*const f32, usize)> {
            let t = self.ins[k];
            let (base, rs, cs) = view(t.shape())?;
            if cs != 1 || t.dtype() != DType::F32 {
                return None;
            }
            assert!(
                last(base, rs) < t.shape().span(),
                "fused operand out of bounds"
            );
            Some((t.ptr_as::<f32>().wrapping_add(base), rs))
        };
        let steps = fused_steps(vsteps, operand)?;
        // SAFETY: rows `i < rows` and columns `j < cols` lie inside the output and
        // every operand (asserted above), output rows do not overlap (`ys >= cols`);
        // the tensors outlive the stage that runs the GEMM, operands are only read
        // and the output only written by it.
        Some(unsafe { FusedOut::new(steps, y.ptr_as::<f32>().wrapping_add(ybase), ys) })
    }
}

/// The pair kernels' steps for a vector chain; `operand(k)` is input `k`'s pointer at
/// the GEMM's first element and its row stride (0: one value per column), `None` when
/// it has no such form.
fn fused_steps(
    vsteps: &[VStep],
    operand: impl Fn(usize) -> Option<(*const f32, usize)>,
) -> Option<Vec<FusedStep>> {
    let mut steps = Vec::with_capacity(vsteps.len());
    for s in vsteps {
        steps.push(match *s {
            VStep::ScaleShift(a, b) => match (operand(a)?, operand(b)?) {
                ((a, 0), (b, 0)) => FusedStep::ScaleShift(a, b),
                _ => return None,
            },
            VStep::Add(t) => match operand(t)? {
                (t, 0) => FusedStep::AddCols(t),
                (t, rs) => FusedStep::AddRows(t, rs),
            },
            VStep::Mul(t) => match operand(t)? {
                (t, 0) => FusedStep::MulCols(t),
                (t, rs) => FusedStep::MulRows(t, rs),
            },
            VStep::AddScalar(v) => FusedStep::AddScalar(v),
            VStep::MulScalar(v) => FusedStep::MulScalar(v),
            VStep::Relu => FusedStep::Relu,
        });
    }
    Some(steps)
}

/// The vector instruction set this CPU and `HIPDNN_CPU_ISA` allow, if any.
fn isa() -> Option<Isa> {
    #[cfg(target_arch = "x86_64")]
    {
        let cap = crate::kernels::gemm::isa_cap();
        if std::arch::is_x86_feature_detected!("avx512f") && cap == "avx512" {
            return Some(Isa::Avx512);
        }
        if std::arch::is_x86_feature_detected!("avx") && cap != "portable" {
            return Some(Isa::Avx);
        }
    }
    None
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use super::{Rows, VStep};

    /// Row tiles ahead that [`prefetch_ahead`] fetches.
    const AHEAD: usize = 4;

    /// Fetches the same columns `AHEAD` blocks further down (the row tile the GEMM
    /// writes `AHEAD` tiles later) of every full-tensor operand and of the output, so
    /// that they are cached when that block is computed: a residual written several
    /// stages ago, and an output not yet written, are far from the core, and their
    /// loads (and the stores' line fills) would stall the chain. Prefetches never
    /// fault, so rows past a tensor's end are harmless.
    #[inline(always)]
    fn prefetch_ahead(ops: &[Rows], rows: usize, y: *mut f32, ys: usize) {
        for i in AHEAD * rows..(AHEAD + 1) * rows {
            for o in ops.iter().filter(|o| !o.splat) {
                // SAFETY: a prefetch reads nothing and cannot fault.
                unsafe { _mm_prefetch::<_MM_HINT_T0>(o.ptr.wrapping_add(i * o.rs).cast()) };
            }
            // SAFETY: as above.
            unsafe { _mm_prefetch::<_MM_HINT_ET0>(y.wrapping_add(i * ys).cast_const().cast()) };
        }
    }

    /// The chain over one block with 16-float vectors, masked to `cols`.
    ///
    /// # Safety
    /// AVX-512F is available; `vals` holds `rows` rows of `cols` values `ld` apart; each
    /// operand's rows `i < rows` hold `cols` values (one for a splat) at `ptr + i * rs`;
    /// `y + i * ys` is writable for `cols` values for every row.
    #[target_feature(enable = "avx512f")]
    #[allow(clippy::too_many_arguments)]
    pub(super) unsafe fn chain_avx512(
        steps: &[VStep],
        ops: &[Rows],
        vals: &[f32],
        ld: usize,
        rows: usize,
        cols: usize,
        y: *mut f32,
        ys: usize,
    ) {
        let mask = crate::kernels::gemm::lane_mask(cols);
        // Row `i` of an operand (a macro, not a closure: the intrinsics stay inside
        // this function's target features).
        macro_rules! load {
            ($o:expr, $i:expr) => {{
                let o: &Rows = $o;
                let p = o.ptr.wrapping_add($i * o.rs);
                // SAFETY: per the function's contract (masked lanes are not read).
                unsafe {
                    if o.splat {
                        _mm512_set1_ps(*p)
                    } else {
                        _mm512_maskz_loadu_ps(mask, p)
                    }
                }
            }};
        }
        prefetch_ahead(ops, rows, y, ys);
        // Rows in groups of up to `G` held in registers; each step is matched once
        // per group, and an operand whose rows all start at one address (a
        // per-channel vector in a channels-last block) is loaded once per group. A
        // splat operand may still differ from row to row (per-channel values in a
        // channels-first block, one per row).
        const G: usize = 8;
        let mut r0 = 0;
        while r0 < rows {
            let n = G.min(rows - r0);
            let mut v = [_mm512_setzero_ps(); G];
            for (i, vi) in v.iter_mut().enumerate().take(n) {
                // SAFETY: row `r0 + i` of `vals` holds `cols` values (contract).
                *vi = unsafe { _mm512_maskz_loadu_ps(mask, vals.as_ptr().add((r0 + i) * ld)) };
            }
            for s in steps {
                macro_rules! each {
                    ($o:expr, |$x:ident, $t:ident| $e:expr) => {{
                        let o: &Rows = $o;
                        if o.rs == 0 {
                            let $t = load!(o, r0);
                            for $x in v.iter_mut().take(n) {
                                *$x = $e;
                            }
                        } else {
                            for (i, $x) in v.iter_mut().enumerate().take(n) {
                                let $t = load!(o, r0 + i);
                                *$x = $e;
                            }
                        }
                    }};
                }
                match *s {
                    VStep::ScaleShift(a, b) => {
                        each!(&ops[a], |x, t| _mm512_mul_ps(*x, t));
                        each!(&ops[b], |x, t| _mm512_add_ps(*x, t));
                    }
                    VStep::Add(t) => each!(&ops[t], |x, u| _mm512_add_ps(*x, u)),
                    VStep::AddScalar(c) => {
                        let c = _mm512_set1_ps(c);
                        for x in v.iter_mut().take(n) {
                            *x = _mm512_add_ps(*x, c);
                        }
                    }
                    VStep::Mul(t) => each!(&ops[t], |x, u| _mm512_mul_ps(*x, u)),
                    VStep::MulScalar(c) => {
                        let c = _mm512_set1_ps(c);
                        for x in v.iter_mut().take(n) {
                            *x = _mm512_mul_ps(*x, c);
                        }
                    }
                    VStep::Relu => {
                        for x in v.iter_mut().take(n) {
                            *x = _mm512_max_ps(*x, _mm512_setzero_ps());
                        }
                    }
                }
            }
            for (i, vi) in v.iter().enumerate().take(n) {
                // SAFETY: `cols` writable values at row `r0 + i` (contract).
                unsafe { _mm512_mask_storeu_ps(y.add((r0 + i) * ys), mask, *vi) };
            }
            r0 += n;
        }
    }

    /// The chain over one block with two 8-float halves, masked to `cols`.
    ///
    /// # Safety
    /// AVX is available; otherwise as [`chain_avx512`].
    #[target_feature(enable = "avx")]
    #[allow(clippy::too_many_arguments)]
    pub(super) unsafe fn chain_avx(
        steps: &[VStep],
        ops: &[Rows],
        vals: &[f32],
        ld: usize,
        rows: usize,
        cols: usize,
        y: *mut f32,
        ys: usize,
    ) {
        let lanes = |base: usize| -> [i32; 8] {
            std::array::from_fn(|j| if base + j < cols { -1 } else { 0 })
        };
        let (lo, hi) = (lanes(0), lanes(8));
        // SAFETY: eight `i32`s each.
        let masks = unsafe {
            [
                _mm256_loadu_si256(lo.as_ptr().cast()),
                _mm256_loadu_si256(hi.as_ptr().cast()),
            ]
        };
        // A half's 8 values: plain loads and stores where all 8 are in the block,
        // masked ones only for a partial last half. A masked store (`vmaskmovps`)
        // is microcoded on AMD's Zen 3: 5.4-6.7 ns a store in a loop of them on a
        // Zen 3 VM, against 0.7-1.5 ns for plain stores.
        macro_rules! ld8 {
            ($p:expr, $full:expr, $m:expr) => {{
                let p: *const f32 = $p;
                // SAFETY: per the function's contract (masked lanes are not read).
                unsafe {
                    if $full {
                        _mm256_loadu_ps(p)
                    } else {
                        _mm256_maskload_ps(p, $m)
                    }
                }
            }};
        }
        macro_rules! load {
            ($o:expr, $i:expr, $h:expr, $full:expr, $m:expr) => {{
                let o: &Rows = $o;
                let p = o.ptr.wrapping_add($i * o.rs);
                if o.splat {
                    // SAFETY: a splat operand's row holds one value (contract).
                    unsafe { _mm256_set1_ps(*p) }
                } else {
                    ld8!(p.wrapping_add($h * 8), $full, $m)
                }
            }};
        }
        prefetch_ahead(ops, rows, y, ys);
        for i in 0..rows {
            for (h, &m) in masks.iter().enumerate() {
                if h * 8 >= cols {
                    break;
                }
                let full = (h + 1) * 8 <= cols;
                // Row `i` of `vals` holds `cols` values (contract).
                let mut v = ld8!(vals.as_ptr().wrapping_add(i * ld + h * 8), full, m);
                for s in steps {
                    v = match *s {
                        VStep::ScaleShift(a, b) => _mm256_add_ps(
                            _mm256_mul_ps(v, load!(&ops[a], i, h, full, m)),
                            load!(&ops[b], i, h, full, m),
                        ),
                        VStep::Add(t) => _mm256_add_ps(v, load!(&ops[t], i, h, full, m)),
                        VStep::AddScalar(c) => _mm256_add_ps(v, _mm256_set1_ps(c)),
                        VStep::Mul(t) => _mm256_mul_ps(v, load!(&ops[t], i, h, full, m)),
                        VStep::MulScalar(c) => _mm256_mul_ps(v, _mm256_set1_ps(c)),
                        VStep::Relu => _mm256_max_ps(v, _mm256_setzero_ps()),
                    };
                }
                let p = y.wrapping_add(i * ys + h * 8);
                // SAFETY: `cols` writable values at row `i` (contract).
                unsafe {
                    if full {
                        _mm256_storeu_ps(p, v)
                    } else {
                        _mm256_maskstore_ps(p, m, v)
                    }
                }
            }
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::super::{Epilogue, Operand, Prepared, Step};
    use super::*;
    use crate::tensor::Shape;

    /// A deterministic pseudo-random value in about [-2, 2), never zero.
    pub(in crate::kernels::elementwise) fn value(i: usize, salt: usize) -> f32 {
        let h = (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (salt as u64) << 32;
        let h = h.wrapping_mul(0xBF58_476D_1CE4_E5B9) >> 40;
        (h as f32 / (1u64 << 24) as f32) * 4.0 - 2.0 + 1e-3
    }

    pub(in crate::kernels::elementwise) fn input(data: &[f32], shape: Shape) -> RawIn {
        assert!(shape.span() <= data.len());
        // SAFETY: `data` outlives the test's use of the view and holds its span.
        unsafe { RawIn::from_parts(data.as_ptr().cast(), DType::F32, shape) }
    }

    pub(in crate::kernels::elementwise) fn output(data: &mut [f32], shape: Shape) -> RawOut {
        assert!(shape.span() <= data.len());
        // SAFETY: as in `input`, for writing.
        unsafe { RawOut::from_parts(data.as_mut_ptr().cast(), DType::F32, shape) }
    }

    /// Runs `ep` over every block of a 1 x 20 x 3 x 4 index space and returns whether
    /// the vector path is used, with it on (`isa`) or off. Channels-last blocks are
    /// rows of up to 5 pixels by `width` channels from channel 4 (`width <= 16`);
    /// channels-first blocks (as the implicit GEMM writes) rows of up to 5 channels
    /// from channel 4 by the first `width` pixels (`width <= 12`), where a per-channel
    /// operand is one value per row.
    fn run(
        ep: &Epilogue,
        isa: Option<Isa>,
        y: &mut [f32],
        channels_first: bool,
        width: usize,
    ) -> bool {
        let mut prepared = Prepared::new(ep);
        let used = prepared.vector.is_some();
        match isa {
            Some(isa) => {
                if let Some(v) = prepared.vector.as_mut() {
                    v.isa = isa;
                }
            }
            None => prepared.vector = None,
        }
        y.fill(f32::NAN);
        let (pixels, rows, c0) = (12, 5, 4);
        let (extent, cols) = if channels_first {
            (13, width)
        } else {
            (pixels, width)
        };
        let mut r0 = 0;
        while r0 < extent {
            let rows = rows.min(extent - r0);
            let mut vals: Vec<f32> = (0..rows * NR).map(|i| value(i + r0 * NR, 7)).collect();
            prepared.apply_block(&mut vals, NR, rows, cols, |l| {
                if channels_first {
                    BlockAt {
                        base: (c0 + r0) * l.cs,
                        rs: l.cs,
                        cs: l.ps,
                    }
                } else {
                    BlockAt {
                        base: r0 * l.ps + c0 * l.cs,
                        rs: l.ps,
                        cs: l.cs,
                    }
                }
            });
            r0 += rows;
        }
        used
    }

    #[test]
    fn vector_chains_match_the_general_path_bit_for_bit() {
        let dims = [1, 20, 3, 4];
        let per_channel = |salt| -> Vec<f32> { (0..20).map(|i| value(i, salt)).collect() };
        let (scale, shift, bias) = (per_channel(1), per_channel(2), per_channel(3));
        let residual: Vec<f32> = (0..240).map(|i| value(i, 4)).collect();
        let channel = Shape::new(&dims, &[0, 1, 0, 0]);
        let nhwc = Shape::channels_last(&dims);
        let relu = PwOp::ReluFwd {
            lower: 0.0,
            upper: f32::INFINITY,
            slope: 0.0,
        };
        let t = |d: &[f32], s: &Shape| Operand::Tensor(input(d, s.clone()));
        let scale_shift = Step {
            op: PwOp::ScaleShift,
            chain_input: 0,
            others: [None, Some(t(&scale, &channel)), Some(t(&shift, &channel))],
            store: None,
        };
        let mut isas = vec![];
        if isa() == Some(Isa::Avx512) {
            isas.push(Isa::Avx512);
        }
        if isa().is_some() {
            isas.push(Isa::Avx);
        }
        let mut y_ref = vec![0f32; 240];
        let mut y = vec![0f32; 240];
        let chains: Vec<Vec<Step>> = vec![
            // Batch norm (folded) and ReLU.
            vec![scale_shift.clone(), Step::unary(relu)],
            // Bias, residual (as the second input of the add), ReLU.
            vec![
                Step::binary(PwOp::Add, t(&bias, &channel)),
                Step {
                    op: PwOp::Add,
                    chain_input: 1,
                    others: [Some(t(&residual, &nhwc)), None, None],
                    store: None,
                },
                Step::unary(relu),
            ],
            // Scalars and a per-channel multiply.
            vec![
                Step::binary(PwOp::Mul, Operand::Scalar(0.5)),
                Step::binary(PwOp::Add, Operand::Scalar(-0.25)),
                Step::binary(PwOp::Mul, t(&scale, &channel)),
            ],
        ];
        // Widths of one partial half, one whole half, a whole and a partial one, and two
        // whole halves (channels-last only: 12 pixels a channel).
        let cases = [3, 8, 13, 16]
            .map(|w| (false, w))
            .into_iter()
            .chain([3, 8, 12].map(|w| (true, w)));
        for steps in chains {
            for (channels_first, width) in cases.clone() {
                let layout = if channels_first {
                    Shape::packed(&dims)
                } else {
                    nhwc.clone()
                };
                // The residual in the layout of the output.
                let steps: Vec<Step> = steps
                    .iter()
                    .map(|s| {
                        let mut s = s.clone();
                        for o in s.others.iter_mut().flatten() {
                            if let Operand::Tensor(t) = o
                                && t.shape().strides == nhwc.strides
                            {
                                *o = Operand::Tensor(input(&residual, layout.clone()));
                            }
                        }
                        s
                    })
                    .collect();
                let mut steps = steps;
                let last = steps
                    .pop()
                    .unwrap()
                    .store_to(output(&mut y, layout.clone()));
                steps.push(last);
                let ep = Epilogue { store: None, steps };
                let mut ep_ref = ep.clone();
                ep_ref.steps.last_mut().unwrap().store = Some(output(&mut y_ref, layout.clone()));
                run(&ep_ref, None, &mut y_ref, channels_first, width);
                for &isa in &isas {
                    assert!(
                        run(&ep, Some(isa), &mut y, channels_first, width),
                        "{isa:?} not used"
                    );
                    for (i, (a, b)) in y.iter().zip(&y_ref).enumerate() {
                        // Elements outside the blocks: NaN in both.
                        assert!(
                            a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
                            "{isa:?} channels-first {channels_first} width {width} at {i}: {a} vs {b}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn what_the_vector_path_does_not_run_is_left_to_the_general_one() {
        let dims = [1, 20, 3, 4];
        let bias: Vec<f32> = (0..20).map(|i| value(i, 3)).collect();
        let channel = Shape::new(&dims, &[0, 1, 0, 0]);
        let mut y = vec![0f32; 240];
        let with = |op: PwOp, out: Shape, y: &mut [f32]| Epilogue {
            store: None,
            steps: vec![
                Step::binary(op, Operand::Tensor(input(&bias, channel.clone())))
                    .store_to(output(y, out)),
            ],
        };
        // A channels-first output: its block columns are not contiguous.
        let ep = with(PwOp::Add, Shape::packed(&dims), &mut y);
        if let Some(v) = Prepared::new(&ep).vector {
            let lin = super::super::block::linear_views(&ep.tensors().0, &ep.tensors().1).unwrap();
            let vals = vec![1.0; 5 * NR];
            let at = |l: &Linear| BlockAt {
                base: 0,
                rs: l.ps,
                cs: l.cs,
            };
            assert!(!v.run(
                &ep.tensors().0,
                ep.tensors().1[0],
                (&lin.0, &lin.1[0]),
                &at,
                (&vals, NR, 5, 13)
            ));
        }
        // A function it has no vector form for.
        let ep = with(PwOp::Sub, Shape::channels_last(&dims), &mut y);
        assert!(Prepared::new(&ep).vector.is_none());
        // A step that stores before the last one.
        let mut y2 = vec![0f32; 240];
        let mut ep = with(PwOp::Add, Shape::channels_last(&dims), &mut y);
        ep.steps.insert(
            0,
            Step::unary(PwOp::Identity).store_to(output(&mut y2, Shape::channels_last(&dims))),
        );
        assert!(Prepared::new(&ep).vector.is_none());
    }

    /// A channels-last chain over two images becomes the in-register form (wherever
    /// the chain runs as vector code): per-channel operands by column from channel
    /// `ch0`, the residual by rows; a channels-first output has none.
    #[test]
    fn fused_rows_of_a_channels_last_chain() {
        let dims = [2, 20, 3, 4];
        let scale: Vec<f32> = (0..20).map(|i| value(i, 1)).collect();
        let shift: Vec<f32> = (0..20).map(|i| value(i, 2)).collect();
        let residual: Vec<f32> = (0..480).map(|i| value(i, 4)).collect();
        let channel = Shape::new(&dims, &[0, 1, 0, 0]);
        let nhwc = Shape::channels_last(&dims);
        let relu = PwOp::ReluFwd {
            lower: 0.0,
            upper: f32::INFINITY,
            slope: 0.0,
        };
        let mut y = vec![0f32; 480];
        let y_ptr = y.as_mut_ptr();
        for out in [nhwc.clone(), Shape::packed(&dims)] {
            let steps = vec![
                Step {
                    op: PwOp::ScaleShift,
                    chain_input: 0,
                    others: [
                        None,
                        Some(Operand::Tensor(input(&scale, channel.clone()))),
                        Some(Operand::Tensor(input(&shift, channel.clone()))),
                    ],
                    store: None,
                },
                Step::binary(PwOp::Add, Operand::Tensor(input(&residual, nhwc.clone()))),
                Step::unary(relu).store_to(output(&mut y, out.clone())),
            ];
            let ep = Epilogue { store: None, steps };
            let fused = Prepared::new(&ep).fused_rows(12, 24, 4, 13);
            if out != nhwc || isa().is_none() {
                assert!(fused.is_none(), "{out:?}");
                continue;
            }
            let fused = fused.expect("a channels-last chain");
            assert_eq!(
                fused.steps(),
                [
                    FusedStep::ScaleShift(scale[4..].as_ptr(), shift[4..].as_ptr()),
                    FusedStep::AddRows(residual[4..].as_ptr(), 20),
                    FusedStep::Relu,
                ]
            );
            assert_eq!(fused.target(), (y_ptr.wrapping_add(4), 20));
        }
    }
}
