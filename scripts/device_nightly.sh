#!/usr/bin/env bash
# The nightly proof on the GPU machine (docs/reproducibility.md), in calls that
# fit the 10-minute limit of one:
#   PHASE=A: build, the GPU tests, `attnsweep env`, burst against sustained on the
#            power-capped cuDNN case, the study sweep cross-checked against
#            PyTorch's own profiler and CUDA events, and one night.
#   PHASE=B: build attnsweep, then three nights back to back with --history (each
#            compared with the night before), `compare` of night 1 against night 3,
#            and (unless WITH_SLOWDOWN=0) the planted slowdown of phase C against
#            night 3: about 8 minutes.
#   PHASE=C: build attnsweep, then a night with a planted slowdown
#            (ATTNSWEEP_TEST_SLOWDOWN=sdpa_flash) against night 3 (carried as
#            .devnightly/night3.db), which must exit 1.
#   device: run(command="PHASE=A bash scripts/device_nightly.sh", carry=[".devdeps"])
#           run(command="PHASE=B bash scripts/device_nightly.sh", carry=[".devdeps"])
#           run(command="PHASE=C bash scripts/device_nightly.sh", carry=[".devdeps", ".devnightly"])
set -uo pipefail
OUT="${OUT:-$PWD/device-out}"
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
cd "$(dirname "$0")/.."
PHASE="${PHASE:-A}"
backup() { python3 -c "import sqlite3,sys; d=sqlite3.connect(sys.argv[2]); sqlite3.connect(sys.argv[1]).backup(d); d.close()" "$1" "$2"; }
HIST=/tmp/nightly-history
mkdir -p "$HIST" /tmp/work

night() {  # night LABEL [extra args...]: one nightly, its output kept
  local label="$1"; shift
  local start=$(date +%s)
  "$BIN" nightly configs/nightly.yaml --db "/tmp/work/$label.db" --summary "/tmp/work/$label.md" "$@" \
    > "/tmp/work/$label.out" 2> "/tmp/work/$label.err"
  local code=$?
  echo "== $label: exit $code in $(( $(date +%s) - start )) s"
  sed -n '/^# attnsweep nightly/,$p' "/tmp/work/$label.out" | head -60
  return 0
}

if [ "$PHASE" = A ]; then
  {
    echo "== machine"; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total,power.limit,temperature.gpu --format=csv
    python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version())'
  } 2>&1 | tee "$OUT/machine.txt"
  echo "== build and GPU tests"
  start=$(date +%s)
  CTEST_REGEX="${DEVICE_TESTS:-Gpu}" container/build.sh --test > /tmp/work/build_test.log 2>&1
  status=$?
  echo "build+test exit $status in $(( $(date +%s) - start )) s"
  grep -E "tests passed|tests failed|\(Failed\)|Skipped|Not Run" /tmp/work/build_test.log | tail -20
  BIN=build/attnsweep
  echo "== attnsweep env --device cuda"
  TORCH_CUDNN_V8_API_LRU_CACHE_LIMIT=100 $BIN env --device cuda | tee /tmp/work/env.json
  echo "== burst, sustained, burst: sdpa_cudnn 1x32x8192x128 bf16 causal, 400 samples each"
  for regime in burst sustained burst; do
    $BIN run bench/regime_$regime.yaml --db /tmp/work/regime.db > /dev/null 2>> /tmp/work/regime.err
    echo "$regime exit $?"
  done
  python3 - <<'PY'
import sqlite3
db = sqlite3.connect("/tmp/work/regime.db")
for row in db.execute("SELECT r.run_id, r.measure_regime, c.samples, c.gpu_time_us_median, c.gpu_time_us_p10, c.gpu_time_us_p90, c.sm_clock_mhz_mean, c.power_cap_share, c.thermal_cap_share, c.cooldown_seconds, c.timing_seconds, c.tflops FROM cases c JOIN runs r USING (run_id) ORDER BY run_id"):
    print(row)
for row in db.execute("SELECT case_id, clock_event_reasons, count(*), round(avg(sm_clock_mhz)), round(avg(gpu_time_us),1) FROM samples GROUP BY case_id, clock_event_reasons"):
    print("reasons", row)
PY
  echo "== study sweep and the Python cross-check"
  $BIN run configs/blog.yaml --db /tmp/work/blog.db 2> /tmp/work/blog.err > /dev/null
  echo "blog exit $?"
  python3 tests/gpu/torch_reference.py --dtype bf16 > /tmp/work/python_blog.jsonl 2> /tmp/work/python_blog.err
  echo "python exit $?"
  python3 scripts/blog_report.py /tmp/work/blog.db /tmp/work/python_blog.jsonl "$OUT/machine.txt" > /tmp/work/h200-blog.md
  sed -n '/^| variant/,/^$/p' /tmp/work/h200-blog.md
  echo "== night 1"
  night night1 --history "$HIST"
  ls -la "$HIST"
  tar -C /tmp/work -czf "$OUT/work.tgz" --exclude='*.db-wal' --exclude='*.db-shm' .
  exit $status
fi

# Phases B and C: the binary alone.
echo "== machine"; nvidia-smi --query-gpu=name,driver_version,power.limit,temperature.gpu,clocks.sm --format=csv
start=$(date +%s)
BUILD_TARGET=attnsweep container/build.sh > /tmp/work/build.log 2>&1 || { tail -30 /tmp/work/build.log; exit 1; }
echo "build exit 0 in $(( $(date +%s) - start )) s"
BIN=build/attnsweep
if [ "$PHASE" = B ]; then
  # Each summary goes to $OUT as soon as it exists: a call stopped at its limit keeps them.
  for n in 1 2 3; do night night$n --history "$HIST"; cp /tmp/work/night$n.md "$OUT/"; done
  ls -la "$HIST"
  echo "== compare: night 1 against night 3 (two nights apart)"
  $BIN compare /tmp/work/night1.db /tmp/work/night3.db --format markdown > "$OUT/compare13.md"; echo "compare exit $?"
  head -40 "$OUT/compare13.md"
  if [ "${WITH_SLOWDOWN:-1}" = 1 ]; then
    echo "== planted slowdown: ATTNSWEEP_TEST_SLOWDOWN=sdpa_flash, against night 3"
    ATTNSWEEP_TEST_SLOWDOWN=sdpa_flash night slowdown --baseline /tmp/work/night3.db
    cp /tmp/work/slowdown.md "$OUT/"
  fi
else
  cp .devnightly/night3.db /tmp/work/night3.db
  echo "== planted slowdown: ATTNSWEEP_TEST_SLOWDOWN=sdpa_flash, against night 3"
  ATTNSWEEP_TEST_SLOWDOWN=sdpa_flash night slowdown --baseline /tmp/work/night3.db
fi
tar -C /tmp/work -czf "$OUT/work.tgz" --exclude='*.db-wal' --exclude='*.db-shm' --exclude='night3-whole.db' .
