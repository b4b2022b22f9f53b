"""CPU tests of the Python side of issue 23: scripts/torch_reference.py's
argument and shape parsing, its per-pass counting of a Chrome trace (a made-up
GPU trace and a real CPU one), its float64 gradients, a smoke run of every pass
on the CPU, and scripts/training_report.py on a small database made from
runner/storage/schema.sql.   run: tests/python/run_python_tests.sh (ctest: Python.TrainingTools)"""
import contextlib
import io
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))

import training_report  # noqa: E402

try:
    import torch
    import torch_reference as ref
except ImportError:  # the report's tests need no torch
    torch = ref = None

needs_torch = unittest.skipIf(torch is None, "torch is not importable by this python")


@needs_torch
class Parsing(unittest.TestCase):
    def test_shapes(self):
        self.assertEqual(ref.parse_shape("8x16x1024x64"), ref.Shape(8, 16, 16, 1024, 64))
        self.assertEqual(ref.parse_shape("2x32/8x4096x128"), ref.Shape(2, 32, 8, 4096, 128))
        self.assertEqual(ref.parse_shapes("8x16x1024x64,2x32/8x4096x128,"),
                         [ref.Shape(8, 16, 16, 1024, 64), ref.Shape(2, 32, 8, 4096, 128)])
        self.assertEqual(ref.shape_text(ref.parse_shape("2x32/8x4096x128")), "2x32/8x4096x128")
        self.assertEqual(ref.shape_text(ref.parse_shape("2x32/32x4096x128")), "2x32x4096x128")
        # issue 36: the values' head dim after the query's, as attnsweep labels it
        self.assertEqual(ref.parse_shape("1x128x4096x192/128"), ref.Shape(1, 128, 128, 4096, 192, 128))
        self.assertEqual(ref.parse_shape("1x8x64x64/64"), ref.Shape(1, 8, 8, 64, 64))
        self.assertEqual(ref.shape_text(ref.parse_shape("2x32/8x4096x192/128")), "2x32/8x4096x192/128")
        self.assertEqual(ref.value_dim(ref.parse_shape("1x8x64x64")), 64)
        for bad, why in (("8x16x1024", "expected"), ("2x32/5x64x8", "must divide"), ("ax1x1x1", "integers"),
                         ("1x0x1x1", "at least 1"), ("1x4/2/1x8x8", "H or H/KV"), ("1x4x8x8/0", "at least 1"),
                         ("1x4x8x8/4/2", "D or D/DV")):
            with self.assertRaises(ValueError) as raised:
                ref.parse_shape(bad)
            self.assertIn(why, str(raised.exception))

    def test_lists(self):
        self.assertEqual(ref.parse_list("backward,forward", ref.PASSES, "pass"), ["backward", "forward"])
        for bad in ("sideways", "forward,forward", ""):
            with self.assertRaises(ValueError):
                ref.parse_list(bad, ref.PASSES, "pass")

    def refused(self, *argv):
        stderr = io.StringIO()
        with self.assertRaises(SystemExit) as raised, contextlib.redirect_stderr(stderr):
            ref.main(list(argv))
        self.assertEqual(raised.exception.code, 2)
        return stderr.getvalue()

    def test_arguments(self):
        a = ref.build_parser().parse_args(["--pass", "backward", "--shapes", "2x32/8x4096x128", "--max-seconds", "1"])
        self.assertEqual((a.passes, a.max_seconds, a.device), ("backward", 1.0, "cuda"))
        self.assertEqual(ref.build_parser().parse_args(["--passes", "forward,backward"]).passes, "forward,backward")
        self.assertIsNone(ref.build_parser().parse_args([]).passes)  # forward-only lines of before
        self.assertIn("unknown pass sideways", self.refused("--pass", "sideways"))
        self.assertIn("must divide", self.refused("--pass", "forward", "--shapes", "2x32/5x64x8"))
        self.assertIn("unknown variant", self.refused("--pass", "forward", "--variants", "naive,fa9"))
        self.assertIn("unknown dtype", self.refused("--dtypes", "fp8"))
        self.assertIn("needs --pass", self.refused("--device", "cpu"))
        self.assertIn("--max-seconds", self.refused("--pass", "forward", "--max-seconds", "-1"))
        self.assertIn("--samples", self.refused("--pass", "forward", "--samples", "0"))
        self.assertIn("v2 only", self.refused("--pass", "forward", "--protocol", "v1"))
        self.assertIn("--hold -1: auto, dispatch or a number", self.refused("--pass", "forward", "--hold", "-1"))
        self.assertIn("--hold soon: auto, dispatch or a number", self.refused("--pass", "forward", "--hold", "soon"))
        for odd in ("\u00b2", "\uff15", "100000001", "99999999999999999999"):  # a superscript, a wide 5, too long
            self.assertIn(f"--hold {odd}: auto, dispatch or a number of cycles from 0 to 100,000,000",
                          self.refused("--pass", "forward", "--hold", odd))
        self.assertEqual(ref.build_parser().parse_args(["--pass", "forward", "--hold", "100000000"]).hold, "100000000")
        self.assertIn("--hold needs --pass", self.refused("--hold", "0"))
        self.assertEqual(ref.build_parser().parse_args(["--pass", "forward"]).hold, "auto")


def event(cat, name, ts, dur, tid=1, **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": tid, "ts": ts, "dur": dur, "args": args}


@needs_torch
class Counting(unittest.TestCase):
    def test_made_up_gpu_trace(self):
        # pass 0: a kernel launched from the calling thread, one from autograd's device thread (tid 9),
        # a memset; pass 1: the same; outside both: the untimed forward's kernel. A kernel without a
        # launch event is unattributed too.
        events = [event("user_annotation", "attnsweep_pass#0", 100.0, 50.0),
                  event("user_annotation", "attnsweep_pass#1", 300.0, 50.0),
                  event("user_annotation", "other label", 0.0, 1000.0),
                  event("gpu_user_annotation", "attnsweep_pass#0", 100.0, 900.0, tid=7)]
        correlation = 0
        for start in (100.0, 300.0):
            for offset, cat, tid in ((5, "kernel", 1), (20, "kernel", 9), (30, "gpu_memset", 9)):
                correlation += 1
                launch = "cudaMemsetAsync" if cat == "gpu_memset" else "cuLaunchKernelEx"
                events.append(event("cuda_runtime" if tid == 1 else "cuda_driver", launch, start + offset, 2.0, tid=tid,
                                    correlation=correlation))
                events.append(event(cat, "k", start + offset + 500, 10.0, tid=7, correlation=correlation))
        events.append(event("cuda_runtime", "cudaLaunchKernel", 200.0, 2.0, correlation=99))
        events.append(event("kernel", "forward", 600.0, 10.0, tid=7, correlation=99))
        events.append(event("kernel", "orphan", 700.0, 10.0, tid=7, correlation=1234))
        events.append({"ph": "s", "cat": "ac2g", "id": 1, "ts": 105.0})
        counts, unattributed, missing = ref.count_pass_activity(events, 2)
        self.assertEqual(missing, [])
        self.assertEqual(unattributed, 2)
        for c in counts:
            self.assertEqual((c["kernel"], c["gpu_memcpy"], c["gpu_memset"], c["device_us"]), (2, 0, 1, 30.0))
        counts, _, missing = ref.count_pass_activity(events, 3)
        self.assertEqual(missing, [2])
        self.assertEqual(counts[2]["kernel"], 0)

    def test_real_cpu_trace_of_each_pass(self):
        q, k, v = ref.make_inputs(ref.parse_shape("1x4/2x16x8"), "fp32", 0, "cpu")
        dout = ref.make_dout(q.shape, "fp32", 0, "cpu")
        mask = ref.causal_mask(q, k)
        for variant in ("naive", "sdpa_math"):
            attend = lambda a, b, c: ref.attention(variant, a, b, c, 8 ** -0.5, True, mask)  # noqa: E731
            for pass_name in ref.PASSES:
                pin = ref.sdpa_kernel(ref.BACKENDS[variant]) if variant in ref.BACKENDS else contextlib.nullcontext()
                prepare, timed = ref.pass_steps(pass_name, attend, q, k, v, dout)
                with torch.set_grad_enabled(pass_name != "forward"), pin:
                    row = ref.consistent_counts(prepare, timed, 3, "cpu", 2)
                self.assertEqual((row["kernels"], row["memcpy"], row["memset"]), (0, 0, 0), pass_name)
                self.assertTrue(row["counts_consistent"], pass_name)
                self.assertEqual(row["counts_each"], [[0, 0, 0]] * 3)
                self.assertEqual(row["profile_attempts"], 1)
                expected = "math" if variant == "sdpa_math" and pass_name != "backward" else None
                self.assertEqual(row["profiled_sdpa_backend"], expected, (variant, pass_name))

    def test_sdpa_backend_of_the_first_pass(self):
        events = [event("user_annotation", "attnsweep_pass#0", 100.0, 50.0),
                  event("cpu_op", "aten::_scaled_dot_product_cudnn_attention", 90.0, 5.0),
                  event("cpu_op", "aten::scaled_dot_product_attention", 101.0, 20.0),
                  event("cpu_op", "aten::_scaled_dot_product_flash_attention", 102.0, 10.0, tid=9),
                  event("cpu_op", "aten::_scaled_dot_product_cudnn_attention", 110.0, 5.0)]
        self.assertEqual(ref.sdpa_backend_in(events), "flash_attention")
        self.assertIsNone(ref.sdpa_backend_in(events[:3]))
        self.assertIsNone(ref.sdpa_backend_in(events[1:]))


@needs_torch
class Numerics(unittest.TestCase):
    @staticmethod
    def grouped_case():
        """The fp32 case the score modifications are written out on: 2x4/2x12x8 (query heads 4, key/value heads 2),
        seed 3: q, k, v, the output's gradient and the scale."""
        q, k, v = ref.make_inputs(ref.parse_shape("2x4/2x12x8"), "fp32", 3, "cpu")
        return q, k, v, ref.make_dout(q.shape, "fp32", 3, "cpu"), 8 ** -0.5

    def assert_naive_and_float64_agree(self, q, k, v, dout, scale, causal, mask, mods, expected, tolerance,
                                       exact_mods=None):
        """Each naive variant's output within 1e-5 of `expected` (the modified attention written out); the chunked
        float64 reference's output within `tolerance` of it and its gradients of float64 autograd through naive
        (with exact_mods(leaves), the modifications made again from the float64 leaves, where they hold tensors)."""
        for variant in ("naive", "naive_inplace"):
            out = ref.attention(variant, q, k, v, scale, causal, mask, mods)
            self.assertLess(ref.rel_error(out, expected), 1e-5, variant)
        leaves = [t.double().requires_grad_() for t in (q, k, v)]
        out = ref.attention("naive", *leaves, scale, causal, mask, exact_mods(leaves) if exact_mods else mods)
        grads = torch.autograd.grad(out, leaves, dout.double())
        got_out, got = ref.reference_grads(q, k, v, dout, scale, causal, chunk_elements=1, mods=mods)
        self.assertLess(ref.rel_error(got_out, expected), tolerance)
        for g, e in zip(got, grads):
            self.assertLess(ref.rel_error(g, e), tolerance)

    def test_inputs_and_dout_are_drawn_as_attnsweep_draws_them(self):
        q, k, v = ref.make_inputs(ref.parse_shape("2x4/2x8x4"), "bf16", 7, "cpu")
        self.assertEqual((tuple(q.shape), tuple(k.shape), tuple(v.shape)), ((2, 4, 8, 4), (2, 2, 8, 4), (2, 2, 8, 4)))
        g = torch.Generator("cpu").manual_seed(7)
        self.assertTrue(torch.equal(q, torch.randn(2, 4, 8, 4, generator=g).to(torch.bfloat16)))
        self.assertTrue(torch.equal(k, torch.randn(2, 2, 8, 4, generator=g).to(torch.bfloat16)))
        dout = ref.make_dout(q.shape, "bf16", 7, "cpu")
        expected = torch.randn(2, 4, 8, 4, generator=torch.Generator("cpu").manual_seed(8)).to(torch.bfloat16)
        self.assertTrue(torch.equal(dout, expected))
        # the old four-number shape still works (scripts/fa3_reference.py)
        self.assertTrue(torch.equal(ref.make_inputs((2, 4, 8, 4), "bf16", 7, "cpu")[0], q))

    def test_chunked_float64_gradients_equal_one_piece_autograd(self):
        for text in ("2x4x12x8", "2x6/2x12x8", "1x4/1x10x8"):
            shape = ref.parse_shape(text)
            q, k, v = ref.make_inputs(shape, "fp32", 3, "cpu")
            dout = ref.make_dout(q.shape, "fp32", 3, "cpu")
            for causal in (True, False):
                leaves = [t.double().requires_grad_() for t in (q, k, v)]
                out = ref.attention("naive", *leaves, 8 ** -0.5, causal, ref.causal_mask(q, k))
                expected = torch.autograd.grad(out, leaves, dout.double())
                # chunk_elements 1: one query row of one key/value head per piece (dk, dv summed)
                got_out, got = ref.reference_grads(q, k, v, dout, 8 ** -0.5, causal, chunk_elements=1)
                self.assertLess(ref.rel_error(got_out, out.detach()), 1e-14, text)
                for g, e in zip(got, expected):
                    self.assertLess(ref.rel_error(g, e), 1e-14, text)
                # and the forward reference of before agrees
                self.assertLess(ref.rel_error(ref.reference(q, k, v, 8 ** -0.5, causal), got_out), 1e-14)
                # without an upstream gradient: the same output in pieces, no gradients (fa3_reference.py)
                alone, none = ref.reference_grads(q, k, v, None, 8 ** -0.5, causal, chunk_elements=1)
                self.assertTrue(torch.equal(alone, got_out), text)
                self.assertEqual(none, (None, None, None))
                self.assertFalse(alone.requires_grad)

    def test_a_value_head_dim_draws_v_and_its_gradients_with_it(self):
        shape = ref.parse_shape("2x4/2x12x8/4")
        q, k, v = ref.make_inputs(shape, "fp32", 3, "cpu")
        self.assertEqual((tuple(q.shape), tuple(k.shape), tuple(v.shape)), ((2, 4, 12, 8), (2, 2, 12, 8), (2, 2, 12, 4)))
        dout = ref.make_dout((*q.shape[:-1], v.shape[-1]), "fp32", 3, "cpu")
        for causal in (True, False):
            leaves = [t.double().requires_grad_() for t in (q, k, v)]
            out = ref.attention("naive", *leaves, 8 ** -0.5, causal, ref.causal_mask(q, k))
            self.assertEqual(tuple(out.shape), (2, 4, 12, 4))
            expected = torch.autograd.grad(out, leaves, dout.double())
            got_out, got = ref.reference_grads(q, k, v, dout, 8 ** -0.5, causal, chunk_elements=1)
            self.assertLess(ref.rel_error(got_out, out.detach()), 1e-14)
            for g, e in zip(got, expected):
                self.assertEqual(g.shape, e.shape)
                self.assertLess(ref.rel_error(g, e), 1e-14)

    def test_softcap_is_cap_times_tanh_before_the_mask_in_every_reference(self):
        q, k, v, dout, scale = self.grouped_case()
        for causal in (True, False):
            mask = ref.causal_mask(q, k)
            # written out on its own: grouped heads repeated, cap 0.5, then the mask
            qd, kd, vd = q.double(), k.double().repeat_interleave(2, 1), v.double().repeat_interleave(2, 1)
            scores = 0.5 * torch.tanh((qd @ kd.transpose(-2, -1)) * scale / 0.5)
            if causal:
                scores = scores.masked_fill(mask, float("-inf"))
            expected = torch.softmax(scores, -1) @ vd
            capped = ref.ScoreMods(0.5)
            self.assertLess(ref.rel_error(ref.reference(q, k, v, scale, causal, capped), expected), 1e-14)
            self.assertGreater(ref.rel_error(ref.reference(q, k, v, scale, causal), expected), 1e-2)  # the cap matters
            self.assert_naive_and_float64_agree(q, k, v, dout, scale, causal, mask, capped, expected, 1e-14)
        with self.assertRaisesRegex(RuntimeError, "No available kernel"):
            ref.attention("sdpa_math", q, k, v, scale, True, None, ref.ScoreMods(0.5))

    def test_alibi_slopes_are_the_papers(self):
        self.assertEqual(ref.alibi_slopes(8), [2.0 ** -(h + 1) for h in range(8)])
        # 12 heads: the 8 of 8, then every other of 16's (2^-0.5, 2^-1.5, ...)
        self.assertEqual(ref.alibi_slopes(12), [2.0 ** -(h + 1) for h in range(8)] + [2.0 ** -(0.5 + h) for h in range(4)])

    def test_alibi_and_sinks_in_every_reference(self):
        # issue 36: written out on its own: the bias -slope_h * |i - j| added after the scale,
        # the mask, then each head's sink logit as one more softmax column that gives no value
        q, k, v, dout, scale = self.grouped_case()
        for causal in (True, False):
            mods = ref.ScoreMods(0.0, True, True, q, k, causal, 3)
            self.assertEqual(mods.sinks.tolist(),
                             torch.randn(4, generator=torch.Generator("cpu").manual_seed(6)).tolist())
            mask = ref.causal_mask(q, k)
            qd, kd, vd = q.double(), k.double().repeat_interleave(2, 1), v.double().repeat_interleave(2, 1)
            i = torch.arange(12, dtype=torch.float64)
            slopes = torch.tensor([2.0 ** -2, 2.0 ** -4, 2.0 ** -6, 2.0 ** -8], dtype=torch.float64).view(1, 4, 1, 1)
            scores = (qd @ kd.transpose(-2, -1)) * scale - slopes * (i.view(-1, 1) - i.view(1, -1)).abs()
            if causal:
                scores = scores.masked_fill(mask, float("-inf"))
            weights = torch.exp(scores - scores.amax(-1, keepdim=True))
            sink = torch.exp(mods.sinks.double().view(1, 4, 1, 1) - scores.amax(-1, keepdim=True))
            expected = (weights / (weights.sum(-1, keepdim=True) + sink)) @ vd
            self.assertLess(ref.rel_error(ref.reference(q, k, v, scale, causal, mods), expected), 1e-13)
            self.assertGreater(ref.rel_error(ref.reference(q, k, v, scale, causal), expected), 1e-2)
            self.assert_naive_and_float64_agree(
                q, k, v, dout, scale, causal, mask, mods, expected, 1e-13,
                exact_mods=lambda leaves: ref.ScoreMods(0.0, True, True, *leaves[:2], causal, 3))
            # SDPA takes ALiBi as its float attn_mask, and has no sinks
            alibi_only = ref.ScoreMods(0.0, True, False, q, k, causal, 3)
            out = ref.attention("sdpa_math", q, k, v, scale, causal, None, alibi_only)
            self.assertLess(ref.rel_error(out, ref.reference(q, k, v, scale, causal, alibi_only)), 1e-5)
        with self.assertRaisesRegex(RuntimeError, "No available kernel"):
            ref.attention("sdpa_math", q, k, v, scale, True, None, mods)

    def test_fp8_is_quantised_per_tensor_and_naive_emulates_it(self):
        """Issue 36: the bf16 draw quantised per tensor (descale = amax / the format's largest value), naive
        dequantising first; SDPA refuses; the error against the bf16 draw holds the quantisation's, the one
        against the dequantised inputs the emulation's own (bf16's)."""
        q, k, v = ref.make_inputs(ref.Shape(1, 4, 2, 32, 16), "fp8_e4m3", 0, "cpu")
        self.assertEqual(q.dtype, torch.bfloat16)  # the draw, before quantisation
        for fmt, largest, step in ((torch.float8_e4m3fn, 448.0, 2.0 ** -3), (torch.float8_e5m2, 57344.0, 2.0 ** -2)):
            q8, descale = ref.quantize(q, fmt)
            self.assertEqual(q8.dtype, fmt)
            self.assertAlmostEqual(descale.item(), q.float().abs().max().item() / largest, delta=1e-9)
            self.assertEqual(q8.float().abs().max().item(), largest)  # the largest value maps to the format's
            back = ref.dequantize(q8, descale, torch.float32)
            self.assertLess(((back - q.float()).abs() / q.float().abs().clamp_min(descale.item() * 8)).max().item(),
                            step / 2 + 1e-3)  # within half a step of the mantissa
        mods = ref.ScoreMods()
        quantized = [ref.quantize(x, torch.float8_e4m3fn) for x in (q, k, v)]
        mods.descales = tuple(d for _, d in quantized)
        q8, k8, v8 = (x for x, _ in quantized)
        out = ref.attention("naive", q8, k8, v8, 0.25, True, ref.causal_mask(q, k), mods)
        self.assertEqual(out.dtype, torch.bfloat16)
        error = ref.rel_error(out, ref.reference(q, k, v, 0.25, True))
        own = ref.rel_error(out, ref.reference(*(ref.dequantize(x, d, torch.float32) for x, d in quantized), 0.25, True))
        self.assertGreater(error, 0.01)
        self.assertLess(error, 0.1)  # attnsweep's bound for fp8_e4m3
        self.assertLess(own, error / 4)
        with self.assertRaisesRegex(RuntimeError, "No available kernel"):
            ref.attention("sdpa_flash", q8, k8, v8, 0.25, True, None, mods)

    def test_backend_names(self):
        self.assertEqual(ref.backend_of("ScaledDotProductCudnnAttentionBackward0"), "cudnn_attention")
        self.assertEqual(ref.backend_of("ScaledDotProductFlashAttentionBackward0"), "flash_attention")
        self.assertEqual(ref.backend_of("ScaledDotProductEfficientAttentionBackward0"), "efficient_attention")
        self.assertEqual(ref.backend_of("UnsafeViewBackward0"), "math")

    def test_hold(self):
        self.assertEqual(ref.hold_for("auto", 10.0), 2_000_000)  # ~1 ms
        self.assertEqual(ref.hold_for("dispatch", 10.0), 100_000)  # ~50 us at least
        self.assertEqual(ref.hold_for("dispatch", 400.0), 1_200_000)  # 1.5x 400 us at 2 GHz
        self.assertEqual(ref.hold_for("0", 400.0), 0)
        self.assertEqual(ref.hold_cycles(10.0), 2_000_000)
        self.assertEqual(ref.hold_cycles(1000.0), 6_000_000)
        self.assertEqual(ref.hold_cycles(1e9), 100_000_000)


@needs_torch
class SmokeRunOnTheCpu(unittest.TestCase):
    def test_every_pass(self):
        env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
        env.pop("TEARDOWN_CUPTI", None)
        result = subprocess.run(
            [sys.executable, os.path.join(ROOT, "scripts", "torch_reference.py"), "--device", "cpu",
             "--pass", "forward,backward,forward_backward", "--shapes", "1x4/2x16x8", "--dtypes", "bf16",
             "--variants", "naive,sdpa_flash,sdpa_cudnn", "--warmup", "1", "--samples", "3", "--forwards", "2",
             "--max-seconds", "1e-9", "--min-samples", "2", "--hold", "0"],
            capture_output=True, text=True, env=env, timeout=300)
        self.assertEqual(result.returncode, 0, result.stderr)
        rows = [json.loads(line) for line in result.stdout.splitlines()]
        self.assertEqual([(r["variant"], r["pass"]) for r in rows],
                         [(v, p) for v in ("naive", "sdpa_flash", "sdpa_cudnn") for p in ref.PASSES])
        for r in rows:
            self.assertEqual((r["shape"], r["heads"], r["kv_heads"], r["dtype"]), ("1x4/2x16x8", 4, 2, "bf16"))
            if r["variant"] == "sdpa_cudnn":  # no cuDNN on the CPU: a line that says so
                self.assertEqual(r["status"], "unsupported")
                self.assertTrue(r["error"])
                continue
            self.assertEqual(r["status"], "ok", r)
            self.assertEqual((r["kernels"], r["memcpy"], r["memset"], r["counts_consistent"]), (0, 0, 0, True))
            self.assertEqual(r["samples"], 2)  # --max-seconds stopped it at --min-samples
            self.assertEqual(r["hold_cycles"], 0)  # --hold 0: back to back
            self.assertEqual(len(r["times_us"]), 2)  # every sample, in the order taken
            self.assertAlmostEqual(r["median_us"], statistics.median(r["times_us"]), delta=0.01)
            self.assertGreater(r["median_us"], 0)
            if r["pass"] == "forward":
                self.assertLess(r["rel_error"], 1.6e-2)
                self.assertEqual(r.get("sdpa_backend"), "flash_attention" if r["variant"] == "sdpa_flash" else None)
                self.assertNotIn("grad_rel_error_q", r)
            else:
                for g in "qkv":
                    self.assertLess(r[f"grad_rel_error_{g}"], 1.6e-2)
                    self.assertGreater(r[f"grad_rel_error_{g}"], 0)
                self.assertNotIn("rel_error", r)
                if r["variant"] == "sdpa_flash":
                    self.assertEqual(r["sdpa_backend_backward"], "flash_attention")
                else:
                    self.assertNotIn("sdpa_backend_backward", r)


CASE_COLUMNS = ("run_id", "plan_index", "variant", "batch", "heads", "kv_heads", "seq_len_q", "seq_len_kv", "head_dim",
                "dtype", "causal", "pass", "device", "status", "error_message", "sdpa_backend", "sdpa_backend_backward",
                "kernels_per_forward", "memcpy_per_forward", "memset_per_forward", "counts_consistent",
                "gpu_time_us_median", "rel_error", "grad_rel_error_q", "grad_rel_error_k", "grad_rel_error_v",
                "flops", "min_bytes", "finished_at")


def make_db(path, cases):
    db = sqlite3.connect(path)
    with open(os.path.join(ROOT, "runner", "storage", "schema.sql")) as f:
        db.executescript(f.read())
    db.execute("""INSERT INTO runs (run_id, name, config_yaml, config_sha256, status, started_at, device, device_name,
                  attnsweep_version, seed, timing_protocol, flop_convention, warmup, profiled_forwards, min_samples,
                  max_samples, target_rel_stdev, max_case_seconds, planned_cases)
                  VALUES (1, 'training', '', '', 'done', '2026-12-01T00:00:00Z', 'cuda:0', 'NVIDIA H200', '0.1', 0,
                  'v2', 'attended_pairs_v1', 5, 5, 10, 100, 0.02, 10, ?)""", (len(cases),))
    for i, c in enumerate(cases):
        row = dict(run_id=1, plan_index=i, batch=2, heads=32, kv_heads=8, seq_len_q=4096, seq_len_kv=4096, head_dim=128,
                   dtype="bf16", causal=1, device="cuda:0", status="ok", counts_consistent=1, flops=1.0, min_bytes=1.0,
                   finished_at="2026-12-01T00:00:01Z")
        row.update(c)
        db.execute(f"INSERT INTO cases ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})", tuple(row.values()))
    db.commit()
    db.close()


def python_line(**fields):
    row = dict(shape="2x32/8x4096x128", batch=2, heads=32, kv_heads=8, seq_len=4096, head_dim=128, dtype="bf16",
               causal=True, status="ok", counts_consistent=True)
    row.update(fields)
    return json.dumps(row)


def naive_forward_case(kernels, median_us, rel_error, **axes):
    """make_db's row of a naive forward without copies or fills, with its axes (softcap=2.0, alibi=1, ...)."""
    return dict(variant="naive", **{"pass": "forward"}, kernels_per_forward=kernels, memcpy_per_forward=0,
                memset_per_forward=0, gpu_time_us_median=median_us, rel_error=rel_error, **axes)


def naive_forward_line(kernels, median_us, rel_error, **axes):
    """Python's line (python_line) of such a case."""
    return python_line(variant="naive", **{"pass": "forward"}, kernels=kernels, memcpy=0, memset=0,
                       median_us=median_us, rel_error=rel_error, **axes)


class TrainingReport(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.db = os.path.join(self.tmp.name, "training.db")
        self.jsonl = os.path.join(self.tmp.name, "python.jsonl")
        self.machine = os.path.join(self.tmp.name, "machine.txt")
        with open(self.machine, "w") as f:
            f.write("NVIDIA H200, 580.159.04\n")
        make_db(self.db, [
            dict(variant="sdpa_cudnn", **{"pass": "forward"}, sdpa_backend="cudnn_attention", kernels_per_forward=1,
                 memcpy_per_forward=0, memset_per_forward=0, gpu_time_us_median=300.0, rel_error=2.5e-3),
            dict(variant="sdpa_cudnn", **{"pass": "backward"}, sdpa_backend="cudnn_attention",
                 sdpa_backend_backward="cudnn_attention", kernels_per_forward=3, memcpy_per_forward=0,
                 memset_per_forward=1, gpu_time_us_median=760.0, grad_rel_error_q=2.5e-3, grad_rel_error_k=2.4e-3,
                 grad_rel_error_v=2.3e-3),
            dict(variant="naive", **{"pass": "forward_backward"}, kernels_per_forward=14, memcpy_per_forward=0,
                 memset_per_forward=4, gpu_time_us_median=150.0, grad_rel_error_q=4.6e-3, grad_rel_error_k=4e-3,
                 grad_rel_error_v=3e-3, batch=8, heads=16, kv_heads=16, seq_len_q=1024, seq_len_kv=1024, head_dim=64,
                 dtype="fp16"),
            dict(variant="sdpa_efficient", **{"pass": "backward"}, status="unsupported",
                 error_message="No available kernel"),
            dict(variant="my_op", **{"pass": "backward"}, status="unsupported", error_message="forward-only"),
        ])

    def tearDown(self):
        self.tmp.cleanup()

    def write_python(self, *lines):
        with open(self.jsonl, "w") as f:
            f.write("\n".join(lines) + "\n")

    def run_report(self, *args):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = training_report.main(list(args))
        return code, out.getvalue(), err.getvalue()

    def python_lines(self, cudnn_backward_kernels=3, cudnn_backward_median=770.0):
        return (python_line(variant="sdpa_cudnn", **{"pass": "forward"}, kernels=1, memcpy=0, memset=0,
                            median_us=297.0, rel_error=2.5e-3),
                python_line(variant="sdpa_cudnn", **{"pass": "backward"}, kernels=cudnn_backward_kernels, memcpy=0,
                            memset=1, median_us=cudnn_backward_median, grad_rel_error_q=2.5e-3,
                            grad_rel_error_k=2.4e-3, grad_rel_error_v=2.3e-3, sdpa_backend_backward="cudnn_attention"),
                python_line(variant="naive", **{"pass": "forward_backward"}, shape="8x16x1024x64", batch=8, heads=16,
                            kv_heads=16, seq_len=1024, head_dim=64, dtype="fp16", kernels=14, memcpy=0, memset=4,
                            median_us=100.0, grad_rel_error_q=4.6e-3, grad_rel_error_k=4e-3, grad_rel_error_v=3e-3),
                python_line(variant="sdpa_efficient", **{"pass": "backward"}, status="unsupported",
                            error="No available kernel"))

    def test_equal_counts(self):
        self.write_python(*self.python_lines())
        code, out, err = self.run_report(self.db, self.jsonl, self.machine)
        self.assertEqual(code, 0, out + err)
        summary = "5 cases, counts equal 3/3, medians >=200us within 3% 2/2 (1 without a Python line, 0 of them of a built-in variant)"
        self.assertIn(summary, out)
        self.assertIn("NVIDIA H200, 580.159.04", out)
        for section in ("## forward\n", "## backward\n", "## forward_backward\n"):
            self.assertIn(section, out)
        cudnn_backward = next(line for line in out.splitlines() if line.startswith("| 2x32/8x4096x128 | bf16 | 1 | sdpa_cudnn")
                              and "2.50e-03 / 2.40e-03 / 2.30e-03" in line)
        self.assertIn("| cudnn_attention | cudnn_attention | 3 | 3 |", cudnn_backward)
        self.assertIn("| 0.987 | yes |", cudnn_backward)
        # 150 us against 100 us: shown, not judged
        naive = next(line for line in out.splitlines() if "| naive |" in line)
        self.assertIn("| 8x16x1024x64 | fp16 |", naive)
        self.assertIn("| 1.500 | - |", naive)
        self.assertIn("| backward | bf16 | 2.50e-03 | 2.50e-03 |", out)

    def test_a_count_that_differs_fails(self):
        self.write_python(*self.python_lines(cudnn_backward_kernels=4, cudnn_backward_median=700.0))
        code, out, _ = self.run_report(self.db, self.jsonl)
        self.assertEqual(code, 1)
        self.assertIn("counts equal 2/3, medians >=200us within 3% 1/2", out)
        self.assertIn("| **no** |", out)
        self.assertIn("- backward 2x32/8x4096x128 bf16 sdpa_cudnn: (3, 0, 1) vs (4, 0, 1)", out)

    def test_a_built_in_case_without_a_python_line_fails(self):
        self.write_python(*self.python_lines()[1:])  # the Python run stopped before sdpa_cudnn's forward
        code, out, _ = self.run_report(self.db, self.jsonl)
        self.assertEqual(code, 1)
        self.assertIn("(2 without a Python line, 1 of them of a built-in variant)", out)

    def test_python_args(self):
        code, out, _ = self.run_report("--python-args", self.db)
        self.assertEqual(code, 0)
        self.assertEqual(out.strip(), "--causal 1 --shapes 2x32/8x4096x128,8x16x1024x64 --dtypes bf16,fp16 "
                                      "--passes forward,backward,forward_backward "
                                      "--variants sdpa_cudnn,naive,sdpa_efficient")

    def test_per_shape_lines_follow_the_run_and_leave_out_what_the_config_excluded(self):
        os.remove(self.db)
        big = dict(batch=1, heads=32, kv_heads=8, seq_len_q=8192, seq_len_kv=8192)
        make_db(self.db, [  # stored (case_id) in this order: the order the sweep ran them
            dict(variant="sdpa_cudnn", **{"pass": "forward"}, causal=0, gpu_time_us_median=300.0),
            dict(variant="sdpa_cudnn", **{"pass": "backward"}, causal=0, gpu_time_us_median=900.0),
            dict(variant="naive", **{"pass": "forward"}, causal=0, gpu_time_us_median=5000.0),  # no naive backward
            dict(variant="sdpa_cudnn", **{"pass": "forward"}, gpu_time_us_median=260.0),
            dict(variant="sdpa_cudnn", **{"pass": "forward"}, gpu_time_us_median=520.0, deterministic=1),
            dict(variant="sdpa_cudnn", **{"pass": "backward"}, gpu_time_us_median=2700.0, **big),  # naive excluded
        ])
        code, out, _ = self.run_report("--python-args", self.db, "--per-shape")
        self.assertEqual(code, 0)
        self.assertEqual(out.strip().splitlines(), [
            "--causal 0 --shapes 2x32/8x4096x128 --dtypes bf16 --passes forward,backward --variants sdpa_cudnn",
            "--causal 0 --shapes 2x32/8x4096x128 --dtypes bf16 --passes forward --variants naive",
            "--causal 1 --shapes 2x32/8x4096x128 --dtypes bf16 --passes forward --variants sdpa_cudnn",
            "--causal 1 --deterministic 1 --shapes 2x32/8x4096x128 --dtypes bf16 --passes forward --variants sdpa_cudnn",
            "--causal 1 --shapes 1x32/8x8192x128 --dtypes bf16 --passes backward --variants sdpa_cudnn"])
        code, out, err = self.run_report("--python-args", self.db, "--per-shap")  # a typo: usage, exit 2
        self.assertEqual((code, out), (2, ""))
        self.assertIn("--python-args RESULTS.db [--per-shape]", err)
        code, out, _ = self.run_report("--python-args", self.db)  # one line per mask: the cross product
        self.assertEqual(out.strip().splitlines()[0], "--causal 1 --shapes 2x32/8x4096x128,1x32/8x8192x128 "
                                                      "--dtypes bf16 --passes forward,backward --variants sdpa_cudnn")

    def test_a_windowed_case_is_left_to_serving_reference(self):
        # torch_reference.py has no window: a windowed case (gpt-oss's 1024 keys) would be measured as the plain
        # causal case of its shape and matched under the same key; serving_reference.py measures windows.
        os.remove(self.db)
        oss = dict(batch=2, heads=64, kv_heads=8, seq_len_q=2048, seq_len_kv=2048, head_dim=64)
        make_db(self.db, [
            dict(variant="sdpa_flash", **{"pass": "forward"}, gpu_time_us_median=450.0, window_left=1023,
                 window_right=0, **oss),
            dict(variant="sdpa_cudnn", **{"pass": "forward"}, gpu_time_us_median=300.0),
        ])
        code, out, _ = self.run_report("--python-args", self.db, "--per-shape")
        self.assertEqual((code, out.strip().splitlines()), (0, [
            "--causal 1 --shapes 2x32/8x4096x128 --dtypes bf16 --passes forward --variants sdpa_cudnn"]))
        code, out, _ = self.run_report("--python-args", self.db)
        self.assertEqual(out.strip(), "--causal 1 --shapes 2x32/8x4096x128 --dtypes bf16 --passes forward "
                                      "--variants sdpa_cudnn")
        # Python's plain causal line of the windowed shape is not matched with it: the case is not in the table.
        self.write_python(python_line(variant="sdpa_cudnn", **{"pass": "forward"}, kernels=1, memcpy=0, memset=0,
                                      median_us=300.0),
                          python_line(variant="sdpa_flash", **{"pass": "forward"}, shape="2x64/8x2048x64", batch=2,
                                      heads=64, kv_heads=8, seq_len=2048, head_dim=64, kernels=1, memcpy=0, memset=0,
                                      median_us=900.0))
        code, out, _ = self.run_report(self.db, self.jsonl)
        self.assertEqual(code, 0, out)
        self.assertIn("1 cases, counts equal 0/0, medians >=200us within 3% 1/1", out)
        self.assertNotIn("2x64/8x2048x64", out)

    def test_python_is_judged_over_as_many_samples_as_attnsweep_took(self):
        os.remove(self.db)
        make_db(self.db, [dict(variant="sdpa_cudnn", **{"pass": "forward"}, kernels_per_forward=1, memcpy_per_forward=0,
                               memset_per_forward=0, gpu_time_us_median=900.0, samples=5, rel_error=2.5e-3)])
        # Python's first five samples sit at 900 us, then the GPU reaches its power cap: 1000 us.
        times = [898.0, 901.0, 900.0, 899.0, 902.0] + [1000.0] * 10
        self.write_python(python_line(variant="sdpa_cudnn", **{"pass": "forward"}, kernels=1, memcpy=0, memset=0,
                                      median_us=1000.0, times_us=times, hold="dispatch", hold_cycles=150_000,
                                      rel_error=2.5e-3))
        code, out, err = self.run_report(self.db, self.jsonl)
        self.assertEqual(code, 0, out + err)
        self.assertIn("medians >=200us within 3% 1/1", out)
        row = next(line for line in out.splitlines() if "| sdpa_cudnn |" in line)
        self.assertIn("| 900.0 | 1000.0 | 900.0 | 1.000 | yes |", row)
        self.assertIn("--hold dispatch", out)
        # Python took fewer samples than attnsweep: all of them, and the cell says so.
        self.write_python(python_line(variant="sdpa_cudnn", **{"pass": "forward"}, kernels=1, memcpy=0, memset=0,
                                      median_us=950.0, times_us=[900.0, 950.0, 1000.0], hold="0", rel_error=2.5e-3))
        code, out, _ = self.run_report(self.db, self.jsonl)
        self.assertIn("| 900.0 | 950.0 | 950.0 (all 3, n 5) | 0.947 | **no** |", out)
        self.assertIn("no hold (--hold 0", out)
        # Without its samples in order, the whole median is judged: 0.900, outside 3%.
        self.write_python(python_line(variant="sdpa_cudnn", **{"pass": "forward"}, kernels=1, memcpy=0, memset=0,
                                      median_us=1000.0, rel_error=2.5e-3))
        code, out, _ = self.run_report(self.db, self.jsonl)
        self.assertIn("medians >=200us within 3% 0/1", out)
        self.assertIn("| 900.0 | 1000.0 |  | 0.900 | **no** |", out)
        self.assertIn("(~1 ms or more)", out)  # a line without --hold: the default

    def test_a_capped_case_is_its_own_call_and_matched_by_its_cap(self):
        os.remove(self.db)
        make_db(self.db, [naive_forward_case(9, 300.0, 2.5e-3, softcap=2.0), naive_forward_case(6, 250.0, 2.4e-3)])
        code, out, _ = self.run_report("--python-args", self.db)
        self.assertEqual(code, 0)
        self.assertEqual(out.strip().splitlines(), [
            "--causal 1 --shapes 2x32/8x4096x128 --dtypes bf16 --passes forward --variants naive",
            "--causal 1 --softcap 2 --shapes 2x32/8x4096x128 --dtypes bf16 --passes forward --variants naive"])
        # Python's capped line is matched with the capped case only: 9 kernels with 9, 6 with 6.
        self.write_python(naive_forward_line(9, 301.0, 2.5e-3, softcap=2.0), naive_forward_line(6, 251.0, 2.4e-3))
        code, out, err = self.run_report(self.db, self.jsonl)
        self.assertEqual(code, 0, out + err)
        self.assertIn("counts equal 2/2", out)
        self.assertIn("| 2x32/8x4096x128 softcap2 | bf16 |", out)

    def test_alibi_and_sinks_cases_are_their_own_calls_and_matched_by_them(self):
        os.remove(self.db)
        make_db(self.db, [naive_forward_case(11, 320.0, 2.6e-3, alibi=1, sinks=1),
                          naive_forward_case(7, 280.0, 2.5e-3, alibi=1), naive_forward_case(6, 250.0, 2.4e-3)])
        code, out, _ = self.run_report("--python-args", self.db)
        self.assertEqual(code, 0)
        self.assertEqual(out.strip().splitlines(), [
            "--causal 1 --shapes 2x32/8x4096x128 --dtypes bf16 --passes forward --variants naive",
            "--causal 1 --alibi 1 --shapes 2x32/8x4096x128 --dtypes bf16 --passes forward --variants naive",
            "--causal 1 --alibi 1 --sinks 1 --shapes 2x32/8x4096x128 --dtypes bf16 --passes forward --variants naive"])
        self.write_python(naive_forward_line(11, 321.0, 2.6e-3, alibi=True, sinks=True),
                          naive_forward_line(7, 281.0, 2.5e-3, alibi=True), naive_forward_line(6, 251.0, 2.4e-3))
        code, out, err = self.run_report(self.db, self.jsonl)
        self.assertEqual(code, 0, out + err)
        self.assertIn("counts equal 3/3", out)
        self.assertIn("| 2x32/8x4096x128 alibi sinks | bf16 |", out)
        self.assertIn("| 2x32/8x4096x128 alibi | bf16 |", out)

    def test_unreadable_inputs(self):
        self.assertEqual(self.run_report(self.db)[0], 2)
        self.assertEqual(self.run_report(os.path.join(self.tmp.name, "absent.db"), self.jsonl)[0], 2)
        with open(self.jsonl, "w") as f:
            f.write("not sqlite\n")
        self.assertEqual(self.run_report(self.jsonl, self.jsonl)[0], 2)


if __name__ == "__main__":
    unittest.main()


STUB_ATTNSWEEP = '''#!{python}
# A stand-in for build/attnsweep in the dry run: `run CONFIG --db PATH` stores four CPU cases.
import sys
sys.path.insert(0, {tests!r})
import test_training_tools as t
assert sys.argv[1] == "run" and sys.argv[3] == "--db", sys.argv
shape = dict(batch=1, heads=4, kv_heads=2, seq_len_q=16, seq_len_kv=16, head_dim=8, dtype="bf16",
             kernels_per_forward=0, memcpy_per_forward=0, memset_per_forward=0, gpu_time_us_median=250.0)
t.make_db(sys.argv[4], [dict(shape, variant=v, **{{"pass": p}}) for v in ("naive", "sdpa_math")
                        for p in ("forward", "backward")])
print("stub sweep: 4 cases", file=sys.stderr)
'''


@needs_torch
class DeviceScriptDryRun(unittest.TestCase):
    """proofs/training/device_training.sh end to end with stand-ins for nvidia-smi, the build and attnsweep,
    and the Python reference on the CPU: the steps, the files brought back, the exit status."""

    def test_dry_run(self):
        with tempfile.TemporaryDirectory() as tmp:
            tree, bin_dir, out = (os.path.join(tmp, d) for d in ("tree", "bin", "out"))
            for folder in ("scripts", "proofs/training", "runner/storage", "container", "configs", "build"):
                os.makedirs(os.path.join(tree, folder))
            os.makedirs(bin_dir)
            for path in ("proofs/training/device_training.sh", "scripts/device_prologue.sh", "scripts/training_report.py",
                         "scripts/results_db.py", "scripts/torch_reference.py", "runner/storage/schema.sql"):
                with open(os.path.join(ROOT, path)) as src, open(os.path.join(tree, path), "w") as dst:
                    dst.write(src.read())
            stub = STUB_ATTNSWEEP.format(python=sys.executable, tests=os.path.dirname(os.path.abspath(__file__)))
            scripts = {
                os.path.join(tree, "container/build.sh"):
                    f"#!/bin/sh\necho stub build \"$@\"\ncp {os.path.join(tmp, 'attnsweep')} build/attnsweep\n",
                os.path.join(tmp, "attnsweep"): stub,
                os.path.join(bin_dir, "nvidia-smi"): "#!/bin/sh\necho 'name, driver_version'\necho 'Stub GPU, 0.0'\n",
                os.path.join(bin_dir, "python3"): f"#!/bin/sh\nexec {sys.executable} \"$@\"\n",
            }
            for path, text in scripts.items():
                with open(path, "w") as f:
                    f.write(text)
                os.chmod(path, 0o755)
            env = dict(os.environ, OUT=out, PATH=bin_dir + os.pathsep + os.environ["PATH"], PY_DEVICE="cpu",
                       PY_SAMPLES="3", PY_HOLD="0", PY_TIMEOUT="200", DEVICE_TESTS="none", CUDA_VISIBLE_DEVICES="")
            env.pop("TEARDOWN_CUPTI", None)
            result = subprocess.run(["bash", os.path.join(tree, "proofs/training/device_training.sh")], env=env,
                                    capture_output=True, text=True, timeout=280)
            log = result.stdout + result.stderr
            self.assertEqual(result.returncode, 0, log)
            self.assertEqual(sorted(os.listdir(out)), ["h200-training.md", "logs.tgz", "machine.txt",
                                                       "python_training.jsonl", "training.db.gz"])
            self.assertIn("--causal 1 --shapes 1x4/2x16x8 --dtypes bf16 --passes forward,backward "
                          "--variants naive,sdpa_math", log)
            with open(os.path.join(out, "h200-training.md")) as f:
                report = f.read()
            self.assertIn("4 cases, counts equal 4/4", report)
            self.assertIn("no hold (--hold 0: samples back to back", report)
            self.assertIn("Stub GPU, 0.0", report)
            with open(os.path.join(out, "python_training.jsonl")) as f:
                rows = [json.loads(line) for line in f.read().splitlines()]
            self.assertEqual(len(rows), 4)
            self.assertEqual({r.get("hold_cycles") for r in rows}, {0})  # PY_HOLD reached the reference
