#!/usr/bin/env bash
# Issue 24, "why a case changed", on two real databases from the GPU machine: build
# attnsweep, run proofs/trust/kernel_diff.yaml (sdpa_auto and sdpa_cudnn, bf16, three
# shapes) as PyTorch chooses, then again with VARIABLE set (default
# TORCH_CUDNN_SDPA_DEPRIORITIZED=1: torch 2.11 then leaves cuDNN out of first place in
# SDPA's priority order, so sdpa_auto runs flash where it ran cuDNN), then a third run as
# the first (the control: the same kernels, nothing to list), and `attnsweep compare` of
# the first against the second in text, markdown and JSON (each lists the kernel
# differences) and of the first against the control. About 3.5 minutes with a 3-minute
# build (each run ~10 s).
#   device: run(command="bash proofs/trust/device_kernel_diff.sh", carry=[".devdeps"])
# Settings (environment):
#   CONFIG     the runs' config (default proofs/trust/kernel_diff.yaml)
#   VARIABLE   NAME=VALUE set for the second run only (default TORCH_CUDNN_SDPA_DEPRIORITIZED=1)
#   DEVICE     run --device (default cuda: a run never falls back to the CPU)
#   BIN        an attnsweep binary to use instead of building one (the CPU dry run:
#              BIN=/path/to/attnsweep DEVICE=cpu CONFIG=tests/python/data/kernel_diff_cpu.yaml
#              VARIABLE=ATTNSWEEP_TEST_SLOWDOWN=sdpa_auto:8: a CPU has no kernels, so only
#              the plumbing is tried there)
# $OUT brings back at most 8 files; this writes 6: machine.txt, compare.txt, compare.md,
# compare.json (first run against the second), control.txt (first against the third) and
# runs.tgz (the three databases, as SQLite backups, and every log).
# shellcheck source=../../scripts/device_prologue.sh source-path=SCRIPTDIR
source "$(dirname "$0")/../../scripts/device_prologue.sh"
WORK="$(mktemp -d -t kernel-diff.XXXXXX)"  # under $TMPDIR, else /tmp
CONFIG="${CONFIG:-proofs/trust/kernel_diff.yaml}"
VARIABLE="${VARIABLE:-TORCH_CUDNN_SDPA_DEPRIORITIZED=1}"
DEVICE="${DEVICE:-cuda}"
{
  machine_facts name,driver_version,clocks.max.sm,clocks.sm,power.limit,temperature.gpu
  python3 -c 'import torch; print("torch git", torch.version.git_version)' 2> /dev/null
  echo "config $CONFIG, device $DEVICE, second run with $VARIABLE"
} 2>&1 | tee "$OUT/machine.txt"
if [ -z "${BIN:-}" ]; then
  device_build "$WORK/build.log" none || { tail -30 "$WORK/build.log"; exit 1; }
  BIN=build/attnsweep
fi

status=0
run_once() {  # run_once LABEL [NAME=VALUE]: one run of CONFIG into $WORK/LABEL.db, then its backends and kernel counts
  local label="$1" start code
  shift
  start=$(date +%s)
  env "$@" "$BIN" run "$CONFIG" --device "$DEVICE" --db "$WORK/$label.db" > "$WORK/$label.out" 2> "$WORK/$label.log"
  code=$?
  echo "== $label${1:+ ($1)}: run exit $code in $(( $(date +%s) - start )) s"
  [ "$code" -ne 0 ] && { tail -5 "$WORK/$label.log"; status=1; }
  "$BIN" query "$WORK/$label.db" "SELECT variant, batch, heads, kv_heads, seq_len_q, seq_len_kv, head_dim, causal, status,
    sdpa_backend, kernels_per_forward, round(coalesce(gpu_time_us_median, cpu_time_us_median), 1) AS median_us
    FROM cases ORDER BY plan_index" 2>&1
}
run_once first
run_once second "$VARIABLE"
run_once control

echo "== compare first second: the kernel differences (text, markdown, json)"
for format in text markdown json; do
  extension=$format
  [ "$format" = markdown ] && extension=md
  [ "$format" = text ] && extension=txt
  "$BIN" compare "$WORK/first.db" "$WORK/second.db" --format "$format" > "$OUT/compare.$extension" 2> "$WORK/compare_$format.log"
  echo "compare --format $format exit $?"
done
cat "$OUT/compare.txt"
echo "== compare first control (nothing changed: no kernel list expected)"
"$BIN" compare "$WORK/first.db" "$WORK/control.db" > "$OUT/control.txt" 2> "$WORK/compare_control.log"
echo "compare exit $?"
cat "$OUT/control.txt"
echo "== what the JSON says changed"
python3 - "$OUT/compare.json" << 'PY' || status=1
import json, sys
try:
    data = json.load(open(sys.argv[1]))
except (OSError, ValueError) as error:
    sys.exit(f"compare.json unreadable: {error}")
print(data.get("headline"))
for e in data.get("environment", []):
    if e["fact"].startswith(("env_vars", "cudnn", "torch")):
        print(f"environment: {e['fact']}: {e['baseline']} -> {e['candidate']}")
for case in data.get("cases", []):
    findings = [f"{f['check']} {f['severity']}" for f in case.get("findings", [])]
    listed = (case.get("kernel_differences") or {}).get("kernels", [])
    changes = [f"{k['change']} {k['short_name']}" for k in listed]
    print(f"{case['key']['label']}: {', '.join(findings) or 'no finding'}; {len(listed)} kernels listed")
    for change in changes:
        print("    " + change)
PY

for label in first second control; do
  backup "$WORK/$label.db" "$WORK/$label-backup.db" 2> /dev/null
done
tar -C "$WORK" -czf "$OUT/runs.tgz" --exclude='first.db*' --exclude='second.db*' --exclude='control.db*' .
echo "== done in $(elapsed); files in $OUT: $(cd "$OUT" && echo *)"
exit $status
