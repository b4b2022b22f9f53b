#!/usr/bin/env python3
"""attnsweep and nvbench side by side (issue 35), as markdown on stdout:

    nvbench_report.py RESULTS.db DEFAULTS.jsonl MATCHED.jsonl WALLS.json [MACHINE.txt]

RESULTS.db: the attnsweep database of proofs/nvbench/nvbench_sweep.yaml (its latest run is read, forward
causal cases); DEFAULTS.jsonl, MATCHED.jsonl: proofs/nvbench/nvbench_compare.py's lines of its two modes;
WALLS.json: the process walls as proofs/nvbench/nvbench_device.sh measured them, {"attnsweep_s": ...,
"nvbench_defaults_s": ..., "nvbench_matched_s": ...}; MACHINE.txt: the call's machine facts,
quoted at the end when given (a JSON-lines file that is not there is a mode that did not run:
its cases read as missing). Medians agree when they differ by at most AGREE (3%); only cases
whose attnsweep median is at least LONG_US (200 us) are held to that, as in
proofs/renovation/device_renovation.sh and bench/report.py. Exit 0 with the report; 2 when an input
cannot be read.
"""
import json
import os
import sqlite3
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
from python_reference import machine_text, reference_rows  # noqa: E402
from results_db import open_read_only  # noqa: E402

AGREE = 0.03
LONG_US = 200.0
MODES = (("defaults", "nvbench at its defaults"), ("matched", "nvbench at matched noise"))
WALLS = (("attnsweep", "attnsweep_s"), ("nvbench defaults", "nvbench_defaults_s"), ("nvbench matched", "nvbench_matched_s"))


def shape_text(batch, heads, seq_len, head_dim):
    return f"{batch}x{heads}x{seq_len}x{head_dim}"


def read_attnsweep(path):
    """(run row, {(variant, shape, dtype): case row}, plan order) of the database's latest run."""
    db = open_read_only(path)
    db.row_factory = sqlite3.Row
    run = db.execute("SELECT * FROM runs ORDER BY run_id DESC LIMIT 1").fetchone()
    if run is None:
        raise ValueError(f"{path}: no run")
    cases, order = {}, []
    for row in db.execute(
            "SELECT variant, batch, heads, seq_len_q, head_dim, dtype, status, error_message, gpu_time_us_median,"
            " samples, validity FROM results WHERE run_id = ? AND pass = 'forward' AND mask = 'causal'"
            " AND kv_heads = heads AND seq_len_q = seq_len_kv ORDER BY plan_index", (run["run_id"],)):
        key = (row["variant"], shape_text(row["batch"], row["heads"], row["seq_len_q"], row["head_dim"]), row["dtype"])
        cases[key] = dict(row)
        order.append(key)
    return dict(run), cases, order


def read_nvbench(path):
    """(run record, {(variant, shape, dtype): case record}) of one nvbench_compare.py file; a file
    that is not there (its mode failed before writing) reads as no cases, and the report says so."""
    run, cases = {}, {}
    if not os.path.exists(path):
        return {"missing": path}, cases
    for row in reference_rows(path):
        if row.get("record") == "run":
            run = row
        elif row.get("record") == "case":
            cases[(row["variant"], row["shape"], row["dtype"])] = row
    return run, cases


def number(value, spec):
    return "" if value is None else format(value, spec)


def difference(nvbench_us, attnsweep_us):
    """nvbench's median relative to attnsweep's (0.01: 1% longer), or None when either is missing."""
    if nvbench_us is None or not attnsweep_us:
        return None
    return nvbench_us / attnsweep_us - 1


def ran(case):
    return case is not None and case.get("status") == "ok"


def agreement(cases, nvbench):
    """(agreeing, compared, [(key, difference)] of those beyond AGREE) over the cases of at least
    LONG_US that both timed."""
    compared, misses = 0, []
    for key, case in cases.items():
        other = nvbench.get(key)
        if not ran(case) or not ran(other) or case["gpu_time_us_median"] is None or case["gpu_time_us_median"] < LONG_US:
            continue
        compared += 1
        d = difference(other.get("gpu_time_us"), case["gpu_time_us_median"])
        if d is None or abs(d) > AGREE:
            misses.append((key, d))
    return compared - len(misses), compared, misses


def status_mismatches(cases, nvbench):
    """Cases one side timed and the other did not, except what nvbench's budget left out."""
    out = []
    for key, case in cases.items():
        other = nvbench.get(key) or {"status": "missing"}
        if other["status"] == "budget":
            continue
        if ran(case) != ran(other):
            out.append((key, case["status"], other["status"]))
    return out


def print_facts(run, nvbench_runs, machine):
    facts = [("date (attnsweep run started, UTC)", run.get("started_at")), ("GPU", run.get("device_name")),
             ("driver", run.get("driver_version")),
             ("attnsweep", f"{run.get('attnsweep_version')} (git {run.get('git_sha')})"),
             ("LibTorch (attnsweep)", f"{run.get('torch_version')}, CUDA {run.get('cuda_version')}, cuDNN {run.get('cudnn_version')}")]
    first = next((r for r in nvbench_runs if r and "missing" not in r), {})
    facts += [("torch (Python, nvbench's side)", f"{first.get('torch_version')}, CUDA {first.get('torch_cuda_version')}"),
              ("cuda-bench", first.get("cuda_bench_version")), ("nvbench (its JSON)", first.get("nvbench_version")),
              ("cuda-bindings", first.get("cuda_bindings_version")), ("Python", first.get("python"))]
    for (mode, _), nvbench_run in zip(MODES, nvbench_runs):
        arguments = " ".join(nvbench_run.get("nvbench_args") or [])
        missing = nvbench_run.get("missing")
        facts.append((f"nvbench arguments, {mode}",
                      f"not run: no {missing}" if missing else f"`{arguments}`" if arguments else ""))
    print("| fact | value |\n|---|---|")
    for name, value in facts:
        print(f"| {name} | {'' if value is None else value} |")
    if machine:
        print("\nMachine facts of the call:\n\n```\n" + machine + "\n```")


def print_walls(walls, cases, nvbench_by_mode):
    print("\n## Walls\n")
    print("Each one process from its start to its exit, all cases in it (proofs/nvbench/nvbench_device.sh).\n")
    print("| tool | wall (s) | vs attnsweep | cases timed | not timed |\n|---|---:|---:|---:|---:|")
    attnsweep_s = walls.get("attnsweep_s")
    counted = [cases] + [nvbench_by_mode[mode] for mode, _ in MODES]
    for (name, key), rows in zip(WALLS, counted):
        wall = walls.get(key)
        ratio = f"{wall / attnsweep_s:.2f}x" if wall and attnsweep_s else ""
        timed = sum(1 for r in rows.values() if ran(r))
        print(f"| {name} | {number(wall, '.1f')} | {ratio} | {timed} | {len(rows) - timed} |")


PHASES = ("setup", "accuracy", "warmup", "timing", "graph", "profile", "cooldown")


def print_phases(path):
    """Where attnsweep's sweep spent its time: each phase summed over the latest run's cases, and
    the samples each mode took (the eager ones, the CUDA-graph replays) with the GPU time they held."""
    db = open_read_only(path)
    run_id = db.execute("SELECT max(run_id) FROM runs").fetchone()[0]
    sums = db.execute("SELECT " + ", ".join(f"total({p}_seconds)" for p in PHASES) +
                      " FROM cases WHERE run_id = ?", (run_id,)).fetchone()
    samples = {mode: (count, gpu_us) for mode, count, gpu_us in db.execute(
        "SELECT s.mode, count(*), total(s.gpu_time_us) FROM samples s JOIN cases c USING (case_id)"
        " WHERE c.run_id = ? GROUP BY s.mode", (run_id,))}
    stops = db.execute("SELECT ifnull(graph_stop_reason, 'none'), count(*) FROM cases WHERE run_id = ?"
                       " GROUP BY 1 ORDER BY 2 DESC", (run_id,)).fetchall()
    print("\n## Where attnsweep's time goes\n")
    print("Seconds of each phase summed over the cases (cases.*_seconds), and the samples of each mode with the GPU"
          " time they held (samples.gpu_time_us).\n")
    print("| " + " | ".join(PHASES) + " | cases' sum |\n|" + "---:|" * (len(PHASES) + 1))
    print("| " + " | ".join(f"{v:.2f}" for v in sums) + f" | {sum(sums):.2f} |")
    print("\n| samples | count | GPU seconds in them |\n|---|---:|---:|")
    for mode, (count, gpu_us) in sorted(samples.items()):
        print(f"| {mode} | {count} | {gpu_us * 1e-6:.2f} |")
    print("\nWhy the graph replays stopped (cases.graph_stop_reason): " +
          ", ".join(f"{reason} {count}" for reason, count in stops) + ".")


def print_cases(order, cases, nvbench_by_mode):
    print("\n## Case by case\n")
    print("GPU time per forward in microseconds: attnsweep's median of its eager samples (CUDA events, L2 flushed,"
          " launch latency hidden), nvbench's cold median (the mean where it gives no median) and its difference"
          " from attnsweep's. Samples in brackets.\n")
    header = "| variant | shape | dtype | attnsweep us | " + " | ".join(
        f"nvbench {mode} us | diff {mode} %" for mode, _ in MODES) + " |"
    print(header)
    print("|---|---|---|---:|" + "---:|---:|" * len(MODES))
    for key in order:
        case = cases[key]
        cells = [key[0], key[1], key[2]]
        cells.append(f"{case['gpu_time_us_median']:.1f} ({case['samples']})" if ran(case) and case["gpu_time_us_median"]
                     is not None else case["status"])
        for mode, _ in MODES:
            other = nvbench_by_mode[mode].get(key)
            if ran(other):
                center = "" if other.get("gpu_time_center") == "median" else " mean"
                cells.append(f"{number(other.get('gpu_time_us'), '.1f')}{center} ({other.get('samples')})")
                d = difference(other.get("gpu_time_us"), case["gpu_time_us_median"] if ran(case) else None)
                cells.append(number(None if d is None else 100 * d, "+.1f"))
            else:
                cells += [other["status"] if other else "missing", ""]
        print("| " + " | ".join(cells) + " |")


def print_agreement(cases, nvbench_by_mode):
    print("\n## Agreement of the medians\n")
    print(f"Cases whose attnsweep median is at least {LONG_US:.0f} us and that both timed; agreeing: within"
          f" {100 * AGREE:.0f}%.\n")
    print("| nvbench mode | agree | compared | median of the differences % | beyond |\n|---|---:|---:|---:|---|")
    for mode, _ in MODES:
        nvbench = nvbench_by_mode[mode]
        agree, compared, misses = agreement(cases, nvbench)
        differences = [difference(nvbench[k]["gpu_time_us"], c["gpu_time_us_median"]) for k, c in cases.items()
                       if ran(c) and ran(nvbench.get(k)) and c["gpu_time_us_median"] and c["gpu_time_us_median"] >= LONG_US]
        middle = statistics.median(differences) * 100 if differences else None
        beyond = ", ".join(f"{v} {s} {d} ({number(None if x is None else 100 * x, '+.1f')}%)"
                           for (v, s, d), x in misses)
        print(f"| {mode} | {agree} | {compared} | {number(middle, '+.2f')} | {beyond} |")
    mismatches = [(mode, m) for mode, _ in MODES if nvbench_by_mode[mode]
                  for m in status_mismatches(cases, nvbench_by_mode[mode])]
    if mismatches:
        print("\nTimed by one side only (cases nvbench's budget left out aside):\n")
    for mode, ((v, s, d), mine, theirs) in mismatches:
        print(f"- {mode}: {v} {s} {d} is {mine} in attnsweep, {theirs} in nvbench")


def main(argv):
    if len(argv) not in (5, 6):
        sys.exit(__doc__)
    try:
        run, cases, order = read_attnsweep(argv[1])
        nvbench_runs, nvbench_by_mode = [], {}
        for (mode, _), path in zip(MODES, argv[2:4]):
            nvbench_run, nvbench_by_mode[mode] = read_nvbench(path)
            nvbench_runs.append(nvbench_run)
        with open(argv[4]) as walls_file:
            walls = json.load(walls_file)
        machine = machine_text(argv, 5)
    except (OSError, ValueError, KeyError, sqlite3.Error) as error:
        print(f"nvbench_report.py: {error}", file=sys.stderr)
        sys.exit(2)
    print("# attnsweep and nvbench, like with like (issue 35)\n")
    print(f"{len(order)} forward cases of proofs/nvbench/nvbench_sweep.yaml, timed by attnsweep and, through cuda-bench,"
          " by nvbench's cold measurement (L2 flush, blocking kernel) of the same torch calls"
          " (scripts/torch_reference.py) on its stream: at nvbench's defaults, and at attnsweep's noise target"
          " (`--max-noise 2 --min-time 0.05`), in one device call.\n")
    print_facts(run, nvbench_runs, machine)
    print_walls(walls, cases, nvbench_by_mode)
    print_agreement(cases, nvbench_by_mode)
    print_phases(argv[1])
    print_cases(order, cases, nvbench_by_mode)


if __name__ == "__main__":
    main(sys.argv)
