#!/usr/bin/env bash
# The duplicates budget (issue 56): the `duplicates` command over the whole
# repository may list at most 40 pairs of places that share 6 or more lines,
# and none of identical lines (a row not marked `shape`) with both sides in
# runner/: copied product code is one shared piece instead. Exit 0 with a
# one-line summary within the budget, 1 with the reason and the rows otherwise.
# Where `duplicates` is not installed (CI machines may lack it) it says so and
# exits 0: the budget is then not checked.
#   scripts/duplicates_budget.sh [repository root]
set -euo pipefail
root="${1:-$(cd "$(dirname "$0")/.." && pwd)}"
max_pairs=40

if ! command -v duplicates > /dev/null 2>&1; then
  echo "duplicates budget: skipped, the duplicates command is not installed here (nothing was checked)"
  exit 0
fi

# --most 200 (its maximum): every row, so that each identical pair is seen.
listing=$(duplicates --repo "$root" --most 200 --seconds 120)
if grep -q '^incomplete:' <<< "$listing"; then
  echo "duplicates budget: duplicates did not read the whole tree, so the pairs cannot be counted:" >&2
  grep '^incomplete:' <<< "$listing" >&2
  exit 1
fi
first=$(head -n 1 <<< "$listing")
if [[ "$first" == "no duplicates"* ]]; then
  pairs=0
elif [[ "$first" =~ ^([0-9]+)\ pairs?\  ]]; then
  pairs="${BASH_REMATCH[1]}"
else
  echo "duplicates budget: cannot read the count in duplicates' first line: $first" >&2
  exit 1
fi

# Rows: "D7 a.cpp:10-24 ~ b.cpp:40-54 [shape] [boilerplate] [(+N more runs)]".
identical_in_runner=$(awk '$1 ~ /^D[0-9]+$/ && $3 == "~" && $2 ~ /^runner\// && $4 ~ /^runner\// && $5 != "shape"' <<< "$listing")

failed=0
if [ "$pairs" -gt "$max_pairs" ]; then
  echo "duplicates budget: $pairs pairs, more than the $max_pairs allowed; share the logic that is really the same" \
       "(the rows: duplicates --most 80)" >&2
  failed=1
fi
if [ -n "$identical_in_runner" ]; then
  echo "duplicates budget: identical lines in two places of runner/; make them one shared piece:" >&2
  echo "$identical_in_runner" >&2
  failed=1
fi
if [ "$failed" -ne 0 ]; then
  exit 1
fi
echo "duplicates budget: $pairs pairs (at most $max_pairs), none of identical lines in runner/"
