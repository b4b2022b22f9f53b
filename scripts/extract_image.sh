#!/usr/bin/env bash
# Copies out of the image what the GPU machine (no container runtime there) needs
# to run the image's own attnsweep: the binary, the example op library, the Debian
# libraries it links that the machine lacks (yaml-cpp 0.7, spdlog 1.10, fmt 9,
# SQLite), the image's version lists (torch-libraries.txt has each LibTorch/CUDA
# library's sha256) and its id and labels. The torch wheel's libraries (3.6 GB)
# are not copied: scripts/device_image.sh checks the machine's are the same files.
#
#   scripts/extract_image.sh [IMAGE] [DIR]     IMAGE attnsweep:<version>, DIR .devimage
#
# DIR (relative to the checkout) is made anew: it may be missing, empty, or an
# earlier extraction (each holds the marker file .attnsweep-extraction); any
# other folder or file is refused, never removed (a mistyped DIR lost it).
set -euo pipefail
SOURCE="$(cd "$(dirname "$0")/.." && pwd)"
source "$SOURCE/scripts/container_engine.sh"
take_image "${1:-}"
DIR="${2:-.devimage}"
MARKER=.attnsweep-extraction
# An extraction made before the marker: exactly the files one makes.
made_before_marker() {
  [ "$(LC_ALL=C ls -A "$1" | tr '\n' ' ')" = "attnsweep image.txt lib libattnsweep_example_attention_op.so versions " ]
}
if [ -L "$DIR" ]; then
  die "${DIR@Q} is a symbolic link; it is never replaced: name a folder (missing, empty or an earlier extraction)"
elif [ -e "$DIR" ] && [ ! -d "$DIR" ]; then
  die "${DIR@Q} is there and is not a folder; it is never removed: name a folder (missing, empty or an earlier extraction)"
elif [ -d "$DIR" ] && [ ! -f "$DIR/$MARKER" ] && [ -n "$(ls -A "$DIR")" ] && ! made_before_marker "$DIR"; then
  die "${DIR@Q} is a folder that is not an earlier extraction (no $MARKER in it); it is never removed:" \
      "name a missing or empty folder, or remove it yourself"
fi
pick_engine
engine image inspect "$IMAGE" >/dev/null 2>&1 || die "no image $IMAGE: build it with make image"
rm -rf "$DIR" && mkdir -p "$DIR/lib"
echo "made by scripts/extract_image.sh from $IMAGE: removed and made anew by the next extraction" > "$DIR/$MARKER"
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
