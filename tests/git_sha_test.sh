#!/usr/bin/env bash
# scripts/git_sha.cmake on a scratch git repository: the commit, "-dirty" for
# changed tracked files, the environment override, "unknown" outside git, and no
# rewrite when nothing changed (so an unchanged commit rebuilds nothing).
#   tests/git_sha_test.sh SCRIPT   (run by ctest as GitSha.Script)
set -euo pipefail
script="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
sha_in() { sed -n 's/.*kGitSha = "\(.*\)";/\1/p' "$1"; }
generate() { env -u ATTNSWEEP_GIT_SHA "$@" cmake -DSOURCE_DIR="$work/repo" -DOUTPUT="$work/sha.hpp" -P "$script"; }

mkdir "$work/repo" && cd "$work/repo"
git init -q && git config user.email t@example.com && git config user.name t
echo one > tracked && git add tracked && git commit -qm one
expected="$(git rev-parse --short=12 HEAD)"

generate; [ "$(sha_in "$work/sha.hpp")" = "$expected" ] || fail "clean: $(sha_in "$work/sha.hpp") != $expected"
touch -d '2000-01-01' "$work/sha.hpp"
generate; [ "$(stat -c %Y "$work/sha.hpp")" = "$(date -d '2000-01-01' +%s)" ] || fail "rewritten though unchanged"
echo untracked > other; generate
[ "$(sha_in "$work/sha.hpp")" = "$expected" ] || fail "an untracked file made it $(sha_in "$work/sha.hpp")"
echo two > tracked; generate
[ "$(sha_in "$work/sha.hpp")" = "$expected-dirty" ] || fail "changed: $(sha_in "$work/sha.hpp")"
git commit -qam two; generate
[ "$(sha_in "$work/sha.hpp")" = "$(git rev-parse --short=12 HEAD)" ] || fail "new commit: $(sha_in "$work/sha.hpp")"
generate ATTNSWEEP_GIT_SHA=abc123; [ "$(sha_in "$work/sha.hpp")" = "abc123" ] || fail "override: $(sha_in "$work/sha.hpp")"
rm -rf .git; generate; [ "$(sha_in "$work/sha.hpp")" = "unknown" ] || fail "no git: $(sha_in "$work/sha.hpp")"
echo "git_sha.cmake: all checks passed"
