/* Convolution + bias + ReLU through the descriptor API, the way hipDNN's fused
 * convolution sample builds it with the frontend: one TENSOR descriptor per tensor (the
 * two intermediates virtual), a convolution and two pointwise operations, one operation
 * graph; the best engine runs it on host buffers (the CPU engine plugin) and the result
 * is compared with a direct computation here.
 *
 *     cc -std=c11 conv_bias_relu.c -I PREFIX/include -L PREFIX/lib -Wl,-rpath,PREFIX/lib \
 *        -lhipdnn_backend -lm -o conv_bias_relu && ./conv_bias_relu
 *
 * y[n,k,p,q] = max(0, b[k] + sum_{c,r,s} x[n,c,p+r-1,q+s-1] * w[k,c,r,s])
 * (NCHW, 3x3, padding 1, stride 1) */
#include <math.h>
#include <stdalign.h>

#include "descriptor_graph.h"

enum { N = 2, C = 4, H = 8, W = 8, K = 8, R = 3, S = 3 };
enum { X_UID = 1, W_UID = 2, CONV_UID = 3, B_UID = 4, BIASED_UID = 5, Y_UID = 6 };

static alignas(64) float x[N * C * H * W];
static alignas(64) float w[K * C * R * S];
static alignas(64) float b[K];
static alignas(64) float y[N * K * H * W];

static double reference(int n, int k, int p, int q)
{
    double sum = b[k];
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
    return sum > 0.0 ? sum : 0.0;
}

/* A finalized pointwise operation: `mode` of `in_0` (and `in_1`) into `out`. */
static int pointwise(hipdnnBackendDescriptor_t* out, const char* name, hipdnnPointwiseMode_t mode,
                     hipdnnBackendDescriptor_t in_0, hipdnnBackendDescriptor_t in_1, hipdnnBackendDescriptor_t y_desc)
{
    int result = 0;
    hipdnnDataType_t type = HIPDNN_DATA_FLOAT;
    hipdnnBackendDescriptor_t op = NULL;
    TRY(hipdnnBackendCreateDescriptor(HIPDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, &op));
    TRY(hipdnnBackendSetAttribute(op, HIPDNN_ATTR_POINTWISE_MODE, HIPDNN_TYPE_POINTWISE_MODE, 1, &mode));
    TRY(hipdnnBackendSetAttribute(op, HIPDNN_ATTR_POINTWISE_MATH_PREC, HIPDNN_TYPE_DATA_TYPE, 1, &type));
    TRY(hipdnnBackendSetAttribute(op, HIPDNN_ATTR_OPERATION_POINTWISE_IN_0_EXT, HIPDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                  &in_0));
    if (in_1 != NULL) {
        TRY(hipdnnBackendSetAttribute(op, HIPDNN_ATTR_OPERATION_POINTWISE_IN_1_EXT, HIPDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                      &in_1));
    }
    TRY(hipdnnBackendSetAttribute(op, HIPDNN_ATTR_OPERATION_POINTWISE_OUT_0_EXT, HIPDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                  &y_desc));
    TRY(hipdnnBackendSetAttribute(op, HIPDNN_ATTR_OPERATION_NAME_EXT, HIPDNN_TYPE_CHAR, (int64_t)strlen(name), name));
    TRY(hipdnnBackendFinalize(op));
    *out = op;
    op = NULL;
done:
    hipdnnBackendDestroyDescriptor(op);
    return result;
}

int main(void)
{
    for (size_t i = 0; i < sizeof x / sizeof x[0]; ++i) {
        x[i] = (float)((int)(i * 7919 % 23) - 11) / 8.0f;
    }
    for (size_t i = 0; i < sizeof w / sizeof w[0]; ++i) {
        w[i] = (float)((int)(i * 104729 % 19) - 9) / 16.0f;
    }
    for (int k = 0; k < K; ++k) {
        b[k] = (float)(k - K / 2) / 4.0f;
    }

    int result = 0;
    hipdnnHandle_t handle = NULL;
    hipdnnBackendDescriptor_t x_desc = NULL, w_desc = NULL, conv_desc = NULL, b_desc = NULL, biased_desc = NULL,
                              y_desc = NULL, conv = NULL, add = NULL, relu = NULL, graph = NULL;
    TRY(hipdnnCreate(&handle));

    const int64_t x_dims[] = {N, C, H, W}, w_dims[] = {K, C, R, S}, y_dims[] = {N, K, H, W}, b_dims[] = {1, K, 1, 1};
    if (make_tensor(&x_desc, X_UID, "x", 4, x_dims, false) || make_tensor(&w_desc, W_UID, "w", 4, w_dims, false)
        || make_tensor(&conv_desc, CONV_UID, "conv_out", 4, y_dims, true)
        || make_tensor(&b_desc, B_UID, "b", 4, b_dims, false)
        || make_tensor(&biased_desc, BIASED_UID, "biased", 4, y_dims, true)
        || make_tensor(&y_desc, Y_UID, "y", 4, y_dims, false)) {
        result = 1;
        goto done;
    }

    /* The convolution: its tensors, then the parameters every convolution takes. */
    const hipdnnBackendAttributeName_t conv_slots[] = {HIPDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X,
                                                       HIPDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,
                                                       HIPDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y};
    const hipdnnBackendDescriptor_t conv_tensors[] = {x_desc, w_desc, conv_desc};
    const int64_t padding[] = {1, 1}, ones[] = {1, 1};
    hipdnnConvolutionMode_t mode = HIPDNN_CROSS_CORRELATION;
    hipdnnDataType_t type = HIPDNN_DATA_FLOAT;
    TRY(hipdnnBackendCreateDescriptor(HIPDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, &conv));
    if (set_tensors(conv, 3, conv_slots, conv_tensors)) {
        result = 1;
        goto done;
    }
    TRY(hipdnnBackendSetAttribute(conv, HIPDNN_ATTR_CONVOLUTION_PRE_PADDINGS, HIPDNN_TYPE_INT64, 2, padding));
    TRY(hipdnnBackendSetAttribute(conv, HIPDNN_ATTR_CONVOLUTION_POST_PADDINGS, HIPDNN_TYPE_INT64, 2, padding));
    TRY(hipdnnBackendSetAttribute(conv, HIPDNN_ATTR_CONVOLUTION_FILTER_STRIDES, HIPDNN_TYPE_INT64, 2, ones));
    TRY(hipdnnBackendSetAttribute(conv, HIPDNN_ATTR_CONVOLUTION_DILATIONS, HIPDNN_TYPE_INT64, 2, ones));
    TRY(hipdnnBackendSetAttribute(conv, HIPDNN_ATTR_CONVOLUTION_CONV_MODE, HIPDNN_TYPE_CONVOLUTION_MODE, 1, &mode));
    TRY(hipdnnBackendSetAttribute(conv, HIPDNN_ATTR_CONVOLUTION_COMP_TYPE, HIPDNN_TYPE_DATA_TYPE, 1, &type));
    TRY(hipdnnBackendSetAttribute(conv, HIPDNN_ATTR_OPERATION_NAME_EXT, HIPDNN_TYPE_CHAR, 4, "conv"));
    TRY(hipdnnBackendFinalize(conv));
    if (pointwise(&add, "bias", HIPDNN_POINTWISE_ADD, conv_desc, b_desc, biased_desc)
        || pointwise(&relu, "relu", HIPDNN_POINTWISE_RELU_FWD, biased_desc, NULL, y_desc)) {
        result = 1;
        goto done;
    }

    const hipdnnBackendDescriptor_t ops[] = {conv, add, relu};
    if (make_graph(&graph, handle, 3, ops)) {
        result = 1;
        goto done;
    }
    /* The graph holds what it needs: the tensor and operation descriptors can go now. */
    hipdnnBackendDescriptor_t* parts[] = {&x_desc, &w_desc, &conv_desc, &b_desc, &biased_desc, &y_desc,
                                          &conv,   &add,    &relu};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; ++i) {
        hipdnnBackendDestroyDescriptor(*parts[i]);
        *parts[i] = NULL;
    }

    /* Virtual tensors get no buffer. */
    const int64_t uids[] = {X_UID, W_UID, B_UID, Y_UID};
    void* const pointers[] = {x, w, b, y};
    if (run_graph(handle, graph, 4, uids, pointers)) {
        result = 1;
        goto done;
    }

    double max_error = 0.0;
    int positive = 0;
    for (int n = 0; n < N; ++n) {
        for (int k = 0; k < K; ++k) {
            for (int p = 0; p < H; ++p) {
                for (int q = 0; q < W; ++q) {
                    double got = y[((n * K + k) * H + p) * W + q];
                    double e = fabs(got - reference(n, k, p, q));
                    max_error = e > max_error ? e : max_error;
                    positive += got > 0.0;
                }
            }
        }
    }
    printf("conv_bias_relu %dx%dx%dx%d * %dx%dx%dx%d: max abs error %.3g (%d of %d outputs positive)\n", N, C, H,
           W, K, C, R, S, max_error, positive, N * K * H * W);
    if (max_error > 1e-3 || positive == 0 || positive == N * K * H * W) {
        fprintf(stderr, "result differs from the reference\n");
        result = 1;
    }

done:
    hipdnnBackendDestroyDescriptor(graph);
    hipdnnBackendDestroyDescriptor(relu);
    hipdnnBackendDestroyDescriptor(add);
    hipdnnBackendDestroyDescriptor(conv);
    hipdnnBackendDestroyDescriptor(y_desc);
    hipdnnBackendDestroyDescriptor(biased_desc);
    hipdnnBackendDestroyDescriptor(b_desc);
    hipdnnBackendDestroyDescriptor(conv_desc);
    hipdnnBackendDestroyDescriptor(w_desc);
    hipdnnBackendDestroyDescriptor(x_desc);
    hipdnnDestroy(handle);
    return result;
}
