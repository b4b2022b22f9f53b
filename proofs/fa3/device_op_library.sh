#!/usr/bin/env bash
# Issue 14's device proof in one call: build and run the GPU tests (the example
# op library on CUDA among them), then sweep proofs/fa3/fa3.yaml (the study's
# variants and FlashAttention-3 from the fa3-fwd wheel, loaded as an op
# library), and measure FA3 again from Python (scripts/fa3_reference.py:
# torch.profiler counts, CUDA events, float64 error) in the same call.
#   scripts/fetch_fa3.sh   (here, once: the wheel into .devwheels/fa3)
#   device: run(command="bash proofs/fa3/device_op_library.sh", carry=[".devdeps", ".devwheels"])
#   (about 3 minutes: build 1, sweep 1, Python 0.5; DEVICE_TESTS=... adds a full build and those tests)
# shellcheck source=../../scripts/device_prologue.sh source-path=SCRIPTDIR
source "$(dirname "$0")/../../scripts/device_prologue.sh"
mkdir -p /tmp/work
machine_facts name,driver_version,clocks.max.sm,power.limit 2>&1 | tee "$OUT/machine.txt"
if [ -n "${DEVICE_TESTS:-}" ]; then
  echo "== build and the GPU tests matching $DEVICE_TESTS"
else
  echo "== build attnsweep only (DEVICE_TESTS=Gpu|OpLibrary|ExampleOp also runs those tests)"
fi
device_build /tmp/work/build_test.log "${DEVICE_TESTS:-none}"
[ $status = 0 ] || { tail -30 /tmp/work/build_test.log; exit $status; }
echo "== proofs/fa3/fa3.yaml"
unpack_fa3 fresh
start=$(date +%s)
build/attnsweep run proofs/fa3/fa3.yaml --db /tmp/work/fa3.db > /tmp/work/fa3_run.txt 2> /tmp/work/fa3_run.err
echo "attnsweep exit $? in $(( $(date +%s) - start )) s"; tail -3 /tmp/work/fa3_run.err
echo "== FA3 from Python (same GPU, same protocol)"
python3 scripts/fa3_reference.py .devwheels/fa3 > /tmp/work/fa3_python.jsonl 2> /tmp/work/fa3_python.err
echo "python exit $?"; tail -2 /tmp/work/fa3_python.err
python3 scripts/op_library_report.py /tmp/work/fa3.db /tmp/work/fa3_python.jsonl "$OUT/machine.txt" > "$OUT/h200-fa3.md"
cat "$OUT/h200-fa3.md"
backup /tmp/work/fa3.db /tmp/work/fa3-whole.db
gzip -c /tmp/work/fa3-whole.db > "$OUT/fa3.db.gz"
tar -C /tmp/work -czf "$OUT/work.tgz" --exclude='*.db*' .
exit $status
