#!/usr/bin/env bash
# A newcomer's first `make run` and `make test`, measured (issue 35; docs/benchmarks.md,
# "First run"): a fresh clone of HEAD in a scratch folder, nothing cached but pip's download of
# the torch wheel (a new virtualenv, ccache off), then a second fresh clone with that virtualenv
# present; in each clone `make run`, then `make test`. Prints one line per step (wall seconds, CPU seconds of the step and its children) and
# the build's compile CPU-seconds from ninja's log: what `make run` built against the whole build.
#   bash proofs/first-run/first_run.sh [--run-only]   (about 15 minutes with --run-only, 60 in all, on 2 cores)
set -euo pipefail
RUN_ONLY=0
[ "${1:-}" = "--run-only" ] && RUN_ONLY=1
SOURCE="$(cd "$(dirname "$0")/../.." && pwd)"
SCRATCH="${SCRATCH:-$(mktemp -d /tmp/attnsweep-first-run.XXXXXX)}"
FRESH_VENV="$SCRATCH/venv"  # a virtualenv of its own: the measured run creates it
export CCACHE_DISABLE=1     # nothing cached: every object compiled

# step NAME DIR COMMAND...: the wall and CPU seconds of one command.
step() {
  local name="$1" dir="$2"
  shift 2
  local start cpu_before cpu_after
  start=$(date +%s.%N)
  cpu_before=$(awk '{print $14 + $15 + $16 + $17}' /proc/$$/stat)
  (cd "$dir" && "$@") > "$SCRATCH/$name.log" 2>&1 || { echo "$name failed, see $SCRATCH/$name.log" >&2; tail -20 "$SCRATCH/$name.log" >&2; exit 1; }
  cpu_after=$(awk '{print $14 + $15 + $16 + $17}' /proc/$$/stat)
  awk -v n="$name" -v s="$start" -v e="$(date +%s.%N)" -v c="$(( cpu_after - cpu_before ))" -v hz="$(getconf CLK_TCK)" \
    'BEGIN { printf "%-22s wall %7.1f s   cpu %7.1f s\n", n, e - s, c / hz }'
}

# compile_seconds BUILD_DIR: the summed duration of every step in ninja's log (its newest entry per output).
compile_seconds() {
  awk 'NR > 1 { took[$4] = $2 - $1 } END { for (o in took) sum += took[o]; printf "%.1f", sum / 1000 }' "$1/.ninja_log"
}

echo "first run of $(git -C "$SOURCE" rev-parse --short HEAD) on $(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ), scratch $SCRATCH"
git clone -q "$SOURCE" "$SCRATCH/clone1"
step "make run (new venv)" "$SCRATCH/clone1" make run VENV="$FRESH_VENV"
run_seconds=$(compile_seconds "$SCRATCH/clone1/build")
echo "compile CPU-seconds of make run: $run_seconds"
if [ "$RUN_ONLY" = 0 ]; then
  step "make test (after run)" "$SCRATCH/clone1" make test VENV="$FRESH_VENV"
  full_seconds=$(compile_seconds "$SCRATCH/clone1/build")
  echo "compile CPU-seconds of the whole build: $full_seconds; make run's share: $(awk -v r="$run_seconds" -v f="$full_seconds" 'BEGIN { printf "%.0f%%", 100 * r / f }')"
fi
git clone -q "$SOURCE" "$SCRATCH/clone2"
step "make run (venv there)" "$SCRATCH/clone2" make run VENV="$FRESH_VENV"
[ "$RUN_ONLY" = 0 ] && step "make test (venv there)" "$SCRATCH/clone2" make test VENV="$FRESH_VENV"
echo "logs in $SCRATCH"
