#!/usr/bin/env bash
# Runs the Python tests of tests/python/ (ctest: Python.TrainingTools) with a
# python that can import torch: $ATTNSWEEP_PYTHON, else python3, else the
# venv of `make setup` ($ATTNSWEEP_VENV, ~/.cache/attnsweep/venv-*). Without
# torch anywhere the tests that need it are skipped, the others still run.
# They use the CPU only: no GPU is made visible to them.
#   tests/python/run_python_tests.sh [SOURCE_DIR]
set -uo pipefail
source_dir="$(cd "${1:-$(dirname "$0")/../..}" && pwd)"
python=""
for candidate in "${ATTNSWEEP_PYTHON:-}" python3 "${ATTNSWEEP_VENV:+$ATTNSWEEP_VENV/bin/python}" \
                 "$HOME"/.cache/attnsweep/venv-*/bin/python; do
  if [ -z "$candidate" ] || ! command -v "$candidate" >/dev/null 2>&1; then continue; fi
  if "$candidate" -c 'import torch' >/dev/null 2>&1; then python="$candidate"; break; fi
done
if [ -z "$python" ]; then
  echo "run_python_tests.sh: no python with torch found; the tests that need it are skipped"
  python=python3
fi
cd "$source_dir" || exit 2
# CPU only; TEARDOWN_CUPTI=1 can keep a CPU-only profiling process from exiting (docs/measurement.md).
exec env -u TEARDOWN_CUPTI CUDA_VISIBLE_DEVICES= PYTHONDONTWRITEBYTECODE=1 \
  "$python" -m unittest discover -s tests/python -p 'test_*.py' -v
