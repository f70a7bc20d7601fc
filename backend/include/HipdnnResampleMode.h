/* Generated from backend/src/capi/enums/tables.rs; do not edit. Regenerate with scripts/gen-backend-header.sh. */
/* Resample modes (`HIPDNN_ATTR_RESAMPLE_MODE`). */
#ifndef HIPDNN_RESAMPLE_MODE_H
#define HIPDNN_RESAMPLE_MODE_H

/* Resample mode. */
typedef enum
{
    /* Maximum over the window. */
    HIPDNN_RESAMPLE_MAXPOOL = 1,
    /* Mean over the window, padding excluded. */
    HIPDNN_RESAMPLE_AVGPOOL_EXCLUDE_PADDING = 2,
    /* Mean over the window, padding included. */
    HIPDNN_RESAMPLE_AVGPOOL_INCLUDE_PADDING = 3
} hipdnnResampleMode_t;

#endif /* HIPDNN_RESAMPLE_MODE_H */
