#!/usr/bin/env python3
"""Markdown report of a training sweep (issue 23): attnsweep's forward, backward
and forward_backward cases from its database next to the independent Python
measurement of the same cases (scripts/torch_reference.py --pass ...).

   usage: training_report.py RESULTS.db PYTHON.jsonl [MACHINE.txt]  > report.md
          training_report.py --python-args RESULTS.db [--per-shape]

Per case: kernels, memcpy and memset per pass (equal or not), the medians and
their ratio (judged only where either median is 200 us or more: within 3%),
the gradient errors (forward: rel_error) side by side, and the SDPA backend of
the backward. Exit 1 when a count differs or a case of a built-in variant has
no Python line (the proof is incomplete), 2 when an input cannot be read.

--python-args prints, for each mask of the latest run, the torch_reference.py
arguments that measure the same shapes, dtypes, passes and built-in variants
(one line each, e.g. "--causal 1 --shapes 8x16x1024x64,2x32/8x4096x128 ...");
with --per-shape exactly the run's cases in the order they ran (case_id), one
line per shape, mask, dtype and set of passes (nothing the config excluded).

Where Python's line has its samples in the order taken (times_us), its median
is also taken over its first n samples, n the timed samples attnsweep took for
the case (cases.samples, the dropped ones included): both medians then cover the
same stretch from the start of the case (where Python took fewer, all of its
samples, and the column says so). That is the judged one: a kernel that draws the GPU into its power cap slows as the
case goes on (proofs/cudnn-gqa-gap/h100-cudnn-gqa-gap.md), so a median of 300 samples
against one of 56 compares two duty cycles, not two tools.
"""
import json
import sqlite3
import statistics
import sys

from results_db import open_read_only

BUILT_IN = ("naive", "naive_inplace", "sdpa_math", "sdpa_efficient", "sdpa_flash", "sdpa_cudnn", "sdpa_auto")
PASSES = ("forward", "backward", "forward_backward")
JUDGED_US = 200.0     # medians under this are shown, not judged: launch gaps dominate them
TOLERANCE = 0.03      # |attnsweep / python - 1| allowed for judged medians


def fmt(value, spec):
    return "" if value is None else format(value, spec)


def shape_text(batch, heads, kv_heads, seq_q, seq_kv, head_dim, head_dim_v=None):
    h = str(heads) if kv_heads in (None, heads) else f"{heads}/{kv_heads}"
    s = str(seq_q) if seq_q == seq_kv else f"{seq_q}:{seq_kv}"
    d = str(head_dim) if head_dim_v in (None, head_dim) else f"{head_dim}/{head_dim_v}"  # the values' dim (issue 36)
    return f"{batch}x{h}x{s}x{d}"


def case_key(variant, batch, heads, kv_heads, seq_q, seq_kv, head_dim, dtype, causal, pass_name, head_dim_v=None,
             softcap=None, alibi=False, sinks=False, deterministic=False):
    kv = heads if kv_heads is None else kv_heads
    return (variant, int(batch), int(heads), int(kv), int(seq_q), int(seq_kv), int(head_dim),
            int(head_dim_v or head_dim), dtype, bool(causal), pass_name or "forward", float(softcap or 0.0),
            bool(alibi), bool(sinks), bool(deterministic))


def softcap_of(case):
    """A database row's soft-capping cap (schema 16, issue 36), None where it has none."""
    return case["softcap"] if "softcap" in case.keys() else None


def score_mods_of(case):
    """A database row's (softcap or 0, alibi, sinks, deterministic): schema 16 and 17's columns, off before them."""
    keys = case.keys()
    flag = lambda name: bool(case[name]) if name in keys else False  # noqa: E731
    return (softcap_of(case) or 0.0, flag("alibi"), flag("sinks"), flag("deterministic"))


def score_mods_text(case):
    """The suffix attnsweep's labels append for them (" softcap30 alibi sinks deterministic"); "" for none."""
    softcap, alibi, sinks, deterministic = score_mods_of(case)
    return (f" softcap{softcap:g}" if softcap else "") + (" alibi" if alibi else "") + (" sinks" if sinks else "") + \
        (" deterministic" if deterministic else "")


def value_dim(case):
    """A database row's values' head dim: the results view's own from schema 15, head_dim before."""
    return case["head_dim_v"] if "head_dim_v" in case.keys() else case["head_dim"]


def read_python(path):
    """torch_reference.py's JSON lines by case; lines without a pass are forwards."""
    rows = {}
    with open(path) as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                print(f"{path}:{number}: not JSON, skipped", file=sys.stderr)
                continue
            if "variant" not in row or "batch" not in row:
                continue
            seq = row.get("seq_len")
            key = case_key(row["variant"], row["batch"], row["heads"], row.get("kv_heads"), row.get("seq_len_q", seq),
                           row.get("seq_len_kv", seq), row["head_dim"], row["dtype"], row.get("causal", True),
                           row.get("pass"), row.get("head_dim_v"), row.get("softcap"), row.get("alibi", False),
                           row.get("sinks", False), row.get("deterministic", False))
            rows[key] = row
    return rows


def open_db(path):
    db = open_read_only(path)
    db.row_factory = sqlite3.Row
    db.execute("SELECT 1 FROM results LIMIT 1")  # fails early on a file that is not attnsweep's
    return db


def latest_run(db):
    run = db.execute("SELECT * FROM runs ORDER BY run_id DESC LIMIT 1").fetchone()
    if run is None:
        raise sqlite3.DatabaseError("no run in the database")
    return run


def db_cases(db, run_id):
    """The run's cases from the results view, with cases.sdpa_backend_backward where the schema has it."""
    columns = {r["name"] for r in db.execute("PRAGMA table_info(cases)")}
    backward = "c.sdpa_backend_backward" if "sdpa_backend_backward" in columns else "NULL"
    return db.execute(f"SELECT r.*, {backward} AS sdpa_backend_backward FROM results r "
                      "JOIN cases c USING (case_id) WHERE r.run_id = ? ORDER BY r.plan_index", (run_id,)).fetchall()


def measured_by_serving_reference(case):
    """A variable-length batch, a paged cache or a sliding window: scripts/serving_reference.py measures those
    (torch_reference.py draws uniform batches with a plain causal mask or none, so such a case would be matched
    with its padded or unwindowed shape's line)."""
    keys = case.keys()
    def given(name):
        return name in keys and case[name] is not None
    return given("seq_lens_q") or ("page_size" in keys and bool(case["page_size"])) or given("window_left") or \
        given("window_right")


def case_shape(c):
    """A stored case's shape as torch_reference.py's --shapes writes it."""
    return shape_text(c["batch"], c["heads"], c["kv_heads"], c["seq_len_q"], c["seq_len_kv"], c["head_dim"], value_dim(c))


def mask_key(c):
    """(causal 0/1, softcap, alibi, sinks, deterministic): what one torch_reference.py call holds fixed; mods_args'
    arguments."""
    return (int(bool(c["causal"])), *score_mods_of(c))


def mods_args(causal, softcap, alibi, sinks, deterministic):
    return f"--causal {causal} " + (f"--softcap {softcap:g} " if softcap else "") + ("--alibi 1 " if alibi else "") + \
        ("--sinks 1 " if sinks else "") + ("--deterministic 1 " if deterministic else "")


def python_args(db_path, per_shape=False):
    """torch_reference.py's arguments for the run's built-in cases: one line per mask and score modification
    (its shapes x dtypes x passes x variants: a combination the config excluded runs too), or with per_shape
    exactly the run's cases in the order it ran them (case_id: the order stored, shuffled or not): one line per
    shape, mask, dtype and set of passes, so Python runs nothing the config excluded and what ran before a case,
    which heats the GPU it runs on, is the same."""
    db = open_db(db_path)
    cases = [c for c in db_cases(db, latest_run(db)["run_id"])
             if c["variant"] in BUILT_IN and c["seq_len_q"] == c["seq_len_kv"] and not measured_by_serving_reference(c)]
    if per_shape:
        return python_args_per_shape(cases)
    groups = {}
    for c in cases:
        mask = mask_key(c)  # one torch_reference.py call per mask and modification
        shape = case_shape(c)
        group = groups.setdefault(mask, {"shapes": [], "dtypes": [], "passes": [], "variants": []})
        for name, value in (("shapes", shape), ("dtypes", c["dtype"]), ("passes", c["pass"] or "forward"),
                            ("variants", c["variant"])):
            if value not in group[name]:
                group[name].append(value)
    for mask, group in sorted(groups.items(), key=lambda item: (-item[0][0], item[0][1:])):
        print(mods_args(*mask) + " ".join(f"--{name} {','.join(values)}" for name, values in group.items()))
    return 0


def python_args_per_shape(cases):
    """One line per shape, mask, dtype and set of passes (the variants that ran exactly those passes), in the
    order of each line's first case_id."""
    passes_of, first = {}, {}  # (shape, mask, dtype) -> variant -> passes; and each one's first case_id
    for c in sorted(cases, key=lambda c: c["case_id"]):
        key = (case_shape(c), mask_key(c), c["dtype"])
        passes = passes_of.setdefault(key, {}).setdefault(c["variant"], [])
        if (c["pass"] or "forward") not in passes:
            passes.append(c["pass"] or "forward")
        first.setdefault((key, c["variant"]), c["case_id"])
    # The variants were met in case_id order, so a line's first variant holds its first case_id.
    lines = {}  # (key, passes) -> [first case_id, variants]
    for key, variants in passes_of.items():
        for variant, passes in variants.items():
            lines.setdefault((key, tuple(passes)), [first[(key, variant)], []])[1].append(variant)
    for ((shape, mask, dtype), passes), (_, variants) in sorted(lines.items(), key=lambda item: item[1][0]):
        print(mods_args(*mask) + f"--shapes {shape} --dtypes {dtype} --passes {','.join(passes)} "
              f"--variants {','.join(variants)}")
    return 0


def counts_of(row, prefix=""):
    return tuple(row.get(f"{prefix}{name}") if isinstance(row, dict) else row[f"{name}_per_forward"]
                 for name in ("kernels", "memcpy", "memset"))


def errors_text(values):
    shown = [fmt(v, ".2e") for v in values]
    return " / ".join(s or "-" for s in shown) if any(shown) else ""


def worst(values):
    known = [v for v in values if v is not None]
    return max(known) if known else None


def report(db_path, python_path, machine_path):
    python = read_python(python_path)
    db = open_db(db_path)
    run = latest_run(db)
    cases = db_cases(db, run["run_id"])
    machine = open(machine_path).read().strip() if machine_path else ""

    print(f"# attnsweep's training passes against PyTorch in Python: {run['device_name']}\n")
    print(f"Run {run['run_id']} '{run['name']}', {run['started_at']}; torch {run['torch_version']}, "
          f"CUDA {run['cuda_version']}, cuDNN {run['cudnn_version']}, driver {run['driver_version']}, "
          f"attnsweep {run['attnsweep_version']} ({run['git_sha']}), timing protocol {run['timing_protocol']}.\n")
    if machine:
        print("```\n" + machine + "\n```\n")
    print("Python: scripts/torch_reference.py --pass ..., the same call on the same GPU, the same inputs "
          "(seeded), the same upstream gradient (float32 randn from a generator seeded seed + 1, cast). "
          "backward: an untimed forward on leaves that require grad, a synchronize, then a memset of 2x the L2, "
          f"{hold_words(python)}, CUDA events around "
          "torch.autograd.grad(out, (q, k, v), dout); forward_backward: the forward inside the events too. "
          "Counts: kernels, memcpy and memset whose launch call lies inside a pass's record_function interval "
          "(matched by correlation id, on any thread: autograd's device thread launches the backward), "
          "equal over every profiled pass. Gradient errors: ||g - g64|| / ||g64|| against float64 autograd "
          "of the naive attention on the same inputs and dout (dq / dk / dv); forward: rel_error of the output. "
          f"Medians are judged only where either is {JUDGED_US:.0f} us or more: within {100 * TOLERANCE:.0f}%; "
          "where Python's line has its samples in order, the judged Python median is of its first n samples, n the "
          "timed samples attnsweep took (the same stretch of the case: a power-capped kernel slows as the case goes "
          "on).\n")

    total = counted = equal = judged = within = status_differs = missing = 0
    differing, missing_built_in = [], []
    per_dtype = {}
    for pass_name in PASSES:
        rows = [c for c in cases if (c["pass"] or "forward") == pass_name and not measured_by_serving_reference(c)]
        if not rows:
            continue
        print(f"\n## {pass_name}\n")
        error_head = "rel error" if pass_name == "forward" else "grad rel error dq / dk / dv"
        print(f"| shape | dtype | causal | variant | status | py status | backend | py backend | kernels | py kernels "
              f"| memcpy | py memcpy | memset | py memset | counts equal | median us | py median us "
              f"| py median us, first n | ratio | within 3% | {error_head} | py {error_head} |")
        print("|" + "---|" * 22)
        for c in rows:
            total += 1
            key = case_key(c["variant"], c["batch"], c["heads"], c["kv_heads"], c["seq_len_q"], c["seq_len_kv"],
                           c["head_dim"], c["dtype"], c["causal"], pass_name, value_dim(c), *score_mods_of(c))
            p = python.get(key)
            if p is None:
                missing += 1
                if c["variant"] in BUILT_IN:
                    missing_built_in.append(key)
                p = {}
            shape = case_shape(c) + score_mods_text(c)
            py_status = p.get("status", "no line")
            if p and (c["status"] == "ok") != (py_status == "ok"):
                status_differs += 1
            status = c["status"] if c["status"] == "ok" else f"{c['status']}: {(c['error_message'] or '')[:60]}"
            if py_status not in ("ok", "no line"):
                py_status = f"{py_status}: {(p.get('error') or p.get('reason') or '')[:60]}"
            if pass_name == "forward":
                backend, py_backend = c["sdpa_backend"], p.get("sdpa_backend")
            else:
                backend, py_backend = c["sdpa_backend_backward"], p.get("sdpa_backend_backward")
            ours, theirs = counts_of(c), counts_of(p)
            same = ""
            if c["status"] == "ok" and p.get("status") == "ok" and None not in ours and None not in theirs:
                counted += 1
                if tuple(int(x) for x in ours) == tuple(int(x) for x in theirs):
                    equal += 1
                    same = "yes"
                else:
                    same = "**no**"
                    differing.append(f"{pass_name} {shape} {c['dtype']} {c['variant']}: {ours} vs {theirs}")
                if c["counts_consistent"] == 0 or p.get("counts_consistent") is False:
                    same += " (inconsistent)"
            median, py_all = c["gpu_time_us_median"], p.get("median_us")
            py_median, py_first_text = first_n_median(p, c["samples"])
            py_median = py_median or py_all
            ratio = judged_text = ""
            if median and py_median:
                ratio = f"{median / py_median:.3f}"
                if max(median, py_median) >= JUDGED_US:
                    judged += 1
                    ok = abs(median / py_median - 1) <= TOLERANCE
                    within += ok
                    judged_text = "yes" if ok else "**no**"
                else:
                    judged_text = "-"
            if pass_name == "forward":
                err, py_err = [c["rel_error"]], [p.get("rel_error")]
            else:
                err = [c[f"grad_rel_error_{g}"] for g in "qkv"]
                py_err = [p.get(f"grad_rel_error_{g}") for g in "qkv"]
            slot = per_dtype.setdefault((pass_name, c["dtype"]), [None, None])
            for i, values in enumerate((err, py_err)):
                w = worst(values)
                if w is not None and (slot[i] is None or w > slot[i]):
                    slot[i] = w
            print(f"| {shape} | {c['dtype']} | {int(bool(c['causal']))} | {c['variant']} | {status} | {py_status} "
                  f"| {backend or ''} | {py_backend or ''} | {fmt(ours[0], 'g')} | {fmt(theirs[0], 'g')} "
                  f"| {fmt(ours[1], 'g')} | {fmt(theirs[1], 'g')} | {fmt(ours[2], 'g')} | {fmt(theirs[2], 'g')} "
                  f"| {same} | {fmt(median, '.1f')} | {fmt(py_all, '.1f')} | {py_first_text} | {ratio} "
                  f"| {judged_text} "
                  f"| {errors_text(err)} | {errors_text(py_err)} |")

    if per_dtype:
        print("\n## Worst error per pass and dtype\n")
        print("Forward: rel_error of the output; backward passes: the worst of dq, dk, dv.\n")
        print("| pass | dtype | attnsweep | python |")
        print("|---|---|---|---|")
        for (pass_name, dtype), (ours, theirs) in per_dtype.items():
            print(f"| {pass_name} | {dtype} | {fmt(ours, '.2e')} | {fmt(theirs, '.2e')} |")

    summary = (f"{total} cases, counts equal {equal}/{counted}, medians >={JUDGED_US:.0f}us within "
               f"{100 * TOLERANCE:.0f}% {within}/{judged}")
    extra = []
    if status_differs:
        extra.append(f"{status_differs} with a different status")
    if missing:
        extra.append(f"{missing} without a Python line, {len(missing_built_in)} of them of a built-in variant")
    print("\n## Summary\n")
    print(summary + (" (" + ", ".join(extra) + ")" if extra else ""))
    if differing:
        print("\nCounts that differ (attnsweep kernels, memcpy, memset vs Python's):\n")
        for line in differing:
            print(f"- {line}")
    print(summary, file=sys.stderr)
    return 1 if differing or missing_built_in else 0


def first_n_median(row, n):
    """(median, cell text) of Python's first n samples, n the timed samples attnsweep took for the case; where
    Python took n or fewer, the median of all of them (the cell says how many when fewer); (None, "") where the
    line has no times_us or the case no sample count (then Python's own median is judged)."""
    times = row.get("times_us") if isinstance(row, dict) else None
    if not times or not n:
        return None, ""
    n = int(n)
    value = statistics.median(times[:n])
    return value, f"{value:.1f}" if len(times) >= n else f"{value:.1f} (all {len(times)}, n {n})"


HOLDS = {
    "0": "no hold (--hold 0: samples back to back; a backward's autograd dispatch is then inside the interval)",
    "dispatch": "torch.cuda._sleep holding the stream for 1.5x Python's own host dispatch (--hold dispatch, at least "
                "~50 us: about as long as attnsweep's blocking kernel holds it, so the duty cycle is alike)",
    "auto": "torch.cuda._sleep holding the stream while Python enqueues (~1 ms or more)",
}


def hold_words(python):
    """How Python's samples were spaced, from each line's --hold (lines without it: auto, or 0 by their cycles)."""
    holds = {str(r.get("hold", "0" if r.get("hold_cycles") == 0 else "auto")) for r in python.values()
             if r.get("status") == "ok"}
    if len(holds) == 1 and next(iter(holds)) in HOLDS:
        return HOLDS[next(iter(holds))]
    if len(holds) == 1:
        return f"torch.cuda._sleep of {next(iter(holds))} cycles before each sample (--hold)"
    return "torch.cuda._sleep before each sample, per line's --hold (" + ", ".join(sorted(holds)) + ")"


def main(argv):
    try:
        if len(argv) == 2 and argv[0] == "--python-args":
            return python_args(argv[1])
        if len(argv) == 3 and argv[0] == "--python-args" and argv[2] == "--per-shape":
            return python_args(argv[1], per_shape=True)
        if len(argv) not in (2, 3) or argv[0].startswith("-"):
            print("usage: training_report.py RESULTS.db PYTHON.jsonl [MACHINE.txt] | --python-args RESULTS.db "
                  "[--per-shape]",
                  file=sys.stderr)
            return 2
        return report(argv[0], argv[1], argv[2] if len(argv) > 2 else None)
    except (OSError, sqlite3.Error) as error:
        print(f"training_report.py: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
