# shellcheck shell=bash
# What the house rules' self-tests share (sourced by tests/rules/*_test.sh):
#   expect_caught LABEL CHECK COPY MESSAGE...
# runs the rule's CHECK script on COPY (a source root with planted violations):
# it must fail and say each MESSAGE; its output is then in $caught_output.
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
