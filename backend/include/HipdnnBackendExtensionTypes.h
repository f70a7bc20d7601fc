/* Generated from backend/src/capi/enums/tables.rs; do not edit. Regenerate with scripts/gen-backend-header.sh. */
/* Enumerations of the extension functions that hipDNN declares in hipdnn_backend.h itself. */
#ifndef HIPDNN_BACKEND_EXTENSION_TYPES_H
#define HIPDNN_BACKEND_EXTENSION_TYPES_H

/* How a user log callback is invoked (hipdnnSetUserLogCallback_ext). */
typedef enum
{
    /* On the logging thread, before the logging call returns. */
    HIPDNN_LOG_CALLBACK_SYNC = 0,
    /* On the backend's log thread, in order, through a queue of 8192 messages that blocks logging threads when full. */
    HIPDNN_LOG_CALLBACK_ASYNC = 1
} hipdnnLogCallbackMode_t;

/* What a serialized blob holds (bits, combined with OR). */
typedef enum
{
    /* A graph. */
    HIPDNN_SERIALIZED_CONTENT_GRAPH = 1,
    /* An execution plan. */
    HIPDNN_SERIALIZED_CONTENT_EXECUTION_PLAN = 2
} hipdnnSerializedContentFlags_t;

#endif /* HIPDNN_BACKEND_EXTENSION_TYPES_H */
