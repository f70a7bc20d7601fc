//! Convolution backward: data gradient (dgrad) and filter gradient (wgrad).
//!
//! The GEMM forms use the `gemm` crate one image at a time:
//! dgrad `dcol[Cg·taps × P] = Wᵀ · dy`, then col2im adds `dcol` into an `f32` `dx`
//! accumulator; wgrad `dW[Kg × Cg·taps] += dy · im2colᵀ`. The direct forms are plain
//! loops. Both finish by running the epilogue over the `f32` accumulator, so pointwise
//! ops that follow still fuse. Reduction orders are fixed: results are deterministic.

use super::conv::ConvGeometry;
use super::elementwise::{Epilogue, Operand, elementwise};
use super::exec::{Exec, split};
use crate::tensor::{RawIn, Shape};

/// Which backward form to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BwdImpl {
    /// im2col / col2im with the `gemm` crate.
    Gemm,
    /// Direct loops.
    Direct,
}

fn taps(g: &ConvGeometry) -> Vec<[isize; 3]> {
    let mut v = Vec::with_capacity(g.taps());
    for a in 0..g.filt[0] {
        for b in 0..g.filt[1] {
            for c in 0..g.filt[2] {
                let t = [a, b, c];
                v.push(std::array::from_fn(|d| {
                    let t = if g.flip { g.filt[d] - 1 - t[d] } else { t[d] };
                    (t * g.dil[d]) as isize
                }));
            }
        }
    }
    v
}

fn opix(g: &ConvGeometry) -> usize {
    g.out.iter().product()
}

fn ipix(g: &ConvGeometry) -> usize {
    g.inp.iter().product()
}

/// Input coordinate of output pixel `p` (row-major over `out`) under tap `t`, if inside.
#[inline]
fn in_pos(g: &ConvGeometry, p: usize, t: &[isize; 3]) -> Option<usize> {
    let o = [
        p / (g.out[1] * g.out[2]),
        (p / g.out[2]) % g.out[1],
        p % g.out[2],
    ];
    let mut lin = 0usize;
    for d in 0..3 {
        let i = (o[d] * g.stride[d]) as isize - g.pad[d] as isize + t[d];
        if i < 0 || i >= g.inp[d] as isize {
            return None;
        }
        lin = lin * g.inp[d] + i as usize;
    }
    Some(lin)
}

/// Offset of spatial position `lin` (row-major over `dims`) with 5-entry strides.
#[inline]
fn sp_off(dims: &[usize; 3], s: &[usize; 5], lin: usize) -> usize {
    let a = lin / (dims[1] * dims[2]);
    let b = (lin / dims[2]) % dims[1];
    let c = lin % dims[2];
    a * s[2] + b * s[3] + c * s[4]
}

/// Workspace (`f32` elements) of dgrad.
pub fn dgrad_workspace_len(g: &ConvGeometry, imp: BwdImpl) -> usize {
    let acc = g.n * g.c * ipix(g);
    match imp {
        BwdImpl::Direct => acc,
        BwdImpl::Gemm => {
            let kred = g.cg() * g.taps();
            acc + g.k * kred + g.k * opix(g) + kred * opix(g)
        }
    }
}

/// Workspace (`f32` elements) of wgrad.
pub fn wgrad_workspace_len(g: &ConvGeometry, imp: BwdImpl) -> usize {
    let kred = g.cg() * g.taps();
    let acc = g.k * kred;
    match imp {
        BwdImpl::Direct => acc,
        BwdImpl::Gemm => acc + g.k * opix(g) + kred * opix(g),
    }
}

/// View of a dense `f32` buffer `[N|K][C][spatial...]` with the logical dims `dims`.
fn dense_view(buf: &[f32], dims: &[usize]) -> RawIn {
    let shape = Shape::packed(dims);
    assert!(buf.len() >= shape.span());
    // SAFETY: `buf` holds `span` floats and is not written while the view is used
    // (the epilogue only reads it).
    unsafe { RawIn::from_parts(buf.as_ptr().cast(), crate::tensor::DType::F32, shape) }
}

/// Copies image `n`'s `[K][P]` gradient to dense `f32`.
fn gather_dy(g: &ConvGeometry, dy: &RawIn, n: usize, dst: &mut [f32]) {
    let s = g.strides5(dy.shape());
    let p = opix(g);
    for k in 0..g.k {
        for q in 0..p {
            // SAFETY: inside dy's shape.
            dst[k * p + q] = unsafe { dy.load(n * s[0] + k * s[1] + sp_off(&g.out, &s, q)) };
        }
    }
}

/// Dense `f32` weights `[K][Cg·taps]` (channel, tap order).
fn gather_w(g: &ConvGeometry, w: &RawIn, dst: &mut [f32]) {
    let s = g.strides5(w.shape());
    let mut q = 0;
    for k in 0..g.k {
        for ci in 0..g.cg() {
            for t in 0..g.taps() {
                // SAFETY: inside w's shape.
                dst[q] = unsafe { w.load(k * s[0] + ci * s[1] + sp_off(&g.filt, &s, t)) };
                q += 1;
            }
        }
    }
}

/// Data gradient `dx` from `dy` and `w` into `ep` (index space: dx's dims).
#[expect(
    clippy::too_many_arguments,
    reason = "tensors, epilogue, algorithm, pool and scratch"
)]
///
/// # Panics
/// When `ws` is shorter than [`dgrad_workspace_len`].
pub fn dgrad(
    g: &ConvGeometry,
    dy: &RawIn,
    w: &RawIn,
    dx_dims: &[usize],
    ep: &Epilogue,
    imp: BwdImpl,
    exec: &Exec,
    ws: &mut [f32],
) {
    assert!(
        ws.len() >= dgrad_workspace_len(g, imp),
        "dgrad workspace too small"
    );
    let (cg, kg, tp) = (g.cg(), g.kg(), g.taps());
    let (ip, op) = (ipix(g), opix(g));
    let (acc, rest) = ws.split_at_mut(g.n * g.c * ip);
    acc.fill(0.0);
    let tl = taps(g);
    match imp {
        BwdImpl::Direct => {
            let dys = g.strides5(dy.shape());
            let wsd = g.strides5(w.shape());
            let planes: Vec<std::sync::Mutex<&mut [f32]>> =
                acc.chunks_mut(ip).map(std::sync::Mutex::new).collect();
            let jobs = g.n * g.c;
            let parts = (exec.threads() * 4).min(jobs).max(1);
            exec.for_each(parts, |part| {
                for job in split(jobs, parts, part) {
                    let (n, c) = (job / g.c, job % g.c);
                    let (grp, ci) = (c / cg, c % cg);
                    let mut plane = planes[job].lock().unwrap_or_else(|e| e.into_inner());
                    for kk in 0..kg {
                        let k = grp * kg + kk;
                        for (t, tap) in tl.iter().enumerate() {
                            // SAFETY: inside w's shape.
                            let wv = unsafe {
                                w.load(k * wsd[0] + ci * wsd[1] + sp_off(&g.filt, &wsd, t))
                            };
                            for p in 0..op {
                                if let Some(i) = in_pos(g, p, tap) {
                                    // SAFETY: inside dy's shape.
                                    let d = unsafe {
                                        dy.load(n * dys[0] + k * dys[1] + sp_off(&g.out, &dys, p))
                                    };
                                    plane[i] += wv * d;
                                }
                            }
                        }
                    }
                }
            });
        }
        BwdImpl::Gemm => {
            let kred = cg * tp;
            let (wd, rest) = rest.split_at_mut(g.k * kred);
            let (dyd, rest) = rest.split_at_mut(g.k * op);
            let dcol = &mut rest[..kred * op];
            gather_w(g, w, wd);
            for n in 0..g.n {
                gather_dy(g, dy, n, dyd);
                for grp in 0..g.g {
                    // dcol[r][p] = sum_kk W[grp*kg+kk][r] * dy[grp*kg+kk][p]
                    let lhs = wd[grp * kg * kred..].as_ptr() as usize;
                    let rhs = dyd[grp * kg * op..].as_ptr() as usize;
                    let dst = dcol.as_mut_ptr() as usize;
                    // SAFETY: lhs is kred x kg (row stride 1, col stride kred) inside wd;
                    // rhs is kg x op (row stride op, col stride 1) inside dyd; dst is
                    // kred x op inside dcol; no aliasing.
                    unsafe {
                        exec.install(|| {
                            gemm::gemm(
                                kred,
                                op,
                                kg,
                                dst as *mut f32,
                                1,
                                op as isize,
                                false,
                                lhs as *const f32,
                                kred as isize,
                                1,
                                rhs as *const f32,
                                1,
                                op as isize,
                                0.0,
                                1.0,
                                false,
                                false,
                                false,
                                gemm::Parallelism::Rayon(exec.threads()),
                            );
                        });
                    }
                    // col2im, one channel per task (disjoint planes).
                    let base = (n * g.c + grp * cg) * ip;
                    let planes: Vec<std::sync::Mutex<&mut [f32]>> = acc[base..base + cg * ip]
                        .chunks_mut(ip)
                        .map(std::sync::Mutex::new)
                        .collect();
                    let dcol = &*dcol;
                    let parts = exec.threads().min(cg).max(1);
                    exec.for_each(parts, |part| {
                        for ci in split(cg, parts, part) {
                            let mut plane = planes[ci].lock().unwrap_or_else(|e| e.into_inner());
                            for (t, tap) in tl.iter().enumerate() {
                                let row = &dcol[(ci * tp + t) * op..(ci * tp + t + 1) * op];
                                for (p, &v) in row.iter().enumerate() {
                                    if let Some(i) = in_pos(g, p, tap) {
                                        plane[i] += v;
                                    }
                                }
                            }
                        }
                    });
                }
            }
        }
    }
    let mut dims = vec![g.n, g.c];
    dims.extend_from_slice(&dx_dims[2..]);
    elementwise(&Operand::Tensor(dense_view(acc, &dims)), ep, dx_dims, exec);
}

/// Filter gradient `dw` from `x` and `dy` into `ep` (index space: dw's dims).
#[expect(
    clippy::too_many_arguments,
    reason = "tensors, epilogue, algorithm, pool and scratch"
)]
///
/// # Panics
/// When `ws` is shorter than [`wgrad_workspace_len`].
pub fn wgrad(
    g: &ConvGeometry,
    x: &RawIn,
    dy: &RawIn,
    dw_dims: &[usize],
    ep: &Epilogue,
    imp: BwdImpl,
    exec: &Exec,
    ws: &mut [f32],
) {
    assert!(
        ws.len() >= wgrad_workspace_len(g, imp),
        "wgrad workspace too small"
    );
    let (cg, kg, tp) = (g.cg(), g.kg(), g.taps());
    let op = opix(g);
    let kred = cg * tp;
    let (acc, rest) = ws.split_at_mut(g.k * kred);
    acc.fill(0.0);
    let tl = taps(g);
    let xs = g.strides5(x.shape());
    match imp {
        BwdImpl::Direct => {
            let dys = g.strides5(dy.shape());
            let rows: Vec<std::sync::Mutex<&mut [f32]>> =
                acc.chunks_mut(kred).map(std::sync::Mutex::new).collect();
            let parts = exec.threads().min(g.k).max(1);
            exec.for_each(parts, |part| {
                for k in split(g.k, parts, part) {
                    let grp = k / kg;
                    let mut row = rows[k].lock().unwrap_or_else(|e| e.into_inner());
                    for ci in 0..cg {
                        for (t, tap) in tl.iter().enumerate() {
                            let mut s = 0f32;
                            for n in 0..g.n {
                                for p in 0..op {
                                    if let Some(i) = in_pos(g, p, tap) {
                                        // SAFETY: both offsets are inside their shapes.
                                        s += unsafe {
                                            dy.load(
                                                n * dys[0] + k * dys[1] + sp_off(&g.out, &dys, p),
                                            ) * x.load(
                                                n * xs[0]
                                                    + (grp * cg + ci) * xs[1]
                                                    + sp_off(&g.inp, &xs, i),
                                            )
                                        };
                                    }
                                }
                            }
                            row[ci * tp + t] = s;
                        }
                    }
                }
            });
        }
        BwdImpl::Gemm => {
            let (dyd, rest) = rest.split_at_mut(g.k * op);
            let col = &mut rest[..kred * op];
            for n in 0..g.n {
                gather_dy(g, dy, n, dyd);
                for grp in 0..g.g {
                    // im2col, one channel per task.
                    let rows: Vec<std::sync::Mutex<&mut [f32]>> =
                        col.chunks_mut(tp * op).map(std::sync::Mutex::new).collect();
                    let parts = exec.threads().min(cg).max(1);
                    exec.for_each(parts, |part| {
                        for ci in split(cg, parts, part) {
                            let mut r = rows[ci].lock().unwrap_or_else(|e| e.into_inner());
                            let xb = n * xs[0] + (grp * cg + ci) * xs[1];
                            for (t, tap) in tl.iter().enumerate() {
                                for p in 0..op {
                                    r[t * op + p] = match in_pos(g, p, tap) {
                                        // SAFETY: inside x's shape.
                                        Some(i) => unsafe { x.load(xb + sp_off(&g.inp, &xs, i)) },
                                        None => 0.0,
                                    };
                                }
                            }
                        }
                    });
                    drop(rows);
                    let lhs = dyd[grp * kg * op..].as_ptr() as usize;
                    let dst = acc[grp * kg * kred..].as_mut_ptr() as usize;
                    let rhs = col.as_ptr() as usize;
                    // SAFETY: dst is kg x kred (row stride kred) inside acc; lhs kg x op
                    // (row stride op) inside dyd; rhs = colᵀ, op x kred (row stride 1,
                    // col stride op) inside col; no aliasing.
                    unsafe {
                        exec.install(|| {
                            gemm::gemm(
                                kg,
                                kred,
                                op,
                                dst as *mut f32,
                                1,
                                kred as isize,
                                n > 0,
                                lhs as *const f32,
                                1,
                                op as isize,
                                rhs as *const f32,
                                op as isize,
                                1,
                                1.0,
                                1.0,
                                false,
                                false,
                                false,
                                gemm::Parallelism::Rayon(exec.threads()),
                            );
                        });
                    }
                }
            }
        }
    }
    elementwise(
        &Operand::Tensor(dense_view(acc, dw_dims)),
        ep,
        dw_dims,
        exec,
    );
}
