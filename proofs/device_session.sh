#!/usr/bin/env bash
# One device call that proves what the open issues still need on whichever GPU comes (device
# machines are scarce: a call refused costs minutes, so each call that runs carries several proofs).
# Each part is one of the device scripts, run with its own OUT subfolder; they share one build (the
# first builds, the later ones find it built). A part starts only while the call has time for it.
#   H200: the claims (issue 37: the only proof that needs this GPU); then, on the warm machine right
#         after, PARTS=det,shift (the cost of determinism and the cuDNN GQA level shift, issue 36)
#   other (H100): the cost of determinism, like with like (det: Python's hold as long as its own dispatch,
#         the sweep's cases in its order, judged on as many samples as the sweep took)
#   (the level shift (shift) and the gap (gap, proofs/cudnn-gqa-gap/cudnn_gqa_gap.sh) on request)
#   (counters (39), team (38), fp8 and axes (36) on request)
#   device: run(command="bash proofs/device_session.sh", carry=[".devdeps", ".devwheels"], timeout_s=600)
# Settings: PARTS (comma list overriding the choice by GPU: counters, team, fp8, axes, det, gap, shift, claims),
# BUDGET (seconds the call may use; default 580).
# $OUT: machine.txt and NAME.tgz per part (that script's files and its log).
# shellcheck source=../scripts/device_prologue.sh source-path=SCRIPTDIR
source "$(dirname "$0")/../scripts/device_prologue.sh"
machine_facts name,driver_version,clocks.max.sm,memory.total,power.limit 2>&1 | tee "$OUT/machine.txt"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2> /dev/null | head -1)
if [ -z "${PARTS:-}" ]; then
  case "$gpu" in
    *H200*) PARTS=claims ;;
    *) PARTS="det" ;;
  esac
fi
echo "GPU: ${gpu:-none}; parts: $PARTS"
budget="${BUDGET:-580}"
# part NAME NEEDS COMMAND...: runs COMMAND with OUT=$OUT/NAME when NEEDS seconds are left.
part() {
  local name="$1" needs="$2" left; shift 2
  [[ ",$PARTS," == *",$name,"* ]] || return 0
  left=$(( budget - $(seconds_since "$began") ))
  if [ "$left" -lt "$needs" ]; then
    echo "== $name skipped: $left s left, it needs about $needs"
    return 0
  fi
  echo "== $name ($(elapsed))"
  mkdir -p "$OUT/$name"
  OUT="$OUT/$name" "$@" > "$OUT/$name/log.txt" 2>&1
  echo "$name exit $? ($(elapsed))"
  tail -25 "$OUT/$name/log.txt"
  # One file per part: a call brings back at most 8 files.
  tar -C "$OUT" -czf "$OUT/$name.tgz" "$name" && rm -rf "${OUT:?}/$name"
}
part counters 200 bash proofs/counters/device_counters.sh
part team 170 bash proofs/nightly-team/device_nightly_team.sh
part fp8 150 bash proofs/fp8/fp8_device.sh
part axes 200 env PARTS=tests,oss bash proofs/deterministic/device_issue36.sh
part det 250 env PARTS=det bash proofs/deterministic/device_issue36.sh
part gap 150 bash proofs/cudnn-gqa-gap/cudnn_gqa_gap.sh
part shift 120 bash proofs/cudnn-gqa-gap/level_shift_device.sh
part claims 400 bash proofs/claims/claims_device.sh
echo "== session done in $(elapsed)"
