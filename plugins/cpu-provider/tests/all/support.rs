//! Shared helpers: graph building (with the frontend's builder) and a naive convolution.

use hipdnn_data_sdk::DataType;
use hipdnn_flatbuffers_sdk::model::Graph;
use hipdnn_frontend::{GraphBuilder, Tensor, TensorDescriptor};

/// A deterministic pseudo-random sequence in [-1, 1).
pub fn values(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            ((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect()
}

/// A graph builder with `FLOAT` I/O, intermediate and compute types.
pub fn f32_graph(name: &str) -> GraphBuilder {
    GraphBuilder::new(name)
        .io_data_type(DataType::Float)
        .intermediate_data_type(DataType::Float)
        .compute_data_type(DataType::Float)
}

/// A graph input `t{uid}` with the given uid, dims, strides and type.
pub fn input(
    g: &mut GraphBuilder,
    uid: i64,
    dims: &[i64],
    strides: &[i64],
    dt: DataType,
) -> Tensor {
    let d = TensorDescriptor::new(format!("t{uid}"), dims)
        .uid(uid)
        .strides(strides)
        .data_type(dt);
    g.tensor(d).unwrap()
}

/// Names an operation's result `t{uid}`, gives it that uid and strides, and makes it a
/// graph output or leaves it virtual.
pub fn result(g: &mut GraphBuilder, t: Tensor, uid: i64, strides: &[i64], output: bool) -> Tensor {
    g.set_name(t, format!("t{uid}"))
        .and_then(|g| g.set_uid(t, uid))
        .and_then(|g| g.set_strides(t, strides))
        .and_then(|g| g.set_output(t, output))
        .unwrap();
    t
}

/// The built (validated) graph.
pub fn build(g: &GraphBuilder) -> Graph {
    g.build().unwrap().into_graph()
}

/// Packed strides of `dims` stored in `order` (outermost first).
pub fn strides_in(dims: &[i64], order: &[usize]) -> Vec<i64> {
    let mut s = vec![0; dims.len()];
    let mut acc = 1;
    for &d in order.iter().rev() {
        s[d] = acc;
        acc *= dims[d];
    }
    s
}

/// Elements a strided tensor spans.
pub fn span(dims: &[i64], strides: &[i64]) -> usize {
    1 + dims
        .iter()
        .zip(strides)
        .map(|(d, s)| ((d - 1) * s) as usize)
        .sum::<usize>()
}

/// Naive 2-D convolution forward on strided f32 tensors.
#[allow(clippy::too_many_arguments)]
pub fn naive_conv2d(
    x: &[f32],
    xd: &[i64],
    xs: &[i64],
    w: &[f32],
    wd: &[i64],
    ws: &[i64],
    yd: &[i64],
    pad: i64,
    stride: i64,
    dil: i64,
    flip: bool,
) -> Vec<f32> {
    let (n, c, h, wi) = (xd[0], xd[1], xd[2], xd[3]);
    let (k, cg, fh, fw) = (wd[0], wd[1], wd[2], wd[3]);
    let g = c / cg;
    let kg = k / g;
    let (oh, ow) = (yd[2], yd[3]);
    let mut y = vec![0f32; (n * k * oh * ow) as usize];
    for b in 0..n {
        for ko in 0..k {
            let grp = ko / kg;
            for i in 0..oh {
                for j in 0..ow {
                    let mut acc = 0f64;
                    for ci in 0..cg {
                        for a in 0..fh {
                            for bb in 0..fw {
                                let (ta, tb) = if flip {
                                    (fh - 1 - a, fw - 1 - bb)
                                } else {
                                    (a, bb)
                                };
                                let ih = i * stride - pad + ta * dil;
                                let iw = j * stride - pad + tb * dil;
                                if ih < 0 || ih >= h || iw < 0 || iw >= wi {
                                    continue;
                                }
                                let xo =
                                    b * xs[0] + (grp * cg + ci) * xs[1] + ih * xs[2] + iw * xs[3];
                                let wo = ko * ws[0] + ci * ws[1] + a * ws[2] + bb * ws[3];
                                acc += f64::from(x[xo as usize]) * f64::from(w[wo as usize]);
                            }
                        }
                    }
                    y[(((b * k + ko) * oh + i) * ow + j) as usize] = acc as f32;
                }
            }
        }
    }
    y
}

/// The offset of row-major element `lin` in a tensor of `dims` and `strides`.
fn strided_offset(mut lin: i64, dims: &[i64], strides: &[i64]) -> usize {
    let mut off = 0;
    for d in (0..dims.len()).rev() {
        off += (lin % dims[d]) * strides[d];
        lin /= dims[d];
    }
    off as usize
}

/// Reads a strided f32 tensor into row-major order.
pub fn dense(t: &[f32], dims: &[i64], strides: &[i64]) -> Vec<f32> {
    let n: i64 = dims.iter().product();
    (0..n)
        .map(|lin| t[strided_offset(lin, dims, strides)])
        .collect()
}

/// Lays row-major values out as a strided f32 tensor (the inverse of [`dense`]).
pub fn strided(values: &[f32], dims: &[i64], strides: &[i64]) -> Vec<f32> {
    let mut t = vec![0f32; span(dims, strides)];
    for (lin, &v) in values.iter().enumerate() {
        t[strided_offset(lin as i64, dims, strides)] = v;
    }
    t
}

pub fn assert_close(got: &[f32], want: &[f32], tol: f32, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= tol * (1.0 + w.abs()),
            "{what}: element {i}: got {g}, want {w}"
        );
    }
}

/// Whether Winograd is planned here: the vector pair kernels (AVX-512, or AVX2 + FMA)
/// and no portable ISA forced.
pub fn winograd_runs_here() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("fma")
            && std::env::var("HIPDNN_CPU_ISA").as_deref() != Ok("portable")
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}
