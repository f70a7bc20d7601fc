#!/usr/bin/env bash
# CPU_ENGINE vs ONNX Runtime (convolutions) and numpy (matmul), 2 threads each.
#
#   bench/cpu_vs_onnxruntime.sh [--reps N] [--batches 1,8]
#
# Makes a venv under target/bench-venv with onnxruntime, onnx and numpy from PyPI,
# builds the release conv_bench example, runs both sides, prints the table.
# Times are medians; the machine should be otherwise idle.
set -euo pipefail
cd "$(dirname "$0")/.."
REPS=10
BATCHES=1,8
while [[ $# -gt 0 ]]; do
  case "$1" in
    --reps) REPS="$2"; shift 2 ;;
    --batches) BATCHES="$2"; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
VENV=target/bench-venv
if [[ ! -x "$VENV/bin/python" ]] || ! "$VENV/bin/python" -c "import onnxruntime, onnx, numpy" 2>/dev/null; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet onnxruntime onnx numpy
fi
OUT=target/bench-cpu
mkdir -p "$OUT"
cargo build --release -p hipdnn-cpu-provider --example conv_bench
BIN="${CARGO_TARGET_DIR:-target}/release/examples/conv_bench"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
"$BIN" --threads 2 --reps "$REPS" --batches "$BATCHES" > "$OUT/ours.json"
OMP_NUM_THREADS=2 OPENBLAS_NUM_THREADS=2 MKL_NUM_THREADS=2 \
  "$VENV/bin/python" bench/ort_bench.py --threads 2 --reps "$REPS" --batches "$BATCHES" > "$OUT/peer.json"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
"$VENV/bin/python" bench/compare.py "$OUT/ours.json" "$OUT/peer.json" | tee "$OUT/table.txt"
