#!/usr/bin/env bash
# Two builds of the host-overhead criterion benches, run alternately on one pinned core.
#
#   bench/alternate-execute.sh BEFORE_DIR AFTER_DIR [ROUNDS] [CORE]
#
# Each DIR is laid out as target/release is: DIR/deps/execute-* (the bench binaries of
# hipdnn-plugin-sdk and hipdnn-backend, from `cargo bench --no-run`) and
# DIR/examples/libgood_plugin.so (from `cargo build --release -p hipdnn-backend --examples`).
# Prints one line per round, side and binary; compare the medians of the rounds.
set -u
BEFORE=$1
AFTER=$2
ROUNDS=${3:-6}
CORE=${4:-5}
for round in $(seq 1 "$ROUNDS"); do
  for side in "$BEFORE" "$AFTER"; do
    for exe in "$side"/deps/execute-*; do
      taskset -c "$CORE" "$exe" --bench --warm-up-time 1 --measurement-time 2 2>&1 \
        | grep -E "time:" -B1 | grep -vE "^--|Benchmarking" | paste -sd' ' \
        | sed "s|^|round $round $side: |"
    done
  done
done
