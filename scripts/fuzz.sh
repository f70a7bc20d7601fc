#!/usr/bin/env bash
# Fuzzes one target for MINUTES minutes (default 1) with a fresh seed (or SEED):
#
#   scripts/fuzz.sh graph-json|graph-fb|engine-details|npy|capi|all MINUTES [SEED]
#   scripts/fuzz.sh run-check MINUTES [SEED]   # mutated graphs through `hipdnn run --check`
#
# Builds with the `fuzz` profile (optimized, with overflow checks and debug assertions, so
# an arithmetic overflow is a finding too). Inputs that break an invariant are written to
# target/fuzz-findings/ and the script exits 1. docs/robustness.md records what the runs
# found; the workspace tests run every target briefly on a fixed seed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
usage="usage: scripts/fuzz.sh TARGET|all|run-check MINUTES [SEED]"
target=${1:?$usage}
minutes=${2:-1}
seed=${3:-fresh}
target_dir=${CARGO_TARGET_DIR:-target}
cargo build --profile fuzz -p hipdnn-fuzz
args=("$target" --seconds "$((minutes * 60))" --seed "$seed" --findings "$target_dir/fuzz-findings")
if [ "$target" = run-check ]; then
    cargo build --profile fuzz -p hipdnn-cli -p hipdnn-cpu-provider
    mkdir -p "$target_dir/fuzz-plugins"
    # Absolute: the backend resolves a relative HIPDNN_PLUGIN_DIR against its own
    # directory (as hipDNN does), not the working directory.
    plugins="$(cd "$target_dir/fuzz-plugins" && pwd)"
    cp "$target_dir/fuzz/libhipdnn_cpu_provider.so" "$plugins/"
    args+=(--hipdnn "$target_dir/fuzz/hipdnn" --plugins "$plugins")
fi
# Not exec: the driver's RUSAGE_CHILDREN (its "largest hipdnn run") would include the
# cargo builds above.
"$target_dir/fuzz/hipdnn-fuzz" "${args[@]}"
