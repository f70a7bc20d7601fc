/* Generated from backend/src/capi/enums/tables.rs; do not edit. Regenerate with scripts/gen-backend-header.sh. */
/* Heuristic modes (`HIPDNN_ATTR_ENGINEHEUR_MODE`). */
#ifndef HIPDNN_BACKEND_HEURISTIC_TYPE_H
#define HIPDNN_BACKEND_HEURISTIC_TYPE_H

/* How the engine heuristic ranks engines (every mode ranks the same way here). */
typedef enum
{
    /* Engines that can run the graph, in the backend's static order. */
    HIPDNN_HEUR_MODE_FALLBACK = 0
} hipdnnBackendHeurMode_t;

#endif /* HIPDNN_BACKEND_HEURISTIC_TYPE_H */
