/* The vendor's runtime wrapper for vendor.add, compiled to bitcode and contributed with
 * add_runtime_bitcode. Prefixed so it cannot collide with an in-tree wrap_*. */
#include <stdint.h>

void vendor_kernel_add(const float *a, const float *b, float *out, int64_t n);

void hip_ep_vendor_add(const float *a, const float *b, float *out, int64_t n) {
    vendor_kernel_add(a, b, out, n);
}
