#!/usr/bin/env bash
# Instructions per call of the example plugin's execute entry point, counted by callgrind:
# deterministic, so usable on a noisy machine.
#
#   bench/callgrind-execute.sh DIR...
#
# Each DIR is laid out as for bench/alternate-execute.sh (DIR/deps/execute-* of
# hipdnn-backend and DIR/examples/libgood_plugin.so). Runs the `plugin_execute_direct`
# bench (criterion's --profile-time mode) under callgrind and prints, per call of
# `hipdnnEnginePluginExecuteOpGraph`, the instructions it executes (inclusive) and those of
# the plan's `IPlan::execute` inside it.
set -eu
for dir in "$@"; do
  exe=$(ls "$dir"/deps/execute-* | grep -v '\.d$' | head -1)
  out=$(mktemp)
  valgrind --tool=callgrind --callgrind-out-file="$out" \
    "$exe" --bench --profile-time 2 plugin_execute_direct >/dev/null 2>&1
  python3 - "$out" "$dir" <<'PY'
import re, sys
path, label = sys.argv[1], sys.argv[2]
names, calls, cost = {}, {}, {}
pending = None
for line in open(path):
    m = re.match(r"(c?)fn=\((\d+)\)(?: (.*))?", line)
    if m:
        if m.group(3):
            names[m.group(2)] = m.group(3).strip()
        if m.group(1):
            target = m.group(2)
        continue
    m = re.match(r"calls=(\d+)", line)
    if m:
        pending = (target, int(m.group(1)))
        continue
    if pending:
        fid, n = pending
        calls[fid] = calls.get(fid, 0) + n
        cost[fid] = cost.get(fid, 0) + int(line.split()[1])
        pending = None
def per_call(pattern):
    for fid, name in names.items():
        if re.search(pattern, name) and calls.get(fid):
            return calls[fid], cost[fid]
    return 0, 0
n, total = per_call(r"^hipdnnEnginePluginExecuteOpGraph$")
_, plan = per_call(r"IPlan>::execute$")
print(f"{label}: {n} calls, {total / n:.1f} Ir/call (IPlan::execute {plan / n:.1f})")
PY
  rm -f "$out"
done
