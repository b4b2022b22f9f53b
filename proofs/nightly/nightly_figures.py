#!/usr/bin/env python3
"""False-alarm and detection figures of `attnsweep nightly --history` (issue 24,
docs/reproducibility.md "The window and the alert rule"), from the nights that
proofs/nightly/device_nightly.sh PHASE=W leaves in its work folder.

   usage: nightly_figures.py WORK > figures.md

WORK holds nights.tsv, one line per night in the order they ran, tab-separated:
    label  role  exit  seconds  slowdown
(role "identical" or "slowdown"; slowdown is the ATTNSWEEP_TEST_SLOWDOWN value,
"-" for none), and per night LABEL.md (nightly's markdown summary, the only
place the window's verdicts are written) and LABEL.db (the night's database:
how many cases of the planted variant ran, the denominator of detection).

Prints markdown: one row per night; the rows of reproducibility.md's table
(nights, against, WATCH items, regressions, exit); the false-alarm rate (WATCH
items and cases with a regression on identical nights, over the cases judged
on time, and the same among the unplanted cases of the slowdown nights); and
detection (of the planted variant's cases that ran: WATCH on the first slowdown
night, a time REGRESSION on the second). Regressions are counted as cases with
at least one REGRESSION finding and split by check (time, counts, backend, ...),
because on a GPU the planted knob also doubles each forward's kernel count, a
`counts` regression that fails a night at once (it is no time verdict).
Exit 0, or 2 when WORK or nights.tsv cannot be read.
"""
import os
import re
import sqlite3
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
from results_db import open_read_only  # noqa: E402

FIRST_NIGHT = "tonight's run is the first baseline"


def cells(line):
    """The cells of one markdown table row, unescaped (a cell may hold an escaped pipe)."""
    parts = re.split(r"(?<!\\)\|", line.strip())
    if parts and parts[0] == "":
        parts = parts[1:]
    if parts and parts[-1] == "":
        parts = parts[:-1]
    return [re.sub(r"\\(.)", r"\1", p.strip()) for p in parts]


def parse_summary(text):
    """What one nightly summary says: the window, the watch list, findings and the counts table."""
    summary = {
        "first_night": FIRST_NIGHT in text,
        "unfinished": "**The night did not finish" in text,
        "compared_nothing": "nothing was compared**" in text,
        "window_nights": None,
        "watch": [],
        "watch_header": 0,
        "headline": None,
        "findings": [],
        "findings_left_out": 0,
        "counts": {},
    }
    lines = text.splitlines()
    section = None
    for i, line in enumerate(lines):
        m = re.match(r"^- time window: (\d+) good night", line)
        if m:
            summary["window_nights"] = int(m.group(1))
        m = re.match(r"^\*\*Watch\*\* \((\d+) case", line)
        if m:
            summary["watch_header"] = int(m.group(1))
            section = "watch"
            continue
        m = re.match(r"^### (attnsweep compare: .*)$", line)
        if m:
            summary["headline"] = m.group(1)
            section = None
            continue
        if line.startswith("**Findings** ("):
            section = "findings"
            continue
        if line.startswith("<details><summary>Counts per verdict"):
            section = "counts"
            continue
        m = re.match(r"^\.\.\. and (\d+) more findings", line)
        if m:
            summary["findings_left_out"] = int(m.group(1))
            continue
        if section == "watch":
            if line.startswith("- "):
                item = re.sub(r"\\(.)", r"\1", line[2:])
                summary["watch"].append(item.split(": ", 1)[0])
            elif summary["watch"] and not line.strip():
                section = None
        elif section == "findings" and line.startswith("|"):
            row = cells(line)
            if len(row) == 7 and row[0] != "case" and not set(row[0]) <= set("-: "):
                summary["findings"].append(dict(zip(
                    ("case", "check", "field", "baseline", "candidate", "result", "detail"), row)))
        elif section == "findings" and line.startswith("**"):
            section = None
        elif section == "counts" and line.startswith("|"):
            row = cells(line)
            if len(row) == 2 and row[1].isdigit():
                summary["counts"][row[0]] = int(row[1])
        elif section == "counts" and line.startswith("</details>"):
            section = None
    return summary


def variant_of(case_label):
    return case_label.split(" ", 1)[0]


def planted_variants(slowdown):
    """ATTNSWEEP_TEST_SLOWDOWN=<variant>[:<times>][,...] -> the variants."""
    if not slowdown or slowdown == "-":
        return set()
    return {item.split(":", 1)[0] for item in slowdown.split(",") if item}


def ok_cases_of(db_path, variants):
    """How many cases of these variants ended ok in the night's latest run (None: unreadable)."""
    if not variants or not os.path.exists(db_path):
        return None
    try:
        db = open_read_only(db_path)
        marks = ",".join("?" * len(variants))
        row = db.execute(f"SELECT count(*) FROM cases WHERE run_id = (SELECT max(run_id) FROM runs) "
                         f"AND status = 'ok' AND variant IN ({marks})", sorted(variants)).fetchone()
        db.close()
        return row[0]
    except sqlite3.Error:
        return None


class Night:
    def __init__(self, work, label, role, exit_code, seconds, slowdown):
        self.label, self.role, self.slowdown = label, role, slowdown
        self.exit = int(exit_code) if exit_code.lstrip("-").isdigit() else None
        self.seconds = seconds
        path = os.path.join(work, label + ".md")
        self.readable = os.path.exists(path)
        text = ""
        if self.readable:
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
        self.s = parse_summary(text)
        self.db = os.path.join(work, label + ".db")

    @property
    def compared(self):
        return self.readable and not self.s["first_night"] and not self.s["unfinished"] and self.s["headline"]

    def judged(self):
        """Cases compared on time: matched, less those with no time verdict (unsupported, failed)."""
        counts = self.s["counts"]
        if "cases matched" not in counts:
            return None
        return counts["cases matched"] - counts.get("time NOT_TIMED", 0)

    def regression_cases(self, check=None):
        return sorted({f["case"] for f in self.s["findings"]
                       if f["result"] == "REGRESSION" and (check is None or f["check"] == check)})

    def regressions_by_check(self):
        by_check = {}
        for f in self.s["findings"]:
            if f["result"] == "REGRESSION":
                by_check.setdefault(f["check"], set()).add(f["case"])
        return {check: len(cases) for check, cases in sorted(by_check.items())}

    def against(self):
        if not self.readable:
            return "(no summary)"
        if self.s["unfinished"]:
            return "(did not finish)"
        if self.s["first_night"]:
            return "(none: first night)"
        n = self.s["window_nights"]
        return f"window of {n} night{'s' if n != 1 else ''}" if n else "last night"


def regressions_text(night, planted=frozenset()):
    cases = night.regression_cases()
    if not cases:
        return "0"
    by_check = ", ".join(f"{check} {n}" for check, n in night.regressions_by_check().items())
    text = f"{len(cases)} ({by_check})"
    if planted:
        hit = sum(1 for c in cases if variant_of(c) in planted)
        text += f"; {hit} of them {'/'.join(sorted(planted))}"
    return text


def watch_text(night, planted=frozenset()):
    n = len(night.s["watch"])
    if planted and n:
        hit = sum(1 for c in night.s["watch"] if variant_of(c) in planted)
        return f"{n} ({hit} {'/'.join(sorted(planted))})"
    return str(n)


def ratio(numerator, denominator):
    if not denominator:
        return f"{numerator} of 0"
    return f"{numerator} of {denominator} ({100.0 * numerator / denominator:.1f}%)"


def read_nights(work):
    manifest = os.path.join(work, "nights.tsv")
    nights = []
    with open(manifest, encoding="utf-8") as f:
        for line in f:
            fields = line.rstrip("\n").split("\t")
            if len(fields) < 5 or fields[0] == "label":
                continue
            nights.append(Night(work, *fields[:5]))
    return nights


def report(nights):
    out = []
    out.append("## Nights\n")
    out.append("| night | role | wall | against | judged | WATCH items | regressions (cases) | time verdicts | exit |")
    out.append("|---|---|---|---|---|---|---|---|---|")
    for n in nights:
        planted = planted_variants(n.slowdown)
        counts = n.s["counts"]
        verdicts = ", ".join(f"{v} {counts[f'time {v}']}" for v in ("SAME", "FASTER", "SLOWER", "AMBIGUOUS", "SUSPECT")
                             if counts.get(f"time {v}"))
        if counts.get("time MARKED by a power or thermal cap"):
            verdicts += f", MARKED {counts['time MARKED by a power or thermal cap']}"
        role = n.role + (f" ({n.slowdown})" if planted else "")
        judged = n.judged()
        out.append(f"| {n.label} | {role} | {n.seconds} s | {n.against()} | "
                   f"{judged if judged is not None else '-'} | "
                   f"{watch_text(n, planted) if n.compared else '-'} | "
                   f"{regressions_text(n, planted) if n.compared else '-'} | {verdicts or '-'} | "
                   f"{n.exit if n.exit is not None else '?'} |")
        if n.s["findings_left_out"]:
            out.append(f"| | | | | | | (the summary left {n.s['findings_left_out']} findings out: "
                       "these counts are low) | | |")
    out.append("")

    identical = [n for n in nights if n.role == "identical"]
    compared_identical = [n for n in identical if n.compared]
    slow = [n for n in nights if n.role == "slowdown"]

    out.append("## reproducibility.md's table\n")
    out.append("| nights | against | WATCH items | regressions | exit |")
    out.append("|---|---|---|---|---|")
    if identical:
        first = [n for n in identical if n.readable and n.s["first_night"]]
        if first:
            out.append(f"| {', '.join(str(identical.index(n) + 1) for n in first)} (first) | "
                       f"{first[0].against()} | - | - | {', '.join(str(n.exit) for n in first)} |")
        broken = [n for n in identical if not n.compared and n not in first]
        if broken:
            out.append(f"| {', '.join(str(identical.index(n) + 1) for n in broken)} (compared nothing) | "
                       f"{', '.join(n.against() for n in broken)} | - | - | {', '.join(str(n.exit) for n in broken)} |")
        if compared_identical:
            lo = identical.index(compared_identical[0]) + 1
            hi = identical.index(compared_identical[-1]) + 1
            windows = [n.s["window_nights"] or 0 for n in compared_identical]
            window_text = (f"window of {min(windows)}-{max(windows)} nights" if min(windows) != max(windows)
                           else f"window of {windows[0]} night{'s' if windows[0] != 1 else ''}")
            watch = sum(len(n.s["watch"]) for n in compared_identical)
            regressions = sum(len(n.regression_cases()) for n in compared_identical)
            exits = ", ".join(str(n.exit) for n in compared_identical)
            out.append(f"| {lo if lo == hi else f'{lo}-{hi}'} identical | {window_text} | {watch} | {regressions} | {exits} |")
    for i, n in enumerate(slow):
        planted = planted_variants(n.slowdown)
        name = {0: "slowdown, 1st night", 1: "slowdown, 2nd night"}.get(i, f"slowdown, night {i + 1}")
        out.append(f"| {name} | {n.against()} | {watch_text(n, planted) if n.compared else '-'} | "
                   f"{regressions_text(n, planted) if n.compared else '-'} | {n.exit} |")
    out.append("")

    out.append("## False alarms\n")
    judged = [n.judged() or 0 for n in compared_identical]
    alarms = sum(len(n.s["watch"]) + len(n.regression_cases()) for n in compared_identical)
    out.append(f"- identical nights ({len(compared_identical)} compared): WATCH items and cases with a regression: "
               f"{ratio(alarms, sum(judged))} case-comparisons judged on time "
               f"(WATCH {sum(len(n.s['watch']) for n in compared_identical)}, "
               f"regression {sum(len(n.regression_cases()) for n in compared_identical)}); "
               f"nights that failed: {sum(1 for n in compared_identical if n.exit not in (0, None))} "
               f"of {len(compared_identical)}")
    other = {"AMBIGUOUS": 0, "FASTER": 0}
    for n in compared_identical:
        for verdict in other:
            other[verdict] += n.s["counts"].get(f"time {verdict}", 0)
    out.append(f"- the same nights' other time verdicts (no alarm): AMBIGUOUS {other['AMBIGUOUS']}, "
               f"FASTER {other['FASTER']}")
    for i, n in enumerate(slow):
        if not n.compared:
            continue
        planted = planted_variants(n.slowdown)
        ok = ok_cases_of(n.db, planted)
        judged_n = n.judged()
        unplanted_judged = judged_n - ok if judged_n is not None and ok is not None else None
        unplanted_alarms = (sum(1 for c in n.s["watch"] if variant_of(c) not in planted)
                            + sum(1 for c in n.regression_cases() if variant_of(c) not in planted))
        out.append(f"- slowdown night {i + 1}, the cases not planted: "
                   + (ratio(unplanted_alarms, unplanted_judged) if unplanted_judged is not None
                      else f"{unplanted_alarms} WATCH items or regressions"))
    out.append("")

    out.append("## Detection\n")
    for i, n in enumerate(slow):
        planted = planted_variants(n.slowdown)
        if not n.compared or not planted:
            out.append(f"- slowdown night {i + 1}: nothing compared")
            continue
        ok = ok_cases_of(n.db, planted)
        name = "/".join(sorted(planted))
        watched = sum(1 for c in n.s["watch"] if variant_of(c) in planted)
        time_regressed = sum(1 for c in n.regression_cases("time") if variant_of(c) in planted)
        counts_regressed = sum(1 for c in n.regression_cases("counts") if variant_of(c) in planted)
        base = ok if ok is not None else "?"
        expect = "WATCH" if i == 0 else "time REGRESSION"
        hit = watched if i == 0 else time_regressed
        out.append(f"- slowdown night {i + 1} (expected: {expect}): {name} cases that ran: {base}; "
                   f"WATCH {watched}, time REGRESSION {time_regressed}, counts REGRESSION {counts_regressed}"
                   + (f"; detected {ratio(hit, ok)}" if ok else "") + f"; exit {n.exit}")
    return "\n".join(out) + "\n"


def main(argv):
    if len(argv) != 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip().splitlines()[3].strip(), file=sys.stderr)
        return 2
    try:
        nights = read_nights(argv[1])
    except OSError as error:
        print(f"nightly_figures.py: {error}", file=sys.stderr)
        return 2
    if not nights:
        print(f"nightly_figures.py: no night in {os.path.join(argv[1], 'nights.tsv')}", file=sys.stderr)
        return 2
    sys.stdout.write(report(nights))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
