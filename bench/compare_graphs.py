#!/usr/bin/env python3
"""Table of bench/cpu_graphs_vs_onnxruntime.sh's rounds: per graph, the median of each
side's round medians and the ratio peer / ours (> 1: the CPU engine is faster), then the
geometric mean of the ratios per set (file name prefix) and batch. The peer is ONNX
Runtime, numpy for the `matmul_` and `skinny_` graphs.

Rounds that recorded the round trip between CPUs 0 and 1 before, between and after
their two sides (`round_trip_ns`, from the `core_latency` example) are also sorted by
it, each side by the probes just before and after it, against the fastest probe of the
file: near (both within NEAR× of it), far (both between FAR× and BUSY×), moved while the
side ran (anything else up to BUSY×), or on a busy machine (above BUSY×: the probe's
partner thread waited for a CPU, so something else ran). On the 2-vCPU Zen 4 VM the
probe reads about 65 ns with both vCPUs on one L3 and 330-380 ns on two, so near and far
are those two placements; on the device's 16-core Xeon (one L3 on a mesh) every pair
reads 155-250 ns, all near. A third table gives, per graph, each side's median over its
near and its far runs, and their ratio."""
import json
import math
import statistics
import sys
from collections import defaultdict

# Multiples of the file's fastest probe: near up to NEAR, far from FAR to BUSY, busy above.
NEAR = 2.0
FAR = 3.0
BUSY = 8.0


def placement(trips, fastest):
    """`near`, `far`, `moved` or `busy` for the probes around a run, None without them."""
    if not trips or any(t is None for t in trips):
        return None
    if any(t > BUSY * fastest for t in trips):
        return "busy"
    if all(t <= NEAR * fastest for t in trips):
        return "near"
    if all(t >= FAR * fastest for t in trips):
        return "far"
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
    seen = [t for *_, around in sides for t in around if t is not None]
    fastest = min(seen) if seen else None
    # (graph, near) -> (ours, peer) over the runs of that kind; the kinds of all runs.
    kinds = defaultdict(lambda: ([], []))
    trips = []
    for graph, side, ms, around in sides:
        kind = placement(around, fastest)
        if kind is None:
            continue
        trips.append(kind)
        if kind in ("near", "far"):
            kinds[(graph, kind == "near")][side].append(ms)
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
        count = {k: trips.count(k) for k in ("near", "far", "moved", "busy")}
        print()
        print(
            f"CPUs 0 and 1, cache-line round trip before and after each side of each round "
            f"(fastest {fastest:.0f} ns): of {len(trips)} runs, {count['near']} near (up to "
            f"{NEAR:g}x the fastest), {count['far']} far ({FAR:g}-{BUSY:g}x), "
            f"{count['moved']} moved while running, {count['busy']} on a busy machine"
        )
        if count["near"] and count["far"]:
            print()
            print(
                "| graph | near: ours (runs) / peer (runs), ms | ratio "
                "| far: ours / peer, ms | ratio |"
            )
            print("|---|---|---|---|---|")
            for g in order:
                cells = []
                for k in (True, False):
                    ours, peer = kinds[(g, k)]
                    if ours and peer:
                        o, p = statistics.median(ours), statistics.median(peer)
                        cells.append(f"{o:.3f} ({len(ours)}) / {p:.3f} ({len(peer)}) | {p / o:.2f}")
                    else:
                        cells.append("- | -")
                print(f"| {g.removesuffix('.json')} | {cells[0]} | {cells[1]} |")


if __name__ == "__main__":
    main()
