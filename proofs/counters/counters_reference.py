#!/usr/bin/env python3
"""Nsight Compute's side of the hardware-counter check (issue 39): runs one attention pass of
PyTorch in Python, between cudaProfilerStart and cudaProfilerStop, so that

    ncu --profile-from-start off --metrics dram__bytes_read.sum,dram__bytes_write.sum --csv --page raw --print-units base \
        python3 proofs/counters/counters_reference.py --variant sdpa_flash --shape 8x16x1024x64 --causal 1

measures exactly that pass's kernels (after warm-up forwards outside the profiled range), on inputs
drawn as attnsweep draws them (scripts/torch_reference.py), with the L2 flushed before the pass
as attnsweep does before its counter pass. Then

    python3 proofs/counters/counters_reference.py --report ncu.csv attnsweep.db

prints, per case, Nsight Compute's DRAM bytes per kernel and summed beside attnsweep's (the kernels
and cases tables of the run), and both against the minimum bytes (cases.min_bytes).
   usage: counters_reference.py --variant V --shape BxH[/KV]xSxD | BxH[/KV]xSQ:SKVxD [--causal 1]
          counters_reference.py --report NCU_CSV[,NCU_CSV...] DB"""
import argparse
import csv
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
from results_db import open_read_only  # noqa: E402


def parse_case_shape(text):
    """BxH[/KV]xSxD, or BxH[/KV]xSQ:SKVxD for a decode step (SQ query rows against SKV keys)."""
    b, h, s, d = text.split("x")
    heads, kv = (int(x) for x in h.split("/")) if "/" in h else (int(h), int(h))
    sq, skv = (int(x) for x in s.split(":")) if ":" in s else (int(s), int(s))
    return int(b), heads, kv, sq, skv, int(d)


def run_pass(args):
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    b, h, kv, sq, skv, d = parse_case_shape(args.shape)
    g = torch.Generator("cuda").manual_seed(0)
    q = torch.randn(b, h, sq, d, generator=g, device="cuda").to(torch.bfloat16)
    k = torch.randn(b, kv, skv, d, generator=g, device="cuda").to(torch.bfloat16)
    v = torch.randn(b, kv, skv, d, generator=g, device="cuda").to(torch.bfloat16)
    causal = bool(args.causal)
    backends = {"sdpa_flash": SDPBackend.FLASH_ATTENTION, "sdpa_cudnn": SDPBackend.CUDNN_ATTENTION,
                "sdpa_efficient": SDPBackend.EFFICIENT_ATTENTION, "sdpa_math": SDPBackend.MATH}
    if sq != skv and causal:  # attnsweep's bottom right: the last query row sees every key
        from torch.nn.attention.bias import causal_lower_right
        mask = causal_lower_right(sq, skv)
        causal = False
    else:
        mask = None

    def attend():
        if args.variant == "naive":
            kk = k.repeat_interleave(h // kv, 1) if kv != h else k
            vv = v.repeat_interleave(h // kv, 1) if kv != h else v
            scores = (q @ kk.transpose(-2, -1)) * d ** -0.5
            if args.causal:
                keep = torch.ones(sq, skv, dtype=torch.bool, device="cuda").tril(skv - sq)
                scores = scores.masked_fill(~keep, float("-inf"))
            return torch.softmax(scores, dim=-1) @ vv
        with sdpa_kernel(backends[args.variant]):
            return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal, enable_gqa=kv != h)

    with torch.no_grad():
        for _ in range(3):
            attend()
        flush = torch.empty(2 * torch.cuda.get_device_properties(0).L2_cache_size, dtype=torch.uint8, device="cuda")
        flush.zero_()
        torch.cuda.synchronize()
        torch.cuda.cudart().cudaProfilerStart()
        attend()
        torch.cuda.synchronize()
        torch.cuda.cudart().cudaProfilerStop()


def read_ncu(paths):
    """Nsight Compute's raw CSV pages: (label, kernel name, read bytes, written bytes) per kernel."""
    rows = []
    for path in paths.split(","):
        label = os.path.basename(path).rsplit(".", 1)[0]
        with open(path) as f:
            lines = [line for line in f if line.startswith('"')]  # ncu's own lines (==PROF==) are not CSV
        reader = csv.DictReader(lines)
        for row in reader:
            try:
                read = float(row["dram__bytes_read.sum"].replace(",", ""))
                written = float(row["dram__bytes_write.sum"].replace(",", ""))
            except (KeyError, ValueError):
                continue  # the units row
            rows.append((label, row.get("Kernel Name", "?"), read, written))
    return rows


def kernel_base(name):
    """A kernel's own name: without "void ", its template arguments, parameters and namespaces."""
    name = name.removeprefix("void ")
    for stop in ("<", "("):
        name = name.split(stop, 1)[0]
    return name.rsplit("::", 1)[-1].strip()


def report(args):
    ncu = {}
    for label, name, read, written in read_ncu(args.report[0]):
        ncu.setdefault(label, []).append((name, read, written))
    db = open_read_only(args.report[1])
    print("| case | kernel | ncu read MB | attnsweep read MB | ncu written MB | attnsweep written MB |")
    print("|---|---|---|---|---|---|")
    summary = []
    for label, kernels in sorted(ncu.items()):
        variant, shape = label.split("__", 1)
        shape = shape.replace("-", "/")
        b, h, kv, sq, skv, d = parse_case_shape(shape)
        case = db.execute("SELECT case_id, dram_read_bytes, dram_write_bytes, min_bytes, gpu_time_us_median FROM cases "
                          "WHERE variant = ? AND batch = ? AND heads = ? AND kv_heads = ? AND seq_len_q = ? AND "
                          "seq_len_kv = ? AND head_dim = ? AND status = 'ok'", (variant, b, h, kv, sq, skv, d)).fetchone()
        if case is None:
            print(f"| {label} | (no ok case in the database) | | | | |")
            continue
        ours = db.execute("SELECT name, dram_read_bytes, dram_write_bytes FROM kernels WHERE case_id = ? AND kind = 'kernel' "
                          "AND dram_read_bytes IS NOT NULL", (case[0],)).fetchall()
        unused = list(ours)
        for name, read, written in kernels:
            # Nsight Compute and Kineto name a kernel differently (namespaces, "void "): matched by the
            # kernel's own name; among several of that name (naive's elementwise kernels), the nearest read bytes.
            same = [o for o in unused if kernel_base(o[0]) == kernel_base(name)]
            match = min(same, key=lambda o: abs((o[1] or 0) - read)) if same else None
            if match is not None:
                unused.remove(match)
            print(f"| {label} | {name[:60]} | {read / 1e6:.2f} | {'' if match is None else f'{match[1] / 1e6:.2f}'} | "
                  f"{written / 1e6:.2f} | {'' if match is None else f'{match[2] / 1e6:.2f}'} |")
        ncu_total = sum(r + w for _, r, w in kernels)
        ours_total = (case[1] or 0) + (case[2] or 0)
        summary.append((label, ncu_total, ours_total, case[3], case[4]))
    print("\n| case | ncu read+written MB | attnsweep read+written MB | attnsweep / ncu | minimum MB | "
          "attnsweep / minimum | ncu / minimum |")
    print("|---|---|---|---|---|---|---|")
    for label, ncu_total, ours_total, minimum, _ in summary:
        print(f"| {label} | {ncu_total / 1e6:.2f} | {ours_total / 1e6:.2f} | "
              f"{ours_total / ncu_total if ncu_total else float('nan'):.3f} | {minimum / 1e6:.2f} | "
              f"{ours_total / minimum:.2f} | {ncu_total / minimum:.2f} |")
    if not summary:
        print("| (no case matched) | | | | | | |")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--variant", choices=("naive", "sdpa_flash", "sdpa_cudnn", "sdpa_efficient", "sdpa_math"))
    p.add_argument("--shape")
    p.add_argument("--causal", type=int, default=1)
    p.add_argument("--report", nargs=2, metavar=("NCU_CSVS", "DB"))
    a = p.parse_args()
    if a.report:
        report(a)
    elif a.variant and a.shape:
        run_pass(a)
    else:
        p.error("--variant and --shape, or --report")


if __name__ == "__main__":
    main()
