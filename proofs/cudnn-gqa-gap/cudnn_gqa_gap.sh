#!/usr/bin/env bash
# Issue 36's open question, one device call (~2 minutes after the build): SDPA's cuDNN forward at
# GQA 1x32/8x8192x128 bf16 causal was 998 us in attnsweep and 897 us in Python on an H100
# (proofs/deterministic/h100-deterministic.md). Three rounds, each attnsweep's sweep of proofs/cudnn-gqa-gap/cudnn_gqa_gap.yaml
# then scripts/torch_reference.py on the same cases (like with like: protocol v2, forward and backward),
# so that order and warmth are seen; then the kernels each side ran (names, grid, Kineto's durations)
# and the clocks.
#   device: run(command="bash proofs/cudnn-gqa-gap/cudnn_gqa_gap.sh", carry=[".devdeps"])
# $OUT: gap.md (the table), gap.tgz (databases, logs).
# shellcheck source=../../scripts/device_prologue.sh source-path=SCRIPTDIR
source "$(dirname "$0")/../../scripts/device_prologue.sh"
proof_work gqa-gap gap.tgz
machine_facts name,driver_version,clocks.max.sm,power.limit | tee "$OUT/gap-machine.txt"
build_unless_built "$WORK/build.log"
clocks() { nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv,noheader; }
for round in 1 2 3; do
  echo "== round $round ($(elapsed)); clocks $(clocks)"
  build/attnsweep run proofs/cudnn-gqa-gap/cudnn_gqa_gap.yaml --db "$WORK/round$round.db" > "$WORK/round$round.txt" 2> "$WORK/round$round.err"
  echo "attnsweep exit $?"
  timeout 90 python3 scripts/torch_reference.py --variants sdpa_cudnn --shapes 2x16x4096x128,1x32/8x8192x128 \
    --dtypes bf16 --causal 1 --pass forward,backward --samples 300 --max-seconds 1 --min-samples 10 --warmup 3 \
    --forwards 3 > "$WORK/round$round.jsonl" 2> "$WORK/round$round.py.err"
  echo "python exit $?"
done
echo "== kernels ($(elapsed))"
timeout 60 python3 - > "$WORK/python-kernels.txt" 2>&1 <<'PY'
# The kernels of one forward and one backward of each case from Python's profiler: name, grid, duration.
import torch, torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
for b, h, kv, s in [(2, 16, 16, 4096), (1, 32, 8, 8192)]:
    g = torch.Generator("cuda").manual_seed(0)
    q = torch.randn(b, h, s, 128, generator=g, device="cuda").bfloat16().requires_grad_()
    k = torch.randn(b, kv, s, 128, generator=g, device="cuda").bfloat16().requires_grad_()
    v = torch.randn(b, kv, s, 128, generator=g, device="cuda").bfloat16().requires_grad_()
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        for _ in range(3):
            out = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=kv != h)
            torch.autograd.grad(out, (q, k, v), torch.randn_like(out))
        torch.cuda.synchronize()
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
            out = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=kv != h)
            torch.cuda.synchronize()
            torch.autograd.grad(out, (q, k, v), torch.ones_like(out))
            torch.cuda.synchronize()
    print(f"== {b}x{h}/{kv}x{s}x128")
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            print(f"{e.device_time:10.1f} us  {e.name[:150]}")
PY
python3 - "$WORK" > "$OUT/gap.md" <<'PY'
import glob, json, sqlite3, statistics, sys
sys.path.insert(0, "scripts")
from results_db import open_read_only
work = sys.argv[1]
print("| round | shape | pass | attnsweep median us | python median us | ratio | attnsweep validity |")
print("|---|---|---|---|---|---|---|")
for r in (1, 2, 3):
    py = {}
    try:
        for line in open(f"{work}/round{r}.jsonl"):
            o = json.loads(line)
            py[(o.get("shape"), o.get("pass", "forward"))] = o.get("median_us")
    except OSError:
        pass
    try:
        db = open_read_only(f"{work}/round{r}.db")
        rows = db.execute("SELECT batch || 'x' || heads || CASE WHEN kv_heads != heads THEN '/' || kv_heads ELSE '' END "
                          "|| 'x' || seq_len_q || 'x' || head_dim, pass, time_us_median, validity FROM results").fetchall()
    except sqlite3.Error as e:
        print(f"| {r} | database: {e} |"); continue
    for shape, pss, med, validity in rows:
        p = py.get((shape, pss))
        ratio = f"{med / p:.3f}" if med and p else "-"
        print(f"| {r} | {shape} | {pss} | {med and round(med, 1)} | {p and round(p, 1)} | {ratio} | {validity} |")
print("\n## attnsweep's kernels (round 3, Kineto's total per pass, us)\n")
db = open_read_only(f"{work}/round3.db")
for row in db.execute("SELECT c.batch, c.heads, c.kv_heads, c.seq_len_q, c.pass, round(k.total_us, 1), k.grid, k.block, "
                      "substr(k.name, 1, 150) FROM kernels k JOIN cases c USING (case_id) ORDER BY c.case_id, k.total_us DESC"):
    print("    " + " | ".join(str(x) for x in row))
print("\n## Python's kernels (one forward, one backward)\n")
print("".join("    " + l for l in open(f"{work}/python-kernels.txt")))
PY
cat "$OUT/gap.md"
echo "== done ($(elapsed)); clocks $(clocks)"
