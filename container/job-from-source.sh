#!/usr/bin/env bash
# Runs one shard of a sweep inside an HF Job on the plain Debian 12 image
# (debian:bookworm-slim), with no image of our own: unpacks attnsweep's source
# archive from the mounted bucket, installs what container/Dockerfile's build
# stage installs with the same script (container/build_deps.sh: the Debian
# packages, the pinned torch wheel and PyPI's nvcc), builds attnsweep with
# container/build.sh (no tests: the job stays short) and execs `attnsweep run "$@"`.
# (The stock PyTorch image is Ubuntu 22.04, which has no libsqlitecpp-dev.)
# `attnsweep launch hf ... --from-source` uploads the archive and starts the
# jobs (docs/hf-jobs.md, "Without an image of our own"); each job's command is
#
#   bash -c 'mkdir -p /tmp/attnsweep-job && tar -xzf /results/attnsweep-src.tar.gz
#            -C /tmp/attnsweep-job container/job-from-source.sh
#            && exec bash /tmp/attnsweep-job/container/job-from-source.sh "$@"'
#       job-from-source /results/config.yaml --shard K/N ... --publish /results
#
# Every phase prints a UTC timestamp and its seconds, so the job's log shows
# where the time goes.
#
#   ATTNSWEEP_SRC_ARCHIVE   the archive (default /results/attnsweep-src.tar.gz)
#   ATTNSWEEP_SRC_DIR       where it is unpacked and built (default /opt/attnsweep)
#   ATTNSWEEP_JOB_SKIP_INSTALL=1   no install (packages, torch and nvcc are there already)
#   ATTNSWEEP_JOB_VENV      the virtualenv of torch and nvcc (default /opt/torch)
#   ATTNSWEEP_JOB_BUILD_DIR=DIR    no build: run DIR/attnsweep (an existing build)
#   ATTNSWEEP_JOB_COMMAND=nightly  run `attnsweep nightly "$@"` instead (a scheduled night)
#   ATTNSWEEP_IMAGE         what the run records as its image (runs.container_image); the launch
#                           passes the stock image's name; unset: "unknown (job-from-source.sh)"
set -euo pipefail

# Never an empty image in the run's record: the launch names the stock image; run by hand, say so.
export ATTNSWEEP_IMAGE="${ATTNSWEEP_IMAGE:-unknown (job-from-source.sh)}"

ARCHIVE="${ATTNSWEEP_SRC_ARCHIVE:-/results/attnsweep-src.tar.gz}"
SOURCE="${ATTNSWEEP_SRC_DIR:-/opt/attnsweep}"
VENV="${ATTNSWEEP_JOB_VENV:-/opt/torch}"

started=$SECONDS
phase_start=$SECONDS
phase() {
  phase_start=$SECONDS
  echo "[job-from-source] $(date -u +%Y-%m-%dT%H:%M:%SZ) $1" >&2
}
phase_done() {
  echo "[job-from-source] $(date -u +%Y-%m-%dT%H:%M:%SZ) $1 done in $((SECONDS - phase_start)) s" \
       "($((SECONDS - started)) s since the job's script started)" >&2
}
die() {
  echo "[job-from-source] error: $*" >&2
  exit 1
}

if [ "$#" -eq 0 ]; then
  die "no run arguments; usage: job-from-source.sh CONFIG [attnsweep run options...]"
fi

phase "unpack: $ARCHIVE into $SOURCE"
[ -f "$ARCHIVE" ] || die "no source archive at $ARCHIVE (attnsweep launch hf --from-source uploads it into the bucket folder the job mounts)"
mkdir -p "$SOURCE"
tar -xzf "$ARCHIVE" -C "$SOURCE" || die "cannot unpack $ARCHIVE into $SOURCE"
[ -f "$SOURCE/container/build.sh" ] || die "$ARCHIVE holds no container/build.sh: not an archive of attnsweep's checkout"
phase_done "unpack"

if [ "${ATTNSWEEP_JOB_SKIP_INSTALL:-}" = "1" ]; then
  echo "[job-from-source] install: skipped (ATTNSWEEP_JOB_SKIP_INSTALL=1)" >&2
else
  phase "install: container/build_deps.sh (Debian packages, torch wheel and nvcc into $VENV)"
  VENV="$VENV" bash "$SOURCE/container/build_deps.sh" >&2 \
    || die "installing failed (container/build_deps.sh; its output is above: no network in the job, or a mirror down?)"
  phase_done "install"
fi
# python3 with torch and nvcc on PATH, as build_deps.sh left them.
if [ -f "$VENV/attnsweep-build.env" ]; then
  # shellcheck disable=SC1091
  source "$VENV/attnsweep-build.env"
fi

if [ -n "${ATTNSWEEP_JOB_BUILD_DIR:-}" ]; then
  BUILD="$ATTNSWEEP_JOB_BUILD_DIR"
  echo "[job-from-source] build: skipped, using $BUILD/attnsweep (ATTNSWEEP_JOB_BUILD_DIR)" >&2
else
  BUILD="$SOURCE/build"
  phase "build: container/build.sh ($(nproc) cores)"
  # The archive has no .git: the commit comes from the launch (runs.git_sha), when given.
  # attnsweep alone: the job runs no test.
  BUILD_DIR="$BUILD" BUILD_TARGET=attnsweep ATTNSWEEP_GIT_SHA="${ATTNSWEEP_GIT_SHA:-unknown}" \
    bash "$SOURCE/container/build.sh" >&2 \
    || die "building attnsweep failed (container/build.sh; its output is above)"
  phase_done "build"
fi
[ -x "$BUILD/attnsweep" ] || die "no attnsweep in $BUILD"

# ATTNSWEEP_JOB_COMMAND: the subcommand (run for a shard; nightly for a scheduled night).
COMMAND="${ATTNSWEEP_JOB_COMMAND:-run}"
case "$COMMAND" in run|nightly) ;; *) die "ATTNSWEEP_JOB_COMMAND must be run or nightly, not '$COMMAND'" ;; esac
phase "run: attnsweep $COMMAND $*"
exec "$BUILD/attnsweep" "$COMMAND" "$@"
