//! Pooling (resample forward): max and average windows over 1 to 3 spatial dims.
//!
//! Results go to a dense `f32` buffer that the stage's epilogue then stores. Two loops:
//! channels-first (and any other strides) walks one `(n, c)` plane at a time, so the
//! plane is read with unit or small strides; channels-last inputs walk output rows and
//! reduce every channel at once over contiguous channel runs. Work splits statically
//! over planes or rows; each output is one thread's, summed in a fixed order, so
//! results are deterministic. Window bounds are clipped to the input once per output,
//! so the inner loops have no padding tests, and a global pool is one clipped window
//! per plane.

use std::sync::Mutex;

use super::exec::{Exec, split};
use crate::tensor::{DType, Elem, RawIn, Shape, bf16, f16};

/// The window function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PoolMode {
    /// Maximum over the in-bounds positions.
    Max,
    /// Sum over the window divided by the in-bounds count.
    AvgExcludePadding,
    /// Sum over the window divided by the window size.
    AvgIncludePadding,
}

/// A checked pooling of `[N, C, spatial…]`, every per-dim vector padded to 3 spatial
/// dims (leading extent-1 dims with window 1).
#[derive(Debug, Clone, PartialEq)]
pub struct PoolGeometry {
    /// The window function.
    pub mode: PoolMode,
    /// Max pools only: padded positions hold 0 and take part.
    pub zero_pad: bool,
    /// Batch and channels.
    pub n: usize,
    /// Channels.
    pub c: usize,
    /// Input extents.
    pub input: [usize; 3],
    /// Output extents.
    pub output: [usize; 3],
    /// Window extents.
    pub window: [usize; 3],
    /// Strides.
    pub stride: [usize; 3],
    /// Padding before.
    pub pre: [usize; 3],
}

impl PoolGeometry {
    /// Checks `x_dims → y_dims` (rank 3 to 5) against the window, stride and padding.
    ///
    /// # Errors
    /// What does not fit, in words.
    pub fn new(
        mode: PoolMode,
        zero_pad: bool,
        x_dims: &[usize],
        y_dims: &[usize],
        [window, stride, pre, post]: [&[usize]; 4],
    ) -> Result<Self, String> {
        let rank = x_dims.len();
        if !(3..=5).contains(&rank) || y_dims.len() != rank {
            return Err(format!(
                "pooling needs x and y of rank 3 to 5, got {x_dims:?} and {y_dims:?}"
            ));
        }
        let spatial = rank - 2;
        if [window, stride, pre, post]
            .iter()
            .any(|v| v.len() != spatial)
        {
            return Err(format!(
                "window, stride and padding need {spatial} entries each"
            ));
        }
        let lead = 3 - spatial;
        let mut g = Self {
            mode,
            zero_pad,
            n: x_dims[0],
            c: x_dims[1],
            input: [1; 3],
            output: [1; 3],
            window: [1; 3],
            stride: [1; 3],
            pre: [0; 3],
        };
        for i in 0..spatial {
            let (w, s, a, b) = (window[i], stride[i], pre[i], post[i]);
            if w == 0 || s == 0 || a >= w || b >= w {
                return Err(format!(
                    "window {w}, stride {s}, padding {a}/{b} in spatial dim {i}: \
                     window and stride must be positive and the padding below the window"
                ));
            }
            let padded = x_dims[i + 2] + a + b;
            let expected = if padded >= w { (padded - w) / s + 1 } else { 0 };
            if expected == 0 || y_dims[i + 2] != expected {
                return Err(format!(
                    "output extent {} in spatial dim {i}, expected {expected}",
                    y_dims[i + 2]
                ));
            }
            let j = lead + i;
            (g.input[j], g.output[j], g.window[j], g.stride[j], g.pre[j]) =
                (x_dims[i + 2], expected, w, s, a);
        }
        if y_dims[..2] != x_dims[..2] {
            return Err(format!(
                "y dims {y_dims:?} must keep x's batch and channels {:?}",
                &x_dims[..2]
            ));
        }
        Ok(g)
    }

    /// Output positions per plane.
    fn plane(&self) -> usize {
        self.output.iter().product()
    }

    /// The clipped input range of output position `o` in spatial dim `d`.
    #[inline]
    fn range(&self, d: usize, o: usize) -> std::ops::Range<usize> {
        let start = o * self.stride[d];
        let lo = start.saturating_sub(self.pre[d]);
        let hi = (start + self.window[d] - self.pre[d]).min(self.input[d]);
        lo..hi
    }

    /// The value of a window from its running max or sum and its in-bounds count.
    #[inline]
    fn finish(&self, acc: f32, inside: usize) -> f32 {
        let size: usize = self.window.iter().product();
        match self.mode {
            PoolMode::Max if self.zero_pad && inside < size => acc.max(0.0),
            PoolMode::Max => acc,
            PoolMode::AvgExcludePadding => acc / inside as f32,
            PoolMode::AvgIncludePadding => acc / size as f32,
        }
    }
}

/// Whether `x` stores channels innermost with the spatial dims packed around them, the
/// layout [`pool`] runs channel-vectorised when `out` is [`Shape::channels_last`].
pub fn is_channels_last(x: &Shape) -> bool {
    let mut order = vec![0];
    order.extend(2..x.rank());
    order.push(1);
    let packed = Shape::packed_in_order(&x.dims, &order);
    x.strides[1] == 1 && x.strides[2..] == packed.strides[2..]
}

/// Pools `x` into `out`: dense over `y`'s dims, channels-last when `channels_last`
/// (then `x` must be [`is_channels_last`]), row-major otherwise.
///
/// # Panics
/// If `out` is shorter than `y`'s element count (an internal contract).
pub fn pool(x: &RawIn, g: &PoolGeometry, channels_last: bool, out: &mut [f32], exec: &Exec) {
    let plane = g.plane();
    let total = g.n * g.c * plane;
    assert!(out.len() >= total, "pool output buffer");
    // Rows: (n, c) planes channels-first; (n, od, oh) rows of [ow, c] channels-last.
    let (rows, row_len) = if channels_last {
        (g.n * g.output[0] * g.output[1], g.output[2] * g.c)
    } else {
        (g.n * g.c, plane)
    };
    let parts = exec.threads().min(rows).max(1);
    let mut chunks = Vec::with_capacity(parts);
    let mut rest = &mut out[..total];
    for p in 0..parts {
        let (chunk, tail) = rest.split_at_mut(split(rows, parts, p).len() * row_len);
        chunks.push(Mutex::new(chunk));
        rest = tail;
    }
    let f32_row = nhwc_row_f32();
    exec.for_each(parts, |p| {
        let mut chunk = chunks[p].lock().unwrap_or_else(|e| e.into_inner());
        let range = split(rows, parts, p);
        for (k, row) in range.enumerate() {
            let dst = &mut chunk[k * row_len..(k + 1) * row_len];
            if channels_last {
                match x.dtype() {
                    DType::F32 => f32_row(x, g, row, dst),
                    DType::F16 => nhwc_row::<f16>(x, g, row, dst),
                    DType::BF16 => nhwc_row::<bf16>(x, g, row, dst),
                }
            } else {
                strided_plane(x, g, row, dst);
            }
        }
    });
}

/// Strides of `x`'s spatial dims, padded like the geometry (leading dims unused).
fn spatial_strides(x: &RawIn) -> [usize; 3] {
    let s = &x.shape().strides;
    let mut out = [0; 3];
    let spatial = s.len() - 2;
    out[3 - spatial..].copy_from_slice(&s[2..]);
    out
}

/// One `(n, c)` plane, any strides.
fn strided_plane(x: &RawIn, g: &PoolGeometry, plane: usize, dst: &mut [f32]) {
    let s = &x.shape().strides;
    let base = (plane / g.c) * s[0] + (plane % g.c) * s[1];
    let xs = spatial_strides(x);
    let max = g.mode == PoolMode::Max;
    let mut out = dst.iter_mut();
    for od in 0..g.output[0] {
        let rd = g.range(0, od);
        for oh in 0..g.output[1] {
            let rh = g.range(1, oh);
            for ow in 0..g.output[2] {
                let rw = g.range(2, ow);
                let mut acc = if max { f32::NEG_INFINITY } else { 0.0 };
                for d in rd.clone() {
                    for h in rh.clone() {
                        let row = base + d * xs[0] + h * xs[1];
                        for w in rw.clone() {
                            // SAFETY: (n, c, d, h, w) is inside x's dims.
                            let v = unsafe { x.load(row + w * xs[2]) };
                            acc = if max { acc.max(v) } else { acc + v };
                        }
                    }
                }
                let inside = rd.len() * rh.len() * rw.len();
                *out.next().expect("one value per output position") = g.finish(acc, inside);
            }
        }
    }
}

/// A channels-last output row.
type RowFn = fn(&RawIn, &PoolGeometry, usize, &mut [f32]);

/// [`nhwc_row`] for `f32`, its loops compiled for the widest vectors the CPU has (under
/// `HIPDNN_CPU_ISA`): the same operations in the same order, so the same results.
fn nhwc_row_f32() -> RowFn {
    #[cfg(target_arch = "x86_64")]
    {
        let cap = super::gemm::isa_cap();
        if cap == "avx512" && std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: AVX-512F is present.
            return |x, g, row, dst| unsafe { nhwc_row_avx512(x, g, row, dst) };
        }
        if cap != "portable" && std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: AVX2 is present.
            return |x, g, row, dst| unsafe { nhwc_row_avx2(x, g, row, dst) };
        }
    }
    nhwc_row::<f32>
}

/// [`nhwc_row`] for `f32` with AVX-512F.
///
/// # Safety
/// The CPU supports AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn nhwc_row_avx512(x: &RawIn, g: &PoolGeometry, row: usize, dst: &mut [f32]) {
    nhwc_row::<f32>(x, g, row, dst);
}

/// [`nhwc_row`] for `f32` with AVX2.
///
/// # Safety
/// The CPU supports AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn nhwc_row_avx2(x: &RawIn, g: &PoolGeometry, row: usize, dst: &mut [f32]) {
    nhwc_row::<f32>(x, g, row, dst);
}

/// One output row `(n, od, oh)` of a channels-last input: `dst` is `[ow, c]`.
#[inline(always)]
fn nhwc_row<T: Elem>(x: &RawIn, g: &PoolGeometry, row: usize, dst: &mut [f32]) {
    let c = g.c;
    let (n, rem) = (
        row / (g.output[0] * g.output[1]),
        row % (g.output[0] * g.output[1]),
    );
    let (od, oh) = (rem / g.output[1], rem % g.output[1]);
    let xs = spatial_strides(x);
    let base = n * x.shape().strides[0];
    let max = g.mode == PoolMode::Max;
    let (rd, rh) = (g.range(0, od), g.range(1, oh));
    let ptr = x.ptr_as::<T>();
    for (ow, acc) in dst.chunks_exact_mut(c).enumerate() {
        let rw = g.range(2, ow);
        acc.fill(if max { f32::NEG_INFINITY } else { 0.0 });
        for d in rd.clone() {
            for h in rh.clone() {
                for w in rw.clone() {
                    let at = base + d * xs[0] + h * xs[1] + w * xs[2];
                    // SAFETY: channels 0..c of an in-bounds position are contiguous
                    // (channels-last, checked by the caller) and inside x's span.
                    let src = unsafe { std::slice::from_raw_parts(ptr.add(at), c) };
                    if max {
                        for (a, v) in acc.iter_mut().zip(src) {
                            *a = a.max(v.to_f32());
                        }
                    } else {
                        for (a, v) in acc.iter_mut().zip(src) {
                            *a += v.to_f32();
                        }
                    }
                }
            }
        }
        // `finish`, with the mode matched once per position (the loops vectorise).
        let inside = rd.len() * rh.len() * rw.len();
        let size: usize = g.window.iter().product();
        match g.mode {
            PoolMode::Max if g.zero_pad && inside < size => {
                acc.iter_mut().for_each(|a| *a = a.max(0.0));
            }
            PoolMode::Max => {}
            PoolMode::AvgExcludePadding => acc.iter_mut().for_each(|a| *a /= inside as f32),
            PoolMode::AvgIncludePadding => acc.iter_mut().for_each(|a| *a /= size as f32),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor::TensorRef;

    fn geometry(
        mode: PoolMode,
        x: &[usize],
        win: usize,
        stride: usize,
        pad: usize,
    ) -> PoolGeometry {
        let spatial = x.len() - 2;
        let mut y = x[..2].to_vec();
        y.extend(x[2..].iter().map(|&i| (i + 2 * pad - win) / stride + 1));
        let (w, s, p) = (
            vec![win; spatial],
            vec![stride; spatial],
            vec![pad; spatial],
        );
        PoolGeometry::new(mode, false, x, &y, [&w, &s, &p, &p]).unwrap()
    }

    /// Pools `values` (logical NCHW order) stored in `shape` and returns the output in
    /// NCHW order.
    fn run(values: &[f32], shape: &Shape, g: &PoolGeometry, threads: usize) -> Vec<f32> {
        let mut storage = vec![0.0f32; shape.span()];
        let packed = Shape::packed(&shape.dims);
        let mut idx = vec![0; shape.rank()];
        for (i, v) in values.iter().enumerate() {
            let mut rem = i;
            for d in (0..idx.len()).rev() {
                idx[d] = rem % shape.dims[d];
                rem /= shape.dims[d];
            }
            storage[shape.offset(&idx)] = *v;
        }
        let _ = packed;
        let x = TensorRef::new(&storage[..], shape).unwrap();
        let cl = is_channels_last(shape);
        let total = g.n * g.c * g.plane();
        let mut out = vec![f32::NAN; total];
        pool(x.raw(), g, cl, &mut out, &Exec::new(threads));
        if !cl {
            return out;
        }
        // Channels-last [n, spatial, c] back to NCHW.
        let plane = g.plane();
        let mut nchw = vec![0.0; total];
        for n in 0..g.n {
            for p in 0..plane {
                for c in 0..g.c {
                    nchw[(n * g.c + c) * plane + p] = out[(n * plane + p) * g.c + c];
                }
            }
        }
        nchw
    }

    #[test]
    fn max_and_average_with_padding_by_hand() {
        let x: Vec<f32> = (1..=16).map(|v| v as f32).collect();
        let shape = Shape::packed(&[1, 1, 4, 4]);
        let avg = geometry(PoolMode::AvgExcludePadding, &[1, 1, 4, 4], 3, 2, 1);
        assert_eq!(run(&x, &shape, &avg, 1), [3.5, 5.0, 9.5, 11.0]);
        let inc = PoolGeometry {
            mode: PoolMode::AvgIncludePadding,
            ..avg.clone()
        };
        let want: Vec<f32> = [14.0f32, 30.0, 57.0, 99.0]
            .iter()
            .map(|s| s / 9.0)
            .collect();
        assert_eq!(run(&x, &shape, &inc, 2), want);
        let neg: Vec<f32> = x.iter().map(|v| -v).collect();
        let max = PoolGeometry {
            mode: PoolMode::Max,
            ..avg.clone()
        };
        assert_eq!(run(&neg, &shape, &max, 1), [-1.0, -2.0, -5.0, -6.0]);
        let zero = PoolGeometry {
            zero_pad: true,
            ..max
        };
        assert_eq!(run(&neg, &shape, &zero, 1), [0.0, 0.0, 0.0, -6.0]);
    }

    #[test]
    fn channels_last_matches_channels_first() {
        let dims = [2, 5, 7, 6];
        let x: Vec<f32> = (0..dims.iter().product::<usize>())
            .map(|i| ((i * 37) % 23) as f32 - 11.0)
            .collect();
        let nchw = Shape::packed(&dims);
        let nhwc = Shape::channels_last(&dims);
        assert!(is_channels_last(&nhwc) && !is_channels_last(&nchw));
        for mode in [
            PoolMode::Max,
            PoolMode::AvgExcludePadding,
            PoolMode::AvgIncludePadding,
        ] {
            let g = geometry(mode, &dims, 3, 2, 1);
            let a = run(&x, &nchw, &g, 3);
            assert_eq!(a, run(&x, &nhwc, &g, 2), "{mode:?}");
            assert!(a.iter().all(|v| v.is_finite()));
        }
    }

    #[test]
    fn global_pool_and_one_and_three_spatial_dims() {
        let x: Vec<f32> = (0..8).map(|v| v as f32).collect();
        let g = geometry(PoolMode::AvgExcludePadding, &[1, 2, 2, 2], 2, 1, 0);
        assert_eq!(
            run(&x, &Shape::channels_last(&[1, 2, 2, 2]), &g, 1),
            [1.5, 5.5]
        );
        let g = geometry(PoolMode::Max, &[1, 1, 2, 2, 2], 2, 2, 0);
        assert_eq!(run(&x, &Shape::packed(&[1, 1, 2, 2, 2]), &g, 1), [7.0]);
        let v = [3.0, 1.0, 4.0, 1.0, 5.0];
        let g = geometry(PoolMode::Max, &[1, 1, 5], 2, 2, 1);
        assert_eq!(run(&v, &Shape::packed(&[1, 1, 5]), &g, 1), [3.0, 4.0, 5.0]);
    }

    #[test]
    fn bad_geometry_is_refused() {
        let two = [2, 2];
        let one = [1, 1];
        let zero = [0, 0];
        let ok = PoolGeometry::new(
            PoolMode::Max,
            false,
            &[1, 1, 4, 4],
            &[1, 1, 2, 2],
            [&two, &two, &zero, &zero],
        );
        assert!(ok.is_ok());
        let wrong_out = PoolGeometry::new(
            PoolMode::Max,
            false,
            &[1, 1, 4, 4],
            &[1, 1, 3, 3],
            [&two, &two, &zero, &zero],
        );
        assert!(wrong_out.is_err());
        let wide_pad = PoolGeometry::new(
            PoolMode::Max,
            false,
            &[1, 1, 4, 4],
            &[1, 1, 3, 3],
            [&two, &two, &two, &zero],
        );
        assert!(wide_pad.is_err());
        let rank = PoolGeometry::new(
            PoolMode::Max,
            false,
            &[1, 1, 4, 4],
            &[1, 1, 4, 4],
            [&one[..1], &one[..1], &zero[..1], &zero[..1]],
        );
        assert!(rank.is_err());
    }
}
