#!/usr/bin/env bash
# CPU_ENGINE vs ONNX Runtime (convolutions) and numpy (matmul), 2 threads each.
#
#   bench/cpu_vs_onnxruntime.sh [--reps N] [--rounds R] [--batches 1,8]
#
# Makes a venv under target/bench-venv with onnxruntime, onnx and numpy from PyPI,
# builds the release conv_bench example, runs both sides R times alternately (ours,
# peer, ours, peer, ...), prints the table. Each side's time per layer is its best
# round's median of N reps: rounds that alternate see the same background load, so a
# shared machine does not favour whichever side happened to run in a quiet moment.
set -euo pipefail
cd "$(dirname "$0")/.."
REPS=10
ROUNDS=3
BATCHES=1,8
while [[ $# -gt 0 ]]; do
  case "$1" in
    --reps) REPS="$2"; shift 2 ;;
    --rounds) ROUNDS="$2"; shift 2 ;;
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
OURS=()
PEER=()
for r in $(seq 1 "$ROUNDS"); do
  "$BIN" --threads 2 --reps "$REPS" --batches "$BATCHES" > "$OUT/ours$r.json"
  OMP_NUM_THREADS=2 OPENBLAS_NUM_THREADS=2 MKL_NUM_THREADS=2 \
    "$VENV/bin/python" bench/ort_bench.py --threads 2 --reps "$REPS" --batches "$BATCHES" > "$OUT/peer$r.json"
  OURS+=("$OUT/ours$r.json")
  PEER+=("$OUT/peer$r.json")
  echo "round $r done, load: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
"$VENV/bin/python" bench/compare.py "${OURS[@]}" -- "${PEER[@]}" | tee "$OUT/table.txt"
