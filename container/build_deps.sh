#!/usr/bin/env bash
# Installs what building attnsweep needs on Debian 12 (bookworm), as root:
#   - the Debian packages (apt-get);
#   - a virtualenv VENV with the pinned torch wheel from PyPI (LibTorch, CUDA 13.0,
#     cuDNN 9.19) and PyPI's CUDA 13.0 compiler wheels (nvcc, nvvm, crt, CCCL);
#   - a CUDA toolkit made of those wheels (container/cuda_from_wheels.sh).
# Then `source VENV/attnsweep-build.env` puts python3 (with torch) and nvcc on PATH.
# The one list for container/Dockerfile's build stage and container/job-from-source.sh
# (an HF job started with --from-source, on the plain Debian image): both build the
# same way, and make image-test runs both.
#
#   container/build_deps.sh     VENV (default /opt/torch), TORCH_VERSION (2.11.0),
#                               CUDA_WHEELS_VERSION (13.0.88), CCCL_WHEEL_VERSION (13.0.85),
#                               PIP_CERT (a CA bundle for pip behind a TLS proxy)
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
VENV="${VENV:-/opt/torch}"
TORCH_VERSION="${TORCH_VERSION:-2.11.0}"
CUDA_WHEELS_VERSION="${CUDA_WHEELS_VERSION:-13.0.88}"  # the CUDA of the torch wheel (nvidia-cuda-runtime 13.0.96)
CCCL_WHEEL_VERSION="${CCCL_WHEEL_VERSION:-13.0.85}"
# libgtest-dev too: CMake requires GTest even where no test is built.
PACKAGES=(cmake ninja-build g++ git libsqlitecpp-dev libsqlite3-dev libyaml-cpp-dev libspdlog-dev libcli11-dev
          libjs-chart.js libgtest-dev nlohmann-json3-dev python3 python3-venv ccache ca-certificates)

export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${PACKAGES[@]}"
rm -rf /var/lib/apt/lists/*

python3 -m venv "$VENV"
"$VENV/bin/pip" install -q --disable-pip-version-check "torch==$TORCH_VERSION" \
  "nvidia-cuda-nvcc==$CUDA_WHEELS_VERSION" "nvidia-nvvm==$CUDA_WHEELS_VERSION" \
  "nvidia-cuda-crt==$CUDA_WHEELS_VERSION" "nvidia-cuda-cccl==$CCCL_WHEEL_VERSION"
site="$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
cuda="$(bash "$HERE/cuda_from_wheels.sh" "$site")"
cat > "$VENV/attnsweep-build.env" <<EOF
export CUDA_HOME="$cuda" CUDAToolkit_ROOT="$cuda" PATH="$VENV/bin:$cuda/bin:\$PATH"
EOF
echo "build_deps.sh: torch $TORCH_VERSION and nvcc $CUDA_WHEELS_VERSION in $VENV; CUDA toolkit at $cuda" >&2
