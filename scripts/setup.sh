#!/usr/bin/env bash
# Installs what attnsweep needs to build and run; idempotent and quick when
# everything is already there. Debian packages via apt, and a virtualenv with
# the pinned torch wheel (LibTorch comes from it) outside the checkout, so
# fresh clones and CI reuse it.
set -euo pipefail

TORCH_VERSION="${TORCH_VERSION:-2.11.0}"
VENV="${ATTNSWEEP_VENV:-$HOME/.cache/attnsweep/venv-torch-$TORCH_VERSION}"
PACKAGES=(cmake ninja-build g++ python3-venv libsqlitecpp-dev libsqlite3-dev libyaml-cpp-dev libspdlog-dev
          libfmt-dev libcli11-dev libgtest-dev nlohmann-json3-dev sqlite3
          clang libclang-rt-14-dev libjs-chart.js)
# Only for `make test`: the report's charts are checked in a real browser.
TEST_PACKAGES=(chromium-headless-shell)
[ "${1:-}" = "--with-test-tools" ] && PACKAGES+=("${TEST_PACKAGES[@]}")

missing=()
for package in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q "${missing[@]}"
fi

if ! "$VENV/bin/python" -c "import torch, sys; sys.exit(0 if torch.__version__.split('+')[0] == '$TORCH_VERSION' else 1)" 2>/dev/null; then
  echo "setup: creating $VENV with torch==$TORCH_VERSION (a few GB, once)"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --upgrade pip
  "$VENV/bin/pip" install -q "torch==$TORCH_VERSION" numpy
fi
echo "setup: ok (torch $("$VENV/bin/python" -c 'import torch; print(torch.__version__)') in $VENV)"
