#!/usr/bin/env python3
"""Markdown summary of the validity labels of a run (issue 24, docs/measurement.md "Validity").

   usage: validity_report.py RESULTS.db [RUN_ID]   (default: the latest run)

Prints: the labels (ok / suspect / none) and the reasons' codes with their counts;
the kernel/event ratio (profiler kernel time per pass over the event median) of
the timed CUDA cases with launch latency held out: min, median, max, and the
cases outside 0.9-1.1; the CUDA-graph checks (replays whose kernel count equals
the eager pass's, the largest relative difference of the replays' output per
dtype); and every suspect case with its reasons. Exit 2 when the database cannot
be read.
"""
import sqlite3
import statistics
import sys

from results_db import open_read_only


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        db = open_read_only(argv[1])
        run_id = int(argv[2]) if len(argv) > 2 else db.execute("SELECT max(run_id) FROM runs").fetchone()[0]
        cases = db.execute(
            "SELECT variant, batch || 'x' || heads || (CASE WHEN kv_heads != heads THEN '/' || kv_heads ELSE '' END)"
            " || 'x' || seq_len_q || (CASE WHEN seq_len_kv != seq_len_q THEN ':' || seq_len_kv ELSE '' END)"
            " || 'x' || head_dim, dtype, pass, status, validity, validity_reasons, gpu_time_us_median,"
            " kernel_time_us_per_forward, launch_latency_hidden, kernels_per_forward, graph_launches_per_replay,"
            " graph_output_rel_diff, graph_time_us_median, ifnull(memcpy_per_forward, 0) FROM cases WHERE run_id = ?"
            " ORDER BY plan_index",
            (run_id,)).fetchall()
        name = db.execute("SELECT name || ', ' || started_at || ', ' || ifnull(device_name, device) FROM runs"
                          " WHERE run_id = ?", (run_id,)).fetchone()[0]
    except (sqlite3.Error, TypeError, ValueError) as error:
        print(f"{argv[1]}: {error}", file=sys.stderr)
        return 2

    print(f"# Validity labels: run {run_id} ({name})\n")
    labels, codes = {}, {}
    for c in cases:
        labels[c[5] or "(none: not timed)"] = labels.get(c[5] or "(none: not timed)", 0) + 1
        for reason in (c[6] or "").split("; "):
            if reason:
                code = reason.split(":", 1)[0]
                codes[code] = codes.get(code, 0) + 1
    print("| label | cases |\n|---|---|")
    for label, n in sorted(labels.items()):
        print(f"| {label} | {n} |")
    if codes:
        print("\n| reason | cases |\n|---|---|")
        for code, n in sorted(codes.items(), key=lambda kv: -kv[1]):
            print(f"| {code} | {n} |")

    ratios = [(c[8] / c[7], c) for c in cases
              if c[4] == "ok" and c[7] and c[8] and c[9] == 1]
    if ratios:
        values = [r for r, _ in ratios]
        print(f"\nKernel time / event median over {len(values)} timed CUDA cases with launch latency held out: "
              f"min {min(values):.3f}, median {statistics.median(values):.3f}, max {max(values):.3f}.")
        outside = [(r, c) for r, c in ratios if r < 0.9 or r > 1.1]
        for r, c in sorted(outside, key=lambda rc: rc[0]):
            print(f"- {c[0]} {c[1]} {c[2]} {c[3]}: {r:.3f} (event {c[7]:.1f} us, kernels {c[8]:.1f} us, "
                  f"{c[10]} kernel(s); {c[5]})")

    graphs = [c for c in cases if c[4] == "ok" and c[11] is not None]
    if graphs:
        # Kernels and copies on both sides: a graph may run a device-to-device copy as a kernel.
        equal = sum(1 for c in graphs if c[11] == c[10] + c[14])
        print(f"\nCUDA-graph replays profiled: {len(graphs)}; kernels and copies equal to the eager pass's: {equal}.")
        for c in graphs:
            if c[11] != c[10] + c[14]:
                print(f"- {c[0]} {c[1]} {c[2]} {c[3]}: replay {c[11]}, eager {c[10] + c[14]}")
        by_dtype = {}
        for c in cases:
            if c[4] == "ok" and c[12] is not None:
                by_dtype[c[2]] = max(by_dtype.get(c[2], 0.0), c[12])
        if by_dtype:
            print("Largest relative difference of the replays' output from the eager output: " +
                  ", ".join(f"{d} {v:.2e}" for d, v in sorted(by_dtype.items())) + ".")

    suspect = [c for c in cases if c[5] == "suspect"]
    if suspect:
        print("\n| variant | shape | dtype | pass | reasons |\n|---|---|---|---|---|")
        for c in suspect:
            print(f"| {c[0]} | {c[1]} | {c[2]} | {c[3]} | {c[6]} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
