#!/usr/bin/env python3
"""Table of bench/cpu_graphs_vs_onnxruntime.sh's rounds: per graph, the median of each
side's round medians and the ratio peer / ours (> 1: the CPU engine is faster), then the
geometric mean of the ratios per set (file name prefix) and batch. The peer is ONNX
Runtime, numpy for the `matmul_` and `skinny_` graphs.

Rounds that recorded the round trip between CPUs 0 and 1 before, between and after
their two sides (`round_trip_ns`, from the `core_latency` example) are also sorted by
it, each side by the probes just before and after it: a virtual machine's two vCPUs on
one last-level cache (both below NEAR_NS), on two (both up to BUSY_NS), where data
handed between threads costs more, moved while the side ran, or a busy machine (above
BUSY_NS: the probe's partner thread waited for a CPU, so something else ran). A third
table gives, per graph, each side's median over its runs on one cache and on two, and
their ratio."""
import json
import math
import statistics
import sys
from collections import defaultdict

# Round trips below this (ns) count as CPUs on one last-level cache: about 30 (SMT
# siblings) and 65 (one core complex) against 330-370 (two) on the Zen 4 development VM.
NEAR_NS = 150
# Round trips above this (ns) mean the probe shared its CPUs with other work.
BUSY_NS = 500


def placement(trips):
    """`near`, `far`, `moved` or `busy` for probes around a run, None without them."""
    if not trips or any(t is None for t in trips):
        return None
    if any(t > BUSY_NS for t in trips):
        return "busy"
    if all(t < NEAR_NS for t in trips):
        return "near"
    if all(t >= NEAR_NS for t in trips):
        return "far"
    return "moved"


def main():
    rows = defaultdict(lambda: ([], []))
    # (graph, near) -> (ours, peer) over the rounds of that kind.
    kinds = defaultdict(lambda: ([], []))
    trips = []
    order = []
    with open(sys.argv[1]) as f:
        for line in f:
            r = json.loads(line)
            if r["graph"] not in rows:
                order.append(r["graph"])
            rows[r["graph"]][0].append(r["ours_ms"])
            rows[r["graph"]][1].append(r["ort_ms"])
            probes = r.get("round_trip_ns")
            if probes is None:
                continue
            # Rounds recorded before the probe ran between the sides have one value.
            if not isinstance(probes, list):
                probes = [probes] * 3
            for side, (key, around) in enumerate(
                (("ours_ms", probes[0:2]), ("ort_ms", probes[1:3]))
            ):
                kind = placement(around)
                if kind is None:
                    continue
                trips.append(kind)
                if kind in ("near", "far"):
                    kinds[(r["graph"], kind == "near")][side].append(r[key])
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
            f"CPUs 0 and 1, round trip before and after each side of each round: of "
            f"{len(trips)} runs, {count['near']} on one last-level cache (below {NEAR_NS} "
            f"ns), {count['far']} on two (up to {BUSY_NS} ns), {count['moved']} moved while "
            f"running, {count['busy']} on a busy machine"
        )
        if count["near"] and count["far"]:
            print()
            print(
                "| graph | one cache: ours (runs) / peer (runs), ms | ratio "
                "| two caches: ours / peer, ms | ratio |"
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
