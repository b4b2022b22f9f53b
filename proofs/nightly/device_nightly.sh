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
#   PHASE=W: the window's false-alarm and detection figures (issue 24): build
#            attnsweep, then IDENTICAL_NIGHTS identical nights of
#            configs/nightly_window.yaml with --history (the first is the baseline),
#            then two nights with the planted slowdown (SLOWDOWN), `attnsweep history`
#            of them all, and proofs/nightly/nightly_figures.py's table: about 5 to 6 minutes
#            with a 3-minute build (nights of 10 to 25 s; BUDGET_S below).
#   device: run(command="PHASE=A bash proofs/nightly/device_nightly.sh", carry=[".devdeps"])
#           run(command="PHASE=B bash proofs/nightly/device_nightly.sh", carry=[".devdeps"])
#           run(command="PHASE=C bash proofs/nightly/device_nightly.sh", carry=[".devdeps", ".devnightly"])
#           run(command="PHASE=W bash proofs/nightly/device_nightly.sh", carry=[".devdeps"], timeout_s=600)
# PHASE=W settings (environment):
#   CONFIG             the nights' config (default configs/nightly_window.yaml)
#   IDENTICAL_NIGHTS   identical nights before the slowdown (default 8: the first is the
#                      baseline; from the 7th on each is judged against a full window of 5)
#   MIN_IDENTICAL_NIGHTS, BUDGET_S   identical nights past the minimum (default 6, so that the
#                      first slowdown night meets a full window) are left out when the call
#                      would end after BUDGET_S seconds (default 360, the build included),
#                      judged by the longest night so far; the two slowdown nights always run
#   SLOWDOWN           ATTNSWEEP_TEST_SLOWDOWN of the slowdown nights (default on CUDA
#                      sdpa_flash:spin=200000: a spin kernel of 200000 GPU cycles, ~0.1 ms at
#                      1980 MHz, after each sdpa_flash call; on the CPU sdpa_flash:2, each
#                      forward twice). A plain repeat (sdpa_flash:2) on a GPU also doubles the
#                      kernel count, a counts regression that fails the first slowdown night
#   IDENTICAL_KNOB     ATTNSWEEP_TEST_SLOWDOWN of the identical nights (default on CUDA
#                      sdpa_flash:spin=0: the same spin kernel, zero cycles, so every night
#                      launches the same kernels and only the time changes; '-' for none)
#   NIGHTLY_ARGS       more nightly options, split on spaces (e.g. "--threshold 50" on a CPU)
#   DEVICE             nightly --device (default cuda: a night never falls back to the CPU)
#   BIN                an attnsweep binary to use instead of building one (the CPU dry run:
#                      BIN=/path/to/attnsweep DEVICE=cpu CONFIG=... SLOWDOWN=sdpa_flash:8)
# $OUT brings back at most 8 files; PHASE=W writes 7: machine.txt, figures.md (the
# table), slow1.md and slow2.md (the slowdown nights' summaries), history.html, nights.tgz
# (every night's summary, output, log and nights.tsv, rewritten after each night, so a call
# stopped at its limit keeps what ran) and history.tgz (the history folder's databases).
# shellcheck source=../../scripts/device_prologue.sh source-path=SCRIPTDIR
source "$(dirname "$0")/../../scripts/device_prologue.sh"
PHASE="${PHASE:-A}"

if [ "$PHASE" = W ]; then
  # Everything of this call in a folder of its own (fixed /tmp names let one call's
  # files mix with another's); the history folder inside it starts empty.
  WORK="$(mktemp -d -t nightly-window.XXXXXX)"  # under $TMPDIR, else /tmp
  HIST="$WORK/history"
  CONFIG="${CONFIG:-configs/nightly_window.yaml}"
  DEVICE="${DEVICE:-cuda}"
  if [ "$DEVICE" = cuda ]; then
    SLOWDOWN="${SLOWDOWN:-sdpa_flash:spin=200000}"
    IDENTICAL_KNOB="${IDENTICAL_KNOB:-sdpa_flash:spin=0}"
  else
    SLOWDOWN="${SLOWDOWN:-sdpa_flash:2}"
    IDENTICAL_KNOB="${IDENTICAL_KNOB:--}"
  fi
  read -r -a nightly_args <<< "${NIGHTLY_ARGS:-}"
  {
    machine_facts name,driver_version,clocks.max.sm,clocks.sm,power.limit,temperature.gpu
    echo "config $CONFIG, device $DEVICE, slowdown $SLOWDOWN, identical nights $IDENTICAL_KNOB, nightly args: ${NIGHTLY_ARGS:-(none)}"
  } 2>&1 | tee "$OUT/machine.txt"
  if [ -z "${BIN:-}" ]; then
    device_build "$WORK/build.log" none || { tail -30 "$WORK/build.log"; exit 1; }
    BIN=build/attnsweep
  fi
  printf 'label\trole\texit\tseconds\tslowdown\n' > "$WORK/nights.tsv"
  longest=0
  last_stamp=""
  night_w() {  # night_w LABEL ROLE SLOWDOWN ('-' for none): one night into $HIST, recorded in nights.tsv
    local label="$1" role="$2" knob="$3" start code seconds
    # A night's files in $HIST are named by the UTC second nightly starts in (its summary's
    # first line): a night must not start in the second of the one before (exit 2).
    while [ -n "$last_stamp" ] && [[ ! "$(date -u +%Y%m%dT%H%M%SZ)" > "$last_stamp" ]]; do sleep 0.2; done
    start=$(date +%s)
    local knob_env=()
    [ "$knob" != - ] && knob_env=("ATTNSWEEP_TEST_SLOWDOWN=$knob")
    env "${knob_env[@]}" "$BIN" nightly "$CONFIG" --device "$DEVICE" --history "$HIST" \
      --db "$WORK/$label.db" --summary "$WORK/$label.md" "${nightly_args[@]}" \
      > "$WORK/$label.out" 2> "$WORK/$label.err"
    code=$?
    seconds=$(( $(date +%s) - start ))
    last_stamp=$(sed -n '1s/^# attnsweep nightly //p' "$WORK/$label.md" 2> /dev/null)
    [ "$seconds" -gt "$longest" ] && longest=$seconds
    printf '%s\t%s\t%s\t%s\t%s\n' "$label" "$role" "$code" "$seconds" "$knob" >> "$WORK/nights.tsv"
    local what="$role"
    [ "$knob" != - ] && what="$role, ATTNSWEEP_TEST_SLOWDOWN=$knob"
    echo "== $label ($what): exit $code in $seconds s (call at $(elapsed))"
    grep -E '^(### attnsweep compare|- time window|\*\*Watch\*\*|No previous finished night|nightly: )' "$WORK/$label.out"
    [ "$code" -gt 1 ] && tail -5 "$WORK/$label.err"
    tar -C "$WORK" -czf "$OUT/nights.tgz" --exclude='*.db*' --exclude=history .
  }
  for i in $(seq 1 "${IDENTICAL_NIGHTS:-8}"); do
    # This night, the two slowdown nights and ~20 s for history and the figures must fit the budget.
    if [ "$i" -gt "${MIN_IDENTICAL_NIGHTS:-6}" ] &&
       [ $(( $(date +%s) - began + 3 * longest + 20 )) -gt "${BUDGET_S:-360}" ]; then
      echo "== identical nights stop at $(( i - 1 )): another would end the call after ${BUDGET_S:-360} s"
      break
    fi
    night_w "night$i" identical "$IDENTICAL_KNOB"
  done
  night_w slow1 slowdown "$SLOWDOWN"
  night_w slow2 slowdown "$SLOWDOWN"
  cp "$WORK/slow1.md" "$WORK/slow2.md" "$OUT/" 2> /dev/null
  echo "== attnsweep history"
  "$BIN" history "$HIST" --format markdown --html "$OUT/history.html" > "$WORK/history.md" 2> "$WORK/history.err"
  echo "history exit $? ($(grep -c '^| ' "$WORK/history.md") table lines)"
  echo "== figures"
  python3 proofs/nightly/nightly_figures.py "$WORK" | tee "$OUT/figures.md"
  tar -C "$WORK" -czf "$OUT/nights.tgz" --exclude='*.db*' --exclude=history .
  tar -C "$WORK" -czf "$OUT/history.tgz" history
  echo "== done in $(elapsed); files in $OUT: $(cd "$OUT" && echo *)"
  exit 0
fi
HIST=/tmp/nightly-history
mkdir -p "$HIST" /tmp/work

night() {  # night LABEL [extra args...]: one nightly, its output kept
  local label="$1"; shift
  local start
  start=$(date +%s)
  "$BIN" nightly configs/nightly.yaml --db "/tmp/work/$label.db" --summary "/tmp/work/$label.md" "$@" \
    > "/tmp/work/$label.out" 2> "/tmp/work/$label.err"
  local code=$?
  echo "== $label: exit $code in $(( $(date +%s) - start )) s"
  sed -n '/^# attnsweep nightly/,$p' "/tmp/work/$label.out" | head -60
  return 0
}

if [ "$PHASE" = A ]; then
  machine_facts name,driver_version,clocks.max.sm,memory.total,power.limit,temperature.gpu 2>&1 | tee "$OUT/machine.txt"
  echo "== build and GPU tests"
  device_build /tmp/work/build_test.log "${DEVICE_TESTS:-Gpu}"
  BIN=build/attnsweep
  echo "== attnsweep env --device cuda"
  TORCH_CUDNN_V8_API_LRU_CACHE_LIMIT=100 $BIN env --device cuda | tee /tmp/work/env.json
  echo "== burst, sustained, burst: sdpa_cudnn 1x32x8192x128 bf16 causal, 400 samples each"
  for regime in burst sustained burst; do
    $BIN run bench/regime_$regime.yaml --db /tmp/work/regime.db > /dev/null 2>> /tmp/work/regime.err
    echo "$regime exit $?"
  done
  python3 - <<'PY'
import sys
sys.path.insert(0, "scripts")
from results_db import open_read_only
db = open_read_only("/tmp/work/regime.db")
for row in db.execute("SELECT r.run_id, r.measure_regime, c.samples, c.gpu_time_us_median, c.gpu_time_us_p10, c.gpu_time_us_p90, c.sm_clock_mhz_mean, c.power_cap_share, c.thermal_cap_share, c.cooldown_seconds, c.timing_seconds, c.tflops FROM cases c JOIN runs r USING (run_id) ORDER BY run_id"):
    print(row)
for row in db.execute("SELECT case_id, clock_event_reasons, count(*), round(avg(sm_clock_mhz)), round(avg(gpu_time_us),1) FROM samples GROUP BY case_id, clock_event_reasons"):
    print("reasons", row)
PY
  echo "== study sweep and the Python cross-check"
  $BIN run configs/blog.yaml --db /tmp/work/blog.db 2> /tmp/work/blog.err > /dev/null
  echo "blog exit $?"
  python3 scripts/torch_reference.py --dtype bf16 > /tmp/work/python_blog.jsonl 2> /tmp/work/python_blog.err
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
machine_facts name,driver_version,power.limit,temperature.gpu,clocks.sm
device_build /tmp/work/build.log none || { tail -30 /tmp/work/build.log; exit 1; }
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
