"""A second tenant on the GPU for the shared-GPU nightly proof (issue 21, item 4):
bf16 matmuls back to back until killed."""
import sys, time
import torch

a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
print("tenant: computing", flush=True)
end = time.time() + float(sys.argv[1] if len(sys.argv) > 1 else 300)
while time.time() < end:
    for _ in range(20):
        a = (a @ b).clamp_(-1, 1)
    torch.cuda.synchronize()
