/* A convolution through the hipDNN backend's C API, the way a C application runs one:
 * the graph comes as JSON (the FlatBuffer form works the same way through
 * hipdnnBackendCreateAndDeserializeGraph_ext), the engine heuristic picks the best engine,
 * the plan is built and executed on host buffers (the CPU engine plugin), and the result
 * is compared with a direct convolution computed here.
 *
 *     cc -std=c11 conv_fprop.c -I PREFIX/include -L PREFIX/lib -Wl,-rpath,PREFIX/lib \
 *        -lhipdnn_backend -lm -o conv_fprop && ./conv_fprop
 *
 * y[n,k,p,q] = sum_{c,r,s} x[n,c,p+r-1,q+s-1] * w[k,c,r,s]  (NCHW, 3x3, padding 1, stride 1) */
#include <math.h>
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hipdnn_backend.h>

enum { N = 2, C = 8, H = 12, W = 12, K = 16, R = 3, S = 3 };

static const char graph_json[] =
    "{\"name\": \"conv_fprop_example\", \"io_data_type\": \"FLOAT\","
    " \"compute_data_type\": \"FLOAT\", \"intermediate_data_type\": \"FLOAT\","
    " \"tensors\": ["
    "  {\"uid\": 1, \"name\": \"x\", \"dims\": [2, 8, 12, 12], \"strides\": [1152, 144, 12, 1]},"
    "  {\"uid\": 2, \"name\": \"w\", \"dims\": [16, 8, 3, 3], \"strides\": [72, 9, 3, 1]},"
    "  {\"uid\": 3, \"name\": \"y\", \"dims\": [2, 16, 12, 12], \"strides\": [2304, 144, 12, 1]}],"
    " \"nodes\": [{\"name\": \"conv\", \"attributes_type\": \"ConvolutionFwdAttributes\","
    "  \"attributes\": {\"x_tensor_uid\": 1, \"w_tensor_uid\": 2, \"y_tensor_uid\": 3,"
    "   \"pre_padding\": [1, 1], \"post_padding\": [1, 1], \"stride\": [1, 1],"
    "   \"dilation\": [1, 1], \"conv_mode\": \"CROSS_CORRELATION\"}}]}";

static alignas(64) float x[N * C * H * W];
static alignas(64) float w[K * C * R * S];
static alignas(64) float y[N * K * H * W];

/* Prints the failed call with the backend's message; returns 1. */
static int fail(const char* what, hipdnnStatus_t status)
{
    char message[1024];
    hipdnnGetLastErrorString(message, sizeof message);
    fprintf(stderr, "%s failed: %s: %s\n", what, hipdnnGetErrorString(status), message);
    return 1;
}

#define TRY(call)                                                                                  \
    do {                                                                                           \
        hipdnnStatus_t status_ = (call);                                                           \
        if (status_ != HIPDNN_STATUS_SUCCESS) {                                                    \
            result = fail(#call, status_);                                                         \
            goto done;                                                                             \
        }                                                                                          \
    } while (0)

static float reference(int n, int k, int p, int q)
{
    double sum = 0.0;
    for (int c = 0; c < C; ++c) {
        for (int r = 0; r < R; ++r) {
            for (int s = 0; s < S; ++s) {
                int h = p + r - 1, v = q + s - 1;
                if (h >= 0 && h < H && v >= 0 && v < W) {
                    sum += (double)x[((n * C + c) * H + h) * W + v] * w[((k * C + c) * R + r) * S + s];
                }
            }
        }
    }
    return (float)sum;
}

int main(void)
{
    for (size_t i = 0; i < sizeof x / sizeof x[0]; ++i) {
        x[i] = (float)((int)(i * 7919 % 23) - 11) / 8.0f;
    }
    for (size_t i = 0; i < sizeof w / sizeof w[0]; ++i) {
        w[i] = (float)((int)(i * 104729 % 19) - 9) / 16.0f;
    }

    int result = 0;
    hipdnnHandle_t handle = NULL;
    hipdnnBackendDescriptor_t graph = NULL, heuristic = NULL, config = NULL, plan = NULL, pack = NULL;
    TRY(hipdnnCreate(&handle));
    TRY(hipdnnBackendCreateAndDeserializeJsonGraph_ext(&graph, graph_json, strlen(graph_json)));
    TRY(hipdnnBackendSetAttribute(graph, HIPDNN_ATTR_OPERATIONGRAPH_HANDLE, HIPDNN_TYPE_HANDLE, 1, &handle));
    TRY(hipdnnBackendFinalize(graph));

    /* The best engine for the graph. */
    TRY(hipdnnBackendCreateDescriptor(HIPDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, &heuristic));
    TRY(hipdnnBackendSetAttribute(heuristic, HIPDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH,
                                  HIPDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph));
    hipdnnBackendHeurMode_t mode = HIPDNN_HEUR_MODE_FALLBACK;
    TRY(hipdnnBackendSetAttribute(heuristic, HIPDNN_ATTR_ENGINEHEUR_MODE, HIPDNN_TYPE_HEUR_MODE, 1, &mode));
    TRY(hipdnnBackendFinalize(heuristic));
    TRY(hipdnnBackendCreateDescriptor(HIPDNN_BACKEND_ENGINECFG_DESCRIPTOR, &config));
    int64_t found = 0;
    TRY(hipdnnBackendGetAttribute(heuristic, HIPDNN_ATTR_ENGINEHEUR_RESULTS, HIPDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                  &found, &config));

    /* The plan and its workspace. */
    TRY(hipdnnBackendCreateDescriptor(HIPDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &plan));
    TRY(hipdnnBackendSetAttribute(plan, HIPDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, HIPDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                  &config));
    TRY(hipdnnBackendFinalize(plan));
    int64_t workspace_size = 0, count = 0;
    TRY(hipdnnBackendGetAttribute(plan, HIPDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, HIPDNN_TYPE_INT64, 1, &count,
                                  &workspace_size));
    void* workspace = workspace_size > 0 ? aligned_alloc(64, ((size_t)workspace_size + 63) / 64 * 64) : NULL;

    /* Execute. */
    int64_t uids[3] = {1, 2, 3};
    void* pointers[3] = {x, w, y};
    TRY(hipdnnBackendCreateDescriptor(HIPDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack));
    TRY(hipdnnBackendSetAttribute(pack, HIPDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, HIPDNN_TYPE_INT64, 3, uids));
    TRY(hipdnnBackendSetAttribute(pack, HIPDNN_ATTR_VARIANT_PACK_DATA_POINTERS, HIPDNN_TYPE_VOID_PTR, 3, pointers));
    TRY(hipdnnBackendSetAttribute(pack, HIPDNN_ATTR_VARIANT_PACK_WORKSPACE, HIPDNN_TYPE_VOID_PTR, 1, &workspace));
    TRY(hipdnnBackendFinalize(pack));
    hipdnnStatus_t status = hipdnnBackendExecute(handle, plan, pack);
    free(workspace);
    if (status != HIPDNN_STATUS_SUCCESS) {
        result = fail("hipdnnBackendExecute", status);
        goto done;
    }

    double max_error = 0.0;
    for (int n = 0; n < N; ++n) {
        for (int k = 0; k < K; ++k) {
            for (int p = 0; p < H; ++p) {
                for (int q = 0; q < W; ++q) {
                    double e = fabs((double)y[((n * K + k) * H + p) * W + q] - reference(n, k, p, q));
                    max_error = e > max_error ? e : max_error;
                }
            }
        }
    }
    printf("conv_fprop %dx%dx%dx%d * %dx%dx%dx%d: max abs error %.3g (workspace %lld bytes)\n", N, C, H, W, K, C,
           R, S, max_error, (long long)workspace_size);
    if (max_error > 1e-3) {
        fprintf(stderr, "result differs from the reference\n");
        result = 1;
    }

done:
    hipdnnBackendDestroyDescriptor(pack);
    hipdnnBackendDestroyDescriptor(plan);
    hipdnnBackendDestroyDescriptor(config);
    hipdnnBackendDestroyDescriptor(heuristic);
    hipdnnBackendDestroyDescriptor(graph);
    hipdnnDestroy(handle);
    return result;
}
