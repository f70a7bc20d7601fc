/* Generated from backend/src/capi/enums/tables.rs; do not edit. Regenerate with scripts/gen-backend-header.sh. */
/* Behavior notes of an engine (`HIPDNN_ATTR_ENGINE_BEHAVIOR_NOTE`). */
#ifndef HIPDNN_BACKEND_BEHAVIOR_NOTE_H
#define HIPDNN_BACKEND_BEHAVIOR_NOTE_H

#ifndef HIPDNN_BEHAVIOR_NOTE_TYPES_DEFINED
#define HIPDNN_BEHAVIOR_NOTE_TYPES_DEFINED

/* What an engine's plans do or need, beyond computing the graph. */
typedef enum
{
    /* Plans compile kernels at build time. */
    HIPDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION = 0,
    /* Tensors are transformed to another layout. */
    HIPDNN_BEHAVIOR_NOTE_REQUIRES_LAYOUT_TRANSFORM = 1,
    /* Execution can be captured in a HIP graph. */
    HIPDNN_BEHAVIOR_NOTE_SUPPORTS_GRAPH_CAPTURE = 2,
    /* Plans call into another library. */
    HIPDNN_BEHAVIOR_NOTE_EXTERNAL_LIBRARY_DEPENDENCY = 3,
    /* Plans can be serialized. */
    HIPDNN_BEHAVIOR_NOTE_SUPPORTS_EXECUTION_PLAN_SERIALIZATION = 4,
    /* The number of hipDNN's notes (not a note). */
    HIPDNN_BEHAVIOR_NOTE_TYPE_COUNT = 5,
    /* This backend's extension: the engine takes HOST memory. Its variant-pack data
       pointers and workspace must be host pointers, and it runs on the calling thread.
       An engine without this note takes device memory, used on the handle's stream. */
    HIPDNN_BEHAVIOR_NOTE_HOST_MEMORY_EXT = 10000
} hipdnnBackendBehaviorNote_t;

#endif /* HIPDNN_BEHAVIOR_NOTE_TYPES_DEFINED */

#endif /* HIPDNN_BACKEND_BEHAVIOR_NOTE_H */
