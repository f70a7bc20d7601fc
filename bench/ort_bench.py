#!/usr/bin/env python3
"""ResNet-50's distinct convolutions as single-Conv ONNX models in ONNX Runtime
(intra_op_num_threads = 2, weights as initializers, default graph optimizations, which
include ORT's NCHWc layout transform for convolutions), plus a 1024^3 fp32 matmul in
numpy (OpenBLAS, 2 threads). Prints median times as JSON.

ORT takes NCHW models; the NHWC rows of the comparison are timed on the same NCHW
model (ORT has no fp32 NHWC convolution kernel for CPU; its NHWC transformer only
rewrites quantized and fp16 ops).
"""
import json
import sys
import time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

CONVS = [
    ("conv1_7x7_s2", 3, 224, 64, 7, 2, 3),
    ("l1_1x1_64_64", 64, 56, 64, 1, 1, 0),
    ("l1_3x3_64", 64, 56, 64, 3, 1, 1),
    ("l1_1x1_64_256", 64, 56, 256, 1, 1, 0),
    ("l1_1x1_256_64", 256, 56, 64, 1, 1, 0),
    ("l2_1x1_256_128", 256, 56, 128, 1, 1, 0),
    ("l2_3x3_128_s2", 128, 56, 128, 3, 2, 1),
    ("l2_1x1_128_512", 128, 28, 512, 1, 1, 0),
    ("l2_down_256_512_s2", 256, 56, 512, 1, 2, 0),
    ("l2_1x1_512_128", 512, 28, 128, 1, 1, 0),
    ("l2_3x3_128", 128, 28, 128, 3, 1, 1),
    ("l3_1x1_512_256", 512, 28, 256, 1, 1, 0),
    ("l3_3x3_256_s2", 256, 28, 256, 3, 2, 1),
    ("l3_1x1_256_1024", 256, 14, 1024, 1, 1, 0),
    ("l3_down_512_1024_s2", 512, 28, 1024, 1, 2, 0),
    ("l3_1x1_1024_256", 1024, 14, 256, 1, 1, 0),
    ("l3_3x3_256", 256, 14, 256, 3, 1, 1),
    ("l4_1x1_1024_512", 1024, 14, 512, 1, 1, 0),
    ("l4_3x3_512_s2", 512, 14, 512, 3, 2, 1),
    ("l4_1x1_512_2048", 512, 7, 2048, 1, 1, 0),
    ("l4_down_1024_2048_s2", 1024, 14, 2048, 1, 2, 0),
    ("l4_1x1_2048_512", 2048, 7, 512, 1, 1, 0),
    ("l4_3x3_512", 512, 7, 512, 3, 1, 1),
]


def median_time(f, reps):
    f()
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    ts.sort()
    return ts[len(ts) // 2]


def conv_model(n, c, hw, k, f, s, p):
    o = (hw + 2 * p - f) // s + 1
    w = (np.random.default_rng(0).standard_normal((k, c, f, f)) * 0.05).astype(np.float32)
    node = helper.make_node("Conv", ["x", "w"], ["y"], kernel_shape=[f, f], strides=[s, s], pads=[p, p, p, p])
    graph = helper.make_graph(
        [node], "conv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n, c, hw, hw])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n, k, o, o])],
        initializer=[numpy_helper.from_array(w, "w")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model.SerializeToString(), o


def main():
    threads = int(sys.argv[sys.argv.index("--threads") + 1]) if "--threads" in sys.argv else 2
    reps = int(sys.argv[sys.argv.index("--reps") + 1]) if "--reps" in sys.argv else 10
    batches = [int(b) for b in (sys.argv[sys.argv.index("--batches") + 1] if "--batches" in sys.argv else "1,8").split(",")]
    rows = []
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    for n in batches:
        for name, c, hw, k, f, s, p in CONVS:
            model, o = conv_model(n, c, hw, k, f, s, p)
            sess = ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"])
            x = np.random.default_rng(1).standard_normal((n, c, hw, hw)).astype(np.float32)
            secs = median_time(lambda: sess.run(None, {"x": x}), reps)
            flops = 2.0 * n * k * o * o * c * f * f
            rows.append({"op": "conv", "name": name, "batch": n, "layout": "nchw", "ms": secs * 1e3, "gflops": flops / secs / 1e9})
            print(json.dumps(rows[-1]), file=sys.stderr)
    a = np.random.default_rng(2).standard_normal((1024, 1024)).astype(np.float32)
    b = np.random.default_rng(3).standard_normal((1024, 1024)).astype(np.float32)
    secs = median_time(lambda: a @ b, reps)
    rows.append({"op": "matmul", "name": "matmul_1024", "batch": 1, "layout": "rowmajor", "ms": secs * 1e3, "gflops": 2.0 * 1024**3 / secs / 1e9})
    print(json.dumps(rows[-1]), file=sys.stderr)
    print(json.dumps(rows, indent=0))


if __name__ == "__main__":
    main()
