"""CPU tests of proofs/nightly/nightly_figures.py (issue 24's false-alarm and detection figures):
its reading of nightly summaries (a GPU-like first slowdown night, where the planted knob
also doubles the kernel count, with a kernel-differences table that is no finding), the
figures over a made-up work folder; and proofs/nightly/device_nightly.sh PHASE=W and
proofs/trust/device_kernel_diff.sh end to end on the CPU with the built attnsweep (skipped when
there is none).
   run: tests/python/run_python_tests.sh"""
import datetime
import os
import sqlite3
import subprocess
import sys
import tarfile
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "proofs", "nightly"))

import nightly_figures as nf  # noqa: E402


def head(stamp, tonight, window=()):
    """A summary's head as attnsweep nightly writes it: tonight's run and, on a night compared, the
    time window's nights (stamps, newest first), the newest of them the baseline."""
    text = f"""# attnsweep nightly {stamp}

- config: `configs/nightly_window.yaml`
- tonight: `/tmp/w/{tonight}.db` run 1, 6 of 6 planned cases, status done
"""
    if window:
        started = datetime.datetime.strptime(window[0], "%Y%m%dT%H%M%SZ").strftime("%Y-%m-%dT%H:%M:%SZ")
        nights = f"{len(window)} good night{'s' if len(window) > 1 else ''}"
        files = ", ".join(f"nightly-{night}.db" for night in window)
        text += f"""- baseline: `/tmp/w/history/nightly-{window[0]}.db run 1 (started {started})`
- time window: {nights} ({files}): per case the median of their medians; a time regression needs 2 nights in a row slower than the window
"""
    return text


FIRST = head("20261201T213419Z", "night1") + """
No previous finished night on cuda in `/tmp/w/history`: tonight's run is the first baseline; nothing was compared.
"""

COUNTS_TAIL = """<details><summary>Counts per verdict</summary>

| what | count |
| --- | ---: |
{rows}
SAME under 5% or 2 us change of the median; FASTER/SLOWER need ...

</details>
"""


def counts(same, slower, ambiguous, findings):
    """The counts table of a night compared: its 6 cases matched, one of them not timed."""
    values = {"time SAME": same, "time FASTER": 0, "time SLOWER": slower, "time AMBIGUOUS": ambiguous,
              "time NOT_TIMED": 1, **findings, "cases matched": 6, "cases only in the baseline": 0,
              "cases only in the candidate": 0}
    return COUNTS_TAIL.format(rows="".join(f"| {k} | {v} |\n" for k, v in values.items()))


IDENTICAL = head("20261201T213420Z", "night2", ["20261201T213419Z"]) + """
### attnsweep compare: 0 regressions, 0 improvements, 5 same, 1 ambiguous

**Environment** (1 fact differs; informational)

| fact | baseline | candidate |
| --- | --- | --- |
| temperature_start_c | 42 | 41 |

**Findings** (1 finding in 1 case; SAME cases left out)

| case | check | field | baseline | candidate | result | detail |
| --- | --- | --- | --- | --- | --- | --- |
| sdpa_cudnn 1x32/8x1x4096x128 fp16 full cuda | time | time | 15.9 us (window of 1 night, 15.9-15.9 us) | 17.1 us (n=2000) | note | AMBIGUOUS: the median moved +7.5% but p10 only +0.1%: ... |

""" + counts(same=4, slower=0, ambiguous=1, findings={"time info": 1})

# The first slowdown night on a GPU: each sdpa_flash forward runs twice, so its kernel
# count doubles (a counts REGRESSION against the newest good night, failing at once) and
# its time is a WATCH item against the window.
SLOW1 = head("20261201T213425Z", "slow1", ["20261201T213424Z", "20261201T213419Z"]) + """
**Watch** (2 cases slower than the window tonight, not yet on 2 nights in a row: not a failure; a regression if slower again next night)

- sdpa_flash 8x16x1024x64 bf16 causal cuda: +98.2% against 96.7 us (window of 2 nights, 96.5-96.9 us)
- sdpa_flash 8x32/8x1x16384x128 bf16 full cuda: +84.6% against 142.7 us (window of 2 nights, 142.7-156.5 us)

### attnsweep compare: 2 regressions, 0 improvements, 4 same

**Environment** (1 fact differs; informational)

| fact | baseline | candidate |
| --- | --- | --- |
| env_vars.ATTNSWEEP_TEST_SLOWDOWN | (unset) | sdpa_flash |

**Findings** (4 findings in 2 cases; SAME cases left out)

| case | check | field | baseline | candidate | result | detail |
| --- | --- | --- | --- | --- | --- | --- |
| sdpa_flash 8x16x1024x64 bf16 causal cuda | counts | kernels_per_forward | 1 | 2 | REGRESSION | launches per forward changed by +1 |
| sdpa_flash 8x16x1024x64 bf16 causal cuda | time | time | 96.7 us (window of 2 nights, 96.5-96.9 us) | 191.6 us (n=261) | note | WATCH: SLOWER +98.2% against the window, p \\< 1e-4, on 1 of the 2 nights in a row that make a regression |
| sdpa_flash 8x32/8x1x16384x128 bf16 full cuda | counts | kernels_per_forward | 1 | 2 | REGRESSION | launches per forward changed by +1 |
| sdpa_flash 8x32/8x1x16384x128 bf16 full cuda | time | time | 142.7 us (window of 2 nights, 142.7-156.5 us) | 263.4 us (n=370) | note | WATCH: SLOWER +84.6% against the window, p \\< 1e-4, on 1 of the 2 nights in a row that make a regression |

**Kernel differences** (2 cases; ...)

- sdpa_flash 8x16x1024x64 bf16 causal cuda: 1 kernel (0 removed, 0 added, 1 changed)

| change | kernel | launches | time us | share | grid | block | registers | shared KiB | occupancy |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
| changed | flash_fwd_kernel\\<Flash_fwd_kernel_traits\\<64, 128, 128, 4, false, ...\\>, ...\\> | 1 -\\> 2 | 94.0 -\\> 188.0 | 100.0% | [8,16,8] | [128,1,1] | 255 | 48.0 | 13% |

""" + counts(same=3, slower=2, ambiguous=0, findings={"time info": 2, "counts regression": 2})

# The second slowdown night: kernel counts as last night's (the first slowdown night, a good
# night), the time slower than the window on 2 nights in a row: REGRESSION.
SLOW2 = head("20261201T213426Z", "slow2", ["20261201T213425Z", "20261201T213424Z"]) + """
### attnsweep compare: 2 regressions, 0 improvements, 4 same

**Environment**: no difference.

**Findings** (2 findings in 2 cases; SAME cases left out)

| case | check | field | baseline | candidate | result | detail |
| --- | --- | --- | --- | --- | --- | --- |
| sdpa_flash 8x16x1024x64 bf16 causal cuda | time | time | 96.9 us (window of 2 nights, 96.9-191.6 us) | 191.0 us (n=262) | REGRESSION | SLOWER +97.1% against the window, p \\< 1e-4, on 2 nights in a row |
| sdpa_flash 8x32/8x1x16384x128 bf16 full cuda | time | time | 156.5 us (window of 2 nights, 156.5-263.4 us) | 262.0 us (n=372) | REGRESSION | SLOWER +67.4% against the window, p \\< 1e-4, on 2 nights in a row |

""" + counts(same=3, slower=2, ambiguous=0, findings={"time regression": 2})


def make_night_db(path, variants_ok):
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE runs (run_id INTEGER PRIMARY KEY)")
    db.execute("CREATE TABLE cases (case_id INTEGER PRIMARY KEY, run_id INTEGER, variant TEXT, status TEXT)")
    db.execute("INSERT INTO runs VALUES (1)")
    for variant, status in variants_ok:
        db.execute("INSERT INTO cases (run_id, variant, status) VALUES (1, ?, ?)", (variant, status))
    db.commit()
    db.close()


class Parsing(unittest.TestCase):
    def test_first_night(self):
        s = nf.parse_summary(FIRST)
        self.assertTrue(s["first_night"])
        self.assertIsNone(s["headline"])
        self.assertEqual(s["findings"], [])

    def test_gpu_slowdown_night(self):
        s = nf.parse_summary(SLOW1)
        self.assertEqual(s["window_nights"], 2)
        self.assertEqual(s["watch_header"], 2)
        self.assertEqual(s["watch"], ["sdpa_flash 8x16x1024x64 bf16 causal cuda",
                                      "sdpa_flash 8x32/8x1x16384x128 bf16 full cuda"])
        self.assertEqual(s["headline"], "attnsweep compare: 2 regressions, 0 improvements, 4 same")
        # Four findings; the kernel table after them is none.
        self.assertEqual([(f["check"], f["result"]) for f in s["findings"]],
                         [("counts", "REGRESSION"), ("time", "note")] * 2)
        self.assertIn("p < 1e-4", s["findings"][1]["detail"])  # unescaped
        self.assertEqual(s["counts"]["counts regression"], 2)
        self.assertEqual(s["counts"]["cases matched"], 6)

    def test_cells_keep_escaped_pipes(self):
        self.assertEqual(nf.cells("| a \\| b | c |"), ["a | b", "c"])

    def test_planted_variants(self):
        self.assertEqual(nf.planted_variants("sdpa_flash"), {"sdpa_flash"})
        self.assertEqual(nf.planted_variants("sdpa_flash:8,naive"), {"sdpa_flash", "naive"})
        self.assertEqual(nf.planted_variants("-"), set())


class Figures(unittest.TestCase):
    def test_report(self):
        with tempfile.TemporaryDirectory() as work:
            nights = [("night1", "identical", "0", "20", "-", FIRST), ("night2", "identical", "0", "19", "-", IDENTICAL),
                      ("slow1", "slowdown", "1", "21", "sdpa_flash", SLOW1),
                      ("slow2", "slowdown", "1", "21", "sdpa_flash", SLOW2)]
            with open(os.path.join(work, "nights.tsv"), "w") as f:
                f.write("label\trole\texit\tseconds\tslowdown\n")
                for label, role, code, seconds, knob, text in nights:
                    f.write("\t".join((label, role, code, seconds, knob)) + "\n")
                    with open(os.path.join(work, label + ".md"), "w") as md:
                        md.write(text)
            for label in ("slow1", "slow2"):
                make_night_db(os.path.join(work, label + ".db"),
                              [("sdpa_flash", "ok"), ("sdpa_flash", "ok"), ("sdpa_flash", "unsupported"),
                               ("sdpa_cudnn", "ok"), ("naive", "ok"), ("sdpa_auto", "ok")])
            text = nf.report(nf.read_nights(work))
        self.assertIn("| 1 (first) | (none: first night) | - | - | 0 |", text)
        self.assertIn("| 2 identical | window of 1 night | 0 | 0 | 0 |", text)
        self.assertIn("| slowdown, 1st night | window of 2 nights | 2 (2 sdpa_flash) | "
                      "2 (counts 2); 2 of them sdpa_flash | 1 |", text)
        self.assertIn("| slowdown, 2nd night | window of 2 nights | 0 | 2 (time 2); 2 of them sdpa_flash | 1 |", text)
        self.assertIn("0 of 5 (0.0%) case-comparisons judged on time", text)
        self.assertIn("AMBIGUOUS 1, FASTER 0", text)
        self.assertIn("slowdown night 1, the cases not planted: 0 of 3 (0.0%)", text)
        self.assertIn("slowdown night 1 (expected: WATCH): sdpa_flash cases that ran: 2; WATCH 2, "
                      "time REGRESSION 0, counts REGRESSION 2; detected 2 of 2 (100.0%); exit 1", text)
        self.assertIn("slowdown night 2 (expected: time REGRESSION): sdpa_flash cases that ran: 2; WATCH 0, "
                      "time REGRESSION 2, counts REGRESSION 0; detected 2 of 2 (100.0%); exit 1", text)

    def test_unreadable_work(self):
        with tempfile.TemporaryDirectory() as work:
            result = subprocess.run([sys.executable, os.path.join(ROOT, "proofs/nightly/nightly_figures.py"), work],
                                    capture_output=True, text=True)
        self.assertEqual(result.returncode, 2)
        self.assertIn("nights.tsv", result.stderr)


ATTNSWEEP = os.environ.get("ATTNSWEEP_BIN") or os.path.join(ROOT, "build", "attnsweep")


@unittest.skipUnless(os.access(ATTNSWEEP, os.X_OK), "no built attnsweep (build/attnsweep or $ATTNSWEEP_BIN)")
class DeviceScriptDryRun(unittest.TestCase):
    """proofs/nightly/device_nightly.sh PHASE=W on the CPU: the real attnsweep, a CPU config, the planted
    slowdown 8 times over (a CPU median is noisier than a GPU's; the CPU has no kernel counts, so
    the first slowdown night is a WATCH item, exit 0, as the alert rule says)."""

    def test_phase_w(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "out")
            env = dict(os.environ, PHASE="W", OUT=out, TMPDIR=tmp, BIN=ATTNSWEEP, DEVICE="cpu",
                       CONFIG="tests/python/data/nightly_window_cpu.yaml", SLOWDOWN="sdpa_flash:8",
                       NIGHTLY_ARGS="--threshold 99", IDENTICAL_NIGHTS="4", OMP_NUM_THREADS="1")
            result = subprocess.run(["bash", os.path.join(ROOT, "proofs/nightly/device_nightly.sh")], env=env,
                                    capture_output=True, text=True, timeout=240)
            log = result.stdout + result.stderr
            self.assertEqual(result.returncode, 0, log)
            self.assertEqual(sorted(os.listdir(out)), ["figures.md", "history.html", "history.tgz", "machine.txt",
                                                       "nights.tgz", "slow1.md", "slow2.md"], log)
            with open(os.path.join(out, "figures.md")) as f:
                figures = f.read()
            with tarfile.open(os.path.join(out, "nights.tgz")) as tar:
                manifest = tar.extractfile("./nights.tsv").read().decode().splitlines()
            with tarfile.open(os.path.join(out, "history.tgz")) as tar:
                stored = [name for name in tar.getnames() if name.endswith(".db")]
        self.assertEqual([line.split("\t")[:3] for line in manifest[1:]],
                         [["night1", "identical", "0"], ["night2", "identical", "0"], ["night3", "identical", "0"],
                          ["night4", "identical", "0"], ["slow1", "slowdown", "0"], ["slow2", "slowdown", "1"]], log)
        self.assertEqual(len(stored), 6)
        self.assertIn("| 2-4 identical | window of 1-3 nights |", figures)
        self.assertIn("slowdown night 1 (expected: WATCH): sdpa_flash cases that ran: 3; WATCH 3, "
                      "time REGRESSION 0, counts REGRESSION 0; detected 3 of 3 (100.0%); exit 0", figures)
        self.assertIn("slowdown night 2 (expected: time REGRESSION): sdpa_flash cases that ran: 3; WATCH 0, "
                      "time REGRESSION 3, counts REGRESSION 0; detected 3 of 3 (100.0%); exit 1", figures)


@unittest.skipUnless(os.access(ATTNSWEEP, os.X_OK), "no built attnsweep (build/attnsweep or $ATTNSWEEP_BIN)")
class KernelDiffDryRun(unittest.TestCase):
    """proofs/trust/device_kernel_diff.sh on the CPU: three runs, the second with a variable set, and
    compare's three formats (a CPU has no kernels: the plumbing, not the lists)."""

    def test_script(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "out")
            env = dict(os.environ, OUT=out, TMPDIR=tmp, BIN=ATTNSWEEP, DEVICE="cpu", OMP_NUM_THREADS="1",
                       CONFIG="tests/python/data/kernel_diff_cpu.yaml", VARIABLE="ATTNSWEEP_TEST_SLOWDOWN=sdpa_auto:8")
            result = subprocess.run(["bash", os.path.join(ROOT, "proofs/trust/device_kernel_diff.sh")], env=env,
                                    capture_output=True, text=True, timeout=120)
            log = result.stdout + result.stderr
            self.assertEqual(result.returncode, 0, log)
            self.assertEqual(sorted(os.listdir(out)), ["compare.json", "compare.md", "compare.txt", "control.txt",
                                                       "machine.txt", "runs.tgz"], log)
            with open(os.path.join(out, "compare.json")) as f:
                self.assertIn('"format": "attnsweep-compare/1"', f.read())
            with tarfile.open(os.path.join(out, "runs.tgz")) as tar:
                names = tar.getnames()
        self.assertIn("environment: env_vars.ATTNSWEEP_TEST_SLOWDOWN: (unset) -> sdpa_auto:8", log)
        self.assertIn("sdpa_auto 1x4x256x32 fp32 causal cpu: time regression; 0 kernels listed", log)
        for label in ("first", "second", "control"):
            self.assertIn(f"./{label}-backup.db", names)


if __name__ == "__main__":
    unittest.main()
