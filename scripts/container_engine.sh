# Sourced by scripts/image.sh and scripts/image_test.sh: picks the container
# engine and defines `engine` (a function running it) and ENGINE (its name).
#   - ATTNSWEEP_CONTAINER_ENGINE=docker|podman, when set;
#   - else docker when its daemon answers (`docker info`; a docker client alone
#     is not enough);
#   - else podman, installed with apt when absent (with buildah, runc, mmdebstrap).
# With podman and runc installed, CONTAINERS_CONF points at container/podman.conf
# (runc, cgroupfs, no default ulimits: what works on our CI machines).

SOURCE="${SOURCE:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"

die() {
  echo "${0##*/}: error: $*" >&2
  exit 1
}

install_podman() {
  command -v apt-get >/dev/null || die "no container engine (docker with a running daemon, or podman) and no apt-get to install podman"
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  echo "${0##*/}: installing podman (apt-get install podman buildah runc mmdebstrap)" >&2
  $sudo apt-get update -q >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q podman buildah runc mmdebstrap >&2 ||
    die "apt-get install podman failed"
}

pick_engine() {
  case "${ATTNSWEEP_CONTAINER_ENGINE:-}" in
    docker | podman) ENGINE="$ATTNSWEEP_CONTAINER_ENGINE" ;;
    "")
      if command -v docker >/dev/null && timeout 20 docker info >/dev/null 2>&1; then
        ENGINE=docker
      else
        command -v podman >/dev/null || install_podman
        ENGINE=podman
      fi
      ;;
    *) die "ATTNSWEEP_CONTAINER_ENGINE must be docker or podman, not '$ATTNSWEEP_CONTAINER_ENGINE'" ;;
  esac
  command -v "$ENGINE" >/dev/null || die "$ENGINE not found on PATH"
  if [ "$ENGINE" = podman ] && [ -z "${CONTAINERS_CONF:-}" ] && command -v runc >/dev/null; then
    export CONTAINERS_CONF="$SOURCE/container/podman.conf"
  fi
}

engine() { "$ENGINE" "$@"; }

pick_engine
