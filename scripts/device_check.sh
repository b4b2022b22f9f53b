#!/usr/bin/env bash
# One call on the GPU machine: build, run every test (GPU tests included), run
# the study sweep, and cross-check it against PyTorch's own Python profiler and
# CUDA events on the same GPU. Results land in $OUT (or ./device-out).
#   device: run(command="bash scripts/device_check.sh", carry=[".devdeps"])
# shellcheck source=device_prologue.sh source-path=SCRIPTDIR
source "$(dirname "$0")/device_prologue.sh"
machine_facts name,driver_version,clocks.max.sm,memory.total 2>&1 | tee "$OUT/machine.txt"

echo "== build and test"
# DEVICE_TESTS: a ctest -R pattern (e.g. Gpu) to run fewer tests when device time is short.
device_build "$OUT/build_test.log" "${DEVICE_TESTS:-}" "Failed|FAILED"
grep -E "^(naive|sdpa)" "$OUT/build_test.log" | head -20

echo "== study sweep (configs/blog.yaml)"
# Databases are written under /tmp and copied to $OUT as single files (SQLite's backup API),
# because $OUT brings back at most 8 files and a WAL database is three.
rm -rf /tmp/blog.db* /tmp/quick.db* /tmp/blog-traces
build/attnsweep run configs/blog.yaml --db /tmp/blog.db --traces /tmp/blog-traces 2> "$OUT/blog_run.log"
echo "attnsweep exit $?"
ls /tmp/blog-traces | head -3; du -sh /tmp/blog-traces
backup /tmp/blog.db "$OUT/blog.db"

echo "== independent measurement (torch.profiler + CUDA events in Python)"
python3 scripts/torch_reference.py --dtype bf16 > "$OUT/python_blog.jsonl" 2> "$OUT/python_blog.err"
echo "python exit $?"
python3 scripts/blog_report.py /tmp/blog.db "$OUT/python_blog.jsonl" "$OUT/machine.txt" > "$OUT/h200-blog.md"
cat "$OUT/h200-blog.md"

echo "== make run equivalent (quickstart on the GPU)"
start=$(date +%s)
build/attnsweep run configs/quickstart.yaml --db /tmp/quick.db > /tmp/quickstart.txt 2>&1
echo "quickstart exit $? in $(( $(date +%s) - start )) s"; tail -46 /tmp/quickstart.txt | head -44
backup /tmp/quick.db "$OUT/quick.db"
exit $status
