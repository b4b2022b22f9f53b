#!/usr/bin/env python3
"""Independent measurement of attnsweep's serving-mask cases (issue 25) with PyTorch's Python API.

   usage: serving_reference.py RESULTS.db [--run N] [--samples 50] [--warmup 3] [--forwards 3]
                               [--out python.jsonl] > report.md

Reads the forward cases of a run of attnsweep (causal top-left or bottom-right, with or without a
sliding window; any shape with seq_len_q != seq_len_kv) and measures each again the way a PyTorch
user would write it, like with like:
- inputs drawn as attnsweep draws them (float32 randn of q (B,H,Sq,D), then k and v (B,KV,Skv,D)
  from one generator of the device seeded with the run's seed, then cast);
- masks built here from PyTorch's own definitions, not attnsweep's: the bottom right is
  torch.nn.attention.bias.causal_lower_right (materialised: ones(Sq, Skv).tril(Skv - Sq)), a window
  the band between two diagonals (tril/triu), never attnsweep's index arithmetic;
- naive, naive_inplace: matmul, scale, masked_fill(-inf), softmax, matmul with that mask;
- sdpa_flash and sdpa_efficient, bottom right without a window: F.scaled_dot_product_attention with
  attn_mask=causal_lower_right(Sq, Skv) under sdpa_kernel(backend) (PyTorch's CausalBias dispatch);
- sdpa_flash with a window: torch.ops.aten._flash_attention_forward's window_size_left/right (there
  is no SDPA flag for it);
- the rest (math, cuDNN, PyTorch's choice; efficient with a window): SDPA with the boolean mask;
- counts per forward from torch.profiler's Chrome trace, the median of CUDA-event times with
  protocol v2 (an L2 flush, torch.cuda._sleep holding the stream, events) and the relative error
  against float64 attention with the mask built here.
The report puts attnsweep's numbers beside these: counts equal or not, medians of 200 us or more
judged within 3%. Exit 1 when a count differs, a judged median is off, or a case attnsweep ran is
unsupported here (or the other way round); 2 when an input cannot be read.
"""
import argparse
import contextlib
import json
import os
import sqlite3
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import sdpa_kernel
from torch.nn.attention.bias import causal_lower_right

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_reference import BACKENDS, DTYPES, cuda_event_median, profile_counts  # noqa: E402
JUDGED_US = 200.0
TOLERANCE = 0.03


def allowed_mask(sq, skv, bottom_right, causal, left, right, device):
    """True where query i may see key j, from PyTorch's diagonals: the causal part is
    tril(offset) (causal_lower_right's definition for the bottom right, offset Skv - Sq; the top
    left's offset 0), a window the band triu(offset - left) & tril(offset + right). Without a causal
    mask a window's diagonal is the bottom right's, as FlashAttention's window_size."""
    offset = skv - sq if (bottom_right or not causal) else 0
    ones = torch.ones(sq, skv, dtype=torch.bool, device=device)
    allowed = ones.tril(offset) if causal else ones.clone()
    if left is not None:
        allowed &= ones.triu(offset - left)
    if right is not None and not causal:
        allowed &= ones.tril(offset + right)
    return allowed


def make_inputs(batch, heads, kv_heads, sq, skv, head_dim, dtype, seed):
    gen = torch.Generator("cuda").manual_seed(seed)
    q = torch.randn(batch, heads, sq, head_dim, generator=gen, device="cuda")
    k = torch.randn(batch, kv_heads, skv, head_dim, generator=gen, device="cuda")
    v = torch.randn(batch, kv_heads, skv, head_dim, generator=gen, device="cuda")
    return q.to(dtype), k.to(dtype), v.to(dtype)


def forward_of(variant, q, k, v, scale, case, allowed):
    """A zero-argument forward, as a user would write this variant for this mask."""
    grouped = k.shape[1] != q.shape[1]
    sq, skv = q.shape[-2], k.shape[-2]
    windowed = case["window_left"] is not None or case["window_right"] is not None
    plain_causal = case["causal"] and not windowed and (not case["bottom_right"] or sq == skv)
    if variant in ("naive", "naive_inplace"):
        masked = allowed.logical_not()

        def naive():
            kk, vv = k, v
            if grouped:
                repeats = q.shape[1] // k.shape[1]
                kk, vv = k.repeat_interleave(repeats, 1), v.repeat_interleave(repeats, 1)
            scores = (q @ kk.transpose(-2, -1)) * scale
            if variant == "naive":
                scores = scores.masked_fill(masked, float("-inf"))
            else:
                scores.masked_fill_(masked, float("-inf"))
            return torch.softmax(scores, dim=-1) @ vv
        return naive
    if variant == "sdpa_flash" and windowed:
        if case["causal"] and not case["bottom_right"] and sq != skv:
            def refused():
                raise RuntimeError("FlashAttention's window is aligned to the bottom right, not the top left")
            return refused
        left = -1 if case["window_left"] is None else case["window_left"]
        right = 0 if case["causal"] else (-1 if case["window_right"] is None else case["window_right"])

        def flash_window():
            out = torch.ops.aten._flash_attention_forward(
                q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), None, None, sq, skv, 0.0,
                bool(case["causal"]), False, scale=scale, window_size_left=left, window_size_right=right)[0]
            return out.transpose(1, 2)
        return flash_window
    if plain_causal:
        return lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=scale, enable_gqa=grouped)
    if variant in ("sdpa_flash", "sdpa_efficient") and case["causal"] and case["bottom_right"] and not windowed:
        bias = causal_lower_right(sq, skv)
        return lambda: F.scaled_dot_product_attention(q, k, v, attn_mask=bias, scale=scale, enable_gqa=grouped)
    return lambda: F.scaled_dot_product_attention(q, k, v, attn_mask=allowed, scale=scale, enable_gqa=grouped)


def reference(q, k, v, scale, allowed):
    qd, kd, vd = q.double(), k.double(), v.double()
    if kd.shape[1] != qd.shape[1]:
        repeats = qd.shape[1] // kd.shape[1]
        kd, vd = kd.repeat_interleave(repeats, 1), vd.repeat_interleave(repeats, 1)
    scores = (qd @ kd.transpose(-2, -1)) * scale
    scores = scores.masked_fill(allowed.logical_not(), float("-inf"))
    return torch.softmax(scores, dim=-1) @ vd


def measure(case, seed, a):
    q, k, v = make_inputs(case["batch"], case["heads"], case["kv_heads"], case["seq_len_q"], case["seq_len_kv"],
                          case["head_dim"], DTYPES[case["dtype"]], seed)
    scale = case["head_dim"] ** -0.5
    allowed = allowed_mask(case["seq_len_q"], case["seq_len_kv"], case["bottom_right"], case["causal"],
                           case["window_left"], case["window_right"], "cuda")
    fn = forward_of(case["variant"], q, k, v, scale, case, allowed)
    row = {"plan_index": case["plan_index"]}
    backend = BACKENDS.get(case["variant"])
    with sdpa_kernel(backend) if backend is not None else contextlib.nullcontext():
        try:
            with torch.no_grad():
                for _ in range(a.warmup):
                    out = fn()
                torch.cuda.synchronize()
        except RuntimeError as error:
            row.update(status="unsupported", reason=str(error).splitlines()[0])
            return row
        counts = profile_counts(fn, a.forwards)
        ref = reference(q, k, v, scale, allowed)
        row.update(status="ok", kernels=counts["kernel"], memcpy=counts["gpu_memcpy"], memset=counts["gpu_memset"],
                   rel_error=((out.double() - ref).norm() / ref.norm()).item(),
                   median_us=cuda_event_median(fn, a.samples, "v2"))
    del ref, out
    torch.cuda.empty_cache()
    return row


def mask_label(case):
    text = {(0, 0): "full", (1, 0): "causal", (1, 1): "causal_bottom_right"}.get(
        (int(case["causal"]), int(case["bottom_right"])), "full")
    if case["window_left"] is not None or case["window_right"] is not None:
        side = lambda b: "inf" if b is None else str(b)  # noqa: E731
        text = ("" if text == "full" else text + " ") + f"window[{side(case['window_left'])},{side(case['window_right'])}]"
    return text


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("db")
    p.add_argument("--run", type=int, help="run id (default: the latest)")
    p.add_argument("--samples", type=int, default=50)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--forwards", type=int, default=3)
    p.add_argument("--out", help="also write the Python rows here, one JSON object per line")
    a = p.parse_args()
    try:
        db = sqlite3.connect(f"file:{a.db}?mode=ro", uri=True)
        db.row_factory = sqlite3.Row
        run = a.run or db.execute("SELECT max(run_id) FROM runs").fetchone()[0]
        found = db.execute("SELECT seed FROM runs WHERE run_id = ?", (run,)).fetchone()
        if found is None:
            print(f"error: {a.db}: no run {run} in it" if a.run else f"error: {a.db}: no run in it", file=sys.stderr)
            return 2
        seed = found[0]
        cases = [dict(r) for r in db.execute(
            "SELECT plan_index, variant, batch, heads, kv_heads, seq_len_q, seq_len_kv, head_dim, dtype, causal, "
            "causal_bottom_right AS bottom_right, window_left, window_right, status, kernels_per_forward, "
            "memcpy_per_forward, memset_per_forward, gpu_time_us_median, rel_error, sdpa_backend, validity "
            "FROM cases WHERE run_id = ? AND pass = 'forward' AND status IN ('ok', 'unsupported') ORDER BY plan_index",
            (run,))]
    except sqlite3.Error as error:
        print(f"error: {a.db}: {error}", file=sys.stderr)
        return 2
    out = open(a.out, "w") if a.out else None
    print(f"# Serving masks: attnsweep run {run} of {a.db} against PyTorch's Python API\n")
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name(0)}; protocol v2, {a.samples} samples, "
          f"{a.forwards} profiled forwards\n")
    print("| # | variant | shape | dtype | mask | attnsweep k/c/s | python k/c/s | counts | attnsweep us | python us |"
          " ratio | judged | rel_error attnsweep | rel_error python | backend |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    tally = {"counts_equal": 0, "counts_differ": 0, "judged": 0, "within": 0, "status_differ": 0, "both_unsupported": 0}
    for case in cases:
        row = measure(case, seed, a)
        if out:
            out.write(json.dumps(row) + "\n")
        heads = str(case["heads"]) if case["kv_heads"] == case["heads"] else f"{case['heads']}/{case['kv_heads']}"
        shape = f"{case['batch']}x{heads}x{case['seq_len_q']}x{case['seq_len_kv']}x{case['head_dim']}"
        label = mask_label(case)
        if case["status"] != row["status"]:
            tally["status_differ"] += 1
            print(f"| {case['plan_index']} | {case['variant']} | {shape} | {case['dtype']} | {label} | {case['status']} |"
                  f" {row['status']} ({row.get('reason', '')[:80]}) | STATUS DIFFERS | | | | | | | |")
            continue
        if case["status"] == "unsupported":
            tally["both_unsupported"] += 1
            continue
        ours = (case["kernels_per_forward"], case["memcpy_per_forward"], case["memset_per_forward"])
        theirs = (row["kernels"], row["memcpy"], row["memset"])
        equal = tuple(float(x) for x in ours) == tuple(float(x) for x in theirs)
        tally["counts_equal" if equal else "counts_differ"] += 1
        ratio = case["gpu_time_us_median"] / row["median_us"] if row["median_us"] else None
        judged = max(case["gpu_time_us_median"], row["median_us"]) >= JUDGED_US
        verdict = ""
        if judged:
            tally["judged"] += 1
            within = abs(ratio - 1) <= TOLERANCE
            tally["within"] += within
            verdict = "within 3%" if within else "OFF"
        print(f"| {case['plan_index']} | {case['variant']} | {shape} | {case['dtype']} | {label} |"
              f" {'/'.join(str(x) for x in ours)} | {'/'.join(f'{x:g}' for x in theirs)} | {'equal' if equal else 'DIFFER'} |"
              f" {case['gpu_time_us_median']:.1f} | {row['median_us']:.1f} | {ratio:.3f} | {verdict} |"
              f" {case['rel_error']:.2e} | {row['rel_error']:.2e} | {case['sdpa_backend'] or ''} |")
    print(f"\n{len(cases)} cases: counts equal in {tally['counts_equal']} of {tally['counts_equal'] + tally['counts_differ']}"
          f" run on both sides; medians of {JUDGED_US:.0f} us or more within 3% in {tally['within']} of {tally['judged']};"
          f" unsupported on both sides {tally['both_unsupported']}; status differs in {tally['status_differ']}.")
    failed = tally["counts_differ"] or tally["status_differ"] or tally["within"] != tally["judged"]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
