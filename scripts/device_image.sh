#!/usr/bin/env bash
# One call on the GPU machine, which has no container runtime: the image's own
# attnsweep, example op library and Debian libraries, copied out of the image
# (scripts/extract_image.sh into .devimage/), run the study sweep on the GPU,
# beside the project's usual build (container/build.sh against the machine's
# torch) and PyTorch's own Python profiler and CUDA events, all in this call.
#   1. the image's LibTorch and CUDA libraries (sha256 of each, listed by the image)
#      against the machine's torch wheel at the same paths;
#   2. the image's binary loading them through its own RUNPATH (the image's paths,
#      linked to the machine's wheel), its Debian libraries from .devimage/lib;
#   3. configs/blog.yaml with both binaries and kernel counts and medians compared;
#      the example op library of the image on the GPU.
#   device: run(command="bash scripts/device_image.sh", carry=[".devimage", ".devdeps"])
# shellcheck source=device_prologue.sh source-path=SCRIPTDIR
source "$(dirname "$0")/device_prologue.sh"
failed=0   # the exit status: 1 when any step below failed or the two builds disagreed
exec > >(tee "$OUT/log") 2>&1
IMAGE_DIR="$PWD/.devimage"
[ -x "$IMAGE_DIR/attnsweep" ] || { echo "no .devimage/attnsweep: run scripts/extract_image.sh first"; exit 2; }

machine_facts name,driver_version,clocks.max.sm,memory.total 2>&1 | tee "$OUT/machine.txt"
echo "image: $(cat "$IMAGE_DIR/image.txt")"

echo "== 1. the image's torch libraries against this machine's wheel"
site="$(python3 -c 'import os, torch; print(os.path.dirname(os.path.dirname(torch.__file__)))')"
same=0; different=0; missing=0
while read -r sum path; do
  if [ ! -f "$site/$path" ]; then missing=$((missing + 1)); echo "  missing here: $path"
  elif [ "$(sha256sum "$site/$path" | cut -c1-64)" = "$sum" ]; then same=$((same + 1))
  else different=$((different + 1)); echo "  different: $path"; fi
done < <(tail -n +2 "$IMAGE_DIR/versions/torch-libraries.txt")
[ "$same" -gt 0 ] || failed=1
echo "libraries: $same identical, $different different, $missing missing (of $((same + different + missing)), from $site)"

echo "== 2. the image's binary, through its own RUNPATH"
# The sonames, in case the carry dropped the links.
for file in "$IMAGE_DIR"/lib/*.so.*.*; do
  soname="$(readelf -d "$file" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')"
  [ -e "$IMAGE_DIR/lib/$soname" ] || ln -s "$(basename "$file")" "$IMAGE_DIR/lib/$soname"
done
image_site=/opt/torch/lib/python3.11/site-packages   # where the image keeps the wheel's libraries
if [ ! -e "$image_site" ]; then mkdir -p "$(dirname "$image_site")" && ln -s "$site" "$image_site"; fi
export LD_LIBRARY_PATH="$IMAGE_DIR/lib"              # the image's Debian libraries (yaml-cpp 0.7, spdlog 1.10, fmt 9, sqlite3)
LD_LIBRARY_PATH="$IMAGE_DIR/lib" ldd "$IMAGE_DIR/attnsweep" | grep -E "torch|c10|cudart|yaml|spdlog|fmt|sqlite|not found"
"$IMAGE_DIR/attnsweep" --version || failed=1
"$IMAGE_DIR/attnsweep" env --device cuda | grep -E '"(git_sha|device_name|cuda_version|cuda_runtime_version|cudnn_version|torch_version|driver_version)"'

echo "== 3a. the usual build (container/build.sh, attnsweep only)"
unset LD_LIBRARY_PATH
device_build "$OUT/build.log" none || failed=1
build/attnsweep --version

echo "== 3b. the study sweep: image binary, usual build, image binary again"
rm -rf /tmp/image*.db* /tmp/usual.db*
for who in image usual image2; do
  case "$who" in
    image|image2) binary=("env" "LD_LIBRARY_PATH=$IMAGE_DIR/lib" "$IMAGE_DIR/attnsweep") ;;
    usual) binary=(build/attnsweep) ;;
  esac
  start=$(date +%s)
  "${binary[@]}" run configs/blog.yaml --db "/tmp/$who.db" > "$OUT/blog_$who.txt" 2>&1
  status=$?; [ "$status" -eq 0 ] || failed=1
  echo "$who: exit $status in $(( $(date +%s) - start )) s"
  backup "/tmp/$who.db" "$OUT/blog_$who.db"
done
python3 - /tmp/image.db /tmp/usual.db /tmp/image2.db <<'PY'
import sys
sys.path.insert(0, "scripts")
from results_db import open_read_only
def cases(path):
    db = open_read_only(path)
    return {r[0]: r[1:] for r in db.execute(
        "SELECT variant, status, kernels_per_forward, memcpy_per_forward, memset_per_forward, gpu_time_us_median, "
        "graph_time_us_median, sdpa_backend, rel_error FROM cases ORDER BY plan_index")}
image, usual, image2 = (cases(p) for p in sys.argv[1:4])
print("| variant | status image/usual | kernels image | kernels usual | memcpy+memset image/usual | median us image | median us usual | image again | graph us image/usual | backend image/usual |")
print("|---|---|---|---|---|---|---|---|---|---|")
equal = True
for v in usual:
    i, u, i2 = image[v], usual[v], image2[v]
    equal &= i[0] == u[0] and i[1:4] == u[1:4] and i[6] == u[6] and f"{i[7]:.3e}" == f"{u[7]:.3e}"
    f = lambda x: "" if x is None else f"{x:.1f}"
    print(f"| {v} | {i[0]}/{u[0]} | {i[1]} | {u[1]} | {i[2]}+{i[3]} / {u[2]}+{u[3]} | {f(i[4])} | {f(u[4])} | {f(i2[4])} | {f(i[5])}/{f(u[5])} | {i[6]}/{u[6]} |")
print("counts, statuses, backends and rel_error (4 digits) equal:", "yes" if equal else "NO")
sys.exit(0 if equal else 1)
PY
[ $? -eq 0 ] || failed=1

echo "== 3c. PyTorch's own profiler and CUDA events (Python), the same GPU"
python3 scripts/torch_reference.py --dtype bf16 > "$OUT/python_blog.jsonl" 2> "$OUT/python_blog.err"
status=$?; [ "$status" -eq 0 ] || failed=1
echo "python exit $status"
python3 scripts/blog_report.py /tmp/image.db "$OUT/python_blog.jsonl" "$OUT/machine.txt" > "$OUT/h200-image-blog.md"
cat "$OUT/h200-image-blog.md"

echo "== 3d. the image's example op library on the GPU"
cat > /tmp/example_op.yaml <<EOF
name: image-example-op-gpu
seed: 0
variants:
  - sdpa_math
  - name: example
    kind: op_library
    library: $IMAGE_DIR/libattnsweep_example_attention_op.so
    op: attnsweep_example::attention
    causal: is_causal
    scale: scale
dtypes: [fp32, bf16]
causal: [true, false]
shapes:
  - {batch: 2, heads: 4, seq_len: 256, head_dim: 64}
EOF
LD_LIBRARY_PATH="$IMAGE_DIR/lib" "$IMAGE_DIR/attnsweep" run /tmp/example_op.yaml --db /tmp/example.db > "$OUT/example_op.txt" 2>&1
status=$?; [ "$status" -eq 0 ] || failed=1
echo "example op: exit $status"
grep -E "^(variant|example|sdpa_math) " "$OUT/example_op.txt"
exit $failed
