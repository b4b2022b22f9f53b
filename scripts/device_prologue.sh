# shellcheck shell=bash
# The prologue of the scripts run on the GPU machine (scripts/device_*.sh, bench/run_benchmarks.sh,
# the device proofs' scripts in proofs/ and proofs/<topic>/), sourced as each one's first line, so
# that the setting up is one copy:
#   source "$(dirname "$0")/device_prologue.sh"                 (from scripts/)
#   source "$(dirname "$0")/../scripts/device_prologue.sh"      (from bench/ and proofs/)
#   source "$(dirname "$0")/../../scripts/device_prologue.sh"   (from proofs/<topic>/)
# It sets up:
#   - set -uo pipefail: no -e, so that a step that fails is reported and the call goes on to bring
#     back what it has (each script keeps the exit status it means in its own variables);
#   - OUT, the folder whose files come back from the call: the caller's OUT, else
#     $PWD/$OUT_DEFAULT ($PWD where the call started; OUT_DEFAULT, default device-out, may be set
#     by the script before sourcing), created;
#   - the working directory: the repository's root (scripts/..);
#   - PYTHONUNBUFFERED=1, so that Python's lines land in a log in the order they were printed;
#   - began, the call's start (seconds since the epoch), for elapsed.
# And gives these functions:
#   seconds_since START   whole seconds from START (date +%s) to now
#   elapsed               "N s" since the call began
#   machine_facts FIELDS  "== machine", nvidia-smi --query-gpu=FIELDS as CSV, torch's, CUDA's and
#                         cuDNN's versions, the CPU cores and the commit ($ATTNSWEEP_GIT_SHA, else
#                         the checkout's): the head of machine.txt
#   proof_work NAME [ARCHIVE [EXCLUDE]]
#                         WORK, a fresh folder /tmp/NAME.XXXXXX for the call's databases and logs;
#                         with ARCHIVE, WORK is packed into $OUT/ARCHIVE when the script exits (files
#                         matching EXCLUDE left out, default '*.db-*': a WAL database's side files)
#   build_unless_built LOG   device_build LOG none unless build/attnsweep is there; exit 2 when no
#                         program comes of it
#   need_built SCRIPT     exit 2, naming SCRIPT (which builds it), when there is no build/attnsweep
#   device_build LOG TESTS [LINES]
#                         container/build.sh into LOG: with TESTS "none" the targets of BUILD_TARGET
#                         only (default attnsweep; set it empty for every target), else with --test
#                         and ctest -R TESTS ("" runs every test), then the ctest summary lines of
#                         LOG (and those matching the pattern LINES); sets status to its exit status
#   stop_unless_built LOG CODE   exit CODE, with LOG's tail, when there is no build/attnsweep
#   backup FROM TO        one SQLite file from a database (its backup API: a WAL database is three
#                         files and $OUT brings back at most 8)
#   unpack_fa3 [fresh]    the fa3-fwd wheel of .devwheels/ unpacked into .devwheels/fa3, unless there
#                         (fresh: unpacked again); scripts/fetch_fa3.sh fetches the wheel
set -uo pipefail
OUT="${OUT:-$PWD/${OUT_DEFAULT:-device-out}}"
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
began=$(date +%s)

seconds_since() { echo "$(( $(date +%s) - $1 ))"; }
elapsed() { echo "$(seconds_since "$began") s"; }

machine_facts() {
  echo "== machine"
  if command -v nvidia-smi > /dev/null; then
    nvidia-smi --query-gpu="$1" --format=csv
  else
    echo "no nvidia-smi"
  fi
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version())' \
    2> /dev/null || echo "torch: not importable by python3"
  nproc | sed 's/^/cpu cores /'
  echo "git ${ATTNSWEEP_GIT_SHA:-$(git rev-parse --short HEAD 2> /dev/null || echo unknown)}"
}

device_build() {
  local log="$1" tests="$2" lines="${3:-}" start
  start=$(date +%s)
  if [ "$tests" = none ]; then
    BUILD_TARGET="${BUILD_TARGET-attnsweep}" container/build.sh > "$log" 2>&1
    status=$?
    echo "build exit $status in $(seconds_since "$start") s"
  else
    CTEST_REGEX="$tests" container/build.sh --test > "$log" 2>&1
    status=$?
    echo "build+test exit $status in $(seconds_since "$start") s"
    grep -E "tests passed|tests failed|\(Failed\)|Timeout|Not Run|Skipped${lines:+|$lines}" "$log" | tail -25
  fi
  return "$status"
}

stop_unless_built() { [ -x build/attnsweep ] || { tail -40 "$1"; exit "$2"; }; }
build_unless_built() { [ -x build/attnsweep ] || { device_build "$1" none; stop_unless_built "$1" 2; }; }
need_built() { [ -x build/attnsweep ] || { echo "build/attnsweep is not built: run $1 first"; exit 2; }; }

proof_work() {
  WORK="$(mktemp -d "/tmp/$1.XXXXXX")"
  proof_archive="${2:-}" proof_exclude="${3:-*.db-*}"
  # shellcheck disable=SC2154  # set just above; read when the script exits
  [ -n "$proof_archive" ] && trap 'tar -C "$WORK" -czf "$OUT/$proof_archive" --exclude="$proof_exclude" . 2> /dev/null' EXIT
}

backup() { python3 -c "import sqlite3,sys; d=sqlite3.connect(sys.argv[2]); sqlite3.connect(sys.argv[1]).backup(d); d.close()" "$1" "$2"; }

unpack_fa3() {
  [ "${1:-}" = fresh ] && rm -rf .devwheels/fa3
  [ -d .devwheels/fa3 ] || python3 -m zipfile -e .devwheels/fa3_fwd-*.whl .devwheels/fa3
}
