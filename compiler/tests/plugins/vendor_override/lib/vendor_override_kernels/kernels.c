/* The overriding plugin's kernel library: the same sum, plus a call counter the tests read. */
#include <stdint.h>

static int64_t calls;

void vendor_override_kernel_add(const float *a, const float *b, float *out, int64_t n) {
    calls += 1;
    for (int64_t i = 0; i < n; ++i) {
        out[i] = a[i] + b[i];
    }
}

int64_t vendor_override_calls(void) { return calls; }
