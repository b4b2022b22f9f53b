#!/usr/bin/env bash
# House rule (issue 56): no include loop inside a folder of runner/. x.hpp and
# x.cpp count as one file x (a file including its own header is no loop); a
# loop is two files of one folder including each other, or a longer cycle
# (a includes b, b includes c, c includes a). A loop means a split left types
# in the old header: move them into a header of their own.
#   tests/rules/include_loops_test.sh [source root]
#   tests/rules/include_loops_test.sh --self-test   (a copy with planted loops must fail)
# shellcheck source=rules_common.sh source-path=SCRIPTDIR
source "$(dirname "$0")/rules_common.sh"

if [ "${1:-}" = "--self-test" ]; then
  planting_copy
  cp -r "$here/runner" "$copy/"
  # Two files of compare that include each other (one through its .cpp), a cycle
  # of three in plan, and an include of another folder, which is no loop ("2 loops").
  plant() { local file="$1"; shift; printf '#include "runner/%s"\n' "$@" >> "$copy/runner/$file"; }
  plant compare/value_text.cpp compare/mann_whitney.hpp
  plant compare/mann_whitney.hpp compare/value_text.hpp
  plant plan/loop_a.hpp plan/loop_b.hpp
  plant plan/loop_b.hpp plan/loop_c.hpp
  plant plan/loop_c.cpp plan/loop_c.hpp plan/loop_a.hpp
  plant plan/cost.hpp common/text.hpp
  expect_caught "include loops" "$here/tests/rules/include_loops_test.sh" "$copy" \
    "runner/compare: mann_whitney and value_text include each other (runner/compare/mann_whitney.hpp includes runner/compare/value_text.hpp; runner/compare/value_text.cpp includes runner/compare/mann_whitney.hpp)" \
    "runner/plan: loop_a -> loop_b -> loop_c -> loop_a (runner/plan/loop_a.hpp includes runner/plan/loop_b.hpp; runner/plan/loop_b.hpp includes runner/plan/loop_c.hpp; runner/plan/loop_c.cpp includes runner/plan/loop_a.hpp)" \
    "2 loops"
  exit
fi

root="${1:-$here}"
cd "$root"

# One line per include of a file of the same folder: "FOLDER<TAB>FROM<TAB>TO<TAB>FILE<TAB>INCLUDED",
# FROM and TO the two files' names without extension.
edges=$(runner_sources | xargs -0 -r awk '
  match($0, /^[[:space:]]*#[[:space:]]*include[[:space:]]*["<]runner\/[^">]*[">]/) {
    included = $0
    sub(/^[[:space:]]*#[[:space:]]*include[[:space:]]*["<]/, "", included)
    sub(/[">].*$/, "", included)
    folder = FILENAME; sub(/\/[^\/]*$/, "", folder)
    target_folder = included; sub(/\/[^\/]*$/, "", target_folder)
    if (target_folder != folder) next
    from = FILENAME; sub(/^.*\//, "", from); sub(/\.[^.]*$/, "", from)
    to = included; sub(/^.*\//, "", to); sub(/\.[^.]*$/, "", to)
    if (from != to) print folder "\t" from "\t" to "\t" FILENAME "\t" included
  }')

# Every shortest cycle through each file, each reported once (by its members).
report=$(awk -F'\t' '
  NF == 5 {
    key = $1 SUBSEP $2 SUBSEP $3
    if (!(key in how)) { next_of[$1 SUBSEP $2] = next_of[$1 SUBSEP $2] " " $3; how[key] = $4 " includes " $5 }
    nodes[$1 SUBSEP $2] = 1
  }
  END {
    loops = 0
    for (start in nodes) {
      split(start, part, SUBSEP); folder = part[1]; first = part[2]
      # Breadth first from first, back to first: the shortest cycle through it.
      delete parent; delete seen
      queue[1] = first; head = 1; tail = 1; seen[first] = 1; found = ""
      while (head <= tail && found == "") {
        node = queue[head++]
        count = split(next_of[folder SUBSEP node], successors, " ")
        for (k = 1; k <= count && found == ""; k++) {
          s = successors[k]
          if (s == first) { found = node; break }
          if (!(s in seen)) { seen[s] = 1; parent[s] = node; queue[++tail] = s }
        }
      }
      if (found == "") continue
      # The cycle first -> ... -> found -> first, its members in order from the smallest name.
      n = 0; node = found
      while (node != first) { chain[++n] = node; node = parent[node] }
      cycle[1] = first; m = 1
      for (k = n; k >= 1; k--) cycle[++m] = chain[k]
      low = 1
      for (k = 2; k <= m; k++) if (cycle[k] < cycle[low]) low = k
      for (k = 1; k <= m; k++) members[k] = cycle[(low + k - 2) % m + 1]
      path = members[1]
      for (k = 2; k <= m; k++) path = path " -> " members[k]
      path = path " -> " members[1]
      # Once per set of members (sorted by insertion: a loop is short).
      for (k = 1; k <= m; k++) sorted[k] = members[k]
      for (k = 2; k <= m; k++) {
        v = sorted[k]
        for (j = k - 1; j >= 1 && sorted[j] > v; j--) sorted[j + 1] = sorted[j]
        sorted[j + 1] = v
      }
      id = folder
      for (k = 1; k <= m; k++) id = id " " sorted[k]
      if (id in done) { delete members; delete sorted; delete cycle; continue }
      done[id] = 1; loops++
      details = ""
      for (k = 1; k <= m; k++) {
        a = members[k]; b = (k < m) ? members[k + 1] : members[1]
        details = details (details == "" ? "" : "; ") how[folder SUBSEP a SUBSEP b]
      }
      if (m == 2) {
        x = sorted[1]; y = sorted[2]
        print "include loops: " folder ": " x " and " y " include each other (" how[folder SUBSEP x SUBSEP y] "; " how[folder SUBSEP y SUBSEP x] ")"
      } else {
        print "include loops: " folder ": " path " (" details ")"
      }
      delete members; delete sorted; delete cycle
    }
    print "loops=" loops
  }' <<< "$edges")

loops=$(sed -n 's/^loops=//p' <<< "$report")
grep -v '^loops=' <<< "$report" | sort >&2 || true
echo "include loops: $(grep -c . <<< "$edges" || true) includes within a folder checked, $loops loops"
[ "$loops" -eq 0 ]
