#!/usr/bin/env bash
# House rule (issue 56): every tests/test_cli*.cpp that runs the binary does so
# from the shared fixture, attnsweep::testing::CliTest (tests/support/cli_test.hpp),
# or one derived from it (e.g. CudaSweepTest, tests/support/cli_cuda_sweep.hpp):
#   - it defines or uses a fixture of that family;
#   - none of its fixtures derives from ::testing::Test itself;
#   - it keeps no ScratchDirectory of its own (the fixture's scratch folder is the one);
#   - no plain TEST(...) in it runs the binary.
# "Runs the binary": the file names run_attnsweep, spawn_attnsweep,
# binary_under_test, ATTNSWEEP_BINARY or the fixture's run_config.
#   tests/rules/cli_fixture_test.sh [source root]
#   tests/rules/cli_fixture_test.sh --self-test   (a copy with planted violations must fail)
# shellcheck source=rules_common.sh source-path=SCRIPTDIR
source "$(dirname "$0")/rules_common.sh"
runs_binary='run_attnsweep|spawn_attnsweep|binary_under_test|ATTNSWEEP_BINARY|run_config'

if [ "${1:-}" = "--self-test" ]; then
  planting_copy
  mkdir -p "$copy/tests"
  cp -r "$here/tests/support" "$copy/tests/"
  cp "$here"/tests/test_cli*.cpp "$copy/tests/"
  # A suite with a fixture and a scratch folder of its own, and a plain TEST that runs the binary.
  cat > "$copy/tests/test_cli_planted.cpp" <<'CPP'
#include "tests/support/run_attnsweep.hpp"
#include "tests/support/scratch_directory.hpp"
class Planted : public ::testing::Test {
 protected:
  attnsweep::testing::ScratchDirectory scratch_{"planted"};
};
TEST_F(Planted, RunsTheBinary) { attnsweep::testing::run_attnsweep("--version"); }
CPP
  cat > "$copy/tests/test_cli_planted_plain.cpp" <<'CPP'
#include "tests/support/cli_test.hpp"
class Derived : public attnsweep::testing::CliTest {
 protected:
  Derived() : CliTest("derived") {}
};
TEST_F(Derived, Fine) { run_config("plan", "p.yaml", "", ""); }
TEST(PlantedPlain, RunsTheBinary) {
  const auto outcome = attnsweep::testing::run_attnsweep("--version");
}
CPP
  expect_caught "cli fixture" "$here/tests/rules/cli_fixture_test.sh" "$copy" \
    "tests/test_cli_planted.cpp runs the binary, but no fixture of it derives from CliTest" \
    "tests/test_cli_planted.cpp: fixture Planted derives from ::testing::Test, not from CliTest" \
    "tests/test_cli_planted.cpp keeps a ScratchDirectory of its own" \
    "tests/test_cli_planted_plain.cpp: TEST(PlantedPlain, RunsTheBinary) runs the binary without a fixture"
  if grep -qF "test_cli_planted_plain.cpp runs the binary, but no fixture" <<< "$caught_output"; then
    echo "cli fixture self-test: a fixture derived from CliTest was not recognised: $caught_output" >&2
    exit 1
  fi
  exit
fi

root="${1:-$here}"
cd "$root"

# The fixture family: CliTest and every class derived from one of the family,
# in tests/support/ or in the file itself.
family_of() {
  local file="$1" names="CliTest" before="" name
  while [ "$names" != "$before" ]; do
    before="$names"
    for name in $(sed -n -E 's/^[[:space:]]*(class|struct)[[:space:]]+([A-Za-z0-9_]+)([[:space:]]+final)?[[:space:]]*:[[:space:]]*(public[[:space:]]+)?(::)?([A-Za-z0-9_]+::)*('"${names// /|}"')[[:space:]]*(\{.*)?$/\2/p' \
                    tests/support/*.hpp "$file" | sort -u); do
      case " $names " in *" $name "*) ;; *) names="$names $name" ;; esac
    done
  done
  echo "$names"
}

violations=0
checked=0
for file in tests/test_cli*.cpp; do
  grep -qE "$runs_binary" "$file" || continue
  checked=$((checked + 1))
  family=$(family_of "$file")
  uses_family=false
  for name in $family; do
    if grep -qE "TEST_[FP]\(${name}[[:space:]]*,|:[[:space:]]*(public[[:space:]]+)?([A-Za-z0-9_]+::)*${name}\b" "$file"; then
      uses_family=true
    fi
  done
  if ! $uses_family; then
    echo "cli fixture: $file runs the binary, but no fixture of it derives from CliTest (tests/support/cli_test.hpp)" >&2
    violations=$((violations + 1))
  fi
  while IFS= read -r fixture; do
    echo "cli fixture: $file: fixture $fixture derives from ::testing::Test, not from CliTest" >&2
    violations=$((violations + 1))
  done < <(sed -n -E 's/^[[:space:]]*(class|struct)[[:space:]]+([A-Za-z0-9_]+).*:[[:space:]]*(public[[:space:]]+)?(::)?testing::Test[[:space:]]*(\{.*)?$/\2/p' "$file")
  if grep -q "ScratchDirectory" "$file"; then
    echo "cli fixture: $file keeps a ScratchDirectory of its own; the scratch folder is CliTest's" >&2
    violations=$((violations + 1))
  fi
  while IFS= read -r plain; do
    echo "cli fixture: $file: $plain runs the binary without a fixture; make it a TEST_F of one derived from CliTest" >&2
    violations=$((violations + 1))
  done < <(awk -v pattern="$runs_binary" '
    /^TEST\(/ { name = $0; sub(/[[:space:]]*\{.*$/, "", name); inside = 1; next }
    inside && /^}/ { inside = 0 }
    inside && $0 ~ pattern { print name; inside = 0 }' "$file")
done

echo "cli fixture: $checked tests/test_cli*.cpp files run the binary, $violations violations"
[ "$violations" -eq 0 ]
