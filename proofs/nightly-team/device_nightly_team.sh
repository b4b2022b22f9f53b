#!/usr/bin/env bash
# Issue 38's device proof in one call (docs/reproducibility.md): build attnsweep, then
#   1. three identical nights of configs/nightly_window.yaml with --history and --summary-json
#      (sdpa_flash:spin=0: the knob's kernel, zero cycles, so later nights launch the same kernels);
#   2. a slow night (sdpa_flash:spin=200000, ~0.1 ms after each sdpa_flash call): a WATCH item;
#      the history copied; `attnsweep accept` of that night for 'sdpa_flash *'; a second slow night
#      with the acceptance (must pass) and on the copy without it (must be a regression);
#   3. a per-case threshold against a pinned baseline: sdpa_flash with spin=40000 (~20 us) once
#      without rules and once with nightly.rules giving the study's shape a 40% threshold;
#   4. an environment slip: a night with PYTORCH_NO_CUDA_MEMORY_CACHING=1 (must be exit 4);
#   5. a contended night: proofs/hardening/nightly_shared.yaml alone, then beside proofs/hardening/gpu_tenant.py (held
#      out: 7 s alone, 245 s beside it, cool-downs waiting on every sample; now bounded).
#   device: run(command="bash proofs/nightly-team/device_nightly_team.sh", carry=[".devdeps"])
# $OUT: machine.txt, team.md (what each step gave), jsons.tgz (every JSON summary and markdown), nights.tgz.
# shellcheck source=../../scripts/device_prologue.sh source-path=SCRIPTDIR
source "$(dirname "$0")/../../scripts/device_prologue.sh"
WORK="$(mktemp -d -t nightly-team.XXXXXX)"
HIST="$WORK/history"
CONFIG=configs/nightly_window.yaml
machine_facts name,driver_version,clocks.max.sm,clocks.sm,power.limit,temperature.gpu 2>&1 | tee "$OUT/machine.txt"
device_build "$WORK/build.log" none
stop_unless_built "$WORK/build.log" 2
BIN=build/attnsweep
REPORT="$OUT/team.md"
: > "$REPORT"
say() { echo "$*" | tee -a "$REPORT"; }
last_stamp=""
night() {  # night LABEL HISTORY KNOB [args...]: one nightly, its exit, seconds and JSON verdict in team.md
  local label="$1" hist="$2" knob="$3"; shift 3
  while [ -n "$last_stamp" ] && [[ ! "$(date -u +%Y%m%dT%H%M%SZ)" > "$last_stamp" ]]; do sleep 0.2; done
  local start code knob_env=()
  [ "$knob" != - ] && knob_env=("ATTNSWEEP_TEST_SLOWDOWN=$knob")
  start=$(date +%s)
  env "${knob_env[@]}" "$BIN" -q nightly "$CONFIG" --device cuda --history "$hist" --db "$WORK/$label.db" \
    --summary "$WORK/$label.md" --summary-json "$WORK/$label.json" "$@" > "$WORK/$label.out" 2> "$WORK/$label.err"
  code=$?
  last_stamp=$(sed -n '1s/^# attnsweep nightly //p' "$WORK/$label.md" 2> /dev/null)
  say "- $label ($knob): exit $code in $(( $(date +%s) - start )) s; $(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print("verdict", j["verdict"], "exit_code", j["exit_code"], "flagged", len(j["flagged"]), "reasons", j["reasons"], "accepted", len(j.get("accepted", [])))' "$WORK/$label.json" 2>&1); $(grep -E '^nightly: ' "$WORK/$label.out" | head -2 | tr '\n' ' ')"
}

say "## 1. three identical nights ($(elapsed))"
for i in 1 2 3; do night "night$i" "$HIST" sdpa_flash:spin=0; done
say "## 2. a slow night, accepted ($(elapsed))"
night slow1 "$HIST" sdpa_flash:spin=200000
cp -r "$HIST" "$WORK/control"
slow_stamp="$last_stamp"
"$BIN" accept "$HIST" --night "$slow_stamp" --cases 'sdpa_flash *' --reason "the proof's planted slowdown, kept" --by device-proof \
  2>&1 | tee -a "$REPORT"
night slow2 "$HIST" sdpa_flash:spin=200000
night slow2-control "$WORK/control" sdpa_flash:spin=200000
grep -A3 '^\*\*Accepted changes' "$WORK/slow2.md" | tee -a "$REPORT"
"$BIN" history "$HIST" --format csv 2> "$WORK/history.err" | grep -c ACCEPTED | sed 's/^/history rows marked ACCEPTED: /' | tee -a "$REPORT"
grep "accepted" "$WORK/history.err" | head -2 | tee -a "$REPORT"

say "## 3. a per-case threshold against a pinned baseline ($(elapsed))"
cat > "$WORK/flash.yaml" <<'YAML'
name: flash-rules
seed: 0
variants: [sdpa_flash]
dtypes: [bf16]
causal: [true, false]
shapes:
  - {batch: 8, heads: 16, seq_len: 1024, head_dim: 64}
  - {batch: 8, heads: 32, kv_heads: 8, seq_len_q: 1, seq_len_kv: 16384, head_dim: 128}
exclude:
  - {seq_len_q: 1, causal: true}
measure: {regime: burst, warmup: 5, profiled_forwards: 3, min_samples: 20, target_rel_stdev: 0.02, max_case_seconds: 3}
YAML
{ cat "$WORK/flash.yaml"; printf 'nightly:\n  rules:\n    - {variant: sdpa_flash, shape: "8x16x1024x64", threshold: 40}\n'; } > "$WORK/flash_ruled.yaml"
ATTNSWEEP_TEST_SLOWDOWN=sdpa_flash:spin=0 "$BIN" -q run "$WORK/flash.yaml" --device cuda --db "$WORK/flash_base.db" > /dev/null 2>&1
say "- baseline run exit $?"
for config in flash flash_ruled; do
  ATTNSWEEP_TEST_SLOWDOWN=sdpa_flash:spin=40000 "$BIN" -q nightly "$WORK/$config.yaml" --device cuda \
    --baseline "$WORK/flash_base.db:1" --db "$WORK/$config.db" --summary-json "$WORK/$config.json" > "$WORK/$config.out" 2>&1
  say "- $config: exit $?"
  python3 - "$WORK/$config.json" <<'PY' | tee -a "$REPORT"
import json, sys
j = json.load(open(sys.argv[1]))
for c in j["comparison"]["cases"]:
    t = c["time"]
    print(f"  - {c['key']['label']}: {t['verdict']} ratio {t['ratio']}")
PY
done

say "## 4. an environment slip ($(elapsed))"
PYTORCH_NO_CUDA_MEMORY_CACHING=1 night slip "$HIST" sdpa_flash:spin=200000
grep -A3 'INCONCLUSIVE: this night' "$WORK/slip.md" | tee -a "$REPORT"

say "## 5. a contended night ($(elapsed))"
mkdir -p "$WORK/shared"
start=$(date +%s)
"$BIN" -q nightly proofs/hardening/nightly_shared.yaml --device cuda --history "$WORK/shared" --db "$WORK/alone.db" > "$WORK/alone.out" 2>&1
say "- alone: exit $? in $(( $(date +%s) - start )) s"
sleep 1.1
python3 proofs/hardening/gpu_tenant.py 200 > "$WORK/tenant.txt" 2>&1 &
tenant=$!
sleep 6
start=$(date +%s)
timeout -s INT 200 "$BIN" -q nightly proofs/hardening/nightly_shared.yaml --device cuda --history "$WORK/shared" --db "$WORK/shared.db" \
  --summary-json "$WORK/shared.json" > "$WORK/shared.out" 2>&1
say "- beside a second process: exit $? in $(( $(date +%s) - start )) s"
kill "$tenant"; wait "$tenant" 2> /dev/null
"$BIN" query "$WORK/shared.db" "SELECT count(*) AS cases, sum(other_processes > 0) AS shared, round(sum(cooldown_seconds), 1) AS cooldown_s FROM cases" | tee -a "$REPORT"
"$BIN" query "$WORK/alone.db" "SELECT count(*) AS cases, round(sum(cooldown_seconds), 1) AS cooldown_s FROM cases" | tee -a "$REPORT"
tar -C "$WORK" -czf "$OUT/jsons.tgz" --wildcards '*.json' '*.md' '*.out' 2> /dev/null
tar -C "$WORK" -czf "$OUT/nights.tgz" --exclude='*.db-*' history control 2> /dev/null
say "== done in $(elapsed)"
