#!/usr/bin/env python3
"""Host cost of the pieces of one timing sample on the GPU (docs/benchmarks.md,
sweep cost): each piece repeated 500 times, median microseconds. Python adds a
microsecond or two per call; the point is which piece dominates."""
import statistics
import time

import pynvml
import torch


def median_us(fn, repeats=500):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e6)
    return statistics.median(times)


def main():
    torch.cuda.init()
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    flush = torch.empty(2 * l2, dtype=torch.uint8, device="cuda")
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    pynvml.nvmlInit()
    handle = pynvml.nvmlDeviceGetHandleByIndex(0)
    torch.cuda.synchronize()
    pieces = {
        "synchronize an idle stream": torch.cuda.synchronize,
        "flush 2x L2 (memset) and wait": lambda: (flush.zero_(), torch.cuda.synchronize()),
        "empty event pair and wait": lambda: (start.record(), stop.record(), stop.synchronize()),
        "NVML SM clock read": lambda: pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM),
        "torch.cuda._sleep(1000) and wait": lambda: (torch.cuda._sleep(1000), torch.cuda.synchronize()),
    }
    for name, fn in pieces.items():
        print(f"{name}: {median_us(fn):.1f} us")


if __name__ == "__main__":
    main()
