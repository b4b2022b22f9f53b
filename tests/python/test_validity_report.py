"""CPU tests of scripts/validity_report.py (issue 24): its summary of a database's validity
labels, on a database made by hand with the schema's own columns (planted labels, reasons,
graph checks and kernel/event ratios), and its exit code on a file that is not a database.
   run: tests/python/run_python_tests.sh"""
import os
import sqlite3
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "validity_report.py")

COLUMNS = ("variant, batch, heads, kv_heads, seq_len_q, seq_len_kv, head_dim, dtype, pass, status, validity, "
           "validity_reasons, gpu_time_us_median, kernel_time_us_per_forward, launch_latency_hidden, "
           "kernels_per_forward, graph_launches_per_replay, graph_output_rel_diff, graph_time_us_median, memcpy_per_forward, "
           "plan_index, run_id")


def make_db(path):
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE runs (run_id INTEGER PRIMARY KEY, name TEXT, started_at TEXT, device TEXT, device_name TEXT)")
    db.execute(f"CREATE TABLE cases ({COLUMNS})")
    db.execute("INSERT INTO runs VALUES (1, 'trust', '2026-12-01T22:00:00Z', 'cuda:0', 'NVIDIA H200')")
    rows = [
        ("sdpa_flash", 8, 16, 16, 1024, 1024, 64, "bf16", "forward", "ok", "ok", None, 96.0, 93.1, 1, 1, 1, 0.0, 94.0, 0),
        ("side_stream", 4, 16, 16, 2048, 2048, 64, "bf16", "forward", "ok", "suspect",
         "event_vs_kernels: the profiler's kernel time is 2000.0 us per pass, the event median 3.0 us", 3.0, 2000.0,
         1, 5, None, None, None, 0),
        ("skips", 4, 16, 16, 2048, 2048, 64, "bf16", "forward", "ok", "suspect",
         "graph_kernel_count: a profiled CUDA-graph replay launched 0 kernel(s), an eager pass 5; "
         "graph_output: the CUDA-graph replays' output is not finite (the eager output is)",
         2100.0, 2050.0, 1, 5, 0, None, 3.0, 0),
        ("sdpa_cudnn", 1, 32, 8, 1, 4096, 128, "fp16", "backward", "unsupported", None, None, None, None, None,
         None, None, None, None, None),
        # naive's clone: one memcpy eagerly, one more kernel in the replay: the same launches.
        ("naive", 8, 16, 16, 1024, 1024, 64, "bf16", "forward", "ok", "ok", None, 560.0, 550.0, 1, 5, 6, 0.0,
         540.0, 1),
    ]
    for i, row in enumerate(rows):
        db.execute(f"INSERT INTO cases ({COLUMNS}) VALUES ({', '.join('?' * 22)})", row + (i, 1))
    db.commit()
    db.close()


class ValidityReport(unittest.TestCase):
    def test_summary(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "r.db")
            make_db(path)
            out = subprocess.run([sys.executable, SCRIPT, path], capture_output=True, text=True, timeout=60)
            self.assertEqual(out.returncode, 0, out.stderr)
            text = out.stdout
            # What the summary must say of the planted database, a line (or the start of one) each.
            expected = [
                "# Validity labels: run 1 (trust, 2026-12-01T22:00:00Z, NVIDIA H200)",
                "| ok | 2 |",
                "| suspect | 2 |",
                "| (none: not timed) | 1 |",
                *(f"| {code} | 1 |" for code in ("event_vs_kernels", "graph_kernel_count", "graph_output")),
                # Ratios of the four timed cases: 0.970, 666.667, 0.976, 0.982.
                "over 4 timed CUDA cases with launch latency held out: min 0.970, median 0.979, max 666.667.",
                "- side_stream 4x16x2048x64 bf16 forward: 666.667",
                "CUDA-graph replays profiled: 3; kernels and copies equal to the eager pass's: 2.",
                "- skips 4x16x2048x64 bf16 forward: replay 0, eager 5",
                "| skips | 4x16x2048x64 | bf16 | forward | graph_kernel_count:",
            ]
            for line in expected:
                with self.subTest(line=line):
                    self.assertIn(line, text)

    def test_not_a_database(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "not.db")
            with open(path, "w") as f:
                f.write("hello")
            out = subprocess.run([sys.executable, SCRIPT, path], capture_output=True, text=True, timeout=60)
            self.assertEqual(out.returncode, 2)
            self.assertIn("not.db:", out.stderr)


if __name__ == "__main__":
    unittest.main()
