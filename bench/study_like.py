#!/usr/bin/env python3
"""The straightforward way, as the study measured one case: a Python script
that, per case, builds inputs, runs 3 warm-up forwards, then torch.profiler
with schedule(wait=1, warmup=1, active=3) over 5 steps, each forward under
record_function, and reads kernel counts and the mean kernel time per forward
from the profile. Used by bench/run_benchmarks.sh as the baseline for sweep
cost. Prints one JSON object per case.

--target-noise X repeats that profiling session per case (one sample = the
mean kernel time per forward of one session) until the sessions' relative
standard deviation is at most X, or has stopped moving (five looks in a row
within 5% of each other, as attnsweep's rule), or --max-sessions: the study's
way held to the same noise target as attnsweep. Without it: one session, no
statistics (the study's own practice).

--device cpu runs the naive and math variants on the CPU, to try the script
where there is no GPU (counts and times then mean nothing)."""
import argparse
import json
import math
import statistics
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.profiler import ProfilerActivity, profile, record_function, schedule

BACKENDS = {"sdpa_math": SDPBackend.MATH, "sdpa_efficient": SDPBackend.EFFICIENT_ATTENTION,
            "sdpa_flash": SDPBackend.FLASH_ATTENTION, "sdpa_cudnn": SDPBackend.CUDNN_ATTENTION}
DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}


def forward(variant, q, k, v, mask, scale):
    if variant in ("naive", "naive_inplace"):
        scores = (q @ k.transpose(-2, -1)) * scale
        scores = scores.masked_fill_(mask, float("-inf")) if variant == "naive_inplace" else scores.masked_fill(mask, float("-inf"))
        return torch.softmax(scores, dim=-1) @ v
    with sdpa_kernel(BACKENDS[variant]):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=scale)


def synchronize(device):
    if device == "cuda":
        torch.cuda.synchronize()


def one_session(variant, q, k, v, mask, scale, device):
    """One profiling session as the study ran it; returns (launches, kernel us) per forward."""
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
    with profile(activities=activities, schedule=schedule(wait=1, warmup=1, active=3)) as prof:
        for step in range(5):
            with record_function(f"forward{step}"):
                forward(variant, q, k, v, mask, scale)
            synchronize(device)
            prof.step()
    if device == "cuda":
        kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    else:
        kernels = [e for e in prof.events() if e.name.startswith("forward")]
    total_us = sum(e.time_range.elapsed_us() for e in kernels)
    return len(kernels) / 3, total_us / 3


def noise_settled(history):
    """attnsweep's noise_converged: the last five looks within 5% of their mean."""
    if len(history) < 5:
        return False
    last = history[-5:]
    return max(last) - min(last) <= 0.05 * statistics.fmean(last)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--variants", default="naive,naive_inplace,sdpa_math,sdpa_efficient,sdpa_flash,sdpa_cudnn")
    p.add_argument("--shapes", default="8x16x1024x64")
    p.add_argument("--dtypes", default="bf16")
    p.add_argument("--target-noise", type=float, default=0.0,
                   help="repeat the profiling session until the relative stdev of its samples is at most this")
    p.add_argument("--min-sessions", type=int, default=3)
    p.add_argument("--max-sessions", type=int, default=100)
    p.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    a = p.parse_args()
    if a.device == "cuda" and not torch.cuda.is_available():
        sys.exit("study_like.py: no CUDA device (use --device cpu to try it on the CPU)")
    for shape_text in a.shapes.split(","):
        b, h, s, d = (int(x) for x in shape_text.split("x"))
        for dtype in a.dtypes.split(","):
            q, k, v = (torch.randn(b, h, s, d, device=a.device, dtype=DTYPES[dtype]) for _ in range(3))
            mask = torch.ones(s, s, dtype=torch.bool, device=a.device).triu(1)
            for variant in a.variants.split(","):
                row = {"variant": variant, "shape": shape_text, "dtype": dtype}
                try:
                    with torch.no_grad():
                        for _ in range(3):
                            forward(variant, q, k, v, mask, 1 / math.sqrt(d))
                        synchronize(a.device)
                        launches, kernel_us = one_session(variant, q, k, v, mask, 1 / math.sqrt(d), a.device)
                        samples, history, stop = [kernel_us], [], "one_session"
                        if a.target_noise > 0:
                            while True:
                                if len(samples) >= a.min_sessions:
                                    noise = statistics.stdev(samples) / statistics.fmean(samples)
                                    history.append(noise)
                                    if noise <= a.target_noise:
                                        stop = "target_noise"
                                        break
                                    if noise_settled(history):
                                        stop = "noise_converged"
                                        break
                                if len(samples) >= a.max_sessions:
                                    stop = "max_sessions"
                                    break
                                samples.append(one_session(variant, q, k, v, mask, 1 / math.sqrt(d), a.device)[1])
                    row.update(status="ok", launches_per_forward=launches, kernel_us_per_forward=statistics.median(samples),
                               sessions=len(samples), stop=stop,
                               rel_noise=statistics.stdev(samples) / statistics.fmean(samples) if len(samples) > 1 else None)
                except RuntimeError as error:
                    row.update(status="unsupported", reason=str(error).splitlines()[0])
                print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
