#!/usr/bin/env bash
# House rule (issue 56): no file in runner/ is longer than 600 lines, unless it
# is on the allow-list below AND says why at its top. The reason is a comment in
# the file's first 10 lines holding the marker "Over 600 lines", then why, e.g.
#   // Over 600 lines (668), kept whole for now: one case's whole life shares one Impl's state ...
# A file on the list that is no longer over 600 lines, that is gone, or that
# lacks the marker fails too: the list holds exactly the long files that say why.
#   tests/rules/file_size_test.sh [source root]
#   tests/rules/file_size_test.sh --self-test   (a copy with planted violations must fail)
# shellcheck source=rules_common.sh source-path=SCRIPTDIR
source "$(dirname "$0")/rules_common.sh"
limit=600
marker="Over 600 lines"
# The long files that state their reason at their top (keep each one's reason there).
allowed=(runner/measure/case_runner.cpp runner/variants/op_library.cpp runner/run_report/assets/report.js)

if [ "${1:-}" = "--self-test" ]; then
  planting_copy
  cp -r "$here/runner" "$copy/"
  # A long file nobody listed; a listed one that gives no reason; a listed one
  # that is short now; a listed one that is gone.
  seq 1 601 | sed 's|^|// line |' > "$copy/runner/common/planted_long.cpp"
  { echo "// a long file with no word of why"; seq 1 649 | sed 's|^|// line |'; } > "$copy/${allowed[0]}"
  { echo "// $marker, once: planted"; seq 1 99 | sed 's|^|// line |'; } > "$copy/${allowed[1]}"
  rm "$copy/${allowed[2]}"
  expect_caught "file size" "$here/tests/rules/file_size_test.sh" "$copy" \
    "runner/common/planted_long.cpp: 601 lines, over $limit and not on the allow-list of tests/rules/file_size_test.sh" \
    "${allowed[0]}: 650 lines, on the allow-list but no comment in its first 10 lines says why (\"$marker ...\")" \
    "${allowed[1]}: 100 lines, on the allow-list but no longer over $limit: take it off the list" \
    "${allowed[2]}: on the allow-list but not in runner/: take it off the list"
  exit
fi

root="${1:-$here}"
cd "$root"

is_allowed() {
  local file="$1" entry
  for entry in "${allowed[@]}"; do [ "$entry" = "$file" ] && return 0; done
  return 1
}
line_count() { awk 'END { print NR }' "$1"; }  # the last line counts without its newline too

violations=0
checked=0
while IFS= read -r file; do
  checked=$((checked + 1))
  lines=$(line_count "$file")
  if [ "$lines" -gt "$limit" ] && ! is_allowed "$file"; then
    echo "file size: $file: $lines lines, over $limit and not on the allow-list of tests/rules/file_size_test.sh" \
         "(split it, or list it and say why at its top: \"$marker ...\")" >&2
    violations=$((violations + 1))
  fi
done < <(find runner -type f | sort)

for file in "${allowed[@]}"; do
  if [ ! -f "$file" ]; then
    echo "file size: $file: on the allow-list but not in runner/: take it off the list" >&2
    violations=$((violations + 1))
    continue
  fi
  lines=$(line_count "$file")
  if [ "$lines" -le "$limit" ]; then
    echo "file size: $file: $lines lines, on the allow-list but no longer over $limit: take it off the list" >&2
    violations=$((violations + 1))
  elif ! head -n 10 "$file" | grep -qE "^[[:space:]]*(//|#|/\*|\*|--).*$marker"; then
    echo "file size: $file: $lines lines, on the allow-list but no comment in its first 10 lines says why" \
         "(\"$marker ...\")" >&2
    violations=$((violations + 1))
  fi
done

echo "file size: $checked files in runner/ checked against $limit lines (${#allowed[@]} on the allow-list), $violations violations"
[ "$violations" -eq 0 ]
