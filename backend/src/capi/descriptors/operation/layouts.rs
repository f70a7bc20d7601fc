//! The layouts of the table-driven operations: hipDNN's attributes for each (names,
//! numbers and value types from its interface), which are required, and the node each
//! builds. Slots are listed in hipDNN's attribute order, which is also the order its
//! graph lists the node's tensors in.

use std::sync::Arc;

use hipdnn_data_sdk::DataType;
use hipdnn_flatbuffers_sdk::model::{
    BatchnormAttributes, BatchnormBackwardAttributes, BatchnormInferenceAttributes,
    BatchnormInferenceAttributesVarianceExt, BlockScaleDequantizeAttributes,
    BlockScaleQuantizeAttributes, CustomOpAttributes, LayernormAttributes,
    LayernormBackwardAttributes, MatmulAttributes, MoeGroupedMatmulAttributes,
    MoeGroupedMatmulBwdAttributes, NodeAttributes, RMSNormAttributes, RMSNormBackwardAttributes,
    ReductionAttributes, ResampleFwdAttributes, SdpaAttributes, SdpaBackwardAttributes,
};
use hipdnn_flatbuffers_sdk::wire::{
    AttentionImplementation, DiagonalAlignment, MoeGroupedMatmulMode, NormFwdPhase, PaddingMode,
    ReductionMode, ResampleMode,
};

use super::super::tensor::FrozenTensor;
use super::table::{CEnum, Layout, Parts, Unbuilt, Value, params, slots};
use crate::capi::enums::tables::*;

/// `hipdnnReduceTensorOp_t` (`HIPDNN_REDUCE_TENSOR_ADD` … `_MUL_NO_ZEROS`).
static REDUCE_TENSOR_OP: CEnum = CEnum {
    ty: HIPDNN_TYPE_REDUCTION_OPERATOR_TYPE,
    type_name: "hipdnnReduceTensorOp_t",
    values: HIPDNN_REDUCE_TENSOR_ADD..=HIPDNN_REDUCE_TENSOR_MUL_NO_ZEROS,
    int64_too: false,
};

/// `hipdnnNormFwdPhase_t`; hipDNN's RMS-norm packer sets the same numbers as an `INT64`.
static NORM_FWD_PHASE: CEnum = CEnum {
    ty: HIPDNN_TYPE_NORM_FWD_PHASE,
    type_name: "hipdnnNormFwdPhase_t",
    values: HIPDNN_NORM_FWD_INFERENCE..=HIPDNN_NORM_FWD_TRAINING,
    int64_too: true,
};

/// `hipdnnResampleMode_t`.
static RESAMPLE_MODE: CEnum = CEnum {
    ty: HIPDNN_TYPE_RESAMPLE_MODE,
    type_name: "hipdnnResampleMode_t",
    values: HIPDNN_RESAMPLE_MAXPOOL..=HIPDNN_RESAMPLE_AVGPOOL_INCLUDE_PADDING,
    int64_too: false,
};

/// `hipdnnPaddingMode_t`.
static PADDING_MODE: CEnum = CEnum {
    ty: HIPDNN_TYPE_PADDING_MODE,
    type_name: "hipdnnPaddingMode_t",
    values: HIPDNN_PADDING_NEG_INF_PAD..=HIPDNN_PADDING_ZERO_PAD,
    int64_too: false,
};

/// `hipdnnDiagonalAlignment_t`; hipDNN's earlier SDPA descriptors took it as an `INT64`.
static DIAGONAL_ALIGNMENT: CEnum = CEnum {
    ty: HIPDNN_TYPE_DIAGONAL_ALIGNMENT_EXT,
    type_name: "hipdnnDiagonalAlignment_t",
    values: HIPDNN_DIAGONAL_ALIGNMENT_TOP_LEFT_EXT..=HIPDNN_DIAGONAL_ALIGNMENT_BOTTOM_RIGHT_EXT,
    int64_too: true,
};

/// `hipdnnAttentionImplementation_t`; earlier as an `INT64` too.
static ATTENTION_IMPLEMENTATION: CEnum = CEnum {
    ty: HIPDNN_TYPE_ATTENTION_IMPLEMENTATION_EXT,
    type_name: "hipdnnAttentionImplementation_t",
    values: HIPDNN_ATTENTION_IMPLEMENTATION_AUTO_EXT..=HIPDNN_ATTENTION_IMPLEMENTATION_UNIFIED_EXT,
    int64_too: true,
};

/// `hipdnnMoeGroupedMatmulMode_t`.
static MOE_GROUPED_MATMUL_MODE: CEnum = CEnum {
    ty: HIPDNN_TYPE_MOE_GROUPED_MATMUL_MODE,
    type_name: "hipdnnMoeGroupedMatmulMode_t",
    values: HIPDNN_MOE_GROUPED_MATMUL_MODE_NONE..=HIPDNN_MOE_GROUPED_MATMUL_MODE_SCATTER,
    int64_too: false,
};

static BATCHNORM_INFERENCE: Layout = Layout {
    type_name: "OPERATION_BATCHNORM_INFERENCE_EXT",
    operation_type: Some(HIPDNN_OPERATION_TYPE_BATCHNORM_INFERENCE),
    slots: slots![
        required HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_X_EXT,
        required HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_MEAN_EXT,
        required HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_INV_VARIANCE_EXT,
        required HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_SCALE_EXT,
        required HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_BIAS_EXT,
        required HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_Y_EXT,
    ],
    arrays: &[],
    params: &[],
    compute: (
        HIPDNN_ATTR_BATCHNORM_INF_COMP_TYPE_EXT,
        "HIPDNN_ATTR_BATCHNORM_INF_COMP_TYPE_EXT",
    ),
    together: &[],
    check: None,
    build: |p| {
        BatchnormInferenceAttributes {
            x_tensor_uid: p.uid(0),
            mean_tensor_uid: p.uid(1),
            inv_variance_tensor_uid: p.uid(2),
            scale_tensor_uid: p.uid(3),
            bias_tensor_uid: p.uid(4),
            y_tensor_uid: p.uid(5),
        }
        .into()
    },
};

static BATCHNORM_INFERENCE_VARIANCE: Layout = Layout {
    type_name: "OPERATION_BATCHNORM_INFERENCE_VARIANCE_EXT",
    operation_type: Some(HIPDNN_OPERATION_TYPE_BATCHNORM_INFERENCE_VARIANCE),
    slots: slots![
        required HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_VARIANCE_X_EXT,
        required HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_VARIANCE_MEAN_EXT,
        required HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_VARIANCE_VARIANCE_EXT,
        required HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_VARIANCE_SCALE_EXT,
        required HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_VARIANCE_BIAS_EXT,
        required HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_VARIANCE_Y_EXT,
        required HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_VARIANCE_EPSILON_EXT,
    ],
    arrays: &[],
    params: &[],
    compute: (
        HIPDNN_ATTR_BATCHNORM_INF_VAR_COMP_TYPE_EXT,
        "HIPDNN_ATTR_BATCHNORM_INF_VAR_COMP_TYPE_EXT",
    ),
    together: &[],
    check: None,
    build: |p| {
        BatchnormInferenceAttributesVarianceExt {
            x_tensor_uid: p.uid(0),
            mean_tensor_uid: p.uid(1),
            variance_tensor_uid: p.uid(2),
            scale_tensor_uid: p.uid(3),
            bias_tensor_uid: p.uid(4),
            y_tensor_uid: p.uid(5),
            epsilon_tensor_uid: p.uid(6),
        }
        .into()
    },
};

static BATCHNORM: Layout = Layout {
    type_name: "OPERATION_BATCHNORM_EXT",
    operation_type: Some(HIPDNN_OPERATION_TYPE_BATCHNORM),
    slots: slots![
        required HIPDNN_ATTR_OPERATION_BATCHNORM_X_EXT,
        required HIPDNN_ATTR_OPERATION_BATCHNORM_SCALE_EXT,
        required HIPDNN_ATTR_OPERATION_BATCHNORM_BIAS_EXT,
        required HIPDNN_ATTR_OPERATION_BATCHNORM_EPSILON_EXT,
        required HIPDNN_ATTR_OPERATION_BATCHNORM_Y_EXT,
        optional HIPDNN_ATTR_OPERATION_BATCHNORM_MEAN_EXT,
        optional HIPDNN_ATTR_OPERATION_BATCHNORM_INV_VARIANCE_EXT,
        optional HIPDNN_ATTR_OPERATION_BATCHNORM_PREV_RUNNING_MEAN_EXT,
        optional HIPDNN_ATTR_OPERATION_BATCHNORM_PREV_RUNNING_VARIANCE_EXT,
        optional HIPDNN_ATTR_OPERATION_BATCHNORM_MOMENTUM_EXT,
        optional HIPDNN_ATTR_OPERATION_BATCHNORM_NEXT_RUNNING_MEAN_EXT,
        optional HIPDNN_ATTR_OPERATION_BATCHNORM_NEXT_RUNNING_VARIANCE_EXT,
    ],
    arrays: slots![optional HIPDNN_ATTR_OPERATION_BATCHNORM_PEER_STATS_EXT],
    params: &[],
    compute: (
        HIPDNN_ATTR_BATCHNORM_COMP_TYPE_EXT,
        "HIPDNN_ATTR_BATCHNORM_COMP_TYPE_EXT",
    ),
    // The saved statistics as a pair; the running statistics all five or none.
    together: &[&[5, 6], &[7, 8, 9, 10, 11]],
    check: None,
    build: |p| {
        BatchnormAttributes {
            x_tensor_uid: p.uid(0),
            scale_tensor_uid: p.uid(1),
            bias_tensor_uid: p.uid(2),
            epsilon_tensor_uid: p.uid(3),
            y_tensor_uid: p.uid(4),
            mean_tensor_uid: p.opt(5),
            inv_variance_tensor_uid: p.opt(6),
            prev_running_mean_tensor_uid: p.opt(7),
            prev_running_variance_tensor_uid: p.opt(8),
            momentum_tensor_uid: p.opt(9),
            next_running_mean_tensor_uid: p.opt(10),
            next_running_variance_tensor_uid: p.opt(11),
            peer_stats_tensor_uid: p.array(0),
        }
        .into()
    },
};

static BATCHNORM_BACKWARD: Layout = Layout {
    type_name: "OPERATION_BATCHNORM_BACKWARD_EXT",
    operation_type: Some(HIPDNN_OPERATION_TYPE_BATCHNORM_BACKWARD),
    slots: slots![
        required HIPDNN_ATTR_OPERATION_BATCHNORM_BACKWARD_DY_EXT,
        required HIPDNN_ATTR_OPERATION_BATCHNORM_BACKWARD_X_EXT,
        required HIPDNN_ATTR_OPERATION_BATCHNORM_BACKWARD_SCALE_EXT,
        required HIPDNN_ATTR_OPERATION_BATCHNORM_BACKWARD_DX_EXT,
        required HIPDNN_ATTR_OPERATION_BATCHNORM_BACKWARD_DSCALE_EXT,
        required HIPDNN_ATTR_OPERATION_BATCHNORM_BACKWARD_DBIAS_EXT,
        optional HIPDNN_ATTR_OPERATION_BATCHNORM_BACKWARD_MEAN_EXT,
        optional HIPDNN_ATTR_OPERATION_BATCHNORM_BACKWARD_INV_VARIANCE_EXT,
    ],
    arrays: slots![optional HIPDNN_ATTR_OPERATION_BATCHNORM_BACKWARD_PEER_STATS_EXT],
    params: &[],
    compute: (
        HIPDNN_ATTR_BATCHNORM_BACKWARD_COMP_TYPE_EXT,
        "HIPDNN_ATTR_BATCHNORM_BACKWARD_COMP_TYPE_EXT",
    ),
    together: &[&[6, 7]],
    check: None,
    build: |p| {
        BatchnormBackwardAttributes {
            dy_tensor_uid: p.uid(0),
            x_tensor_uid: p.uid(1),
            scale_tensor_uid: p.uid(2),
            dx_tensor_uid: p.uid(3),
            dscale_tensor_uid: p.uid(4),
            dbias_tensor_uid: p.uid(5),
            mean_tensor_uid: p.opt(6),
            inv_variance_tensor_uid: p.opt(7),
            peer_stats_tensor_uid: p.array(0),
        }
        .into()
    },
};

static MATMUL: Layout = Layout {
    type_name: "OPERATION_MATMUL",
    operation_type: Some(HIPDNN_OPERATION_TYPE_MATMUL),
    slots: slots![
        required HIPDNN_ATTR_OPERATION_MATMUL_ADESC,
        required HIPDNN_ATTR_OPERATION_MATMUL_BDESC,
        required HIPDNN_ATTR_OPERATION_MATMUL_CDESC,
    ],
    arrays: &[],
    params: &[],
    compute: (HIPDNN_ATTR_MATMUL_COMP_TYPE, "HIPDNN_ATTR_MATMUL_COMP_TYPE"),
    together: &[],
    check: None,
    build: |p| {
        MatmulAttributes {
            a_tensor_uid: p.uid(0),
            b_tensor_uid: p.uid(1),
            c_tensor_uid: p.uid(2),
            ..MatmulAttributes::default()
        }
        .into()
    },
};

static REDUCTION: Layout = Layout {
    type_name: "OPERATION_REDUCTION",
    operation_type: Some(HIPDNN_OPERATION_TYPE_REDUCTION),
    slots: slots![
        required HIPDNN_ATTR_OPERATION_REDUCTION_XDESC,
        required HIPDNN_ATTR_OPERATION_REDUCTION_YDESC,
    ],
    arrays: &[],
    params: params![
        required HIPDNN_ATTR_REDUCTION_OPERATOR: Enum(&REDUCE_TENSOR_OP),
        optional HIPDNN_ATTR_REDUCTION_IS_DETERMINISTIC: Bool,
    ],
    compute: (
        HIPDNN_ATTR_REDUCTION_COMP_TYPE,
        "HIPDNN_ATTR_REDUCTION_COMP_TYPE",
    ),
    together: &[],
    check: None,
    build: |p| {
        ReductionAttributes {
            mode: ReductionMode(p.code(0)),
            in_tensor_uid: p.uid(0),
            out_tensor_uid: p.uid(1),
            is_deterministic: p.flag(1),
        }
        .into()
    },
};

static LAYERNORM: Layout = Layout {
    type_name: "OPERATION_LAYERNORM_EXT",
    operation_type: Some(HIPDNN_OPERATION_TYPE_LAYERNORM),
    slots: slots![
        required HIPDNN_ATTR_OPERATION_LAYERNORM_X_EXT,
        required HIPDNN_ATTR_OPERATION_LAYERNORM_SCALE_EXT,
        required HIPDNN_ATTR_OPERATION_LAYERNORM_BIAS_EXT,
        required HIPDNN_ATTR_OPERATION_LAYERNORM_EPSILON_EXT,
        required HIPDNN_ATTR_OPERATION_LAYERNORM_Y_EXT,
        optional HIPDNN_ATTR_OPERATION_LAYERNORM_MEAN_EXT,
        optional HIPDNN_ATTR_OPERATION_LAYERNORM_INV_VARIANCE_EXT,
    ],
    arrays: &[],
    params: params![
        required HIPDNN_ATTR_OPERATION_LAYERNORM_FWD_PHASE_EXT: Enum(&NORM_FWD_PHASE),
        optional HIPDNN_ATTR_OPERATION_LAYERNORM_NORMALIZED_DIM_COUNT_EXT: Int64,
    ],
    compute: (
        HIPDNN_ATTR_LAYERNORM_COMP_TYPE_EXT,
        "HIPDNN_ATTR_LAYERNORM_COMP_TYPE_EXT",
    ),
    // The saved statistics as a pair, as hipDNN checks.
    together: &[&[5, 6]],
    check: None,
    build: |p| {
        LayernormAttributes {
            x_tensor_uid: p.uid(0),
            scale_tensor_uid: p.uid(1),
            bias_tensor_uid: p.uid(2),
            epsilon_tensor_uid: p.uid(3),
            y_tensor_uid: p.uid(4),
            normalized_dim_count: p.i64(1).unwrap_or_default(),
            mean_tensor_uid: p.opt(5),
            inv_variance_tensor_uid: p.opt(6),
            forward_phase: NormFwdPhase(p.code(0)),
        }
        .into()
    },
};

static RMSNORM: Layout = Layout {
    type_name: "OPERATION_RMSNORM_EXT",
    operation_type: Some(HIPDNN_OPERATION_TYPE_RMSNORM),
    slots: slots![
        required HIPDNN_ATTR_OPERATION_RMSNORM_X_EXT,
        required HIPDNN_ATTR_OPERATION_RMSNORM_SCALE_EXT,
        required HIPDNN_ATTR_OPERATION_RMSNORM_EPSILON_EXT,
        required HIPDNN_ATTR_OPERATION_RMSNORM_Y_EXT,
        optional HIPDNN_ATTR_OPERATION_RMSNORM_BIAS_EXT,
        optional HIPDNN_ATTR_OPERATION_RMSNORM_INV_RMS_EXT,
    ],
    arrays: &[],
    params: params![
        required HIPDNN_ATTR_OPERATION_RMSNORM_FWD_PHASE_EXT: Enum(&NORM_FWD_PHASE),
    ],
    compute: (
        HIPDNN_ATTR_RMSNORM_COMP_TYPE_EXT,
        "HIPDNN_ATTR_RMSNORM_COMP_TYPE_EXT",
    ),
    together: &[],
    check: None,
    build: |p| {
        RMSNormAttributes {
            x_tensor_uid: p.uid(0),
            scale_tensor_uid: p.uid(1),
            epsilon_tensor_uid: p.uid(2),
            y_tensor_uid: p.uid(3),
            bias_tensor_uid: p.opt(4),
            inv_rms_tensor_uid: p.opt(5),
            forward_phase: NormFwdPhase(p.code(0)),
        }
        .into()
    },
};

static RESAMPLE_FWD: Layout = Layout {
    type_name: "OPERATION_RESAMPLE_FWD",
    // hipDNN's first name for the kind (its value 18 is the resample forward one).
    operation_type: Some(HIPDNN_OPERATION_TYPE_POOLING_FORWARD),
    slots: slots![
        required HIPDNN_ATTR_OPERATION_RESAMPLE_FWD_XDESC,
        required HIPDNN_ATTR_OPERATION_RESAMPLE_FWD_YDESC,
        optional HIPDNN_ATTR_OPERATION_RESAMPLE_FWD_IDXDESC,
    ],
    arrays: &[],
    params: params![
        required HIPDNN_ATTR_RESAMPLE_PRE_PADDINGS: Int64s,
        required HIPDNN_ATTR_RESAMPLE_POST_PADDINGS: Int64s,
        required HIPDNN_ATTR_RESAMPLE_STRIDES: Int64s,
        required HIPDNN_ATTR_RESAMPLE_WINDOW_DIMS: Int64s,
        required HIPDNN_ATTR_RESAMPLE_MODE: Enum(&RESAMPLE_MODE),
        required HIPDNN_ATTR_RESAMPLE_PADDING_MODE: Enum(&PADDING_MODE),
        optional HIPDNN_ATTR_RESAMPLE_GENERATE_INDEX_EXT: Bool,
    ],
    compute: (
        HIPDNN_ATTR_RESAMPLE_COMP_TYPE,
        "HIPDNN_ATTR_RESAMPLE_COMP_TYPE",
    ),
    together: &[],
    check: None,
    build: |p| {
        ResampleFwdAttributes {
            x_tensor_uid: p.uid(0),
            y_tensor_uid: p.uid(1),
            index_tensor_uid: p.opt(2),
            pre_padding: p.i64s(0),
            post_padding: p.i64s(1),
            stride: p.i64s(2),
            window: p.i64s(3),
            resample_mode: ResampleMode(p.code(4)),
            padding_mode: PaddingMode(p.code(5)),
            generate_index: p.flag(6),
        }
        .into()
    },
};

static LAYERNORM_BACKWARD: Layout = Layout {
    type_name: "OPERATION_LAYERNORM_BACKWARD_EXT",
    // This header's hipdnnOperationType_t has no value for it.
    operation_type: None,
    slots: slots![
        required HIPDNN_ATTR_OPERATION_LAYERNORM_BACKWARD_DY_EXT,
        required HIPDNN_ATTR_OPERATION_LAYERNORM_BACKWARD_X_EXT,
        required HIPDNN_ATTR_OPERATION_LAYERNORM_BACKWARD_SCALE_EXT,
        optional HIPDNN_ATTR_OPERATION_LAYERNORM_BACKWARD_MEAN_EXT,
        optional HIPDNN_ATTR_OPERATION_LAYERNORM_BACKWARD_INV_VARIANCE_EXT,
        optional HIPDNN_ATTR_OPERATION_LAYERNORM_BACKWARD_EPSILON_EXT,
        required HIPDNN_ATTR_OPERATION_LAYERNORM_BACKWARD_DX_EXT,
        required HIPDNN_ATTR_OPERATION_LAYERNORM_BACKWARD_DSCALE_EXT,
        required HIPDNN_ATTR_OPERATION_LAYERNORM_BACKWARD_DBIAS_EXT,
    ],
    arrays: &[],
    params: params![
        optional HIPDNN_ATTR_LAYERNORM_BACKWARD_NORMALIZED_DIM_COUNT_EXT: Int64,
    ],
    compute: (
        HIPDNN_ATTR_LAYERNORM_BACKWARD_COMP_TYPE_EXT,
        "HIPDNN_ATTR_LAYERNORM_BACKWARD_COMP_TYPE_EXT",
    ),
    together: &[],
    check: None,
    build: |p| {
        LayernormBackwardAttributes {
            dy_tensor_uid: p.uid(0),
            x_tensor_uid: p.uid(1),
            scale_tensor_uid: p.uid(2),
            mean_tensor_uid: p.opt(3),
            inv_variance_tensor_uid: p.opt(4),
            epsilon_tensor_uid: p.opt(5),
            dx_tensor_uid: p.uid(6),
            dscale_tensor_uid: p.uid(7),
            dbias_tensor_uid: p.uid(8),
            normalized_dim_count: p.i64(0).unwrap_or_default(),
        }
        .into()
    },
};

static RMSNORM_BACKWARD: Layout = Layout {
    type_name: "OPERATION_RMSNORM_BACKWARD_EXT",
    // This header's hipdnnOperationType_t has no value for it.
    operation_type: None,
    slots: slots![
        required HIPDNN_ATTR_OPERATION_RMSNORM_BACKWARD_DY_EXT,
        required HIPDNN_ATTR_OPERATION_RMSNORM_BACKWARD_X_EXT,
        required HIPDNN_ATTR_OPERATION_RMSNORM_BACKWARD_SCALE_EXT,
        required HIPDNN_ATTR_OPERATION_RMSNORM_BACKWARD_INV_RMS_EXT,
        required HIPDNN_ATTR_OPERATION_RMSNORM_BACKWARD_DX_EXT,
        required HIPDNN_ATTR_OPERATION_RMSNORM_BACKWARD_DSCALE_EXT,
        optional HIPDNN_ATTR_OPERATION_RMSNORM_BACKWARD_DBIAS_EXT,
    ],
    arrays: &[],
    params: &[],
    compute: (
        HIPDNN_ATTR_RMSNORM_BACKWARD_COMP_TYPE_EXT,
        "HIPDNN_ATTR_RMSNORM_BACKWARD_COMP_TYPE_EXT",
    ),
    together: &[],
    check: None,
    build: |p| {
        RMSNormBackwardAttributes {
            dy_tensor_uid: p.uid(0),
            x_tensor_uid: p.uid(1),
            scale_tensor_uid: p.uid(2),
            inv_rms_tensor_uid: p.uid(3),
            dx_tensor_uid: p.uid(4),
            dscale_tensor_uid: p.uid(5),
            dbias_tensor_uid: p.opt(6),
        }
        .into()
    },
};

static SDPA_FWD: Layout = Layout {
    type_name: "OPERATION_SDPA_FWD",
    operation_type: Some(HIPDNN_OPERATION_TYPE_SDPA_FORWARD),
    slots: slots![
        required HIPDNN_ATTR_OPERATION_SDPA_FWD_QDESC,
        required HIPDNN_ATTR_OPERATION_SDPA_FWD_KDESC,
        required HIPDNN_ATTR_OPERATION_SDPA_FWD_VDESC,
        required HIPDNN_ATTR_OPERATION_SDPA_FWD_ODESC,
        optional HIPDNN_ATTR_OPERATION_SDPA_FWD_ATTN_MASK_EXT,
        optional HIPDNN_ATTR_OPERATION_SDPA_FWD_SCALEDESC,
        optional HIPDNN_ATTR_OPERATION_SDPA_FWD_SEQ_LEN_QDESC,
        optional HIPDNN_ATTR_OPERATION_SDPA_FWD_SEQ_LEN_KVDESC,
        optional HIPDNN_ATTR_OPERATION_SDPA_FWD_SEED_EXT,
        optional HIPDNN_ATTR_OPERATION_SDPA_FWD_OFFSET_EXT,
        optional HIPDNN_ATTR_OPERATION_SDPA_FWD_DROPOUT_MASK_EXT,
        optional HIPDNN_ATTR_OPERATION_SDPA_FWD_DROPOUT_SCALE_EXT,
        optional HIPDNN_ATTR_OPERATION_SDPA_FWD_PAGE_TABLE_KDESC,
        optional HIPDNN_ATTR_OPERATION_SDPA_FWD_PAGE_TABLE_VDESC,
        optional HIPDNN_ATTR_OPERATION_SDPA_FWD_BLOCK_MASK_DESC,
        optional HIPDNN_ATTR_OPERATION_SDPA_FWD_SINK_TOKEN_EXT,
        optional HIPDNN_ATTR_OPERATION_SDPA_FWD_DESCALE_Q_EXT,
        optional HIPDNN_ATTR_OPERATION_SDPA_FWD_DESCALE_K_EXT,
        optional HIPDNN_ATTR_OPERATION_SDPA_FWD_DESCALE_V_EXT,
        optional HIPDNN_ATTR_OPERATION_SDPA_FWD_DESCALE_S_EXT,
        optional HIPDNN_ATTR_OPERATION_SDPA_FWD_SCALE_S_EXT,
        optional HIPDNN_ATTR_OPERATION_SDPA_FWD_SCALE_O_EXT,
        optional HIPDNN_ATTR_OPERATION_SDPA_FWD_STATSDESC,
        optional HIPDNN_ATTR_OPERATION_SDPA_FWD_MAX_EXT,
        optional HIPDNN_ATTR_OPERATION_SDPA_FWD_SUM_EXP_EXT,
        optional HIPDNN_ATTR_OPERATION_SDPA_FWD_RNG_DUMP_EXT,
        optional HIPDNN_ATTR_OPERATION_SDPA_FWD_AMAX_S_EXT,
        optional HIPDNN_ATTR_OPERATION_SDPA_FWD_AMAX_O_EXT,
    ],
    arrays: &[],
    params: params![
        optional HIPDNN_ATTR_SDPA_FWD_GENERATE_STATS_EXT: Bool,
        optional HIPDNN_ATTR_SDPA_FWD_ALIBI_MASK_EXT: Bool,
        optional HIPDNN_ATTR_SDPA_FWD_PADDING_MASK_EXT: Bool,
        optional HIPDNN_ATTR_SDPA_FWD_CAUSAL_MASK_EXT: Bool,
        optional HIPDNN_ATTR_SDPA_FWD_CAUSAL_MASK_BOTTOM_RIGHT_EXT: Bool,
        optional HIPDNN_ATTR_SDPA_FWD_DROPOUT_PROBABILITY_EXT: Float,
        optional HIPDNN_ATTR_SDPA_FWD_ATTN_SCALE_VALUE_EXT: Float,
        optional HIPDNN_ATTR_SDPA_FWD_LEFT_BOUND_EXT: Int64,
        optional HIPDNN_ATTR_SDPA_FWD_RIGHT_BOUND_EXT: Int64,
        optional HIPDNN_ATTR_SDPA_FWD_MAX_SEQ_LEN_KV_EXT: Int32,
        optional HIPDNN_ATTR_SDPA_FWD_DIAGONAL_ALIGNMENT_EXT: Enum(&DIAGONAL_ALIGNMENT),
        optional HIPDNN_ATTR_SDPA_FWD_MMA_CORE_MODE_EXT: Data,
        optional HIPDNN_ATTR_SDPA_FWD_IMPLEMENTATION_EXT: Enum(&ATTENTION_IMPLEMENTATION),
    ],
    compute: (
        HIPDNN_ATTR_SDPA_FWD_COMP_TYPE_EXT,
        "HIPDNN_ATTR_SDPA_FWD_COMP_TYPE_EXT",
    ),
    together: &[],
    check: None,
    build: |p| {
        SdpaAttributes {
            q_tensor_uid: p.uid(0),
            k_tensor_uid: p.uid(1),
            v_tensor_uid: p.uid(2),
            o_tensor_uid: p.uid(3),
            attn_mask_tensor_uid: p.opt(4),
            scale_tensor_uid: p.opt(5),
            seq_len_q_tensor_uid: p.opt(6),
            seq_len_kv_tensor_uid: p.opt(7),
            seed_tensor_uid: p.opt(8),
            offset_tensor_uid: p.opt(9),
            dropout_mask_tensor_uid: p.opt(10),
            dropout_scale_tensor_uid: p.opt(11),
            page_table_k_tensor_uid: p.opt(12),
            page_table_v_tensor_uid: p.opt(13),
            block_mask_tensor_uid: p.opt(14),
            sink_token_tensor_uid: p.opt(15),
            descale_q_tensor_uid: p.opt(16),
            descale_k_tensor_uid: p.opt(17),
            descale_v_tensor_uid: p.opt(18),
            descale_s_tensor_uid: p.opt(19),
            scale_s_tensor_uid: p.opt(20),
            scale_o_tensor_uid: p.opt(21),
            stats_tensor_uid: p.opt(22),
            max_tensor_uid: p.opt(23),
            sum_exp_tensor_uid: p.opt(24),
            rng_dump_tensor_uid: p.opt(25),
            amax_s_tensor_uid: p.opt(26),
            amax_o_tensor_uid: p.opt(27),
            generate_stats: p.opt_flag(0),
            alibi_mask: p.flag(1),
            padding_mask: p.flag(2),
            causal_mask: p.flag(3),
            causal_mask_bottom_right: p.flag(4),
            dropout_probability: p.f32(5),
            attn_scale_value: p.f32(6),
            left_bound: p.i64(7),
            right_bound: p.i64(8),
            max_seq_len_kv: p.i32(9),
            diagonal_alignment: DiagonalAlignment(p.code(10)),
            mma_core_mode: p.data(11),
            implementation: AttentionImplementation(p.code(12)),
            ..SdpaAttributes::default()
        }
        .into()
    },
};

static SDPA_BWD: Layout = Layout {
    type_name: "OPERATION_SDPA_BWD_EXT",
    operation_type: Some(HIPDNN_OPERATION_TYPE_SDPA_BACKWARD),
    slots: slots![
        required HIPDNN_ATTR_OPERATION_SDPA_BWD_Q_EXT,
        required HIPDNN_ATTR_OPERATION_SDPA_BWD_K_EXT,
        required HIPDNN_ATTR_OPERATION_SDPA_BWD_V_EXT,
        required HIPDNN_ATTR_OPERATION_SDPA_BWD_O_EXT,
        required HIPDNN_ATTR_OPERATION_SDPA_BWD_DO_EXT,
        required HIPDNN_ATTR_OPERATION_SDPA_BWD_STATS_EXT,
        required HIPDNN_ATTR_OPERATION_SDPA_BWD_DQ_EXT,
        required HIPDNN_ATTR_OPERATION_SDPA_BWD_DK_EXT,
        required HIPDNN_ATTR_OPERATION_SDPA_BWD_DV_EXT,
        optional HIPDNN_ATTR_OPERATION_SDPA_BWD_SCALE_EXT,
        optional HIPDNN_ATTR_OPERATION_SDPA_BWD_ATTN_MASK_EXT,
        optional HIPDNN_ATTR_OPERATION_SDPA_BWD_SEQ_LEN_Q_EXT,
        optional HIPDNN_ATTR_OPERATION_SDPA_BWD_SEQ_LEN_KV_EXT,
        optional HIPDNN_ATTR_OPERATION_SDPA_BWD_SEED_EXT,
        optional HIPDNN_ATTR_OPERATION_SDPA_BWD_OFFSET_EXT,
        optional HIPDNN_ATTR_OPERATION_SDPA_BWD_DROPOUT_MASK_EXT,
        optional HIPDNN_ATTR_OPERATION_SDPA_BWD_DROPOUT_SCALE_EXT,
        optional HIPDNN_ATTR_OPERATION_SDPA_BWD_DROPOUT_SCALE_INV_EXT,
        optional HIPDNN_ATTR_OPERATION_SDPA_BWD_DBIAS_EXT,
    ],
    arrays: &[],
    params: params![
        optional HIPDNN_ATTR_SDPA_BWD_ALIBI_MASK_EXT: Bool,
        optional HIPDNN_ATTR_SDPA_BWD_PADDING_MASK_EXT: Bool,
        optional HIPDNN_ATTR_SDPA_BWD_CAUSAL_MASK_EXT: Bool,
        optional HIPDNN_ATTR_SDPA_BWD_CAUSAL_MASK_BOTTOM_RIGHT_EXT: Bool,
        optional HIPDNN_ATTR_SDPA_BWD_DROPOUT_PROBABILITY_EXT: Float,
        optional HIPDNN_ATTR_SDPA_BWD_ATTN_SCALE_VALUE_EXT: Float,
        optional HIPDNN_ATTR_SDPA_BWD_LEFT_BOUND_EXT: Int64,
        optional HIPDNN_ATTR_SDPA_BWD_RIGHT_BOUND_EXT: Int64,
        optional HIPDNN_ATTR_SDPA_BWD_DIAGONAL_ALIGNMENT_EXT: Enum(&DIAGONAL_ALIGNMENT),
    ],
    compute: (
        HIPDNN_ATTR_SDPA_BWD_COMP_TYPE_EXT,
        "HIPDNN_ATTR_SDPA_BWD_COMP_TYPE_EXT",
    ),
    together: &[],
    check: None,
    build: |p| {
        SdpaBackwardAttributes {
            q_tensor_uid: p.uid(0),
            k_tensor_uid: p.uid(1),
            v_tensor_uid: p.uid(2),
            o_tensor_uid: p.uid(3),
            do_tensor_uid: p.uid(4),
            stats_tensor_uid: p.uid(5),
            dq_tensor_uid: p.uid(6),
            dk_tensor_uid: p.uid(7),
            dv_tensor_uid: p.uid(8),
            scale_tensor_uid: p.opt(9),
            attn_mask_tensor_uid: p.opt(10),
            seq_len_q_tensor_uid: p.opt(11),
            seq_len_kv_tensor_uid: p.opt(12),
            seed_tensor_uid: p.opt(13),
            offset_tensor_uid: p.opt(14),
            dropout_mask_tensor_uid: p.opt(15),
            dropout_scale_tensor_uid: p.opt(16),
            dropout_scale_inv_tensor_uid: p.opt(17),
            dbias_tensor_uid: p.opt(18),
            alibi_mask: p.flag(0),
            padding_mask: p.flag(1),
            causal_mask: p.flag(2),
            causal_mask_bottom_right: p.flag(3),
            dropout_probability: p.f32(4),
            attn_scale_value: p.f32(5),
            left_bound: p.i64(6),
            right_bound: p.i64(7),
            diagonal_alignment: DiagonalAlignment(p.code(8)),
        }
        .into()
    },
};

static BLOCK_SCALE_QUANTIZE: Layout = Layout {
    type_name: "OPERATION_BLOCK_SCALE_QUANTIZE",
    operation_type: Some(HIPDNN_OPERATION_TYPE_BLOCK_SCALE_QUANTIZE),
    slots: slots![
        required HIPDNN_ATTR_OPERATION_BLOCK_SCALE_QUANTIZE_XDESC,
        required HIPDNN_ATTR_OPERATION_BLOCK_SCALE_QUANTIZE_YDESC,
        required HIPDNN_ATTR_OPERATION_BLOCK_SCALE_QUANTIZE_SCALE_DESC,
    ],
    arrays: &[],
    params: params![
        required HIPDNN_ATTR_OPERATION_BLOCK_SCALE_QUANTIZE_BLOCK_SIZE: Int32,
        optional HIPDNN_ATTR_OPERATION_BLOCK_SCALE_QUANTIZE_AXIS_EXT: Int64,
        optional HIPDNN_ATTR_OPERATION_BLOCK_SCALE_QUANTIZE_TRANSPOSE_EXT: Bool,
    ],
    compute: (
        HIPDNN_ATTR_OPERATION_BLOCK_SCALE_QUANTIZE_MATH_PREC,
        "HIPDNN_ATTR_OPERATION_BLOCK_SCALE_QUANTIZE_MATH_PREC",
    ),
    together: &[],
    check: Some(|p, _| {
        if p.i32(0).unwrap_or_default() > 0 {
            Ok(())
        } else {
            Err("HIPDNN_ATTR_OPERATION_BLOCK_SCALE_QUANTIZE_BLOCK_SIZE must be positive".into())
        }
    }),
    build: |p| {
        BlockScaleQuantizeAttributes {
            x_tensor_uid: p.uid(0),
            y_tensor_uid: p.uid(1),
            scale_tensor_uid: p.uid(2),
            block_size: p.i32(0).unwrap_or_default(),
            axis: p.i64(1),
            transpose: p.flag(2),
        }
        .into()
    },
};

static BLOCK_SCALE_DEQUANTIZE: Layout = Layout {
    type_name: "OPERATION_BLOCK_SCALE_DEQUANTIZE",
    operation_type: Some(HIPDNN_OPERATION_TYPE_BLOCK_SCALE_DEQUANTIZE),
    slots: slots![
        required HIPDNN_ATTR_OPERATION_BLOCK_SCALE_DEQUANTIZE_XDESC,
        required HIPDNN_ATTR_OPERATION_BLOCK_SCALE_DEQUANTIZE_SCALE_DESC,
        required HIPDNN_ATTR_OPERATION_BLOCK_SCALE_DEQUANTIZE_YDESC,
    ],
    arrays: &[],
    params: params![
        required HIPDNN_ATTR_OPERATION_BLOCK_SCALE_DEQUANTIZE_BLOCK_SIZE: Int32s,
        optional HIPDNN_ATTR_OPERATION_BLOCK_SCALE_DEQUANTIZE_NEG_SCALE: Bool,
    ],
    compute: (
        HIPDNN_ATTR_OPERATION_BLOCK_SCALE_DEQUANTIZE_MATH_PREC,
        "HIPDNN_ATTR_OPERATION_BLOCK_SCALE_DEQUANTIZE_MATH_PREC",
    ),
    together: &[],
    check: None,
    build: |p| {
        BlockScaleDequantizeAttributes {
            x_tensor_uid: p.uid(0),
            scale_tensor_uid: p.uid(1),
            y_tensor_uid: p.uid(2),
            block_size: p.i32s(0),
            is_negative_scale: p.flag(1),
        }
        .into()
    },
};

static CUSTOM_OP: Layout = Layout {
    type_name: "OPERATION_CUSTOM_OP_EXT",
    operation_type: Some(HIPDNN_OPERATION_TYPE_CUSTOM_OP),
    slots: &[],
    // The inputs' tensors, then the outputs', as hipDNN lists them.
    arrays: slots![
        optional HIPDNN_ATTR_OPERATION_CUSTOM_OP_INPUTS_EXT,
        required HIPDNN_ATTR_OPERATION_CUSTOM_OP_OUTPUTS_EXT,
    ],
    params: params![
        required HIPDNN_ATTR_OPERATION_CUSTOM_OP_ID_EXT: Text,
        optional HIPDNN_ATTR_OPERATION_CUSTOM_OP_DATA_EXT: Bytes,
    ],
    compute: (
        HIPDNN_ATTR_CUSTOM_OP_COMP_TYPE_EXT,
        "HIPDNN_ATTR_CUSTOM_OP_COMP_TYPE_EXT",
    ),
    together: &[],
    check: None,
    build: |p| {
        CustomOpAttributes {
            custom_op_id: p.text(0),
            input_tensor_uids: p.array(0),
            output_tensor_uids: p.array(1),
            data: p.bytes(1),
            ..CustomOpAttributes::default()
        }
        .into()
    },
};

/// hipDNN's routing rules: NONE takes neither routing tensor and a zero top-k; GATHER
/// the token index and a zero top-k; SCATTER both routing tensors and a top-k in
/// `1..=` the weight's first extent; the offsets and routing tensors are INT32.
fn moe_routing(p: &Parts<'_>, tensors: &[Option<Arc<FrozenTensor>>]) -> Result<(), String> {
    let int32 = |i: usize, name: &str| match &tensors[i] {
        Some(t) if t.data_type != DataType::Int32 => Err(format!("{name} must be INT32")),
        _ => Ok(()),
    };
    int32(
        2,
        "HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_FIRST_TOKEN_OFFSET_DESC",
    )?;
    int32(
        3,
        "HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_TOKEN_INDEX_DESC",
    )?;
    int32(4, "HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_TOKEN_KS_DESC")?;
    let (index, ks) = (tensors[3].is_some(), tensors[4].is_some());
    let top_k = p.i32(1).unwrap_or_default();
    let mode = MoeGroupedMatmulMode(p.code(0));
    let ok = match mode {
        MoeGroupedMatmulMode::NONE => !index && !ks && top_k == 0,
        MoeGroupedMatmulMode::GATHER => index && !ks && top_k == 0,
        _ => {
            let experts = tensors[1]
                .as_ref()
                .and_then(|w| w.dims.first().copied())
                .unwrap_or_default();
            index && ks && top_k >= 1 && i64::from(top_k) <= experts
        }
    };
    if ok {
        return Ok(());
    }
    Err(match mode {
        MoeGroupedMatmulMode::NONE => {
            "NONE routing takes no TOKEN_INDEX_DESC or TOKEN_KS_DESC and a top-k of 0"
        }
        MoeGroupedMatmulMode::GATHER => {
            "GATHER routing takes TOKEN_INDEX_DESC, no TOKEN_KS_DESC and a top-k of 0"
        }
        _ => {
            "SCATTER routing takes TOKEN_INDEX_DESC and TOKEN_KS_DESC and a top-k from 1 to \
             the weight's first extent"
        }
    }
    .to_owned())
}

static MOE_GROUPED_MATMUL: Layout = Layout {
    type_name: "OPERATION_MOE_GROUPED_MATMUL",
    // This header's hipdnnOperationType_t has no value for it.
    operation_type: None,
    slots: slots![
        required HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_TOKEN_DESC,
        required HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_WEIGHT_DESC,
        required HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_FIRST_TOKEN_OFFSET_DESC,
        optional HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_TOKEN_INDEX_DESC,
        optional HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_TOKEN_KS_DESC,
        required HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_OUTPUT_DESC,
    ],
    arrays: &[],
    params: params![
        optional HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_MODE: Enum(&MOE_GROUPED_MATMUL_MODE),
        optional HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_TOP_K: Int32,
    ],
    compute: (
        HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_MATH_PREC,
        "HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_MATH_PREC",
    ),
    together: &[],
    check: Some(moe_routing),
    build: |p| {
        MoeGroupedMatmulAttributes {
            token_tensor_uid: p.uid(0),
            weight_tensor_uid: p.uid(1),
            first_token_offset_tensor_uid: p.uid(2),
            token_index_tensor_uid: p.opt(3),
            token_ks_tensor_uid: p.opt(4),
            output_tensor_uid: p.uid(5),
            mode: MoeGroupedMatmulMode(p.code(0)),
            top_k: p.i32(1).unwrap_or_default(),
        }
        .into()
    },
};

/// hipDNN's shape rules for the weight gradient: INT32 offsets `[experts, 1, 1]`,
/// tokens `[·, tokens, K]`, output gradient `[·, tokens, N]`, weight gradient
/// `[experts, K, N]`.
fn moe_backward_shapes(_: &Parts<'_>, tensors: &[Option<Arc<FrozenTensor>>]) -> Result<(), String> {
    // All four are required, so set here.
    let dims = |i: usize| {
        tensors[i]
            .as_ref()
            .map(|t| t.dims.as_slice())
            .unwrap_or(&[])
    };
    let (doutput, token, offset, dweight) = (dims(0), dims(1), dims(2), dims(3));
    if tensors[2]
        .as_ref()
        .is_some_and(|t| t.data_type != DataType::Int32)
    {
        return Err("FIRST_TOKEN_OFFSET_DESC must be INT32".into());
    }
    if [doutput, token, offset, dweight]
        .iter()
        .any(|d| d.len() != 3)
    {
        return Err(
            "DOUTPUT_DESC, TOKEN_DESC, FIRST_TOKEN_OFFSET_DESC and DWEIGHT_DESC \
                    must have rank 3"
                .into(),
        );
    }
    if dweight[1] != token[2] || dweight[2] != doutput[2] || doutput[1] != token[1] {
        return Err(format!(
            "DWEIGHT_DESC {dweight:?} must be [experts, K, N] for TOKEN_DESC {token:?} \
             ([·, tokens, K]) and DOUTPUT_DESC {doutput:?} ([·, tokens, N])"
        ));
    }
    if offset[1] != 1 || offset[2] != 1 || offset[0] != dweight[0] {
        return Err(format!(
            "FIRST_TOKEN_OFFSET_DESC {offset:?} must be [experts, 1, 1] for DWEIGHT_DESC \
             {dweight:?}"
        ));
    }
    Ok(())
}

static MOE_GROUPED_MATMUL_BWD: Layout = Layout {
    type_name: "OPERATION_MOE_GROUPED_MATMUL_BWD",
    // This header's hipdnnOperationType_t has no value for it.
    operation_type: None,
    slots: slots![
        required HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_BWD_DOUTPUT_DESC,
        required HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_BWD_TOKEN_DESC,
        required HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_BWD_FIRST_TOKEN_OFFSET_DESC,
        required HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_BWD_DWEIGHT_DESC,
    ],
    arrays: &[],
    params: &[],
    compute: (
        HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_BWD_MATH_PREC,
        "HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_BWD_MATH_PREC",
    ),
    together: &[],
    check: Some(moe_backward_shapes),
    build: |p| {
        MoeGroupedMatmulBwdAttributes {
            doutput_tensor_uid: p.uid(0),
            token_tensor_uid: p.uid(1),
            first_token_offset_tensor_uid: p.uid(2),
            dweight_tensor_uid: p.uid(3),
        }
        .into()
    },
};

impl Layout {
    /// The layout of an operation descriptor type, if it is one of these.
    pub(super) fn of(descriptor_type: hipdnnBackendDescriptorType_t) -> Option<&'static Layout> {
        Some(match descriptor_type {
            HIPDNN_BACKEND_OPERATION_BATCHNORM_INFERENCE_DESCRIPTOR_EXT => &BATCHNORM_INFERENCE,
            HIPDNN_BACKEND_OPERATION_BATCHNORM_INFERENCE_VARIANCE_DESCRIPTOR_EXT => {
                &BATCHNORM_INFERENCE_VARIANCE
            }
            HIPDNN_BACKEND_OPERATION_BATCHNORM_DESCRIPTOR_EXT => &BATCHNORM,
            HIPDNN_BACKEND_OPERATION_BATCHNORM_BACKWARD_DESCRIPTOR_EXT => &BATCHNORM_BACKWARD,
            HIPDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR => &MATMUL,
            HIPDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR => &REDUCTION,
            HIPDNN_BACKEND_OPERATION_LAYERNORM_DESCRIPTOR_EXT => &LAYERNORM,
            HIPDNN_BACKEND_OPERATION_RMSNORM_DESCRIPTOR_EXT => &RMSNORM,
            HIPDNN_BACKEND_OPERATION_RESAMPLE_FWD_DESCRIPTOR => &RESAMPLE_FWD,
            HIPDNN_BACKEND_OPERATION_LAYERNORM_BACKWARD_DESCRIPTOR_EXT => &LAYERNORM_BACKWARD,
            HIPDNN_BACKEND_OPERATION_RMSNORM_BACKWARD_DESCRIPTOR_EXT => &RMSNORM_BACKWARD,
            HIPDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR => &SDPA_FWD,
            HIPDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR_EXT => &SDPA_BWD,
            HIPDNN_BACKEND_OPERATION_BLOCK_SCALE_QUANTIZE_DESCRIPTOR => &BLOCK_SCALE_QUANTIZE,
            HIPDNN_BACKEND_OPERATION_BLOCK_SCALE_DEQUANTIZE_DESCRIPTOR => &BLOCK_SCALE_DEQUANTIZE,
            HIPDNN_BACKEND_OPERATION_CUSTOM_OP_DESCRIPTOR_EXT => &CUSTOM_OP,
            HIPDNN_BACKEND_OPERATION_MOE_GROUPED_MATMUL_DESCRIPTOR => &MOE_GROUPED_MATMUL,
            HIPDNN_BACKEND_OPERATION_MOE_GROUPED_MATMUL_BWD_DESCRIPTOR => &MOE_GROUPED_MATMUL_BWD,
            _ => return None,
        })
    }
}

/// The layout of a node's kind and what the node holds by that layout's indices (each
/// layout's `build` read backwards), for the kinds the table-driven operations stand
/// for; `None` for the others (the convolutions, pointwise, and kinds no operation
/// descriptor makes here).
pub(super) fn unbuild(attributes: &NodeAttributes) -> Option<(&'static Layout, Unbuilt)> {
    use NodeAttributes as N;
    let unbuilt =
        |uids: Vec<Option<i64>>, arrays: Vec<Vec<i64>>, params: Vec<Option<Value>>| Unbuilt {
            uids,
            arrays,
            params,
        };
    let code = |c: i8| Some(Value::Code(c.into()));
    let flag = |b: bool| Some(Value::Bool(b));
    Some(match attributes {
        N::BatchnormInferenceAttributes(a) => (
            &BATCHNORM_INFERENCE,
            unbuilt(
                [
                    a.x_tensor_uid,
                    a.mean_tensor_uid,
                    a.inv_variance_tensor_uid,
                    a.scale_tensor_uid,
                    a.bias_tensor_uid,
                    a.y_tensor_uid,
                ]
                .map(Some)
                .into(),
                vec![],
                vec![],
            ),
        ),
        N::BatchnormInferenceAttributesVarianceExt(a) => (
            &BATCHNORM_INFERENCE_VARIANCE,
            unbuilt(
                [
                    a.x_tensor_uid,
                    a.mean_tensor_uid,
                    a.variance_tensor_uid,
                    a.scale_tensor_uid,
                    a.bias_tensor_uid,
                    a.y_tensor_uid,
                    a.epsilon_tensor_uid,
                ]
                .map(Some)
                .into(),
                vec![],
                vec![],
            ),
        ),
        N::BatchnormAttributes(a) => (
            &BATCHNORM,
            unbuilt(
                vec![
                    Some(a.x_tensor_uid),
                    Some(a.scale_tensor_uid),
                    Some(a.bias_tensor_uid),
                    Some(a.epsilon_tensor_uid),
                    Some(a.y_tensor_uid),
                    a.mean_tensor_uid,
                    a.inv_variance_tensor_uid,
                    a.prev_running_mean_tensor_uid,
                    a.prev_running_variance_tensor_uid,
                    a.momentum_tensor_uid,
                    a.next_running_mean_tensor_uid,
                    a.next_running_variance_tensor_uid,
                ],
                vec![a.peer_stats_tensor_uid.clone()],
                vec![],
            ),
        ),
        N::BatchnormBackwardAttributes(a) => (
            &BATCHNORM_BACKWARD,
            unbuilt(
                vec![
                    Some(a.dy_tensor_uid),
                    Some(a.x_tensor_uid),
                    Some(a.scale_tensor_uid),
                    Some(a.dx_tensor_uid),
                    Some(a.dscale_tensor_uid),
                    Some(a.dbias_tensor_uid),
                    a.mean_tensor_uid,
                    a.inv_variance_tensor_uid,
                ],
                vec![a.peer_stats_tensor_uid.clone()],
                vec![],
            ),
        ),
        N::MatmulAttributes(a) => (
            &MATMUL,
            unbuilt(
                [a.a_tensor_uid, a.b_tensor_uid, a.c_tensor_uid]
                    .map(Some)
                    .into(),
                vec![],
                vec![],
            ),
        ),
        N::ReductionAttributes(a) => (
            &REDUCTION,
            unbuilt(
                vec![Some(a.in_tensor_uid), Some(a.out_tensor_uid)],
                vec![],
                vec![code(a.mode.0), flag(a.is_deterministic)],
            ),
        ),
        N::LayernormAttributes(a) => (
            &LAYERNORM,
            unbuilt(
                vec![
                    Some(a.x_tensor_uid),
                    Some(a.scale_tensor_uid),
                    Some(a.bias_tensor_uid),
                    Some(a.epsilon_tensor_uid),
                    Some(a.y_tensor_uid),
                    a.mean_tensor_uid,
                    a.inv_variance_tensor_uid,
                ],
                vec![],
                vec![
                    code(a.forward_phase.0),
                    Some(Value::I64(a.normalized_dim_count)),
                ],
            ),
        ),
        N::RMSNormAttributes(a) => (
            &RMSNORM,
            unbuilt(
                vec![
                    Some(a.x_tensor_uid),
                    Some(a.scale_tensor_uid),
                    Some(a.epsilon_tensor_uid),
                    Some(a.y_tensor_uid),
                    a.bias_tensor_uid,
                    a.inv_rms_tensor_uid,
                ],
                vec![],
                vec![code(a.forward_phase.0)],
            ),
        ),
        N::ResampleFwdAttributes(a) => (
            &RESAMPLE_FWD,
            unbuilt(
                vec![
                    Some(a.x_tensor_uid),
                    Some(a.y_tensor_uid),
                    a.index_tensor_uid,
                ],
                vec![],
                vec![
                    Some(Value::I64s(a.pre_padding.clone())),
                    Some(Value::I64s(a.post_padding.clone())),
                    Some(Value::I64s(a.stride.clone())),
                    Some(Value::I64s(a.window.clone())),
                    code(a.resample_mode.0),
                    code(a.padding_mode.0),
                    flag(a.generate_index),
                ],
            ),
        ),
        N::LayernormBackwardAttributes(a) => (
            &LAYERNORM_BACKWARD,
            unbuilt(
                vec![
                    Some(a.dy_tensor_uid),
                    Some(a.x_tensor_uid),
                    Some(a.scale_tensor_uid),
                    a.mean_tensor_uid,
                    a.inv_variance_tensor_uid,
                    a.epsilon_tensor_uid,
                    Some(a.dx_tensor_uid),
                    Some(a.dscale_tensor_uid),
                    Some(a.dbias_tensor_uid),
                ],
                vec![],
                vec![Some(Value::I64(a.normalized_dim_count))],
            ),
        ),
        N::RMSNormBackwardAttributes(a) => (
            &RMSNORM_BACKWARD,
            unbuilt(
                vec![
                    Some(a.dy_tensor_uid),
                    Some(a.x_tensor_uid),
                    Some(a.scale_tensor_uid),
                    Some(a.inv_rms_tensor_uid),
                    Some(a.dx_tensor_uid),
                    Some(a.dscale_tensor_uid),
                    a.dbias_tensor_uid,
                ],
                vec![],
                vec![],
            ),
        ),
        N::SdpaAttributes(a) => (
            &SDPA_FWD,
            unbuilt(
                vec![
                    Some(a.q_tensor_uid),
                    Some(a.k_tensor_uid),
                    Some(a.v_tensor_uid),
                    Some(a.o_tensor_uid),
                    a.attn_mask_tensor_uid,
                    a.scale_tensor_uid,
                    a.seq_len_q_tensor_uid,
                    a.seq_len_kv_tensor_uid,
                    a.seed_tensor_uid,
                    a.offset_tensor_uid,
                    a.dropout_mask_tensor_uid,
                    a.dropout_scale_tensor_uid,
                    a.page_table_k_tensor_uid,
                    a.page_table_v_tensor_uid,
                    a.block_mask_tensor_uid,
                    a.sink_token_tensor_uid,
                    a.descale_q_tensor_uid,
                    a.descale_k_tensor_uid,
                    a.descale_v_tensor_uid,
                    a.descale_s_tensor_uid,
                    a.scale_s_tensor_uid,
                    a.scale_o_tensor_uid,
                    a.stats_tensor_uid,
                    a.max_tensor_uid,
                    a.sum_exp_tensor_uid,
                    a.rng_dump_tensor_uid,
                    a.amax_s_tensor_uid,
                    a.amax_o_tensor_uid,
                ],
                vec![],
                vec![
                    a.generate_stats.and_then(flag),
                    flag(a.alibi_mask),
                    flag(a.padding_mask),
                    flag(a.causal_mask),
                    flag(a.causal_mask_bottom_right),
                    a.dropout_probability.map(Value::F32),
                    a.attn_scale_value.map(Value::F32),
                    a.left_bound.map(Value::I64),
                    a.right_bound.map(Value::I64),
                    a.max_seq_len_kv.map(Value::I32),
                    code(a.diagonal_alignment.0),
                    Some(Value::Data(a.mma_core_mode)),
                    code(a.implementation.0),
                ],
            ),
        ),
        N::SdpaBackwardAttributes(a) => (
            &SDPA_BWD,
            unbuilt(
                vec![
                    Some(a.q_tensor_uid),
                    Some(a.k_tensor_uid),
                    Some(a.v_tensor_uid),
                    Some(a.o_tensor_uid),
                    Some(a.do_tensor_uid),
                    Some(a.stats_tensor_uid),
                    Some(a.dq_tensor_uid),
                    Some(a.dk_tensor_uid),
                    Some(a.dv_tensor_uid),
                    a.scale_tensor_uid,
                    a.attn_mask_tensor_uid,
                    a.seq_len_q_tensor_uid,
                    a.seq_len_kv_tensor_uid,
                    a.seed_tensor_uid,
                    a.offset_tensor_uid,
                    a.dropout_mask_tensor_uid,
                    a.dropout_scale_tensor_uid,
                    a.dropout_scale_inv_tensor_uid,
                    a.dbias_tensor_uid,
                ],
                vec![],
                vec![
                    flag(a.alibi_mask),
                    flag(a.padding_mask),
                    flag(a.causal_mask),
                    flag(a.causal_mask_bottom_right),
                    a.dropout_probability.map(Value::F32),
                    a.attn_scale_value.map(Value::F32),
                    a.left_bound.map(Value::I64),
                    a.right_bound.map(Value::I64),
                    code(a.diagonal_alignment.0),
                ],
            ),
        ),
        N::BlockScaleQuantizeAttributes(a) => (
            &BLOCK_SCALE_QUANTIZE,
            unbuilt(
                [a.x_tensor_uid, a.y_tensor_uid, a.scale_tensor_uid]
                    .map(Some)
                    .into(),
                vec![],
                vec![
                    Some(Value::I32(a.block_size)),
                    a.axis.map(Value::I64),
                    flag(a.transpose),
                ],
            ),
        ),
        N::BlockScaleDequantizeAttributes(a) => (
            &BLOCK_SCALE_DEQUANTIZE,
            unbuilt(
                [a.x_tensor_uid, a.scale_tensor_uid, a.y_tensor_uid]
                    .map(Some)
                    .into(),
                vec![],
                vec![
                    Some(Value::I32s(a.block_size.clone())),
                    flag(a.is_negative_scale),
                ],
            ),
        ),
        N::CustomOpAttributes(a) => (
            &CUSTOM_OP,
            unbuilt(
                vec![],
                vec![a.input_tensor_uids.clone(), a.output_tensor_uids.clone()],
                vec![
                    Some(Value::Text(a.custom_op_id.clone())),
                    Some(Value::Bytes(a.data.clone())),
                ],
            ),
        ),
        N::MoeGroupedMatmulAttributes(a) => (
            &MOE_GROUPED_MATMUL,
            unbuilt(
                vec![
                    Some(a.token_tensor_uid),
                    Some(a.weight_tensor_uid),
                    Some(a.first_token_offset_tensor_uid),
                    a.token_index_tensor_uid,
                    a.token_ks_tensor_uid,
                    Some(a.output_tensor_uid),
                ],
                vec![],
                vec![code(a.mode.0), Some(Value::I32(a.top_k))],
            ),
        ),
        N::MoeGroupedMatmulBwdAttributes(a) => (
            &MOE_GROUPED_MATMUL_BWD,
            unbuilt(
                [
                    a.doutput_tensor_uid,
                    a.token_tensor_uid,
                    a.first_token_offset_tensor_uid,
                    a.dweight_tensor_uid,
                ]
                .map(Some)
                .into(),
                vec![],
                vec![],
            ),
        ),
        N::PointwiseAttributes(_)
        | N::ConvolutionFwdAttributes(_)
        | N::ConvolutionBwdAttributes(_)
        | N::ConvolutionWrwAttributes(_)
        | N::ResampleBwdAttributes(_) => return None,
    })
}
