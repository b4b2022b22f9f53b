#!/usr/bin/env bash
# Issue 36's device check of fp8, after the program is built (proofs/serving/device_serving.sh or
# proofs/training/device_training.sh in the same call): sweeps proofs/fp8/fp8_device.yaml, measures the built-in
# variants again with scripts/torch_reference.py (scripts/training_report.py: counts, medians,
# errors) and FA3 with scripts/fa3_reference.py in bf16 and fp8_e4m3 (scripts/op_library_report.py).
#   scripts/fetch_fa3.sh (here, once), then on the device:
#   run(command="... bash proofs/serving/device_serving.sh; bash proofs/fp8/fp8_device.sh", carry=[".devdeps", ".devwheels"])
# Writes fp8-builtin.md, fp8-fa3.md and fp8.db.gz to $OUT.
# shellcheck source=../../scripts/device_prologue.sh source-path=SCRIPTDIR
source "$(dirname "$0")/../../scripts/device_prologue.sh"
proof_work fp8
need_built proofs/serving/device_serving.sh
unpack_fa3
echo "== proofs/fp8/fp8_device.yaml ($(elapsed))"
start=$(date +%s)
timeout -s INT "${SWEEP_TIMEOUT:-120}" build/attnsweep run proofs/fp8/fp8_device.yaml --db "$WORK/fp8.db" \
  > "$WORK/run.txt" 2> "$WORK/run.err"
echo "attnsweep exit $? in $(( $(date +%s) - start )) s"; tail -3 "$WORK/run.err"; cat "$WORK/run.txt" | head -40
backup "$WORK/fp8.db" "$WORK/fp8-whole.db" && gzip -c "$WORK/fp8-whole.db" > "$OUT/fp8.db.gz"
echo "== the built-in variants from Python ($(elapsed))"
python3 scripts/training_report.py --python-args "$WORK/fp8-whole.db" 2>> "$WORK/python.err" | while read -r line; do
  # shellcheck disable=SC2086
  timeout "${PY_TIMEOUT:-90}" python3 scripts/torch_reference.py $line --samples 30 --max-seconds 1 --min-samples 10 \
    --warmup 3 --forwards 3 < /dev/null >> "$WORK/builtin_python.jsonl" 2>> "$WORK/python.err"
  echo "torch_reference.py exit $?"
done
python3 scripts/training_report.py "$WORK/fp8-whole.db" "$WORK/builtin_python.jsonl" > "$OUT/fp8-builtin.md"
echo "training_report.py exit $?"; grep -iE "counts equal|within|differ" "$OUT/fp8-builtin.md" | head -8
echo "== FA3 from Python ($(elapsed))"
for dtype in bf16 fp8_e4m3; do
  timeout "${PY_TIMEOUT:-90}" python3 scripts/fa3_reference.py .devwheels/fa3 --shapes 2x16x4096x128,1x32/8x8192x128 \
    --causal 1 --dtype "$dtype" --samples 100 >> "$WORK/fa3_python.jsonl" 2>> "$WORK/fa3_python.err"
  echo "fa3_reference.py ($dtype) exit $?"
done
tail -2 "$WORK/fa3_python.err"
python3 scripts/op_library_report.py "$WORK/fp8-whole.db" "$WORK/fa3_python.jsonl" > "$OUT/fp8-fa3.md"
cat "$OUT/fp8-fa3.md"
tar -C "$WORK" -czf "$OUT/fp8-logs.tgz" --exclude='*.db*' . 2> /dev/null
