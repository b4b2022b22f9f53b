"""One long series of SDPA's cuDNN forward at GQA 1x32/8x8192x128 bf16 causal with the reference's
protocol v2 (scripts/torch_reference.py: a memset of 2x L2, a ~1 ms _sleep holding the stream,
CUDA events): does Python's own time move between levels within a case as attnsweep's does
(proofs/cudnn-gqa-gap/level_shift_device.sh)? Writes one line per sample: wall time (s since the epoch), us."""
import argparse, sys, time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

p = argparse.ArgumentParser(description=__doc__)
p.add_argument("--samples", type=int, default=1500)
p.add_argument("--out", required=True, help="file for the per-sample lines")
p.add_argument("--hold", type=int, default=2_000_000,
               help="torch.cuda._sleep cycles before each sample (the reference's ~1 ms; 0: none, back to back)")
a = p.parse_args()
g = torch.Generator("cuda").manual_seed(0)
q = torch.randn(1, 32, 8192, 128, generator=g, device="cuda").bfloat16()
k = torch.randn(1, 8, 8192, 128, generator=g, device="cuda").bfloat16()
v = torch.randn(1, 8, 8192, 128, generator=g, device="cuda").bfloat16()
flush = torch.empty(2 * torch.cuda.get_device_properties(0).L2_cache_size, dtype=torch.uint8, device="cuda")
start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
with sdpa_kernel(SDPBackend.CUDNN_ATTENTION), open(a.out, "w") as out:
    for i in range(3 + a.samples):
        torch.cuda.synchronize()
        flush.zero_()
        if a.hold:
            torch.cuda._sleep(a.hold)
        start.record()
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        stop.record()
        stop.synchronize()
        if i >= 3:  # three warm-up forwards
            out.write(f"{time.time():.4f} {start.elapsed_time(stop) * 1000.0:.1f}\n")
print(f"{a.samples} samples in {a.out}", file=sys.stderr)
