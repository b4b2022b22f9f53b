"""CPU tests of tests/gpu/serving_reference.py (issue 25): its masks, built from PyTorch's own
diagonals, must be the keys each query sees (the same sets attnsweep's C++ builds its own way;
tests/test_variants_cpu.cpp checks those), and its mask labels attnsweep's.
   run: tests/python/run_python_tests.sh"""
import os
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "gpu"))

try:
    import torch
    import serving_reference as serving
except ImportError:
    torch = serving = None


def rows(mask):
    return [[int(x) for x in row] for row in mask.tolist()]


@unittest.skipIf(torch is None, "torch is not importable by this python")
class ServingMasks(unittest.TestCase):
    def test_bottom_right_is_causal_lower_right(self):
        mask = serving.allowed_mask(3, 7, bottom_right=True, causal=True, left=None, right=None, device="cpu")
        expected = torch.nn.attention.bias.causal_lower_right(3, 7)._materialize("cpu")
        self.assertTrue(torch.equal(mask, expected))
        self.assertEqual(rows(mask)[0], [1, 1, 1, 1, 1, 0, 0])

    def test_top_left_is_is_causal(self):
        mask = serving.allowed_mask(3, 7, bottom_right=False, causal=True, left=None, right=None, device="cpu")
        self.assertEqual(rows(mask), [[1, 0, 0, 0, 0, 0, 0], [1, 1, 0, 0, 0, 0, 0], [1, 1, 1, 0, 0, 0, 0]])

    def test_a_sliding_window_keeps_left_keys_and_the_diagonal(self):
        # decoding 2 queries over 6 keys, bottom right, 2 keys back (as the C++ test)
        mask = serving.allowed_mask(2, 6, bottom_right=True, causal=True, left=2, right=0, device="cpu")
        self.assertEqual(rows(mask), [[0, 0, 1, 1, 1, 0], [0, 0, 0, 1, 1, 1]])

    def test_a_two_sided_window_without_causal_is_aligned_to_the_bottom_right(self):
        mask = serving.allowed_mask(4, 4, bottom_right=False, causal=False, left=1, right=2, device="cpu")
        self.assertEqual(rows(mask), [[1, 1, 1, 0], [1, 1, 1, 1], [0, 1, 1, 1], [0, 0, 1, 1]])

    def test_labels_are_attnsweeps(self):
        case = {"causal": 1, "bottom_right": 1, "window_left": 4096, "window_right": 0}
        self.assertEqual(serving.mask_label(case), "causal_bottom_right window[4096,0]")
        self.assertEqual(serving.mask_label({"causal": 0, "bottom_right": 0, "window_left": 8, "window_right": None}),
                         "window[8,inf]")
        self.assertEqual(serving.mask_label({"causal": 1, "bottom_right": 0, "window_left": None, "window_right": None}),
                         "causal")

    def test_the_reference_attends_only_allowed_keys(self):
        gen = torch.Generator().manual_seed(0)
        q = torch.randn(1, 2, 3, 8, generator=gen)
        k = torch.randn(1, 2, 5, 8, generator=gen)
        v = torch.randn(1, 2, 5, 8, generator=gen)
        mask = serving.allowed_mask(3, 5, bottom_right=True, causal=True, left=1, right=0, device="cpu")
        out = serving.reference(q, k, v, 8 ** -0.5, mask)
        # row 0 sees keys 1 and 2 only: the same as attention over those two keys
        scores = (q[..., 0:1, :].double() @ k[..., 1:3, :].double().transpose(-2, -1)) * 8 ** -0.5
        expected = torch.softmax(scores, -1) @ v[..., 1:3, :].double()
        self.assertTrue(torch.allclose(out[..., 0:1, :], expected))


@unittest.skipIf(torch is None, "torch is not importable by this python")
class ServingReferenceInputs(unittest.TestCase):
    """A database that is not an attnsweep run is refused with one line and exit 2, before any GPU work."""

    def run_main(self, *args):
        import contextlib
        import io
        err, out = io.StringIO(), io.StringIO()
        argv = sys.argv
        sys.argv = ["serving_reference.py", *args]
        try:
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
                code = serving.main()
        finally:
            sys.argv = argv
        return code, err.getvalue(), out.getvalue()

    def test_a_foreign_sqlite_file_and_a_missing_one_exit_two(self):
        import sqlite3
        import tempfile
        with tempfile.TemporaryDirectory() as tmp:
            foreign = os.path.join(tmp, "foreign.db")
            db = sqlite3.connect(foreign)
            db.execute("CREATE TABLE t (x)")
            db.commit()
            db.close()
            code, err, out = self.run_main(foreign)
            self.assertEqual(code, 2)
            self.assertIn("no such table: runs", err)
            self.assertEqual(out, "")
            code, err, _ = self.run_main(os.path.join(tmp, "missing.db"))
            self.assertEqual(code, 2)
            self.assertIn("unable to open database file", err)
            # an attnsweep-shaped database without a run: no seed to draw with
            empty = os.path.join(tmp, "empty.db")
            db = sqlite3.connect(empty)
            with open(os.path.join(ROOT, "storage", "schema.sql")) as schema:
                db.executescript(schema.read())
            db.close()
            code, err, _ = self.run_main(empty)
            self.assertEqual((code, err), (2, f"error: {empty}: no run in it\n"))
            code, err, _ = self.run_main(empty, "--run", "7")
            self.assertEqual((code, err), (2, f"error: {empty}: no run 7 in it\n"))


if __name__ == "__main__":
    unittest.main()
