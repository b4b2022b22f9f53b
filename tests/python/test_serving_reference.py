"""CPU tests of scripts/serving_reference.py (issue 25): its masks, built from PyTorch's own
diagonals, must be the keys each query sees (the same sets attnsweep's C++ builds its own way;
tests/test_variants_cpu.cpp checks those), and its mask labels attnsweep's; for variable-length
batches and paged KV caches (schema 13) its lengths, cu_seqlens, packing, padded mask, per-sequence
reference, page table and paged cache, and the arguments FA3 gets (a stand-in op on the CPU).
   run: tests/python/run_python_tests.sh"""
import contextlib
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from script_main import ROOT, call_main, import_with_torch, needs_torch  # noqa: E402

torch = import_with_torch("torch")
serving = import_with_torch("serving_reference")


def rows(mask):
    return [[int(x) for x in row] for row in mask.tolist()]


def run_main(*args):
    """serving_reference.py's main() with these arguments: (exit code, stderr, stdout)."""
    return call_main(serving.main, "serving_reference.py", *args)


@needs_torch(serving)
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
        out = serving.masked_reference(q, k, v, 8 ** -0.5, mask)
        # row 0 sees keys 1 and 2 only: the same as attention over those two keys
        scores = (q[..., 0:1, :].double() @ k[..., 1:3, :].double().transpose(-2, -1)) * 8 ** -0.5
        expected = torch.softmax(scores, -1) @ v[..., 1:3, :].double()
        self.assertTrue(torch.allclose(out[..., 0:1, :], expected))

    def test_naive_with_sinks_and_a_window_is_the_float64_reference_and_sdpa_refuses(self):
        # gpt-oss's layout: bottom-right causal with a window, GQA 4/2, one sink logit per query head.
        case = {"causal": 1, "bottom_right": 1, "window_left": 2, "window_right": 0, "sinks": 1, "varlen": False}
        q, k, v = serving.make_inputs(2, 4, 2, 3, 7, 8, torch.float32, 11, device="cpu")
        scale = 8 ** -0.5
        allowed = serving.case_mask(case, 3, 7, "cpu")
        mods = serving.ScoreMods(sinks=True, q=q, k=k, seed=11)
        self.assertEqual(tuple(mods.sinks.shape), (4,))
        expected = serving.masked_reference(q, k, v, scale, allowed, mods=mods)
        for variant in ("naive", "naive_inplace"):
            out = serving.forward_of(variant, q, k, v, scale, case, allowed, mods.sinks)()
            self.assertLess(((out.double() - expected).norm() / expected.norm()).item(), 1e-6, variant)
        # The sinks take probability: without them row 0 of head 0 would sum its weights to 1.
        plain = serving.masked_reference(q, k, v, scale, allowed)
        self.assertGreater(((plain - expected).norm() / expected.norm()).item(), 1e-2)
        # By hand for one row: keys 2..4 are row 0's (the bottom right with a 2-key window), and head 1's
        # sink is one more softmax column that gives no value.
        s = (q[0, 1, 0].double() @ k[0, 0, 2:5].double().T) * scale
        weights = torch.softmax(torch.cat([s, mods.sinks[1:2].double()]), 0)[:3]
        self.assertTrue(torch.allclose(expected[0, 1, 0], weights @ v[0, 0, 2:5].double()))
        with self.assertRaisesRegex(RuntimeError, "no attention sinks"):
            serving.forward_of("sdpa_flash", q, k, v, scale, case, allowed, mods.sinks)()


@needs_torch(serving)
class ServingReferenceInputs(unittest.TestCase):
    """A database that is not an attnsweep run is refused with one line and exit 2, before any GPU work."""

    def run_main(self, *args):
        return run_main(*args)

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
            with open(os.path.join(ROOT, "runner", "storage", "schema.sql")) as schema:
                db.executescript(schema.read())
            db.close()
            code, err, _ = self.run_main(empty)
            self.assertEqual((code, err), (2, f"error: {empty}: no run in it\n"))
            code, err, _ = self.run_main(empty, "--run", "7")
            self.assertEqual((code, err), (2, f"error: {empty}: no run 7 in it\n"))
            # A FIFO (which sqlite would wait on for ever) and a device are not results files.
            fifo = os.path.join(tmp, "fifo")
            os.mkfifo(fifo)
            for path in (fifo, "/dev/zero"):
                self.assertEqual(self.run_main(path), (2, f"error: {path}: not a regular file\n", ""))
            # '?' and '#' in a name are the file's, not the URI's.
            odd = os.path.join(tmp, "it's a #1 run?.db")
            os.rename(empty, odd)
            code, err, _ = self.run_main(odd)
            self.assertEqual((code, err), (2, f"error: {odd}: no run in it\n"))



def varlen_case(**changes):
    """A completed variable-length case: 3 sequences, queries [1, 2, 3], keys [4, 2, 5]."""
    case = {"plan_index": 0, "variant": "naive", "batch": 3, "heads": 4, "kv_heads": 2, "seq_len_q": 3,
            "seq_len_kv": 5, "head_dim": 8, "dtype": "fp32", "causal": 1, "bottom_right": 1, "window_left": None,
            "window_right": None, "seq_lens_q": "1,2,3", "seq_lens_kv": "4,2,5", "page_size": 0,
            "query_tokens": 6}
    case.update(changes)
    return serving.complete_case(case)


def uniform_case(**changes):
    return varlen_case(**{"seq_lens_q": None, "seq_lens_kv": None, "query_tokens": None, **changes})


def fake_fa3(calls):
    """FA3's fwd as its schema and FlashAttention's documentation describe it, written with index
    arithmetic (not serving_reference's tril/triu), in float64: q (B, Sq, H, D) or packed with
    cu_seqlens_q; k, v (B, Skv, KV, D), packed with cu_seqlens_k, or a paged cache with page_table
    and seqused_k; causal and the window aligned to the bottom right of each sequence."""
    def fwd(q, k, v, cu_seqlens_q=None, cu_seqlens_k=None, max_seqlen_q=None, max_seqlen_k=None, page_table=None,
            seqused_k=None, softmax_scale=None, is_causal=False, window_size_left=-1, window_size_right=-1):
        calls.append({name: value for name, value in locals().items() if value is not None and name not in ("q", "k", "v", "calls")})
        batch = len(cu_seqlens_q) - 1 if cu_seqlens_q is not None else q.shape[0]
        outs = []
        for b in range(batch):
            qb = q[cu_seqlens_q[b]:cu_seqlens_q[b + 1]] if cu_seqlens_q is not None else q[b]
            if page_table is not None:
                n, size = int(seqused_k[b]), k.shape[1]
                pages = page_table[b, :(n + size - 1) // size].long()
                kb, vb = (t[pages].reshape(-1, t.shape[2], t.shape[3])[:n] for t in (k, v))
            elif cu_seqlens_k is not None:
                kb, vb = k[cu_seqlens_k[b]:cu_seqlens_k[b + 1]], v[cu_seqlens_k[b]:cu_seqlens_k[b + 1]]
            else:
                kb, vb = k[b], v[b]
            nq, nkv = qb.shape[0], kb.shape[0]
            repeats = qb.shape[1] // kb.shape[1]
            kb, vb = kb.double().repeat_interleave(repeats, 1), vb.double().repeat_interleave(repeats, 1)
            scores = torch.einsum("ihd,jhd->hij", qb.double(), kb) * softmax_scale
            for i in range(nq):
                for j in range(nkv):
                    diagonal = i + nkv - nq
                    allowed = not (is_causal and j > diagonal)
                    allowed &= not (window_size_left >= 0 and j < diagonal - window_size_left)
                    allowed &= not (window_size_right >= 0 and j > diagonal + window_size_right)
                    if not allowed:
                        scores[:, i, j] = float("-inf")
            outs.append(torch.einsum("hij,jhd->ihd", torch.softmax(scores, -1), vb))
        out = torch.cat(outs) if cu_seqlens_q is not None else torch.stack(outs)
        return out, None
    return fwd


@needs_torch(serving)
class ServingVariableLength(unittest.TestCase):
    """Variable-length batches and paged KV caches (schema 13): the pure parts, on the CPU."""

    def test_lengths_are_parsed_and_checked_against_the_case(self):
        self.assertEqual(serving.parse_lengths("512,3000,8192,16384", 4, 16384, "seq_lens_kv"), [512, 3000, 8192, 16384])
        self.assertEqual(serving.parse_lengths("1,1,1,1", 4, 1, "seq_lens_q"), [1, 1, 1, 1])
        for text, error in (("1,2", "2 lengths for a batch of 3"), ("1,2,4", "the largest is 4, the case says 3"),
                            ("0,2,3", "at least 1"), ("1,x,3", "not comma-separated integers"),
                            ("", "not comma-separated integers")):
            with self.assertRaisesRegex(ValueError, error):
                serving.parse_lengths(text, 3, 3, "seq_lens_q")

    def test_a_case_gets_its_lengths(self):
        case = varlen_case()
        self.assertEqual((case["varlen"], case["lens_q"], case["lens_kv"], case["page_size"]),
                         (True, [1, 2, 3], [4, 2, 5], 0))
        case = uniform_case(page_size=None)  # a database before schema 13
        self.assertEqual((case["varlen"], case["lens_q"], case["lens_kv"], case["page_size"]),
                         (False, [3, 3, 3], [5, 5, 5], 0))
        with self.assertRaisesRegex(ValueError, "query_tokens 7: the query lengths sum to 6"):
            varlen_case(query_tokens=7)
        with self.assertRaisesRegex(ValueError, "query_tokens 6: the query lengths sum to 9"):
            uniform_case(query_tokens=6)

    def test_cu_seqlens(self):
        q = serving.cu_seqlens([1, 2, 3], "cpu")
        k = serving.cu_seqlens([4, 2, 5], "cpu")
        self.assertEqual((q.tolist(), k.tolist()), ([0, 1, 3, 6], [0, 4, 6, 11]))
        self.assertEqual((q.dtype, q.device.type), (torch.int32, "cpu"))

    def test_packing_keeps_each_sequences_rows_heads_second(self):
        x = torch.arange(3 * 2 * 5 * 4, dtype=torch.float32).reshape(3, 2, 5, 4)
        packed = serving.pack(x, [1, 2, 3])
        self.assertEqual(tuple(packed.shape), (6, 2, 4))
        cu = [0, 1, 3, 6]
        for b, n in enumerate([1, 2, 3]):
            for i in range(n):
                for h in range(2):
                    self.assertTrue(torch.equal(packed[cu[b] + i, h], x[b, h, i]))
        self.assertTrue(packed.is_contiguous())

    def test_the_padded_mask_of_three_sequences(self):
        mask = serving.padded_mask(varlen_case(), "cpu")
        self.assertEqual((tuple(mask.shape), mask.dtype), ((3, 1, 3, 5), torch.bool))
        # sequence 0: 1 query over 4 keys (bottom right: all 4), then two padded rows
        self.assertEqual(rows(mask[0, 0]), [[1, 1, 1, 1, 0], [1, 0, 0, 0, 0], [1, 0, 0, 0, 0]])
        # sequence 1: 2 over 2 (the square causal), a padded row; keys 2.. never
        self.assertEqual(rows(mask[1, 0]), [[1, 0, 0, 0, 0], [1, 1, 0, 0, 0], [1, 0, 0, 0, 0]])
        # sequence 2: 3 over 5, bottom right
        self.assertEqual(rows(mask[2, 0]), [[1, 1, 1, 0, 0], [1, 1, 1, 1, 0], [1, 1, 1, 1, 1]])
        top_left = serving.padded_mask(varlen_case(bottom_right=0), "cpu")
        self.assertEqual(rows(top_left[0, 0])[0], [1, 0, 0, 0, 0])
        self.assertEqual(rows(top_left[2, 0]), [[1, 0, 0, 0, 0], [1, 1, 0, 0, 0], [1, 1, 1, 0, 0]])
        window = serving.padded_mask(varlen_case(window_left=1, window_right=0), "cpu")
        self.assertEqual(rows(window[0, 0])[0], [0, 0, 1, 1, 0])
        self.assertEqual(rows(window[2, 0]), [[0, 1, 1, 0, 0], [0, 0, 1, 1, 0], [0, 0, 0, 1, 1]])

    def test_padded_rows_see_key_zero_only_and_real_rows_no_key_past_their_sequence(self):
        lens_q, lens_kv = [3, 1, 4, 2], [7, 3, 4, 9]
        for causal, bottom_right, left in ((0, 0, None), (1, 0, None), (1, 1, None), (1, 1, 2), (0, 0, 1)):
            case = varlen_case(batch=4, seq_len_q=4, seq_len_kv=9, seq_lens_q="3,1,4,2", seq_lens_kv="7,3,4,9",
                               query_tokens=10, causal=causal, bottom_right=bottom_right, window_left=left)
            mask = serving.padded_mask(case, "cpu")
            for b, (nq, nkv) in enumerate(zip(lens_q, lens_kv)):
                self.assertFalse(mask[b, 0, :nq, nkv:].any())
                self.assertTrue(torch.equal(mask[b, 0, :nq, :nkv], serving.case_mask(case, nq, nkv, "cpu")))
                for i in range(nq, 4):
                    self.assertEqual(rows(mask[b, 0, i:i + 1])[0], [1] + [0] * 8)

    def test_the_float64_reference_is_each_sequence_alone(self):
        case = varlen_case(window_left=2)
        q, k, v = serving.make_inputs(3, 4, 2, 3, 5, 8, torch.float32, 5, device="cpu")
        scale = 8 ** -0.5
        ref = serving.varlen_reference(q, k, v, scale, case)
        self.assertEqual((tuple(ref.shape), ref.dtype), ((6, 4, 8), torch.float64))
        cu = [0, 1, 3, 6]
        for b, (nq, nkv) in enumerate(zip([1, 2, 3], [4, 2, 5])):
            alone = serving.masked_reference(q[b:b + 1, :, :nq].clone(), k[b:b + 1, :, :nkv].clone(),
                                             v[b:b + 1, :, :nkv].clone(), scale, serving.case_mask(case, nq, nkv, "cpu"))
            self.assertTrue(torch.equal(ref[cu[b]:cu[b + 1]], alone[0].transpose(0, 1)))
        # one key/value head and one query row at a time gives the same
        self.assertTrue(torch.allclose(serving.varlen_reference(q, k, v, scale, case, chunk_elements=1), ref,
                                       rtol=0, atol=1e-12))
        # and the padded batch with the padded mask has the same real rows
        padded = serving.masked_reference(q, k, v, scale, serving.padded_mask(case, "cpu"))
        self.assertTrue(torch.allclose(serving.pack(padded, [1, 2, 3]), ref, rtol=0, atol=1e-12))

    def test_a_uniform_batch_too_large_for_one_score_tensor_is_referenced_in_pieces(self):
        # gpt-oss's window at 32k tokens (2x64/8 heads) needs 1.1e11 float64 scores at once: the reference goes
        # through varlen_reference's pieces (key/value heads, then query rows) and the output is compared packed.
        case = uniform_case(window_left=2)
        q, k, v = serving.make_inputs(3, 4, 2, 3, 5, 8, torch.float32, 5, device="cpu")
        scale = 8 ** -0.5
        whole = serving.masked_reference(q, k, v, scale, serving.case_mask(case, 3, 5, "cpu"))
        for chunk in (1, 25, 30, 60):  # a row, two rows, one head group's rows, both groups at once
            pieces = serving.varlen_reference(q, k, v, scale, case, chunk_elements=chunk)
            self.assertTrue(torch.allclose(pieces, serving.pack(whole, [3, 3, 3]), rtol=0, atol=1e-12), chunk)
        fn, finish, ref = serving.plan_forward(case, q, k, v, scale, 0)
        self.assertEqual(tuple(ref().shape), (3, 4, 3, 8))  # small: one tensor, the padded layout
        original = serving.CHUNK_ELEMENTS, serving.WHOLE_REFERENCE_SCORES
        serving.CHUNK_ELEMENTS, serving.WHOLE_REFERENCE_SCORES = 16, 100  # the batch has 3 * 4 * 3 * 5 = 180
        try:
            fn, finish, ref = serving.plan_forward(case, q, k, v, scale, 0)
            out, expected = finish(fn()).double(), ref()
        finally:
            serving.CHUNK_ELEMENTS, serving.WHOLE_REFERENCE_SCORES = original
        self.assertEqual((tuple(out.shape), tuple(expected.shape)), ((9, 4, 8), (9, 4, 8)))
        self.assertLess(((out - expected).norm() / expected.norm()).item(), 1e-6)

    def test_the_page_table_uses_every_page_once(self):
        lens_kv, size = [4, 2, 5], 2
        table = serving.make_page_table(lens_kv, size, torch.Generator("cpu").manual_seed(9))
        self.assertEqual((tuple(table.shape), table.dtype), ((3, 3), torch.int32))
        counts = [2, 1, 3]
        used = [p for b, n in enumerate(counts) for p in table[b, :n].tolist()]
        self.assertEqual(sorted(used), list(range(6)))
        self.assertEqual(table[0, 2:].tolist() + table[1, 1:].tolist(), [0, 0, 0])
        # the pages are torch.randperm(6) of that generator, in sequence order
        perm = torch.randperm(6, generator=torch.Generator("cpu").manual_seed(9)).tolist()
        self.assertEqual(used, perm)
        again = serving.make_page_table(lens_kv, size, torch.Generator("cpu").manual_seed(9))
        self.assertTrue(torch.equal(table, again))

    def test_the_paged_cache_round_trip(self):
        gen = torch.Generator("cpu").manual_seed(3)
        k = torch.randn(3, 2, 5, 4, generator=gen).to(torch.bfloat16)
        lens_kv = [4, 2, 5]
        for size in (1, 2, 3, 8):
            table = serving.make_page_table(lens_kv, size, torch.Generator("cpu").manual_seed(1))
            cache = serving.paged_cache(k, lens_kv, size, table)
            pages = sum(-(-n // size) for n in lens_kv)
            self.assertEqual((tuple(cache.shape), cache.dtype), ((pages, size, 2, 4), torch.bfloat16))
            for b, n in enumerate(lens_kv):
                for t in range(-(-n // size) * size):
                    page, slot = table[b, t // size], t % size
                    expected = k[b, :, t] if t < n else torch.zeros(2, 4, dtype=k.dtype)
                    self.assertTrue(torch.equal(cache[page, slot], expected), (size, b, t))
            gathered = serving.gather_paged(cache, table, lens_kv)
            self.assertEqual(tuple(gathered.shape), (3, 2, 5, 4))
            for b, n in enumerate(lens_kv):
                self.assertTrue(torch.equal(gathered[b, :, :n], k[b, :, :n]))
                self.assertFalse(gathered[b, :, n:].any())

    def test_shape_labels_are_attnsweeps(self):
        self.assertEqual(serving.shape_label(uniform_case()), "3x4/2x3x5x8")
        self.assertEqual(serving.shape_label(varlen_case()), "3x4/2xvarlen[q 1-3, kv 2-5 #f4a3ffdbbe2a]x8")
        case = varlen_case(batch=4, heads=32, kv_heads=8, head_dim=128, seq_len_q=1, seq_len_kv=32768,
                           seq_lens_q="1,1,1,1", seq_lens_kv="512,3000,8192,32768", query_tokens=4, page_size=16)
        self.assertEqual(serving.shape_label(case), "4x32/8xvarlen[q 1, kv 512-32768 #b7acfe19127d]x128 paged16")
        self.assertEqual(serving.shape_label(uniform_case(heads=2, page_size=256)), "3x2x3x5x8 paged256")
        self.assertEqual(serving.shape_label(uniform_case(seq_len_q=5)), "3x4/2x5x8")

    def test_the_built_in_variants_on_the_cpu_match_the_reference(self):
        """plan_forward's forwards of the padded batch, packed, against the per-sequence float64 reference."""
        for changes in ({}, {"bottom_right": 0}, {"window_left": 1}, {"causal": 0, "bottom_right": 0},
                        {"heads": 2}):
            case = varlen_case(**changes)
            q, k, v = serving.make_inputs(3, case["heads"], 2, 3, 5, 8, torch.float32, 0, device="cpu")
            for variant in ("naive", "naive_inplace", "sdpa_math"):
                fn, finish, ref = serving.plan_forward(dict(case, variant=variant), q, k, v, 8 ** -0.5, 0)
                with serving.sdpa_kernel(serving.BACKENDS[variant]) if variant in serving.BACKENDS \
                        else contextlib.nullcontext():
                    out = finish(fn())
                expected = ref()
                self.assertEqual(tuple(out.shape), (6, case["heads"], 8))
                self.assertLess(((out.double() - expected).norm() / expected.norm()).item(), 1e-5, (changes, variant))

    def test_the_upstream_gradient_is_attnsweeps_with_the_padding_rows_zero(self):
        case = varlen_case()
        q, k, v = serving.make_inputs(3, 4, 2, 3, 5, 8, torch.float32, 0, device="cpu")
        dout = serving.upstream_gradient(case, q, v, 7)
        drawn = torch.randn(3, 4, 3, 8, generator=torch.Generator("cpu").manual_seed(8))
        for b, n in enumerate([1, 2, 3]):
            self.assertTrue(torch.equal(dout[b, :, :n], drawn[b, :, :n]))
            self.assertEqual(dout[b, :, n:].abs().sum().item(), 0.0)
        self.assertTrue(torch.equal(serving.upstream_gradient(uniform_case(), q, v, 7), drawn))

    def test_the_gradient_reference_is_each_sequence_alone(self):
        """varlen_reference_grads against autograd of each sequence written out here, GQA 4/2."""
        case = varlen_case()
        q, k, v = serving.make_inputs(3, 4, 2, 3, 5, 8, torch.float32, 0, device="cpu")
        dout = serving.upstream_gradient(case, q, v, 0)
        dq, dk, dv = serving.varlen_reference_grads(q, k, v, dout, 0.5, case)
        self.assertEqual((tuple(dq.shape), tuple(dk.shape), tuple(dv.shape)), ((6, 4, 8), (11, 2, 8), (11, 2, 8)))
        row_q = row_kv = 0
        for b, (nq, nkv) in enumerate(zip([1, 2, 3], [4, 2, 5])):
            qb, kb, vb = (t[b, :, :n].double().requires_grad_() for t, n in ((q, nq), (k, nkv), (v, nkv)))
            scores = (qb @ kb.repeat_interleave(2, 0).transpose(-2, -1)) * 0.5
            seen = torch.tensor([[j <= i + nkv - nq for j in range(nkv)] for i in range(nq)])
            out = torch.softmax(scores.masked_fill(~seen, float("-inf")), -1) @ vb.repeat_interleave(2, 0)
            gq, gk, gv = torch.autograd.grad(out, (qb, kb, vb), dout[b, :, :nq].double())
            self.assertTrue(torch.allclose(dq[row_q:row_q + nq], gq.transpose(0, 1)))
            self.assertTrue(torch.allclose(dk[row_kv:row_kv + nkv], gk.transpose(0, 1)))
            self.assertTrue(torch.allclose(dv[row_kv:row_kv + nkv], gv.transpose(0, 1)))
            row_q, row_kv = row_q + nq, row_kv + nkv

    def test_the_padded_variants_backward_on_the_cpu_matches_the_reference(self):
        """measure_gradients on the CPU: the padded batch with the mask, the padding rows' gradient zero."""
        args = type("Args", (), {"warmup": 1, "samples": 2, "forwards": 1})()
        for changes in ({}, {"window_left": 1}, {"heads": 2}):
            for variant in ("naive", "naive_inplace", "sdpa_math"):
                for pass_name in ("backward", "forward_backward"):
                    case = varlen_case(variant=variant, **changes, **{"pass": pass_name})
                    q, k, v = serving.make_inputs(3, case["heads"], 2, 3, 5, 8, torch.float32, 0, device="cpu")
                    with serving.sdpa_kernel(serving.BACKENDS[variant]) if variant in serving.BACKENDS \
                            else contextlib.nullcontext():
                        row = serving.measure_gradients(case, q, k, v, 8 ** -0.5, 0, args, device="cpu")
                    self.assertEqual(row["status"], "ok", (changes, variant, row))
                    for g in "qkv":
                        self.assertLess(row[f"grad_rel_error_{g}"], 1e-5, (changes, variant, g))
                        self.assertGreater(row[f"grad_rel_error_{g}"], 0.0)  # float32 against float64: never exact
                    self.assertEqual(row["sdpa_backend_backward"], "math")
                    self.assertEqual((row["kernels"], row["memcpy"], row["memset"]), (0, 0, 0))  # a CPU has no kernels

    def test_what_is_unsupported_here(self):
        for case, reason in (
                (varlen_case(variant="sdpa_flash", bottom_right=0), "aligned to the bottom right"),
                (varlen_case(variant="sdpa_efficient"), "as many key/value heads"),
                (varlen_case(variant="sdpa_efficient", kv_heads=4, window_left=3), "no sliding window"),
                (varlen_case(variant="sdpa_math", page_size=2), "no attention over a paged KV cache"),
                (uniform_case(variant="sdpa_flash", page_size=2), "no attention over a paged KV cache"),
                (varlen_case(variant="fa3"), "not a variant known here")):
            q, k, v = serving.make_inputs(3, 4, case["kv_heads"], 3, 5, 8, torch.float32, 0, device="cpu")
            fn, finish, _ = serving.plan_forward(case, q, k, v, 8 ** -0.5, 0)
            self.assertIsNone(finish)
            with self.assertRaisesRegex(RuntimeError, reason):
                fn()

    def test_fa3_gets_the_packed_and_paged_inputs(self):
        calls = []
        serving.OP_LIBRARIES["fa3"] = fake_fa3(calls)
        self.addCleanup(serving.OP_LIBRARIES.clear)
        q, k, v = serving.make_inputs(3, 4, 2, 3, 5, 8, torch.bfloat16, 0, device="cpu")
        for changes, passed in (
                ({"seq_lens_q": None, "seq_lens_kv": None, "query_tokens": None}, set()),
                ({"seq_lens_q": None, "seq_lens_kv": None, "query_tokens": None, "page_size": 2},
                 {"page_table", "seqused_k"}),
                ({}, {"cu_seqlens_q", "max_seqlen_q", "cu_seqlens_k", "max_seqlen_k"}),
                ({"window_left": 1}, {"cu_seqlens_q", "max_seqlen_q", "cu_seqlens_k", "max_seqlen_k"}),
                ({"page_size": 2}, {"cu_seqlens_q", "max_seqlen_q", "page_table", "seqused_k"}),
                ({"page_size": 4, "causal": 0, "bottom_right": 0, "window_left": 1, "window_right": 1},
                 {"cu_seqlens_q", "max_seqlen_q", "page_table", "seqused_k"})):
            case = varlen_case(variant="fa3", dtype="bf16", **changes)
            fn, finish, ref = serving.plan_forward(case, q, k, v, 8 ** -0.5, 7)
            calls.clear()
            out = finish(fn())
            expected = ref()
            self.assertEqual(out.shape, expected.shape)
            self.assertLess(((out - expected).norm() / expected.norm()).item(), 1e-12, changes)
            common = {"softmax_scale", "is_causal", "window_size_left", "window_size_right"}
            self.assertEqual(set(calls[0]), common | passed, changes)
            if "page_table" in passed:
                table = serving.make_page_table(case["lens_kv"], case["page_size"],
                                                torch.Generator("cpu").manual_seed(7 + 2))
                self.assertTrue(torch.equal(calls[0]["page_table"], table))
                self.assertEqual(calls[0]["seqused_k"].tolist(), case["lens_kv"])
        for case, reason in ((varlen_case(variant="fa3", dtype="bf16", bottom_right=0), "bottom right"),
                             (uniform_case(variant="fa3", dtype="fp16"), "bf16 only")):
            fn, finish, _ = serving.plan_forward(case, *(t.to(serving.DTYPES[case["dtype"]]) for t in (q, k, v)),
                                                 8 ** -0.5, 7)
            with self.assertRaisesRegex(RuntimeError, reason):
                fn()


@needs_torch(serving)
class ServingReferenceSchema13(unittest.TestCase):
    """The columns of schema 13 are read when there, NULL (page_size 0) when not; lengths that do not
    agree with the case are an input that cannot be read (exit 2)."""

    OLD_CASES = ("CREATE TABLE cases (run_id, plan_index, variant, batch, heads, kv_heads, seq_len_q, seq_len_kv, "
                 "head_dim, dtype, causal, causal_bottom_right, window_left, window_right, pass, status, "
                 "kernels_per_forward, memcpy_per_forward, memset_per_forward, gpu_time_us_median, rel_error, "
                 "sdpa_backend, validity{extra})")

    def make_db(self, path, new_columns, rows):
        import sqlite3
        extra = ", seq_lens_q, seq_lens_kv, page_size INTEGER NOT NULL DEFAULT 0, query_tokens" if new_columns else ""
        db = sqlite3.connect(path)
        db.execute("CREATE TABLE runs (run_id INTEGER PRIMARY KEY, seed INTEGER)")
        db.execute("INSERT INTO runs VALUES (1, 0)")
        db.execute(self.OLD_CASES.format(extra=extra))
        for plan_index, new in rows:
            values = {"run_id": 1, "plan_index": plan_index, "variant": "naive", "batch": 4, "heads": 32,
                      "kv_heads": 8, "seq_len_q": 1, "seq_len_kv": 8192, "head_dim": 128, "dtype": "bf16",
                      "causal": 1, "causal_bottom_right": 1, "pass": "forward", "status": "ok", **new}
            db.execute(f"INSERT INTO cases ({', '.join(values)}) VALUES ({', '.join('?' * len(values))})",
                       list(values.values()))
        db.commit()
        return db

    def test_old_and_new_databases(self):
        import sqlite3
        import tempfile
        with tempfile.TemporaryDirectory() as tmp:
            old = self.make_db(os.path.join(tmp, "old.db"), False, [(0, {})])
            old.row_factory = sqlite3.Row
            (case,) = serving.read_cases(old, 1)
            self.assertEqual((case["seq_lens_q"], case["page_size"], case["query_tokens"], case["varlen"]),
                             (None, 0, None, False))
            self.assertEqual((case["lens_q"], case["lens_kv"], case["bottom_right"]), ([1] * 4, [8192] * 4, 1))
            new = self.make_db(os.path.join(tmp, "new.db"), True, [
                (1, {"seq_lens_q": "1,1,1,1", "seq_lens_kv": "512,3000,8192,100", "query_tokens": 4,
                     "page_size": 16}),
                (0, {"query_tokens": 4})])
            new.row_factory = sqlite3.Row
            uniform, varlen = serving.read_cases(new, 1)
            self.assertEqual((uniform["varlen"], uniform["page_size"]), (False, 0))
            self.assertEqual((varlen["varlen"], varlen["lens_kv"], varlen["page_size"]),
                             (True, [512, 3000, 8192, 100], 16))
            self.assertEqual(serving.shape_label(varlen), "4x32/8xvarlen[q 1, kv 100-8192 #f6b00a7b3758]x128 paged16")

    def test_windowed_only_keeps_the_cases_with_a_window(self):
        import sqlite3
        import tempfile
        with tempfile.TemporaryDirectory() as tmp:
            db = self.make_db(os.path.join(tmp, "mixed.db"), True, [
                (0, {}), (1, {"window_left": 1023, "window_right": 0}), (2, {"window_right": 4})])
            db.row_factory = sqlite3.Row
            self.assertEqual([c["plan_index"] for c in serving.read_cases(db, 1)], [0, 1, 2])
            self.assertEqual([c["plan_index"] for c in serving.read_cases(db, 1, windowed_only=True)], [1, 2])
            db.close()
            # A flag takes no value; a file that is not a run is refused the same way with it.
            import subprocess
            script = os.path.join(ROOT, "scripts", "serving_reference.py")
            flagged = subprocess.run([sys.executable, script, os.path.join(tmp, "mixed.db"), "--windowed=1"],
                                     capture_output=True, text=True)
            self.assertEqual((flagged.returncode, flagged.stdout), (2, ""))
            self.assertIn("--windowed: ignored explicit argument '1'", flagged.stderr)
            foreign = os.path.join(tmp, "foreign.db")
            other = sqlite3.connect(foreign)
            other.execute("CREATE TABLE t (x)")
            other.commit()
            other.close()
            self.assertEqual(run_main(foreign, "--windowed")[:2][0], 2)
            self.assertIn("no such table: runs", run_main(foreign, "--windowed")[1])

    def test_lengths_that_do_not_fit_the_case_exit_two(self):
        import tempfile
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "bad.db")
            self.make_db(path, True, [(3, {"seq_lens_q": "1,1,1,1", "seq_lens_kv": "512,3000,8192"})]).close()
            code, err, out = run_main(path)
            self.assertEqual((code, out), (2, ""))
            self.assertEqual(err, f"error: {path}: case 3: seq_lens_kv '512,3000,8192': 3 lengths for a batch of 4\n")

    def test_fa3_arguments(self):
        import tempfile
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "empty.db")
            self.make_db(path, True, []).close()
            code, err, out = run_main(path, "--fa3", f"fa3={tmp}/missing.so")
            self.assertEqual((code, out), (2, ""))
            self.assertEqual(err, f"error: --fa3: {tmp}/missing.so: no such file or folder\n")
            code, err, _ = run_main(path, "--fa3", f"fa3={tmp}")
            self.assertEqual((code, err), (2, f"error: --fa3: {tmp}: no .so in it\n"))
        self.assertEqual(serving.parse_op_library("fa3=/x/_C.abi3.so"), ("fa3", "/x/_C.abi3.so"))
        for text in ("fa3", "=x", "fa3="):
            with self.assertRaisesRegex(ValueError, "expected NAME=PATH"):
                serving.parse_op_library(text)


if __name__ == "__main__":
    unittest.main()
