/* A batched matrix multiplication through the descriptor API, the way hipDNN's frontend
 * builds one: TENSOR descriptors for A, B and C, one MATMUL operation, one operation
 * graph; the best engine runs it on host buffers (the CPU engine plugin) and the result
 * is compared with a direct product here.
 *
 *     cc -std=c11 matmul.c -I PREFIX/include -L PREFIX/lib -Wl,-rpath,PREFIX/lib \
 *        -lhipdnn_backend -lm -o matmul && ./matmul
 *
 * c[b,i,j] = sum_k a[b,i,k] * bm[b,k,j] */
#include <math.h>
#include <stdalign.h>

#include "descriptor_graph.h"

enum { BATCH = 2, M = 5, K = 7, N = 3 };
enum { A_UID = 1, B_UID = 2, C_UID = 3 };

static alignas(64) float a[BATCH * M * K];
static alignas(64) float bm[BATCH * K * N];
static alignas(64) float c[BATCH * M * N];

int main(void)
{
    for (size_t i = 0; i < sizeof a / sizeof a[0]; ++i) {
        a[i] = (float)((int)(i * 7919 % 17) - 8) / 8.0f;
    }
    for (size_t i = 0; i < sizeof bm / sizeof bm[0]; ++i) {
        bm[i] = (float)((int)(i * 104729 % 13) - 6) / 4.0f;
    }

    int result = 0;
    hipdnnHandle_t handle = NULL;
    hipdnnBackendDescriptor_t tensors[3] = {NULL, NULL, NULL};
    hipdnnBackendDescriptor_t matmul = NULL, graph = NULL;
    TRY(hipdnnCreate(&handle));

    const int64_t a_dims[] = {BATCH, M, K}, b_dims[] = {BATCH, K, N}, c_dims[] = {BATCH, M, N};
    if (make_tensor(&tensors[0], A_UID, "a", 3, a_dims, false) || make_tensor(&tensors[1], B_UID, "b", 3, b_dims, false)
        || make_tensor(&tensors[2], C_UID, "c", 3, c_dims, false)) {
        result = 1;
        goto done;
    }
    const hipdnnBackendAttributeName_t slots[] = {HIPDNN_ATTR_OPERATION_MATMUL_ADESC, HIPDNN_ATTR_OPERATION_MATMUL_BDESC,
                                                  HIPDNN_ATTR_OPERATION_MATMUL_CDESC};
    hipdnnDataType_t type = HIPDNN_DATA_FLOAT;
    TRY(hipdnnBackendCreateDescriptor(HIPDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR, &matmul));
    if (set_tensors(matmul, 3, slots, tensors)) {
        result = 1;
        goto done;
    }
    TRY(hipdnnBackendSetAttribute(matmul, HIPDNN_ATTR_MATMUL_COMP_TYPE, HIPDNN_TYPE_DATA_TYPE, 1, &type));
    TRY(hipdnnBackendSetAttribute(matmul, HIPDNN_ATTR_OPERATION_NAME_EXT, HIPDNN_TYPE_CHAR, 6, "matmul"));
    TRY(hipdnnBackendFinalize(matmul));
    if (make_graph(&graph, handle, 1, &matmul)) {
        result = 1;
        goto done;
    }

    const int64_t uids[] = {A_UID, B_UID, C_UID};
    void* const pointers[] = {a, bm, c};
    if (run_graph(handle, graph, 3, uids, pointers)) {
        result = 1;
        goto done;
    }

    double max_error = 0.0;
    for (int b = 0; b < BATCH; ++b) {
        for (int i = 0; i < M; ++i) {
            for (int j = 0; j < N; ++j) {
                double want = 0.0;
                for (int k = 0; k < K; ++k) {
                    want += (double)a[(b * M + i) * K + k] * bm[(b * K + k) * N + j];
                }
                double e = fabs((double)c[(b * M + i) * N + j] - want);
                max_error = e > max_error ? e : max_error;
            }
        }
    }
    printf("matmul %dx%dx%d * %dx%dx%d: max abs error %.3g\n", BATCH, M, K, BATCH, K, N, max_error);
    if (max_error > 1e-4) {
        fprintf(stderr, "result differs from the reference\n");
        result = 1;
    }

done:
    hipdnnBackendDestroyDescriptor(graph);
    hipdnnBackendDestroyDescriptor(matmul);
    for (int i = 0; i < 3; ++i) {
        hipdnnBackendDestroyDescriptor(tensors[i]);
    }
    hipdnnDestroy(handle);
    return result;
}
