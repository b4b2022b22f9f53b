#!/usr/bin/env python3
"""The straightforward way, as the study measured one case: a Python script
that, per case, builds inputs, runs 3 warm-up forwards, then torch.profiler
with schedule(wait=1, warmup=1, active=3) over 5 steps, each forward under
record_function, and reads kernel counts and the mean kernel time per forward
from the profile. Used by bench/run_benchmarks.sh as the baseline for sweep
cost. Prints one JSON object per case."""
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


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--variants", default="naive,naive_inplace,sdpa_math,sdpa_efficient,sdpa_flash,sdpa_cudnn")
    p.add_argument("--shapes", default="8x16x1024x64")
    p.add_argument("--dtypes", default="bf16")
    a = p.parse_args()
    for shape_text in a.shapes.split(","):
        b, h, s, d = (int(x) for x in shape_text.split("x"))
        for dtype in a.dtypes.split(","):
            q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=DTYPES[dtype]) for _ in range(3))
            mask = torch.ones(s, s, dtype=torch.bool, device="cuda").triu(1)
            for variant in a.variants.split(","):
                row = {"variant": variant, "shape": shape_text, "dtype": dtype}
                try:
                    with torch.no_grad():
                        for _ in range(3):
                            forward(variant, q, k, v, mask, 1 / math.sqrt(d))
                        torch.cuda.synchronize()
                        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                                     schedule=schedule(wait=1, warmup=1, active=3)) as prof:
                            for step in range(5):
                                with record_function(f"forward{step}"):
                                    forward(variant, q, k, v, mask, 1 / math.sqrt(d))
                                torch.cuda.synchronize()
                                prof.step()
                    kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
                    total_us = sum(e.time_range.elapsed_us() for e in kernels)
                    row.update(status="ok", launches_per_forward=len(kernels) / 3, kernel_us_per_forward=total_us / 3)
                except RuntimeError as error:
                    row.update(status="unsupported", reason=str(error).splitlines()[0])
                print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
