/* Generated from backend/src/capi/enums/tables.rs; do not edit. Regenerate with scripts/gen-backend-header.sh. */
/* Pooling modes of hipDNN's earlier pooling descriptors (resample modes replace them). */
#ifndef HIPDNN_POOLING_MODE_H
#define HIPDNN_POOLING_MODE_H

/* Pooling mode. */
typedef enum
{
    /* Maximum. */
    HIPDNN_POOLING_MODE_MAX = 1,
    /* Average, padding excluded. */
    HIPDNN_POOLING_MODE_AVERAGE = 2,
    /* Average, padding included. */
    HIPDNN_POOLING_MODE_AVERAGE_INCLUSIVE = 3
} hipdnnPoolingMode_t;

#endif /* HIPDNN_POOLING_MODE_H */
