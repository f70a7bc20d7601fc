//! The layouts of the table-driven operations: hipDNN's attributes for each (names,
//! numbers and value types from its interface), which are required, and the node each
//! builds. Slots are listed in hipDNN's attribute order, which is also the order its
//! graph lists the node's tensors in.

use hipdnn_flatbuffers_sdk::model::{
    BatchnormAttributes, BatchnormBackwardAttributes, BatchnormInferenceAttributes,
    BatchnormInferenceAttributesVarianceExt, LayernormAttributes, LayernormBackwardAttributes,
    MatmulAttributes, RMSNormAttributes, RMSNormBackwardAttributes, ReductionAttributes,
    ResampleFwdAttributes,
};
use hipdnn_flatbuffers_sdk::wire::{NormFwdPhase, PaddingMode, ReductionMode, ResampleMode};

use super::table::{CEnum, Layout, params, slots};
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
            _ => return None,
        })
    }
}
