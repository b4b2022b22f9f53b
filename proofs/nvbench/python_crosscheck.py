#!/usr/bin/env python3
"""attnsweep's forward cases against PyTorch's own Python profiler and CUDA events, case by case.

    python_crosscheck.py RESULTS.db PYTHON.jsonl [--min-us 200] [--within 0.03]

PYTHON.jsonl is scripts/torch_reference.py's output for the same shapes, dtypes and mask, in the
same call on the same GPU (protocol v2 on both sides: L2 flushed, the stream held while the host
enqueues, CUDA events around one forward). For each case of the database's newest run:
  - the status: ok on both sides, or refused on both (unsupported);
  - the counts per forward: kernels, memcpy and memset, equal to torch.profiler's;
  - the median, for medians of at least --min-us microseconds: within --within of Python's.
Prints one markdown table and the totals; exits 1 when a status or a count differs (a timing miss
is reported, not failed: the medians of two processes on one GPU may differ by a few percent).
"""
import argparse
import os
import sqlite3
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
from python_reference import reference_rows  # noqa: E402
from results_db import open_read_only  # noqa: E402


def key_of(variant, dtype, batch, heads, seq_len, head_dim, head_dim_v=None):
    return (variant, dtype, int(batch), int(heads), int(seq_len), int(head_dim), int(head_dim_v or head_dim))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("db")
    p.add_argument("python_jsonl")
    p.add_argument("--min-us", type=float, default=200.0)
    p.add_argument("--within", type=float, default=0.03)
    a = p.parse_args()
    python = {key_of(r["variant"], r["dtype"], r["batch"], r["heads"], r["seq_len"], r["head_dim"], r.get("head_dim_v")): r
              for r in reference_rows(a.python_jsonl)}
    db = open_read_only(a.db)
    db.row_factory = sqlite3.Row
    run_id = db.execute("SELECT max(run_id) FROM runs").fetchone()[0]
    # the values' head dim: the results view's own from schema 15, head_dim before
    value_dim = "head_dim_v" if "head_dim_v" in {r[1] for r in db.execute("PRAGMA table_info(results)")} else "head_dim"
    cases = db.execute(
        f"SELECT variant, dtype, batch, heads, seq_len_q, head_dim, {value_dim} AS head_dim_v, status, kernels_per_forward, memcpy_per_forward,"
        " memset_per_forward, gpu_time_us_median FROM results WHERE run_id = ? AND pass = 'forward'"
        " ORDER BY plan_index", (run_id,)).fetchall()
    statuses = counts = timed = within = missing = 0
    print("| case | status (attnsweep / Python) | kernels, memcpy, memset (attnsweep / Python) "
          "| median us (attnsweep / Python) | diff |")
    print("|---|---|---|---|---|")
    for c in cases:
        key = key_of(c["variant"], c["dtype"], c["batch"], c["heads"], c["seq_len_q"], c["head_dim"], c["head_dim_v"])
        dims = c["head_dim"] if c["head_dim_v"] == c["head_dim"] else f"{c['head_dim']}/{c['head_dim_v']}"
        label = f"{c['variant']} {c['dtype']} {c['batch']}x{c['heads']}x{c['seq_len_q']}x{dims}"
        r = python.get(key)
        if r is None:
            missing += 1
            print(f"| {label} | {c['status']} / (no line) | | | |")
            continue
        status_ok = c["status"] == r["status"]
        statuses += status_ok
        ours = theirs = diff = median = ""
        if c["status"] == "ok" and r["status"] == "ok":
            ours = (c["kernels_per_forward"], c["memcpy_per_forward"], c["memset_per_forward"])
            theirs = (r["kernels"], r["memcpy"], r["memset"])
            counts += tuple(float(x) for x in ours) == tuple(float(x) for x in theirs)
            if c["gpu_time_us_median"] and r.get("median_us"):
                rel = c["gpu_time_us_median"] / r["median_us"] - 1
                median = f"{c['gpu_time_us_median']:.1f} / {r['median_us']:.1f}"
                diff = f"{100 * rel:+.1f}%"
                if c["gpu_time_us_median"] >= a.min_us:
                    timed += 1
                    within += abs(rel) <= a.within
        elif status_ok:
            counts += 1  # refused on both sides: nothing to count
        print(f"| {label} | {c['status']} / {r['status']} | {ours} / {theirs} | {median} | {diff} |")
    print()
    print(f"cases {len(cases)}; status equal {statuses}/{len(cases)}; counts equal {counts}/{len(cases)}; "
          f"medians >= {a.min_us:g} us within {100 * a.within:g}%: {within}/{timed}; without a Python line: {missing}")
    sys.exit(0 if statuses == len(cases) and counts == len(cases) and not missing else 1)


if __name__ == "__main__":
    main()
