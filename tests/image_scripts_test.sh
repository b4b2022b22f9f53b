#!/usr/bin/env bash
# make image's scripts refuse a container engine they do not know, with one line and
# exit 1, before installing or building anything (scripts/container_engine.sh).
set -uo pipefail
SOURCE="${1:?usage: image_scripts_test.sh SOURCE_DIR}"
status=0
for script in image.sh image_test.sh extract_image.sh; do
  for engine in nerdctl 'podman; rm -rf /' '$(touch /tmp/attnsweep-pwned)'; do
    output="$(ATTNSWEEP_CONTAINER_ENGINE="$engine" bash "$SOURCE/scripts/$script" 2>&1)"
    code=$?
    expected="$script: error: ATTNSWEEP_CONTAINER_ENGINE must be docker or podman, not '$engine'"
    if [ "$code" -ne 1 ] || [ "$output" != "$expected" ]; then
      echo "FAIL $script with '$engine': exit $code, output: $output"
      status=1
    fi
  done
done
[ ! -e /tmp/attnsweep-pwned ] || { echo "FAIL: the engine's name was run as a command"; status=1; }
[ "$status" -eq 0 ] && echo "ok: 9 refusals"
exit "$status"
