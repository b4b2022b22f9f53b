#!/usr/bin/env python3
"""Validation of attnsweep's energy method (docs/measurement.md, "Energy"), independent of its C++.

NVML's energy counter (nvmlDeviceGetTotalEnergyConsumption, millijoules since the
driver loaded) advances in steps, so a difference over a short stretch is mostly
the rounding of the steps. attnsweep therefore starts a window on a step of the
counter, runs the pass back to back in chunks (synchronized between them, so that
the host's clock follows the GPU) until at least the window's wall time has gone
by, and ends on the first step after the last synchronize: energy per call =
dE / calls, power = dE / dt (dt: host time between the two steps). This script
does the same with Python, ctypes and torch, and prints JSON lines:

1. {"kind": "counter", ...}: the counter's step, read while the GPU idles and while
   it works (how often it advances and by how much).
2. {"kind": "steady", ...}: a steady kernel (a torch bf16 matmul of 4096x4096, in a
   loop) measured with windows of 50, 100, 200, 500 and 1000 ms (--windows), 5
   repeats each (--repeats), both step-aligned (attnsweep's method) and unaligned
   (the counter read just before and after the window, as a naive delta would);
   then {"kind": "steady_summary", ...} per window and method: the mean and the
   coefficient of variation of energy per call and of power. The window whose
   aligned CV is small enough is the one to use; NVML's own power reading
   (nvmlDeviceGetPowerUsage, averaged at each chunk) is printed beside it.
3. {"kind": "sdpa", ...}: cuDNN SDPA 1x32x8192x128 bf16 causal forward, energy per
   forward in a window of --sdpa-window-ms, in the burst regime (after --idle-s of
   idle GPU) and the sustained one (after --sustain-s of back-to-back forwards),
   --repeats each, alternating; then {"kind": "sdpa_summary", ...} per regime.

--device cpu is a dry run for CI: no NVML (the CPU has no energy counter; it says
so on the first line), a small fp32 matmul and SDPA on the CPU, and a simulated
counter of 100 W that steps every 10 ms, so that the method and the output are
exercised; exit 0. Run it on the GPU machine with the torch of attnsweep's build:
    python3 scripts/energy_check.py                 # about 90 s on an H200
    python3 scripts/energy_check.py --device cpu    # the dry run, a few seconds
"""
import argparse
import ctypes
import json
import math
import statistics
import sys
import time

NVML_SUCCESS = 0


class Nvml:
    """The four NVML calls this needs, through ctypes (libnvidia-ml.so.1)."""

    def __init__(self, index):
        self.lib = ctypes.CDLL("libnvidia-ml.so.1")
        check = self._check
        check(self.lib.nvmlInit_v2(), "nvmlInit_v2")
        self.handle = ctypes.c_void_p()
        check(self.lib.nvmlDeviceGetHandleByIndex_v2(ctypes.c_uint(index), ctypes.byref(self.handle)),
              "nvmlDeviceGetHandleByIndex_v2")
        self.has_power = hasattr(self.lib, "nvmlDeviceGetPowerUsage")

    @staticmethod
    def _check(status, call):
        if status != NVML_SUCCESS:
            raise RuntimeError(f"{call} failed with NVML status {status}")

    def energy_mj(self):
        value = ctypes.c_ulonglong()
        self._check(self.lib.nvmlDeviceGetTotalEnergyConsumption(self.handle, ctypes.byref(value)),
                    "nvmlDeviceGetTotalEnergyConsumption")
        return value.value

    def power_w(self):
        """NVML's power reading (a running average the driver keeps), or None."""
        if not self.has_power:
            return None
        value = ctypes.c_uint()
        if self.lib.nvmlDeviceGetPowerUsage(self.handle, ctypes.byref(value)) != NVML_SUCCESS:
            return None
        return value.value / 1000.0


class SimulatedCounter:
    """The dry run's counter: a steady `power_w` whose total is brought up to date every `step_s`."""

    def __init__(self, power_w=100.0, step_s=0.01, clock=time.monotonic):
        self.power_w, self.step_s, self.clock = power_w, step_s, clock
        self.start = clock()

    def energy_mj(self):
        steps = math.floor((self.clock() - self.start) / self.step_s)
        return 10**9 + round(steps * self.step_s * self.power_w * 1000)

    def power_w_reading(self):
        return self.power_w


def next_step(read, since, wait_max_s, poll_s=0.0005, clock=time.monotonic):
    """Reads the counter until it differs from `since`: (value, host time), or None after wait_max_s."""
    start = clock()
    while True:
        value = read()
        now = clock()
        if value != since:
            return value, now
        if now - start >= wait_max_s:
            return None
        time.sleep(poll_s)


def window_edge(read, aligned, wait_max_s, clock, where):
    """One end of a window, (counter mJ, host time): aligned, the counter's next step (RuntimeError when
    it does not step within wait_max_s; `where` is "before" or "after" the window); else a read now."""
    if not aligned:
        return read(), clock()
    step = next_step(read, read(), wait_max_s, clock=clock)
    if step is None:
        raise RuntimeError(f"the energy counter did not step within {wait_max_s * 1000:.0f} ms {where} the window")
    return step


def run_window(read, call, synchronize, window_s, aligned=True, chunk_s=0.02, wait_max_s=0.2, power=None,
               clock=time.monotonic):
    """One window of `call` back to back. aligned: from a step to the first step after the last
    synchronize (attnsweep's method); else from a read just before to a read just after.
    Returns a dict (energy_mj, calls, window_s, joules_per_call, power_w, nvml_power_w) or raises
    RuntimeError when the counter does not step."""
    synchronize()
    start_mj, start = window_edge(read, aligned, wait_max_s, clock, "before")
    calls, chunk, readings = 0, 1, []
    while True:
        for _ in range(chunk):
            call()
        synchronize()
        calls += chunk
        elapsed = clock() - start
        if power is not None:
            reading = power()
            if reading is not None:
                readings.append(reading)
        if elapsed >= window_s:
            break
        per_call = max(elapsed / calls, 1e-7)
        chunk = max(1, min(10**6, int(min(chunk_s, window_s - elapsed) / per_call)))
    end_mj, end = window_edge(read, aligned, wait_max_s, clock, "after")
    if end_mj < start_mj:
        raise RuntimeError(f"the energy counter went back ({start_mj} mJ, then {end_mj} mJ)")
    joules, seconds = (end_mj - start_mj) / 1000.0, end - start
    return {"energy_mj": end_mj - start_mj, "calls": calls, "window_s": seconds,
            "joules_per_call": joules / calls, "power_w": joules / seconds if seconds > 0 else None,
            "nvml_power_w": statistics.fmean(readings) if readings else None}


def coefficient_of_variation(values):
    """Sample standard deviation over the mean; None for fewer than two values or a zero mean."""
    values = [v for v in values if v is not None]
    if len(values) < 2:
        return None
    mean = statistics.fmean(values)
    return statistics.stdev(values) / mean if mean else None


def summarize(rows, key):
    values = [r[key] for r in rows if r.get(key) is not None]
    return {"mean": statistics.fmean(values) if values else None, "cv": coefficient_of_variation(values),
            "min": min(values) if values else None, "max": max(values) if values else None}


def counter_steps(read, seconds, clock=time.monotonic):
    """The counter's steps over `seconds`: the intervals between them (ms) and their sizes (mJ)."""
    intervals, sizes = [], []
    value, at = read(), clock()
    first = next_step(read, value, seconds, clock=clock)
    if first is None:
        return intervals, sizes
    value, at = first
    end = at + seconds
    while clock() < end:
        step = next_step(read, value, max(0.0, end - clock()), clock=clock)
        if step is None:
            break
        intervals.append(1000 * (step[1] - at))
        sizes.append(step[0] - value)
        value, at = step
    return intervals, sizes


def parse_windows(text):
    """'50,100,200' -> [50.0, 100.0, 200.0] (ms); ValueError on anything else."""
    try:
        windows = [float(t) for t in text.split(",") if t.strip()]
    except ValueError:
        raise ValueError(f"--windows {text!r}: expected milliseconds separated by commas, e.g. 50,100,200") from None
    if not windows or any(not (w > 0) or w > 60000 for w in windows):
        raise ValueError(f"--windows {text!r}: each window must be over 0 and at most 60000 ms")
    return windows


def build_parser():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", choices=["cuda", "cpu"], default="cuda",
                   help="cuda (NVML's counter) or cpu (a dry run with a simulated counter)")
    p.add_argument("--index", type=int, default=0, help="the GPU, by CUDA and NVML index (default 0)")
    p.add_argument("--windows", default=None, help="steady kernel windows, ms (default 50,100,200,500,1000; "
                   "cpu: 20,50)")
    p.add_argument("--repeats", type=int, default=None, help="windows of each length and regime (default 5; cpu: 2)")
    p.add_argument("--sdpa-window-ms", type=float, default=None, help="the SDPA window (default 500; cpu: 50)")
    p.add_argument("--idle-s", type=float, default=None, help="burst: idle seconds before a window (default 5; cpu: 0.2)")
    p.add_argument("--sustain-s", type=float, default=None,
                   help="sustained: seconds of back-to-back forwards before a window (default 5; cpu: 0.2)")
    p.add_argument("--counter-s", type=float, default=None, help="seconds to watch the counter step (default 2; cpu: 0.2)")
    p.add_argument("--skip-sdpa", action="store_true", help="only the counter and the steady kernel")
    return p


def parse_args(argv):
    p = build_parser()
    a = p.parse_args(argv)
    gpu = a.device == "cuda"
    try:
        a.windows = parse_windows(a.windows if a.windows is not None else ("50,100,200,500,1000" if gpu else "20,50"))
    except ValueError as error:
        p.error(str(error))
    defaults = {"repeats": (5, 2), "sdpa_window_ms": (500.0, 50.0), "idle_s": (5.0, 0.2), "sustain_s": (5.0, 0.2),
                "counter_s": (2.0, 0.2)}
    for name, (on_gpu, on_cpu) in defaults.items():
        if getattr(a, name) is None:
            setattr(a, name, on_gpu if gpu else on_cpu)
    if a.repeats < 1:
        p.error("--repeats must be at least 1")
    for name in ("sdpa_window_ms", "idle_s", "sustain_s", "counter_s"):
        if not (getattr(a, name) >= 0) or (name == "sdpa_window_ms" and not getattr(a, name) > 0):
            p.error(f"--{name.replace('_', '-')} must be {'over' if name == 'sdpa_window_ms' else 'at least'} 0")
    return a


def emit(row):
    print(json.dumps(row), flush=True)


def main(argv=None):
    a = parse_args(sys.argv[1:] if argv is None else argv)
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    gpu = a.device == "cuda"
    if gpu:
        if not torch.cuda.is_available():
            print("energy_check: no CUDA device; --device cpu makes a dry run", file=sys.stderr)
            return 2
        try:
            nvml = Nvml(a.index)
            nvml.energy_mj()
        except (OSError, RuntimeError) as error:
            print(f"energy_check: NVML's energy counter cannot be read ({error})", file=sys.stderr)
            return 2
        read, power = nvml.energy_mj, nvml.power_w
        device = torch.device("cuda", a.index)
        torch.cuda.set_device(device)
        synchronize = torch.cuda.synchronize
        emit({"kind": "device", "device": torch.cuda.get_device_name(device), "counter": "nvml",
              "torch": torch.__version__})
    else:
        counter = SimulatedCounter()
        read, power = counter.energy_mj, counter.power_w_reading
        device = torch.device("cpu")
        synchronize = lambda: None  # noqa: E731: the CPU runs each call before it returns
        emit({"kind": "device", "device": "cpu", "counter": "simulated",
              "note": "no NVML on --device cpu: the CPU has no energy counter; a dry run with a simulated "
                      "counter of 100 W that steps every 10 ms"})

    # 1. The counter's step, idle and busy.
    intervals, sizes = counter_steps(read, a.counter_s)
    emit({"kind": "counter", "state": "idle", "steps": len(intervals),
          "step_ms_median": statistics.median(intervals) if intervals else None,
          "step_ms_min": min(intervals) if intervals else None, "step_ms_max": max(intervals) if intervals else None,
          "step_mj_median": statistics.median(sizes) if sizes else None})

    # 2. The steady kernel.
    size, dtype = (4096, torch.bfloat16) if gpu else (256, torch.float32)
    generator = torch.Generator(device).manual_seed(0)
    x = torch.randn(size, size, generator=generator, device=device).to(dtype)
    y = torch.randn(size, size, generator=generator, device=device).to(dtype)
    out = torch.empty(size, size, device=device, dtype=dtype)

    def matmul():
        torch.matmul(x, y, out=out)

    for _ in range(20):
        matmul()
    synchronize()
    if gpu:
        # The counter while the GPU works: matmuls queued for about --counter-s, watched meanwhile.
        start = time.monotonic()
        for _ in range(50):
            matmul()
        synchronize()
        per_call = (time.monotonic() - start) / 50
        for _ in range(int(a.counter_s / per_call)):
            matmul()
        intervals, sizes = counter_steps(read, 0.8 * a.counter_s)
        synchronize()
        emit({"kind": "counter", "state": "busy", "steps": len(intervals),
              "step_ms_median": statistics.median(intervals) if intervals else None,
              "step_ms_min": min(intervals) if intervals else None, "step_ms_max": max(intervals) if intervals else None,
              "step_mj_median": statistics.median(sizes) if sizes else None})
    flops_per_call = 2.0 * size**3
    rows = []
    for window_ms in a.windows:
        for repeat in range(a.repeats):
            for aligned in (True, False):
                r = run_window(read, matmul, synchronize, window_ms / 1000.0, aligned=aligned, power=power)
                row = {"kind": "steady", "kernel": f"matmul {size}x{size} {str(dtype).replace('torch.', '')}",
                       "window_ms": window_ms, "repeat": repeat, "method": "aligned" if aligned else "unaligned"}
                row.update(r)
                row["tflop_per_joule"] = flops_per_call / 1e12 / r["joules_per_call"] if r["joules_per_call"] else None
                rows.append(row)
                emit(row)
    for window_ms in a.windows:
        for method in ("aligned", "unaligned"):
            chosen = [r for r in rows if r["window_ms"] == window_ms and r["method"] == method]
            energy, watts = summarize(chosen, "joules_per_call"), summarize(chosen, "power_w")
            emit({"kind": "steady_summary", "window_ms": window_ms, "method": method, "repeats": len(chosen),
                  "joules_per_call_mean": energy["mean"], "joules_per_call_cv": energy["cv"],
                  "power_w_mean": watts["mean"], "power_w_cv": watts["cv"],
                  "nvml_power_w_mean": summarize(chosen, "nvml_power_w")["mean"]})
    del x, y, out

    if a.skip_sdpa:
        return 0
    # 3. cuDNN SDPA (on the CPU: the default backend), burst against sustained.
    shape = (1, 32, 8192, 128) if gpu else (1, 4, 256, 32)
    sdpa_dtype = torch.bfloat16 if gpu else torch.float32
    generator = torch.Generator(device).manual_seed(0)
    q, k, v = (torch.randn(*shape, generator=generator, device=device).to(sdpa_dtype) for _ in range(3))
    backends = [SDPBackend.CUDNN_ATTENTION] if gpu else [SDPBackend.MATH, SDPBackend.FLASH_ATTENTION]

    def forward():
        with sdpa_kernel(backends):
            F.scaled_dot_product_attention(q, k, v, is_causal=True)

    for _ in range(5):
        forward()
    synchronize()
    b, h, s, d = shape
    flops_per_forward = 4.0 * b * h * d * s * (s + 1) / 2  # attnsweep's attended-pairs convention, causal
    sdpa_rows = []
    for repeat in range(a.repeats):
        for regime in ("burst", "sustained"):
            if regime == "burst":
                synchronize()
                time.sleep(a.idle_s)
            else:
                end = time.monotonic() + a.sustain_s
                while time.monotonic() < end:
                    for _ in range(10):
                        forward()
                    synchronize()
            r = run_window(read, forward, synchronize, a.sdpa_window_ms / 1000.0, power=power)
            row = {"kind": "sdpa", "case": f"sdpa_cudnn {b}x{h}x{s}x{d} {str(sdpa_dtype).replace('torch.', '')} causal"
                   if gpu else f"sdpa (cpu) {b}x{h}x{s}x{d} float32 causal",
                   "regime": regime, "repeat": repeat, "window_ms": a.sdpa_window_ms}
            row.update(r)
            row["tflop_per_joule"] = flops_per_forward / 1e12 / r["joules_per_call"] if r["joules_per_call"] else None
            sdpa_rows.append(row)
            emit(row)
    for regime in ("burst", "sustained"):
        chosen = [r for r in sdpa_rows if r["regime"] == regime]
        energy, watts = summarize(chosen, "joules_per_call"), summarize(chosen, "power_w")
        emit({"kind": "sdpa_summary", "regime": regime, "repeats": len(chosen),
              "joules_per_forward_mean": energy["mean"], "joules_per_forward_cv": energy["cv"],
              "power_w_mean": watts["mean"], "power_w_cv": watts["cv"],
              "nvml_power_w_mean": summarize(chosen, "nvml_power_w")["mean"]})
    return 0


if __name__ == "__main__":
    sys.exit(main())
