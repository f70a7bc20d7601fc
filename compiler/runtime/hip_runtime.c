/* The in-tree runtime of the hip-ep compiler: the `wrap_*` functions that `convert-hip-to-llvm`
 * lowers `hip.*` ops to. Compiled to LLVM bitcode by build.rs (clang-22 -O2 -emit-llvm) and
 * linked into every model module before plugin bitcode, so a plugin may override any of them.
 *
 * This machine has no GPU: the wrappers compute on the host. All buffers are dense row-major
 * f32; an operand of an elementwise op is broadcast along leading dimensions when its element
 * count divides the output's (the pass checks that its shape is a suffix of the output's). */
#include <stdint.h>

#define BINARY(name, expr)                                                                     \
    void name(const float *a, int64_t na, const float *b, int64_t nb, float *out, int64_t n) { \
        if (na == n && nb == n) {                                                              \
            for (int64_t i = 0; i < n; ++i) {                                                  \
                float x = a[i], y = b[i];                                                      \
                out[i] = (expr);                                                               \
            }                                                                                  \
            return;                                                                            \
        }                                                                                      \
        for (int64_t i = 0; i < n; ++i) {                                                      \
            float x = a[i % na], y = b[i % nb];                                                \
            out[i] = (expr);                                                                   \
        }                                                                                      \
    }

BINARY(wrap_add, x + y)
BINARY(wrap_sub, x - y)
BINARY(wrap_mul, x * y)

void wrap_relu(const float *x, float *out, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
        out[i] = x[i] > 0.0f ? x[i] : 0.0f;
    }
}

/* out[m x n] = a[m x k] * b[k x n] */
void wrap_matmul(const float *a, const float *b, float *out, int64_t m, int64_t n, int64_t k) {
    for (int64_t i = 0; i < m; ++i) {
        float *row = out + i * n;
        for (int64_t j = 0; j < n; ++j) {
            row[j] = 0.0f;
        }
        for (int64_t p = 0; p < k; ++p) {
            float av = a[i * k + p];
            const float *brow = b + p * n;
            for (int64_t j = 0; j < n; ++j) {
                row[j] += av * brow[j];
            }
        }
    }
}

/* ONNX Gemm: out[m x n] = alpha * op(a) * op(b) + beta * c, where op transposes when asked;
 * a is [m x k] (or [k x m] with trans_a), b is [k x n] (or [n x k] with trans_b); c may be
 * NULL, else it is [c_m x c_n] with c_m in {1, m} and c_n in {1, n} (broadcast). */
void wrap_gemm(const float *a, const float *b, const float *c, float *out, int64_t m, int64_t n,
               int64_t k, int64_t trans_a, int64_t trans_b, float alpha, float beta, int64_t c_m,
               int64_t c_n) {
    for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
            float acc = 0.0f;
            for (int64_t p = 0; p < k; ++p) {
                float av = trans_a ? a[p * m + i] : a[i * k + p];
                float bv = trans_b ? b[j * k + p] : b[p * n + j];
                acc += av * bv;
            }
            float r = alpha * acc;
            if (c) {
                r += beta * c[(i % c_m) * c_n + (j % c_n)];
            }
            out[i * n + j] = r;
        }
    }
}
