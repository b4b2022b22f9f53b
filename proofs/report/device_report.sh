#!/usr/bin/env bash
# Issue 15's device proof in one call: build, run the GPU tests (and the
# example op's test five times more, which once hung at exit), the study sweep
# cross-checked against PyTorch's own profiler and CUDA events (the profiler
# now finishes CUPTI's teardown itself), then proofs/report/report_h200.yaml and
# `attnsweep report` on it, HTML and markdown, into $OUT.
#   device: run(command="bash proofs/report/device_report.sh", carry=[".devdeps"])   (.devdeps: docs/development.md)
# shellcheck source=../../scripts/device_prologue.sh source-path=SCRIPTDIR
source "$(dirname "$0")/../../scripts/device_prologue.sh"
mkdir -p /tmp/work
machine_facts name,driver_version,clocks.max.sm,power.limit 2>&1 | tee "$OUT/machine.txt"

echo "== build and the tests matching ${DEVICE_TESTS:=Gpu|OpLibrary|ExampleOp|CliReport|Layering}"
device_build /tmp/work/build_test.log "$DEVICE_TESTS"
stop_unless_built /tmp/work/build_test.log 1

echo "== the example op's profiling test alone, five processes (each must exit)"
for i in 1 2 3 4 5; do
  s=$(date +%s%N)
  timeout 60 build/attnsweep_torch_tests --gtest_filter='GpuExampleOp.OneCallLaunchesExactlyOneKernelAndNothingElse' \
    > /tmp/work/example_$i.txt 2>&1
  echo "process $i: exit $? in $(( ($(date +%s%N) - s) / 1000000 )) ms, $(grep -c '\[       OK \]' /tmp/work/example_$i.txt) passed"
done

echo "== study sweep against torch.profiler and CUDA events in Python (same GPU)"
rm -rf /tmp/blog.db*
build/attnsweep -q run configs/blog.yaml --db /tmp/blog.db > /dev/null 2> /tmp/work/blog_run.err
echo "attnsweep exit $?"
python3 scripts/torch_reference.py --dtype bf16 > /tmp/work/python_blog.jsonl 2> /tmp/work/python_blog.err
echo "python exit $?"
python3 scripts/blog_report.py /tmp/blog.db /tmp/work/python_blog.jsonl "$OUT/machine.txt" > "$OUT/h200-blog.md"
cat "$OUT/h200-blog.md"

echo "== proofs/report/report_h200.yaml, then attnsweep report"
rm -rf /tmp/report /tmp/report.db*; mkdir -p /tmp/report
start=$(date +%s)
build/attnsweep run proofs/report/report_h200.yaml --db /tmp/report/report-h200.db > /tmp/work/report_run.txt 2> /tmp/work/report_run.err
echo "sweep exit $? in $(( $(date +%s) - start )) s; $(ls /tmp/report/report-h200-traces | wc -l) traces, $(du -sh /tmp/report/report-h200-traces | cut -f1)"
grep "progress:" /tmp/work/report_run.err | tail -2
start=$(date +%s%N)
build/attnsweep report /tmp/report/report-h200.db -o /tmp/report/report-h200.html
echo "report exit $? in $(( ($(date +%s%N) - start) / 1000000 )) ms, $(stat -c %s /tmp/report/report-h200.html) bytes"
build/attnsweep report /tmp/report/report-h200.db --format markdown > "$OUT/h200-report.md"
echo "markdown exit $?"; head -40 "$OUT/h200-report.md"
cp /tmp/report/report-h200.html "$OUT/"
backup /tmp/report/report-h200.db /tmp/work/report-h200-whole.db && gzip -c /tmp/work/report-h200-whole.db > "$OUT/report-h200.db.gz"
tar -C /tmp/report -czf "$OUT/traces-sample.tgz" $(cd /tmp/report && ls report-h200-traces/* | head -3)
tail -c 200000 /tmp/work/build_test.log > "$OUT/build_test_tail.log"
exit $status
