#!/usr/bin/env python3
"""Joins ours.json and peer.json (from conv_bench and ort_bench.py) into a table:
per-layer times, GFLOP/s, ratio peer_time / our_time (> 1: we are faster), and the
geometric mean of the ratios per group.

    compare.py ours.json peer.json
    compare.py ours1.json ours2.json ... -- peer1.json peer2.json ...

With several rounds (run alternately, ours then peer, so both sides see the same
machine load), each row takes the best round's median per side."""
import json
import math
import sys


def best(files):
    """Rows of the first file, each with the smallest median over all files."""
    runs = [json.load(open(f)) for f in files]
    out = []
    for r in runs[0]:
        key = (r["op"], r["name"], r["batch"], r.get("layout"))
        same = [x for run in runs for x in run
                if (x["op"], x["name"], x["batch"], x.get("layout")) == key]
        b = min(same, key=lambda x: x["ms"])
        out.append(b)
    return out


args = sys.argv[1:]
if "--" in args:
    cut = args.index("--")
    ours, peer = best(args[:cut]), best(args[cut + 1:])
else:
    ours, peer = best(args[:1]), best(args[1:2])
pk = {(r["op"], r["name"], r["batch"]): r for r in peer}
groups = {}
print(f"{'op':<6} {'layer':<22} {'N':>2} {'layout':<8} {'ours ms':>9} {'GF/s':>7} {'peer ms':>9} {'GF/s':>7} {'ratio':>6}  impl")
for r in ours:
    p = pk.get((r["op"], r["name"], r["batch"]))
    if p is None:
        continue
    ratio = p["ms"] / r["ms"]
    peer_name = "numpy" if r["op"] == "matmul" else "onnxruntime"
    groups.setdefault((r["op"], r["layout"], r["batch"], peer_name), []).append(ratio)
    print(f"{r['op']:<6} {r['name']:<22} {r['batch']:>2} {r['layout']:<8} {r['ms']:>9.3f} {r['gflops']:>7.1f} {p['ms']:>9.3f} {p['gflops']:>7.1f} {ratio:>6.2f}  {r.get('impl', '')}")
print()
allr = []
for (op, layout, n, peer_name), rs in sorted(groups.items()):
    g = math.exp(sum(math.log(x) for x in rs) / len(rs))
    allr += rs
    print(f"geomean ratio vs {peer_name:<11} {op:<6} {layout:<8} batch {n}: {g:.3f} ({len(rs)} cases)")
print(f"geomean ratio, all cases: {math.exp(sum(math.log(x) for x in allr) / len(allr)):.3f}")
