#!/usr/bin/env python3
"""Table of bench/cpu_graphs_vs_onnxruntime.sh's rounds: per graph, the median of each
side's round medians and the ratio peer / ours (> 1: the CPU engine is faster), then the
geometric mean of the ratios per set (file name prefix) and batch. The peer is ONNX
Runtime, numpy for the `matmul_` and `skinny_` graphs.

Rounds that recorded the round trip between CPUs 0 and 1 before, between and after
their two sides (`round_trip_ns`, from the `core_latency` example) are also sorted by
it, each side by the probes just before and after it: both in one of BANDS, or moved
between bands while the side ran, or on a busy machine (above BUSY_NS: the probe's
partner thread waited for a CPU, so something else ran). On the 2-vCPU Zen 4 VM the
bands are where the host has put the two vCPUs: on SMT siblings of one core (about 30
ns), on two cores of one core complex, sharing an L3 (about 65 ns), or on two core
complexes (330-380 ns). On the device's 16-core Xeon (one L3 on a mesh) every pair reads
155-250 ns, one band. A third table gives, per graph and band, each side's median over
its runs there and their ratio."""
import json
import math
import statistics
import sys
from collections import defaultdict

# Round-trip bands (ns, from and below) and their names in the table.
BANDS = [(0, 45, "<45 ns"), (45, 150, "45-150 ns"), (150, 600, "150-600 ns")]
# Round trips above this (ns) mean the probe shared its CPUs with other work.
BUSY_NS = 600


def placement(trips):
    """The band of the probes around a run, `moved`, `busy`, or None without them."""
    if not trips or any(t is None for t in trips):
        return None
    if any(t > BUSY_NS for t in trips):
        return "busy"
    for lo, hi, name in BANDS:
        if all(lo <= t < hi for t in trips):
            return name
    return "moved"


def main():
    with open(sys.argv[1]) as f:
        records = [json.loads(line) for line in f if line.strip()]
    rows = defaultdict(lambda: ([], []))
    order = []
    for r in records:
        if r["graph"] not in rows:
            order.append(r["graph"])
        rows[r["graph"]][0].append(r["ours_ms"])
        rows[r["graph"]][1].append(r["ort_ms"])
    # Each side's probes: (before, after) it. Rounds recorded before the probe ran
    # between the sides have one value, taken for all three.
    sides = []
    for r in records:
        probes = r.get("round_trip_ns")
        if probes is None:
            continue
        if not isinstance(probes, list):
            probes = [probes] * 3
        sides.append((r["graph"], 0, r["ours_ms"], probes[0:2]))
        sides.append((r["graph"], 1, r["ort_ms"], probes[1:3]))
    # (graph, band) -> (ours, peer) over the runs in that band; the kinds of all runs.
    kinds = defaultdict(lambda: ([], []))
    trips = []
    for graph, side, ms, around in sides:
        kind = placement(around)
        if kind is None:
            continue
        trips.append(kind)
        kinds[(graph, kind)][side].append(ms)
    groups = defaultdict(list)
    print("| graph | ours (ms) | peer (ms) | peer / ours |")
    print("|---|---|---|---|")
    for g in order:
        ours, ort = (statistics.median(v) for v in rows[g])
        ratio = ort / ours
        stem = g.removesuffix(".json")
        parts = stem.split("_")
        groups[(parts[0], parts[-2], parts[-1])].append(ratio)
        print(f"| {stem} | {ours:.3f} | {ort:.3f} | {ratio:.2f} |")
    print()
    print("| set | batch | layout | graphs | geomean peer / ours |")
    print("|---|---|---|---|---|")
    for (s, b, l), ratios in sorted(groups.items()):
        gm = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
        print(f"| {s} | {b[1:]} | {l} | {len(ratios)} | {gm:.2f} |")
    if trips:
        names = [name for *_, name in BANDS] + ["moved", "busy"]
        count = {k: trips.count(k) for k in names}
        print()
        print(
            "CPUs 0 and 1, cache-line round trip before and after each side of each round: "
            + ", ".join(f"{count[k]} runs {k}" for k in names)
        )
        used = [name for *_, name in BANDS if count[name]]
        if len(used) > 1:
            print()
            print("| graph | " + " | ".join(f"{b}: ours / peer, ms (runs) | ratio" for b in used) + " |")
            print("|---|" + "---|---|" * len(used))
            for g in order:
                cells = []
                for b in used:
                    ours, peer = kinds[(g, b)]
                    if ours and peer:
                        o, p = statistics.median(ours), statistics.median(peer)
                        cells.append(
                            f"{o:.3f} ({len(ours)}) / {p:.3f} ({len(peer)}) | {p / o:.2f}"
                        )
                    else:
                        cells.append("- | -")
                print(f"| {g.removesuffix('.json')} | " + " | ".join(cells) + " |")

if __name__ == "__main__":
    main()
