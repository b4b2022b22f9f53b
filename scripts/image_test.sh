#!/usr/bin/env bash
# `make image-test`: checks the image `make image` built, on the CPU.
#   1. its labels name version, commit, torch, CUDA and cuDNN, and `attnsweep env`
#      inside it says the same (and the image's name, as runs record it);
#   2. it is the runtime stage: no build tree, no source, no compiler, no Python;
#   3. the quickstart sweep runs inside it (--device cpu), every case ok in the
#      database it wrote to a mounted folder, and the example op library too;
#   4. container/job-from-source.sh, as an HF job started with --from-source runs
#      it (bash -c BOOTSTRAP job-from-source ARGS..., the archive and config in a
#      folder mounted at /results), in the image's own base (debian:bookworm-slim
#      from the registry, or made from Debian's mirror where there is none: the job
#      runs the registry's): it unpacks, installs (container/build_deps.sh),
#      builds attnsweep and publishes its shard database into /results. apt's and
#      pip's downloads and ccache are kept on this machine between runs.
#
#   scripts/image_test.sh [IMAGE]     IMAGE default attnsweep:<version>
# Exit 0 when every check passes; 1 at the first that fails (it says which).
set -euo pipefail
SOURCE="$(cd "$(dirname "$0")/.." && pwd)"
source "$SOURCE/scripts/container_engine.sh"
take_image "${1:-}"
pick_engine
command -v sqlite3 >/dev/null || die "sqlite3 not found (make setup installs it)"
engine image inspect "$IMAGE" >/dev/null 2>&1 || die "no image $IMAGE: build it with make image"
work="$(mktemp -d "${TMPDIR:-/tmp}/attnsweep-image-test-XXXXXX")"
trap 'rm -rf "$work"' EXIT
started=$SECONDS
step() { echo "image-test: $*"; }
check() {  # check WHAT ACTUAL EXPECTED
  [ "$2" = "$3" ] || die "$1: got '$2', expected '$3'"
  echo "  ok: $1 = $2"
}
# label=disable: SELinux (Fedora) would deny the container the folders mounted from here.
run_in() { engine run --rm --network none --security-opt label=disable "$@"; }

step "1. labels and attnsweep env of $IMAGE"
label() { engine image inspect --format "{{ index .Config.Labels \"$1\" }}" "$IMAGE"; }
revision="$(label org.opencontainers.image.revision)"
check "label version" "$(label org.opencontainers.image.version)" "$VERSION"
[ -n "$revision" ] && [ "$revision" != unknown ] || die "label revision: empty or unknown"
for name in io.attnsweep.torch io.attnsweep.cuda io.attnsweep.cudnn org.opencontainers.image.base.name; do
  [ -n "$(label "$name")" ] || die "label $name is missing"
  echo "  ok: label $name = $(label "$name")"
done
# The base: a registry's digest, or how it was made where there was no registry.
base_said="$(label org.opencontainers.image.base.digest)$(label io.attnsweep.base.made)"
[ -n "$base_said" ] || die "labels org.opencontainers.image.base.digest and io.attnsweep.base.made are both empty"
echo "  ok: base digest or how it was made = $base_said"
check "architecture (what HF Jobs runs)" "$(engine image inspect --format '{{ .Architecture }}' "$IMAGE")" "amd64"
run_in "$IMAGE" attnsweep env --device cpu > "$work/env.json" || die "attnsweep env failed in the image"
field() { python3 -c 'import json, sys; v = json.load(open(sys.argv[1]))[sys.argv[2]]; print("" if v is None else v)' "$work/env.json" "$1"; }
check "env attnsweep_version" "$(field attnsweep_version)" "$VERSION"
check "env git_sha" "$(field git_sha)" "$revision"
check "env torch_version" "$(field torch_version)" "$(label io.attnsweep.torch)"
check "env cuda_runtime_version" "$(field cuda_runtime_version)" "$(label io.attnsweep.cuda)"
cudnn="$(field cudnn_version)"   # 91900 -> 9.19
check "env cudnn_version" "$((cudnn / 10000)).$(((cudnn % 10000) / 100))" "$(label io.attnsweep.cudnn)"
image_env="$(engine image inspect --format '{{ range .Config.Env }}{{ println . }}{{ end }}' "$IMAGE" |
             sed -n 's/^ATTNSWEEP_IMAGE=//p')"
check "env container_image" "$(field container_image)" "$image_env"

step "2. the runtime stage holds no build tree, source, compiler or Python"
run_in "$IMAGE" sh -c 'for p in /src /opt/attnsweep/build /usr/bin/g++ /usr/bin/cmake /usr/bin/python3 /opt/torch/bin/python; do
                         [ -e "$p" ] && { echo "present: $p"; exit 1; }; done
                       ls /opt/torch/lib/python3.11/site-packages/torch/include >/dev/null 2>&1 && { echo "present: torch headers"; exit 1; }
                       test -x /opt/attnsweep/bin/attnsweep && test -f /opt/attnsweep/lib/libattnsweep_example_attention_op.so &&
                       test -f /opt/attnsweep/configs/quickstart.yaml && test -f /opt/attnsweep/share/versions/apt-runtime.txt &&
                       test -f /opt/attnsweep/share/versions/pip-build.txt' || die "the runtime stage's contents (above)"
echo "  ok: attnsweep, the example op library, configs and version lists present; no build tree, compiler or Python"

step "3. the quickstart on the CPU inside the image"
mkdir -p "$work/out" && chmod 777 "$work/out"
cat > "$work/out/example_op.yaml" <<'EOF'
name: image-example-op
seed: 0
variants:
  - sdpa_math
  - name: example
    kind: op_library
    library: /opt/attnsweep/lib/libattnsweep_example_attention_op.so
    op: attnsweep_example::attention
    causal: is_causal
    scale: scale
dtypes: [fp32]
causal: [true]
shapes:
  - {batch: 1, heads: 2, seq_len: 64, head_dim: 32}
measure: {warmup: 1, profiled_forwards: 1, min_samples: 5, max_samples: 20}
EOF
quick_started=$SECONDS
run_in -v "$work/out:/out" "$IMAGE" attnsweep run /opt/attnsweep/configs/quickstart.yaml --device cpu --db /out/quickstart.db \
  > "$work/quickstart.log" 2>&1 || { tail -20 "$work/quickstart.log"; die "attnsweep run of the quickstart failed in the image"; }
# On the CPU every case is ok but those of the two GPU-only SDPA backends, unsupported.
statuses() {
  sqlite3 "$1" "SELECT group_concat(variant || ' ' || status || ' ' || n, ', ') FROM
                (SELECT variant, status, count(*) AS n FROM cases GROUP BY 1, 2 ORDER BY 1, 2)"
}
expected_statuses="naive ok 6, naive_inplace ok 6, sdpa_auto ok 6, sdpa_cudnn unsupported 6, sdpa_efficient unsupported 6, sdpa_flash ok 6, sdpa_math ok 6"
check "quickstart statuses (in $((SECONDS - quick_started)) s)" "$(statuses "$work/out/quickstart.db")" "$expected_statuses"
check "runs.container_image" "$(sqlite3 "$work/out/quickstart.db" "SELECT container_image FROM runs")" "$image_env"
run_in -v "$work/out:/out" "$IMAGE" attnsweep run /out/example_op.yaml --device cpu --db /out/example_op.db \
  > "$work/example_op.log" 2>&1 || { tail -20 "$work/example_op.log"; die "the example op library's sweep failed in the image"; }
check "example op cases ok" "$(sqlite3 "$work/out/example_op.db" "SELECT count(*) FROM cases WHERE variant = 'example' AND status = 'ok'")" "1"

# The job runs plain debian:bookworm-slim; here, the base the image was built on (the registry's,
# by digest, or the one made from Debian's mirror where there is no registry).
BASE="$(label org.opencontainers.image.base.name)"
step "4. container/job-from-source.sh in $BASE, as a --from-source HF job runs it"
engine image inspect "$BASE" >/dev/null 2>&1 || die "no base image $BASE: make image makes or pulls it"
mkdir -p "$work/results" && chmod 777 "$work/results"
# The tracked files as they are now (a commit of them, made without touching the branch), as
# the image was built from them; a launch archives HEAD.
tree="$(git stash create 2>/dev/null || true)"
git archive --format=tar.gz "${tree:-HEAD}" > "$work/results/attnsweep-src.tar.gz"
cp configs/quickstart.yaml "$work/results/config.yaml"
sha="$(git rev-parse --short=12 HEAD)"
# The job's command, as runner/jobs/hf_commands.cpp makes it (tests/test_cli_launch.cpp checks that text).
bootstrap='mkdir -p /tmp/attnsweep-job && tar -xzf /results/attnsweep-src.tar.gz -C /tmp/attnsweep-job container/job-from-source.sh && exec bash /tmp/attnsweep-job/container/job-from-source.sh "$@"'
caches="${ATTNSWEEP_IMAGE_TEST_CACHE:-$HOME/.cache/attnsweep/image-test}"
mkdir -p "$caches/apt" "$caches/pip" "$caches/ccache"
mounts=(-v "$work/results:/results" -v "$caches/apt:/var/cache/apt/archives" -v "$caches/pip:/root/.cache/pip"
        -v "$caches/ccache:/root/.cache/ccache")
# A TLS proxy's CA for pip, where this machine has one (an HF job needs none).
ca="${ATTNSWEEP_CA_BUNDLE:-${PIP_CERT:-${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}}}"
[ -f "$ca" ] && mounts+=(-v "$ca:/run/attnsweep-ca.crt:ro" -e PIP_CERT=/run/attnsweep-ca.crt)
job_started=$SECONDS
engine run --rm --network host --security-opt label=disable "${mounts[@]}" \
  -e ATTNSWEEP_SWEEP_ID=image-test -e ATTNSWEEP_GIT_SHA="$sha" -e ATTNSWEEP_IMAGE=debian:bookworm-slim "$BASE" \
  bash -c "$bootstrap" job-from-source /results/config.yaml --shard 0/1 --sweep-id image-test \
  --db /tmp/attnsweep/shard-0-of-1.db --traces /tmp/attnsweep/traces --publish /results \
  > "$work/job.log" 2>&1 || { tail -30 "$work/job.log"; die "the from-source job failed"; }
grep '^\[job-from-source\]' "$work/job.log" | sed 's/^/  /'
shard="$work/results/shard-0-of-1.db"
[ -f "$shard" ] || die "the job published no shard-0-of-1.db into /results"
check "from-source job: statuses" "$(statuses "$shard")" "$expected_statuses"
check "from-source job: runs.git_sha" "$(sqlite3 "$shard" "SELECT git_sha FROM runs")" "$sha"
check "from-source job: runs.container_image (what a launch passes)" \
  "$(sqlite3 "$shard" "SELECT container_image FROM runs")" "debian:bookworm-slim"
echo "image-test: all checks passed in $((SECONDS - started)) s (the job: $((SECONDS - job_started)) s)"
