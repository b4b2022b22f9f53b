#!/usr/bin/env bash
# Fetches the PyPI wheel fa3-fwd 0.0.3 (FlashAttention-3 forward for Hopper,
# torch stable ABI 2.10, CUDA 13) into .devwheels/ (git-ignored; never
# committed). The wheel (27.6 MB) is what travels to the GPU machine
# (run(..., carry=[".devdeps", ".devwheels"]): the unpacked .so is 105 MB, over
# the 64 MiB a call carries); UNPACK=1 also unpacks it into .devwheels/fa3,
# where proofs/fa3/fa3.yaml points (proofs/fa3/device_op_library.sh does that there).
# docs/op-libraries.md
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-$HOME/.cache/attnsweep/venv-torch-2.11.0/bin/python}"
mkdir -p .devwheels
"$PYTHON" -m pip download --quiet --no-deps --only-binary=:all: fa3-fwd==0.0.3 -d .devwheels
rm -rf .devwheels/fa3
if [ "${UNPACK:-0}" = 1 ]; then python3 -m zipfile -e .devwheels/fa3_fwd-0.0.3-*.whl .devwheels/fa3; fi
ls -la .devwheels
