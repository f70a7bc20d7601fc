/* Generated from backend/src/capi/enums/tables.rs; do not edit. Regenerate with scripts/gen-backend-header.sh. */
/* How scaled dot-product attention is computed (`HIPDNN_ATTR_SDPA_FWD_IMPLEMENTATION_EXT`). */
#ifndef HIPDNN_ATTENTION_IMPLEMENTATION_H
#define HIPDNN_ATTENTION_IMPLEMENTATION_H

/* Attention implementation strategy. */
typedef enum
{
    /* The engine chooses. */
    HIPDNN_ATTENTION_IMPLEMENTATION_AUTO_EXT = 0,
    /* Composed of separate matmul and softmax steps. */
    HIPDNN_ATTENTION_IMPLEMENTATION_COMPOSITE_EXT = 1,
    /* One fused kernel. */
    HIPDNN_ATTENTION_IMPLEMENTATION_UNIFIED_EXT = 2
} hipdnnAttentionImplementation_t;

#endif /* HIPDNN_ATTENTION_IMPLEMENTATION_H */
