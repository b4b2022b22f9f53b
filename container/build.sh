#!/usr/bin/env bash
# Builds (and with --test, tests) attnsweep inside a CUDA + PyTorch image that
# has no network, using that image's own torch. This is how attnsweep is built
# on the GPU machine, and what the container's Dockerfile will run.
#
# Packages the image lacks (SQLite headers, SQLiteCpp) travel as Debian .deb
# files in .devdeps/ (see docs/development.md) and are unpacked under
# $DEVDEPS (default /opt/devdeps), never into /.
#
#   container/build.sh [--test]      BUILD_DIR (default build), PYTHON (python3),
#                                    BUILD_TARGET (targets, e.g. "attnsweep"; default all),
#                                    ATTNSWEEP_CMAKE_ARGS (more -D options, split on spaces)
# Compiles through ccache when it is on PATH (container/Dockerfile keeps its cache).
set -euo pipefail

SOURCE="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${BUILD_DIR:-$SOURCE/build}"
PYTHON="${PYTHON:-python3}"
DEVDEPS="${DEVDEPS:-/opt/devdeps}"

prefix="$("$PYTHON" -c 'import torch; print(torch.utils.cmake_prefix_path)')"
extra=()
if [ ! -f /usr/include/sqlite3.h ] || [ ! -d /usr/lib/x86_64-linux-gnu/cmake/SQLiteCpp ] ||
   [ ! -f /usr/share/javascript/chart.js/chart.min.js ]; then
  if ! ls "$SOURCE"/.devdeps/*.deb >/dev/null 2>&1; then
    echo "container/build.sh: sqlite3.h, SQLiteCpp or Chart.js (libjs-chart.js) missing and no .devdeps/*.deb to unpack" >&2
    exit 2
  fi
  mkdir -p "$DEVDEPS"
  for deb in "$SOURCE"/.devdeps/*.deb; do dpkg -x "$deb" "$DEVDEPS"; done
  prefix="$prefix;$DEVDEPS/usr"
  if [ ! -f /usr/include/sqlite3.h ]; then
    extra+=(-DSQLite3_INCLUDE_DIR="$DEVDEPS/usr/include"
            -DSQLite3_LIBRARY="$DEVDEPS/usr/lib/x86_64-linux-gnu/libsqlite3.a")
  fi
  [ -f "$DEVDEPS/usr/share/javascript/chart.js/chart.min.js" ] &&
    extra+=(-DATTNSWEEP_CHART_JS="$DEVDEPS/usr/share/javascript/chart.js/chart.min.js")
fi

if command -v ccache >/dev/null; then
  extra+=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi
read -r -a more <<< "${ATTNSWEEP_CMAKE_ARGS:-}"
targets=()
[ -n "${BUILD_TARGET:-}" ] && read -r -a targets <<< "--target $BUILD_TARGET"

cmake -S "$SOURCE" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_PREFIX_PATH="$prefix" "${extra[@]}" "${more[@]}"
cmake --build "$BUILD" -j "$(nproc)" "${targets[@]}"
if [ "${1:-}" = "--test" ]; then
  # GPU tests share one device: run the test programs one at a time.
  (cd "$BUILD" && ctest --output-on-failure -j 1 ${CTEST_REGEX:+-R "$CTEST_REGEX"})
fi
