/* Generated from backend/src/capi/enums/tables.rs; do not edit. Regenerate with scripts/gen-backend-header.sh. */
/* Where the causal-mask diagonal starts (`HIPDNN_ATTR_SDPA_FWD_DIAGONAL_ALIGNMENT_EXT`). */
#ifndef HIPDNN_DIAGONAL_ALIGNMENT_H
#define HIPDNN_DIAGONAL_ALIGNMENT_H

/* Diagonal alignment of an attention mask. */
typedef enum
{
    /* At the top-left corner. */
    HIPDNN_DIAGONAL_ALIGNMENT_TOP_LEFT_EXT = 0,
    /* At the bottom-right corner. */
    HIPDNN_DIAGONAL_ALIGNMENT_BOTTOM_RIGHT_EXT = 1
} hipdnnDiagonalAlignment_t;

#endif /* HIPDNN_DIAGONAL_ALIGNMENT_H */
