#!/usr/bin/env bash
# One call on the GPU machine: build, run every test (GPU tests included), run
# the study sweep, and cross-check it against PyTorch's own Python profiler and
# CUDA events on the same GPU. Results land in $OUT (or ./device-out).
#   device: run(command="bash scripts/device_check.sh", carry=[".devdeps"])
set -uo pipefail
OUT="${OUT:-$PWD/device-out}"
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
cd "$(dirname "$0")/.."
{
  echo "== machine"; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version())'
} 2>&1 | tee "$OUT/machine.txt"

echo "== build and test"
start=$(date +%s)
container/build.sh --test > "$OUT/build_test.log" 2>&1
status=$?
echo "build+test exit $status in $(( $(date +%s) - start )) s"
grep -E "tests passed|tests failed|Failed|FAILED|\(Failed\)|Skipped" "$OUT/build_test.log" | tail -20
grep -E "^(naive|sdpa)" "$OUT/build_test.log" | head -20

echo "== study sweep (configs/blog.yaml)"
rm -f "$OUT/blog.db"
build/attnsweep run configs/blog.yaml --db "$OUT/blog.db" --traces /tmp/blog-traces > "$OUT/blog_run.txt" 2> "$OUT/blog_run.log"
echo "attnsweep exit $?"
cat "$OUT/blog_run.txt"
ls /tmp/blog-traces | head -3; du -sh /tmp/blog-traces

echo "== independent measurement (torch.profiler + CUDA events in Python)"
python3 tests/gpu/torch_reference.py --dtype bf16 > "$OUT/python_blog.jsonl" 2> "$OUT/python_blog.err"
echo "python exit $?"
python3 scripts/blog_report.py "$OUT/blog.db" "$OUT/python_blog.jsonl" "$OUT/machine.txt" > "$OUT/h200-blog.md"
cat "$OUT/h200-blog.md"

echo "== make run equivalent (quickstart on the GPU)"
build/attnsweep run configs/quickstart.yaml --db /tmp/quick.db > "$OUT/quickstart.txt" 2>&1
echo "quickstart exit $?"; tail -15 "$OUT/quickstart.txt"
exit $status
