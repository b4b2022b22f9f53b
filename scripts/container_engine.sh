# shellcheck shell=bash
# Sourced by scripts/image.sh, image_test.sh and extract_image.sh: defines
# VERSION (attnsweep's, from CMakeLists.txt), DEFAULT_IMAGE, die,
# check_image_name, take_image, and pick_engine, which each script calls once its arguments
# are checked (a bad argument is refused before any engine is asked or
# installed). pick_engine picks the container engine and defines `engine` (a
# function running it) and ENGINE (its name):
#   - ATTNSWEEP_CONTAINER_ENGINE=docker|podman, when set (docker only when its
#     daemon answers: `docker info`; else the script stops, saying so);
#   - else docker when its daemon answers (`docker info`; a docker client alone
#     is not enough);
#   - else podman, installed with apt when absent (with buildah, runc, mmdebstrap).
# With podman and runc on a machine of cgroups v1 or hybrid (like our CI's),
# CONTAINERS_CONF points at container/podman.conf (runc, cgroupfs, no default
# ulimits) unless already set.

SOURCE="${SOURCE:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
VERSION="$(sed -n 's/^project(attnsweep VERSION \([0-9.]*\).*/\1/p' "$SOURCE/CMakeLists.txt")"
DEFAULT_IMAGE="attnsweep:$VERSION"

die() {
  echo "${0##*/}: error: $*" >&2
  exit 1
}

# install_packages PACKAGE...: apt-get install, with sudo when not root.
install_packages() {
  command -v apt-get >/dev/null || die "$* missing and no apt-get to install them"
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || die "$* missing; install them as root (apt-get install $*)"
    sudo=(sudo)
  fi
  echo "${0##*/}: installing $* (apt-get)" >&2
  "${sudo[@]}" apt-get update -q >&2
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >&2 || die "apt-get install $* failed"
}

# check_image_name NAME: refuses anything but an image reference,
# [REGISTRY[:PORT]/]PATH[:TAG][@sha256:DIGEST] (docker's grammar): a name with a
# space or a ';' would reach the engine as two words or a second command.
check_image_name() {
  local part='[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*'
  local host='[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*(:[0-9]+)?'
  local reference="^($host/)?$part(/$part)*(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(@sha256:[0-9a-f]{64})?\$"
  if [ "${#1}" -gt 255 ] || ! [[ "$1" =~ $reference ]]; then
    die "${1@Q} is not an image name; allowed: [REGISTRY/]NAME[:TAG][@sha256:DIGEST], NAME of lowercase letters," \
        "digits and '.', '_', '-' between them, parts separated by '/' (e.g. $DEFAULT_IMAGE, docker.io/org/attnsweep:dev)"
  fi
}

# take_image [NAME]: IMAGE, NAME or DEFAULT_IMAGE, checked; the working directory the repository's root.
take_image() {
  cd "$SOURCE" || die "cannot enter $SOURCE"
  IMAGE="${1:-$DEFAULT_IMAGE}"
  check_image_name "$IMAGE"
}

pick_engine() {
  case "${ATTNSWEEP_CONTAINER_ENGINE:-}" in
    docker | podman) ENGINE="$ATTNSWEEP_CONTAINER_ENGINE" ;;
    "")
      if command -v docker >/dev/null && timeout 20 docker info >/dev/null 2>&1; then
        ENGINE=docker
      else
        command -v podman >/dev/null || install_packages podman buildah runc mmdebstrap
        ENGINE=podman
      fi
      ;;
    *) die "ATTNSWEEP_CONTAINER_ENGINE must be docker or podman, not '$ATTNSWEEP_CONTAINER_ENGINE'" ;;
  esac
  command -v "$ENGINE" >/dev/null || die "$ENGINE not found on PATH"
  # Chosen by name: a docker client whose daemon is down would fail every pull and
  # inspect, and image.sh would take that for a registry out of reach.
  if [ "$ENGINE" = docker ] && [ -n "${ATTNSWEEP_CONTAINER_ENGINE:-}" ]; then
    local why
    if ! why="$(timeout 20 docker info 2>&1 >/dev/null)"; then
      why="$(printf '%s\n' "$why" | grep -v '^[[:space:]]*$' | tail -n 1)"
      die "docker's daemon does not answer (docker info: ${why:-no answer in 20 s}); start it" \
          "(systemctl start docker), or use podman: ATTNSWEEP_CONTAINER_ENGINE=podman"
    fi
  fi
  # Only where cgroups are v1 or hybrid (crun fails there): elsewhere the machine's own settings hold.
  if [ "$ENGINE" = podman ] && [ -z "${CONTAINERS_CONF:-}" ] && command -v runc >/dev/null &&
     [ "$(stat -fc %T /sys/fs/cgroup 2>/dev/null)" != cgroup2fs ]; then
    export CONTAINERS_CONF="$SOURCE/container/podman.conf"
  fi
}

engine() { "$ENGINE" "$@"; }
