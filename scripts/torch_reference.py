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

Passes (issue 23). With --pass (or --passes, a comma-separated list of forward,
backward, forward_backward) each line is one case of one pass, mirroring
attnsweep's protocol like with like:
- the upstream gradient dout: float32 randn of the output's shape from a new
  generator of the device seeded with --seed + 1, then cast;
- backward: per sample an untimed forward on leaves that require grad, a
  synchronize, then the v2 steps around torch.autograd.grad(out, (q, k, v), dout);
- forward_backward: the forward and torch.autograd.grad in the timed interval;
- counts per pass from the exported Chrome trace: an activity belongs to the pass
  whose record_function interval holds its launch call (runtime or driver event
  of the same correlation id), on any thread: the backward's kernels are
  launched by autograd's device thread. Every profiled pass must agree
  (counts_consistent), else the session is repeated (--profile-attempts);
- numerics: dq, dk, dv against float64 autograd of the naive attention on the
  same inputs and dout (grad_rel_error_q/k/v); the forward's rel_error;
- sdpa_backend_backward: from the output's grad_fn.
Without --pass the output is the forward-only lines of before, key for key.
Shapes are BxHxSxD, or BxH/KVxSxD for grouped-query attention (2x32/8x4096x128).
"""
import argparse
import contextlib
import json
import math
import os
import re
import statistics
import sys
import tempfile
import time
from collections import namedtuple

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
# fp8 (issue 36): the bf16 draw quantised per tensor; naive emulates it (dequantise, then bf16), SDPA refuses.
FP8 = {"fp8_e4m3": torch.float8_e4m3fn, "fp8_e5m2": torch.float8_e5m2}
VARIANTS = ("naive", "naive_inplace", "sdpa_math", "sdpa_efficient", "sdpa_flash", "sdpa_cudnn", "sdpa_auto")
PASSES = ("forward", "backward", "forward_backward")

# head_dim_v: the values' (and output's) head dim, as attnsweep's shape key (issue 36); head_dim's when None.
Shape = namedtuple("Shape", "batch heads kv_heads seq_len head_dim head_dim_v", defaults=(None,))


def value_dim(shape):
    return shape.head_dim_v or shape.head_dim


def parse_shape(text):
    """'BxHxSxD', 'BxH/KVxSxD' (grouped-query attention), either with 'D/DV' (the values' head dim,
    as attnsweep labels it: 1x128x4096x192/128) -> Shape; ValueError otherwise."""
    parts = text.strip().split("x")
    if len(parts) != 4:
        raise ValueError(f"shape {text!r}: expected BxHxSxD or BxH/KVxSxD[/DV] (e.g. 2x32/8x4096x128)")
    heads_text, dims_text = parts[1].split("/"), parts[3].split("/")
    if len(heads_text) > 2 or len(dims_text) > 2:
        raise ValueError(f"shape {text!r}: heads are H or H/KV, head dims D or D/DV")
    try:
        batch, seq_len, head_dim = int(parts[0]), int(parts[2]), int(dims_text[0])
        heads = int(heads_text[0])
        kv_heads = int(heads_text[1]) if len(heads_text) == 2 else heads
        head_dim_v = int(dims_text[1]) if len(dims_text) == 2 else head_dim
    except ValueError:
        raise ValueError(f"shape {text!r}: sizes must be integers") from None
    if min(batch, heads, kv_heads, seq_len, head_dim, head_dim_v) < 1:
        raise ValueError(f"shape {text!r}: sizes must be at least 1")
    if heads % kv_heads:
        raise ValueError(f"shape {text!r}: kv_heads ({kv_heads}) must divide heads ({heads})")
    return Shape(batch, heads, kv_heads, seq_len, head_dim, None if head_dim_v == head_dim else head_dim_v)


def parse_shapes(text):
    return [parse_shape(t) for t in text.split(",") if t.strip()]


def shape_text(shape):
    heads = str(shape.heads) if shape.kv_heads == shape.heads else f"{shape.heads}/{shape.kv_heads}"
    dims = str(shape.head_dim) if value_dim(shape) == shape.head_dim else f"{shape.head_dim}/{shape.head_dim_v}"
    return f"{shape.batch}x{heads}x{shape.seq_len}x{dims}"


def parse_list(text, allowed, what):
    """A comma-separated list of names from `allowed`, each once, in the order given."""
    names = [t.strip() for t in text.split(",") if t.strip()]
    unknown = [n for n in names if n not in allowed]
    if unknown:
        raise ValueError(f"unknown {what} {', '.join(unknown)} (known: {', '.join(allowed)})")
    if len(set(names)) != len(names) or not names:
        raise ValueError(f"{what}: each name once, at least one")
    return names


def make_inputs(shape, dtype_name, seed, device):
    """q, k, v as attnsweep draws them. shape: (B, H, S, D), or a Shape (B, H, KV, S, D[, DV])."""
    if len(shape) == 4:
        batch, heads, seq_len, head_dim = shape
        kv_heads, head_dim_v = heads, head_dim
    else:
        batch, heads, kv_heads, seq_len, head_dim = shape[:5]
        head_dim_v = value_dim(shape)
    gen = torch.Generator(device).manual_seed(seed)
    q = torch.randn(batch, heads, seq_len, head_dim, generator=gen, device=device)
    k = torch.randn(batch, kv_heads, seq_len, head_dim, generator=gen, device=device)
    v = torch.randn(batch, kv_heads, seq_len, head_dim_v, generator=gen, device=device)
    dtype = DTYPES.get(dtype_name, torch.bfloat16)  # an fp8 case's bf16 draw, quantised by quantize()
    return q.to(dtype), k.to(dtype), v.to(dtype)


def quantize(x, fp8):
    """attnsweep's per-tensor fp8 quantisation: descale = amax(|x|) / the format's largest finite value
    (clamped at float32's smallest normal), x8 = (x in float32 / descale) cast to fp8. Returns (x8, descale)."""
    wide = x.float()
    descale = (wide.abs().amax() / torch.finfo(fp8).max).clamp_min(torch.finfo(torch.float32).tiny)
    return (wide / descale).to(fp8), descale


def dequantize(x8, descale, dtype=torch.bfloat16):
    """fp8 value x descale in float32, rounded once to dtype (naive's emulation uses bf16)."""
    return (x8.float() * descale).to(dtype)


def make_dout(out_shape, dtype_name, seed, device):
    """The upstream gradient: float32 randn of the output's shape from a new generator seeded seed + 1, cast."""
    gen = torch.Generator(device).manual_seed(seed + 1)
    return torch.randn(*out_shape, generator=gen, device=device).to(DTYPES.get(dtype_name, torch.bfloat16))


def causal_mask(q, k):
    """Top-left aligned, as PyTorch's is_causal: query i sees keys 0..i."""
    return torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool, device=q.device).triu(1)


def soft_capped(scores, softcap):
    """cap * tanh(s / cap) on the scaled scores (Gemma 2's soft-capping, issue 36); 0: none."""
    return torch.tanh(scores / softcap) * softcap if softcap else scores


def alibi_slopes(heads):
    """ALiBi's standard slopes (the paper's reference code), as attnsweep's alibi_slopes."""
    def power_of_two(n):
        return [2.0 ** (-8.0 * (h + 1) / n) for h in range(n)]
    closest = 2 ** int(math.floor(math.log2(heads)))
    return power_of_two(closest) + power_of_two(2 * closest)[0::2][: heads - closest]


class ScoreMods:
    """A case's score modifications (issue 36) and their tensors, made as attnsweep makes them:
    softcap (0: none); ALiBi's float32 slopes, |i + offset - j| distances and the bias
    -slope * distance in the inputs' dtype, -inf where masked (offset 0 under a top-left causal
    mask, seq_kv - seq_q without a mask); sinks: float32 randn(heads) from a generator of the
    device seeded with seed + 3. Fields None where off."""

    def __init__(self, softcap=0.0, alibi=False, sinks=False, q=None, k=None, causal=False, seed=0):
        self.softcap = softcap
        self.slopes = self.distance = self.bias = self.sinks = None
        self.descales = None  # an fp8 case's (q, k, v) descales, set by run_passes
        if q is None:
            return
        heads, seq_q, seq_kv, device = q.shape[1], q.shape[2], k.shape[2], q.device
        if alibi:
            self.slopes = torch.tensor(alibi_slopes(heads), dtype=torch.float64).float().to(device)
            offset = 0 if causal else seq_kv - seq_q
            rows = torch.arange(seq_q, dtype=torch.float32, device=device).unsqueeze(1)
            keys = torch.arange(seq_kv, dtype=torch.float32, device=device).unsqueeze(0)
            self.distance = (rows + float(offset) - keys).abs()
            bias = -self.slopes.view(1, -1, 1, 1) * self.distance.unsqueeze(0).unsqueeze(0)
            if causal:
                bias = bias.masked_fill(causal_mask(q, k), float("-inf"))
            self.bias = bias.to(q.dtype).contiguous()
        if sinks:
            self.sinks = torch.randn(heads, generator=torch.Generator(device.type).manual_seed(seed + 3),
                                     device=device)

    def exact_bias(self, heads=slice(None), rows=slice(None)):
        """ALiBi's bias in float64 for query heads `heads` and rows `rows`: (1, h, r, Skv)."""
        return -self.slopes[heads].double().view(1, -1, 1, 1) * self.distance[rows].double()


NO_MODS = ScoreMods()


@contextlib.contextmanager
def deterministic_algorithms(on):
    """torch.use_deterministic_algorithms(on) for the block, restored after (attnsweep's
    deterministic: a case's variant runs with it on, the float64 references with it off)."""
    was, warn_only = torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled()
    torch.use_deterministic_algorithms(on)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(was, warn_only=warn_only)


def softmax_with_sinks(scores, sinks):
    """softmax over each row with the head's sink logit as one more column, dropped after
    (gpt-oss's reference): probability taken, no value given. sinks: (heads,) or None."""
    if sinks is None:
        return torch.softmax(scores, dim=-1)
    column = sinks.to(scores.dtype).reshape(*scores.shape[:-2], 1, 1) if sinks.dim() > 1 else \
        sinks.to(scores.dtype).view(1, -1, 1, 1)
    column = column.expand(*scores.shape[:-1], 1)
    return torch.softmax(torch.cat([scores, column], dim=-1), dim=-1)[..., : scores.shape[-1]]


def attention(variant, q, k, v, scale, causal, mask, mods=NO_MODS):
    """One forward of a variant on these tensors (as attnsweep's variants compute it); fp8 q, k, v
    with mods.descales: naive's emulation dequantises them first, SDPA refuses."""
    if q.dtype in FP8.values():
        if variant not in ("naive", "naive_inplace"):
            raise RuntimeError("No available kernel: scaled_dot_product_attention takes no fp8 tensors")
        q, k, v = (dequantize(x, s) for x, s in zip((q, k, v), mods.descales))
    grouped = k.shape[1] != q.shape[1]
    if variant in ("naive", "naive_inplace"):
        if grouped:  # each key/value head serves heads/kv_heads query heads
            repeats = q.shape[1] // k.shape[1]
            k, v = k.repeat_interleave(repeats, 1), v.repeat_interleave(repeats, 1)
        scores = q @ k.transpose(-2, -1)
        scores = soft_capped(scores * scale, mods.softcap)
        if mods.bias is not None:
            scores = scores + mods.bias
        if causal:
            if variant == "naive":
                scores = scores.masked_fill(mask, float("-inf"))
            else:
                scores.masked_fill_(mask, float("-inf"))
        return softmax_with_sinks(scores, mods.sinks) @ v
    if mods.softcap:
        raise RuntimeError("No available kernel: scaled_dot_product_attention has no soft-capping")
    if mods.sinks is not None:
        raise RuntimeError("No available kernel: scaled_dot_product_attention has no attention sinks")
    # Pinned variants run inside sdpa_kernel(...), entered once by main() around
    # every measurement, so its Python overhead stays out of the timed pass.
    if mods.bias is not None:  # ALiBi: the float bias is the attn_mask, the causal mask inside it
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mods.bias, scale=scale, enable_gqa=grouped)
    if grouped:
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale, enable_gqa=True)
    return F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale)


def forward_fn(variant, q, k, v, scale, causal, mods=NO_MODS):
    mask = causal_mask(q, k)
    return lambda: attention(variant, q, k, v, scale, causal, mask, mods)


def masked_reference(q, k, v, scale, allowed=None, softcap=0.0, mods=None):
    """Float64 attention, grouped key/value heads repeated for their queries; `allowed` (True where
    query i may see key j) masks the scores, None lets every query see every key; softcap as attention's;
    mods (ScoreMods): ALiBi's bias made anew in float64 and the sinks, where the case has them."""
    qd, kd, vd = q.double(), k.double(), v.double()
    if kd.shape[1] != qd.shape[1]:
        repeats = qd.shape[1] // kd.shape[1]
        kd, vd = kd.repeat_interleave(repeats, 1), vd.repeat_interleave(repeats, 1)
    scores = soft_capped((qd @ kd.transpose(-2, -1)) * scale, mods.softcap if mods else softcap)
    if mods is not None and mods.slopes is not None:
        scores = scores + mods.exact_bias()
    if allowed is not None:
        scores = scores.masked_fill(allowed.logical_not(), float("-inf"))
    return softmax_with_sinks(scores, mods.sinks.double() if mods is not None and mods.sinks is not None else None) @ vd


def reference(q, k, v, scale, causal, mods=NO_MODS):
    """Float64 attention, causal aligned to the top left when causal (as PyTorch's is_causal)."""
    return masked_reference(q, k, v, scale, causal_mask(q, k).logical_not() if causal else None, mods=mods)


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
        with deterministic_algorithms(False):
            ref = make_reference()
        row["rel_error"] = ((out.double() - ref).norm() / ref.norm()).item()
        row["median_us"] = cuda_event_median(fn, a.samples, a.protocol)
    print(json.dumps(row), flush=True)


# ---------------------------------------------------------------------------
# Passes (issue 23): forward, backward, forward_backward.

LAUNCH_CATEGORIES = ("cuda_runtime", "cuda_driver")
ACTIVITY_CATEGORIES = ("kernel", "gpu_memcpy", "gpu_memset")
PASS_LABEL = "attnsweep_pass#"


def count_pass_activity(events, passes, label=PASS_LABEL):
    """Kernels, memcpy and memset per labelled pass from a Chrome trace's events.

    An activity belongs to pass i when its launch call (a cuda_runtime or
    cuda_driver event with the same args.correlation) starts inside the host
    interval of the user_annotation `label + str(i)`, on any thread: autograd's
    device thread launches a backward's kernels, not the thread that called
    torch.autograd.grad. Returns (per-pass dicts, activities outside every pass,
    labels missing): each dict has kernel, gpu_memcpy, gpu_memset and device_us
    (summed durations). Outside every pass are, e.g., a backward sample's untimed
    forward (its counts once per pass, as seen on the H200) and an activity whose
    launch is not in the trace."""
    intervals = {}
    for e in events:
        if e.get("ph") == "X" and e.get("cat") == "user_annotation" and str(e.get("name", "")).startswith(label):
            suffix = e["name"][len(label):]
            if suffix.isdigit() and int(suffix) < passes:
                start = float(e["ts"])
                intervals[int(suffix)] = (start, start + float(e.get("dur", 0)))
    launches = {}
    for e in events:
        if e.get("ph") == "X" and e.get("cat") in LAUNCH_CATEGORIES:
            correlation = (e.get("args") or {}).get("correlation")
            if correlation is not None:
                launches[correlation] = float(e["ts"])
    counts = [{"kernel": 0, "gpu_memcpy": 0, "gpu_memset": 0, "device_us": 0.0} for _ in range(passes)]
    unattributed = 0
    for e in events:
        if e.get("ph") != "X" or e.get("cat") not in ACTIVITY_CATEGORIES:
            continue
        launched = launches.get((e.get("args") or {}).get("correlation"))
        owner = None
        if launched is not None:
            for i, (start, end) in intervals.items():
                if start <= launched <= end:
                    owner = i
                    break
        if owner is None:
            unattributed += 1
            continue
        counts[owner][e["cat"]] += 1
        counts[owner]["device_us"] += float(e.get("dur", 0))
    missing = [i for i in range(passes) if i not in intervals]
    return counts, unattributed, missing


SDPA_OPS = (("cudnn_attention", "cudnn_attention"), ("flash_attention", "flash_attention"),
            ("efficient_attention", "efficient_attention"), ("attention_math", "math"))


def sdpa_backend_in(events, label=PASS_LABEL + "0"):
    """The SDPA backend whose aten op ran first inside the label's interval
    (aten::_scaled_dot_product_cudnn_attention -> cudnn_attention, ...), or None."""
    spans = [(float(e["ts"]), float(e["ts"]) + float(e.get("dur", 0))) for e in events
             if e.get("ph") == "X" and e.get("cat") == "user_annotation" and e.get("name") == label]
    if not spans:
        return None
    start, end = spans[0]
    ops = sorted((float(e["ts"]), e["name"]) for e in events
                 if e.get("ph") == "X" and e.get("cat") == "cpu_op" and start <= float(e["ts"]) <= end
                 and str(e.get("name", "")).startswith("aten::_scaled_dot_product_"))
    for _, name in ops:
        for marker, backend in SDPA_OPS:
            if marker in name:
                return backend
    return None


def profile_passes(prepare, timed, passes, device):
    """One profiling session of `passes` passes; prepare() (untimed, unlabelled,
    then a synchronize) before each, timed(state) inside its label. Returns
    count_pass_activity's three values and sdpa_backend_in's."""
    activities = [torch.profiler.ProfilerActivity.CPU]
    if device == "cuda":
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.json")
        synchronize(device)
        with torch.profiler.profile(activities=activities) as prof:
            for i in range(passes):
                state = prepare()
                synchronize(device)
                with torch.profiler.record_function(f"{PASS_LABEL}{i}"):
                    result = timed(state)
                del state, result
                synchronize(device)
        prof.export_chrome_trace(path)
        with open(path) as f:
            events = json.load(f)["traceEvents"]
    return count_pass_activity(events, passes) + (sdpa_backend_in(events),)


def consistent_counts(prepare, timed, passes, device, attempts):
    """Profiles until every pass shows the same counts (Kineto can drop records
    at a session's start), at most `attempts` sessions. Returns a row update."""
    for attempt in range(1, attempts + 1):
        counts, unattributed, missing, backend = profile_passes(prepare, timed, passes, device)
        each = [[c["kernel"], c["gpu_memcpy"], c["gpu_memset"]] for c in counts]
        consistent = not missing and all(e == each[0] for e in each)
        if consistent:
            break
    return {"kernels": each[0][0], "memcpy": each[0][1], "memset": each[0][2],
            "device_us": statistics.median(c["device_us"] for c in counts),
            "counts_consistent": consistent, "counts_each": each, "profile_attempts": attempt,
            "outside_passes": unattributed, "profiled_sdpa_backend": backend}


def synchronize(device):
    if device == "cuda":
        torch.cuda.synchronize()


def pass_steps(pass_name, attend, q, k, v, dout):
    """(prepare, timed) for one pass: prepare() runs untimed before each sample
    and returns what timed(state) needs; timed is the measured work."""
    if pass_name == "forward":
        return (lambda: None), (lambda _: attend(q, k, v))

    def leaves():
        return tuple(t.detach().requires_grad_() for t in (q, k, v))

    if pass_name == "backward":
        def prepare():
            qs, ks, vs = leaves()
            return attend(qs, ks, vs), (qs, ks, vs)

        def timed(state):
            out, inputs = state
            return torch.autograd.grad(out, inputs, dout)
    else:  # forward_backward
        def prepare():
            return leaves()

        def timed(state):
            return torch.autograd.grad(attend(*state), state, dout)
    return prepare, timed


def backend_of(grad_fn_name):
    """The SDPA backend an output's grad_fn belongs to, in attnsweep's names."""
    for marker, backend in (("Cudnn", "cudnn_attention"), ("Flash", "flash_attention"),
                            ("Efficient", "efficient_attention"), ("Overrideable", "overrideable")):
        if marker in grad_fn_name:
            return backend
    return "math"


def reference_grads(q, k, v, dout, scale, causal, chunk_elements=1 << 27, mods=NO_MODS):
    """Float64 output and dq, dk, dv of the naive attention (autograd), one batch
    entry, a few key/value heads and a run of query rows at a time (at most
    chunk_elements scores: 1 GiB of doubles), so 1x64/8x65536x128 needs a few
    GiB, not 256. A row's softmax needs all its keys and no other row: dq and
    the output are each chunk's own rows, dk and dv sums over the row chunks.
    dout None: the output alone (no autograd), and (None, None, None) for the gradients."""
    batch, heads, seq_q, _ = q.shape
    kv_heads, seq_kv = k.shape[1], k.shape[2]
    repeats = heads // kv_heads
    rows_in_budget = max(1, chunk_elements // max(1, repeats * seq_kv))
    groups = max(1, min(kv_heads, rows_in_budget // max(1, seq_q)))
    row_step = seq_q if groups > 1 else min(seq_q, rows_in_budget)
    mask = torch.ones(seq_q, seq_kv, dtype=torch.bool, device=q.device).triu(1) if causal else None
    out = torch.empty((*q.shape[:-1], v.shape[-1]), dtype=torch.float64, device=q.device)  # the values' head dim
    if dout is None:
        dq = dk = dv = None
    else:
        dq = torch.empty(q.shape, dtype=torch.float64, device=q.device)
        dk = torch.zeros(k.shape, dtype=torch.float64, device=q.device)
        dv = torch.zeros(v.shape, dtype=torch.float64, device=q.device)
    with torch.set_grad_enabled(dout is not None):
        for b in range(batch):
            for g0 in range(0, kv_heads, groups):
                g1 = min(kv_heads, g0 + groups)
                qh = slice(g0 * repeats, g1 * repeats)
                for r0 in range(0, seq_q, row_step):
                    r1 = min(seq_q, r0 + row_step)
                    qc = q[b, qh, r0:r1].double().reshape(g1 - g0, repeats, r1 - r0, -1).requires_grad_(dout is not None)
                    kc = k[b, g0:g1].double().unsqueeze(1).requires_grad_(dout is not None)
                    vc = v[b, g0:g1].double().unsqueeze(1).requires_grad_(dout is not None)
                    scores = soft_capped((qc @ kc.transpose(-2, -1)) * scale, mods.softcap)
                    if mods.slopes is not None:  # (1, heads, rows, Skv) as (groups, repeats, rows, Skv)
                        scores = scores + mods.exact_bias(qh, slice(r0, r1)).reshape(g1 - g0, repeats, r1 - r0, -1)
                    if causal:
                        scores = scores.masked_fill(mask[r0:r1], float("-inf"))
                    sinks = None if mods.sinks is None else mods.sinks[qh].double().reshape(g1 - g0, repeats)
                    oc = softmax_with_sinks(scores, sinks) @ vc
                    out[b, qh, r0:r1] = oc.detach().reshape(-1, r1 - r0, oc.shape[-1])
                    if dout is not None:
                        upstream = dout[b, qh, r0:r1].double().reshape(oc.shape)
                        gq, gk, gv = torch.autograd.grad(oc, (qc, kc, vc), upstream)
                        dq[b, qh, r0:r1] = gq.reshape(-1, r1 - r0, gq.shape[-1])
                        dk[b, g0:g1] += gk.squeeze(1)
                        dv[b, g0:g1] += gv.squeeze(1)
                        del gq, gk, gv, upstream
                    del qc, kc, vc, scores, oc
    return out, (dq, dk, dv)


def rel_error(value, ref):
    return ((value.double() - ref).norm() / ref.norm()).item()


MAX_HOLD = 100_000_000  # cycles: ~50 ms at 2 GHz


def hold_cycles(dispatch_us):
    """torch.cuda._sleep cycles that hold the stream while the host enqueues a
    pass: at least ~1 ms at 2 GHz (the forward's 2,000,000), else 3x the pass's
    host dispatch time (a backward of math launches dozens of kernels), at
    most ~50 ms."""
    return min(MAX_HOLD, max(2_000_000, int(3 * dispatch_us * 2000)))


def hold_for(setting, dispatch_us):
    """--hold's cycles: auto (hold_cycles), dispatch (1.5x the host dispatch at ~2 GHz, at least 100,000
    cycles, ~50 us: about as long as attnsweep's blocking kernel holds the stream), or a number."""
    if setting == "auto":
        return hold_cycles(dispatch_us)
    if setting == "dispatch":
        return min(MAX_HOLD, max(100_000, int(1.5 * dispatch_us * 2000)))
    return int(setting)


def time_pass(prepare, timed, samples, max_seconds, min_samples, hold, device):
    """Medians of the v2 protocol: per sample the untimed prepare(), a
    synchronize, a memset of 2x the L2 size, torch.cuda._sleep holding the
    stream, event, timed(state), event, sync. At most `samples` samples, and no
    more once max_seconds (0: no limit) of wall time have passed and
    min_samples were taken. On the CPU: wall time of timed(state)."""
    times = []
    began = time.perf_counter()
    if device == "cuda":
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        if "buffer" not in FLUSH:
            l2 = torch.cuda.get_device_properties(0).L2_cache_size
            FLUSH["buffer"] = torch.empty(max(2 * l2, 64 << 20), dtype=torch.uint8, device="cuda")
    while len(times) < samples:
        state = prepare()
        synchronize(device)
        if device == "cuda":
            FLUSH["buffer"].zero_()
            if hold:
                torch.cuda._sleep(hold)
            start.record()
            result = timed(state)
            stop.record()
            stop.synchronize()
            times.append(start.elapsed_time(stop) * 1000.0)
        else:
            t0 = time.perf_counter()
            result = timed(state)
            times.append((time.perf_counter() - t0) * 1e6)
        del state, result
        if max_seconds and len(times) >= min_samples and time.perf_counter() - began > max_seconds:
            break
    return times


class ReferenceCache:
    """The float64 output and gradients of one shape and dtype, computed once
    for all its variants and passes (they run back to back)."""

    def __init__(self, q, k, v, dout, scale, causal, mods=NO_MODS):
        self.args = (q, k, v, dout, scale, causal)
        self.mods = mods
        self.value = None

    def get(self):
        if self.value is None:
            self.value = reference_grads(*self.args, mods=self.mods)
        return self.value


def measure_pass(variant, pass_name, q, k, v, dout, mask, scale, causal, refs, row, a):
    """Counts, numerics and timing of one variant and pass; returns its row."""
    attend = lambda qq, kk, vv: attention(variant, qq, kk, vv, scale, causal, mask, refs.mods)  # noqa: E731
    prepare, timed = pass_steps(pass_name, attend, q, k, v, dout)
    device = a.device
    with torch.set_grad_enabled(pass_name != "forward"):
        try:
            dispatch = []
            for _ in range(a.warmup):
                state = prepare()
                synchronize(device)
                t0 = time.perf_counter()
                result = timed(state)
                dispatch.append((time.perf_counter() - t0) * 1e6)
                del state, result
            synchronize(device)
            # Numerics and the backward's backend, from one more pass.
            if pass_name == "forward":
                out = attend(q, k, v)
                synchronize(device)
            else:
                leaves = tuple(t.detach().requires_grad_() for t in (q, k, v))
                out = attend(*leaves)
                grad_fn = out.grad_fn.name() if out.grad_fn is not None else ""
                grads = torch.autograd.grad(out, leaves, dout)
                synchronize(device)
                del leaves
        except torch.cuda.OutOfMemoryError as error:
            row.update(status="oom", error=str(error).splitlines()[0])
            return row
        except RuntimeError as error:
            message = str(error).strip().splitlines()
            refused = any(m in str(error) for m in ("No available kernel", "No viable backend",
                                                    "does not have a deterministic implementation",
                                                    "Deterministic behavior was enabled"))
            row.update(status="unsupported" if refused else "error",
                       error=message[0] if message else type(error).__name__)
            return row
        row["status"] = "ok"
        with deterministic_algorithms(False):
            ref_out, ref_grads = refs.get()
        if pass_name == "forward":
            row["rel_error"] = rel_error(out, ref_out)
            if refs.mods.descales is not None:  # fp8: also against float64 of the dequantised inputs
                deq = [dequantize(x, s, torch.float32) for x, s in zip((q, k, v), refs.mods.descales)]
                with deterministic_algorithms(False):
                    row["rel_error_dequantized"] = rel_error(out, reference(*deq, scale, causal, refs.mods))
                del deq
        else:
            for name, g, ref in zip("qkv", grads, ref_grads):
                row[f"grad_rel_error_{name}"] = rel_error(g, ref)
            if variant.startswith("sdpa_"):
                row["sdpa_backend_backward"] = backend_of(grad_fn)
            row["grad_fn"] = grad_fn
            del grads
        del out
        dispatch_us = statistics.median(dispatch) if dispatch else 0.0
        hold = hold_for(a.hold, dispatch_us)
        if not a.counts_only:
            times = time_pass(prepare, timed, a.samples, a.max_seconds, a.min_samples, hold, device)
            # times_us in the order taken: a report can take the median of the first n, the stretch of the
            # duty cycle attnsweep's n samples covered (a kernel at the power cap slows as the GPU heats).
            row.update(median_us=statistics.median(times), samples=len(times),
                       min_us=min(times), host_dispatch_us=dispatch_us, hold=a.hold, hold_cycles=hold,
                       times_us=[round(t, 2) for t in times])
        counts = consistent_counts(prepare, timed, a.forwards, device, a.profile_attempts)
        backend = counts.pop("profiled_sdpa_backend")
        if pass_name == "forward" and variant.startswith("sdpa_") and backend:
            row["sdpa_backend"] = backend  # the forward's, from the aten op in the profile
        row.update(counts)
    return row


def warm_profiler(device):
    """The first profiling session of a process pays CUPTI's start-up: a throwaway one."""
    x = torch.ones(64, 64, device=device)
    profile_passes(lambda: None, lambda _: x @ x, 1, device)


def run_passes(a):
    shapes = parse_shapes(a.shapes)
    dtypes = parse_list(a.dtypes, tuple(DTYPES) + tuple(FP8), "dtype")
    variants = parse_list(a.variants, VARIANTS, "variant")
    passes = parse_list(a.passes, PASSES, "pass")
    causal = bool(a.causal)
    warm_profiler(a.device)
    for shape in shapes:
        scale = 1.0 / math.sqrt(shape.head_dim)
        for dtype in dtypes:
            try:
                q, k, v = make_inputs(shape, dtype, a.seed, a.device)
                dout = make_dout((*q.shape[:-1], v.shape[-1]), dtype, a.seed, a.device)  # the output's shape
                mask = causal_mask(q, k)
            except torch.cuda.OutOfMemoryError as error:
                print(json.dumps({"shape": shape_text(shape), "dtype": dtype, "status": "oom",
                                  "error": str(error).splitlines()[0]}), flush=True)
                continue
            mods = ScoreMods(a.softcap, bool(a.alibi), bool(a.sinks), q, k, causal, a.seed)
            refs = ReferenceCache(q, k, v, dout, scale, causal, mods)  # an fp8 case's: of the bf16 draw
            if dtype in FP8:
                (q, sq), (k, sk), (v, sv) = (quantize(x, FP8[dtype]) for x in (q, k, v))
                mods.descales = (sq, sk, sv)
            for variant in variants:
                pin = sdpa_kernel(BACKENDS[variant]) if variant in BACKENDS else contextlib.nullcontext()
                with pin, deterministic_algorithms(bool(a.deterministic)):
                    for pass_name in passes:
                        row = {"variant": variant, "shape": shape_text(shape), "dtype": dtype, "pass": pass_name,
                               "batch": shape.batch, "heads": shape.heads, "kv_heads": shape.kv_heads,
                               "seq_len": shape.seq_len, "head_dim": shape.head_dim, "causal": causal}
                        add_score_mods(row, a)
                        if value_dim(shape) != shape.head_dim:
                            row["head_dim_v"] = shape.head_dim_v
                        if dtype in FP8 and pass_name != "forward":
                            row.update(status="unsupported", error="fp8 cases are measured forward only")
                            print(json.dumps(row), flush=True)
                            continue
                        try:
                            row = measure_pass(variant, pass_name, q, k, v, dout, mask, scale, causal, refs, row, a)
                        except torch.cuda.OutOfMemoryError as error:
                            row.update(status="oom", error=str(error).splitlines()[0])
                        except Exception as error:  # one case's failure is its line, not the run's end
                            message = str(error).strip().splitlines()
                            row.update(status="error", error=f"{type(error).__name__}: {message[0] if message else ''}")
                        print(json.dumps(row), flush=True)
                        if a.device == "cuda":
                            torch.cuda.empty_cache()
            del q, k, v, dout, mask, refs, mods
            if a.device == "cuda":
                torch.cuda.empty_cache()


def add_score_mods(row, a):
    """The case's score modifications in its JSON row, only where it has them."""
    if a.softcap:
        row["softcap"] = a.softcap
    if a.alibi:
        row["alibi"] = True
    if a.sinks:
        row["sinks"] = True
    if a.deterministic:
        row["deterministic"] = True


def build_parser():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--variants", default=",".join(VARIANTS))
    p.add_argument("--shapes", default="8x16x1024x64",
                   help="comma-separated BxHxSxD, BxH/KVxSxD for grouped-query attention (2x32/8x4096x128)")
    p.add_argument("--dtypes", "--dtype", dest="dtypes", default="bf16", help="comma-separated bf16, fp16, fp32, fp8_e4m3, fp8_e5m2 (fp8: --pass forward, naive variants)")
    p.add_argument("--pass", "--passes", dest="passes", default=None,
                   help="comma-separated forward, backward, forward_backward: one line per case and pass, "
                        "with the pass in it (without it: the forward-only lines of before)")
    p.add_argument("--causal", type=int, default=1)
    p.add_argument("--softcap", type=float, default=0.0,
                   help="soft-capping of the scaled scores, cap * tanh(s / cap), as attnsweep's softcap (0: none); "
                        "naive and naive_inplace compute it, SDPA's variants are unsupported")
    p.add_argument("--alibi", type=int, default=0,
                   help="1: ALiBi's per-head linear biases, as attnsweep's alibi: true (naive adds the bias, SDPA takes "
                        "it as its float attn_mask with the causal mask inside)")
    p.add_argument("--sinks", type=int, default=0,
                   help="1: attention sinks, one seeded logit per head in each row's softmax, as attnsweep's sinks: "
                        "true (naive computes them; SDPA's variants are unsupported)")
    p.add_argument("--deterministic", type=int, default=0,
                   help="1: torch.use_deterministic_algorithms(True) around every variant's passes, as attnsweep's "
                        "deterministic: true (CUBLAS_WORKSPACE_CONFIG=:4096:8 unless set; the float64 references "
                        "run with it off)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--forwards", type=int, default=5, help="profiled forwards (with --pass: profiled passes)")
    p.add_argument("--samples", type=int, default=200, help="timed samples per case (at most, with --max-seconds)")
    p.add_argument("--max-seconds", type=float, default=0.0,
                   help="with --pass: stop a case's timing after this much wall time (0: no limit) ...")
    p.add_argument("--min-samples", type=int, default=10, help="... once it has this many samples")
    p.add_argument("--profile-attempts", type=int, default=3,
                   help="with --pass: profiling sessions until every pass shows the same counts")
    p.add_argument("--device", choices=["cuda", "cpu"], default="cuda",
                   help="cpu: with --pass only, a smoke test (no kernels; wall-clock times)")
    p.add_argument("--protocol", choices=["v1", "v2"], default="v2")
    p.add_argument("--hold", default="auto",
                   help="with --pass: torch.cuda._sleep before each sample: auto (default: ~1 ms, more for a pass "
                        "with a long host dispatch), dispatch (1.5x the pass's median host dispatch, at least ~50 us: "
                        "the stream is held about as long as attnsweep's blocking kernel holds it, so the GPU's duty "
                        "cycle, and with it a power cap, is like attnsweep's sustained regime), or a number of cycles "
                        "(0: none; then Python's host dispatch is inside the interval)")
    p.add_argument("--counts-only", action="store_true", help="skip timing and numerics")
    p.add_argument("--inputs-only", action="store_true",
                   help="print q[0,0,0,:4], k[-1,-1,-1,-1], v's float64 sum of the first shape and dtype, exactly")
    return p


def check_arguments(p, a):
    """Refuses what cannot run, with one line (argparse's exit 2)."""
    try:
        parse_shapes(a.shapes) or p.error("--shapes: no shape")
        parse_list(a.dtypes, tuple(DTYPES) + tuple(FP8), "dtype")
        if a.passes is not None:
            parse_list(a.variants, VARIANTS, "variant")
            parse_list(a.passes, PASSES, "pass")
    except ValueError as error:
        p.error(str(error))
    for name in ("warmup", "forwards", "samples", "min_samples", "profile_attempts"):
        if getattr(a, name) < (0 if name == "warmup" else 1):
            p.error(f"--{name.replace('_', '-')} must be at least {0 if name == 'warmup' else 1}")
    if a.softcap < 0:
        p.error("--softcap must not be negative (0: none)")
    if a.max_seconds < 0:
        p.error("--max-seconds must not be negative")
    if a.hold not in ("auto", "dispatch") and not (re.fullmatch(r"[0-9]{1,9}", a.hold) and int(a.hold) <= MAX_HOLD):
        p.error(f"--hold {a.hold}: auto, dispatch or a number of cycles from 0 to {MAX_HOLD:,} (~50 ms)")
    if a.hold != "auto" and a.passes is None:
        p.error("--hold needs --pass")
    if a.device == "cpu" and a.passes is None:
        p.error("--device cpu needs --pass")
    if a.passes is None and any(d in FP8 for d in a.dtypes.split(",")):
        p.error("--dtypes fp8_e4m3/fp8_e5m2 need --pass (the forward-only lines of before have no quantisation)")
    if a.passes is not None and a.protocol != "v2":
        p.error("--pass times with protocol v2 only")


def main(argv=None):
    p = build_parser()
    a = p.parse_args(argv)
    check_arguments(p, a)
    if a.deterministic:
        # before cuBLAS starts, as attnsweep sets it for a run with deterministic cases
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    if a.device == "cuda" and not torch.cuda.is_available():
        sys.exit("torch_reference.py needs a CUDA device")
    if a.inputs_only:
        q, k, v = make_inputs(parse_shapes(a.shapes)[0], a.dtypes.split(",")[0], a.seed, a.device)
        values = q[0, 0, 0, :4].double().tolist() + [k[-1, -1, -1, -1].double().item(), v.double().sum().item()]
        print(" ".join(repr(x) for x in values))
        return
    if a.passes is not None:
        run_passes(a)
        return
    causal = bool(a.causal)
    for shape in parse_shapes(a.shapes):
        scale = 1.0 / math.sqrt(shape.head_dim)
        for dtype in a.dtypes.split(","):
            q, k, v = make_inputs(shape, dtype, a.seed, "cuda")
            mods = ScoreMods(a.softcap, bool(a.alibi), bool(a.sinks), q, k, causal, a.seed)
            for variant in a.variants.split(","):
                fn = forward_fn(variant, q, k, v, scale, causal, mods)
                row = {"variant": variant, "dtype": dtype, "batch": shape.batch, "heads": shape.heads,
                       "seq_len": shape.seq_len, "head_dim": shape.head_dim, "causal": causal}
                if value_dim(shape) != shape.head_dim:
                    row["head_dim_v"] = shape.head_dim_v
                add_score_mods(row, a)
                if shape.kv_heads != shape.heads:
                    row["kv_heads"] = shape.kv_heads
                pin = sdpa_kernel(BACKENDS[variant]) if variant in BACKENDS else contextlib.nullcontext()
                with pin, deterministic_algorithms(bool(a.deterministic)):
                    measure(variant, fn, row, a, lambda: reference(q, k, v, scale, causal, mods))
            del q, k, v, mods
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
