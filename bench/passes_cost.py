#!/usr/bin/env python3
"""What each pass adds to a sweep's wall time (issue 23), from a database alone.

    python3 bench/passes_cost.py training.db [RUN_ID]

Per pass: cases, how many ran (ok), wall seconds summed over the cases and per
case, and where it went (the sums of cases.*_seconds), then the run's total
wall time from its start and end stamps. Markdown on stdout, for
docs/benchmarks.md.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
from results_db import open_read_only  # noqa: E402

PHASES = ["setup", "accuracy", "warmup", "timing", "graph", "profile"]


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    db = open_read_only(sys.argv[1])
    run_id = int(sys.argv[2]) if len(sys.argv) == 3 else db.execute("SELECT max(run_id) FROM runs").fetchone()[0]
    started, finished, name = db.execute(
        "SELECT started_at, finished_at, name FROM runs WHERE run_id = ?", (run_id,)).fetchone()
    columns = ", ".join(f"sum({p}_seconds)" for p in PHASES)
    rows = db.execute(
        f"SELECT pass, count(*), sum(status = 'ok'), sum(wall_seconds), sum(samples), {columns} "
        "FROM cases WHERE run_id = ? GROUP BY pass ORDER BY CASE pass WHEN 'forward' THEN 0 "
        "WHEN 'backward' THEN 1 ELSE 2 END", (run_id,)).fetchall()
    print(f"Run {run_id} ({name}), started {started}, finished {finished}.\n")
    print("| pass | cases | ok | wall s (sum) | s per ok case | samples | " + " | ".join(PHASES) + " |")
    print("|---|---|---|---|---|---|" + "---|" * len(PHASES))
    forward_per_case = None
    for row in rows:
        pass_name, cases, ok, wall, samples = row[:5]
        per_case = wall / ok if ok else float("nan")
        if pass_name == "forward":
            forward_per_case = per_case
        phases = " | ".join(f"{(v or 0):.1f}" for v in row[5:])
        print(f"| {pass_name} | {cases} | {ok} | {wall or 0:.1f} | {per_case:.2f} | {samples or 0} | {phases} |")
    total = db.execute("SELECT sum(wall_seconds) FROM cases WHERE run_id = ?", (run_id,)).fetchone()[0] or 0
    print(f"\nCases' wall time in all: {total:.1f} s.")
    if forward_per_case:
        for row in rows:
            if row[0] != "forward" and row[2]:
                print(f"- a {row[0]} case costs {row[3] / row[2] / forward_per_case:.2f}x a forward case of the same "
                      "sweep (wall seconds per ok case)")


if __name__ == "__main__":
    main()
