#!/usr/bin/env python3
"""Times a hipDNN graph (its JSON form, docs/graph-json.md) in ONNX Runtime.

    ort_graph.py GRAPH.json [GRAPH.json ...] --threads T --iters N [--profile | --numpy]

Each graph becomes the equivalent ONNX model (opset 17): convolutions, batch-norm
inference, the pointwise modes below, max and average pooling, matmuls. Tensors that
a convolution, pooling, batch norm or matmul reads as its activation are graph inputs
(fed with random data on every run); every other input tensor (filters, biases,
batch-norm parameters) is an initializer, so ONNX Runtime packs it once at session
creation and folds batch norms into the convolutions before them. Non-virtual tensors
that a node writes are the outputs. Logical dims are NCHW whatever the strides say:
ONNX Runtime runs NCHW models (with its own NCHWc layout for convolutions).

The session: intra_op_num_threads = T, inter_op_num_threads = 1, sequential execution,
all graph optimizations. Prints one JSON object per graph: {"graph", "ms", "min_ms",
"max_ms"} with the median, fastest and slowest of N runs after one warm-up. --profile also prints, on stderr, ONNX Runtime's own
per-node kernel times (median over the N runs, in execution order, with the node's
operator): the peer's side of the CPU engine's HIPDNN_CPU_PROFILE=1 table.

--numpy times numpy's matmul instead (`a @ b`, fresh fp32 arrays of the graph's shapes,
numpy's BLAS with the threads OMP_NUM_THREADS/OPENBLAS_NUM_THREADS give it) for graphs
that are one matmul, and adds "peer": "numpy" to the JSON.
"""
import json
import os
import statistics
import sys
import tempfile
import time

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

POINTWISE = {
    "ADD": "Add",
    "SUB": "Sub",
    "MUL": "Mul",
    "DIV": "Div",
    "MAX_OP": "Max",
    "MIN_OP": "Min",
    "SIGMOID_FWD": "Sigmoid",
    "TANH_FWD": "Tanh",
    "EXP": "Exp",
    "ABS": "Abs",
    "NEG": "Neg",
    "SQRT": "Sqrt",
    "IDENTITY": "Identity",
}

# Attribute keys naming the activation a node reads (graph inputs, not initializers).
ACTIVATIONS = {
    "ConvolutionFwdAttributes": ["x_tensor_uid"],
    "ResampleFwdAttributes": ["x_tensor_uid"],
    "BatchnormInferenceAttributes": ["x_tensor_uid"],
    "MatmulAttributes": ["a_tensor_uid"],
}


def name(uid):
    return f"t{uid}"


def convert(graph):
    """The ONNX model of `graph`, and the names and dims of its data inputs."""
    rng = np.random.default_rng(0)
    tensors = {t["uid"]: t for t in graph["tensors"]}
    produced = set()
    read = set()
    activations = set()
    nodes = []
    consts = []  # extra initializers (epsilon-free variances, clip bounds)
    for node in graph["nodes"]:
        kind = node["attributes_type"]
        a = node["attributes"]
        for key in ACTIVATIONS.get(kind, []):
            activations.add(a[key])
        outs = [v for k, v in a.items() if k.endswith("_tensor_uid") and (k.startswith("y_") or k.startswith("out_") or k.startswith("c_"))]
        ins = [v for k, v in a.items() if k.endswith("_tensor_uid") and v not in outs]
        produced.update(outs)
        read.update(ins)
        label = node.get("name", kind)
        if kind == "ConvolutionFwdAttributes":
            w = tensors[a["w_tensor_uid"]]["dims"]
            nodes.append(helper.make_node(
                "Conv", [name(a["x_tensor_uid"]), name(a["w_tensor_uid"])], [name(a["y_tensor_uid"])],
                name=label, kernel_shape=w[2:], strides=a["stride"], dilations=a["dilation"],
                pads=a["pre_padding"] + a["post_padding"]))
        elif kind == "BatchnormInferenceAttributes":
            # y = (x - mean) * inv_variance * scale + bias: ONNX's BatchNormalization with
            # variance = 1 / inv_variance^2 and epsilon 0.
            var = f"{name(a['inv_variance_tensor_uid'])}_var"
            consts.append((var, a["inv_variance_tensor_uid"]))
            nodes.append(helper.make_node(
                "BatchNormalization",
                [name(a["x_tensor_uid"]), name(a["scale_tensor_uid"]), name(a["bias_tensor_uid"]),
                 name(a["mean_tensor_uid"]), var],
                [name(a["y_tensor_uid"])], name=label, epsilon=0.0))
        elif kind == "PointwiseAttributes":
            op = a["operation"]
            ins = [name(a[k]) for k in ("in_0_tensor_uid", "in_1_tensor_uid", "in_2_tensor_uid") if k in a]
            out = [name(a["out_0_tensor_uid"])]
            if op == "RELU_FWD":
                if any(k in a for k in ("relu_lower_clip", "relu_upper_clip", "relu_lower_clip_slope")):
                    raise SystemExit(f"{label}: only plain RELU_FWD is converted")
                nodes.append(helper.make_node("Relu", ins, out, name=label))
            elif op in POINTWISE:
                nodes.append(helper.make_node(POINTWISE[op], ins, out, name=label))
            else:
                raise SystemExit(f"{label}: pointwise mode {op} is not converted")
        elif kind == "ResampleFwdAttributes":
            mode = a["resample_mode"]
            x = tensors[a["x_tensor_uid"]]["dims"]
            attrs = dict(kernel_shape=a["window"], strides=a["stride"], pads=a["pre_padding"] + a["post_padding"])
            if mode == "MAXPOOL":
                op = "MaxPool"
            else:
                op = "AveragePool"
                attrs["count_include_pad"] = 1 if mode == "AVGPOOL_INCLUDE_PADDING" else 0
            if op == "AveragePool" and a["window"] == x[2:] and not any(attrs["pads"]):
                nodes.append(helper.make_node("GlobalAveragePool", [name(a["x_tensor_uid"])], [name(a["y_tensor_uid"])], name=label))
            else:
                nodes.append(helper.make_node(op, [name(a["x_tensor_uid"])], [name(a["y_tensor_uid"])], name=label, **attrs))
        elif kind == "MatmulAttributes":
            nodes.append(helper.make_node(
                "MatMul", [name(a["a_tensor_uid"]), name(a["b_tensor_uid"])], [name(a["c_tensor_uid"])], name=label))
        else:
            raise SystemExit(f"{label}: {kind} is not converted")
    inputs = []
    initializers = []
    replaced = {uid for _, uid in consts}
    for uid in sorted(read - produced):
        dims = tensors[uid]["dims"]
        if uid in replaced:
            continue
        if uid in activations:
            inputs.append((name(uid), dims))
            continue
        values = (rng.standard_normal(dims) * 0.05).astype(np.float32)
        initializers.append(numpy_helper.from_array(values, name(uid)))
    for var, uid in consts:
        inv = (np.abs(rng.standard_normal(tensors[uid]["dims"])) + 0.5).astype(np.float32)
        initializers.append(numpy_helper.from_array((1.0 / (inv * inv)).astype(np.float32), var))
    # Batch-norm and bias parameters of shape [1, C, 1, 1] are [C] in ONNX's
    # BatchNormalization.
    bn_params = {n.input[i] for n in nodes if n.op_type == "BatchNormalization" for i in range(1, 5)}
    for init in initializers:
        if init.name in bn_params:
            flat = numpy_helper.to_array(init).reshape(-1)
            init.CopyFrom(numpy_helper.from_array(flat, init.name))
    outputs = [uid for uid in sorted(produced) if not tensors[uid].get("virtual", False)]
    onnx_graph = helper.make_graph(
        nodes, graph["name"],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, d) for n, d in inputs],
        [helper.make_tensor_value_info(name(u), TensorProto.FLOAT, tensors[u]["dims"]) for u in outputs],
        initializer=initializers,
    )
    model = helper.make_model(onnx_graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model.SerializeToString(), inputs


def times_ms(run, iters):
    """Milliseconds of `iters` runs after one warm-up, sorted."""
    run()
    times = []
    for _ in range(iters):
        t = time.perf_counter()
        run()
        times.append((time.perf_counter() - t) * 1e3)
    return sorted(times)


def median_ms(run, iters):
    times = times_ms(run, iters)
    return times[len(times) // 2]


def main():
    args = sys.argv[1:]

    def opt(flag, default):
        if flag in args:
            i = args.index(flag)
            value = args[i + 1]
            del args[i:i + 2]
            return value
        return default

    profile = "--profile" in args
    if profile:
        args.remove("--profile")
    use_numpy = "--numpy" in args
    if use_numpy:
        args.remove("--numpy")
    threads = int(opt("--threads", "2"))
    iters = int(opt("--iters", "10"))
    for path in args:
        with open(path) as f:
            graph = json.load(f)
        if use_numpy:
            ms = numpy_matmul_ms(graph, iters)
            print(json.dumps({"graph": os.path.basename(path), "ms": round(ms, 4), "peer": "numpy"}), flush=True)
            continue
        model, inputs = convert(graph)
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        opts.log_severity_level = 3
        opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        if profile:
            opts.enable_profiling = True
            opts.profile_file_prefix = os.path.join(tempfile.mkdtemp(), "ort")
        session = ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"])
        rng = np.random.default_rng(1)
        feed = {n: rng.standard_normal(d).astype(np.float32) for n, d in inputs}
        times = times_ms(lambda: session.run(None, feed), iters)
        print(json.dumps({
            "graph": os.path.basename(path),
            "ms": round(times[len(times) // 2], 4),
            "min_ms": round(times[0], 4),
            "max_ms": round(times[-1], 4),
        }), flush=True)
        if profile:
            print_profile(os.path.basename(path), session.end_profiling())


def numpy_matmul_ms(graph, iters):
    """Median time of numpy's `a @ b` for a graph that is one matmul."""
    nodes = graph["nodes"]
    if len(nodes) != 1 or nodes[0]["attributes_type"] != "MatmulAttributes":
        raise SystemExit(f"{graph['name']}: --numpy times graphs of one matmul only")
    tensors = {t["uid"]: t for t in graph["tensors"]}
    a = nodes[0]["attributes"]
    rng = np.random.default_rng(1)
    x, w = (rng.standard_normal(tensors[a[k]]["dims"]).astype(np.float32) for k in ("a_tensor_uid", "b_tensor_uid"))
    return median_ms(lambda: x @ w, iters)


def print_profile(graph, trace):
    """Per-node kernel times from ONNX Runtime's trace file (median over the runs)."""
    with open(trace) as f:
        events = json.load(f)
    order, times, ops = [], {}, {}
    for e in events:
        if e.get("cat") != "Node" or not e.get("name", "").endswith("_kernel_time"):
            continue
        node = e["name"][: -len("_kernel_time")]
        if node not in times:
            order.append(node)
            times[node] = []
            ops[node] = e.get("args", {}).get("op_name", "?")
        times[node].append(e["dur"])
    # The first run is the warm-up.
    medians = {n: statistics.median(t[1:] or t) for n, t in times.items()}
    total = sum(medians.values())
    print(f"ONNX Runtime profile of {graph}: {len(order)} nodes, kernel medians sum to "
          f"{total / 1e3:.3f} ms", file=sys.stderr)
    print("node   median_us   share  op  name", file=sys.stderr)
    for i, n in enumerate(order):
        share = medians[n] / total * 100 if total else 0.0
        print(f"{i:4} {medians[n]:11.1f} {share:6.1f}%  {ops[n]}  {n}", file=sys.stderr)
    os.remove(trace)


if __name__ == "__main__":
    main()
