#!/usr/bin/env python3
"""Markdown report of the multi-GPU benchmark (docs/benchmarks.md, "Several GPUs"):
the same sweep on one GPU and with --gpus 0,1, compared case by case, and the
study shape's cases checked against PyTorch's Python profiler and CUDA events
on the GPU that measured them.
usage: scale_out_report.py ONE.db ONE_SECONDS TWO.db TWO_SECONDS MACHINE.txt
       [--python cuda:0=PY0.jsonl cuda:1=PY1.jsonl] [--merged MERGED.db SECONDS]"""
import json
import os
import sqlite3
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
from results_db import open_read_only  # noqa: E402

KEY = "variant, batch, heads, kv_heads, seq_len_q, seq_len_kv, head_dim, dtype, causal"


def cases(path):
    db = open_read_only(path)
    db.row_factory = sqlite3.Row
    run = db.execute("SELECT * FROM runs ORDER BY run_id DESC LIMIT 1").fetchone()
    rows = db.execute(f"SELECT {KEY}, status, device, gpu_uuid, kernels_per_forward, memcpy_per_forward, "
                      "memset_per_forward, COALESCE(gpu_time_us_median, cpu_time_us_median) AS gpu_time_us_median, sdpa_backend, shard_index, "
                      "sm_clock_mhz_mean FROM cases WHERE run_id = ?",
                      (run["run_id"],)).fetchall()
    return run, {tuple(r[k] for k in KEY.split(", ")): r for r in rows}, db


def fmt(value, spec):
    return "-" if value is None else format(value, spec)


def label(key):
    variant, b, h, kvh, sq, skv, d, dtype, causal = key
    return f"{variant} {b}x{h}x{sq}x{d} {dtype}"


def counts(row):
    return (row["kernels_per_forward"], row["memcpy_per_forward"], row["memset_per_forward"])


def compare(name, reference, other):
    """Kernel counts must be identical; medians of 200 us or more within 3%."""
    common = [k for k in reference if k in other]
    both_ok = [k for k in common if reference[k]["status"] == "ok" and other[k]["status"] == "ok"]
    count_diffs = [k for k in both_ok if counts(reference[k]) != counts(other[k])]
    status_diffs = [k for k in common if reference[k]["status"] != other[k]["status"]]
    long = [k for k in both_ok if reference[k]["gpu_time_us_median"] >= 200]
    diffs = sorted(((other[k]["gpu_time_us_median"] / reference[k]["gpu_time_us_median"] - 1) * 100, k) for k in long)
    beyond = [(d, k) for d, k in diffs if abs(d) > 3]
    # A case run at another SM clock (the power cap, reached after sustained load,
    # lowers it) is not like for like: named, but not held against the split.
    def clock_differs(k):
        a, b = reference[k]["sm_clock_mhz_mean"], other[k]["sm_clock_mhz_mean"]
        return a is not None and b is not None and abs(a - b) > 0.02 * max(a, b)
    at_another_clock = [(d, k) for d, k in beyond if clock_differs(k)]
    print(f"- **{name} against one GPU:** {len(common)} of {len(reference)} cases in both "
          f"({len(set(other) - set(reference))} only in {name}); status differs in {len(status_diffs)}; "
          f"kernel, memcpy and memset counts per forward identical in {len(both_ok) - len(count_diffs)} of "
          f"{len(both_ok)} ok cases.")
    if diffs:
        mean_abs = sum(abs(d) for d, _ in diffs) / len(diffs)
        print(f"  Medians of the {len(long)} cases of 200 us or more: within 3% in {len(long) - len(beyond)}; "
              f"difference from {diffs[0][0]:+.2f}% to {diffs[-1][0]:+.2f}%, mean |difference| {mean_abs:.2f}%.")
    if beyond:
        print(f"  Of the {len(beyond)} beyond 3%, {len(at_another_clock)} ran at SM clocks more than 2% apart "
              "(the power cap; docs/benchmarks.md):")
    for d, k in beyond:
        print(f"  - beyond 3%: {label(k)}: {reference[k]['gpu_time_us_median']:.1f} vs "
              f"{other[k]['gpu_time_us_median']:.1f} us ({d:+.2f}%) on {other[k]['device']}, SM clock "
              f"{fmt(reference[k]['sm_clock_mhz_mean'], '.0f')} vs {fmt(other[k]['sm_clock_mhz_mean'], '.0f')} MHz")
    for k in count_diffs:
        print(f"  - counts differ: {label(k)}: {counts(reference[k])} vs {counts(other[k])}")
    for k in status_diffs:
        print(f"  - status differs: {label(k)}: {reference[k]['status']} vs {other[k]['status']}")
    return len(count_diffs) == 0 and len(beyond) == len(at_another_clock) and len(status_diffs) == 0


def main():
    args = sys.argv[1:]
    one_path, one_s, two_path, two_s, machine_path = args[:5]
    one_s, two_s = float(one_s), float(two_s)
    python, merged = {}, None
    rest = args[5:]
    while rest:
        if rest[0] == "--python":
            rest = rest[1:]
            while rest and "=" in rest[0]:
                device, path = rest[0].split("=", 1)
                python[device] = {}
                for line in open(path):
                    if line.strip():
                        row = json.loads(line)
                        python[device][row["variant"]] = row
                rest = rest[1:]
        elif rest[0] == "--merged":
            merged = (rest[1], float(rest[2]))
            rest = rest[3:]
        else:
            sys.exit(f"unknown argument {rest[0]}")
    one_run, one, _ = cases(one_path)
    two_run, two, two_db = cases(two_path)
    print(f"# One GPU against two: {one_run['device_name']}\n")
    print("```\n" + open(machine_path).read().strip() + "\n```\n")
    print(f"Config {one_run['config_path']} (sha256 {one_run['config_sha256'][:12]}), {len(one)} cases; torch "
          f"{one_run['torch_version']}, CUDA {one_run['cuda_version']}, cuDNN {one_run['cudnn_version']}, driver "
          f"{one_run['driver_version']}, attnsweep {one_run['attnsweep_version']} ({one_run['git_sha']}).\n")
    ratio = two_s / one_s
    pool = two_run["gpus"]
    print(f"- **Wall time:** one GPU (`run --gpus 0`) {one_s:.1f} s; `run --gpus` on {pool} "
          f"(one worker process per GPU) {two_s:.1f} s: **{ratio:.3f}x** (target with two GPUs: at most 0.55x).")
    per_device = two_db.execute("SELECT device, gpu_uuid, count(*), sum(wall_seconds) FROM cases WHERE run_id = ? "
                                "GROUP BY device, gpu_uuid ORDER BY device", (two_run["run_id"],)).fetchall()
    print("- **Cases per GPU in the --gpus run:** " + "; ".join(
        f"{d} ({u}): {n} cases, {w:.1f} s of case wall time" for d, u, n, w in per_device) + ".")
    devices = two_db.execute("SELECT device, gpu_uuid, ceiling_bf16_tflops, ceiling_copy_gbps FROM run_devices "
                             "WHERE run_id = ? ORDER BY device", (two_run["run_id"],)).fetchall()
    print("- **Ceilings per GPU (run_devices):** " + "; ".join(
        f"{d}: bf16 matmul {fmt(t, '.0f')} TFLOP/s, copy {fmt(c, '.0f')} GB/s" for d, u, t, c in devices) +
          f"; the one-GPU run measured {fmt(one_run['ceiling_bf16_tflops'], '.0f')} TFLOP/s and "
          f"{fmt(one_run['ceiling_copy_gbps'], '.0f')} GB/s.")
    ok = compare("--gpus", one, two)
    if merged:
        merged_run, merged_cases, _ = cases(merged[0])
        print(f"- **Two shards merged:** {merged[1]:.1f} s for both shards (run --shard K/2, with "
              f"CUDA_VISIBLE_DEVICES=K at the same time on two GPUs, one after the other on one); merged run "
              f"status {merged_run['status']}, {len(merged_cases)} cases.")
        ok = compare("the merged shards", one, merged_cases) and ok
    if python:
        print("\n## The study shape against PyTorch's Python profiler and CUDA events, on the GPU that measured it\n")
        print("| variant | GPU | kernels | memcpy | memset | py kernels | py memcpy | py memset | median us "
              "| py median us | diff % |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        for key, row in sorted(two.items()):
            variant, b, h, kvh, sq, skv, d, dtype, causal = key
            if (b, h, sq, d, dtype) != (8, 16, 1024, 64, "bf16") or row["status"] != "ok":
                continue
            p = python.get(row["device"], {}).get(variant)
            if not p:
                continue
            diff = 100 * (row["gpu_time_us_median"] - p["median_us"]) / p["median_us"]
            same = counts(row) == (p["kernels"], p["memcpy"], p["memset"])
            ok = ok and same
            print(f"| {variant} | {row['device']} | {row['kernels_per_forward']} | {row['memcpy_per_forward']} "
                  f"| {row['memset_per_forward']} | {p['kernels']:g} | {p['memcpy']:g} | {p['memset']:g} "
                  f"| {row['gpu_time_us_median']:.1f} | {p['median_us']:.1f} | {diff:+.1f} |")
    two_gpus = len(devices) >= 2
    verdict = ("PASS" if ok and ratio <= 0.55 else "FAIL") if two_gpus else ("consistent" if ok else "INCONSISTENT")
    print(f"\nVerdict: {verdict} (ratio {ratio:.3f}, {len(devices)} GPU(s) in the --gpus run).")


if __name__ == "__main__":
    main()
