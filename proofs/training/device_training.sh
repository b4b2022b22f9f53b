#!/usr/bin/env bash
# Issue 23's device proof in one call: build (and run the GPU and Python tests),
# sweep configs/training.yaml (forward, backward and forward_backward of every
# variant), measure the same cases from Python with PyTorch's own profiler and
# CUDA events (scripts/torch_reference.py --pass ...), and compare them
# (scripts/training_report.py: counts equal, medians >= 200 us within 3%,
# gradient errors side by side).
#   device: run(command="bash proofs/training/device_training.sh", carry=[".devdeps"])
# Settings (environment):
#   DEVICE_TESTS   ctest -R pattern run after the build (default "Gpu|Python"); "none" builds
#                  the attnsweep target only and runs no tests
#   CONFIG         the sweep (default configs/training.yaml)
#   SWEEP_TIMEOUT, PY_TIMEOUT   seconds for the sweep (SIGINT, so it stores what it has) and for
#                  Python (defaults 240 and 200); the whole call must fit in ~8 minutes on an H200
#   PY_SAMPLES, PY_MAX_SECONDS  Python's timing budget per case (defaults 30 samples, 1 s)
#   PY_HOLD        torch_reference.py --hold: auto (default, ~1 ms before each sample), dispatch (1.5x
#                  Python's own host dispatch: a duty cycle like attnsweep's sustained regime, so a kernel
#                  that draws the GPU into its power cap is capped alike: proofs/cudnn-gqa-gap/h100-cudnn-gqa-gap.md)
#                  or cycles (0: none, Python's dispatch inside the interval: not like with like for a backward)
#   PY_PER_SHAPE   1: Python runs exactly the sweep's cases in the order it ran them, one call per shape,
#                  mask, dtype and set of passes (training_report.py --per-shape), so nothing the config
#                  excluded runs between them
#   PY_DEVICE      cuda (default); cpu only for the dry run of tests/python (no GPU there)
# $OUT brings back at most 8 files; this writes 5: machine.txt, h200-training.md,
# python_training.jsonl, training.db.gz (one file: SQLite's backup API, not the WAL trio)
# and logs.tgz (build/test, sweep and Python logs).
# shellcheck source=../../scripts/device_prologue.sh source-path=SCRIPTDIR
source "$(dirname "$0")/../../scripts/device_prologue.sh"
# Everything of this call in a folder of its own: a test run by the build step
# (tests/python) dry-runs this very script, and fixed /tmp names let it
# overwrite the real call's logs and database (seen on the H200).
WORK="$(mktemp -d /tmp/training-work.XXXXXX)"
DB="$WORK/sweep.db"
CONFIG="${CONFIG:-configs/training.yaml}"
clocks() {
  nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu,clocks_event_reasons.active,clocks_event_reasons.sw_power_cap,clocks_event_reasons.hw_slowdown --format=csv
}
{
  machine_facts name,driver_version,clocks.max.sm,memory.total,power.limit
  echo "== clocks at start"; clocks
} 2>&1 | tee "$OUT/machine.txt"

finish() {
  { echo "== clocks at end ($(elapsed))"; clocks; } 2>&1 | tee -a "$OUT/machine.txt"
  tar -C "$WORK" -czf "$OUT/logs.tgz" --exclude='*.db*' . 2>/dev/null
}
trap finish EXIT

tests="${DEVICE_TESTS:-Gpu|Python}"
if [ "$tests" = none ]; then
  echo "== build attnsweep only"
else
  echo "== build and the tests matching $tests"
fi
device_build "$WORK/build_test.log" "$tests"
stop_unless_built "$WORK/build_test.log" 2

echo "== sweep $CONFIG ($(elapsed))"
start=$(date +%s)
timeout -s INT "${SWEEP_TIMEOUT:-240}" build/attnsweep run "$CONFIG" --db "$DB" \
  > "$WORK/training_run.txt" 2> "$WORK/training_run.log"
sweep=$?
echo "attnsweep exit $sweep in $(( $(date +%s) - start )) s"
tail -5 "$WORK/training_run.log"
if [ -s "$DB" ]; then
  backup "$DB" "$WORK/training.db" && gzip -c "$WORK/training.db" > "$OUT/training.db.gz"
fi

echo "== the same cases from Python ($(elapsed))"
# One torch_reference.py call per mask, with the shapes, dtypes, passes and built-in variants
# the sweep ran; without a database (the sweep failed) the study's training shapes.
per_shape=(); [ "${PY_PER_SHAPE:-0}" = 1 ] && per_shape=(--per-shape)
args="$(python3 scripts/training_report.py --python-args "$WORK/training.db" ${per_shape[@]+"${per_shape[@]}"} \
  2>> "$WORK/python.err")"
if [ -z "$args" ]; then
  echo "(no cases in $DB: the default training shapes)"
  args="--causal 1 --shapes 8x16x1024x64,2x16x4096x128,1x32x8192x128,2x32/8x4096x128 --dtypes bf16,fp16 --passes forward,backward,forward_backward"
fi
echo "$args"
start=$(date +%s)
: > "$OUT/python_training.jsonl"
py_status=0
deadline=$(( $(date +%s) + ${PY_TIMEOUT:-200} ))
while read -r line; do
  left=$(( deadline - $(date +%s) ))
  [ "$left" -gt 5 ] || { echo "python: no time left for: $line"; py_status=124; break; }
  # shellcheck disable=SC2086
  timeout "$left" python3 scripts/torch_reference.py $line --samples "${PY_SAMPLES:-30}" \
    --max-seconds "${PY_MAX_SECONDS:-1}" --min-samples 10 --warmup 3 --forwards 3 --device "${PY_DEVICE:-cuda}" \
    ${PY_HOLD:+--hold "$PY_HOLD"} \
    < /dev/null >> "$OUT/python_training.jsonl" 2>> "$WORK/python.err"
  code=$?; [ $code = 0 ] || py_status=$code
done <<< "$args"
echo "python exit $py_status in $(( $(date +%s) - start )) s, $(wc -l < "$OUT/python_training.jsonl") lines"
tail -3 "$WORK/python.err"

echo "== report ($(elapsed))"
report=0
if [ -s "$WORK/training.db" ]; then
  python3 scripts/training_report.py "$WORK/training.db" "$OUT/python_training.jsonl" "$OUT/machine.txt" \
    > "$OUT/h200-training.md"
  report=$?
  cat "$OUT/h200-training.md"
else
  echo "no database: no report" | tee "$OUT/h200-training.md"
  report=2
fi
echo "== done in $(elapsed): build+test $status, sweep $sweep, python $py_status, report $report"
[ $status = 0 ] && [ $report = 0 ] || exit 1
