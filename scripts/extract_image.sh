#!/usr/bin/env bash
# Copies out of the image what the GPU machine (no container runtime there) needs
# to run the image's own attnsweep: the binary, the example op library, the Debian
# libraries it links that the machine lacks (yaml-cpp 0.7, spdlog 1.10, fmt 9,
# SQLite), the image's version lists (torch-libraries.txt has each LibTorch/CUDA
# library's sha256) and its id and labels. The torch wheel's libraries (3.6 GB)
# are not copied: scripts/device_image.sh checks the machine's are the same files.
#
#   scripts/extract_image.sh [IMAGE] [DIR]     IMAGE attnsweep:<version>, DIR .devimage
set -euo pipefail
SOURCE="$(cd "$(dirname "$0")/.." && pwd)"
source "$SOURCE/scripts/container_engine.sh"
cd "$SOURCE"
IMAGE="${1:-$DEFAULT_IMAGE}"
DIR="${2:-.devimage}"
engine image inspect "$IMAGE" >/dev/null 2>&1 || die "no image $IMAGE: build it with make image"
rm -rf "$DIR" && mkdir -p "$DIR/lib"
container="$(engine create "$IMAGE")"
trap 'engine rm "$container" >/dev/null' EXIT
engine cp "$container:/opt/attnsweep/bin/attnsweep" "$DIR/attnsweep"
engine cp "$container:/opt/attnsweep/lib/libattnsweep_example_attention_op.so" "$DIR/"
engine cp "$container:/opt/attnsweep/share/versions" "$DIR/versions"
for soname in libyaml-cpp.so.0.7 libspdlog.so.1.10 libfmt.so.9 libsqlite3.so.0; do
  # The soname is a link in the image: copy the file it names, then link it again.
  target="$(engine run --rm --network none "$IMAGE" readlink -f "/usr/lib/x86_64-linux-gnu/$soname")"
  engine cp "$container:$target" "$DIR/lib/"
  ln -s "$(basename "$target")" "$DIR/lib/$soname"
done
engine image inspect --format '{{ .Id }} {{ json .Config.Labels }}' "$IMAGE" > "$DIR/image.txt"
echo "extracted $IMAGE into $DIR ($(du -sh "$DIR" | cut -f1))"
