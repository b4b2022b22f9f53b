#!/usr/bin/env bash
# Issue 14's device proof in one call: build and run the GPU tests (the example
# op library on CUDA among them), then sweep bench/fa3.yaml (the study's
# variants and FlashAttention-3 from the fa3-fwd wheel, loaded as an op
# library), and measure FA3 again from Python (bench/fa3_reference.py:
# torch.profiler counts, CUDA events, float64 error) in the same call.
#   scripts/fetch_fa3.sh   (here, once: the wheel into .devwheels/fa3)
#   device: run(command="bash scripts/device_op_library.sh", carry=[".devdeps", ".devwheels"])
#   (about 3 minutes: build 1, sweep 1, Python 0.5; DEVICE_TESTS=... adds a full build and those tests)
set -uo pipefail
OUT="${OUT:-$PWD/device-out}"
mkdir -p "$OUT" /tmp/work
export PYTHONUNBUFFERED=1
cd "$(dirname "$0")/.."
{
  echo "== machine"; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version())'
} 2>&1 | tee "$OUT/machine.txt"
start=$(date +%s)
if [ -n "${DEVICE_TESTS:-}" ]; then
  echo "== build and the GPU tests matching $DEVICE_TESTS"
  CTEST_REGEX="$DEVICE_TESTS" container/build.sh --test > /tmp/work/build_test.log 2>&1
else
  echo "== build attnsweep only (DEVICE_TESTS=Gpu|OpLibrary|ExampleOp also runs those tests)"
  BUILD_TARGET=attnsweep container/build.sh > /tmp/work/build_test.log 2>&1
fi
status=$?
echo "build exit $status in $(( $(date +%s) - start )) s"
grep -E "tests passed|tests failed|\(Failed\)|Not Run" /tmp/work/build_test.log | tail -20
[ $status = 0 ] || { tail -30 /tmp/work/build_test.log; exit $status; }
echo "== bench/fa3.yaml"
rm -rf .devwheels/fa3 && python3 -m zipfile -e .devwheels/fa3_fwd-0.0.3-*.whl .devwheels/fa3
start=$(date +%s)
build/attnsweep run bench/fa3.yaml --db /tmp/work/fa3.db > /tmp/work/fa3_run.txt 2> /tmp/work/fa3_run.err
echo "attnsweep exit $? in $(( $(date +%s) - start )) s"; tail -3 /tmp/work/fa3_run.err
echo "== FA3 from Python (same GPU, same protocol)"
python3 bench/fa3_reference.py .devwheels/fa3 > /tmp/work/fa3_python.jsonl 2> /tmp/work/fa3_python.err
echo "python exit $?"; tail -2 /tmp/work/fa3_python.err
python3 scripts/op_library_report.py /tmp/work/fa3.db /tmp/work/fa3_python.jsonl "$OUT/machine.txt" > "$OUT/h200-fa3.md"
cat "$OUT/h200-fa3.md"
python3 -c "import sqlite3,sys; d=sqlite3.connect(sys.argv[2]); sqlite3.connect(sys.argv[1]).backup(d); d.close()" /tmp/work/fa3.db /tmp/work/fa3-whole.db
gzip -c /tmp/work/fa3-whole.db > "$OUT/fa3.db.gz"
tar -C /tmp/work -czf "$OUT/work.tgz" --exclude='*.db*' .
exit $status
