/* Generated from backend/src/capi/enums/tables.rs; do not edit. Regenerate with scripts/gen-backend-header.sh. */
/* Reduction operators (`HIPDNN_ATTR_REDUCTION_OPERATOR`). */
#ifndef HIPDNN_REDUCE_TENSOR_OP_H
#define HIPDNN_REDUCE_TENSOR_OP_H

/* Reduction operator. */
typedef enum
{
    /* Sum. */
    HIPDNN_REDUCE_TENSOR_ADD = 1,
    /* Product. */
    HIPDNN_REDUCE_TENSOR_MUL = 2,
    /* Minimum. */
    HIPDNN_REDUCE_TENSOR_MIN = 3,
    /* Maximum. */
    HIPDNN_REDUCE_TENSOR_MAX = 4,
    /* Maximum of absolute values. */
    HIPDNN_REDUCE_TENSOR_AMAX = 5,
    /* Mean. */
    HIPDNN_REDUCE_TENSOR_AVG = 6,
    /* L1 norm. */
    HIPDNN_REDUCE_TENSOR_NORM1 = 7,
    /* L2 norm. */
    HIPDNN_REDUCE_TENSOR_NORM2 = 8,
    /* Product of the non-zero values. */
    HIPDNN_REDUCE_TENSOR_MUL_NO_ZEROS = 9
} hipdnnReduceTensorOp_t;

#endif /* HIPDNN_REDUCE_TENSOR_OP_H */
