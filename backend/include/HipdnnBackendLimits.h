/* Generated from backend/src/capi/enums/tables.rs; do not edit. Regenerate with scripts/gen-backend-header.sh. */
/* Sizes of the C API. */
#ifndef HIPDNN_BACKEND_LIMITS_H
#define HIPDNN_BACKEND_LIMITS_H

/* The longest error message, NUL included: a buffer of this size always holds the whole
   message of hipdnnGetLastErrorString. */
#define HIPDNN_ERROR_STRING_MAX_LENGTH 2048

#endif /* HIPDNN_BACKEND_LIMITS_H */
