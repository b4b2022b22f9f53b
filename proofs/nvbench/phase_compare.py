#!/usr/bin/env python3
"""Two attnsweep runs of one config side by side, phase by phase (issue 35): where the time went.

    phase_compare.py LABEL=RESULTS.db LABEL=RESULTS.db [--walls LABEL=SECONDS ...]

For each database's newest run: the process wall (when given), each phase of the cases summed
(cases.*_seconds), the samples of each mode with the GPU time they held, and how the graph replays
stopped (cases.graph_stop_reason, schema 14; "-" for an older database). Then the cases both timed,
case by case: the eager and the graph medians of the second against the first (a change of the
stopping rule must not move them beyond their noise), as the median and the largest difference.
"""
import argparse
import os
import sqlite3
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
from results_db import open_read_only  # noqa: E402

PHASES = ("setup", "accuracy", "warmup", "timing", "graph", "profile", "cooldown")
KEY = "variant, dtype, batch, heads, seq_len_q, seq_len_kv, head_dim, mask, pass"


def labelled(text):
    label, _, value = text.partition("=")
    if not value:
        raise argparse.ArgumentTypeError(f"{text!r}: LABEL=VALUE")
    return label, value


def read(path):
    db = open_read_only(path)
    db.row_factory = sqlite3.Row
    run_id = db.execute("SELECT max(run_id) FROM runs").fetchone()[0]
    phases = db.execute("SELECT " + ", ".join(f"total({p}_seconds) AS {p}" for p in PHASES) +
                        ", count(*) AS cases FROM cases WHERE run_id = ?", (run_id,)).fetchone()
    samples = {r["mode"]: (r["n"], r["gpu"]) for r in db.execute(
        "SELECT s.mode, count(*) AS n, total(s.gpu_time_us) * 1e-6 AS gpu FROM samples s"
        " JOIN cases c USING (case_id) WHERE c.run_id = ? GROUP BY s.mode", (run_id,))}
    columns = {r[1] for r in db.execute("PRAGMA table_info(cases)")}
    stops = "-"
    if "graph_stop_reason" in columns:
        stops = ", ".join(f"{r[0]} {r[1]}" for r in db.execute(
            "SELECT ifnull(graph_stop_reason, 'none'), count(*) FROM cases WHERE run_id = ? GROUP BY 1 ORDER BY 2 DESC",
            (run_id,)))
    medians = {tuple(r[:9]): (r[9], r[10]) for r in db.execute(
        f"SELECT {KEY}, gpu_time_us_median, graph_time_us_median FROM results WHERE run_id = ? AND status = 'ok'",
        (run_id,))}
    return {"phases": phases, "samples": samples, "stops": stops, "medians": medians}


def spread(pairs):
    diffs = [b / a - 1 for a, b in pairs if a and b]
    if not diffs:
        return "", ""
    return f"{100 * statistics.median(diffs):+.2f}%", f"{100 * max(diffs, key=abs):+.2f}%"


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("runs", nargs=2, type=labelled, metavar="LABEL=RESULTS.db")
    p.add_argument("--walls", nargs="*", type=labelled, default=[], metavar="LABEL=SECONDS")
    a = p.parse_args()
    walls = dict(a.walls)
    runs = [(label, read(path)) for label, path in a.runs]
    print("| run | process wall s | cases | " + " | ".join(f"{ph} s" for ph in PHASES) +
          " | phases' sum s | eager samples (GPU s) | graph replays (GPU s) | graph replays stopped by |")
    print("|---|---:|---:|" + "---:|" * (len(PHASES) + 3) + "---|")
    for label, r in runs:
        ph = r["phases"]
        cells = [label, walls.get(label, ""), str(ph["cases"])] + [f"{ph[p]:.2f}" for p in PHASES]
        cells.append(f"{sum(ph[p] for p in PHASES):.2f}")
        for mode in ("eager", "graph"):
            n, gpu = r["samples"].get(mode, (0, 0.0))
            cells.append(f"{n} ({gpu:.2f})")
        cells.append(r["stops"])
        print("| " + " | ".join(cells) + " |")
    (first_label, first), (second_label, second) = runs
    both = [k for k in first["medians"] if k in second["medians"]]
    eager = spread([(first["medians"][k][0], second["medians"][k][0]) for k in both])
    graph = spread([(first["medians"][k][1], second["medians"][k][1]) for k in both])
    print(f"\n{len(both)} cases timed by both; {second_label} against {first_label}: eager medians, median difference "
          f"{eager[0]}, largest {eager[1]}; graph medians, median difference {graph[0]}, largest {graph[1]}.")


if __name__ == "__main__":
    main()
