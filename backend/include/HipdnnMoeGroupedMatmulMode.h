/* Generated from backend/src/capi/enums/tables.rs; do not edit. Regenerate with scripts/gen-backend-header.sh. */
/* Token routing of a mixture-of-experts grouped matmul (`HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_MODE`). */
#ifndef HIPDNN_MOE_GROUPED_MATMUL_MODE_H
#define HIPDNN_MOE_GROUPED_MATMUL_MODE_H

/* Routing mode. */
typedef enum
{
    /* The tokens are already grouped by expert. */
    HIPDNN_MOE_GROUPED_MATMUL_MODE_NONE = 0,
    /* Tokens are gathered by expert first. */
    HIPDNN_MOE_GROUPED_MATMUL_MODE_GATHER = 1,
    /* Results are scattered back to token order. */
    HIPDNN_MOE_GROUPED_MATMUL_MODE_SCATTER = 2
} hipdnnMoeGroupedMatmulMode_t;

#endif /* HIPDNN_MOE_GROUPED_MATMUL_MODE_H */
