/* What the descriptor-API examples share: checked calls, TENSOR descriptors, an
 * operation graph from its operations, and running a finalized graph on host buffers
 * (heuristic -> engine config -> plan -> variant pack -> execute), the way hipDNN's
 * frontend drives the backend. Every function returns 0 on success, else prints the
 * failed call with the backend's message and returns 1. Header-only: each example is
 * one translation unit. */
#ifndef HIPDNN_EXAMPLES_DESCRIPTOR_GRAPH_H
#define HIPDNN_EXAMPLES_DESCRIPTOR_GRAPH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hipdnn_backend.h>

static inline int example_fail(const char* what, hipdnnStatus_t status)
{
    char message[1024];
    hipdnnGetLastErrorString(message, sizeof message);
    fprintf(stderr, "%s failed: %s: %s\n", what, hipdnnGetErrorString(status), message);
    return 1;
}

/* Runs `call`; on failure reports it and jumps to `done` with `result` = 1. */
#define TRY(call)                                                                                  \
    do {                                                                                           \
        hipdnnStatus_t status_ = (call);                                                           \
        if (status_ != HIPDNN_STATUS_SUCCESS) {                                                    \
            result = example_fail(#call, status_);                                                 \
            goto done;                                                                             \
        }                                                                                          \
    } while (0)

/* A finalized FLOAT TENSOR descriptor with packed strides, as the frontend makes one. */
static inline int make_tensor(hipdnnBackendDescriptor_t* out, int64_t uid, const char* name, int rank,
                       const int64_t* dims, bool is_virtual)
{
    int result = 0;
    int64_t strides[8];
    int64_t stride = 1;
    for (int i = rank - 1; i >= 0; --i) {
        strides[i] = stride;
        stride *= dims[i];
    }
    hipdnnDataType_t type = HIPDNN_DATA_FLOAT;
    int64_t alignment = 16;
    int64_t name_length = (int64_t)strlen(name);
    hipdnnBackendDescriptor_t t = NULL;
    TRY(hipdnnBackendCreateDescriptor(HIPDNN_BACKEND_TENSOR_DESCRIPTOR, &t));
    TRY(hipdnnBackendSetAttribute(t, HIPDNN_ATTR_TENSOR_UNIQUE_ID, HIPDNN_TYPE_INT64, 1, &uid));
    TRY(hipdnnBackendSetAttribute(t, HIPDNN_ATTR_TENSOR_NAME_EXT, HIPDNN_TYPE_CHAR, name_length, name));
    TRY(hipdnnBackendSetAttribute(t, HIPDNN_ATTR_TENSOR_DATA_TYPE, HIPDNN_TYPE_DATA_TYPE, 1, &type));
    TRY(hipdnnBackendSetAttribute(t, HIPDNN_ATTR_TENSOR_DIMENSIONS, HIPDNN_TYPE_INT64, rank, dims));
    TRY(hipdnnBackendSetAttribute(t, HIPDNN_ATTR_TENSOR_STRIDES, HIPDNN_TYPE_INT64, rank, strides));
    TRY(hipdnnBackendSetAttribute(t, HIPDNN_ATTR_TENSOR_IS_VIRTUAL, HIPDNN_TYPE_BOOLEAN, 1, &is_virtual));
    TRY(hipdnnBackendSetAttribute(t, HIPDNN_ATTR_TENSOR_BYTE_ALIGNMENT, HIPDNN_TYPE_INT64, 1, &alignment));
    TRY(hipdnnBackendFinalize(t));
    *out = t;
    t = NULL;
done:
    hipdnnBackendDestroyDescriptor(t);
    return result;
}

/* Sets each (attribute, tensor) pair of an operation descriptor. */
static inline int set_tensors(hipdnnBackendDescriptor_t op, int count, const hipdnnBackendAttributeName_t* names,
                       const hipdnnBackendDescriptor_t* tensors)
{
    int result = 0;
    for (int i = 0; i < count; ++i) {
        TRY(hipdnnBackendSetAttribute(op, names[i], HIPDNN_TYPE_BACKEND_DESCRIPTOR, 1, &tensors[i]));
    }
done:
    return result;
}

/* A finalized OPERATIONGRAPH of `ops` on `handle`, FLOAT throughout. */
static inline int make_graph(hipdnnBackendDescriptor_t* out, hipdnnHandle_t handle, int count,
                      const hipdnnBackendDescriptor_t* ops)
{
    int result = 0;
    hipdnnDataType_t type = HIPDNN_DATA_FLOAT;
    hipdnnBackendDescriptor_t graph = NULL;
    TRY(hipdnnBackendCreateDescriptor(HIPDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, &graph));
    TRY(hipdnnBackendSetAttribute(graph, HIPDNN_ATTR_OPERATIONGRAPH_OPS, HIPDNN_TYPE_BACKEND_DESCRIPTOR, count, ops));
    TRY(hipdnnBackendSetAttribute(graph, HIPDNN_ATTR_OPERATIONGRAPH_IO_DATA_TYPE_EXT, HIPDNN_TYPE_DATA_TYPE, 1, &type));
    TRY(hipdnnBackendSetAttribute(graph, HIPDNN_ATTR_OPERATIONGRAPH_COMPUTE_DATA_TYPE_EXT, HIPDNN_TYPE_DATA_TYPE, 1,
                                  &type));
    TRY(hipdnnBackendSetAttribute(graph, HIPDNN_ATTR_OPERATIONGRAPH_INTERMEDIATE_DATA_TYPE_EXT,
                                  HIPDNN_TYPE_DATA_TYPE, 1, &type));
    TRY(hipdnnBackendSetAttribute(graph, HIPDNN_ATTR_OPERATIONGRAPH_HANDLE, HIPDNN_TYPE_HANDLE, 1, &handle));
    TRY(hipdnnBackendFinalize(graph));
    *out = graph;
    graph = NULL;
done:
    hipdnnBackendDestroyDescriptor(graph);
    return result;
}

/* Runs a finalized graph on the best engine with the given (uid, host pointer) pairs;
 * prints the engine's workspace. */
static inline int run_graph(hipdnnHandle_t handle, hipdnnBackendDescriptor_t graph, int count, const int64_t* uids,
                     void* const* pointers)
{
    int result = 0;
    hipdnnBackendHeurMode_t mode = HIPDNN_HEUR_MODE_FALLBACK;
    hipdnnBackendDescriptor_t heuristic = NULL, config = NULL, plan = NULL, pack = NULL;
    void* workspace = NULL;
    TRY(hipdnnBackendCreateDescriptor(HIPDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, &heuristic));
    TRY(hipdnnBackendSetAttribute(heuristic, HIPDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, HIPDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                  &graph));
    TRY(hipdnnBackendSetAttribute(heuristic, HIPDNN_ATTR_ENGINEHEUR_MODE, HIPDNN_TYPE_HEUR_MODE, 1, &mode));
    TRY(hipdnnBackendFinalize(heuristic));
    TRY(hipdnnBackendCreateDescriptor(HIPDNN_BACKEND_ENGINECFG_DESCRIPTOR, &config));
    int64_t found = 0;
    TRY(hipdnnBackendGetAttribute(heuristic, HIPDNN_ATTR_ENGINEHEUR_RESULTS, HIPDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                  &found, &config));
    if (found < 1) {
        fprintf(stderr, "no engine runs the graph\n");
        result = 1;
        goto done;
    }
    int64_t workspace_size = 0, n = 0;
    TRY(hipdnnBackendGetAttribute(config, HIPDNN_ATTR_ENGINECFG_WORKSPACE_SIZE, HIPDNN_TYPE_INT64, 1, &n,
                                  &workspace_size));
    TRY(hipdnnBackendCreateDescriptor(HIPDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &plan));
    TRY(hipdnnBackendSetAttribute(plan, HIPDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, HIPDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                  &config));
    TRY(hipdnnBackendFinalize(plan));
    if (workspace_size > 0) {
        workspace = aligned_alloc(64, ((size_t)workspace_size + 63) / 64 * 64);
    }
    TRY(hipdnnBackendCreateDescriptor(HIPDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack));
    TRY(hipdnnBackendSetAttribute(pack, HIPDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, HIPDNN_TYPE_INT64, count, uids));
    TRY(hipdnnBackendSetAttribute(pack, HIPDNN_ATTR_VARIANT_PACK_DATA_POINTERS, HIPDNN_TYPE_VOID_PTR, count,
                                  pointers));
    TRY(hipdnnBackendSetAttribute(pack, HIPDNN_ATTR_VARIANT_PACK_WORKSPACE, HIPDNN_TYPE_VOID_PTR, 1, &workspace));
    TRY(hipdnnBackendFinalize(pack));
    TRY(hipdnnBackendExecute(handle, plan, pack));
    printf("workspace %lld bytes\n", (long long)workspace_size);
done:
    free(workspace);
    hipdnnBackendDestroyDescriptor(pack);
    hipdnnBackendDestroyDescriptor(plan);
    hipdnnBackendDestroyDescriptor(config);
    hipdnnBackendDestroyDescriptor(heuristic);
    return result;
}

#endif /* HIPDNN_EXAMPLES_DESCRIPTOR_GRAPH_H */
