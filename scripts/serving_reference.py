#!/usr/bin/env python3
"""Independent measurement of attnsweep's serving-mask cases (issue 25) with PyTorch's Python API.

   usage: serving_reference.py RESULTS.db [--run N] [--samples 50] [--warmup 3] [--forwards 3]
                               [--fa3 NAME=PATH] [--out python.jsonl] [--windowed] > report.md

Reads the cases of a run of attnsweep (causal top-left or bottom-right, with or without a sliding
window; any shape with seq_len_q != seq_len_kv; variable-length batches and paged KV caches, schema
13; every pass) and measures each again the way a PyTorch user would write it, like with like:
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
A variable-length batch (cases.seq_lens_q/seq_lens_kv set; B sequences, sequence b has q_b queries
and kv_b keys, seq_len_q/seq_len_kv the largest) draws the padded shape as above and uses
q[b, :, :q_b], k[b, :, :kv_b], v[b, :, :kv_b]; its mask is the mask of (q_b, kv_b):
- sdpa_flash: torch.ops.aten._flash_attention_forward on the packed tensors (total, heads, D) with
  cu_seqlens (causal aligned to the bottom right per sequence: a top-left case with some
  q_b != kv_b is unsupported);
- sdpa_efficient: torch.ops.aten._efficient_attention_forward on the packed tensors with
  custom_mask_type 0 (no causal), 1 (top left), 2 (bottom right); unsupported with grouped heads or
  a window;
- the rest: the padded batch with a boolean mask (B, 1, Sq, Skv): real query rows see their
  sequence's keys under its mask, padded query rows key 0 only (their outputs are dropped);
- numerics on the packed output (total_q, H, D) against float64 attention per sequence.
A backward or forward_backward case (issue 36) runs the same attention on leaves that require grad
(scripts/torch_reference.py's pass_steps: an untimed forward before each timed
torch.autograd.grad, or both timed): the padded tensors, or the packed ones for flash's and the
efficient kernel's variable-length entry points (autograd runs their variable-length backward). The
upstream gradient is attnsweep's: float32 randn of the output's padded shape (B, H, Sq, Dv) from a
generator of the device seeded with seed + 1, cast, a variable-length batch's padding rows zeroed
(packed for the packed variants). dq, dk, dv are checked per sequence against float64 autograd of
each sequence alone; the report's error is the worst of the three (attnsweep's likewise).
A paged KV cache (cases.page_size N > 0): pages of N keys, ceil(kv_b / N) per sequence, numbered by
torch.randperm(pages) from a generator of the device seeded with seed + 2; only an op library
(--fa3) attends over it, the built-in variants are unsupported there.
--fa3 NAME=PATH: the cases of variant NAME run FlashAttention-3 (fa3-fwd 0.0.3's fa3_fwd/_C.abi3.so,
or a folder holding it; torch.ops.fa3_fwd.fwd, bf16 only, causal aligned to the bottom right):
q, k, v as (B, S, H, D), packed with cu_seqlens for a variable-length batch, k and v as the paged
cache with page_table and seqused_k for a paged one. Without it such cases are unsupported here.
Attention sinks (cases.sinks = 1, schema 17; gpt-oss): one float32 logit per query head, randn(heads)
from a generator of the device seeded with seed + 3 (torch_reference.py's ScoreMods), that takes part
in every row's softmax and gives no value: naive and naive_inplace append it as one more column
before the softmax (gpt-oss's reference), the float64 reference likewise; SDPA has no sinks (its
variants are unsupported), nor does FA3 here. Soft-capping and ALiBi cases are torch_reference.py's.
Padding, packing and the page table are made once, outside the timed pass.
The report puts attnsweep's numbers beside these: counts equal or not, medians of 200 us or more
judged within 3%. Exit 1 when a count differs, a judged median is off, or a case attnsweep ran is
unsupported here (or the other way round); 2 when an input cannot be read.
"""
import argparse
import contextlib
import hashlib
import itertools
import json
import os
import sqlite3
import statistics
import sys
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import sdpa_kernel
from torch.nn.attention.bias import causal_lower_right

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from results_db import open_read_only  # noqa: E402
from torch_reference import (BACKENDS, DTYPES, VARIANTS, ScoreMods, backend_of, consistent_counts,  # noqa: E402
                             cuda_event_median, hold_cycles, masked_reference, pass_steps, profile_counts,
                             rel_error, softmax_with_sinks, time_pass)
JUDGED_US = 200.0
TOLERANCE = 0.03
# Columns of schema 13, read from older databases as these values; and the backward's (a database
# without them has forward cases alone).
NEW_COLUMNS = {"seq_lens_q": "NULL", "seq_lens_kv": "NULL", "page_size": "0", "query_tokens": "NULL",
               "grad_rel_error_q": "NULL", "grad_rel_error_k": "NULL", "grad_rel_error_v": "NULL",
               "sdpa_backend_backward": "NULL", "softcap": "NULL", "alibi": "0", "sinks": "0"}
OP_LIBRARIES = {}  # variant name -> the op (torch.ops.fa3_fwd.fwd), from --fa3


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


def case_mask(case, sq, skv, device):
    """allowed_mask of this case's mask for a sequence of sq queries and skv keys."""
    return allowed_mask(sq, skv, case["bottom_right"], case["causal"], case["window_left"], case["window_right"],
                        device)


def window_sizes(case):
    """FlashAttention's window_size_left/right for this case: -1 is no bound, the right one is 0 under causal."""
    left = -1 if case["window_left"] is None else case["window_left"]
    right = 0 if case["causal"] else (-1 if case["window_right"] is None else case["window_right"])
    return left, right


def parse_lengths(text, count, largest, what):
    """'512,3000,8192' -> [512, 3000, 8192]: `count` integers of at least 1, the largest `largest`
    (cases.batch and seq_len_q/seq_len_kv); ValueError otherwise."""
    try:
        lengths = [int(t) for t in text.split(",")]
    except ValueError:
        raise ValueError(f"{what} {text!r}: not comma-separated integers") from None
    if len(lengths) != count:
        raise ValueError(f"{what} {text!r}: {len(lengths)} lengths for a batch of {count}")
    if min(lengths) < 1:
        raise ValueError(f"{what} {text!r}: lengths must be at least 1")
    if max(lengths) != largest:
        raise ValueError(f"{what} {text!r}: the largest is {max(lengths)}, the case says {largest}")
    return lengths


def complete_case(case):
    """Adds lens_q, lens_kv (per sequence; the uniform lengths repeated when the columns are NULL),
    varlen and page_size (0 when NULL) to a row of cases; ValueError when they do not agree with it."""
    case = dict(case)
    case["varlen"] = case.get("seq_lens_q") is not None or case.get("seq_lens_kv") is not None
    for side in ("q", "kv"):
        text, largest = case.get(f"seq_lens_{side}"), case[f"seq_len_{side}"]
        case[f"lens_{side}"] = ([largest] * case["batch"] if text is None else
                                parse_lengths(text, case["batch"], largest, f"seq_lens_{side}"))
    case["page_size"] = case.get("page_size") or 0
    if case["page_size"] < 0:
        raise ValueError(f"page_size {case['page_size']}: must not be negative")
    tokens = case.get("query_tokens")
    if tokens is not None and tokens != sum(case["lens_q"]):
        raise ValueError(f"query_tokens {tokens}: the query lengths sum to {sum(case['lens_q'])}")
    return case


def open_run(path, run=None):
    """A results database opened read-only, the run asked for (default: the latest) and its seed;
    ValueError when the path is not a regular file (a FIFO would block, a device read forever) or
    holds no such run, sqlite3.Error when it is not an attnsweep database."""
    if os.path.exists(path) and not os.path.isfile(path):
        raise ValueError("not a regular file")
    db = open_read_only(path)
    db.row_factory = sqlite3.Row
    chosen = run or db.execute("SELECT max(run_id) FROM runs").fetchone()[0]
    found = db.execute("SELECT seed FROM runs WHERE run_id = ?", (chosen,)).fetchone()
    if found is None:
        raise ValueError(f"no run {run} in it" if run else "no run in it")
    return db, chosen, found[0]


def is_windowed(case):
    """Whether the case has a sliding window (a bound on either side)."""
    return case["window_left"] is not None or case["window_right"] is not None


def read_cases(db, run, windowed_only=False):
    """The run's cases of every pass (ok or unsupported) in plan order, completed by complete_case; the
    columns of schema 13 read as NULL (page_size 0) from a database without them; with windowed_only,
    only those with a sliding window."""
    have = {r[1] for r in db.execute("PRAGMA table_info(cases)")}
    extra = ", ".join(c if c in have else f"{default} AS {c}" for c, default in NEW_COLUMNS.items())
    rows = db.execute(
        "SELECT plan_index, variant, batch, heads, kv_heads, seq_len_q, seq_len_kv, head_dim, dtype, causal, "
        "causal_bottom_right AS bottom_right, window_left, window_right, status, kernels_per_forward, "
        f"memcpy_per_forward, memset_per_forward, gpu_time_us_median, rel_error, sdpa_backend, validity, {extra}, "
        "pass FROM cases WHERE run_id = ? AND status IN ('ok', 'unsupported') ORDER BY plan_index",
        (run,))
    cases = []
    for r in rows:
        try:
            case = complete_case(dict(r))
        except ValueError as error:
            raise ValueError(f"case {r['plan_index']}: {error}") from None
        if is_windowed(case) or not windowed_only:
            cases.append(case)
    return cases


def make_inputs(batch, heads, kv_heads, sq, skv, head_dim, dtype, seed, device="cuda"):
    gen = torch.Generator(device).manual_seed(seed)
    q = torch.randn(batch, heads, sq, head_dim, generator=gen, device=device)
    k = torch.randn(batch, kv_heads, skv, head_dim, generator=gen, device=device)
    v = torch.randn(batch, kv_heads, skv, head_dim, generator=gen, device=device)
    return q.to(dtype), k.to(dtype), v.to(dtype)


def cu_seqlens(lengths, device):
    """int32 [0, l_0, l_0 + l_1, ...] (len B + 1): FlashAttention's cumulative sequence lengths."""
    return torch.tensor([0, *itertools.accumulate(lengths)], dtype=torch.int32, device=device)


def pack(x, lengths):
    """(B, H, S, D) -> (sum of lengths, H, D): sequence b's first lengths[b] rows, heads second
    (FlashAttention's variable-length layout), on x's device."""
    return torch.cat([x[b, :, :n].transpose(0, 1) for b, n in enumerate(lengths)])


def padded_mask(case, device):
    """(B, 1, Sq, Skv) bool for the padded batch of a variable-length case: query row i < q_b of
    sequence b sees its sequence's mask on keys j < kv_b (never a key >= kv_b); a padded row
    i >= q_b sees key 0 only (its output is dropped)."""
    lens_q, lens_kv = case["lens_q"], case["lens_kv"]
    allowed = torch.zeros(len(lens_q), 1, max(lens_q), max(lens_kv), dtype=torch.bool, device=device)
    for b, (nq, nkv) in enumerate(zip(lens_q, lens_kv)):
        allowed[b, 0, :nq, :nkv] = case_mask(case, nq, nkv, device)
        allowed[b, 0, nq:, 0] = True
    return allowed


# The most scores (query rows x keys, over heads) of one piece of the float64 reference (2 GiB).
CHUNK_ELEMENTS = 1 << 28
# A uniform batch with more scores than this (16 GiB of float64, more with the mask's copy) is referenced in pieces;
# below it in one tensor, as before.
WHOLE_REFERENCE_SCORES = 1 << 31


def varlen_reference(q, k, v, scale, case, chunk_elements=None):
    """Float64 attention of each sequence alone with its own mask, packed (total_q, H, D); a few
    key/value heads and query rows at a time (at most chunk_elements scores, CHUNK_ELEMENTS when None),
    so a 32k x 32k sequence of grouped heads fits."""
    chunk_elements = CHUNK_ELEMENTS if chunk_elements is None else chunk_elements
    heads, kv_heads = q.shape[1], k.shape[1]
    repeats = heads // kv_heads
    pieces = []
    for b, (nq, nkv) in enumerate(zip(case["lens_q"], case["lens_kv"])):
        allowed = case_mask(case, nq, nkv, q.device)
        groups = max(1, min(kv_heads, chunk_elements // max(1, repeats * nq * nkv)))
        # One key/value head's query heads over all nq rows can still be too many scores: rows in blocks.
        rows = max(1, min(nq, chunk_elements // max(1, groups * repeats * nkv)))
        out = torch.empty(heads, nq, v.shape[-1], dtype=torch.float64, device=q.device)
        for g0 in range(0, kv_heads, groups):
            g1 = min(kv_heads, g0 + groups)
            qh = slice(g0 * repeats, g1 * repeats)
            for r0 in range(0, nq, rows):
                r1 = min(nq, r0 + rows)
                out[qh, r0:r1] = masked_reference(q[b:b + 1, qh, r0:r1], k[b:b + 1, g0:g1, :nkv],
                                                  v[b:b + 1, g0:g1, :nkv], scale, allowed[r0:r1])[0]
        pieces.append(out.transpose(0, 1))
        del allowed
    return torch.cat(pieces)


def page_counts(lens_kv, page_size):
    return [-(-n // page_size) for n in lens_kv]


def make_page_table(lens_kv, page_size, generator):
    """int32 (B, max pages per sequence): sequence b's pages are perm[off_b : off_b + n_b], n_b =
    ceil(kv_b / page_size), perm = torch.randperm(sum of n_b) drawn from `generator` (attnsweep's:
    a generator of the device seeded with seed + 2); unused entries 0. On the generator's device."""
    counts = page_counts(lens_kv, page_size)
    device = generator.device
    perm = torch.randperm(sum(counts), generator=generator, device=device).to(torch.int32)
    table = torch.zeros(len(counts), max(counts), dtype=torch.int32, device=device)
    offset = 0
    for b, n in enumerate(counts):
        table[b, :n] = perm[offset:offset + n]
        offset += n
    return table


def paged_cache(x, lens_kv, page_size, table):
    """x (B, KV, S, D) -> cache (pages, page_size, KV, D) of x's dtype, zeros but where
    cache[table[b, p], s] = x[b, :, p * page_size + s] for p * page_size + s < kv_b."""
    counts = page_counts(lens_kv, page_size)
    cache = torch.zeros(sum(counts), page_size, x.shape[1], x.shape[3], dtype=x.dtype, device=x.device)
    for b, (n, used) in enumerate(zip(lens_kv, counts)):
        rows = torch.zeros(used * page_size, x.shape[1], x.shape[3], dtype=x.dtype, device=x.device)
        rows[:n] = x[b, :, :n].transpose(0, 1)
        cache[table[b, :used].long()] = rows.view(used, page_size, x.shape[1], x.shape[3])
    return cache


def gather_paged(cache, table, lens_kv):
    """The inverse of paged_cache: (B, KV, max kv_b, D), sequence b's keys read through its pages,
    zeros past kv_b."""
    page_size = cache.shape[1]
    out = torch.zeros(len(lens_kv), cache.shape[2], max(lens_kv), cache.shape[3], dtype=cache.dtype,
                      device=cache.device)
    for b, (n, used) in enumerate(zip(lens_kv, page_counts(lens_kv, page_size))):
        rows = cache[table[b, :used].long()].reshape(used * page_size, cache.shape[2], cache.shape[3])
        out[b, :, :n] = rows[:n].transpose(0, 1)
    return out


def refused(reason):
    """A forward that is unsupported here: raises as PyTorch would, when first called (with any arguments)."""
    def forward(*_):
        raise RuntimeError(reason)
    return forward


def naive_attention(variant, q, k, v, scale, masked, sinks=None):
    """naive (masked_fill) or naive_inplace (masked_fill_) with a boolean mask, True where masked;
    grouped key/value heads repeated for their queries; sinks (heads,): one more softmax column each."""
    if k.shape[1] != q.shape[1]:
        repeats = q.shape[1] // k.shape[1]
        k, v = k.repeat_interleave(repeats, 1), v.repeat_interleave(repeats, 1)
    scores = (q @ k.transpose(-2, -1)) * scale
    if variant == "naive":
        scores = scores.masked_fill(masked, float("-inf"))
    else:
        scores.masked_fill_(masked, float("-inf"))
    return softmax_with_sinks(scores, sinks) @ v


def forward_of(variant, q, k, v, scale, case, allowed, sinks=None):
    """A zero-argument forward, as a user would write this variant for this mask (and sinks, (heads,))."""
    grouped = k.shape[1] != q.shape[1]
    sq, skv = q.shape[-2], k.shape[-2]
    windowed = is_windowed(case)
    plain_causal = case["causal"] and not windowed and (not case["bottom_right"] or sq == skv)
    if variant in ("naive", "naive_inplace"):
        masked = allowed.logical_not()
        return lambda: naive_attention(variant, q, k, v, scale, masked, sinks)
    if sinks is not None:
        return refused("No available kernel: scaled_dot_product_attention has no attention sinks")
    if variant == "sdpa_flash" and windowed:
        if case["causal"] and not case["bottom_right"] and sq != skv:
            return refused("FlashAttention's window is aligned to the bottom right, not the top left")
        left, right = window_sizes(case)

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


def top_left_ragged(case):
    """A top-left causal mask where some sequence has q_b != kv_b: FlashAttention (2 and 3) aligns
    its causal mask to the bottom right and cannot run it."""
    return bool(case["causal"]) and not case["bottom_right"] and any(
        nq != nkv for nq, nkv in zip(case["lens_q"], case["lens_kv"]))


def varlen_attend(variant, case, scale, device):
    """How a built-in variant attends over a variable-length case: (attend, packed), attend(q, k, v)
    taking the packed rows (total, H, D) when packed, else the padded batch (B, H, S, D) with the
    padded mask; returning the packed output or the padded one. A refusal raises when called (packed
    is then None)."""
    lens_q, lens_kv = case["lens_q"], case["lens_kv"]
    windowed = is_windowed(case)
    if variant in ("sdpa_flash", "sdpa_efficient"):
        cu_q, cu_k = cu_seqlens(lens_q, device), cu_seqlens(lens_kv, device)
        max_q, max_kv = max(lens_q), max(lens_kv)
        if variant == "sdpa_flash":
            if top_left_ragged(case):
                return refused("FlashAttention's causal mask is aligned to the bottom right: a top-left causal "
                               "variable-length batch needs q_b == kv_b in every sequence"), None
            left, right = window_sizes(case)
            return (lambda q, k, v: torch.ops.aten._flash_attention_forward(
                q, k, v, cu_q, cu_k, max_q, max_kv, 0.0, bool(case["causal"]), False, scale=scale,
                window_size_left=left, window_size_right=right)[0]), True
        if case["kv_heads"] != case["heads"]:
            return refused("the efficient kernel's variable-length path needs as many key/value heads as "
                           "query heads"), None
        if windowed:
            return refused("the efficient kernel's variable-length path has no sliding window here"), None
        mask_type = 0 if not case["causal"] else (2 if case["bottom_right"] else 1)

        def efficient(q, k, v):
            # The log-sum-exp is what its backward needs: computed where a gradient will be asked.
            lse = torch.is_grad_enabled() and q.requires_grad
            return torch.ops.aten._efficient_attention_forward(
                q[None], k[None], v[None], None, cu_q, cu_k, max_q, max_kv, 0.0, mask_type, lse, scale=scale)[0][0]
        return efficient, True
    allowed = padded_mask(case, device)
    masked = allowed.logical_not()
    if variant in ("naive", "naive_inplace"):
        return (lambda q, k, v: naive_attention(variant, q, k, v, scale, masked)), False
    grouped = case["kv_heads"] != case["heads"]
    return (lambda q, k, v: F.scaled_dot_product_attention(
        q, k, v, attn_mask=allowed, scale=scale, enable_gqa=grouped)), False


def varlen_forward_of(variant, q, k, v, scale, case):
    """A zero-argument forward of a built-in variant on a variable-length case (q, k, v the padded
    batch) and the function that takes its output to the packed layout (total_q, H, D)."""
    attend, packed = varlen_attend(variant, case, scale, q.device)
    if packed is None:
        return attend, None
    if packed:
        lens_q, lens_kv = case["lens_q"], case["lens_kv"]
        qp, kp, vp = pack(q, lens_q), pack(k, lens_kv), pack(v, lens_kv)
        return (lambda: attend(qp, kp, vp)), lambda out: out
    return (lambda: attend(q, k, v)), lambda out: pack(out, case["lens_q"])


def fa3_forward_of(op, q, k, v, scale, case, seed):
    """A zero-argument forward of FA3 (torch.ops.fa3_fwd.fwd) on this case and the function that takes
    its output to the reference's layout: (B, H, Sq, D) for a uniform batch, (total_q, H, D) else."""
    if q.dtype != torch.bfloat16:
        return refused("FA3 (fa3-fwd 0.0.3) runs bf16 only"), None
    if top_left_ragged(case):
        return refused("FA3's causal mask is aligned to the bottom right, not the top left"), None
    left, right = window_sizes(case)
    common = dict(softmax_scale=scale, is_causal=bool(case["causal"]), window_size_left=left,
                  window_size_right=right)
    lens_q, lens_kv = case["lens_q"], case["lens_kv"]
    if case["varlen"]:
        common.update(cu_seqlens_q=cu_seqlens(lens_q, q.device), max_seqlen_q=max(lens_q))
        qs = pack(q, lens_q)
        finish = lambda out: out  # noqa: E731
    else:
        qs = q.transpose(1, 2).contiguous()
        finish = lambda out: out.transpose(1, 2)  # noqa: E731
    if case["page_size"]:
        table = make_page_table(lens_kv, case["page_size"], torch.Generator(q.device.type).manual_seed(seed + 2))
        ks = paged_cache(k, lens_kv, case["page_size"], table)
        vs = paged_cache(v, lens_kv, case["page_size"], table)
        common.update(page_table=table, seqused_k=torch.tensor(lens_kv, dtype=torch.int32, device=q.device))
    elif case["varlen"]:
        ks, vs = pack(k, lens_kv), pack(v, lens_kv)
        common.update(cu_seqlens_k=cu_seqlens(lens_kv, q.device), max_seqlen_k=max(lens_kv))
    else:
        ks, vs = k.transpose(1, 2).contiguous(), v.transpose(1, 2).contiguous()
    return (lambda: op(qs, ks, vs, **common)[0]), finish


def plan_forward(case, q, k, v, scale, seed):
    """The case's forward (zero arguments), the function from its output to the reference's layout
    (None when refused: the forward raises) and the float64 reference (zero arguments), on q's device."""
    variant = case["variant"]
    mods = ScoreMods(sinks=True, q=q, k=k, seed=seed) if case.get("sinks") else None
    # A uniform batch too large for one float64 score tensor (gpt-oss's 2x64 heads at 32k: 1.1e11 scores) is
    # referenced in pieces, as a variable-length batch of full sequences, and compared packed.
    pieces = not case["varlen"] and mods is None and \
        q.shape[0] * q.shape[1] * q.shape[-2] * k.shape[-2] > WHOLE_REFERENCE_SCORES
    if case["varlen"] or pieces:
        ref = lambda: varlen_reference(q, k, v, scale, case)  # noqa: E731
    else:
        ref = lambda: masked_reference(q, k, v, scale, case_mask(case, q.shape[-2], k.shape[-2], q.device),  # noqa: E731
                                       mods=mods)
    if variant in OP_LIBRARIES:
        fn, finish = fa3_forward_of(OP_LIBRARIES[variant], q, k, v, scale, case, seed)
    elif variant not in VARIANTS:
        fn, finish = refused(f"{variant} is not a variant known here (an op library needs --fa3 NAME=PATH)"), None
    elif case["page_size"]:
        fn, finish = refused("PyTorch has no attention over a paged KV cache (built-in variants)"), None
    elif case["varlen"]:
        fn, finish = varlen_forward_of(variant, q, k, v, scale, case)
    else:
        fn, finish = forward_of(variant, q, k, v, scale, case, case_mask(case, q.shape[-2], k.shape[-2], q.device),
                                mods.sinks if mods is not None else None), (lambda out: out)
    if pieces and finish is not None:
        padded = finish
        finish = lambda out: pack(padded(out), case["lens_q"])  # noqa: E731
    return fn, finish, ref


def upstream_gradient(case, q, v, seed):
    """attnsweep's upstream gradient of a backward pass: float32 randn of the padded output's shape
    (B, H, Sq, Dv) from a generator of q's device seeded with seed + 1, cast to q's dtype; a
    variable-length batch's padding rows (i >= q_b of sequence b) zeroed."""
    gen = torch.Generator(q.device.type).manual_seed(seed + 1)
    dout = torch.randn(*q.shape[:-1], v.shape[-1], generator=gen, device=q.device).to(q.dtype)
    if case["varlen"]:
        for b, n in enumerate(case["lens_q"]):
            dout[b, :, n:] = 0
    return dout


def varlen_reference_grads(q, k, v, dout, scale, case):
    """Float64 dq, dk, dv of each sequence alone (its own mask, its rows of the padded dout), packed:
    dq (total_q, H, D), dk and dv (total_kv, KV, D). One sequence's scores at a time: for the proof's
    sizes, not for 64k-token sequences."""
    dqs, dks, dvs = [], [], []
    for b, (nq, nkv) in enumerate(zip(case["lens_q"], case["lens_kv"])):
        allowed = case_mask(case, nq, nkv, q.device)
        leaves = [t[b:b + 1, :, :n].double().requires_grad_() for t, n in ((q, nq), (k, nkv), (v, nkv))]
        with torch.enable_grad():
            out = masked_reference(*leaves, scale, allowed)
            grads = torch.autograd.grad(out, leaves, dout[b:b + 1, :, :nq].double())
        for into, g in zip((dqs, dks, dvs), grads):
            into.append(g[0].transpose(0, 1))
    return tuple(torch.cat(x) for x in (dqs, dks, dvs))


def fused_node(root):
    """The name of the first node of the output's autograd graph that belongs to a fused SDPA kernel (views
    such as the efficient kernel's [0] sit above it), else the root's: attnsweep walks the graph the same way."""
    seen, stack = set(), [root]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        if backend_of(node.name()) != "math":
            return node.name()
        stack.extend(next_node for next_node, _ in node.next_functions)
    return root.name() if root is not None else ""


def measure_gradients(case, q, k, v, scale, seed, a, device="cuda"):
    """A backward or forward_backward pass of a built-in variant on a variable-length case: the
    variant's attention on leaves (the packed rows for flash's and the efficient kernel's entry points,
    the padded batch otherwise), pass_steps' untimed forward before each timed backward; counts per
    pass, the median, dq/dk/dv's errors per sequence and the backward's backend. Returns the row's update."""
    dout = upstream_gradient(case, q, v, seed)
    attend, packed = varlen_attend(case["variant"], case, scale, q.device)
    lens_q, lens_kv = case["lens_q"], case["lens_kv"]
    if packed:
        inputs, dout_in = (pack(q, lens_q), pack(k, lens_kv), pack(v, lens_kv)), pack(dout, lens_q)
        packed_grads = (lambda g: g,) * 3
    else:
        inputs, dout_in = (q, k, v), dout
        packed_grads = (lambda g: pack(g, lens_q), lambda g: pack(g, lens_kv), lambda g: pack(g, lens_kv))
    prepare, timed = pass_steps(case["pass"], attend, *inputs, dout_in)
    with torch.enable_grad():
        try:
            dispatch = []
            for _ in range(max(1, a.warmup)):
                state = prepare()
                if device == "cuda":
                    torch.cuda.synchronize()
                started = time.perf_counter()
                result = timed(state)
                dispatch.append((time.perf_counter() - started) * 1e6)
                del state, result
            leaves = tuple(t.detach().requires_grad_() for t in inputs)
            out = attend(*leaves)
            grad_fn = fused_node(out.grad_fn)
            grads = torch.autograd.grad(out, leaves, dout_in)
            del out, leaves
        except RuntimeError as error:
            return {"status": "unsupported", "reason": str(error).splitlines()[0]}
        refs = varlen_reference_grads(q, k, v, dout, scale, case)
        update = {"status": "ok", "sdpa_backend_backward": backend_of(grad_fn), "grad_fn": grad_fn}
        for name, to_packed, g, ref in zip("qkv", packed_grads, grads, refs):
            update[f"grad_rel_error_{name}"] = rel_error(to_packed(g), ref)
        del grads, refs
        hold = hold_cycles(statistics.median(dispatch))
        times = time_pass(prepare, timed, a.samples, 0, a.samples, hold, device)
        counts = consistent_counts(prepare, timed, a.forwards, device, 3)
    update.update(kernels=counts["kernels"], memcpy=counts["memcpy"], memset=counts["memset"],
                  median_us=statistics.median(times))
    return update


def measure(case, seed, a):
    if case["dtype"] not in DTYPES:
        return {"plan_index": case["plan_index"], "pass": case["pass"], "status": "skipped",
                "reason": f"{case['dtype']} is measured from Python by torch_reference.py, not here"}
    if case.get("softcap") is not None or case.get("alibi"):
        return {"plan_index": case["plan_index"], "pass": case["pass"], "status": "skipped",
                "reason": "soft-capping and ALiBi are measured from Python by torch_reference.py, not here"}
    if case.get("sinks") and (case["varlen"] or case["page_size"] or case["variant"] not in VARIANTS):
        return {"plan_index": case["plan_index"], "pass": case["pass"], "status": "skipped",
                "reason": "attention sinks are measured here for uniform batches of built-in variants only"}
    q, k, v = make_inputs(case["batch"], case["heads"], case["kv_heads"], case["seq_len_q"], case["seq_len_kv"],
                          case["head_dim"], DTYPES[case["dtype"]], seed)
    scale = case["head_dim"] ** -0.5
    row = {"plan_index": case["plan_index"], "pass": case["pass"]}
    backend = BACKENDS.get(case["variant"])
    if case["pass"] != "forward":
        if case["page_size"]:
            row.update(status="unsupported", reason="a paged KV cache is measured forward only (serving)")
            return row
        if not case["varlen"] or case["variant"] not in VARIANTS:
            row.update(status="skipped", reason="backward passes are measured here for variable-length batches "
                                                "of built-in variants only")
            return row
        with sdpa_kernel(backend) if backend is not None else contextlib.nullcontext():
            row.update(measure_gradients(case, q, k, v, scale, seed, a))
        torch.cuda.empty_cache()
        return row
    with sdpa_kernel(backend) if backend is not None else contextlib.nullcontext():
        try:
            fn, finish, make_reference = plan_forward(case, q, k, v, scale, seed)
            with torch.no_grad():
                for _ in range(max(1, a.warmup)):
                    out = fn()
                torch.cuda.synchronize()
        except RuntimeError as error:
            row.update(status="unsupported", reason=str(error).splitlines()[0])
            return row
        counts = profile_counts(fn, a.forwards)
        ref = make_reference()
        row.update(status="ok", kernels=counts["kernel"], memcpy=counts["gpu_memcpy"], memset=counts["gpu_memset"],
                   rel_error=((finish(out).double() - ref).norm() / ref.norm()).item(),
                   median_us=cuda_event_median(fn, a.samples, "v2"))
    del ref, out
    torch.cuda.empty_cache()
    return row


def mask_label(case):
    text = {(0, 0): "full", (1, 0): "causal", (1, 1): "causal_bottom_right"}.get(
        (int(case["causal"]), int(case["bottom_right"])), "full")
    if is_windowed(case):
        side = lambda b: "inf" if b is None else str(b)  # noqa: E731
        text = ("" if text == "full" else text + " ") + f"window[{side(case['window_left'])},{side(case['window_right'])}]"
    return text


def shape_label(case):
    """The shape as attnsweep labels it: BxH[/KV]xSxD (Sq = Skv) or BxH[/KV]xSqxSkvxD, BxH[/KV]xvarlen[q
    MIN-MAX, kv MIN-MAX #HASH]xD for a variable-length batch (one value when MIN == MAX; HASH the first 12
    hex digits of sha256("Q1,Q2,...;KV1,KV2,...")), then " pagedN" for a paged KV cache."""
    heads = str(case["heads"]) if case["kv_heads"] == case["heads"] else f"{case['heads']}/{case['kv_heads']}"
    if case["varlen"]:
        span = lambda ls: str(min(ls)) if min(ls) == max(ls) else f"{min(ls)}-{max(ls)}"  # noqa: E731
        listed = ",".join(map(str, case["lens_q"])) + ";" + ",".join(map(str, case["lens_kv"]))
        digest = hashlib.sha256(listed.encode()).hexdigest()[:12]
        lengths = f"varlen[q {span(case['lens_q'])}, kv {span(case['lens_kv'])} #{digest}]"
    elif case["seq_len_q"] == case["seq_len_kv"]:
        lengths = str(case["seq_len_q"])
    else:
        lengths = f"{case['seq_len_q']}x{case['seq_len_kv']}"
    text = f"{case['batch']}x{heads}x{lengths}x{case['head_dim']}"
    return text + (f" paged{case['page_size']}" if case["page_size"] else "")


def parse_op_library(text):
    """'NAME=PATH' -> (NAME, PATH); ValueError otherwise."""
    name, sep, path = text.partition("=")
    if not sep or not name.strip() or not path.strip():
        raise ValueError(f"--fa3 {text!r}: expected NAME=PATH (e.g. fa3=.devwheels/fa3/fa3_fwd/_C.abi3.so)")
    return name.strip(), path.strip()


def load_fa3(path):
    """Loads fa3-fwd's _C.abi3.so (or every .so under a folder, e.g. the unpacked wheel) and returns
    torch.ops.fa3_fwd.fwd; OSError or RuntimeError when it cannot."""
    if os.path.isdir(path):
        libraries = sorted(os.path.join(d, f) for d, _, files in os.walk(path) for f in files if f.endswith(".so"))
        if not libraries:
            raise OSError(f"{path}: no .so in it")
    elif os.path.isfile(path):
        libraries = [path]
    else:
        raise OSError(f"{path}: no such file or folder")
    for library in libraries:
        torch.ops.load_library(library)
    try:
        return torch.ops.fa3_fwd.fwd
    except (AttributeError, RuntimeError):
        raise RuntimeError(f"{path}: registers no fa3_fwd::fwd") from None


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("db")
    p.add_argument("--run", type=int, help="run id (default: the latest)")
    p.add_argument("--samples", type=int, default=50)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--forwards", type=int, default=3)
    p.add_argument("--fa3", metavar="NAME=PATH",
                   help="the variant NAME runs FA3 from PATH (fa3-fwd 0.0.3's fa3_fwd/_C.abi3.so, or a folder)")
    p.add_argument("--out", help="also write the Python rows here, one JSON object per line")
    p.add_argument("--windowed", action="store_true",
                   help="only the cases with a sliding window (a run whose other cases torch_reference.py measures, "
                        "e.g. configs/claims_cudnn_h200.yaml through scripts/training_report.py --python-args)")
    a = p.parse_args()
    fa3 = None
    if a.fa3 is not None:
        try:
            fa3 = parse_op_library(a.fa3)
        except ValueError as error:
            p.error(str(error))
    try:
        db, run, seed = open_run(a.db, a.run)
        cases = read_cases(db, run, windowed_only=a.windowed)
    except (sqlite3.Error, ValueError) as error:
        print(f"error: {a.db}: {error}", file=sys.stderr)
        return 2
    OP_LIBRARIES.clear()
    if fa3 is not None:
        try:
            OP_LIBRARIES[fa3[0]] = load_fa3(fa3[1])
        except (OSError, RuntimeError) as error:
            print(f"error: --fa3: {str(error).splitlines()[0]}", file=sys.stderr)
            return 2
    out = open(a.out, "w") if a.out else None
    print(f"# Serving masks: attnsweep run {run} of {a.db} against PyTorch's Python API\n")
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name(0)}; protocol v2, {a.samples} samples, "
          f"{a.forwards} profiled forwards\n")
    print("| # | variant | shape | dtype | mask | attnsweep k/c/s | python k/c/s | counts | attnsweep us | python us |"
          " ratio | judged | error attnsweep | error python | backend |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    tally = {"counts_equal": 0, "counts_differ": 0, "judged": 0, "within": 0, "status_differ": 0, "both_unsupported": 0,
             "skipped": 0, "gradients": 0, "gradients_within": 0}
    for case in cases:
        row = measure(case, seed, a)
        if out:
            out.write(json.dumps(row) + "\n")
            out.flush()  # kept when a time limit stops the run
        shape = shape_label(case)
        label = mask_label(case) + ("" if case["pass"] == "forward" else f" {case['pass']}")
        if row["status"] == "skipped":
            tally["skipped"] += 1
            continue
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
        if case["pass"] == "forward":
            error, py_error, backend = case["rel_error"], row["rel_error"], case["sdpa_backend"] or ""
        else:
            # The worst of dq, dk, dv on each side, within 2x of each other (the training proof's rule);
            # not compared where attnsweep stored none (the check off, its reference out of memory).
            grads = [case[f"grad_rel_error_{g}"] for g in "qkv"]
            error = None if None in grads else max(grads)
            py_error = max(row[f"grad_rel_error_{g}"] for g in "qkv")
            backend = f"{case['sdpa_backend_backward'] or ''} / {row['sdpa_backend_backward']}"
            if error is not None:
                tally["gradients"] += 1
                tally["gradients_within"] += max(error, py_error) <= 2 * min(error, py_error)
        print(f"| {case['plan_index']} | {case['variant']} | {shape} | {case['dtype']} | {label} |"
              f" {'/'.join(str(x) for x in ours)} | {'/'.join(f'{x:g}' for x in theirs)} | {'equal' if equal else 'DIFFER'} |"
              f" {case['gpu_time_us_median']:.1f} | {row['median_us']:.1f} | {ratio:.3f} | {verdict} |"
              f" {'-' if error is None else f'{error:.2e}'} | {py_error:.2e} | {backend} |")
    print(f"\n{len(cases)} cases: counts equal in {tally['counts_equal']} of {tally['counts_equal'] + tally['counts_differ']}"
          f" run on both sides; medians of {JUDGED_US:.0f} us or more within 3% in {tally['within']} of {tally['judged']};"
          f" gradient errors within 2x in {tally['gradients_within']} of {tally['gradients']};"
          f" unsupported on both sides {tally['both_unsupported']}; status differs in {tally['status_differ']};"
          f" not measured here {tally['skipped']} (backward passes of uniform batches).")
    failed = (tally["counts_differ"] or tally["status_differ"] or tally["within"] != tally["judged"]
              or tally["gradients_within"] != tally["gradients"])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
