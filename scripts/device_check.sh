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
# DEVICE_TESTS: a ctest -R pattern (e.g. Gpu) to run fewer tests when device time is short.
CTEST_REGEX="${DEVICE_TESTS:-}" container/build.sh --test > "$OUT/build_test.log" 2>&1
status=$?
echo "build+test exit $status in $(( $(date +%s) - start )) s"
grep -E "tests passed|tests failed|Failed|FAILED|\(Failed\)|Skipped" "$OUT/build_test.log" | tail -20
grep -E "^(naive|sdpa)" "$OUT/build_test.log" | head -20

echo "== study sweep (configs/blog.yaml)"
# Databases are written under /tmp and copied to $OUT as single files (SQLite's backup API),
# because $OUT brings back at most 8 files and a WAL database is three.
rm -rf /tmp/blog.db* /tmp/quick.db* /tmp/blog-traces
build/attnsweep run configs/blog.yaml --db /tmp/blog.db --traces /tmp/blog-traces 2> "$OUT/blog_run.log"
echo "attnsweep exit $?"
ls /tmp/blog-traces | head -3; du -sh /tmp/blog-traces
backup() { python3 -c "import sqlite3,sys; d=sqlite3.connect(sys.argv[2]); sqlite3.connect(sys.argv[1]).backup(d); d.close()" "$1" "$2"; }
backup /tmp/blog.db "$OUT/blog.db"

echo "== independent measurement (torch.profiler + CUDA events in Python)"
python3 tests/gpu/torch_reference.py --dtype bf16 > "$OUT/python_blog.jsonl" 2> "$OUT/python_blog.err"
echo "python exit $?"
python3 scripts/blog_report.py /tmp/blog.db "$OUT/python_blog.jsonl" "$OUT/machine.txt" > "$OUT/h200-blog.md"
cat "$OUT/h200-blog.md"

echo "== make run equivalent (quickstart on the GPU)"
start=$(date +%s)
build/attnsweep run configs/quickstart.yaml --db /tmp/quick.db > /tmp/quickstart.txt 2>&1
echo "quickstart exit $? in $(( $(date +%s) - start )) s"; tail -46 /tmp/quickstart.txt | head -44
backup /tmp/quick.db "$OUT/quick.db"
exit $status
