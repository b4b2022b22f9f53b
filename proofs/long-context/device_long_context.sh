#!/usr/bin/env bash
# Issue 33, item 1's device proof, first call: build, the GPU tests, and the windowed long-context
# training sweep (proofs/long-context/long_context_window.yaml: 2x64/8 heads, head_dim 64, a
# 1024-key causal window, at 32k and 64k tokens, forward and backward), whose every backward was
# `oom` in attnsweep's own float64 check before the references were chunked by query rows.
# The causal Llama-3.1 shapes, with PyTorch's own profiler and CUDA events beside them, are the
# second call:
#   DEVICE_TESTS=none CONFIG=proofs/long-context/long_context.yaml bash proofs/training/device_training.sh
#   device: run(command="bash proofs/long-context/device_long_context.sh", carry=[".devdeps"])
# Settings: DEVICE_TESTS (ctest -R pattern, default "Gpu|ReferenceChunks"; "none": build only),
# SWEEP_TIMEOUT (seconds, default 240). $OUT gets machine.txt, window.txt, window.db.gz, logs.tgz.
# shellcheck source=../../scripts/device_prologue.sh source-path=SCRIPTDIR
source "$(dirname "$0")/../../scripts/device_prologue.sh"
proof_work long-context logs.tgz '*.db*'
machine_facts name,driver_version,clocks.max.sm,memory.total,power.limit 2>&1 | tee "$OUT/machine.txt"

device_build "$WORK/build_test.log" "${DEVICE_TESTS:-Gpu|ReferenceChunks}"
stop_unless_built "$WORK/build_test.log" 2

echo "== sweep proofs/long-context/long_context_window.yaml ($(elapsed))"
start=$(date +%s)
timeout -s INT "${SWEEP_TIMEOUT:-240}" build/attnsweep run proofs/long-context/long_context_window.yaml \
  --db "$WORK/window.db" > "$WORK/window_run.txt" 2> "$WORK/window_run.log"
sweep=$?
echo "attnsweep exit $sweep in $(( $(date +%s) - start )) s"
tail -3 "$WORK/window_run.log"
build/attnsweep query "$WORK/window.db" "SELECT variant, seq_len_q, pass, status,
    round(gpu_time_us_median, 1) AS median_us, round(tflops, 1) AS tflops, rel_error, grad_rel_error_q,
    grad_rel_error_k, grad_rel_error_v, numerics, round(peak_mem_bytes / 1073741824.0, 2) AS peak_gib,
    round(accuracy_seconds, 1) AS accuracy_s, substr(coalesce(error_message, ''), 1, 100) AS error, warnings
  FROM cases ORDER BY case_id" 2>&1 | tee "$OUT/window.txt"
backup "$WORK/window.db" "$WORK/window-copy.db" && gzip -c "$WORK/window-copy.db" > "$OUT/window.db.gz"
echo "== done in $(elapsed): build+test $status, sweep $sweep"
[ "$status" = 0 ] && [ "$sweep" = 0 ]
