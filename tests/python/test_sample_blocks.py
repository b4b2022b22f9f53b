"""CPU tests of scripts/sample_blocks.py (the block-by-block look at a case's times): what it
refuses, with exit 2 and one line, before it touches a GPU.
   run: tests/python/run_python_tests.sh"""
import os
import sqlite3
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from script_main import call_main, import_with_torch, needs_torch  # noqa: E402

sample_blocks = import_with_torch("sample_blocks")


def run_main(*args):
    """sample_blocks.py's main() with these arguments: (exit code, stderr, stdout)."""
    return call_main(sample_blocks.main, "sample_blocks.py", *args)


def make_db(path):
    """A run with case 0 ok and case 1 unsupported (the columns serving_reference.read_cases reads)."""
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE runs (run_id INTEGER PRIMARY KEY, seed INTEGER)")
    db.execute("INSERT INTO runs VALUES (1, 0)")
    db.execute("CREATE TABLE cases (run_id, plan_index, variant, batch, heads, kv_heads, seq_len_q, seq_len_kv, "
               "head_dim, dtype, causal, causal_bottom_right, window_left, window_right, pass, status, "
               "kernels_per_forward, memcpy_per_forward, memset_per_forward, gpu_time_us_median, rel_error, "
               "sdpa_backend, validity, seq_lens_q, seq_lens_kv, page_size INTEGER NOT NULL DEFAULT 0, query_tokens)")
    for index, status in ((0, "ok"), (1, "unsupported")):
        db.execute("INSERT INTO cases (run_id, plan_index, variant, batch, heads, kv_heads, seq_len_q, seq_len_kv, "
                   "head_dim, dtype, causal, causal_bottom_right, pass, status) "
                   "VALUES (1, ?, 'fa3', 2, 4, 4, 8, 8, 64, 'bf16', 1, 0, 'forward', ?)", (index, status))
    db.commit()
    db.close()


@needs_torch(sample_blocks)
class SampleBlocks(unittest.TestCase):
    def test_a_case_that_is_not_there_or_not_ok_exits_two(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "r.db")
            make_db(path)
            self.assertEqual(run_main(path, "--plan-index", "0", "7"),
                             (2, f"error: {path}: no ok forward case with plan index 7 in run 1\n", ""))
            self.assertEqual(run_main(path, "--plan-index", "1"),
                             (2, f"error: {path}: no ok forward case with plan index 1 in run 1\n", ""))
            self.assertEqual(run_main(path, "--plan-index", "0", "--run", "3"),
                             (2, f"error: {path}: no run 3 in it\n", ""))
            fifo = os.path.join(tmp, "fifo")
            os.mkfifo(fifo)
            self.assertEqual(run_main(fifo, "--plan-index", "0"), (2, f"error: {fifo}: not a regular file\n", ""))

    def test_a_database_without_runs_and_a_bad_op_library_exit_two(self):
        with tempfile.TemporaryDirectory() as tmp:
            empty = os.path.join(tmp, "empty.db")
            sqlite3.connect(empty).close()
            code, err, out = run_main(empty, "--plan-index", "0")
            self.assertEqual((code, out), (2, ""))
            self.assertTrue(err.startswith(f"error: {empty}: no such table: runs"), err)
            path = os.path.join(tmp, "r.db")
            make_db(path)
            self.assertEqual(run_main(path, "--plan-index", "0", "--fa3", "fa3"),
                             (2, "error: --fa3: --fa3 'fa3': expected NAME=PATH "
                                 "(e.g. fa3=.devwheels/fa3/fa3_fwd/_C.abi3.so)\n", ""))
            self.assertEqual(run_main(path, "--plan-index", "0", "--fa3", f"fa3={tmp}/none.so"),
                             (2, f"error: --fa3: {tmp}/none.so: no such file or folder\n", ""))

    def test_counts_that_make_no_block_are_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "r.db")
            make_db(path)
            for args in (["--blocks", "0"], ["--samples", "0"], ["--gap-ms", "-1"]):
                with self.assertRaises(SystemExit) as exit_:
                    run_main(path, "--plan-index", "0", *args)
                self.assertEqual(exit_.exception.code, 2, args)
            with self.assertRaises(SystemExit) as exit_:
                run_main(path, "--plan-index", "0", "--protocol", "v3")
            self.assertEqual(exit_.exception.code, 2)


if __name__ == "__main__":
    unittest.main()
