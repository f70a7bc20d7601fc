/* Batch normalization for inference through the descriptor API, the way hipDNN's
 * batch-norm inference sample builds it with the frontend: TENSOR descriptors for the
 * input, the per-channel statistics, scale and bias, and the output, one
 * BATCHNORM_INFERENCE operation, one operation graph; the best engine runs it on host
 * buffers (the CPU engine plugin) and the result is compared with the formula here.
 *
 *     cc -std=c11 batchnorm_inference.c -I PREFIX/include -L PREFIX/lib \
 *        -Wl,-rpath,PREFIX/lib -lhipdnn_backend -lm -o batchnorm_inference && ./batchnorm_inference
 *
 * y[n,c,h,w] = scale[c] * (x[n,c,h,w] - mean[c]) * inv_variance[c] + bias[c]  (NCHW) */
#include <math.h>
#include <stdalign.h>

#include "descriptor_graph.h"

enum { N = 2, C = 4, H = 5, W = 5 };
enum { X_UID = 1, MEAN_UID = 2, INV_VARIANCE_UID = 3, SCALE_UID = 4, BIAS_UID = 5, Y_UID = 6 };

static alignas(64) float x[N * C * H * W];
static alignas(64) float mean[C];
static alignas(64) float inv_variance[C];
static alignas(64) float scale[C];
static alignas(64) float bias[C];
static alignas(64) float y[N * C * H * W];

int main(void)
{
    for (size_t i = 0; i < sizeof x / sizeof x[0]; ++i) {
        x[i] = (float)((int)(i * 7919 % 29) - 14) / 4.0f;
    }
    for (int c = 0; c < C; ++c) {
        mean[c] = (float)c / 2.0f - 0.75f;
        inv_variance[c] = 1.0f / sqrtf(1.0f + (float)c);
        scale[c] = 0.5f + (float)c / 4.0f;
        bias[c] = (float)(c % 2) - 0.25f;
    }

    int result = 0;
    hipdnnHandle_t handle = NULL;
    hipdnnBackendDescriptor_t tensors[6] = {NULL, NULL, NULL, NULL, NULL, NULL};
    hipdnnBackendDescriptor_t bn = NULL, graph = NULL;
    TRY(hipdnnCreate(&handle));

    const int64_t activation[] = {N, C, H, W}, channel[] = {1, C, 1, 1};
    if (make_tensor(&tensors[0], X_UID, "x", 4, activation, false)
        || make_tensor(&tensors[1], MEAN_UID, "mean", 4, channel, false)
        || make_tensor(&tensors[2], INV_VARIANCE_UID, "inv_variance", 4, channel, false)
        || make_tensor(&tensors[3], SCALE_UID, "scale", 4, channel, false)
        || make_tensor(&tensors[4], BIAS_UID, "bias", 4, channel, false)
        || make_tensor(&tensors[5], Y_UID, "y", 4, activation, false)) {
        result = 1;
        goto done;
    }

    const hipdnnBackendAttributeName_t slots[] = {
        HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_X_EXT,     HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_MEAN_EXT,
        HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_INV_VARIANCE_EXT, HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_SCALE_EXT,
        HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_BIAS_EXT,  HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_Y_EXT};
    hipdnnDataType_t type = HIPDNN_DATA_FLOAT;
    TRY(hipdnnBackendCreateDescriptor(HIPDNN_BACKEND_OPERATION_BATCHNORM_INFERENCE_DESCRIPTOR_EXT, &bn));
    if (set_tensors(bn, 6, slots, tensors)) {
        result = 1;
        goto done;
    }
    TRY(hipdnnBackendSetAttribute(bn, HIPDNN_ATTR_BATCHNORM_INF_COMP_TYPE_EXT, HIPDNN_TYPE_DATA_TYPE, 1, &type));
    TRY(hipdnnBackendSetAttribute(bn, HIPDNN_ATTR_OPERATION_NAME_EXT, HIPDNN_TYPE_CHAR, 2, "bn"));
    TRY(hipdnnBackendFinalize(bn));
    if (make_graph(&graph, handle, 1, &bn)) {
        result = 1;
        goto done;
    }

    const int64_t uids[] = {X_UID, MEAN_UID, INV_VARIANCE_UID, SCALE_UID, BIAS_UID, Y_UID};
    void* const pointers[] = {x, mean, inv_variance, scale, bias, y};
    if (run_graph(handle, graph, 6, uids, pointers)) {
        result = 1;
        goto done;
    }

    double max_error = 0.0;
    for (int n = 0; n < N; ++n) {
        for (int c = 0; c < C; ++c) {
            for (int i = 0; i < H * W; ++i) {
                size_t at = (size_t)((n * C + c) * H * W + i);
                double want = (double)scale[c] * ((double)x[at] - mean[c]) * inv_variance[c] + bias[c];
                double e = fabs((double)y[at] - want);
                max_error = e > max_error ? e : max_error;
            }
        }
    }
    printf("batchnorm_inference %dx%dx%dx%d: max abs error %.3g\n", N, C, H, W, max_error);
    if (max_error > 1e-4) {
        fprintf(stderr, "result differs from the reference\n");
        result = 1;
    }

done:
    hipdnnBackendDestroyDescriptor(graph);
    hipdnnBackendDestroyDescriptor(bn);
    for (int i = 0; i < 6; ++i) {
        hipdnnBackendDestroyDescriptor(tensors[i]);
    }
    hipdnnDestroy(handle);
    return result;
}
