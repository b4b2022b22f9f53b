#!/usr/bin/env bash
# Issue 35, in one call on the GPU machine: attnsweep and nvbench (cuda-bench, NVIDIA's nvbench
# Python bindings) side by side, like with like. Builds attnsweep, runs proofs/nvbench/nvbench_sweep.yaml,
# then times the same torch calls through nvbench (proofs/nvbench/nvbench_compare.py) at its defaults and
# at matched noise (--max-noise 2 --min-time 0.05), each tool one process timed from start to
# exit, and writes the report (proofs/nvbench/nvbench_report.py) to $OUT/nvbench.md. With DEVICE_TESTS set
# (a ctest pattern, e.g. Gpu), the build also runs those tests first; with PYTHON_CHECK=1, the
# sweep's kernel counts and medians are checked against PyTorch's own profiler and CUDA events
# (scripts/torch_reference.py, proofs/nvbench/python_crosscheck.py) before nvbench runs: $OUT/python.md.
# Carried: .devdeps (git-ignored): the .debs of docs/development.md for the build, and the wheel in
# .devdeps/wheels, fetched here once (the GPU machine has no network):
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#     --platform manylinux_2_27_x86_64 -d .devdeps/wheels cuda-bench==0.3.0
#   device: run(command="ATTNSWEEP_GIT_SHA=<sha> bash proofs/nvbench/nvbench_device.sh", carry=[".devdeps"])
# Everything ends within DEADLINE_S (530) seconds of the start, the build included: each step after
# the build gets a share of what is left, and nvbench's modes start no case past their budget.
OUT_DEFAULT=nvbench-out
# shellcheck source=../../scripts/device_prologue.sh source-path=SCRIPTDIR
source "$(dirname "$0")/../../scripts/device_prologue.sh"
WORK="${WORK:-/tmp/attnsweep-nvbench}"
CONFIG=proofs/nvbench/nvbench_sweep.yaml
DB=/tmp/nvbench_sweep.db
DEADLINE_S="${DEADLINE_S:-530}"
rm -rf "$WORK" "$DB"* && mkdir -p "$WORK"
machine_facts name,driver_version,clocks.max.sm,power.limit,memory.total 2>&1 | tee "$OUT/machine.txt"

left() { echo $(( DEADLINE_S - $(seconds_since "$began") )); }
at_least() { if [ "$1" -lt "$2" ]; then echo "$2"; else echo "$1"; fi; }
at_most() { if [ "$1" -gt "$2" ]; then echo "$2"; else echo "$1"; fi; }
# timed NAME LIMIT_S COMMAND...: one process, its output into $WORK/NAME.log, SIGINT at LIMIT_S
# (attnsweep stores the run as interrupted; nvbench_compare.py starts no more cases and writes its
# lines), killed 30 s later; sets wall (seconds, from start to exit) and code (its exit status).
timed() {
  local name="$1" limit="$2" start
  shift 2
  start=$(date +%s%N)
  timeout -s INT -k 30 "$limit" "$@" > "$WORK/$name.log" 2>&1
  code=$?
  local ms=$(( ($(date +%s%N) - start) / 1000000 ))
  wall=$(printf '%d.%03d' $(( ms / 1000 )) $(( ms % 1000 )))
  echo "== $name: exit $code in $wall s (limit $limit s; $(elapsed) since the start)"
  tail -3 "$WORK/$name.log"
}
failed=0

echo "== build ($(elapsed))"
if [ -n "${DEVICE_TESTS:-}" ]; then
  device_build "$OUT/build.log" "$DEVICE_TESTS" "Failed|FAILED" || failed=1
else
  device_build "$OUT/build.log" none
fi
stop_unless_built "$OUT/build.log" 1

echo "== cuda-bench from .devdeps/wheels ($(elapsed))"
if ! timeout 120 python3 -m pip install -q --no-index --no-deps --find-links .devdeps/wheels cuda-bench==0.3.0 \
     > "$WORK/pip.log" 2>&1; then
  # No pip there, or python3's environment not writable: the wheel (a zip) unpacked beside it, on
  # PYTHONPATH (cuda is a namespace package: the environment's cuda.bindings stays importable)
  python3 -m zipfile -e .devdeps/wheels/cuda_bench-0.3.0-*.whl /tmp/cuda-bench-site >> "$WORK/pip.log" 2>&1 &&
    export PYTHONPATH="/tmp/cuda-bench-site${PYTHONPATH:+:$PYTHONPATH}"
fi
# State loads nvbench's CUDA extension, the one cuda.bindings' major version picks
if ! timeout 60 python3 -c 'import cuda.bindings, cuda.bench as b; b.State; print("cuda-bench", b.__version__, "cuda-bindings", cuda.bindings.__version__)' \
     2>&1 | tee -a "$OUT/machine.txt"; then
  tail -5 "$WORK/pip.log"
  failed=1
fi

# Expected on an H200 (an earlier measurement of the same sweep): attnsweep 45 s, nvbench 218 s at
# its defaults, 105 s at matched noise; the build about a minute.
attnsweep_limit=$(at_most "$(at_least $(( $(left) - 260 )) 60)" 180)
timed attnsweep "$attnsweep_limit" build/attnsweep run "$CONFIG" --db "$DB"
attnsweep_s=$wall attnsweep_exit=$code
[ "$code" = 0 ] || failed=1

# The budget of each mode is when it starts its last case; the limit adds the longest a case may
# then take (nvbench's --timeout of 15 s for the cold measurement, the batch measurement after it).
if [ "${PYTHON_CHECK:-0}" = 1 ]; then
  echo "== PyTorch's profiler and CUDA events on the same cases ($(elapsed))"
  shapes=$(python3 -c 'import sys, yaml; print(",".join("{batch}x{heads}x{seq_len}x{head_dim}".format(**s) for s in yaml.safe_load(open(sys.argv[1]))["shapes"]["zip"]))' "$CONFIG")
  timed python_reference 150 python3 scripts/torch_reference.py --shapes "$shapes" --dtypes bf16,fp16,fp32 \
    --variants naive,naive_inplace,sdpa_math,sdpa_efficient,sdpa_flash,sdpa_cudnn --causal 1 --samples 100
  grep '^{' "$WORK/python_reference.log" > "$WORK/python.jsonl"  # its JSON lines, not torch's warnings
  python3 proofs/nvbench/python_crosscheck.py "$DB" "$WORK/python.jsonl" > "$OUT/python.md" 2>&1 || failed=1
  tail -1 "$OUT/python.md"
fi

# matched first: the 3x is judged there; the defaults get what is left of the call.
declare -A mode_s mode_exit mode_budget
for mode in matched defaults; do
  if [ "$mode" = matched ]; then reserve=$(( $(left) > 330 ? 150 : 60 )); else reserve=15; fi
  budget=$(at_least $(( $(left) - reserve )) 30)
  timed "nvbench_$mode" $(( budget + 40 )) python3 proofs/nvbench/nvbench_compare.py --config "$CONFIG" --mode "$mode" \
    --out "$WORK/nvbench_$mode.jsonl" --nvbench-json "$WORK/nvbench_$mode.raw.json" --budget-s "$budget"
  mode_s[$mode]=$wall mode_exit[$mode]=$code mode_budget[$mode]=$budget
  [ "$code" = 0 ] || failed=1
done

cat > "$WORK/walls.json" <<EOF
{"attnsweep_s": $attnsweep_s, "attnsweep_exit": $attnsweep_exit,
 "nvbench_defaults_s": ${mode_s[defaults]}, "nvbench_defaults_exit": ${mode_exit[defaults]}, "nvbench_defaults_budget_s": ${mode_budget[defaults]},
 "nvbench_matched_s": ${mode_s[matched]}, "nvbench_matched_exit": ${mode_exit[matched]}, "nvbench_matched_budget_s": ${mode_budget[matched]}}
EOF
cat "$WORK/walls.json"

echo "== report ($(elapsed))"
timeout 60 python3 proofs/nvbench/nvbench_report.py "$DB" "$WORK/nvbench_defaults.jsonl" "$WORK/nvbench_matched.jsonl" \
  "$WORK/walls.json" "$OUT/machine.txt" > "$OUT/nvbench.md" 2> "$WORK/report.err"
echo "report exit $?"
cat "$WORK/report.err" "$OUT/nvbench.md"

# $OUT brings back at most 8 files: these, and one archive of the logs and nvbench's own JSON.
backup "$DB" "$OUT/nvbench_sweep.db"
cp "$WORK/walls.json" "$WORK"/nvbench_*.jsonl "$OUT/" 2> /dev/null
tar -C "$WORK" -czf "$OUT/nvbench-logs.tar.gz" .
echo "done in $(elapsed)"
exit $failed
