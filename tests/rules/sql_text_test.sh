#!/usr/bin/env bash
# House rule (issue 56): SQL is written in runner/storage (and runner/scale_out,
# which copies rows between databases): no string literal elsewhere in runner/
# holds SQL text. A layer above reads through storage's functions (RunReader,
# run_facts, the example queries), so a column or a view changes in one place.
# SQL text: an upper-case keyword as a word (SELECT, INSERT, UPDATE, DELETE,
# CREATE, PRAGMA, FROM, WHERE, ...) inside a literal; comments are not looked at.
#   tests/rules/sql_text_test.sh [source root]
#   tests/rules/sql_text_test.sh --self-test   (a copy with planted violations must fail)
# shellcheck source=rules_common.sh source-path=SCRIPTDIR
source "$(dirname "$0")/rules_common.sh"
keywords='SELECT|INSERT|UPDATE|DELETE|CREATE|DROP|ALTER|PRAGMA|ATTACH|DETACH|VACUUM|BEGIN|COMMIT|ROLLBACK|SAVEPOINT|REINDEX|FROM|WHERE|JOIN|VALUES|ORDER BY|GROUP BY'

if [ "${1:-}" = "--self-test" ]; then
  planting_copy
  cp -r "$here/runner" "$copy/"
  # A query in compare, a statement's second line in a raw string in workflows; a
  # comment, a storage file and a word in lower case are no SQL text ("2 with SQL text").
  target="$copy/runner/compare/case_key.cpp"
  printf '%s\n' '// "SELECT * FROM cases" in a comment is no SQL text' \
    'static const char* planted_query = "SELECT variant FROM cases WHERE run_id = ?";' >> "$target"
  planted_line=$(awk 'END { print NR }' "$target")
  printf '%s\n' 'static const char* planted_raw = R"(' '  ORDER BY plan_index)";' \
    'static const char* planted_word = "select a variant from the list";' >> "$copy/runner/workflows/history.cpp"
  raw_line=$(( $(awk 'END { print NR }' "$copy/runner/workflows/history.cpp") - 2 ))
  echo 'static const char* allowed_here = "DELETE FROM cases";' >> "$copy/runner/storage/store.cpp"
  expect_caught "sql text" "$here/tests/rules/sql_text_test.sh" "$copy" \
    "runner/compare/case_key.cpp:$planted_line holds SQL text (\"SELECT variant FROM cases WHERE run_id = ?\")" \
    "runner/workflows/history.cpp:$raw_line holds SQL text" \
    ", 2 with SQL text"
  exit
fi

root="${1:-$here}"
cd "$root"

literals=$(runner_sources -not -path 'runner/storage/*' -not -path 'runner/scale_out/*' |
           xargs -0 -r awk -f "$here/tests/rules/string_literals.awk")
checked=$(grep -c . <<< "$literals" || true)
violations=0
while IFS=$'\t' read -r file line text; do
  shown="${text:0:80}"
  [ "${#text}" -gt 80 ] && shown="$shown..."
  echo "sql text: $file:$line holds SQL text (\"$shown\"): SQL is written in runner/storage;" \
       "read or write through a function there (RunReader, the column tables)" >&2
  violations=$((violations + 1))
done < <(grep -E $'^[^\t]*\t[0-9]+\t(.*[^A-Za-z0-9_])?('"$keywords"')([^A-Za-z0-9_].*)?$' <<< "$literals" || true)

echo "sql text: $checked literals checked outside runner/storage and runner/scale_out, $violations with SQL text"
[ "$violations" -eq 0 ]
