# Sourced by scripts/image.sh, image_test.sh and extract_image.sh: picks the
# container engine and defines `engine` (a function running it), ENGINE (its
# name), VERSION (attnsweep's, from CMakeLists.txt) and DEFAULT_IMAGE.
#   - ATTNSWEEP_CONTAINER_ENGINE=docker|podman, when set;
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
  # Only where cgroups are v1 or hybrid (crun fails there): elsewhere the machine's own settings hold.
  if [ "$ENGINE" = podman ] && [ -z "${CONTAINERS_CONF:-}" ] && command -v runc >/dev/null &&
     [ "$(stat -fc %T /sys/fs/cgroup 2>/dev/null)" != cgroup2fs ]; then
    export CONTAINERS_CONF="$SOURCE/container/podman.conf"
  fi
}

engine() { "$ENGINE" "$@"; }

pick_engine
