"""The PyTorch peer for bench/cudnn-vs-pytorch.sh: the same graphs as
plugins/cudnn-provider/examples/cudnn_bench.rs, in PyTorch with cuDNN, channels_last
(or NCHW), cudnn.benchmark on, timed with CUDA events (median per iteration), eager
and replayed as a CUDA graph. Prints one JSON object per run.

usage: python3 pytorch_peer.py GRAPH DTYPE BATCH LAYOUT ITERS
  GRAPH  block (ResNet-50 bottleneck: 1x1 256->64, 3x3 64->64, 1x1 64->256, biases,
         ReLUs, residual add) or conv3x3 (64->64, 3x3, pad 1)
  DTYPE  f16, bf16, f32 (no TF32) or tf32
"""
import json
import statistics
import sys

import torch

graph, dtype_name, batch, layout, iters = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
dtype = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32, "tf32": torch.float32}[dtype_name]
torch.backends.cudnn.benchmark = True
torch.backends.cudnn.allow_tf32 = dtype_name == "tf32"
torch.backends.cuda.matmul.allow_tf32 = dtype_name == "tf32"
fmt = torch.channels_last if layout == "nhwc" else torch.contiguous_format
dev = torch.device("cuda")


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = torch.nn.Conv2d(256, 64, 1, bias=True)
        self.c2 = torch.nn.Conv2d(64, 64, 3, padding=1, bias=True)
        self.c3 = torch.nn.Conv2d(64, 256, 1, bias=True)

    def forward(self, x):
        y = torch.relu(self.c1(x))
        y = torch.relu(self.c2(y))
        return torch.relu(self.c3(y) + x)


if graph == "block":
    model, shape = Block(), (batch, 256, 56, 56)
else:
    model, shape = torch.nn.Conv2d(64, 64, 3, padding=1, bias=False), (batch, 64, 56, 56)
model = model.to(dev, dtype).to(memory_format=fmt).eval()
x = torch.randn(shape, device=dev, dtype=dtype).to(memory_format=fmt)


def timed(fn):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    samples = []
    for _ in range(iters):
        start.record()
        fn()
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end) * 1e3)
    return statistics.median(samples)


with torch.inference_mode():
    for _ in range(20):
        model(x)
    torch.cuda.synchronize()
    eager = timed(lambda: model(x))
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):
            model(x)
    torch.cuda.current_stream().wait_stream(stream)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = model(x)
    for _ in range(5):
        g.replay()
    torch.cuda.synchronize()
    replay = timed(g.replay)

print(json.dumps({"graph": graph, "dtype": dtype_name, "batch": batch, "layout": layout,
                  "torch": torch.__version__, "cudnn": torch.backends.cudnn.version(),
                  "eager_us": round(eager, 2), "cuda_graph_us": round(replay, 2)}))
