#!/usr/bin/env bash
# Issue 24's device proof of the trust signals, in one call (about 8 minutes on an H200):
#  1. build and the GPU tests of what the trust signals touch (DEVICE_TESTS, default
#     GpuValidity|GpuEnergy|GpuCases|GpuPasses|GpuProtocol), then configs/bench.yaml swept and
#     measured again from Python with torch.profiler and CUDA events (proofs/training/device_training.sh:
#     counts equal, medians >= 200 us within 3%), now that every profiling session also holds
#     the CUDA-graph replays;
#  2. the validity labels of that sweep (scripts/validity_report.py): reasons, kernel/event
#     ratios, graph replay counts and output differences;
#  3. the energy method validated independently of attnsweep (scripts/energy_check.py: ctypes
#     NVML and torch), then attnsweep's energy per forward of the power-capped case in both
#     regimes (proofs/trust/energy_burst.yaml, proofs/trust/energy_sustained.yaml);
#  4. kernel-level differences on two real runs (proofs/trust/device_kernel_diff.sh's runs:
#     TORCH_CUDNN_SDPA_DEPRIORITIZED=1), when the call has time left (KERNEL_DIFF=0 skips it).
#   device: run(command="bash proofs/trust/device_trust.sh", carry=[".devdeps"], timeout_s=600)
# $OUT brings back at most 8 files; this writes: machine.txt, bench-python.md (the cross-check),
# validity.md, energy.md (the validation's summaries and attnsweep's two regimes),
# kernel_diff.md (when run) and trust.tgz (databases, logs, JSON lines).
# shellcheck source=../../scripts/device_prologue.sh source-path=SCRIPTDIR
source "$(dirname "$0")/../../scripts/device_prologue.sh"
WORK="$(mktemp -d -t trust-work.XXXXXX)"
finish() { tar -C "$WORK" -czf "$OUT/trust.tgz" --exclude='*.db-wal' --exclude='*.db-shm' . 2> /dev/null; }
trap finish EXIT

echo "== 1. build, GPU tests, configs/bench.yaml against Python ($(elapsed))"
OUT="$WORK/bench" DEVICE_TESTS="${DEVICE_TESTS:-GpuValidity|GpuEnergy|GpuCases|GpuPasses|GpuProtocol}" \
  CONFIG=configs/bench.yaml SWEEP_TIMEOUT="${SWEEP_TIMEOUT:-90}" PY_TIMEOUT="${PY_TIMEOUT:-150}" \
  bash proofs/training/device_training.sh > "$WORK/bench.txt" 2>&1
echo "device_training.sh exit $?"
grep -E "^(build(\+test)? exit|attnsweep exit|python exit|== done)|tests passed|tests failed|\(Failed\)|^[0-9]+ cases, counts" \
  "$WORK/bench.txt"
cp "$WORK/bench/machine.txt" "$OUT/machine.txt" 2> /dev/null
cp "$WORK/bench/h200-training.md" "$OUT/bench-python.md" 2> /dev/null
[ -x build/attnsweep ] || exit 2

echo "== 2. validity labels of the bench sweep ($(elapsed))"
if [ -s "$WORK/bench/training.db.gz" ]; then
  gunzip -c "$WORK/bench/training.db.gz" > "$WORK/bench.db"
  python3 scripts/validity_report.py "$WORK/bench.db" > "$OUT/validity.md"
  head -40 "$OUT/validity.md"
fi

echo "== 3. energy: the method's validation, then attnsweep's two regimes ($(elapsed))"
timeout "${ENERGY_CHECK_TIMEOUT:-150}" python3 scripts/energy_check.py > "$WORK/energy_check.jsonl" 2> "$WORK/energy_check.err"
echo "energy_check.py exit $?"
for regime in burst sustained; do
  timeout 90 build/attnsweep run "bench/energy_$regime.yaml" --db "$WORK/energy.db" > "$WORK/energy_$regime.txt" \
    2> "$WORK/energy_$regime.log"
  echo "attnsweep energy_$regime exit $?"
done
{
  echo "# Energy on the H200"
  echo
  echo '## scripts/energy_check.py (ctypes NVML and torch; summaries)'
  echo
  echo '```'
  grep -E '"kind": "(device|counter|steady_summary|sdpa_summary)"' "$WORK/energy_check.jsonl"
  echo '```'
  echo
  echo '## attnsweep: sdpa_cudnn 1x32x8192x128 bf16 causal forward, a 1 s energy window'
  echo
  python3 - "$WORK/energy.db" <<'PY'
import sys
sys.path.insert(0, "scripts")
from results_db import open_read_only
print("| run | regime | median us | SM clock MHz | power-capped share | energy J/forward | power W | window s | passes | TFLOP/J | validity |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
db = open_read_only(sys.argv[1])
for row in db.execute(
        "SELECT r.run_id, r.measure_regime, round(c.gpu_time_us_median, 1), round(c.sm_clock_mhz_mean),"
        " round(c.power_cap_share, 2), round(c.energy_j, 4), round(c.energy_power_w, 1), round(c.energy_window_s, 3),"
        " c.energy_passes, round(c.flops / 1e12 / c.energy_j, 3), c.validity || ifnull(' (' || c.validity_reasons || ')', '')"
        " FROM cases c JOIN runs r USING (run_id) ORDER BY r.run_id"):
    print("| " + " | ".join("" if v is None else str(v) for v in row) + " |")
PY
} > "$OUT/energy.md" 2>&1
cat "$OUT/energy.md"

if [ "${KERNEL_DIFF:-1}" = 1 ] && [ "$(seconds_since "$began")" -lt 470 ]; then
  echo "== 4. kernel differences on two real runs ($(elapsed))"
  for side in baseline candidate; do
    if [ "$side" = candidate ]; then export TORCH_CUDNN_SDPA_DEPRIORITIZED=1; fi
    timeout 60 build/attnsweep run proofs/trust/kernel_diff.yaml --db "$WORK/kd_$side.db" \
      > "$WORK/kd_$side.txt" 2> "$WORK/kd_$side.log"
    echo "$side exit $?"
  done
  unset TORCH_CUDNN_SDPA_DEPRIORITIZED
  build/attnsweep compare "$WORK/kd_baseline.db" "$WORK/kd_candidate.db" --format markdown > "$OUT/kernel_diff.md" 2>&1
  echo "compare exit $?"
  head -60 "$OUT/kernel_diff.md"
else
  echo "== 4. kernel differences skipped ($(elapsed))"
fi
echo "== done in $(elapsed)"
