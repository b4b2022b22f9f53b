#!/usr/bin/env bash
# Issue 37's device proof in one call: builds attnsweep (the program only, no tests), sweeps configs/claims_cudnn_h200.yaml (cuDNN frontend's
# H200 results as claims) and configs/claims_fa3_paper.yaml (the FlashAttention-3 paper's Figure 5), writes
# each run's markdown report (its "Claims" and "Which backend to pick" sections), and measures the same
# built-in cases from Python (scripts/torch_reference.py through scripts/training_report.py: counts,
# medians of 200 us or more within 3%) and FA3's bf16 cases with scripts/fa3_reference.py
# (scripts/op_library_report.py). First: scripts/fetch_fa3.sh (here, once).
#   run(command="bash proofs/claims/claims_device.sh", carry=[".devdeps", ".devwheels"])
# Settings: CUDNN_TIMEOUT and FA3_TIMEOUT (seconds for each sweep, SIGINT so it stores what it has;
# defaults 300 and 90: on an H100 the cuDNN config had not reached its 22 longest claims in 200 s),
# PY_TIMEOUT (seconds for all of Python's built-in lines together; default 90), PY_FILTER (only the Python lines matching
# this extended regex), SERVING_PY_TIMEOUT (the windowed cases from Python, serving_reference.py --windowed; default 60: with the
# other defaults and a fresh build the call stays under 600 s), FA3_PY_TIMEOUT (FA3 from Python; default 60), CONFIGS (which configs, in
# which order; default "claims_cudnn_h200 claims_fa3_paper"), REQUIRE_GPU (e.g. H200: exit 3 at once on another GPU),
# RESUME_CUDNN (a database of an interrupted claims_cudnn_h200 run, e.g. carried in .devclaims/: `run --resume`
# continues it, so a call picks up the claims the last one did not reach), CLAIMS_PYTHON (0: skip both Python steps; not PYTHON, which container/build.sh reads as the interpreter),
# CLAIMS_WORK (a folder kept between calls on the same warm machine: call 1 `CLAIMS_WORK=/tmp/claims-keep
# CONFIGS=claims_cudnn_h200 CUDNN_TIMEOUT=500 CLAIMS_PYTHON=0`, call 2 `CLAIMS_WORK=/tmp/claims-keep CONFIGS=claims_fa3_paper`,
# whose Python step measures call 1's built-in cases from the database it left there).
# Writes claims_cudnn_h200.md, claims_fa3_paper.md, claims-python.md, claims-serving-python.md, claims-fa3-python.md and
# claims.tgz (both databases and the logs) to $OUT.
# shellcheck source=../../scripts/device_prologue.sh source-path=SCRIPTDIR
source "$(dirname "$0")/../../scripts/device_prologue.sh"
# CLAIMS_WORK keeps the databases between two calls on one warm machine (the whole proof does not fit
# one call's 600 s: the cuDNN config alone needs ~490 s on an H200).
WORK="${CLAIMS_WORK:-$(mktemp -d /tmp/claims.XXXXXX)}"
mkdir -p "$WORK"
machine_facts name,driver_version,clocks.max.sm,memory.total,power.limit | tee "$OUT/machine.txt"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2> /dev/null | head -1)
if [ -n "${REQUIRE_GPU:-}" ] && [[ "$gpu" != *"$REQUIRE_GPU"* ]]; then
  echo "this call needs a $REQUIRE_GPU and has ${gpu:-no GPU}: nothing run"; exit 3
fi
echo "== build attnsweep"
device_build "$WORK/build.log" none
stop_unless_built "$WORK/build.log" 2
unpack_fa3
for config in ${CONFIGS:-claims_cudnn_h200 claims_fa3_paper}; do
  echo "== configs/$config.yaml ($(elapsed))"
  start=$(date +%s)
  limit="${CUDNN_TIMEOUT:-300}"; [ "$config" = claims_fa3_paper ] && limit="${FA3_TIMEOUT:-90}"
  resume=()
  if [ "$config" = claims_cudnn_h200 ] && [ -n "${RESUME_CUDNN:-}" ]; then
    if [ "$RESUME_CUDNN" -ef "$WORK/$config.db" ]; then
      resume=(--resume)
    else
      # An earlier call's WAL beside the target would be replayed onto the copy.
      rm -f "$WORK/$config.db-wal" "$WORK/$config.db-shm"
      cp "$RESUME_CUDNN" "$WORK/$config.db" && resume=(--resume)
    fi
    if [ ${#resume[@]} -eq 0 ]; then echo "cannot resume $RESUME_CUDNN: stopped"; exit 2; fi
    echo "resuming the run in $RESUME_CUDNN"
  fi
  timeout -s INT "$limit" build/attnsweep run "configs/$config.yaml" --db "$WORK/$config.db" ${resume[@]+"${resume[@]}"} \
    > "$WORK/$config.run.txt" 2> "$WORK/$config.run.err"
  echo "attnsweep exit $? in $(seconds_since "$start") s"; tail -3 "$WORK/$config.run.err"
  backup "$WORK/$config.db" "$WORK/$config-whole.db"
  build/attnsweep report "$WORK/$config-whole.db" --format markdown --output "$OUT/$config.md"
  echo "report exit $?"; sed -n '/^## Claims/,/^## Unsupported/p' "$OUT/$config.md" | head -30
done
if [ "${CLAIMS_PYTHON:-1}" = 0 ]; then
  tar -C "$WORK" -czf "$OUT/claims.tgz" --exclude='*.db-*' --exclude=claims_cudnn_h200.db --exclude=claims_fa3_paper.db . 2> /dev/null
  echo "== done without Python ($(elapsed))"; exit 0
fi
echo "== the built-in variants from Python ($(elapsed))"
deadline=$(( $(date +%s) + ${PY_TIMEOUT:-90} ))
# One line per shape, mask, dtype and set of passes, in the order the sweep ran them (PY_FILTER: only the lines
# that match this extended regex, e.g. '192/128' for DeepSeek-V3's shapes; checked first: grep says 2 for a bad one).
grep -E -- "${PY_FILTER:-.}" < /dev/null > /dev/null
if [ $? -eq 2 ]; then echo "PY_FILTER '${PY_FILTER:-}' is not an extended regex: stopped"; exit 2; fi
python3 scripts/training_report.py --python-args "$WORK/claims_cudnn_h200-whole.db" --per-shape 2>> "$WORK/python.err" |
  grep -E -- "${PY_FILTER:-.}" | while read -r line; do
  left=$(( deadline - $(date +%s) ))
  [ "$left" -gt 5 ] || { echo "python: no time left for: $line"; break; }
  # shellcheck disable=SC2086
  timeout "$left" python3 scripts/torch_reference.py $line --samples 30 --max-seconds 1 --min-samples 10 \
    --warmup 3 --forwards 3 < /dev/null >> "$WORK/python.jsonl" 2>> "$WORK/python.err"
done
python3 scripts/training_report.py "$WORK/claims_cudnn_h200-whole.db" "$WORK/python.jsonl" > "$OUT/claims-python.md"
echo "training_report.py exit $?"; grep -iE "counts equal|within|differ" "$OUT/claims-python.md" | head -8
# The windowed cases (gpt-oss's 1024 keys), which torch_reference.py cannot draw: serving_reference.py's forwards
# (it leaves a uniform batch's backward out).
echo "== the windowed cases from Python ($(elapsed))"
timeout "${SERVING_PY_TIMEOUT:-60}" python3 -u scripts/serving_reference.py "$WORK/claims_cudnn_h200-whole.db" --windowed \
  --samples 30 --out "$WORK/serving-python.jsonl" > "$OUT/claims-serving-python.md" 2>> "$WORK/serving-python.err"
echo "serving_reference.py exit $?"; tail -1 "$OUT/claims-serving-python.md"; tail -3 "$WORK/serving-python.err"
if [[ " ${CONFIGS:-claims_cudnn_h200 claims_fa3_paper} " != *" claims_fa3_paper "* ]]; then
  tar -C "$WORK" -czf "$OUT/claims.tgz" --exclude='*.db-*' --exclude=claims_cudnn_h200.db --exclude=claims_fa3_paper.db . 2> /dev/null
  echo "== done: no FA3 run to measure from Python ($(elapsed))"; exit 0
fi
echo "== FA3 from Python ($(elapsed))"
timeout "${FA3_PY_TIMEOUT:-60}" python3 scripts/fa3_reference.py .devwheels/fa3 --shapes 1x32x16384x64,1x16x16384x128,1x8x16384x256 \
  --causal 1,0 --dtype bf16 --samples 50 > "$WORK/fa3_python.jsonl" 2>> "$WORK/fa3_python.err"
echo "fa3_reference.py exit $?"
python3 scripts/op_library_report.py "$WORK/claims_fa3_paper-whole.db" "$WORK/fa3_python.jsonl" > "$OUT/claims-fa3-python.md"
tar -C "$WORK" -czf "$OUT/claims.tgz" --exclude='*.db-*' --exclude=claims_cudnn_h200.db --exclude=claims_fa3_paper.db . 2> /dev/null
echo "== done ($(elapsed))"
