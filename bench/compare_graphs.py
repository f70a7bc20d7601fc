#!/usr/bin/env python3
"""Table of bench/cpu_graphs_vs_onnxruntime.sh's rounds: per graph, the median of each
side's round medians and the ratio peer / ours (> 1: the CPU engine is faster), then the
geometric mean of the ratios per set (file name prefix) and batch. The peer is ONNX
Runtime, numpy for the `matmul_` and `skinny_` graphs."""
import json
import math
import statistics
import sys
from collections import defaultdict


def main():
    rows = defaultdict(lambda: ([], []))
    order = []
    with open(sys.argv[1]) as f:
        for line in f:
            r = json.loads(line)
            if r["graph"] not in rows:
                order.append(r["graph"])
            rows[r["graph"]][0].append(r["ours_ms"])
            rows[r["graph"]][1].append(r["ort_ms"])
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


if __name__ == "__main__":
    main()
