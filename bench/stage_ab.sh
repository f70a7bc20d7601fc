#!/usr/bin/env bash
# Two or more installs of the CPU engine on one graph, alternating, compared stage by
# stage: the view that still shows 1% effects on a noisy machine.
#
#   bench/stage_ab.sh GRAPH.json PREFIX_A PREFIX_B [PREFIX ...]
#       [--threads 2] [--iters 15] [--rounds 4] [--knob K=V ...]
#
# Each PREFIX is an install (`cargo xtask install --prefix P`; for another build of the
# plugin, a copy of one with `lib/hipdnn_plugins/engines/libhipdnn_cpu_provider.so`
# replaced), optionally with environment settings for its runs written before an `@`
# (`VAR=VALUE[,VAR=VALUE...]@P`, e.g. `target/inst HIPDNN_CPU_ISA=avx2@target/inst` sets
# one build against itself capped at AVX2). Every round runs `P/bin/hipdnn run GRAPH
# --iters N --knob cpu.threads=T` with `HIPDNN_CPU_PROFILE=1` for each install in turn,
# each round starting with the next install (the first run of a round can find the
# machine in another state than the later ones). Then it prints, per install, the
# rounds' whole-graph medians and the sum over stages of each stage's minimum over all
# rounds; per stage those minimums with their ratio to the first install's (> 1: faster
# than the first) and, in brackets, the paired ratio: the median over rounds of the
# first install's stage median over this one's in the same round.
#
# Whole-graph medians on a shared 2-core VM move 10–25% from minute to minute. In its
# quiet states the sums of stage minimums repeat within about 0.5%; in its noisy ones a
# lucky round sets the minimums, and the paired ratios over many short rounds
# (`--rounds 30 --iters 5`) hold better.
set -euo pipefail
THREADS=2
ITERS=15
ROUNDS=4
KNOBS=()
ARGS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --threads) THREADS="$2"; shift 2 ;;
    --iters) ITERS="$2"; shift 2 ;;
    --rounds) ROUNDS="$2"; shift 2 ;;
    --knob) KNOBS+=(--knob "$2"); shift 2 ;;
    -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
    *) ARGS+=("$1"); shift ;;
  esac
done
if [ ${#ARGS[@]} -lt 3 ]; then
  echo "usage: $0 GRAPH.json [VAR=VALUE,...@]PREFIX_A [VAR=VALUE,...@]PREFIX_B [...] [--threads T] [--iters N] [--rounds R] [--knob K=V]" >&2
  exit 2
fi
GRAPH=${ARGS[0]}
PREFIXES=("${ARGS[@]:1}")
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
N=${#PREFIXES[@]}
for round in $(seq 1 "$ROUNDS"); do
  # Each round starts with the next install, so that none is always first (the first
  # run of a round can find the machine in another state than the later ones).
  for j in $(seq 0 $((N - 1))); do
    i=$(((j + round - 1) % N))
    spec=${PREFIXES[$i]}
    prefix=$spec
    vars=()
    if [[ "$spec" == *@* ]]; then
      prefix=${spec##*@}
      IFS=, read -ra vars <<< "${spec%@*}"
    fi
    env ${vars[@]+"${vars[@]}"} HIPDNN_CPU_PROFILE=1 "$prefix/bin/hipdnn" run "$GRAPH" \
      --iters "$ITERS" --knob cpu.threads="$THREADS" ${KNOBS[@]+"${KNOBS[@]}"} \
      > "$WORK/$i.$round.txt" 2>&1
  done
done
python3 - "$WORK" "$ROUNDS" "${PREFIXES[@]}" <<'PY'
import re
import sys

work, rounds, prefixes = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
stage = re.compile(r"\s*(\d+)\s+([\d.]+)\s+([\d.]+)\s+[\d.]+%\s+(\S+)\s*(.*)")
total = re.compile(r"median ([\d.]+) ms")
runs = []  # per install: list of (median ms, {stage: (min us, name)})
for i in range(len(prefixes)):
    mine = []
    for r in range(1, rounds + 1):
        med, stages = None, {}
        for line in open(f"{work}/{i}.{r}.txt"):
            m = stage.match(line)
            if m:
                what = m.group(5).split(":", 1)[-1].split()
                stages[int(m.group(1))] = (
                    float(m.group(3)),
                    what[0] if what else m.group(4),
                    float(m.group(2)),
                )
            m = total.search(line)
            if m and med is None:
                med = float(m.group(1))
        if not stages:
            sys.exit(f"{prefixes[i]}: no stage profile (is it the CPU engine?)")
        mine.append((med, stages))
    runs.append(mine)
mins = [{k: min(r[1][k][0] for r in mine) for k in mine[0][1]} for mine in runs]
print("install: round medians (ms) | sum of stage minimums (ms)")
for p, mine, m in zip(prefixes, runs, mins):
    meds = " ".join(f"{x[0]:.2f}" for x in mine)
    print(f"  {p}: {meds} | {sum(m.values()) / 1000:.3f}")
def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return (xs[n // 2] + xs[(n - 1) // 2]) / 2


def paired(mine, k=None):
    """Median over rounds of the first install's time over this one's, same round."""
    pick = (lambda r: r[0]) if k is None else (lambda r: r[1][k][2] if k in r[1] else None)
    ratios = [pick(a) / pick(b) for a, b in zip(runs[0], mine) if pick(a) and pick(b)]
    return median(ratios) if ratios else float("nan")


print("stage: minimums (us), then first / this; in [ ]: paired (median over rounds of")
print("first / this, each round's stage medians)")
names = runs[0][0][1]
for k in sorted(mins[0]):
    row = " ".join(f"{m.get(k, float('nan')):9.1f}" for m in mins)
    ratio = " ".join(f"{mins[0][k] / m[k]:5.2f}" for m in mins[1:] if k in m)
    pair = " ".join(f"{paired(mine, k):5.3f}" for mine in runs[1:])
    print(f"{k:3d} {names[k][1][:20]:20s} {row}  {ratio}  [{pair}]")
whole = " ".join(f"{paired(mine):5.3f}" for mine in runs[1:])
print(f"whole graph, paired round medians, first / this: [{whole}]")
PY
