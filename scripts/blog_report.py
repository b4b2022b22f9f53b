#!/usr/bin/env python3
"""Markdown report of the study sweep: attnsweep's numbers from its database next
to the independent Python measurement (scripts/torch_reference.py) from the
same call.   usage: blog_report.py RESULTS.db PYTHON.jsonl [MACHINE.txt]"""
import sqlite3
import sys

from python_reference import machine_text, reference_rows
from results_db import open_read_only


def fmt(value, spec):
    return format(value, spec) if value is not None else ""


def main():
    db_path, python_path = sys.argv[1], sys.argv[2]
    machine = machine_text(sys.argv, 3)
    python = {row["variant"]: row for row in reference_rows(python_path)}
    db = open_read_only(db_path)
    db.row_factory = sqlite3.Row
    run = db.execute("SELECT * FROM runs ORDER BY run_id DESC LIMIT 1").fetchone()
    cases = db.execute("SELECT * FROM cases WHERE run_id = ? ORDER BY plan_index", (run["run_id"],)).fetchall()

    print(f"# attnsweep on the study shape: {run['device_name']}\n")
    ceilings = ""
    if run["ceiling_bf16_tflops"]:
        ceilings = (f" Device ceilings measured by the run: bf16 matmul {run['ceiling_bf16_tflops']:.0f} TFLOP/s, "
                    f"copy {run['ceiling_copy_gbps']:.0f} GB/s.")
    print(f"Run {run['run_id']} '{run['name']}', {run['started_at']}; torch {run['torch_version']}, "
          f"CUDA {run['cuda_version']}, cuDNN {run['cudnn_version']}, driver {run['driver_version']}, "
          f"attnsweep {run['attnsweep_version']} ({run['git_sha']}).{ceilings}\n")
    if machine:
        print("```\n" + machine + "\n```\n")
    print("Shape: batch 8, heads 16, seq 1024, head_dim 64, bf16, causal.\n")
    print(f"attnsweep's timing protocol (runs.timing_protocol): {run['timing_protocol']}. "
          "Its stopping rule: target 2% relative stdev after at least 50 samples (configs/blog.yaml).\n")
    print("Python (scripts/torch_reference.py, same call, same GPU, bit-identical inputs): protocol "
          "v2, the same steps with Python's means: a memset of 2x the L2 size, torch.cuda._sleep holding the "
          "stream while Python enqueues, CUDA events around one forward, 200 samples, median; pinned backends "
          "entered once outside the timed forward. 'profiler device us': the sum of kernel, memcpy and memset "
          "durations per forward in the profiler (no host gaps). Counts: attnsweep attributes Kineto events to "
          "each labelled forward from C++; Python counts `kernel`, `gpu_memcpy`, `gpu_memset` events in "
          "torch.profiler's exported Chrome trace, divided by the forwards.\n")
    print("| variant | status | backend | kernels | memcpy | memset | py kernels | py memcpy | py memset "
          "| median us | py median us | diff % | profiler device us | py profiler device us "
          "| graph replay us | SM clock MHz | TFLOP/s | host dispatch us | rel error | py rel error |")
    print("|" + "---|" * 20)
    for c in cases:
        p = python.get(c["variant"], {})
        if c["status"] != "ok":
            print(f"| {c['variant']} | {c['status']} |" + " |" * 18)
            continue
        median, py_median = c["gpu_time_us_median"], p.get("median_us")
        diff = f"{100 * (median - py_median) / py_median:+.1f}" if py_median else ""
        print(f"| {c['variant']} | {c['status']} | {c['sdpa_backend'] or ''} | {c['kernels_per_forward']} "
              f"| {c['memcpy_per_forward']} | {c['memset_per_forward']} | {fmt(p.get('kernels'), 'g')} "
              f"| {fmt(p.get('memcpy'), 'g')} | {fmt(p.get('memset'), 'g')} | {median:.1f} | {fmt(py_median, '.1f')} "
              f"| {diff} | {c['kernel_time_us_per_forward']:.1f} | {fmt(p.get('device_us'), '.1f')} "
              f"| {fmt(c['graph_time_us_median'], '.1f')} | {fmt(c['sm_clock_mhz_mean'], '.0f')} | {c['tflops']:.1f} | {c['cpu_dispatch_us_median']:.1f} | {c['rel_error']:.2e} "
              f"| {fmt(p.get('rel_error'), '.2e')} |")
    print("\n## Kernels per forward (attnsweep `kernels` table)\n")
    print("| variant | kind | name | launches | total us | mean us | grid | block | registers | shared memory | est. occupancy % |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for c in cases:
        for k in db.execute("SELECT * FROM kernels WHERE case_id = ? ORDER BY total_us DESC", (c["case_id"],)):
            meta = [k["grid"], k["block"], k["registers_per_thread"], k["shared_memory_bytes"], k["est_occupancy_pct"]]
            print(f"| {c['variant']} | {k['kind']} | `{k['name'][:90]}` | {k['launches_per_forward']:g} "
                  f"| {k['total_us']:.1f} | {k['mean_us']:.1f} | " + " | ".join("" if m is None else str(m) for m in meta) + " |")
    print("\n## Host time per forward (attnsweep `ops` table, top 3 by self CPU time)\n")
    print("| variant | kind | name | calls | self CPU us | total CPU us |")
    print("|---|---|---|---|---|---|")
    for c in cases:
        for o in db.execute("SELECT * FROM ops WHERE case_id = ? ORDER BY self_cpu_us DESC LIMIT 3", (c["case_id"],)):
            print(f"| {c['variant']} | {o['kind']} | `{o['name'][:60]}` | {o['calls_per_forward']:g} "
                  f"| {o['self_cpu_us']:.1f} | {o['total_cpu_us']:.1f} |")


if __name__ == "__main__":
    main()
