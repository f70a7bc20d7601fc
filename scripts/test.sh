#!/usr/bin/env bash
# All tests: installs the system packages the tests use (scripts/setup-debian.sh: C tools,
# valgrind, LLVM/MLIR 22), then runs the workspace's tests and the compiler's. This is the README's test command; .ci/run calls it.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scripts/setup-debian.sh
cargo test --workspace --locked "$@"

# The CPU engine's Winograd takes one of two paths by the CPU (constant filters streamed
# from their taps on AMD's with AVX-512, each of two threads keeping its own tiles on AMD's;
# kept transformed filters and phases elsewhere): its tests again with each choice forced,
# so that both paths run on any machine.
for choice in 0 1; do
    HIPDNN_CPU_WINOGRAD_STREAM=$choice HIPDNN_CPU_WINOGRAD_OWN=$choice \
        cargo test -p hipdnn-cpu-provider --locked "$@" -- winograd
done

# The compiler (compiler/, its own workspace: it links LLVM/MLIR 22). First built with no
# plugin selected (every plugin hook is a no-op; the unit tests compile and run a model),
# then with the two sample plugins selected, which the integration tests exercise: `vendor`
# (in-tree, compiler/plugins) and `vendor_override` (found out of tree, through
# HIPDNN_EP_COMPILER_PLUGIN_PATHS).
HIPDNN_EP_COMPILER_PLUGINS= cargo test --manifest-path compiler/Cargo.toml --locked --lib "$@"
HIPDNN_EP_COMPILER_PLUGIN_PATHS="$PWD/compiler/tests/plugins" \
    HIPDNN_EP_COMPILER_PLUGINS="vendor;vendor_override" \
    cargo test --manifest-path compiler/Cargo.toml --locked "$@"
