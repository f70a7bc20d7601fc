//! Convolution forward, data gradient and weight gradient over one loop of index triples.

use hipdnn_flatbuffers_sdk::wire::ConvMode;

use super::{ReferenceError, Result, check_same_dims, round_f32, shape_err};
use crate::tensor::{HostTensor, for_each_index};

/// Convolution parameters, one entry per spatial dimension.
#[derive(Debug, Clone, PartialEq)]
pub struct ConvParams {
    /// Zero padding before each spatial dimension.
    pub pre_padding: Vec<usize>,
    /// Zero padding after each spatial dimension.
    pub post_padding: Vec<usize>,
    /// Output stride.
    pub stride: Vec<usize>,
    /// Filter dilation (1 = dense).
    pub dilation: Vec<usize>,
    /// Filter orientation.
    pub mode: ConvMode,
}

impl ConvParams {
    /// No padding, stride 1, dilation 1, cross-correlation, for `spatial` dimensions.
    pub fn new(spatial: usize) -> Self {
        Self {
            pre_padding: vec![0; spatial],
            post_padding: vec![0; spatial],
            stride: vec![1; spatial],
            dilation: vec![1; spatial],
            mode: ConvMode::CROSS_CORRELATION,
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

    /// The same dilation in every spatial dimension.
    pub fn dilation(mut self, dilation: usize) -> Self {
        self.dilation.fill(dilation);
        self
    }

    /// Sets the filter orientation.
    pub fn mode(mut self, mode: ConvMode) -> Self {
        self.mode = mode;
        self
    }

    /// The output dims of a convolution of `x_dims` with `w_dims`.
    ///
    /// # Errors
    /// Inconsistent ranks, channel counts, parameters, or a filter larger than the
    /// padded input.
    pub fn output_dims(&self, x_dims: &[usize], w_dims: &[usize]) -> Result<Vec<usize>> {
        ConvGeometry::new("convolution", x_dims, w_dims, self).map(|g| g.y_dims)
    }
}

/// Validated sizes of one convolution.
struct ConvGeometry {
    x_dims: Vec<usize>,
    w_dims: Vec<usize>,
    y_dims: Vec<usize>,
    /// Input channels per group (`w.dims[1]`).
    c_per_group: usize,
    /// Output channels per group.
    k_per_group: usize,
    flip: bool,
}

impl ConvGeometry {
    fn new(op: &'static str, x_dims: &[usize], w_dims: &[usize], p: &ConvParams) -> Result<Self> {
        let rank = x_dims.len();
        if !(3..=5).contains(&rank) || w_dims.len() != rank {
            return Err(shape_err(
                op,
                format!("x {x_dims:?} and w {w_dims:?} must both have rank 3 to 5"),
            ));
        }
        let spatial = rank - 2;
        for (name, v) in [
            ("pre_padding", &p.pre_padding),
            ("post_padding", &p.post_padding),
            ("stride", &p.stride),
            ("dilation", &p.dilation),
        ] {
            if v.len() != spatial {
                return Err(shape_err(
                    op,
                    format!("{name} {v:?} needs {spatial} entries"),
                ));
            }
        }
        if p.stride.contains(&0) || p.dilation.contains(&0) {
            return Err(shape_err(op, "stride and dilation must be at least 1"));
        }
        let flip = match p.mode {
            ConvMode::CONVOLUTION => true,
            ConvMode::CROSS_CORRELATION => false,
            other => return Err(ReferenceError::Unsupported(format!("conv_mode {other:?}"))),
        };
        let (c, cg, k) = (x_dims[1], w_dims[1], w_dims[0]);
        if cg == 0 || c % cg != 0 {
            return Err(shape_err(
                op,
                format!("x has {c} channels, not a multiple of w's {cg} input channels"),
            ));
        }
        let groups = c / cg;
        if k % groups != 0 {
            return Err(shape_err(
                op,
                format!("{k} output channels do not split into {groups} groups"),
            ));
        }
        let mut y_dims = vec![x_dims[0], k];
        for i in 0..spatial {
            let padded = x_dims[i + 2] + p.pre_padding[i] + p.post_padding[i];
            let reach = p.dilation[i] * (w_dims[i + 2].max(1) - 1) + 1;
            if w_dims[i + 2] == 0 || padded < reach {
                return Err(shape_err(
                    op,
                    format!(
                        "filter extent {reach} exceeds padded input {padded} in spatial dim {i}"
                    ),
                ));
            }
            y_dims.push((padded - reach) / p.stride[i] + 1);
        }
        Ok(Self {
            x_dims: x_dims.to_vec(),
            w_dims: w_dims.to_vec(),
            y_dims,
            c_per_group: cg,
            k_per_group: k / groups,
            flip,
        })
    }

    /// Calls `f(x_index, w_index, y_index)` for every product `x · w` that contributes
    /// to `y`. Fprop, dgrad and wgrad are this one loop with different accumulators.
    fn visit(&self, p: &ConvParams, mut f: impl FnMut(&[usize], &[usize], &[usize])) {
        let spatial = self.x_dims.len() - 2;
        let kernel = &self.w_dims[2..];
        let mut xi = vec![0; spatial + 2];
        let mut wi = vec![0; spatial + 2];
        let mut yi = vec![0; spatial + 2];
        for n in 0..self.x_dims[0] {
            for k in 0..self.w_dims[0] {
                let group = k / self.k_per_group;
                for c in 0..self.c_per_group {
                    for_each_index(&self.y_dims[2..], |o| {
                        for_each_index(kernel, |r| {
                            for i in 0..spatial {
                                let pos = o[i] * p.stride[i] + r[i] * p.dilation[i];
                                let Some(pos) = pos.checked_sub(p.pre_padding[i]) else {
                                    return;
                                };
                                if pos >= self.x_dims[i + 2] {
                                    return;
                                }
                                xi[i + 2] = pos;
                                wi[i + 2] = if self.flip {
                                    kernel[i] - 1 - r[i]
                                } else {
                                    r[i]
                                };
                                yi[i + 2] = o[i];
                            }
                            xi[0] = n;
                            xi[1] = group * self.c_per_group + c;
                            wi[0] = k;
                            wi[1] = c;
                            yi[0] = n;
                            yi[1] = k;
                            f(&xi, &wi, &yi);
                        });
                    });
                }
            }
        }
    }
}

/// Convolution forward: `y = conv(x, w)`.
///
/// # Errors
/// See [`ConvParams::output_dims`]; `y` must have the computed output dims.
pub fn conv_fprop(
    x: &HostTensor,
    w: &HostTensor,
    y: &mut HostTensor,
    p: &ConvParams,
) -> Result<()> {
    let g = ConvGeometry::new("conv_fprop", &x.dims, &w.dims, p)?;
    check_same_dims("conv_fprop", "y", &y.dims, &g.y_dims)?;
    let mut acc = vec![0f64; y.data.len()];
    g.visit(p, |xi, wi, yi| {
        acc[y.offset(yi)] += f64::from(x.at(xi)) * f64::from(w.at(wi));
    });
    y.data = acc.into_iter().map(round_f32).collect();
    Ok(())
}

/// Convolution data gradient: `dx` such that `<fprop(x, w), dy> = <x, dx>` for all `x`.
///
/// # Errors
/// See [`ConvParams::output_dims`] (computed from `dx` and `w`); `dy` must have the
/// output dims.
pub fn conv_dgrad(
    dy: &HostTensor,
    w: &HostTensor,
    dx: &mut HostTensor,
    p: &ConvParams,
) -> Result<()> {
    let g = ConvGeometry::new("conv_dgrad", &dx.dims, &w.dims, p)?;
    check_same_dims("conv_dgrad", "dy", &dy.dims, &g.y_dims)?;
    let mut acc = vec![0f64; dx.data.len()];
    g.visit(p, |xi, wi, yi| {
        acc[dx.offset(xi)] += f64::from(dy.at(yi)) * f64::from(w.at(wi));
    });
    dx.data = acc.into_iter().map(round_f32).collect();
    Ok(())
}

/// Convolution weight gradient: `dw` such that `<fprop(x, w), dy> = <w, dw>` for all `w`.
///
/// # Errors
/// See [`ConvParams::output_dims`] (computed from `x` and `dw`); `dy` must have the
/// output dims.
pub fn conv_wgrad(
    x: &HostTensor,
    dy: &HostTensor,
    dw: &mut HostTensor,
    p: &ConvParams,
) -> Result<()> {
    let g = ConvGeometry::new("conv_wgrad", &x.dims, &dw.dims, p)?;
    check_same_dims("conv_wgrad", "dy", &dy.dims, &g.y_dims)?;
    let mut acc = vec![0f64; dw.data.len()];
    g.visit(p, |xi, wi, yi| {
        acc[dw.offset(wi)] += f64::from(x.at(xi)) * f64::from(dy.at(yi));
    });
    dw.data = acc.into_iter().map(round_f32).collect();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::DataGen;
    use crate::kernels::test_support::*;
    use crate::tensor::layout_strides;
    use hipdnn_data_sdk::TensorLayout;

    fn ramp4() -> HostTensor {
        let v: Vec<f32> = (1..=16).map(|v| v as f32).collect();
        HostTensor::from_vec([1, 1, 4, 4], &v)
    }

    fn kernel3() -> HostTensor {
        HostTensor::from_vec(
            [1, 1, 3, 3],
            &[1.0, 2.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, -1.0],
        )
    }

    #[test]
    fn conv_3x3_on_4x4_by_hand() {
        // y[i,j] = x[i,j] + 2x[i,j+1] + x[i+1,j+1] − x[i+2,j+2]
        let mut y = HostTensor::packed([1, 1, 2, 2]);
        conv_fprop(&ramp4(), &kernel3(), &mut y, &ConvParams::new(2)).unwrap();
        assert_eq!(y.logical(), [0.0, 3.0, 12.0, 15.0]);
    }

    #[test]
    fn conv_padding_and_stride_by_hand() {
        // Windows start at (−1, −1), (−1, 1), (1, −1), (1, 1).
        let p = ConvParams::new(2).padding(1).stride(2);
        assert_eq!(
            p.output_dims(&[1, 1, 4, 4], &[1, 1, 3, 3]).unwrap(),
            [1, 1, 2, 2]
        );
        let mut y = HostTensor::packed([1, 1, 2, 2]);
        conv_fprop(&ramp4(), &kernel3(), &mut y, &p).unwrap();
        assert_eq!(y.logical(), [-5.0, -5.0, 5.0, 15.0]);
    }

    #[test]
    fn convolution_mode_flips_the_filter() {
        // Flipped kernel gives y[i,j] = −x[i,j] + x[i+1,j+1] + 2x[i+2,j+1] + x[i+2,j+2]
        // = 12i + 3j + 36.
        let p = ConvParams::new(2).mode(ConvMode::CONVOLUTION);
        let mut y = HostTensor::packed([1, 1, 2, 2]);
        conv_fprop(&ramp4(), &kernel3(), &mut y, &p).unwrap();
        assert_eq!(y.logical(), [36.0, 39.0, 48.0, 51.0]);
    }

    #[test]
    fn dilation_by_hand() {
        // 2×2 filter [[1,2],[3,4]] at dilation 2: 40i + 10j + 78.
        let w = HostTensor::from_vec([1, 1, 2, 2], &[1.0, 2.0, 3.0, 4.0]);
        let p = ConvParams::new(2).dilation(2);
        let mut y = HostTensor::packed([1, 1, 2, 2]);
        conv_fprop(&ramp4(), &w, &mut y, &p).unwrap();
        assert_eq!(y.logical(), [78.0, 88.0, 118.0, 128.0]);
    }

    #[test]
    fn groups_do_not_mix_channels() {
        let x = HostTensor::from_vec([1, 2, 1, 2], &[1.0, 2.0, 10.0, 20.0]);
        let w = HostTensor::from_vec([2, 1, 1, 1], &[2.0, 3.0]);
        let mut y = HostTensor::packed([1, 2, 1, 2]);
        conv_fprop(&x, &w, &mut y, &ConvParams::new(2)).unwrap();
        assert_eq!(y.logical(), [2.0, 4.0, 30.0, 60.0]);
        // Four output channels over two groups: channels 0,1 read input 0; 2,3 input 1.
        let w = HostTensor::from_vec([4, 1, 1, 1], &[1.0, -1.0, 2.0, -2.0]);
        let mut y = HostTensor::packed([1, 4, 1, 2]);
        conv_fprop(&x, &w, &mut y, &ConvParams::new(2)).unwrap();
        assert_eq!(
            y.logical(),
            [1.0, 2.0, -1.0, -2.0, 20.0, 40.0, -20.0, -40.0]
        );
    }

    #[test]
    fn conv_1d_by_hand() {
        let x = HostTensor::from_vec([1, 1, 5], &[1.0, 2.0, 3.0, 4.0, 5.0]);
        let w = HostTensor::from_vec([1, 1, 2], &[1.0, -1.0]);
        let mut p = ConvParams::new(1);
        p.pre_padding = vec![1];
        p.stride = vec![2];
        // Windows at −1, 1, 3: (0 − 1), (2 − 3), (4 − 5).
        let mut y = HostTensor::packed([1, 1, 3]);
        conv_fprop(&x, &w, &mut y, &p).unwrap();
        assert_eq!(y.logical(), [-1.0, -1.0, -1.0]);
    }

    #[test]
    fn conv_rejects_bad_geometry() {
        let x = HostTensor::packed([1, 3, 4, 4]);
        let w = HostTensor::packed([4, 2, 3, 3]);
        let mut y = HostTensor::packed([1, 4, 2, 2]);
        assert!(matches!(
            conv_fprop(&x, &w, &mut y, &ConvParams::new(2)),
            Err(ReferenceError::Shape { .. })
        ));
        let w = HostTensor::packed([4, 3, 5, 5]);
        assert!(conv_fprop(&x, &w, &mut y, &ConvParams::new(2)).is_err());
        let w = HostTensor::packed([4, 3, 3, 3]);
        assert!(matches!(
            conv_fprop(&x, &w, &mut y, &ConvParams::new(2).mode(ConvMode::UNSET)),
            Err(ReferenceError::Unsupported(_))
        ));
        let mut wrong = HostTensor::packed([1, 4, 3, 3]);
        assert!(conv_fprop(&x, &w, &mut wrong, &ConvParams::new(2)).is_err());
    }

    /// `<fprop(x, w), dy> == <x, dgrad(dy, w)> == <w, wgrad(x, dy)>`.
    #[test]
    fn dgrad_and_wgrad_are_adjoints_of_fprop() {
        let mut asym = ConvParams::new(2);
        asym.pre_padding = vec![0, 2];
        asym.post_padding = vec![1, 0];
        asym.stride = vec![2, 1];
        asym.dilation = vec![1, 2];
        let cases: Vec<(Vec<usize>, Vec<usize>, ConvParams)> = vec![
            (
                vec![2, 3, 7, 6],
                vec![4, 3, 3, 3],
                ConvParams::new(2).padding(1),
            ),
            (
                vec![1, 4, 9, 9],
                vec![6, 2, 3, 3],
                ConvParams::new(2).padding(1).stride(2),
            ),
            (
                vec![1, 4, 8, 7],
                vec![4, 1, 3, 3],
                ConvParams::new(2).dilation(2).padding(2),
            ),
            (vec![2, 2, 7, 8], vec![3, 2, 2, 3], asym),
            (
                vec![2, 3, 11],
                vec![2, 3, 3],
                ConvParams::new(1).padding(1).stride(3),
            ),
            (
                vec![1, 2, 4, 5, 5],
                vec![3, 2, 3, 2, 3],
                ConvParams::new(3).padding(1),
            ),
            (
                vec![1, 2, 6, 6],
                vec![2, 2, 3, 3],
                ConvParams::new(2).mode(ConvMode::CONVOLUTION).stride(2),
            ),
        ];
        let mut dg = DataGen::new(7);
        for (xd, wd, p) in cases {
            let yd = p.output_dims(&xd, &wd).unwrap();
            let mut x = HostTensor::packed(xd.clone());
            let mut w = HostTensor::packed(wd.clone());
            let mut dy = HostTensor::packed(yd.clone());
            dg.fill(&mut x, -1.0, 1.0);
            dg.fill(&mut w, -1.0, 1.0);
            dg.fill(&mut dy, -1.0, 1.0);
            let mut y = HostTensor::packed(yd.clone());
            conv_fprop(&x, &w, &mut y, &p).unwrap();
            let mut dx = HostTensor::packed(xd.clone());
            conv_dgrad(&dy, &w, &mut dx, &p).unwrap();
            let mut dw = HostTensor::packed(wd.clone());
            conv_wgrad(&x, &dy, &mut dw, &p).unwrap();
            let (a, b, c) = (dot(&y, &dy), dot(&x, &dx), dot(&w, &dw));
            assert!(a.abs() > 1e-3, "degenerate case {xd:?} {wd:?}");
            assert!(
                close(a, b, 1e-5),
                "{xd:?} {wd:?} {p:?}: <y,dy> {a} vs <x,dx> {b}"
            );
            assert!(
                close(a, c, 1e-5),
                "{xd:?} {wd:?} {p:?}: <y,dy> {a} vs <w,dw> {c}"
            );
        }
    }

    #[test]
    fn nchw_and_nhwc_convolutions_agree() {
        let p = ConvParams::new(2).padding(1).stride(2);
        let (xd, wd) = ([2, 4, 7, 7], [6, 2, 3, 3]);
        let yd = p.output_dims(&xd, &wd).unwrap();
        let mut dg = DataGen::new(3);
        let mut x = HostTensor::packed(xd);
        let mut w = HostTensor::packed(wd);
        dg.fill(&mut x, -1.0, 1.0);
        dg.fill(&mut w, -1.0, 1.0);
        let nhwc = |t: &HostTensor| t.relayout(layout_strides(&t.dims, TensorLayout::Nhwc));
        let mut y1 = HostTensor::packed(yd.clone());
        conv_fprop(&x, &w, &mut y1, &p).unwrap();
        let mut y2 = HostTensor::with_layout(yd.clone(), TensorLayout::Nhwc);
        conv_fprop(&nhwc(&x), &nhwc(&w), &mut y2, &p).unwrap();
        assert_ne!(y1.data, y2.data, "the storage orders differ");
        assert_eq!(y1.logical(), y2.logical());

        let mut dx1 = HostTensor::packed(xd);
        conv_dgrad(&y1, &w, &mut dx1, &p).unwrap();
        let mut dx2 = HostTensor::with_layout(xd, TensorLayout::Nhwc);
        conv_dgrad(&y2, &nhwc(&w), &mut dx2, &p).unwrap();
        assert_eq!(dx1.logical(), dx2.logical());
    }
}
