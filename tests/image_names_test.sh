#!/usr/bin/env bash
# make image passes IMAGE as one word, and the image scripts refuse what is no image
# name before an engine is asked ("my image" was built as "my"; IMAGE='x;cmd' ran cmd).
# With ATTNSWEEP_CONTAINER_ENGINE=docker and a daemon that does not answer, make image
# says so and stops (it went on to make a base with mmdebstrap). The engine is a fake
# docker (tests/support/fake_container_engine); mmdebstrap a fake that records its call.
set -uo pipefail
SOURCE="${1:?usage: image_names_test.sh SOURCE_DIR}"
work="$(mktemp -d "${TMPDIR:-/tmp}/attnsweep-image-names-test-XXXXXX")"
trap 'rm -rf "$work"' EXIT
mkdir "$work/bin"
printf '#!/bin/sh\necho "$*" >> "%s/mmdebstrap.log"\nexit 1\n' "$work" > "$work/bin/mmdebstrap"
chmod +x "$work/bin/mmdebstrap"
export PATH="$work/bin:$SOURCE/tests/support/fake_container_engine:$PATH" ATTNSWEEP_CONTAINER_ENGINE=docker
export FAKE_ENGINE_LOG="$work/engine.log"
status=0
fail() { echo "FAIL: $*"; status=1; }
allowed="is not an image name; allowed: [REGISTRY/]NAME[:TAG][@sha256:DIGEST], NAME of lowercase letters, digits and '.', '_', '-' between them, parts separated by '/' (e.g. attnsweep:$(sed -n 's/^project(attnsweep VERSION \([0-9.]*\).*/\1/p' "$SOURCE/CMakeLists.txt"), docker.io/org/attnsweep:dev)"

# Through make: one word, refused whole, nothing run.
for name in 'my image' "x;touch $work/pwned" '-x' 'a`touch pwned`'; do
  output="$(make -s -C "$SOURCE" --no-print-directory image IMAGE="$name" 2>&1)"
  code=$?
  [ "$code" -ne 0 ] && [ "$(head -n 1 <<< "$output")" = "image.sh: error: ${name@Q} $allowed" ] ||
    fail "make image IMAGE=$name: exit $code, output: $output"
done
[ ! -e "$work/pwned" ] || fail "IMAGE was run as a command"
# Each script, the same refusal (and ATTNSWEEP_PUSH_NAME too).
for script in image.sh image_test.sh extract_image.sh; do
  output="$(bash "$SOURCE/scripts/$script" 'Attnsweep:0.1' 2>&1)"
  [ "$output" = "$script: error: 'Attnsweep:0.1' $allowed" ] || fail "$script: $output"
done
output="$(ATTNSWEEP_PUSH_NAME='org/a b' bash "$SOURCE/scripts/image.sh" 2>&1)"
[ "$output" = "image.sh: error: 'org/a b' $allowed" ] || fail "ATTNSWEEP_PUSH_NAME: $output"
[ ! -s "$FAKE_ENGINE_LOG" ] || fail "the engine was asked before the refusal: $(head -n 3 "$FAKE_ENGINE_LOG" | tr '\n' ';')"
# What is an image name passes.
for name in attnsweep:0.1.0 docker.io/org/attnsweep:dev localhost:5000/org/a_b.c--d:v1.2-rc \
            "ghcr.io/org/attnsweep@sha256:$(printf '0%.0s' {1..64})" attnsweep; do
  bash -c 'SOURCE="$1"; source "$1/scripts/container_engine.sh"; check_image_name "$2"' _ "$SOURCE" "$name" ||
    fail "$name was refused"
done

# A docker whose daemon does not answer: one line, before any base is made.
output="$(FAKE_ENGINE_DAEMON=down bash "$SOURCE/scripts/image.sh" 2>&1)"
code=$?
expected="image.sh: error: docker's daemon does not answer (docker info: Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?); start it (systemctl start docker), or use podman: ATTNSWEEP_CONTAINER_ENGINE=podman"
[ "$code" -eq 1 ] && [ "$output" = "$expected" ] || fail "daemon down: exit $code, output: $output"
[ ! -e "$work/mmdebstrap.log" ] || fail "mmdebstrap ran: $(cat "$work/mmdebstrap.log")"
[ "$status" -eq 0 ] && echo "ok: 10 names refused, 5 taken, a dead daemon named"
exit "$status"
