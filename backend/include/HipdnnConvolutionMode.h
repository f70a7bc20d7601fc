/* Generated from backend/src/capi/enums/tables.rs; do not edit. Regenerate with scripts/gen-backend-header.sh. */
/* Convolution modes (`HIPDNN_ATTR_CONVOLUTION_CONV_MODE`). */
#ifndef HIPDNN_CONVOLUTION_MODE_H
#define HIPDNN_CONVOLUTION_MODE_H

/* Whether the filter is flipped. */
typedef enum
{
    /* Convolution: the filter is flipped. */
    HIPDNN_CONVOLUTION = 0,
    /* Cross-correlation: the filter is not flipped (what deep learning calls convolution). */
    HIPDNN_CROSS_CORRELATION = 1
} hipdnnConvolutionMode_t;

#endif /* HIPDNN_CONVOLUTION_MODE_H */
