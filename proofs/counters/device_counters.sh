#!/usr/bin/env bash
# Issue 39's device proof in one call (docs/measurement.md, "Counters"):
#  1. build attnsweep and the CLI tests; run the counter tests (GpuCounters, CliCounters);
#  2. sweep proofs/counters/counters_device.yaml (the study's shape and a decode step, naive, flash, cuDNN,
#     efficient) with measure.counters and again without, for the counter pass's cost in wall time;
#  3. run the same passes from Python under Nsight Compute (ncu, the independent check:
#     proofs/counters/counters_reference.py) and compare DRAM bytes per kernel and per pass, and both
#     against the minimum bytes of the fused kernels.
#   device: run(command="bash proofs/counters/device_counters.sh", carry=[".devdeps"])
# $OUT: machine.txt, gpu-tests.log, counters.md (attnsweep's report section), ncu.md, counters.tgz.
# shellcheck source=../../scripts/device_prologue.sh source-path=SCRIPTDIR
source "$(dirname "$0")/../../scripts/device_prologue.sh"
proof_work counters counters.tgz
{
  machine_facts name,driver_version,clocks.max.sm,memory.total,power.limit
  command -v ncu || ls /usr/local/cuda/bin/ncu 2>&1
} 2>&1 | tee "$OUT/machine.txt"

echo "== 1. build and the counter tests ($(elapsed))"
BUILD_TARGET="attnsweep attnsweep_cli_tests" device_build "$WORK/build.log" none
stop_unless_built "$WORK/build.log" 2
timeout 300 build/attnsweep_cli_tests --gtest_filter='GpuCounters.*:CliCounters.*' > "$OUT/gpu-tests.log" 2>&1
tests=$?
grep -E "^\[ *(OK|FAILED|PASSED|SKIPPED) \]|Failure|Expected|Which is|actual" "$OUT/gpu-tests.log" | head -30
echo "counter tests exit $tests ($(elapsed))"

echo "== 2. the sweep with counters and without ($(elapsed))"
for mode in with without; do
  config="$WORK/$mode.yaml"
  if [ "$mode" = with ]; then cp proofs/counters/counters_device.yaml "$config"; else grep -v 'counters:' proofs/counters/counters_device.yaml > "$config"; fi
  start=$(date +%s.%N)
  timeout -s INT 150 build/attnsweep run "$config" --device cuda --db "$WORK/$mode.db" > "$WORK/$mode.txt" 2> "$WORK/$mode.err"
  code=$?
  echo "$mode counters: exit $code in $(python3 -c "import sys; print(round($(date +%s.%N) - $start, 1))") s"
  tail -2 "$WORK/$mode.err"
done
build/attnsweep report "$WORK/with.db" --format markdown --output "$WORK/with.md" > /dev/null 2>&1
sed -n '/^## Hardware counters/,/^## Unsupported/p' "$WORK/with.md" | tee "$OUT/counters.md"
python3 - "$WORK/with.db" "$WORK/without.db" <<'PY' | tee -a "$OUT/counters.md"
import sys
sys.path.insert(0, "scripts")
from results_db import open_read_only
w, wo = (open_read_only(p) for p in sys.argv[1:3])
q = ("SELECT r.variant, r.batch || 'x' || r.heads || '/' || r.kv_heads || 'x' || r.seq_len_q || ':' || r.seq_len_kv || 'x' || "
     "r.head_dim, r.time_us_median, c.wall_seconds, c.counter_seconds, c.counter_replay_passes FROM results r JOIN cases c "
     "USING (case_id) WHERE r.status = 'ok' ORDER BY r.plan_index")
a = {(r[0], r[1]): r for r in w.execute(q)}
b = {(r[0], r[1]): r for r in wo.execute(q.replace("c.counter_seconds, c.counter_replay_passes", "NULL, NULL"))}
print("\n## The counter pass's cost\n")
print("| case | median us with | median us without | ratio | case wall s with | without | counter pass s | replay passes |")
print("|---|---|---|---|---|---|---|---|")
for key, r in a.items():
    o = b.get(key)
    if not o:
        continue
    print(f"| {key[0]} {key[1]} | {r[2]:.1f} | {o[2]:.1f} | {r[2] / o[2]:.3f} | {r[3]:.2f} | {o[3]:.2f} | {r[4] or 0:.2f} | {r[5]} |")
for name, db in (("with", w), ("without", wo)):
    print(f"\n{name}: run wall seconds (sum of cases) {db.execute('SELECT round(sum(wall_seconds), 1) FROM cases').fetchone()[0]}")
PY

echo "== 3. Nsight Compute on the same passes ($(elapsed))"
NCU="$(command -v ncu || echo /usr/local/cuda/bin/ncu)"
for variant in naive sdpa_flash sdpa_cudnn sdpa_efficient; do
  for shape in 8x16x1024x64 8x32/8x1:16384x128; do
    label="${variant}__${shape//\//-}"
    timeout 60 "$NCU" --profile-from-start off --metrics dram__bytes_read.sum,dram__bytes_write.sum --csv --page raw \
      --print-units base python3 proofs/counters/counters_reference.py --variant "$variant" --shape "$shape" --causal 1 \
      > "$WORK/$label.csv" 2> "$WORK/$label.err" || echo "ncu $label exit $? $(tail -1 "$WORK/$label.err")"
  done
done
csvs=$(ls "$WORK"/*__*.csv | tr '\n' ',' | sed 's/,$//')
python3 proofs/counters/counters_reference.py --report "$csvs" "$WORK/with.db" | tee "$OUT/ncu.md"
echo "== done ($(elapsed)): tests $tests"
