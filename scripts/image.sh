#!/usr/bin/env bash
# `make image`: builds attnsweep's image from container/Dockerfile with docker or
# podman (scripts/container_engine.sh) and prints its name, size and build time.
#
#   scripts/image.sh [IMAGE]        IMAGE default attnsweep:<version of CMakeLists.txt>
#
# The base (FROM) is docker.io/library/debian:bookworm-slim, for linux/amd64 (what
# HF Jobs runs):
#   - pulled (or found in the store), and the build pinned to its digest;
#   - else (no registry, as on our CI machines) made from Debian's mirror with
#     `mmdebstrap --variant=minbase bookworm` and imported as
#     localhost/attnsweep-base:bookworm (never under Debian's own name).
# The build context is the checkout's tracked files as they are in the working
# tree (untracked files are left out, and listed; never build trees, databases
# or .git); the commit goes in as GIT_SHA, with "-dirty" when tracked files
# differ from HEAD (as scripts/git_sha.cmake says it).
# Environment: ATTNSWEEP_CONTAINER_ENGINE, ATTNSWEEP_BASE_IMAGE (another FROM),
# ATTNSWEEP_CA_BUNDLE (CA bundle pip trusts in the build; default the host's),
# ATTNSWEEP_PUSH_NAME (the name the image will be pushed as; runs record it:
# runs.container_image; default IMAGE), TORCH_VERSION (the torch wheel, 2.11.0).
set -euo pipefail
SOURCE="$(cd "$(dirname "$0")/.." && pwd)"
source "$SOURCE/scripts/container_engine.sh"
take_image "${1:-}"
[ -z "${ATTNSWEEP_PUSH_NAME:-}" ] || check_image_name "$ATTNSWEEP_PUSH_NAME"
pick_engine
BASE="${ATTNSWEEP_BASE_IMAGE:-docker.io/library/debian:bookworm-slim}"
started=$SECONDS

# --- the base ---------------------------------------------------------------
scratch="$(mktemp -d "${TMPDIR:-/tmp}/attnsweep-image-XXXXXX")"
trap 'rm -rf "$scratch"' EXIT
MADE_BASE=localhost/attnsweep-base:bookworm
base_arg="$BASE"
base_digest=""
made=""
if timeout 300 "$ENGINE" pull -q --platform linux/amd64 "$BASE" >/dev/null 2>"$scratch/pull.err"; then
  echo "image: base $BASE pulled" >&2
elif engine image inspect "$BASE" >/dev/null 2>&1; then
  echo "image: base $BASE from the store (the registry did not answer: $(tail -n1 "$scratch/pull.err"))" >&2
else
  echo "image: cannot pull $BASE ($(tail -n1 "$scratch/pull.err")); using a base made from Debian's mirror" >&2
  base_arg="$MADE_BASE"
  if ! engine image inspect "$MADE_BASE" >/dev/null 2>&1; then
    command -v mmdebstrap >/dev/null || install_packages mmdebstrap
    made="mmdebstrap --variant=minbase bookworm, $(date -u +%Y-%m-%dT%H:%M:%SZ), from deb.debian.org"
    mmdebstrap --quiet --variant=minbase bookworm "$scratch/base.tar" >&2 || die "mmdebstrap failed"
    engine import --change "LABEL io.attnsweep.base.made=\"$made\"" "$scratch/base.tar" "$MADE_BASE" >/dev/null ||
      die "$ENGINE import of the base failed"
    rm -f "$scratch/base.tar"
    echo "image: base $MADE_BASE made ($made) in $((SECONDS - started)) s" >&2
  fi
  made="$(engine image inspect --format '{{ index .Config.Labels "io.attnsweep.base.made" }}' "$MADE_BASE")"
fi
# Pinned to a digest when the base came from a registry: a made base has none there.
if [ "$base_arg" = "$BASE" ]; then
  repo_digest="$(engine image inspect --format '{{ range .RepoDigests }}{{ println . }}{{ end }}' "$BASE" 2>/dev/null |
                 grep -m1 '@sha256:' || true)"
  if [ -n "$repo_digest" ]; then
    base_arg="$repo_digest"          # the build uses exactly what was resolved
    base_digest="${repo_digest##*@}"
  fi
fi

# --- the context --------------------------------------------------------------
context="$scratch/context"
mkdir -p "$context"
git ls-files -z --cached |
  while IFS= read -r -d '' file; do if [ -e "$file" ]; then printf '%s\0' "$file"; fi; done |
  tar --null -T - -cf - | tar -xf - -C "$context"
untracked="$(git ls-files --others --exclude-standard | head -n 5)"
[ -n "$untracked" ] && echo "image: untracked files are not in the image (git add them to include them):" \
  "$(echo "$untracked" | tr '\n' ' ')..." >&2
sha="$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)"
[ "$sha" != unknown ] && [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ] && sha="$sha-dirty"

# --- the build ----------------------------------------------------------------
ca="${ATTNSWEEP_CA_BUNDLE:-${PIP_CERT:-${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}}}"
args=(-f "$context/container/Dockerfile" --platform linux/amd64
      --build-arg "BASE=$base_arg" --build-arg "BASE_DIGEST=$base_digest" --build-arg "BASE_MADE=$made"
      --build-arg "VERSION=$VERSION" --build-arg "GIT_SHA=$sha" --build-arg "IMAGE=${ATTNSWEEP_PUSH_NAME:-$IMAGE}"
      --build-arg "TORCH_VERSION=${TORCH_VERSION:-2.11.0}")
[ -f "$ca" ] && args+=(--secret "id=ca_bundle,src=$ca")
if [ "$ENGINE" = podman ]; then
  build=(build --network host --pull=never --layers)
else
  # RUN --mount (caches, the CA secret) needs BuildKit: docker's buildx, into the local store.
  docker buildx version >/dev/null 2>&1 ||
    die "docker needs its buildx plugin for this Dockerfile (package docker-buildx-plugin or docker-buildx)"
  build=(buildx build --load)
fi
build_started=$SECONDS
echo "image: $ENGINE ${build[*]} (GIT_SHA $sha, base $base_arg)" >&2
engine "${build[@]}" "${args[@]}" -t "$IMAGE" "$context" >&2 || die "building the image failed (above)"
size="$(engine image inspect --format '{{ .Size }}' "$IMAGE")"
echo "image: built $IMAGE ($(numfmt --to=iec --suffix=B "$size"), $size bytes) in $((SECONDS - build_started)) s" \
     "(the base included: $((SECONDS - started)) s)"
# Earlier builds of the image, now untagged. The build stage's layers stay (the next build's
# cache); its build tree lives in a cache mount, so each build adds only the source and what it
# stages (about 20 MB).
engine image prune -f --filter "label=org.opencontainers.image.title=attnsweep" >/dev/null 2>&1 || true
echo "$IMAGE"
