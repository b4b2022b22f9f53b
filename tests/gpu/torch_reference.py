#!/usr/bin/env python3
"""Independent measurement of attnsweep's cases with PyTorch's Python API.

For each variant, shape and dtype: kernel, memcpy and memset launches per
forward read from torch.profiler's exported Chrome trace (the way the study read
its traces), the median of CUDA-event times per forward, and the relative error
against a float64 reference. Inputs are drawn exactly as attnsweep draws them,
so the errors must match too. Prints one JSON object per line.
(Inputs: float32 randn from a generator of the device seeded with --seed, then
cast; --inputs-only prints a few of their values instead, for the test that
checks the bits are the same.)

Timing protocols (--protocol): "v1" is device idle, event, one forward, event,
sync (launch latency included, attnsweep's v1). "v2" mirrors attnsweep's v2 with
Python's own means: a memset of 2x the L2 size, then torch.cuda._sleep as the
stream holder (a spin of ~1 ms, longer than the host takes to enqueue one
forward), then event, forward, event, sync.
"""
import argparse
import contextlib
import json
import math
import os
import statistics
import sys
import tempfile

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

BACKENDS = {
    "sdpa_math": SDPBackend.MATH,
    "sdpa_efficient": SDPBackend.EFFICIENT_ATTENTION,
    "sdpa_flash": SDPBackend.FLASH_ATTENTION,
    "sdpa_cudnn": SDPBackend.CUDNN_ATTENTION,
}
DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}


def make_inputs(shape, dtype_name, seed, device):
    batch, heads, seq_len, head_dim = shape
    gen = torch.Generator(device).manual_seed(seed)
    q = torch.randn(batch, heads, seq_len, head_dim, generator=gen, device=device)
    k = torch.randn(batch, heads, seq_len, head_dim, generator=gen, device=device)
    v = torch.randn(batch, heads, seq_len, head_dim, generator=gen, device=device)
    dtype = DTYPES[dtype_name]
    return q.to(dtype), k.to(dtype), v.to(dtype)


def forward_fn(variant, q, k, v, scale, causal):
    mask = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool, device=q.device).triu(1)

    def naive():
        scores = q @ k.transpose(-2, -1)
        scores = scores * scale
        if causal:
            scores = scores.masked_fill(mask, float("-inf"))
        return torch.softmax(scores, dim=-1) @ v

    def naive_inplace():
        scores = q @ k.transpose(-2, -1)
        scores = scores * scale
        if causal:
            scores.masked_fill_(mask, float("-inf"))
        return torch.softmax(scores, dim=-1) @ v

    def sdpa():
        # Pinned variants run inside sdpa_kernel(...), entered once by main() around
        # every measurement, so its Python overhead stays out of the timed forward.
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale)

    return {"naive": naive, "naive_inplace": naive_inplace}.get(variant, sdpa)


def reference(q, k, v, scale, causal):
    qd, kd, vd = q.double(), k.double(), v.double()
    scores = (qd @ kd.transpose(-2, -1)) * scale
    if causal:
        mask = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool, device=q.device).triu(1)
        scores = scores.masked_fill(mask, float("-inf"))
    return torch.softmax(scores, dim=-1) @ vd


def profile_counts(fn, forwards):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.json")
        with torch.no_grad(), torch.profiler.profile(
            activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
        ) as prof:
            for i in range(forwards):
                with torch.profiler.record_function(f"forward{i}"):
                    fn()
            torch.cuda.synchronize()
        prof.export_chrome_trace(path)
        with open(path) as f:
            events = json.load(f)["traceEvents"]
    totals = {"kernel": 0, "gpu_memcpy": 0, "gpu_memset": 0, "device_us": 0.0}
    for e in events:
        if e.get("ph") == "X" and e.get("cat") in totals:
            totals[e["cat"]] += 1
            totals["device_us"] += float(e.get("dur", 0))
    return {k: v / forwards for k, v in totals.items()}


FLUSH = {}


def cuda_event_median(fn, samples, protocol):
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    if protocol == "v2" and "buffer" not in FLUSH:
        l2 = torch.cuda.get_device_properties(0).L2_cache_size
        FLUSH["buffer"] = torch.empty(max(2 * l2, 64 << 20), dtype=torch.uint8, device="cuda")
    times = []
    with torch.no_grad():
        for _ in range(samples):
            torch.cuda.synchronize()
            if protocol == "v2":
                FLUSH["buffer"].zero_()
                torch.cuda._sleep(2_000_000)  # ~1 ms at 2 GHz: holds the stream while we enqueue
            start.record()
            fn()
            stop.record()
            stop.synchronize()
            times.append(start.elapsed_time(stop) * 1000.0)
    return statistics.median(times)


def measure(variant, fn, row, a, make_reference):
    """Counts, numerics and timing of one variant; prints its JSON row."""
    try:
        with torch.no_grad():
            for _ in range(a.warmup):
                out = fn()
            torch.cuda.synchronize()
    except RuntimeError as error:
        row.update(status="unsupported", reason=str(error).splitlines()[0])
        print(json.dumps(row), flush=True)
        return
    counts = profile_counts(fn, a.forwards)
    row.update(status="ok", kernels=counts["kernel"], memcpy=counts["gpu_memcpy"], memset=counts["gpu_memset"],
               device_us=counts["device_us"])
    if not a.counts_only:
        ref = make_reference()
        row["rel_error"] = ((out.double() - ref).norm() / ref.norm()).item()
        row["median_us"] = cuda_event_median(fn, a.samples, a.protocol)
    print(json.dumps(row), flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--variants", default="naive,naive_inplace,sdpa_math,sdpa_efficient,sdpa_flash,sdpa_cudnn,sdpa_auto")
    p.add_argument("--shapes", default="8x16x1024x64", help="comma-separated BxHxSxD")
    p.add_argument("--dtypes", "--dtype", dest="dtypes", default="bf16", help="comma-separated bf16, fp16, fp32")
    p.add_argument("--causal", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--forwards", type=int, default=5)
    p.add_argument("--samples", type=int, default=200)
    p.add_argument("--protocol", choices=["v1", "v2"], default="v2")
    p.add_argument("--counts-only", action="store_true", help="skip timing and numerics")
    p.add_argument("--inputs-only", action="store_true",
                   help="print q[0,0,0,:4], k[-1,-1,-1,-1], v's float64 sum of the first shape and dtype, exactly")
    a = p.parse_args()
    if not torch.cuda.is_available():
        sys.exit("torch_reference.py needs a CUDA device")
    if a.inputs_only:
        q, k, v = make_inputs(tuple(int(x) for x in a.shapes.split(",")[0].split("x")), a.dtypes.split(",")[0], a.seed, "cuda")
        values = q[0, 0, 0, :4].double().tolist() + [k[-1, -1, -1, -1].double().item(), v.double().sum().item()]
        print(" ".join(repr(x) for x in values))
        return
    causal = bool(a.causal)
    for shape_text in a.shapes.split(","):
        shape = tuple(int(x) for x in shape_text.split("x"))
        scale = 1.0 / math.sqrt(shape[3])
        for dtype in a.dtypes.split(","):
            q, k, v = make_inputs(shape, dtype, a.seed, "cuda")
            for variant in a.variants.split(","):
                fn = forward_fn(variant, q, k, v, scale, causal)
                row = {"variant": variant, "dtype": dtype, "batch": shape[0], "heads": shape[1], "seq_len": shape[2],
                       "head_dim": shape[3], "causal": causal}
                pin = sdpa_kernel(BACKENDS[variant]) if variant in BACKENDS else contextlib.nullcontext()
                with pin:
                    measure(variant, fn, row, a, lambda: reference(q, k, v, scale, causal))
            del q, k, v
            torch.cuda.empty_cache()

if __name__ == "__main__":
    main()
