/* Generated from backend/src/capi/enums/tables.rs; do not edit. Regenerate with scripts/gen-backend-header.sh. */
/* Phase of a forward normalization (`HIPDNN_ATTR_OPERATION_RMSNORM_FWD_PHASE_EXT`, …). */
#ifndef HIPDNN_NORM_FWD_PHASE_H
#define HIPDNN_NORM_FWD_PHASE_H

/* Forward phase. */
typedef enum
{
    /* Inference: no statistics are saved. */
    HIPDNN_NORM_FWD_INFERENCE = 1,
    /* Training: statistics are saved for the backward pass. */
    HIPDNN_NORM_FWD_TRAINING = 2
} hipdnnNormFwdPhase_t;

#endif /* HIPDNN_NORM_FWD_PHASE_H */
