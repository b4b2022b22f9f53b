#!/usr/bin/env bash
# The layering of docs/development.md, checked: a file may include files of its
# own folder and of the folders below it, never of a folder above it.
#   tests/layering_test.sh [source root]
#   tests/layering_test.sh --self-test   (a copy with one upward include must fail)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
if [ "${1:-}" = "--self-test" ]; then
  copy=$(mktemp -d)
  trap 'rm -rf "$copy"' EXIT
  cp -r "$here/runner" "$copy/"
  echo '#include "runner/execute/sweep.hpp"' >> "$copy/runner/common/text.hpp"
  echo '#  include <runner/storage/store.hpp>' >> "$copy/runner/device/device.hpp"
  echo '#include "../cli/commands.hpp"' >> "$copy/runner/plan/plan.hpp"
  if output=$(bash "$here/tests/layering_test.sh" "$copy" 2>&1); then
    echo "layering self-test: an upward include was not caught" >&2
    exit 1
  fi
  grep -q "runner/common/text.hpp (runner/common) includes runner/execute/sweep.hpp (runner/execute, a layer above)" \
    <<< "$output" || { echo "layering self-test: unexpected message: $output" >&2; exit 1; }
  grep -q "runner/device/device.hpp (runner/device) includes runner/storage/store.hpp (runner/storage, a layer above)" <<< "$output" ||
    { echo "layering self-test: an include with <> was not caught: $output" >&2; exit 1; }
  grep -q 'runner/plan/plan.hpp includes "../cli/commands.hpp", which names no layer' <<< "$output" ||
    { echo "layering self-test: a relative include was not caught: $output" >&2; exit 1; }
  echo "layering self-test: the upward includes were caught"
  exit 0
fi
root="${1:-$here}"
cd "$root"

# Bottom to top; keep in step with docs/development.md.
layers=(runner/common runner/device runner/variants runner/config runner/plan runner/profile runner/measure
        runner/storage runner/report runner/compare runner/run_report runner/execute runner/scale_out runner/jobs
        runner/workflows runner/cli)

rank_of() {
  local path="$1" i
  for i in "${!layers[@]}"; do
    case "$path" in "${layers[$i]}"/*) echo "$i"; return ;; esac
  done
  echo -1
}

violations=0
checked=0
while IFS= read -r file; do
  own=$(rank_of "$file")
  if [ "$own" -lt 0 ]; then
    echo "layering: $file is in no layer; add its folder to tests/layering_test.sh and docs/development.md" >&2
    violations=$((violations + 1))
    continue
  fi
  while IFS= read -r included; do
    case "$included" in
      git_sha.hpp|version.hpp|schema_sql.hpp|report_assets.hpp) continue ;;  # generated into the build folder
    esac
    target=$(rank_of "$included")
    if [ "$target" -lt 0 ]; then
      # "../x.hpp" or "x.hpp" would slip past the check: every include of ours names its folder.
      echo "layering: $file includes \"$included\", which names no layer; write it from the source root" >&2
      violations=$((violations + 1))
      continue
    fi
    checked=$((checked + 1))
    if [ "$target" -gt "$own" ]; then
      echo "layering: $file (${layers[$own]}) includes $included (${layers[$target]}, a layer above)" >&2
      violations=$((violations + 1))
    fi
  done < <(sed -n -E 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"([^"]*)".*/\1/p; s/^[[:space:]]*#[[:space:]]*include[[:space:]]*<((runner)\/[^>]*)>.*/\1/p' "$file")
done < <(find runner -type f \( -name '*.hpp' -o -name '*.h' -o -name '*.cpp' -o -name '*.cu' -o -name '*.cuh' -o -name '*.inc' \) | sort)

echo "layering: $checked includes checked, $violations violations"
[ "$violations" -eq 0 ]
