/* Generated from backend/src/capi/enums/tables.rs; do not edit. Regenerate with scripts/gen-backend-header.sh. */
/* A serialized FlatBuffer passed as an attribute value (HIPDNN_TYPE_FLATBUFFER_DATA_STRUCT_EXT). */
#ifndef HIPDNN_BACKEND_FLATBUFFER_DATA_H
#define HIPDNN_BACKEND_FLATBUFFER_DATA_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes the caller owns: `size` bytes at `ptr`. */
typedef struct
{
    const void* ptr;
    size_t size;
} hipdnnBackendFlatbufferData_t;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* HIPDNN_BACKEND_FLATBUFFER_DATA_H */
