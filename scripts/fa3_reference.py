#!/usr/bin/env python3
"""The independent measurement of FlashAttention-3 (the fa3-fwd wheel) in Python,
for proofs/fa3/fa3.yaml: for each shape and mask, kernels/memcpy/memset per forward
from torch.profiler, the CUDA-event median under the same protocol as
scripts/torch_reference.py (v2: L2 flushed, stream held while enqueueing),
and the relative error against float64. Inputs are drawn as attnsweep draws
them (same seed, same order), laid out [batch, seq, heads, head_dim] once.
   usage: fa3_reference.py WHEEL_DIR [--shapes 8x16x1024x64,...] > fa3_python.jsonl"""
import argparse
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_reference as ref  # noqa: E402


def float64_output(q, k, v, scale, causal, mods):
    """Float64 attention in chunks of heads and rows (torch_reference.reference_grads without the
    gradients): the whole float64 score matrix of 1x32x16384x64 is 69 GB and ran the GPU out of
    memory (the claims call's FA3 lines at 16k tokens: exit 1)."""
    return ref.reference_grads(q, k, v, None, scale, causal, mods=mods)[0]


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("wheel_dir")
    p.add_argument("--shapes", default="8x16x1024x64,4x16x2048x128,2x16x4096x128,1x32x8192x128",
                   help="comma-separated BxHxSxD, BxH/KVxSxD for grouped-query attention")
    p.add_argument("--causal", default="1,0", help="comma-separated 1 (causal) and 0 (full), in that order")
    p.add_argument("--softcap", type=float, default=0.0, help="FA3's softcap (issue 36); 0: none")
    p.add_argument("--dtype", choices=("bf16", "fp8_e4m3"), default="bf16",
                   help="fp8_e4m3 (issue 36): the bf16 draw quantised per tensor as attnsweep does, FA3 given "
                        "q_descale, k_descale, v_descale as float32 (batch, kv_heads); the error against float64 "
                        "of the bf16 draw, and rel_error_dequantized against float64 of the dequantised inputs")
    p.add_argument("--samples", type=int, default=200)
    p.add_argument("--forwards", type=int, default=5)
    p.add_argument("--warmup", type=int, default=10)
    a = p.parse_args()
    sys.path.insert(0, a.wheel_dir)
    import fa3_fwd._C  # noqa: F401  registers torch.ops.fa3_fwd

    a.counts_only = False
    a.protocol = "v2"
    for text in a.shapes.split(","):
        shape = ref.parse_shape(text)
        for causal in (bool(int(c)) for c in a.causal.split(",")):
            q, k, v = ref.make_inputs(shape, "bf16", 0, "cuda")
            scale = shape.head_dim ** -0.5
            mods = ref.ScoreMods(a.softcap)  # the cap alone (reference() takes ScoreMods, not a float)
            extra, fed = {}, (q, k, v)
            if a.dtype != "bf16":
                quantized = [ref.quantize(t, ref.FP8[a.dtype]) for t in (q, k, v)]
                fed = tuple(t8 for t8, _ in quantized)
                extra = {f"{name}_descale": d.expand(shape.batch, shape.kv_heads).contiguous()
                         for name, (_, d) in zip("qkv", quantized)}
            qs, ks, vs = (t.transpose(1, 2).contiguous() for t in fed)

            def fa3():
                return torch.ops.fa3_fwd.fwd(qs, ks, vs, softmax_scale=scale, is_causal=causal,
                                             softcap=a.softcap, **extra)[0].transpose(1, 2)

            row = {"variant": "fa3", "shape": text, "dtype": a.dtype, "causal": causal, "batch": shape.batch,
                   "heads": shape.heads, "kv_heads": shape.kv_heads, "seq_len": shape.seq_len,
                   "head_dim": shape.head_dim, "softcap": a.softcap or None}
            if a.dtype != "bf16":
                # The kernel's own error first (measure prints the row): against float64 of the
                # dequantised inputs, attnsweep's rel_error_dequantized. A refusal shows in measure.
                try:
                    deq = [ref.dequantize(t8, d, torch.float32) for t8, d in quantized]
                    row["rel_error_dequantized"] = ref.rel_error(fa3(), float64_output(*deq, scale, causal, mods))
                    del deq
                except RuntimeError:
                    pass
            ref.measure("fa3", fa3, row, a, lambda: float64_output(q, k, v, scale, causal, mods))


if __name__ == "__main__":
    main()
