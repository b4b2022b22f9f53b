#!/usr/bin/env bash
# `make image`: builds attnsweep's image from container/Dockerfile with docker or
# podman (scripts/container_engine.sh) and prints its name, size and build time.
#
#   scripts/image.sh [IMAGE]        IMAGE default attnsweep:<version of CMakeLists.txt>
#
# The base (FROM) is docker.io/library/debian:bookworm-slim:
#   - already in the engine's store: used as it is;
#   - else pulled, and the build pinned to the digest it resolved to;
#   - else (no registry, as on our CI machines) made from Debian's mirror with
#     `mmdebstrap --variant=minbase bookworm` and imported under that name.
# The build context is the checkout's tracked and untracked-but-not-ignored
# files (never build trees, databases or .git); the commit goes in as GIT_SHA,
# with "-dirty" when the tree differs from HEAD.
# Environment: ATTNSWEEP_CONTAINER_ENGINE, ATTNSWEEP_BASE_IMAGE (another FROM),
# ATTNSWEEP_CA_BUNDLE (CA bundle pip trusts in the build; default the host's),
# ATTNSWEEP_PUSH_NAME (the name the image will be pushed as; runs record it:
# runs.container_image; default IMAGE).
set -euo pipefail
SOURCE="$(cd "$(dirname "$0")/.." && pwd)"
source "$SOURCE/scripts/container_engine.sh"
cd "$SOURCE"

VERSION="$(sed -n 's/^project(attnsweep VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)"
IMAGE="${1:-attnsweep:$VERSION}"
BASE="${ATTNSWEEP_BASE_IMAGE:-docker.io/library/debian:bookworm-slim}"
started=$SECONDS

# --- the base ---------------------------------------------------------------
base_arg="$BASE"
base_digest="unknown"
made=""
if engine image inspect "$BASE" >/dev/null 2>&1; then
  made="$(engine image inspect --format '{{ index .Config.Labels "io.attnsweep.base.made" }}' "$BASE" 2>/dev/null || true)"
  echo "image: base $BASE (in the store${made:+; $made})" >&2
elif timeout 300 "$ENGINE" pull -q "$BASE" >/dev/null 2>"${TMPDIR:-/tmp}/attnsweep-pull.err"; then
  echo "image: base $BASE pulled" >&2
else
  echo "image: cannot pull $BASE ($(tail -n1 "${TMPDIR:-/tmp}/attnsweep-pull.err")); making it from Debian's mirror" >&2
  command -v mmdebstrap >/dev/null || install_podman
  tar_file="$(mktemp "${TMPDIR:-/tmp}/attnsweep-base-XXXXXX.tar")"
  trap 'rm -f "$tar_file"' EXIT
  mmdebstrap --quiet --variant=minbase bookworm "$tar_file" >&2 || die "mmdebstrap failed"
  made="mmdebstrap --variant=minbase bookworm, $(date -u +%Y-%m-%dT%H:%M:%SZ), not the registry's image"
  engine import --change "LABEL io.attnsweep.base.made=\"$made\"" "$tar_file" "$BASE" >/dev/null ||
    die "$ENGINE import of the base failed"
  rm -f "$tar_file"
  echo "image: base $BASE made ($made) in $((SECONDS - started)) s" >&2
fi
# Pinned to a digest only when the base came from a registry: a made base has none there.
repo_digest=""
[ -z "$made" ] && repo_digest="$(engine image inspect --format '{{ range .RepoDigests }}{{ println . }}{{ end }}' "$BASE" 2>/dev/null |
               grep -m1 '@sha256:' || true)"
if [ -n "$repo_digest" ]; then
  base_arg="$repo_digest"          # pinned: the build uses exactly what was resolved
  base_digest="${repo_digest##*@}"
elif [ -n "$made" ]; then
  base_digest="none: $made"
fi

# --- the context --------------------------------------------------------------
context="$(mktemp -d "${TMPDIR:-/tmp}/attnsweep-image-context-XXXXXX")"
trap 'rm -rf "$context"' EXIT
git ls-files -z --cached --others --exclude-standard |
  while IFS= read -r -d '' file; do [ -e "$file" ] && printf '%s\0' "$file"; done |
  tar --null -T - -cf - | tar -xf - -C "$context"
sha="$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)"
[ "$sha" != unknown ] && [ -n "$(git status --porcelain 2>/dev/null)" ] && sha="$sha-dirty"

# --- the build ----------------------------------------------------------------
ca="${ATTNSWEEP_CA_BUNDLE:-${PIP_CERT:-${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}}}"
args=(build -f "$context/container/Dockerfile" --network host
      --build-arg "BASE=$base_arg" --build-arg "BASE_DIGEST=$base_digest" --build-arg "VERSION=$VERSION"
      --build-arg "GIT_SHA=$sha" --build-arg "IMAGE=${ATTNSWEEP_PUSH_NAME:-$IMAGE}")
[ -f "$ca" ] && args+=(--secret "id=ca_bundle,src=$ca")
if [ "$ENGINE" = podman ]; then
  args+=(--pull=never --layers)
else
  export DOCKER_BUILDKIT=1
fi
build_started=$SECONDS
echo "image: $ENGINE ${args[0]} (GIT_SHA $sha)" >&2
engine "${args[@]}" -t "$IMAGE" "$context" >&2 || die "building the image failed (above)"
size="$(engine image inspect --format '{{ .Size }}' "$IMAGE")"
echo "image: built $IMAGE ($(numfmt --to=iec --suffix=B "$size"), $size bytes) in $((SECONDS - build_started)) s" \
     "(the base included: $((SECONDS - started)) s)"
# Earlier builds of the image, now untagged (the build stage's layers stay: the next build's cache).
engine image prune -f --filter "label=org.opencontainers.image.title=attnsweep" >/dev/null 2>&1 || true
echo "$IMAGE"
