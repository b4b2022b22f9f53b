#!/usr/bin/env python3
"""Times an attnsweep config's cases through nvbench's Python bindings (cuda-bench), issue 35.

    nvbench_compare.py --config proofs/nvbench/nvbench_sweep.yaml --mode defaults|matched --out CASES.jsonl
                       [--nvbench-json RAW.json] [--budget-s SECONDS] [-- MORE NVBENCH ARGUMENTS]

The same torch calls as attnsweep's variants, from scripts/torch_reference.py (attention(),
the causal mask, the SDPA backend pins) on the same inputs (make_inputs: seeded randn, cast),
each case one state of one nvbench benchmark ("attention", string axes Variant, DType, Shape;
Variant varies fastest, as in attnsweep's plan). The launcher runs on nvbench's stream
(torch.cuda.ExternalStream over launch.get_stream()), so nvbench's cold measurement (L2 flush,
blocking kernel, CUDA events) times exactly those kernels. Modes:
  defaults   nvbench as it comes (stdrel: --max-noise 0.5 percent, --min-time 0.5 s, batch on);
  matched    --max-noise 2 --min-time 0.05: attnsweep's defaults (target_rel_stdev 0.02,
             min_gpu_seconds 0.05).
Both run with --devices 0 (attnsweep's device) and --json, all cases in this one process.

Before nvbench sees a case, one untimed forward on its stream: a case torch refuses (flash and
cuDNN in fp32: "No available kernel") is skipped through state.skip and recorded as skipped
with torch's reason, as attnsweep stores it unsupported; any other failure as error. With
--budget-s, cases that would start after that many seconds of this process are skipped
(status budget), so that a device call ends in time with what it has; after SIGINT or SIGTERM
the case being timed ends and the later ones are skipped (status stopped), and the lines are
still written.

Output: one JSON object per line. The first, {"record": "run", ...}: the mode, nvbench's
arguments, this process's wall time (script_wall_s, from its first line to the results read),
versions (cuda-bench, nvbench, cuda.bindings, torch, CUDA) and the GPU. Then one
{"record": "case", ...} per case in plan order: variant, shape, dtype, status (ok, skipped,
error, budget, stopped, no_result), reason, and for ok cases nvbench's cold GPU time in microseconds:
gpu_time_us (the median, or the mean where nvbench reports no median: gpu_time_center says
which), gpu_median_us, gpu_mean_us, noise_rel (nvbench's stdev/mean), samples, cold_walltime_s,
and batch_gpu_mean_us, batch_samples when nvbench ran its batch measurement.
"""
import time

STARTED = time.monotonic()  # before torch's import: the script's wall includes it, as a process's does

import argparse  # noqa: E402
import contextlib  # noqa: E402
import datetime  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import os  # noqa: E402
import signal  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402

import torch  # noqa: E402
import yaml  # noqa: E402
from torch.nn.attention import sdpa_kernel  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import torch_reference as reference  # noqa: E402

MODES = {
    "defaults": [],
    "matched": ["--max-noise", "2", "--min-time", "0.05"],
}
BENCHMARK = "attention"
STOP_SIGNAL = []  # the signal (SIGINT, SIGTERM) after which no case starts: the one timed ends, the lines are written
REFUSALS = ("No available kernel", "No viable backend")  # torch's words when no backend takes a case
SHAPE_AXES = ("batch", "heads", "seq_len", "head_dim")
# nvbench's summary tags (nvbench/detail/measure_cold.cu, measure_hot.cu): times in seconds, noise a fraction
COLD = "nv/cold/"
BATCH = "nv/batch/"


def read_sweep(path):
    """variants, dtypes, shapes (reference.Shape) and seed of the subset of attnsweep's config
    format this comparison uses: scalar shape axes in one mapping, a zip list or a list of
    mappings, a causal (top-left) mask; anything else is refused rather than planned otherwise."""
    with open(path) as config_file:
        config = yaml.safe_load(config_file)
    if config.get("causal", True) is not True or "window" in config or "exclude" in config:
        raise ValueError(f"{path}: this comparison plans causal: true without window or exclude rules only")
    if config.get("passes", ["forward"]) != ["forward"]:
        raise ValueError(f"{path}: this comparison times the forward pass only")
    blocks = config["shapes"] if isinstance(config["shapes"], list) else [config["shapes"]]
    shapes = []
    for block in blocks:
        rows = block.get("zip", [{}])
        common = {key: value for key, value in block.items() if key != "zip"}
        for row in rows:
            axes = {**common, **row}
            if set(axes) != set(SHAPE_AXES) or not all(isinstance(axes[key], int) for key in SHAPE_AXES):
                raise ValueError(f"{path}: each shape needs exactly {', '.join(SHAPE_AXES)} as single integers: {axes}")
            shape = reference.Shape(axes["batch"], axes["heads"], axes["heads"], axes["seq_len"], axes["head_dim"])
            if shape not in shapes:
                shapes.append(shape)
    variants = list(dict.fromkeys(config["variants"]))
    dtypes = list(dict.fromkeys(config["dtypes"]))
    unknown = [v for v in variants if v not in reference.VARIANTS] + [d for d in dtypes if d not in reference.DTYPES]
    if unknown:
        raise ValueError(f"{path}: unknown to scripts/torch_reference.py: {', '.join(unknown)}")
    return variants, dtypes, shapes, int(config.get("seed", 0))


class StreamCache:
    """torch's view (ExternalStream) of each nvbench stream, made once: a launcher that made
    one per call would add that to every launch of nvbench's batch measurement."""

    def __init__(self, device):
        self.device = torch.device("cuda", device)
        self.streams = {}

    def of(self, cuda_stream):
        address = cuda_stream.addressof()
        stream = self.streams.get(address)
        if stream is None:
            stream = self.streams[address] = torch.cuda.ExternalStream(address, device=self.device)
        return stream


def failure(error):
    """(status, reason) of a forward that raised: skipped where torch refuses the case."""
    lines = str(error).strip().splitlines()
    reason = lines[0] if lines else type(error).__name__
    if isinstance(error, torch.cuda.OutOfMemoryError):
        return "error", f"oom: {reason}"
    if any(words in str(error) for words in REFUSALS):
        return "skipped", reason
    return "error", f"{type(error).__name__}: {reason}"


def time_case(state, variant, shape, dtype, seed):
    """One case as one nvbench state: (status, reason). Its tensors are this function's, gone
    when it returns, so that the caller can hand their memory back before the next state."""
    device = state.get_device() or 0
    streams = StreamCache(device)
    scale = 1.0 / math.sqrt(shape.head_dim)
    pin = sdpa_kernel(reference.BACKENDS[variant]) if variant in reference.BACKENDS else contextlib.nullcontext()
    with torch.no_grad(), pin:
        try:  # one untimed forward on nvbench's stream: a refusal shows here, as in attnsweep's warm-up
            with torch.cuda.stream(streams.of(state.get_stream())):
                q, k, v = reference.make_inputs(shape, dtype, seed, f"cuda:{device}")
                mask = reference.causal_mask(q, k)
                reference.attention(variant, q, k, v, scale, True, mask)
            torch.cuda.synchronize()
        except RuntimeError as error:
            status, reason = failure(error)
            state.skip(f"{status}: {reason}")
            return status, reason

        def launcher(launch):
            with torch.cuda.stream(streams.of(launch.get_stream())):
                reference.attention(variant, q, k, v, scale, True, mask)

        state.exec(launcher)
    return "ok", ""


def make_benchmark(seed, budget_s, outcomes):
    """The nvbench benchmark function: one case per state. outcomes[(variant, shape, dtype)]
    gets each case's (status, reason) as decided here; nvbench's numbers come from its JSON."""

    def attention_case(state):
        variant, dtype = state.get_string("Variant"), state.get_string("DType")
        shape = reference.parse_shape(state.get_string("Shape"))
        key = (variant, reference.shape_text(shape), dtype)
        if budget_s and time.monotonic() - STARTED > budget_s:
            outcomes[key] = ("budget", f"not started: over this process's budget of {budget_s:g} s")
        elif STOP_SIGNAL:
            outcomes[key] = ("stopped", f"not started: {STOP_SIGNAL[0]} received")
        if key in outcomes:
            state.skip(outcomes[key][1])
            return
        try:
            outcomes[key] = time_case(state, variant, shape, dtype, seed)
        except Exception as error:  # nvbench skips the state with its own message; keep ours too
            outcomes[key] = failure(error)
            raise
        finally:
            # Outside every timed interval: the next state has a new stream, and blocks cached
            # for this one would otherwise be freed (a synchronizing cudaFree) inside a launch.
            torch.cuda.synchronize()
            torch.cuda.empty_cache()

    return attention_case


def summary_value(summaries, tag):
    summary = summaries.get(tag)
    return None if summary is None else summary.value


def case_line(variant, shape, dtype, outcome, state):
    """The JSON object of one case from its outcome here (None: its state never reached this
    script's function) and its nvbench state (None: nvbench's JSON has none)."""
    line = {"record": "case", "variant": variant, "shape": reference.shape_text(shape), "dtype": dtype,
            "batch": shape.batch, "heads": shape.heads, "seq_len": shape.seq_len, "head_dim": shape.head_dim,
            "causal": True}
    if outcome is None:  # nvbench skipped it before this script's function ran, or wrote no JSON
        stopped = state is not None and state.is_skipped
        status, reason = ("stopped", state.skip_reason or "") if stopped else ("no_result", "not run")
    else:
        status, reason = outcome
        if status == "ok" and state is None:
            status, reason = "no_result", "nvbench's JSON has no state for this case"
        elif status == "ok" and state.is_skipped:
            status, reason = "error", state.skip_reason or "skipped by nvbench"
    line.update(status=status, reason=reason)
    if status != "ok":
        return line
    s = state.summaries
    median, mean = summary_value(s, COLD + "time/gpu/median"), summary_value(s, COLD + "time/gpu/mean")
    center = median if median is not None else mean
    line.update(
        gpu_time_us=None if center is None else center * 1e6,
        gpu_time_center="median" if median is not None else "mean",
        gpu_median_us=None if median is None else median * 1e6,
        gpu_mean_us=None if mean is None else mean * 1e6,
        noise_rel=summary_value(s, COLD + "time/gpu/stdev/relative"),
        samples=summary_value(s, COLD + "sample_size"),
        cold_walltime_s=summary_value(s, COLD + "walltime"))
    batch_mean = summary_value(s, BATCH + "time/gpu/mean")
    if batch_mean is not None:
        line.update(batch_gpu_mean_us=batch_mean * 1e6, batch_samples=summary_value(s, BATCH + "sample_size"))
    return line


def read_nvbench_json(json_path):
    """{(variant, shape text, dtype): SubBenchmarkState} of nvbench's JSON, read with cuda-bench's
    own reader, and the file's "meta" (argv, nvbench's version); ({}, {}) when nvbench wrote
    none (it writes the file once, after every state has run)."""
    from cuda.bench.results import BenchmarkResult

    if not os.path.exists(json_path) or os.path.getsize(json_path) == 0:
        return {}, {}
    with open(json_path) as raw:
        meta = json.load(raw).get("meta") or {}
    result = BenchmarkResult.from_json(json_path)
    states = {}
    if BENCHMARK in result:
        for state in result[BENCHMARK]:
            point = state.point
            states[(point.get("Variant"), point.get("Shape"), point.get("DType"))] = state
    return states, meta


def version_of(package):
    try:
        from importlib.metadata import version
        return version(package)
    except Exception:  # an unknown package is a missing fact, not a failed comparison
        return None


def run_line(mode, nvbench_args, meta):
    return {"record": "run", "mode": mode, "nvbench_args": nvbench_args,
            "script_wall_s": time.monotonic() - STARTED,
            "finished_at": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "cuda_bench_version": version_of("cuda-bench"),
            "nvbench_version": ((meta.get("version") or {}).get("nvbench") or {}).get("string"),
            "cuda_bindings_version": version_of("cuda-bindings"), "torch_version": torch.__version__,
            "torch_cuda_version": torch.version.cuda, "gpu": torch.cuda.get_device_name(0),
            "python": sys.version.split()[0]}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", required=True, help="the attnsweep config whose cases to time")
    parser.add_argument("--mode", choices=sorted(MODES), required=True)
    parser.add_argument("--out", required=True, help="the JSON-lines file to write")
    parser.add_argument("--nvbench-json", help="where nvbench writes its own JSON (default: a temporary file)")
    parser.add_argument("--budget-s", type=float, default=0.0,
                        help="start no case after this many seconds of this process (0: no limit)")
    parser.add_argument("extra", nargs="*", help="after --: more nvbench arguments, e.g. -- --timeout 5")
    a = parser.parse_args(argv)
    try:
        variants, dtypes, shapes, seed = read_sweep(a.config)
    except (OSError, KeyError, TypeError, ValueError, yaml.YAMLError) as error:
        parser.error(f"{a.config}: {error}")
    if not torch.cuda.is_available():
        sys.exit("nvbench_compare.py needs a CUDA device")
    import cuda.bench as bench  # after the checks: it loads nvbench's CUDA extension

    torch.set_grad_enabled(False)
    for stop in (signal.SIGINT, signal.SIGTERM):
        signal.signal(stop, lambda number, _frame: STOP_SIGNAL.append(signal.Signals(number).name))
    scratch = tempfile.TemporaryDirectory()
    raw_json = a.nvbench_json or os.path.join(scratch.name, "nvbench.json")
    if os.path.exists(raw_json):
        os.remove(raw_json)  # a file left by an earlier run must not pass for this one's
    outcomes = {}
    benchmark = bench.register(make_benchmark(seed, a.budget_s, outcomes))
    benchmark.set_name(BENCHMARK)
    benchmark.add_string_axis("Variant", variants)
    benchmark.add_string_axis("DType", dtypes)
    benchmark.add_string_axis("Shape", [reference.shape_text(shape) for shape in shapes])
    nvbench_args = MODES[a.mode] + ["--devices", "0", "--json", raw_json] + a.extra
    print(f"nvbench_compare: {a.mode}: {len(variants) * len(dtypes) * len(shapes)} cases, nvbench "
          f"{' '.join(nvbench_args)}", file=sys.stderr, flush=True)
    nvbench_failed = False
    try:
        bench.run_all_benchmarks([sys.argv[0]] + nvbench_args)
    except Exception as error:  # nvbench's own failure: the lines still say which cases have no result
        print(f"nvbench_compare: run_all_benchmarks raised {type(error).__name__}: {error}", file=sys.stderr)
        nvbench_failed = True
    states, meta = read_nvbench_json(raw_json)
    with open(a.out, "w") as out:
        out.write(json.dumps(run_line(a.mode, nvbench_args, meta)) + "\n")
        for shape in shapes:
            for dtype in dtypes:
                for variant in variants:
                    key = (variant, reference.shape_text(shape), dtype)
                    out.write(json.dumps(case_line(variant, shape, dtype, outcomes.get(key), states.get(key))) + "\n")
    ran = sum(1 for status, _ in outcomes.values() if status == "ok")
    print(f"nvbench_compare: {a.mode}: {ran} cases timed, {len(outcomes) - ran} not, "
          f"{time.monotonic() - STARTED:.1f} s", file=sys.stderr)
    sys.exit(1 if nvbench_failed else 0)


if __name__ == "__main__":
    main()
