#!/usr/bin/env bash
# scripts/extract_image.sh makes DIR anew only where DIR is missing, empty or an
# earlier extraction (its marker file, or exactly the files an extraction makes);
# any other folder, a file or a link is refused before the engine is asked, and
# kept. The engine is a fake docker (tests/support/fake_container_engine): no image needed.
set -uo pipefail
SOURCE="${1:?usage: extract_image_test.sh SOURCE_DIR}"
work="$(mktemp -d "${TMPDIR:-/tmp}/attnsweep-extract-test-XXXXXX")"
trap 'rm -rf "$work"' EXIT
export PATH="$SOURCE/tests/support/fake_container_engine:$PATH" ATTNSWEEP_CONTAINER_ENGINE=docker
export FAKE_ENGINE_LOG="$work/engine.log"
status=0
fail() { echo "FAIL: $*"; status=1; }
extract() { output="$(bash "$SOURCE/scripts/extract_image.sh" attnsweep:test "$1" 2>&1)"; code=$?; }

# Refused, kept, and the engine never asked.
mkdir "$work/notes" && echo "mine" > "$work/notes/todo.txt"
echo "mine" > "$work/file"
ln -s "$work/notes" "$work/link"
mkdir "$work/almost" && cp -r "$SOURCE/scripts" "$work/almost/lib"  # an extraction's names, and one more
touch "$work/almost/attnsweep" "$work/almost/image.txt" "$work/almost/versions" "$work/almost/extra"
declare -A expected=(
  [notes]="is a folder that is not an earlier extraction (no .attnsweep-extraction in it); it is never removed: name a missing or empty folder, or remove it yourself"
  [almost]="is a folder that is not an earlier extraction (no .attnsweep-extraction in it); it is never removed: name a missing or empty folder, or remove it yourself"
  [file]="is there and is not a folder; it is never removed: name a folder (missing, empty or an earlier extraction)"
  [link]="is a symbolic link; it is never replaced: name a folder (missing, empty or an earlier extraction)")
for name in notes almost file link; do
  extract "$work/$name"
  want="extract_image.sh: error: '$work/$name' ${expected[$name]}"
  [ "$code" -eq 1 ] && [ "$output" = "$want" ] || fail "$name: exit $code, output: $output"
done
[ "$(cat "$work/notes/todo.txt" 2>&1)" = mine ] || fail "the folder's file is gone"
[ "$(cat "$work/file" 2>&1)" = mine ] || fail "the file is gone"
[ -L "$work/link" ] || fail "the link is gone"
[ -e "$work/almost/extra" ] || fail "the near-extraction lost its extra file"
[ ! -s "$FAKE_ENGINE_LOG" ] || fail "the engine was asked before the refusal: $(head -n 3 "$FAKE_ENGINE_LOG" | tr "\n" ";")"

# Made: where nothing is, into an empty folder, and over an earlier extraction (what was added gone).
mkdir "$work/empty"
for name in new empty new; do
  extract "$work/$name"
  [ "$code" -eq 0 ] || fail "$name: exit $code, output: $output"
  [ -f "$work/$name/.attnsweep-extraction" ] && [ -f "$work/$name/attnsweep" ] && [ -L "$work/$name/lib/libfmt.so.9" ] ||
    fail "$name: not extracted: $(ls -A "$work/$name" 2>&1 | tr '\n' ' ')"
  [ ! -e "$work/$name/added" ] || fail "$name: an earlier extraction was not made anew"
  touch "$work/$name/added"
done
# An extraction made before the marker (exactly its files) is one too.
rm "$work/empty/.attnsweep-extraction" "$work/empty/added"
extract "$work/empty"
[ "$code" -eq 0 ] && [ -f "$work/empty/.attnsweep-extraction" ] || fail "an extraction from before the marker: exit $code, $output"
[ "$status" -eq 0 ] && echo "ok: 4 refusals kept, 4 extractions made"
exit "$status"
