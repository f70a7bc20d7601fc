/* Generated from backend/src/capi/enums/tables.rs; do not edit. Regenerate with scripts/gen-backend-header.sh. */
/* Status codes returned by the C API. */
#ifndef HIPDNN_STATUS_H
#define HIPDNN_STATUS_H

/* A backend status code. */
typedef enum
{
    /* Success. */
    HIPDNN_STATUS_SUCCESS = 0,
    /* Not initialized (e.g. an attribute read before finalize). */
    HIPDNN_STATUS_NOT_INITIALIZED = 1,
    /* An invalid argument. */
    HIPDNN_STATUS_BAD_PARAM = 2,
    /* A null pointer argument. */
    HIPDNN_STATUS_BAD_PARAM_NULL_POINTER = 3,
    /* A descriptor used before it was finalized. */
    HIPDNN_STATUS_BAD_PARAM_NOT_FINALIZED = 4,
    /* An index or value out of range. */
    HIPDNN_STATUS_BAD_PARAM_OUT_OF_BOUND = 5,
    /* A buffer too small for the result. */
    HIPDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT = 6,
    /* Streams that do not match. */
    HIPDNN_STATUS_BAD_PARAM_STREAM_MISMATCH = 7,
    /* Not supported (now, or for this input). */
    HIPDNN_STATUS_NOT_SUPPORTED = 8,
    /* An internal error. */
    HIPDNN_STATUS_INTERNAL_ERROR = 9,
    /* An allocation failed. */
    HIPDNN_STATUS_ALLOC_FAILED = 10,
    /* A host allocation failed. */
    HIPDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED = 11,
    /* A device allocation failed. */
    HIPDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED = 12,
    /* Execution failed. */
    HIPDNN_STATUS_EXECUTION_FAILED = 13,
    /* A plugin reported an error. */
    HIPDNN_STATUS_PLUGIN_ERROR = 14
} hipdnnStatus_t;

#endif /* HIPDNN_STATUS_H */
