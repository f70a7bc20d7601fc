//! Owned node attribute tables, one per member of the `NodeAttributes` union.
//!
//! Field names, order and optionality are the schema's (`schemas/*_attributes.fbs`).
//! `=> input` / `=> output` mark the tensor uids a node reads and writes.

use hipdnn_data_sdk::DataType;

use super::macros::owned_table;
use crate::wire::{
    AttentionImplementation, ConvMode, DiagonalAlignment, MoeGroupedMatmulMode, NormFwdPhase,
    PaddingMode, PointwiseMode, ReductionMode, ResampleMode,
};

owned_table! {
    /// Batch normalization for inference with precomputed mean and inverse variance.
    BatchnormInferenceAttributes / BatchnormInferenceAttributesArgs {
        x_tensor_uid: i64 => input,
        mean_tensor_uid: i64 => input,
        inv_variance_tensor_uid: i64 => input,
        scale_tensor_uid: i64 => input,
        bias_tensor_uid: i64 => input,
        y_tensor_uid: i64 => output,
    }
}

owned_table! {
    /// Batch normalization for inference from a variance and an epsilon tensor.
    BatchnormInferenceAttributesVarianceExt / BatchnormInferenceAttributesVarianceExtArgs {
        x_tensor_uid: i64 => input,
        mean_tensor_uid: i64 => input,
        variance_tensor_uid: i64 => input,
        scale_tensor_uid: i64 => input,
        bias_tensor_uid: i64 => input,
        y_tensor_uid: i64 => output,
        epsilon_tensor_uid: i64 => input,
    }
}

owned_table! {
    /// Batch normalization, training forward: batch statistics and optional running stats.
    BatchnormAttributes / BatchnormAttributesArgs {
        x_tensor_uid: i64 => input,
        scale_tensor_uid: i64 => input,
        bias_tensor_uid: i64 => input,
        epsilon_tensor_uid: i64 => input,
        peer_stats_tensor_uid: Vec<i64> => input,
        prev_running_mean_tensor_uid: Option<i64> => input,
        prev_running_variance_tensor_uid: Option<i64> => input,
        momentum_tensor_uid: Option<i64> => input,
        y_tensor_uid: i64 => output,
        mean_tensor_uid: Option<i64> => output,
        inv_variance_tensor_uid: Option<i64> => output,
        next_running_mean_tensor_uid: Option<i64> => output,
        next_running_variance_tensor_uid: Option<i64> => output,
    }
}

owned_table! {
    /// Batch normalization backward.
    BatchnormBackwardAttributes / BatchnormBackwardAttributesArgs {
        dy_tensor_uid: i64 => input,
        x_tensor_uid: i64 => input,
        mean_tensor_uid: Option<i64> => input,
        inv_variance_tensor_uid: Option<i64> => input,
        scale_tensor_uid: i64 => input,
        peer_stats_tensor_uid: Vec<i64> => input,
        dx_tensor_uid: i64 => output,
        dscale_tensor_uid: i64 => output,
        dbias_tensor_uid: i64 => output,
    }
}

owned_table! {
    /// Convolution forward (`y = conv(x, w)`).
    ConvolutionFwdAttributes / ConvolutionFwdAttributesArgs {
        x_tensor_uid: i64 => input,
        w_tensor_uid: i64 => input,
        y_tensor_uid: i64 => output,
        pre_padding: Vec<i64>,
        post_padding: Vec<i64>,
        stride: Vec<i64>,
        dilation: Vec<i64>,
        conv_mode: ConvMode,
        /// JsonLogic expression for the FLOP count, when the writer supplies one.
        umd_flops: String,
        /// JsonLogic expression for the bytes moved, when the writer supplies one.
        umd_bytes: String,
    }
}

owned_table! {
    /// Convolution data gradient (`dx` from `dy` and `w`).
    ConvolutionBwdAttributes / ConvolutionBwdAttributesArgs {
        dy_tensor_uid: i64 => input,
        w_tensor_uid: i64 => input,
        dx_tensor_uid: i64 => output,
        pre_padding: Vec<i64>,
        post_padding: Vec<i64>,
        stride: Vec<i64>,
        dilation: Vec<i64>,
        conv_mode: ConvMode,
        /// JsonLogic expression for the FLOP count.
        umd_flops: String,
        /// JsonLogic expression for the bytes moved.
        umd_bytes: String,
    }
}

owned_table! {
    /// Convolution weight gradient (`dw` from `x` and `dy`).
    ConvolutionWrwAttributes / ConvolutionWrwAttributesArgs {
        x_tensor_uid: i64 => input,
        dy_tensor_uid: i64 => input,
        dw_tensor_uid: i64 => output,
        pre_padding: Vec<i64>,
        post_padding: Vec<i64>,
        stride: Vec<i64>,
        dilation: Vec<i64>,
        conv_mode: ConvMode,
        /// JsonLogic expression for the FLOP count.
        umd_flops: String,
        /// JsonLogic expression for the bytes moved.
        umd_bytes: String,
    }
}

owned_table! {
    /// Layer normalization forward.
    LayernormAttributes / LayernormAttributesArgs {
        x_tensor_uid: i64 => input,
        scale_tensor_uid: i64 => input,
        bias_tensor_uid: i64 => input,
        epsilon_tensor_uid: i64 => input,
        y_tensor_uid: i64 => output,
        /// Number of trailing dimensions normalized over.
        normalized_dim_count: i64,
        mean_tensor_uid: Option<i64> => output,
        inv_variance_tensor_uid: Option<i64> => output,
        forward_phase: NormFwdPhase,
    }
}

owned_table! {
    /// Layer normalization backward.
    LayernormBackwardAttributes / LayernormBackwardAttributesArgs {
        dy_tensor_uid: i64 => input,
        x_tensor_uid: i64 => input,
        scale_tensor_uid: i64 => input,
        mean_tensor_uid: Option<i64> => input,
        inv_variance_tensor_uid: Option<i64> => input,
        epsilon_tensor_uid: Option<i64> => input,
        dx_tensor_uid: i64 => output,
        dscale_tensor_uid: i64 => output,
        dbias_tensor_uid: i64 => output,
        /// Number of trailing dimensions normalized over.
        normalized_dim_count: i64,
    }
}

owned_table! {
    /// RMS normalization forward.
    RMSNormAttributes / RMSNormAttributesArgs {
        x_tensor_uid: i64 => input,
        scale_tensor_uid: i64 => input,
        epsilon_tensor_uid: i64 => input,
        y_tensor_uid: i64 => output,
        bias_tensor_uid: Option<i64> => input,
        inv_rms_tensor_uid: Option<i64> => output,
        forward_phase: NormFwdPhase,
    }
}

owned_table! {
    /// RMS normalization backward.
    RMSNormBackwardAttributes / RMSNormBackwardAttributesArgs {
        dy_tensor_uid: i64 => input,
        x_tensor_uid: i64 => input,
        scale_tensor_uid: i64 => input,
        inv_rms_tensor_uid: i64 => input,
        dx_tensor_uid: i64 => output,
        dscale_tensor_uid: i64 => output,
        dbias_tensor_uid: Option<i64> => output,
    }
}

owned_table! {
    /// Matrix multiplication `c = a · b` (batched over leading dimensions).
    MatmulAttributes / MatmulAttributesArgs {
        a_tensor_uid: i64 => input,
        b_tensor_uid: i64 => input,
        c_tensor_uid: i64 => output,
        /// JsonLogic expression for the FLOP count.
        umd_flops: String,
        /// JsonLogic expression for the bytes moved.
        umd_bytes: String,
    }
}

owned_table! {
    /// Element-wise operation with up to three inputs.
    PointwiseAttributes / PointwiseAttributesArgs {
        operation: PointwiseMode,
        relu_lower_clip: Option<f32>,
        relu_upper_clip: Option<f32>,
        relu_lower_clip_slope: Option<f32>,
        /// An axis index (for `GEN_INDEX`), not a tensor uid despite the name.
        axis_tensor_uid: Option<i64>,
        in_0_tensor_uid: i64 => input,
        in_1_tensor_uid: Option<i64> => input,
        in_2_tensor_uid: Option<i64> => input,
        out_0_tensor_uid: i64 => output,
        swish_beta: Option<f32>,
        elu_alpha: Option<f32>,
        softplus_beta: Option<f32>,
    }
}

owned_table! {
    /// Block-scaled dequantization (`y = x · scale` per block).
    BlockScaleDequantizeAttributes / BlockScaleDequantizeAttributesArgs {
        x_tensor_uid: i64 => input,
        scale_tensor_uid: i64 => input,
        y_tensor_uid: i64 => output,
        /// Block extent per dimension.
        block_size: Vec<i32>,
        is_negative_scale: bool,
    }
}

owned_table! {
    /// Block-scaled quantization, producing the quantized tensor and its scales.
    BlockScaleQuantizeAttributes / BlockScaleQuantizeAttributesArgs {
        x_tensor_uid: i64 => input,
        y_tensor_uid: i64 => output,
        scale_tensor_uid: i64 => output,
        block_size: i32,
        axis: Option<i64>,
        transpose: bool,
    }
}

owned_table! {
    /// Scaled dot-product attention forward.
    SdpaAttributes / SdpaAttributesArgs {
        q_tensor_uid: i64 => input,
        k_tensor_uid: i64 => input,
        v_tensor_uid: i64 => input,
        o_tensor_uid: i64 => output,
        attn_mask_tensor_uid: Option<i64> => input,
        scale_tensor_uid: Option<i64> => input,
        seq_len_q_tensor_uid: Option<i64> => input,
        seq_len_kv_tensor_uid: Option<i64> => input,
        seed_tensor_uid: Option<i64> => input,
        offset_tensor_uid: Option<i64> => input,
        dropout_mask_tensor_uid: Option<i64> => input,
        dropout_scale_tensor_uid: Option<i64> => input,
        page_table_k_tensor_uid: Option<i64> => input,
        page_table_v_tensor_uid: Option<i64> => input,
        block_mask_tensor_uid: Option<i64> => input,
        sink_token_tensor_uid: Option<i64> => input,
        descale_q_tensor_uid: Option<i64> => input,
        descale_k_tensor_uid: Option<i64> => input,
        descale_v_tensor_uid: Option<i64> => input,
        descale_s_tensor_uid: Option<i64> => input,
        scale_s_tensor_uid: Option<i64> => input,
        scale_o_tensor_uid: Option<i64> => input,
        stats_tensor_uid: Option<i64> => output,
        max_tensor_uid: Option<i64> => output,
        sum_exp_tensor_uid: Option<i64> => output,
        rng_dump_tensor_uid: Option<i64> => output,
        amax_s_tensor_uid: Option<i64> => output,
        amax_o_tensor_uid: Option<i64> => output,
        generate_stats: Option<bool>,
        alibi_mask: bool,
        padding_mask: bool,
        /// Deprecated in favour of bounds and `diagonal_alignment`.
        causal_mask: bool,
        /// Deprecated in favour of bounds and `diagonal_alignment`.
        causal_mask_bottom_right: bool,
        dropout_probability: Option<f32>,
        attn_scale_value: Option<f32>,
        left_bound: Option<i64>,
        right_bound: Option<i64>,
        max_seq_len_kv: Option<i32>,
        diagonal_alignment: DiagonalAlignment,
        mma_core_mode: DataType,
        implementation: AttentionImplementation,
        /// JsonLogic expression for the FLOP count.
        umd_flops: String,
        /// JsonLogic expression for the bytes moved.
        umd_bytes: String,
    }
}

owned_table! {
    /// Scaled dot-product attention backward.
    SdpaBackwardAttributes / SdpaBackwardAttributesArgs {
        q_tensor_uid: i64 => input,
        k_tensor_uid: i64 => input,
        v_tensor_uid: i64 => input,
        o_tensor_uid: i64 => input,
        do_tensor_uid: i64 => input,
        stats_tensor_uid: i64 => input,
        dq_tensor_uid: i64 => output,
        dk_tensor_uid: i64 => output,
        dv_tensor_uid: i64 => output,
        scale_tensor_uid: Option<i64> => input,
        attn_mask_tensor_uid: Option<i64> => input,
        seq_len_q_tensor_uid: Option<i64> => input,
        seq_len_kv_tensor_uid: Option<i64> => input,
        seed_tensor_uid: Option<i64> => input,
        offset_tensor_uid: Option<i64> => input,
        dropout_mask_tensor_uid: Option<i64> => input,
        dropout_scale_tensor_uid: Option<i64> => input,
        dropout_scale_inv_tensor_uid: Option<i64> => input,
        dbias_tensor_uid: Option<i64> => output,
        alibi_mask: bool,
        padding_mask: bool,
        /// Deprecated in favour of bounds and `diagonal_alignment`.
        causal_mask: bool,
        /// Deprecated in favour of bounds and `diagonal_alignment`.
        causal_mask_bottom_right: bool,
        dropout_probability: Option<f32>,
        attn_scale_value: Option<f32>,
        left_bound: Option<i64>,
        right_bound: Option<i64>,
        diagonal_alignment: DiagonalAlignment,
    }
}

owned_table! {
    /// A plugin-defined operation with an opaque payload.
    CustomOpAttributes / CustomOpAttributesArgs {
        /// `"<plugin>.<operation>"`.
        custom_op_id: String,
        input_tensor_uids: Vec<i64> => input,
        output_tensor_uids: Vec<i64> => output,
        /// Opaque bytes interpreted by the plugin that owns `custom_op_id`.
        data: Vec<u8>,
        test_generation_marker: i32,
    }
}

owned_table! {
    /// Reduction of `in` into `out` over the dimensions where `out` has extent 1.
    ReductionAttributes / ReductionAttributesArgs {
        mode: ReductionMode,
        in_tensor_uid: i64 => input,
        out_tensor_uid: i64 => output,
        is_deterministic: bool,
    }
}

owned_table! {
    /// Pooling-style resampling forward.
    ResampleFwdAttributes / ResampleFwdAttributesArgs {
        x_tensor_uid: i64 => input,
        y_tensor_uid: i64 => output,
        index_tensor_uid: Option<i64> => output,
        pre_padding: Vec<i64>,
        post_padding: Vec<i64>,
        stride: Vec<i64>,
        window: Vec<i64>,
        resample_mode: ResampleMode,
        padding_mode: PaddingMode,
        generate_index: bool,
    }
}

owned_table! {
    /// Pooling-style resampling backward.
    ResampleBwdAttributes / ResampleBwdAttributesArgs {
        dy_tensor_uid: i64 => input,
        dx_tensor_uid: i64 => output,
        index_tensor_uid: Option<i64> => input,
        pre_padding: Vec<i64>,
        post_padding: Vec<i64>,
        stride: Vec<i64>,
        window: Vec<i64>,
        resample_mode: ResampleMode,
        padding_mode: PaddingMode,
    }
}

owned_table! {
    /// Mixture-of-experts grouped matrix multiplication.
    MoeGroupedMatmulAttributes / MoeGroupedMatmulAttributesArgs {
        token_tensor_uid: i64 => input,
        weight_tensor_uid: i64 => input,
        /// Group boundaries.
        first_token_offset_tensor_uid: i64 => input,
        token_index_tensor_uid: Option<i64> => input,
        token_ks_tensor_uid: Option<i64> => input,
        output_tensor_uid: i64 => output,
        mode: MoeGroupedMatmulMode,
        top_k: i32,
    }
}

owned_table! {
    /// Mixture-of-experts grouped matrix multiplication, weight gradient.
    MoeGroupedMatmulBwdAttributes / MoeGroupedMatmulBwdAttributesArgs {
        doutput_tensor_uid: i64 => input,
        token_tensor_uid: i64 => input,
        first_token_offset_tensor_uid: i64 => input,
        dweight_tensor_uid: i64 => output,
    }
}

/// The geometry the three convolution tables (forward, data gradient, weight gradient)
/// share, borrowed from one of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConvGeometryRef<'a> {
    /// Padding before each spatial dim.
    pub pre_padding: &'a [i64],
    /// Padding after each spatial dim.
    pub post_padding: &'a [i64],
    /// Stride per spatial dim.
    pub stride: &'a [i64],
    /// Dilation per spatial dim.
    pub dilation: &'a [i64],
    /// Convolution or cross-correlation.
    pub conv_mode: ConvMode,
}

macro_rules! conv_geometry {
    ($($table:ident),*) => {$(
        impl $table {
            /// Padding, stride, dilation and mode.
            pub fn geometry(&self) -> ConvGeometryRef<'_> {
                ConvGeometryRef {
                    pre_padding: &self.pre_padding,
                    post_padding: &self.post_padding,
                    stride: &self.stride,
                    dilation: &self.dilation,
                    conv_mode: self.conv_mode,
                }
            }
        }
    )*};
}

conv_geometry!(
    ConvolutionFwdAttributes,
    ConvolutionBwdAttributes,
    ConvolutionWrwAttributes
);
