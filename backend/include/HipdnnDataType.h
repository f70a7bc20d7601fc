/* Generated from backend/src/capi/enums/tables.rs; do not edit. Regenerate with scripts/gen-backend-header.sh. */
/* Tensor element types of the C API. The numbering is the C API's, not the wire format's. */
#ifndef HIPDNN_DATA_TYPE_H
#define HIPDNN_DATA_TYPE_H

/* Element types. */
typedef enum
{
    /* 32-bit IEEE float. */
    HIPDNN_DATA_FLOAT = 0,
    /* 64-bit IEEE float. */
    HIPDNN_DATA_DOUBLE = 1,
    /* 16-bit IEEE float. */
    HIPDNN_DATA_HALF = 2,
    /* 8-bit signed integer. */
    HIPDNN_DATA_INT8 = 3,
    /* 32-bit signed integer. */
    HIPDNN_DATA_INT32 = 4,
    /* 8-bit unsigned integer. */
    HIPDNN_DATA_UINT8 = 5,
    /* bfloat16. */
    HIPDNN_DATA_BFLOAT16 = 6,
    /* 8-bit float, 4 exponent bits, 3 mantissa bits. */
    HIPDNN_DATA_FP8_E4M3 = 7,
    /* 8-bit float, 5 exponent bits, 2 mantissa bits. */
    HIPDNN_DATA_FP8_E5M2 = 8,
    /* 8-bit exponent-only float (block scales). */
    HIPDNN_DATA_FP8_E8M0 = 9,
    /* 4-bit float. */
    HIPDNN_DATA_FP4_E2M1 = 10,
    /* 4-bit signed integer. */
    HIPDNN_DATA_INT4 = 11,
    /* 6-bit float, 2 exponent bits. */
    HIPDNN_DATA_FP6_E2M3_EXT = 12,
    /* 6-bit float, 3 exponent bits. */
    HIPDNN_DATA_FP6_E3M2_EXT = 13,
    /* 64-bit signed integer. */
    HIPDNN_DATA_INT64 = 14,
    /* FP8 E4M3, finite with unsigned zero (no negative zero, NaN at 0x80). */
    HIPDNN_DATA_FP8_E4M3_FNUZ = 15,
    /* FP8 E5M2, finite with unsigned zero. */
    HIPDNN_DATA_FP8_E5M2_FNUZ = 16
} hipdnnDataType_t;

#endif /* HIPDNN_DATA_TYPE_H */
