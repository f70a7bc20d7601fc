/* Generated from backend/src/capi/enums/tables.rs; do not edit. Regenerate with scripts/gen-backend-header.sh. */
/* The type of an attribute's values, given with every hipdnnBackendSetAttribute and
   hipdnnBackendGetAttribute call. */
#ifndef HIPDNN_BACKEND_ATTRIBUTE_TYPE_H
#define HIPDNN_BACKEND_ATTRIBUTE_TYPE_H

/* Attribute value types. */
typedef enum
{
    /* hipdnnHandle_t. */
    HIPDNN_TYPE_HANDLE = 0,
    /* hipdnnDataType_t. */
    HIPDNN_TYPE_DATA_TYPE = 1,
    /* bool. */
    HIPDNN_TYPE_BOOLEAN = 2,
    /* int64_t. */
    HIPDNN_TYPE_INT64 = 3,
    /* float. */
    HIPDNN_TYPE_FLOAT = 4,
    /* double. */
    HIPDNN_TYPE_DOUBLE = 5,
    /* void*. */
    HIPDNN_TYPE_VOID_PTR = 6,
    /* hipdnnBackendHeurMode_t. */
    HIPDNN_TYPE_HEUR_MODE = 7,
    HIPDNN_TYPE_KNOB_TYPE = 8,
    HIPDNN_TYPE_NAN_PROPOGATION = 9,
    HIPDNN_TYPE_NUMERICAL_NOTE = 10,
    HIPDNN_TYPE_LAYOUT_TYPE = 11,
    /* hipdnnBackendAttributeName_t. */
    HIPDNN_TYPE_ATTRIB_NAME = 12,
    /* hipdnnBackendDescriptor_t. */
    HIPDNN_TYPE_BACKEND_DESCRIPTOR = 13,
    HIPDNN_TYPE_GENSTATS_MODE = 14,
    HIPDNN_TYPE_BN_FINALIZE_STATS_MODE = 15,
    /* hipdnnBackendBehaviorNote_t. */
    HIPDNN_TYPE_BEHAVIOR_NOTE = 16,
    HIPDNN_TYPE_TENSOR_REORDERING_MODE = 17,
    /* int32_t. */
    HIPDNN_TYPE_INT32 = 18,
    /* char. */
    HIPDNN_TYPE_CHAR = 19,
    HIPDNN_TYPE_SIGNAL_MODE = 20,
    HIPDNN_TYPE_FRACTION = 21,
    /* hipdnnNormFwdPhase_t. */
    HIPDNN_TYPE_NORM_FWD_PHASE = 22,
    HIPDNN_TYPE_RNG_DISTRIBUTION = 23,
    /* hipdnnConvolutionMode_t. */
    HIPDNN_TYPE_CONVOLUTION_MODE = 24,
    /* hipdnnPointwiseMode_t. */
    HIPDNN_TYPE_POINTWISE_MODE = 25,
    /* hipdnnDiagonalAlignment_t. */
    HIPDNN_TYPE_DIAGONAL_ALIGNMENT_EXT = 26,
    /* Older spelling of HIPDNN_TYPE_DIAGONAL_ALIGNMENT_EXT. */
    HIPDNN_TYPE_DIAGONAL_ALIGNMENT = 26,
    /* hipdnnAttentionImplementation_t. */
    HIPDNN_TYPE_ATTENTION_IMPLEMENTATION_EXT = 27,
    /* Older spelling of HIPDNN_TYPE_ATTENTION_IMPLEMENTATION_EXT. */
    HIPDNN_TYPE_ATTENTION_IMPLEMENTATION = 27,
    /* hipdnnReduceTensorOp_t. */
    HIPDNN_TYPE_REDUCTION_OPERATOR_TYPE = 28,
    /* hipdnnResampleMode_t. */
    HIPDNN_TYPE_RESAMPLE_MODE = 29,
    /* hipdnnPaddingMode_t. */
    HIPDNN_TYPE_PADDING_MODE = 30,
    /* hipdnnMoeGroupedMatmulMode_t. */
    HIPDNN_TYPE_MOE_GROUPED_MATMUL_MODE = 31,
    /* hipdnnBackendFlatbufferData_t (a serialized FlatBuffer). */
    HIPDNN_TYPE_FLATBUFFER_DATA_STRUCT_EXT = 10000,
    /* hipdnnOperationType_t. */
    HIPDNN_TYPE_OPERATION_TYPE_EXT = 10001
} hipdnnBackendAttributeType_t;

#endif /* HIPDNN_BACKEND_ATTRIBUTE_TYPE_H */
