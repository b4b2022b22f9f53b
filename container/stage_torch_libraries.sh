#!/usr/bin/env bash
# Copies the shared libraries of the torch wheel in VENV (LibTorch and the CUDA,
# cuDNN, NCCL, NVSHMEM and cuSPARSELt wheels it depends on) into STAGE at their
# own paths, so that the RPATHs of libtorch_cuda.so ($ORIGIN/../../nvidia/...) and
# of attnsweep hold in the runtime image. Leaves out Python, headers, static
# libraries and libtorch_python.so. Checks the wheel is the one the image's labels
# name (torch TORCH_VERSION, CUDA CUDA_VERSION, cuDNN CUDNN_VERSION) and writes
# what it staged into STAGE/opt/attnsweep/share/versions/torch-libraries.txt.
#
#   container/stage_torch_libraries.sh VENV STAGE TORCH_VERSION [CUDA_VERSION [CUDNN_VERSION]]
set -euo pipefail
[ "$#" -ge 3 ] || { echo "usage: stage_torch_libraries.sh VENV STAGE TORCH_VERSION [CUDA_VERSION [CUDNN_VERSION]]" >&2; exit 2; }
venv="$1" stage="$2" torch_version="$3" cuda_version="${4:-13.0}" cudnn_version="${5:-9.19}"

read -r found_torch found_cuda site < <("$venv/bin/python" - <<'PY'
import importlib.metadata as m, sysconfig, torch
print(torch.__version__.split('+')[0], torch.version.cuda, sysconfig.get_paths()['purelib'])
PY
)
found_cudnn="$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("nvidia-cudnn-cu13"))')"
fail() { echo "stage_torch_libraries.sh: $*" >&2; exit 1; }
[ "$found_torch" = "$torch_version" ] || fail "torch is $found_torch, not $torch_version"
[ "$found_cuda" = "$cuda_version" ] || fail "torch's CUDA is $found_cuda, not $cuda_version"
case "$found_cudnn" in "$cudnn_version".*) ;; *) fail "cuDNN is $found_cudnn, not $cudnn_version.x" ;; esac

list="$stage/opt/attnsweep/share/versions/torch-libraries.txt"
mkdir -p "$(dirname "$list")"
echo "torch $found_torch (CUDA $found_cuda), cuDNN $found_cudnn; shared libraries from $site:" > "$list"
cd "$site"
for library in torch/lib/*.so* nvidia/*/lib/*.so*; do
  # libtorch_python.so needs Python; libnvvm (the nvvm wheel) is nvcc's, for building only.
  case "$library" in */libtorch_python.so | */libnvvm.so*) continue ;; esac
  [ -f "$library" ] && [ ! -L "$library" ] || continue
  mkdir -p "$stage$site/$(dirname "$library")"
  cp -p "$library" "$stage$site/$library"
  echo "$(sha256sum "$library" | cut -c1-64)  $library" >> "$list"
done
echo "staged $(grep -c '  ' "$list") libraries, $(du -sh "$stage$site" | cut -f1)" >&2
