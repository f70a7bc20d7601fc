/* Generated from backend/src/capi/enums/tables.rs; do not edit. Regenerate with scripts/gen-backend-header.sh. */
/* How a resample pads (`HIPDNN_ATTR_RESAMPLE_PADDING_MODE`). */
#ifndef HIPDNN_PADDING_MODE_H
#define HIPDNN_PADDING_MODE_H

/* Padding mode. */
typedef enum
{
    /* Pad with negative infinity. */
    HIPDNN_PADDING_NEG_INF_PAD = 1,
    /* Pad with zeros. */
    HIPDNN_PADDING_ZERO_PAD = 2
} hipdnnPaddingMode_t;

#endif /* HIPDNN_PADDING_MODE_H */
