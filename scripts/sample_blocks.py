#!/usr/bin/env python3
"""Are a case's CUDA-event times the same from one block of samples to the next? Python's answer.

   usage: sample_blocks.py RESULTS.db --plan-index N [N ...] [--blocks 8] [--samples 50]
                           [--fa3 NAME=PATH] [--reallocate] [--nvml] [--profile-first]
                           [--graph-first] [--gap-ms MS] [--protocol v2|v1] > blocks.md

The serving proof (scripts/serving_reference.py) compares attnsweep's median with 50 Python
samples taken in one block. Where a kernel's time moves between levels that last tens of
milliseconds, one block of 50 sees one level while attnsweep's 150-200 samples see several, and
the two medians differ although neither is wrong. This takes BLOCKS blocks of SAMPLES samples of
each named case (the same forward as serving_reference.py; by default its protocol v2: an L2
flush, the stream held by torch.cuda._sleep for about 1 ms, CUDA events), prints each block's
median and the median over all samples, next to attnsweep's median.
--reallocate copies q, k, v (and the packed/paged tensors) to new memory before each block, to
tell a level that follows the inputs' addresses from one that does not.
--nvml reads the SM clock and the clock-event reasons from NVML after each sample, as attnsweep's
timer does (runner/measure/timer.cpp), to tell whether those reads move the kernel; it also adds a
column of each block's average power from NVML's energy counter (which steps about every 100 ms:
for blocks much shorter than that the figure is 0 or a spike, not a measurement).
--profile-first runs torch.profiler over 3 forwards, --graph-first captures the forward in a CUDA
graph and replays it 3 times, before the first block: what attnsweep does before its samples.
--gap-ms leaves the GPU idle for MS milliseconds (host sleep) after each sample.
--protocol v1 takes samples with no flush and no hold: the GPU is busy with the kernel most of the
time, but the event interval then includes the host's enqueue of the forward.
Exit 2 when the database, a plan index or an option cannot be used.
"""
import argparse
import ctypes
import os
import sqlite3
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import energy_check  # noqa: E402
import serving_reference as ref  # noqa: E402
from torch_reference import DTYPES  # noqa: E402


class Nvml(energy_check.Nvml):
    """energy_check's NVML through ctypes, plus the two reads attnsweep's timer makes after every sample."""

    def read(self):
        clock, reasons = ctypes.c_uint(), ctypes.c_ulonglong()
        self.lib.nvmlDeviceGetClockInfo(self.handle, 1, ctypes.byref(clock))  # NVML_CLOCK_SM
        self.lib.nvmlDeviceGetCurrentClocksEventReasons(self.handle, ctypes.byref(reasons))
        return clock.value, reasons.value

    def energy_or_none(self):
        """The energy counter (mJ), or None where this GPU has none."""
        try:
            return self.energy_mj()
        except RuntimeError:
            return None


def block_times(fn, samples, nvml=None, gap_ms=0.0, protocol="v2"):
    """SAMPLES CUDA-event times (us) of fn, one block; NVML read after each when given, then GAP_MS
    of idle."""
    times = []
    for _ in range(samples):
        times.append(ref.cuda_event_median(fn, 1, protocol))
        if nvml is not None:
            nvml.read()
        if gap_ms:
            time.sleep(gap_ms / 1000.0)
    return times


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("db")
    p.add_argument("--plan-index", type=int, nargs="+", required=True)
    p.add_argument("--run", type=int)
    p.add_argument("--blocks", type=int, default=8)
    p.add_argument("--samples", type=int, default=50)
    p.add_argument("--fa3", metavar="NAME=PATH")
    p.add_argument("--reallocate", action="store_true")
    p.add_argument("--nvml", action="store_true")
    p.add_argument("--profile-first", action="store_true")
    p.add_argument("--graph-first", action="store_true")
    p.add_argument("--gap-ms", type=float, default=0.0)
    p.add_argument("--protocol", choices=("v2", "v1"), default="v2")
    a = p.parse_args()
    if a.blocks < 1 or a.samples < 1 or a.gap_ms < 0:
        p.error("--blocks and --samples must be 1 or more, --gap-ms 0 or more")
    try:
        db, run, seed = ref.open_run(a.db, a.run)
        cases = {c["plan_index"]: c for c in ref.read_cases(db, run) if c["pass"] == "forward"}
    except (sqlite3.Error, ValueError) as error:
        print(f"error: {a.db}: {error}", file=sys.stderr)
        return 2
    missing = [i for i in a.plan_index if i not in cases or cases[i]["status"] != "ok"]
    if missing:
        print(f"error: {a.db}: no ok forward case with plan index {missing[0]} in run {run}", file=sys.stderr)
        return 2
    try:
        nvml = Nvml(0) if a.nvml else None
    except (OSError, RuntimeError) as error:
        print(f"error: --nvml: {error}", file=sys.stderr)
        return 2
    if a.fa3:
        try:
            name, path = ref.parse_op_library(a.fa3)
            ref.OP_LIBRARIES[name] = ref.load_fa3(path)
        except (OSError, RuntimeError, ValueError) as error:
            print(f"error: --fa3: {str(error).splitlines()[0]}", file=sys.stderr)
            return 2
    print(f"# Blocks of samples: {a.blocks} x {a.samples}, protocol {a.protocol}, torch {torch.__version__}, "
          f"{torch.cuda.get_device_name(0)}{', inputs reallocated before each block' if a.reallocate else ''}"
          f"{', NVML read after each sample' if a.nvml else ''}"
          f"{', profiled first' if a.profile_first else ''}{', graph captured first' if a.graph_first else ''}"
          f"{f', {a.gap_ms:g} ms idle after each sample' if a.gap_ms else ''}\n")
    power = " block power W (see --nvml) |" if a.nvml else ""
    print("| # | variant | shape | attnsweep median us | block medians us (Python) | all-sample median | ratio |" + power)
    print("|---|---|---|---|---|---|---|" + ("---|" if a.nvml else ""))
    for index in a.plan_index:
        case = cases[index]
        q, k, v = ref.make_inputs(case["batch"], case["heads"], case["kv_heads"], case["seq_len_q"],
                                  case["seq_len_kv"], case["head_dim"], DTYPES[case["dtype"]], seed)
        scale = case["head_dim"] ** -0.5
        medians, everything, watts = [], [], []
        with torch.no_grad():
            for _ in range(a.blocks):
                if a.reallocate or not medians:
                    q, k, v = q.clone(), k.clone(), v.clone()
                    fn, _, _ = ref.plan_forward(case, q, k, v, scale, seed)
                    for _ in range(3):
                        fn()
                    if a.profile_first and not medians:
                        ref.profile_counts(fn, 3)
                    if a.graph_first and not medians:
                        graph = torch.cuda.CUDAGraph()
                        side = torch.cuda.Stream()
                        side.wait_stream(torch.cuda.current_stream())
                        with torch.cuda.stream(side):
                            fn()
                        torch.cuda.current_stream().wait_stream(side)
                        with torch.cuda.graph(graph):
                            fn()
                        for _ in range(3):
                            graph.replay()
                        torch.cuda.synchronize()
                energy, began = nvml.energy_or_none() if nvml else None, time.perf_counter()
                times = block_times(fn, a.samples, nvml, a.gap_ms, a.protocol)
                after = nvml.energy_or_none() if energy is not None else None
                if after is not None:
                    watts.append((after - energy) / 1000.0 / (time.perf_counter() - began))
                medians.append(statistics.median(times))
                everything += times
        overall = statistics.median(everything)
        print(f"| {index} | {case['variant']} | {ref.shape_label(case)} | {case['gpu_time_us_median']:.1f} |"
              f" {', '.join(f'{m:.1f}' for m in medians)} | {overall:.1f} |"
              f" {case['gpu_time_us_median'] / overall:.3f} |"
              + (f" {', '.join(f'{w:.0f}' for w in watts)} |" if a.nvml else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
