#!/usr/bin/env bash
# CPU_ENGINE through `hipdnn run` (the installed backend and plugin, as users run graphs)
# against ONNX Runtime on the same graphs and thread count, alternating in one run.
#
#   bench/cpu_graphs_vs_onnxruntime.sh [--threads T] [--iters N] [--rounds R]
#       [--batches 1,8] [--layouts nhwc] [--sets convs,block,resnet50[,matmul][,skinny]]
#       [--prefix DIR] [--graphs DIR] [--python PY] [--no-build] [--knob K=V ...]
#       [--probe BIN]
#
# Builds and installs the release tree into --prefix (default target/bench-install),
# writes the graphs with the `bench_graphs` example (ResNet-50's 23 distinct
# convolutions, the bottleneck block, the whole network; the `matmul` set adds a 1024³
# matmul and `skinny` matmuls of one and eight rows, whose peer is numpy's matmul
# instead of ONNX Runtime; --graphs reuses a directory
# of them), makes a venv with onnxruntime, onnx and numpy (unless --python names an
# interpreter that has them), then for every graph runs R rounds of
#   hipdnn run G --iters N --knob cpu.threads=T      (median of N executions)
#   bench/ort_graph.py G --threads T --iters N       (median of N session runs)
# one after the other, so both sides see the same background load. Each side's time is
# the median of its R round medians. Prints a table (ratio = ORT time / ours, > 1: the
# CPU engine is faster) with geometric means per set, and leaves it with the raw rounds
# in target/bench-graphs/. --no-build takes --prefix and --graphs as they are (for a
# machine that only runs the binaries). --knob passes an engine knob to every `hipdnn
# run` (e.g. cpu.constant_weights=1, which declares the filters constant as ONNX
# Runtime's initializers are). Before, between and after the two sides of every round the
# `core_latency` example (built with the install; --probe names another build, e.g. one
# carried to a machine without cargo) measures a cache line's round trip between CPUs 0
# and 1, recorded with the round: on the 2-vCPU development VM it tells whether the host
# has put the two vCPUs on one last-level cache (about 65 ns) or on two (330-380), which
# moves ResNet-50's time through `hipdnn run` by 15%; the table then also gives the
# ratios over the runs near and far (compare_graphs.py).
set -euo pipefail
cd "$(dirname "$0")/.."
THREADS=2
ITERS=10
ROUNDS=3
BATCHES=1,8
LAYOUTS=nhwc
SETS=convs,block,resnet50
PREFIX=target/bench-install
GRAPHS=
PY=
BUILD=1
KNOBS=()
PROBE=
while [[ $# -gt 0 ]]; do
  case "$1" in
    --threads) THREADS="$2"; shift 2 ;;
    --iters) ITERS="$2"; shift 2 ;;
    --rounds) ROUNDS="$2"; shift 2 ;;
    --batches) BATCHES="$2"; shift 2 ;;
    --layouts) LAYOUTS="$2"; shift 2 ;;
    --sets) SETS="$2"; shift 2 ;;
    --prefix) PREFIX="$2"; shift 2 ;;
    --graphs) GRAPHS="$2"; shift 2 ;;
    --python) PY="$2"; shift 2 ;;
    --no-build) BUILD=0; shift ;;
    --knob) KNOBS+=(--knob "$2"); shift 2 ;;
    --probe) PROBE="$2"; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
OUT=target/bench-graphs
mkdir -p "$OUT"
if [[ "$BUILD" == 1 ]]; then
  cargo xtask install --prefix "$PREFIX" > "$OUT/install.log"
  cargo build --quiet --release -p hipdnn-cpu-provider --example core_latency
  if [[ -z "$GRAPHS" ]]; then
    GRAPHS="$OUT/graphs"
    rm -rf "$GRAPHS"
    cargo run --quiet --release -p hipdnn-frontend --example bench_graphs -- \
      --out "$GRAPHS" --batches "$BATCHES" --layouts "$LAYOUTS" --sets "$SETS"
  fi
fi
[[ -n "$GRAPHS" ]] || { echo "--no-build needs --graphs DIR" >&2; exit 2; }
if [[ -z "$PY" ]]; then
  VENV=target/bench-venv
  if [[ ! -x "$VENV/bin/python" ]] || ! "$VENV/bin/python" -c "import onnxruntime, onnx, numpy" 2>/dev/null; then
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet onnxruntime onnx numpy
  fi
  PY="$VENV/bin/python"
fi
HIPDNN="$PREFIX/bin/hipdnn"
if [[ -z "$PROBE" && -x target/release/examples/core_latency ]]; then
  PROBE=target/release/examples/core_latency
fi
[[ -z "$PROBE" || -x "$PROBE" ]] || { echo "--probe $PROBE is not an executable" >&2; exit 2; }
# CPUs 0 and 1's round trip in ns, or null (no probe; one CPU; a probe that cannot pin).
probe() {
  local t=
  if [[ -n "$PROBE" ]]; then
    t=$("$PROBE" --json 2>/dev/null | sed -n 's/.*"round_trip_ns":\([0-9.]*\).*/\1/p') || t=
  fi
  echo "${t:-null}"
}
ORT_VERSION=$("$PY" -c "import onnxruntime; print(onnxruntime.__version__)")
RAW="$OUT/rounds.jsonl"
: > "$RAW"
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores; onnxruntime $ORT_VERSION; threads $THREADS, iters $ITERS, rounds $ROUNDS; knobs: ${KNOBS[*]:-none}" | tee "$OUT/machine.txt"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
# Graphs in the order sets were asked for, batch, layout.
mapfile -t FILES < <(ls "$GRAPHS"/*.json | sort)
for g in "${FILES[@]}"; do
  base=$(basename "$g")
  for r in $(seq 1 "$ROUNDS"); do
    trips=("$(probe)")
    ours=$(OMP_NUM_THREADS="$THREADS" "$HIPDNN" run "$g" --iters "$ITERS" --knob "cpu.threads=$THREADS" \
      ${KNOBS[@]+"${KNOBS[@]}"} | sed -n 's/.*median \([0-9.]*\) ms.*/\1/p')
    [[ -n "$ours" ]] || { echo "hipdnn run $g printed no median" >&2; exit 1; }
    trips+=("$(probe)")
    # A lone matmul's peer is numpy (its BLAS), every other graph's ONNX Runtime.
    peer_flag=()
    [[ "$base" == matmul_* || "$base" == skinny_* ]] && peer_flag=(--numpy)
    peer=$(OMP_NUM_THREADS="$THREADS" OPENBLAS_NUM_THREADS="$THREADS" MKL_NUM_THREADS="$THREADS" \
      "$PY" bench/ort_graph.py "$g" --threads "$THREADS" --iters "$ITERS" ${peer_flag[@]+"${peer_flag[@]}"} \
      | sed -n 's/.*"ms": \([0-9.]*\).*/\1/p')
    [[ -n "$peer" ]] || { echo "ort_graph.py $g printed no time" >&2; exit 1; }
    trips+=("$(probe)")
    printf '{"graph":"%s","round":%d,"ours_ms":%s,"ort_ms":%s,"round_trip_ns":[%s,%s,%s]}\n' \
      "$base" "$r" "$ours" "$peer" "${trips[@]}" >> "$RAW"
  done
  echo "$base done, load: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
"$PY" bench/compare_graphs.py "$RAW" | tee "$OUT/table.md"
