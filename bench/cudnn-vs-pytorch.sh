#!/usr/bin/env bash
# CUDNN_ENGINE through the backend against PyTorch with cuDNN, same machine, same run.
#
#   bench/cudnn-vs-pytorch.sh BIN_DIR [ITERS]
#
# BIN_DIR holds `cudnn_bench` (cargo build --release -p hipdnn-cudnn-provider --examples)
# and the plugin, `hipdnn_plugins/engines/libhipdnn_cudnn_provider.so`. Needs an NVIDIA
# GPU with cuDNN 9 and python3 with torch. Prints one JSON line per measurement and a
# table of device-time medians with the ratio PyTorch eager / ours (above 1: ours is
# faster).
set -euo pipefail
bin=${1:?usage: cudnn-vs-pytorch.sh BIN_DIR [ITERS]}
iters=${2:-200}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export HIPDNN_PLUGIN_DIR="$bin/hipdnn_plugins/engines"
results=$(mktemp)
run() { # graph dtype batch layout
    "$bin/cudnn_bench" --graph "$1" --dtype "$2" --batch "$3" --layout "$4" --iters "$iters" | tee -a "$results" || echo "ours failed: $*"
    python3 "$here/cudnn/pytorch_peer.py" "$1" "$2" "$3" "$4" "$iters" | tee -a "$results"
}
for spec in "block f16 32 nhwc" "block f16 1 nhwc" "block bf16 32 nhwc" "block tf32 32 nhwc" \
            "block f32 32 nhwc" "conv3x3 f16 32 nhwc" "block f16 32 nchw"; do
    # shellcheck disable=SC2086
    run $spec
done
python3 - "$results" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
ours = {(r["graph"], r["dtype"], r["batch"], r["layout"]): r for r in rows if "device_us" in r}
peer = {(r["graph"], r["dtype"], r["batch"], r["layout"]): r for r in rows if "eager_us" in r}
print("\n| graph | dtype | batch | layout | cuDNN plans | ours (us) | ours queued (us) | PyTorch eager (us) | PyTorch CUDA graph (us) | eager / ours | host us/call: backend / plugin / cuDNN alone |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for k, o in ours.items():
    p = peer.get(k)
    if p:
        print(f"| {k[0]} | {k[1]} | {k[2]} | {k[3]} | {o['stages']} | {o['device_us']:.1f} | {o['pipelined_us']:.1f} | "
              f"{p['eager_us']:.1f} | {p['cuda_graph_us']:.1f} | {p['eager_us'] / o['device_us']:.2f} | "
              f"{o['host_us_per_call']:.2f} / {o['host_us_plugin']:.2f} / {o['host_us_cudnn']:.2f} |")
PY
