/* Generated from backend/src/capi/enums/tables.rs; do not edit. Regenerate with scripts/gen-backend-header.sh. */
/* Reduction modes of hipDNN's earlier reduction attribute (reduction operators replace them). */
#ifndef HIPDNN_REDUCTION_MODE_H
#define HIPDNN_REDUCTION_MODE_H

/* Reduction mode. */
typedef enum
{
    /* Sum. */
    HIPDNN_REDUCTION_ADD = 1,
    /* Product. */
    HIPDNN_REDUCTION_MUL = 2,
    /* Minimum. */
    HIPDNN_REDUCTION_MIN = 3,
    /* Maximum. */
    HIPDNN_REDUCTION_MAX = 4,
    /* Maximum of absolute values. */
    HIPDNN_REDUCTION_AMAX = 5,
    /* Mean. */
    HIPDNN_REDUCTION_AVG = 6,
    /* L1 norm. */
    HIPDNN_REDUCTION_NORM1 = 7,
    /* L2 norm. */
    HIPDNN_REDUCTION_NORM2 = 8,
    /* Product of the non-zero values. */
    HIPDNN_REDUCTION_MUL_NO_ZEROS = 9
} hipdnnReductionMode_t;

#endif /* HIPDNN_REDUCTION_MODE_H */
