//! Shape inference: pure functions from input dims and attributes to output dims.
//!
//! They return the reason as text (with the numbers in it); the graph builder wraps it
//! in a [`FrontendError`](super::FrontendError) that names the node. Arithmetic is done
//! in `i128`, so absurd extents give an error instead of wrapping.

use hipdnn_data_sdk::{TensorLayout, packed_strides};

/// Padding, stride and dilation of a convolution, one entry per spatial dimension.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ConvGeometry {
    pub pre_padding: Vec<i64>,
    pub post_padding: Vec<i64>,
    pub stride: Vec<i64>,
    pub dilation: Vec<i64>,
}

/// Output dims of a forward convolution of `x` (`[N, C, spatial…]`) with `w`
/// (`[K, C / groups, kernel…]`): `[N, K, out…]` with
/// `out = (in + pre + post - (dilation · (kernel - 1) + 1)) / stride + 1`.
///
/// The caller has checked that `x` and `w` have the same rank ≥ 3 and that the geometry
/// has `rank - 2` entries per field.
pub(crate) fn conv_output_dims(x: &[i64], w: &[i64], g: &ConvGeometry) -> Result<Vec<i64>, String> {
    let (c, c_per_group, k) = (x[1], w[1], w[0]);
    if c % c_per_group != 0 {
        return Err(format!(
            "x has {c} channels, not a multiple of the {c_per_group} input channels of w \
             (x {x:?}, w {w:?})"
        ));
    }
    let groups = c / c_per_group;
    if k % groups != 0 {
        return Err(format!(
            "w has {k} output channels, which do not split into {groups} groups \
             ({c} channels in x / {c_per_group} in w)"
        ));
    }
    let mut y = Vec::with_capacity(x.len());
    y.push(x[0]);
    y.push(k);
    for i in 0..x.len() - 2 {
        let input = i128::from(x[i + 2]);
        let padded = input + i128::from(g.pre_padding[i]) + i128::from(g.post_padding[i]);
        let reach = i128::from(g.dilation[i]) * (i128::from(w[i + 2]) - 1) + 1;
        if padded < reach {
            return Err(format!(
                "spatial dim {i}: the dilated filter spans {reach} but the padded input has \
                 only {padded} ({input} + {} + {})",
                g.pre_padding[i], g.post_padding[i]
            ));
        }
        let out = (padded - reach) / i128::from(g.stride[i]) + 1;
        y.push(i64::try_from(out).map_err(|_| format!("spatial dim {i}: extent overflows"))?);
    }
    Ok(y)
}

/// Numpy-style broadcast of `a` and `b` (right-aligned; an extent of 1 repeats).
pub(crate) fn broadcast(a: &[i64], b: &[i64]) -> Option<Vec<i64>> {
    let rank = a.len().max(b.len());
    let at = |v: &[i64], i: usize| {
        // Index i of the right-aligned result, 1 where `v` has no such dimension.
        (i + v.len()).checked_sub(rank).map_or(1, |j| v[j])
    };
    (0..rank)
        .map(|i| match (at(a, i), at(b, i)) {
            (x, y) if x == y => Some(x),
            (1, y) => Some(y),
            (x, 1) => Some(x),
            _ => None,
        })
        .collect()
}

/// Why `a · b` has no shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum MatmulShapeError {
    /// `a`'s columns and `b`'s rows differ.
    Inner { k_a: i64, k_b: i64 },
    /// The batch dims do not broadcast.
    Batch,
}

/// Output dims of a batched matmul: `[batch…, m, k] · [batch…, k, n] = [batch…, m, n]`
/// with the batch dims broadcast. Both ranks are at least 2 (checked by the caller).
pub(crate) fn matmul_output_dims(a: &[i64], b: &[i64]) -> Result<Vec<i64>, MatmulShapeError> {
    let (ra, rb) = (a.len(), b.len());
    let (m, k_a) = (a[ra - 2], a[ra - 1]);
    let (k_b, n) = (b[rb - 2], b[rb - 1]);
    if k_a != k_b {
        return Err(MatmulShapeError::Inner { k_a, k_b });
    }
    let mut c = broadcast(&a[..ra - 2], &b[..rb - 2]).ok_or(MatmulShapeError::Batch)?;
    c.extend([m, n]);
    Ok(c)
}

/// Checks the output dims of a reduction: same rank as the input, and each extent either
/// kept or reduced to 1.
pub(crate) fn check_reduction(input: &[i64], output: &[i64]) -> Result<(), String> {
    if input.len() != output.len() {
        return Err(format!(
            "{output:?} has rank {}, the input {input:?} has rank {}",
            output.len(),
            input.len()
        ));
    }
    if let Some(i) = (0..input.len()).find(|&i| output[i] != input[i] && output[i] != 1) {
        return Err(format!(
            "{output:?}: dim {i} is {}, but a reduction keeps the input's extent ({}) or \
             reduces it to 1",
            output[i], input[i]
        ));
    }
    Ok(())
}

/// `[1, C, 1, …]`: the dims of per-channel parameters and statistics for `x`.
pub(crate) fn channel_dims(x: &[i64]) -> Vec<i64> {
    let mut d = vec![1; x.len()];
    d[1] = x[1];
    d
}

/// Dims of a normalization's parameters (`[1, …, 1, normalized…]`) and statistics
/// (`[leading…, 1, …, 1]`) when the trailing `normalized` dims are normalized together.
pub(crate) fn norm_dims(x: &[i64], normalized: usize) -> (Vec<i64>, Vec<i64>) {
    let lead = x.len() - normalized;
    let param = (0..x.len())
        .map(|i| if i < lead { 1 } else { x[i] })
        .collect();
    let stats = (0..x.len())
        .map(|i| if i < lead { x[i] } else { 1 })
        .collect();
    (param, stats)
}

/// The layout family of `layout` (rank-free): channels-last or row-major.
pub(crate) fn family(layout: TensorLayout) -> TensorLayout {
    if layout.is_channels_last() {
        TensorLayout::ChannelsLast
    } else {
        TensorLayout::Packed
    }
}

/// Packed strides of `dims` in the layout family `layout` (row-major below rank 3, where
/// the two families agree or channels-last is undefined).
pub(crate) fn strides_for(dims: &[i64], layout: TensorLayout) -> Result<Vec<i64>, String> {
    let layout = if dims.len() >= 3 {
        family(layout)
    } else {
        TensorLayout::Packed
    };
    packed_strides(dims, layout).map_err(|e| e.to_string())
}

/// The layout family whose packed strides `strides` matches, ignoring dims of extent 1
/// (their stride never matters); row-major is preferred when both match, and is the
/// answer when neither does.
pub(crate) fn detect_layout(dims: &[i64], strides: &[i64]) -> TensorLayout {
    let matches = |layout| {
        strides_for(dims, layout).is_ok_and(|expected| {
            (0..dims.len()).all(|i| dims[i] == 1 || strides[i] == expected[i])
        })
    };
    if !matches(TensorLayout::Packed) && matches(TensorLayout::ChannelsLast) {
        TensorLayout::ChannelsLast
    } else {
        TensorLayout::Packed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn geometry(pad: &[i64], stride: &[i64], dilation: &[i64]) -> ConvGeometry {
        ConvGeometry {
            pre_padding: pad.to_vec(),
            post_padding: pad.to_vec(),
            stride: stride.to_vec(),
            dilation: dilation.to_vec(),
        }
    }

    #[test]
    fn conv_2d_same_padding_keeps_spatial_size() {
        let g = geometry(&[1, 1], &[1, 1], &[1, 1]);
        assert_eq!(
            conv_output_dims(&[2, 3, 8, 8], &[4, 3, 3, 3], &g),
            Ok(vec![2, 4, 8, 8])
        );
    }

    #[test]
    fn conv_2d_stride_and_dilation() {
        // H: (10 + 2 + 2 - (2·2 + 1)) / 2 + 1 = 9 / 2 + 1 = 5; W: (7 - 5) / 3 + 1 = 1.
        let g = ConvGeometry {
            pre_padding: vec![2, 0],
            post_padding: vec![2, 0],
            stride: vec![2, 3],
            dilation: vec![2, 2],
        };
        assert_eq!(
            conv_output_dims(&[1, 3, 10, 7], &[8, 3, 3, 3], &g),
            Ok(vec![1, 8, 5, 1])
        );
    }

    #[test]
    fn conv_asymmetric_padding() {
        let g = ConvGeometry {
            pre_padding: vec![0],
            post_padding: vec![2],
            stride: vec![1],
            dilation: vec![1],
        };
        // (5 + 0 + 2 - 3) / 1 + 1 = 5
        assert_eq!(
            conv_output_dims(&[1, 1, 5], &[1, 1, 3], &g),
            Ok(vec![1, 1, 5])
        );
    }

    #[test]
    fn conv_1d_and_3d() {
        let g1 = geometry(&[0], &[2], &[1]);
        assert_eq!(
            conv_output_dims(&[4, 16, 100], &[32, 16, 5], &g1),
            Ok(vec![4, 32, 48])
        );
        let g3 = geometry(&[1, 0, 1], &[1, 2, 1], &[1, 1, 3]);
        // D: (6 + 2 - 3) + 1 = 6; H: (9 - 3) / 2 + 1 = 4; W: (8 + 2 - 7) + 1 = 4.
        assert_eq!(
            conv_output_dims(&[1, 2, 6, 9, 8], &[3, 2, 3, 3, 3], &g3),
            Ok(vec![1, 3, 6, 4, 4])
        );
    }

    #[test]
    fn conv_groups() {
        let g = geometry(&[0, 0], &[1, 1], &[1, 1]);
        // 8 channels, 2 per group: 4 groups; 12 output channels split 3 per group.
        assert_eq!(
            conv_output_dims(&[1, 8, 4, 4], &[12, 2, 1, 1], &g),
            Ok(vec![1, 12, 4, 4])
        );
        let e = conv_output_dims(&[1, 8, 4, 4], &[12, 3, 1, 1], &g).unwrap_err();
        assert!(
            e.contains("8 channels") && e.contains("3 input channels"),
            "{e}"
        );
        let e = conv_output_dims(&[1, 8, 4, 4], &[6, 2, 1, 1], &g).unwrap_err();
        assert!(
            e.contains("6 output channels") && e.contains("4 groups"),
            "{e}"
        );
    }

    #[test]
    fn conv_filter_larger_than_padded_input() {
        let g = geometry(&[1, 0], &[1, 1], &[1, 3]);
        let e = conv_output_dims(&[1, 1, 4, 4], &[1, 1, 3, 3], &g).unwrap_err();
        // W: dilated filter 3·2 + 1 = 7 > 4.
        assert!(e.contains("spatial dim 1") && e.contains("spans 7") && e.contains("only 4"));
    }

    #[test]
    fn broadcasting() {
        assert_eq!(broadcast(&[2, 1, 4], &[3, 1]), Some(vec![2, 3, 4]));
        assert_eq!(broadcast(&[1], &[2, 3]), Some(vec![2, 3]));
        assert_eq!(broadcast(&[5, 1, 7], &[5, 6, 1]), Some(vec![5, 6, 7]));
        assert_eq!(broadcast(&[2, 3], &[3, 3]), None);
    }

    #[test]
    fn matmul_shapes() {
        assert_eq!(matmul_output_dims(&[4, 5], &[5, 6]), Ok(vec![4, 6]));
        assert_eq!(
            matmul_output_dims(&[3, 1, 4, 5], &[7, 5, 6]),
            Ok(vec![3, 7, 4, 6])
        );
        assert_eq!(matmul_output_dims(&[2, 4, 5], &[5, 6]), Ok(vec![2, 4, 6]));
        assert_eq!(
            matmul_output_dims(&[4, 5], &[4, 6]),
            Err(MatmulShapeError::Inner { k_a: 5, k_b: 4 })
        );
        assert_eq!(
            matmul_output_dims(&[2, 4, 5], &[3, 5, 6]),
            Err(MatmulShapeError::Batch)
        );
    }

    #[test]
    fn reductions() {
        assert_eq!(check_reduction(&[2, 3, 4], &[2, 1, 1]), Ok(()));
        assert_eq!(check_reduction(&[2, 3, 4], &[1, 1, 1]), Ok(()));
        let e = check_reduction(&[2, 3, 4], &[2, 2, 1]).unwrap_err();
        assert!(e.contains("dim 1 is 2") && e.contains("(3)"), "{e}");
        let e = check_reduction(&[2, 3, 4], &[2, 1]).unwrap_err();
        assert!(e.contains("rank 2") && e.contains("rank 3"), "{e}");
    }

    #[test]
    fn norm_and_channel_dims() {
        assert_eq!(channel_dims(&[2, 5, 7, 7]), vec![1, 5, 1, 1]);
        assert_eq!(
            norm_dims(&[2, 3, 4, 5], 2),
            (vec![1, 1, 4, 5], vec![2, 3, 1, 1])
        );
    }

    #[test]
    fn layout_detection_ignores_unit_dims() {
        let nhwc = packed_strides(&[2, 3, 4, 5], TensorLayout::Nhwc).unwrap();
        assert_eq!(
            detect_layout(&[2, 3, 4, 5], &nhwc),
            TensorLayout::ChannelsLast
        );
        assert_eq!(
            detect_layout(&[2, 3, 4, 5], &[60, 20, 5, 1]),
            TensorLayout::Packed
        );
        // [1, C, 1, 1] is both; row-major wins.
        assert_eq!(
            detect_layout(&[1, 3, 1, 1], &[3, 1, 3, 3]),
            TensorLayout::Packed
        );
        // NHWC with W = 1: W's stride is arbitrary, the rest says channels-last.
        assert_eq!(
            detect_layout(&[2, 3, 4, 1], &[12, 1, 3, 999]),
            TensorLayout::ChannelsLast
        );
        // Neither: falls back to row-major.
        assert_eq!(detect_layout(&[2, 3, 4], &[1, 2, 6]), TensorLayout::Packed);
    }

    #[test]
    fn strides_for_low_ranks_are_row_major() {
        assert_eq!(
            strides_for(&[3, 4], TensorLayout::ChannelsLast),
            Ok(vec![4, 1])
        );
        assert_eq!(
            strides_for(&[2, 3, 4, 5], TensorLayout::Nhwc),
            Ok(vec![60, 1, 15, 3])
        );
    }
}
