# shellcheck shell=bash
# What the house rules' scripts share (sourced by tests/rules/*_test.sh as their first line):
# set -euo pipefail, here (the repository's root) and
#   planting_copy        copy, a fresh folder for a self-test's source root, removed on exit
#   expect_caught LABEL CHECK COPY MESSAGE...
#                        runs the rule's CHECK script on COPY (a source root with planted
#                        violations): it must fail and say each MESSAGE; its output is then in
#                        $caught_output
#   runner_sources [FIND-ARGS...]
#                        the C++ and CUDA sources under runner/ (of the working directory),
#                        NUL-separated and sorted, FIND-ARGS narrowing them (e.g. -not -path ...)
set -euo pipefail
# shellcheck disable=SC2034  # read by the scripts that source this
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

planting_copy() {
  copy=$(mktemp -d)
  trap 'rm -rf "$copy"' EXIT
}

runner_sources() {
  find runner -type f \( -name '*.hpp' -o -name '*.h' -o -name '*.cpp' -o -name '*.cu' -o -name '*.cuh' -o -name '*.inc' \) \
    "$@" -print0 | sort -z
}

expect_caught() {
  local label="$1" check="$2" copy="$3" expected
  shift 3
  if caught_output=$(bash "$check" "$copy" 2>&1); then
    echo "$label self-test: the planted violations were not caught: $caught_output" >&2
    return 1
  fi
  for expected in "$@"; do
    if ! grep -qF -- "$expected" <<< "$caught_output"; then
      echo "$label self-test: missing \"$expected\" in: $caught_output" >&2
      return 1
    fi
  done
  echo "$label self-test: the planted violations were caught"
}
