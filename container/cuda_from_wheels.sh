#!/usr/bin/env bash
# Turns the CUDA 13 wheels of PyPI (installed next to torch: nvidia/cu13 holds
# bin/nvcc, nvvm, include and lib) into a toolkit that CMake's FindCUDAToolkit
# and nvcc accept: the wheels ship only versioned libraries (libcudart.so.13)
# and a lib folder where nvcc looks in lib64, and no libcuda.so stub.
#
#   container/cuda_from_wheels.sh SITE_PACKAGES    prints the toolkit root
#
# Used by container/Dockerfile's build stage (the image has no CUDA from apt:
# Debian's is 12.x, NVIDIA's apt repository is not reachable everywhere). The
# runtime stage copies only the versioned libraries, never what this adds.
set -euo pipefail
shopt -s nullglob
site="${1:?usage: cuda_from_wheels.sh SITE_PACKAGES}"
root="$site/nvidia/cu13"
[ -x "$root/bin/nvcc" ] || { echo "cuda_from_wheels.sh: no $root/bin/nvcc (pip install nvidia-cuda-nvcc)" >&2; exit 2; }
[ -e "$root/lib64" ] || ln -s lib "$root/lib64"
# libX.so -> libX.so.N for every versioned library of the wheels (find_library wants the plain name).
for dir in "$root/lib" "$site"/nvidia/{cudnn,nccl,nvshmem,cusparselt}/lib; do
  [ -d "$dir" ] || continue
  for library in "$dir"/lib*.so.*; do
    plain="${library%%.so.*}.so"
    [ -e "$plain" ] || ln -s "$(basename "$library")" "$plain"
  done
done
# A driver stub to link against (the driver itself comes from the host at run time;
# LibTorch opens it lazily, so nothing of attnsweep's records a dependency on it).
mkdir -p "$root/lib/stubs"
if [ ! -e "$root/lib/stubs/libcuda.so" ]; then
  echo 'void cuGetProcAddress(void) {}' | cc -shared -fPIC -Wl,-soname,libcuda.so.1 -x c -o "$root/lib/stubs/libcuda.so" -
fi
echo "$root"
