//! Pooling (resample forward): max and average over windows, with padding.

use hipdnn_flatbuffers_sdk::wire::{PaddingMode, ResampleMode};

use super::{ReferenceError, Result, check_same_dims, round_f32, shape_err};
use crate::tensor::{HostTensor, for_each_index};

/// Pooling parameters, one entry per spatial dimension.
#[derive(Debug, Clone, PartialEq)]
pub struct ResampleParams {
    /// Padding before each spatial dimension (below the window extent).
    pub pre_padding: Vec<usize>,
    /// Padding after each spatial dimension (below the window extent).
    pub post_padding: Vec<usize>,
    /// Window stride.
    pub stride: Vec<usize>,
    /// Window extent.
    pub window: Vec<usize>,
    /// The window function.
    pub mode: ResampleMode,
    /// What padded positions hold (matters only for `MAXPOOL`).
    pub padding_mode: PaddingMode,
}

impl ResampleParams {
    /// A `mode` pool with windows `window`, stride 1, no padding, padding mode
    /// `NEG_INF_PAD`.
    pub fn new(mode: ResampleMode, window: impl Into<Vec<usize>>) -> Self {
        let window = window.into();
        let spatial = window.len();
        Self {
            pre_padding: vec![0; spatial],
            post_padding: vec![0; spatial],
            stride: vec![1; spatial],
            window,
            mode,
            padding_mode: PaddingMode::NEG_INF_PAD,
        }
    }

    /// The same padding before and after every spatial dimension.
    pub fn padding(mut self, pad: usize) -> Self {
        self.pre_padding.fill(pad);
        self.post_padding.fill(pad);
        self
    }

    /// The same stride in every spatial dimension.
    pub fn stride(mut self, stride: usize) -> Self {
        self.stride.fill(stride);
        self
    }

    /// Sets the padding mode.
    pub fn padding_mode(mut self, mode: PaddingMode) -> Self {
        self.padding_mode = mode;
        self
    }

    /// The output dims of pooling `x_dims` (`[N, C, spatial…]`, 1 to 3 spatial dims):
    /// `[N, C, (in + pre + post − window) / stride + 1 …]`.
    ///
    /// # Errors
    /// A rank outside 3..=5, parameter vectors of the wrong length, a zero stride or
    /// window, padding not below the window, a window larger than the padded input.
    pub fn output_dims(&self, x_dims: &[usize]) -> Result<Vec<usize>> {
        const OP: &str = "resample_fwd";
        let rank = x_dims.len();
        if !(3..=5).contains(&rank) {
            return Err(shape_err(OP, format!("x {x_dims:?} must have rank 3 to 5")));
        }
        let spatial = rank - 2;
        for (name, v) in [
            ("pre_padding", &self.pre_padding),
            ("post_padding", &self.post_padding),
            ("stride", &self.stride),
            ("window", &self.window),
        ] {
            if v.len() != spatial {
                return Err(shape_err(
                    OP,
                    format!("{name} {v:?} needs {spatial} entries"),
                ));
            }
        }
        let mut y = x_dims[..2].to_vec();
        for i in 0..spatial {
            let (pre, post, s, w) = (
                self.pre_padding[i],
                self.post_padding[i],
                self.stride[i],
                self.window[i],
            );
            if s == 0 || w == 0 {
                return Err(shape_err(OP, "stride and window must be at least 1"));
            }
            // Padding below the window keeps every window at least one element inside.
            if pre >= w || post >= w {
                return Err(shape_err(
                    OP,
                    format!("padding {pre}/{post} must be below the window {w} in spatial dim {i}"),
                ));
            }
            let padded = x_dims[i + 2] + pre + post;
            if padded < w {
                return Err(shape_err(
                    OP,
                    format!("window {w} exceeds padded input {padded} in spatial dim {i}"),
                ));
            }
            y.push((padded - w) / s + 1);
        }
        Ok(y)
    }
}

/// Pooling forward: each output element reduces the window of `x` it covers.
///
/// Window `o` of spatial dim `i` covers input positions `o·stride − pre + r` for
/// `r in 0..window`; positions outside `0..in` are padding.
///
/// | mode | result |
/// |---|---|
/// | `MAXPOOL` | maximum over the in-bounds positions (`NEG_INF_PAD` or unset: padding never wins); with `ZERO_PAD` padded positions count as 0 |
/// | `AVGPOOL_EXCLUDE_PADDING` | sum over the window / number of in-bounds positions |
/// | `AVGPOOL_INCLUDE_PADDING` | sum over the window / window size (padding adds 0) |
///
/// The index output (`generate_index`) is not produced: the executor refuses such
/// graphs.
///
/// # Errors
/// `NOT_SET` or unknown modes ([`ReferenceError::Unsupported`]); see
/// [`ResampleParams::output_dims`]; `y` must have the computed dims.
pub fn resample_fwd(x: &HostTensor, y: &mut HostTensor, p: &ResampleParams) -> Result<()> {
    const OP: &str = "resample_fwd";
    let mode = p.mode;
    if !matches!(
        mode,
        ResampleMode::MAXPOOL
            | ResampleMode::AVGPOOL_EXCLUDE_PADDING
            | ResampleMode::AVGPOOL_INCLUDE_PADDING
    ) {
        return Err(ReferenceError::Unsupported(format!(
            "resample mode {mode:?}"
        )));
    }
    let y_dims = p.output_dims(&x.dims)?;
    check_same_dims(OP, "y", &y.dims, &y_dims)?;
    let spatial = x.rank() - 2;
    let window_size: usize = p.window.iter().product();
    let zero_pad = p.padding_mode == PaddingMode::ZERO_PAD;
    let mut xi = vec![0; x.rank()];
    for_each_index(&y_dims.clone(), |yi| {
        xi[0] = yi[0];
        xi[1] = yi[1];
        let mut max = f64::NEG_INFINITY;
        let mut sum = 0.0;
        let mut inside = 0usize;
        for_each_index(&p.window, |r| {
            for i in 0..spatial {
                let pos = (yi[i + 2] * p.stride[i] + r[i]).checked_sub(p.pre_padding[i]);
                match pos.filter(|&pos| pos < x.dims[i + 2]) {
                    Some(pos) => xi[i + 2] = pos,
                    None => return, // padding: adds 0 to a sum, never wins a max
                }
            }
            let v = f64::from(x.at(&xi));
            max = max.max(v);
            sum += v;
            inside += 1;
        });
        let v = match mode {
            ResampleMode::MAXPOOL if zero_pad && inside < window_size => max.max(0.0),
            ResampleMode::MAXPOOL => max,
            ResampleMode::AVGPOOL_EXCLUDE_PADDING => sum / inside as f64,
            _ => sum / window_size as f64,
        };
        y.set(yi, round_f32(v));
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::test_support::assert_all_close;
    use hipdnn_data_sdk::TensorLayout;

    /// 1..=16 over a 4×4 image.
    fn image() -> HostTensor {
        let v: Vec<f32> = (1..=16).map(|v| v as f32).collect();
        HostTensor::from_vec([1, 1, 4, 4], &v)
    }

    fn pool(x: &HostTensor, p: &ResampleParams) -> Vec<f32> {
        let mut y = HostTensor::packed(p.output_dims(&x.dims).unwrap());
        resample_fwd(x, &mut y, p).unwrap();
        y.logical()
    }

    #[test]
    fn max_pool_2x2_stride_2() {
        let p = ResampleParams::new(ResampleMode::MAXPOOL, [2, 2]).stride(2);
        assert_eq!(pool(&image(), &p), [6.0, 8.0, 14.0, 16.0]);
    }

    #[test]
    fn max_pool_padding_never_wins() {
        // All negative: a zero from the padding would win if it took part.
        let v: Vec<f32> = (1..=16).map(|v| -(v as f32)).collect();
        let x = HostTensor::from_vec([1, 1, 4, 4], &v);
        let p = ResampleParams::new(ResampleMode::MAXPOOL, [3, 3])
            .stride(2)
            .padding(1);
        // Windows start at -1 and 1: rows/cols {0, 1} and {1, 2, 3}.
        assert_eq!(pool(&x, &p), [-1.0, -2.0, -5.0, -6.0]);
        let zero = p.padding_mode(PaddingMode::ZERO_PAD);
        assert_eq!(pool(&x, &zero), [0.0, 0.0, 0.0, -6.0]);
    }

    #[test]
    fn average_pool_excludes_or_includes_the_padding() {
        let x = image();
        let exclude = ResampleParams::new(ResampleMode::AVGPOOL_EXCLUDE_PADDING, [3, 3])
            .stride(2)
            .padding(1);
        // Window (0, 0) covers 1, 2, 5, 6; (0, 1) covers 2, 3, 4, 6, 7, 8;
        // (1, 0) 5, 6, 9, 10, 13, 14; (1, 1) the 3×3 block 6..16.
        let exact = [3.5, 5.0, 9.5, 11.0];
        assert_all_close(&pool(&x, &exclude), &exact, 1e-7);
        let include = ResampleParams {
            mode: ResampleMode::AVGPOOL_INCLUDE_PADDING,
            ..exclude
        };
        let sums = [14.0, 30.0, 57.0, 99.0];
        let want: Vec<f32> = sums.iter().map(|s| s / 9.0).collect();
        assert_all_close(&pool(&x, &include), &want, 1e-7);
    }

    #[test]
    fn asymmetric_padding_and_output_dims() {
        let mut p = ResampleParams::new(ResampleMode::AVGPOOL_INCLUDE_PADDING, [2, 2]);
        p.post_padding = vec![1, 0];
        // H: (4 + 0 + 1 - 2) / 1 + 1 = 4; W: (4 - 2) / 1 + 1 = 3.
        assert_eq!(p.output_dims(&[1, 1, 4, 4]).unwrap(), [1, 1, 4, 3]);
        let y = pool(&image(), &p);
        // Last row of windows: rows 3 and the padding: (13 + 14) / 4.
        assert_all_close(&y[9..], &[27.0 / 4.0, 29.0 / 4.0, 31.0 / 4.0], 1e-7);
        assert_all_close(&y[..1], &[(1.0 + 2.0 + 5.0 + 6.0) / 4.0], 1e-7);
    }

    #[test]
    fn global_average_over_nhwc_channels() {
        // Two channels stored channels-last: channel c holds c·100 + 1..=4.
        let v: Vec<f32> = [1.0, 2.0, 3.0, 4.0, 101.0, 102.0, 103.0, 104.0].to_vec();
        let x = HostTensor::from_vec([1, 2, 2, 2], &v).relayout(crate::tensor::layout_strides(
            &[1, 2, 2, 2],
            TensorLayout::Nhwc,
        ));
        let p = ResampleParams::new(ResampleMode::AVGPOOL_EXCLUDE_PADDING, [2, 2]);
        let mut y = HostTensor::with_layout([1, 2, 1, 1], TensorLayout::Nhwc);
        resample_fwd(&x, &mut y, &p).unwrap();
        assert_eq!(y.logical(), [2.5, 102.5]);
    }

    #[test]
    fn one_and_three_spatial_dims() {
        let x = HostTensor::from_vec([1, 1, 5], &[3.0, 1.0, 4.0, 1.0, 5.0]);
        let p = ResampleParams::new(ResampleMode::MAXPOOL, [2])
            .stride(2)
            .padding(1);
        assert_eq!(pool(&x, &p), [3.0, 4.0, 5.0]);
        let v: Vec<f32> = (0..8).map(|v| v as f32).collect();
        let x = HostTensor::from_vec([1, 1, 2, 2, 2], &v);
        let p = ResampleParams::new(ResampleMode::AVGPOOL_EXCLUDE_PADDING, [2, 2, 2]);
        assert_eq!(pool(&x, &p), [3.5]);
        let p = ResampleParams::new(ResampleMode::MAXPOOL, [1, 2, 2]);
        assert_eq!(pool(&x, &p), [3.0, 7.0]);
    }

    #[test]
    fn bad_parameters_are_refused() {
        let x = image();
        let mut y = HostTensor::packed([1, 1, 2, 2]);
        let unset = ResampleParams::new(ResampleMode::NOT_SET, [2, 2]).stride(2);
        assert!(matches!(
            resample_fwd(&x, &mut y, &unset),
            Err(ReferenceError::Unsupported(_))
        ));
        let wide_pad = ResampleParams::new(ResampleMode::MAXPOOL, [2, 2]).padding(2);
        assert!(wide_pad.output_dims(&x.dims).is_err());
        let big = ResampleParams::new(ResampleMode::MAXPOOL, [5, 5]);
        assert!(big.output_dims(&x.dims).is_err());
        let wrong_rank = ResampleParams::new(ResampleMode::MAXPOOL, [2]);
        assert!(wrong_rank.output_dims(&x.dims).is_err());
        let p = ResampleParams::new(ResampleMode::MAXPOOL, [2, 2]);
        assert!(resample_fwd(&x, &mut y, &p).is_err(), "y should be 3×3");
    }
}
