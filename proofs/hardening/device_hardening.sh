#!/usr/bin/env bash
# Issue 21's device proof in one call (hardening round three on the H200):
#  1. build, then the GPU tests (GpuHardening.* among them) and the CPU hardening tests;
#  2. FlashAttention-3 (fa3-fwd 0.0.3 wheel) over bf16, fp16, fp32 at four shapes:
#     fp16 and fp32 must be `unsupported` with FA3's own message at every shape;
#  3. the study sweep under PYTORCH_NO_CUDA_MEMORY_CACHING=1: every case stored;
#  4. a nightly alone, then beside a second process running bf16 matmuls: inconclusive (exit 4);
#  5. the study sweep against torch.profiler and CUDA events from Python (counts and medians).
#   scripts/fetch_fa3.sh (here, once) and .devdeps (docs/development.md)
#   device: run(command="bash proofs/hardening/device_hardening.sh", carry=[".devdeps", ".devwheels"])
# shellcheck source=../../scripts/device_prologue.sh source-path=SCRIPTDIR
source "$(dirname "$0")/../../scripts/device_prologue.sh"
mkdir -p /tmp/work
exec > >(tee "$OUT/device_hardening.log") 2>&1
machine_facts name,driver_version,clocks.max.sm,power.limit 2>&1 | tee "$OUT/machine.txt"
A=build/attnsweep

echo "== 1. build and the tests matching ${DEVICE_TESTS:=Gpu|OpLibrary|ExampleOp|CliHardening|CaseRunner}"
device_build /tmp/work/build_test.log "$DEVICE_TESTS" GpuHardening
stop_unless_built /tmp/work/build_test.log 1

echo "== 2. FA3 over bf16, fp16, fp32 (proofs/hardening/fa3_dtypes.yaml)"
unpack_fa3 fresh
rm -f /tmp/work/fa3_dtypes.db*
start=$(date +%s)
$A -q run proofs/hardening/fa3_dtypes.yaml --db /tmp/work/fa3_dtypes.db > /tmp/work/fa3_dtypes.txt 2>&1
echo "attnsweep exit $? in $(( $(date +%s) - start )) s"
$A query /tmp/work/fa3_dtypes.db "SELECT variant, dtype, status, count(*) AS cases, numerics, printf('%.1e', max(rel_error)) AS max_rel_error, substr(error_message, 1, 70) AS message FROM cases GROUP BY variant, dtype, status, numerics, message ORDER BY variant, dtype"

echo "== 3. the study sweep under PYTORCH_NO_CUDA_MEMORY_CACHING=1"
rm -f /tmp/work/uncached.db*
PYTORCH_NO_CUDA_MEMORY_CACHING=1 $A -q run configs/blog.yaml --db /tmp/work/uncached.db > /tmp/work/uncached.txt 2>&1
echo "attnsweep exit $?"; tail -3 /tmp/work/uncached.txt
$A query /tmp/work/uncached.db "SELECT variant, status, kernels_per_forward AS kernels, round(gpu_time_us_median, 1) AS median_us, numerics, substr(graph_error, 1, 60) AS graph_error FROM cases ORDER BY plan_index"

echo "== 4. nightly alone, then beside a second GPU process (bf16 matmuls)"
rm -rf /tmp/work/nights; mkdir -p /tmp/work/nights
start=$(date +%s)
$A -q nightly proofs/hardening/nightly_shared.yaml --history /tmp/work/nights/history --db /tmp/work/nights/alone.db > /tmp/work/night_alone.txt 2>&1
echo "night alone: exit $? in $(( $(date +%s) - start )) s; $(grep '^nightly:' /tmp/work/night_alone.txt)"
sleep 1.1
python3 proofs/hardening/gpu_tenant.py 240 > /tmp/work/tenant.txt 2>&1 &
tenant=$!
sleep 6; cat /tmp/work/tenant.txt
nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv
start=$(date +%s)
$A nightly proofs/hardening/nightly_shared.yaml --history /tmp/work/nights/history --db /tmp/work/nights/shared.db > /tmp/work/night_shared.txt 2>&1
echo "night beside the tenant: exit $? in $(( $(date +%s) - start )) s"
kill $tenant; wait $tenant 2>/dev/null
grep -E "^### |^nightly:|other process|Not judged|shared GPU" /tmp/work/night_shared.txt | head -8
$A query /tmp/work/nights/shared.db "SELECT other_processes_start, gpu_utilization_start_pct FROM runs"
$A query /tmp/work/nights/shared.db "SELECT variant, seq_len_q, other_processes, round(cooldown_seconds, 2) AS cooldown_s, cooldown_budget_exhausted AS exhausted, round(gpu_time_us_median, 1) AS median_us FROM cases ORDER BY plan_index"
$A query /tmp/work/nights/alone.db "SELECT other_processes_start, gpu_utilization_start_pct FROM runs"

echo "== 5. study sweep against torch.profiler and CUDA events in Python (same GPU)"
rm -rf /tmp/blog.db*
$A -q run configs/blog.yaml --db /tmp/blog.db > /dev/null 2> /tmp/work/blog_run.err
echo "attnsweep exit $?"
python3 scripts/torch_reference.py --dtype bf16 > /tmp/work/python_blog.jsonl 2> /tmp/work/python_blog.err
echo "python exit $?"
python3 scripts/blog_report.py /tmp/blog.db /tmp/work/python_blog.jsonl "$OUT/machine.txt" > "$OUT/h200-blog.md"
cat "$OUT/h200-blog.md"
cp /tmp/work/night_shared.txt /tmp/work/night_alone.txt /tmp/work/fa3_dtypes.txt "$OUT/" 2>/dev/null
tail -c 150000 /tmp/work/build_test.log > "$OUT/build_test_tail.log"
exit $status
