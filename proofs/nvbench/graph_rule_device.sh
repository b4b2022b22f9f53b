#!/usr/bin/env bash
# Issue 35, one call on the GPU machine: the sweep of proofs/nvbench/nvbench_sweep.yaml before and after a
# change of how a case is measured (the graph replays' own stopping rule), like with like, and the
# change's GPU tests. Builds the base commit's attnsweep (a `git archive` of it in .devbase) and this
# tree's with the GPU tests, runs the sweep with each (base first), compares them phase by phase and
# case by case (proofs/nvbench/phase_compare.py: $OUT/phases.md), then checks this tree's kernel counts and
# medians against PyTorch's own profiler and CUDA events on the same cases (scripts/torch_reference.py,
# proofs/nvbench/python_crosscheck.py: $OUT/python.md).
#   here:   rm -rf .devbase && mkdir .devbase && git archive BASE | tar -x -C .devbase
#   device: run(command="ATTNSWEEP_GIT_SHA=<sha> bash proofs/nvbench/graph_rule_device.sh", carry=[".devdeps", ".devbase"])
# shellcheck source=../../scripts/device_prologue.sh source-path=SCRIPTDIR
source "$(dirname "$0")/../../scripts/device_prologue.sh"
CONFIG=proofs/nvbench/nvbench_sweep.yaml
WORK=/tmp/attnsweep-graph-rule
rm -rf "$WORK" && mkdir -p "$WORK"
machine_facts name,driver_version,clocks.max.sm,power.limit,memory.total 2>&1 | tee "$OUT/machine.txt"
failed=0

echo "== base build ($(elapsed))"
cp -r .devdeps .devbase/ && mkdir -p /tmp/base-build && ln -sfn /tmp/base-build .devbase/build
(cd .devbase && BUILD_TARGET=attnsweep container/build.sh > "$WORK/base_build.log" 2>&1)
echo "base build exit $? ($(elapsed))"
[ -x .devbase/build/attnsweep ] || { tail -30 "$WORK/base_build.log"; failed=1; }

echo "== build and GPU tests ($(elapsed))"
device_build "$OUT/build_test.log" "${DEVICE_TESTS:-Gpu}" "Failed|FAILED" || failed=1
stop_unless_built "$OUT/build_test.log" 1

# sweep NAME BINARY: one process, timed from start to exit; sets wall.
sweep() {
  local start
  start=$(date +%s%N)
  "$2" run "$CONFIG" --db "$WORK/$1.db" > "$WORK/$1.txt" 2> "$WORK/$1.log"
  local code=$?
  wall=$(awk -v ns=$(( $(date +%s%N) - start )) 'BEGIN { printf "%.1f", ns / 1e9 }')
  echo "== $1 sweep: exit $code in $wall s"
  tail -2 "$WORK/$1.log"
  [ "$code" = 0 ] || failed=1
}
if [ -x .devbase/build/attnsweep ]; then
  sweep base .devbase/build/attnsweep
  base_wall=$wall
fi
sweep head build/attnsweep
head_wall=$wall
if [ -x .devbase/build/attnsweep ]; then
  python3 proofs/nvbench/phase_compare.py "base=$WORK/base.db" "head=$WORK/head.db" --walls "base=$base_wall" "head=$head_wall" \
    > "$OUT/phases.md" 2>&1 || failed=1
  cat "$OUT/phases.md"
fi

echo "== PyTorch's profiler and CUDA events on the same cases ($(elapsed))"
shapes=$(python3 -c 'import sys, yaml; print(",".join("{batch}x{heads}x{seq_len}x{head_dim}".format(**s) for s in yaml.safe_load(open(sys.argv[1]))["shapes"]["zip"]))' "$CONFIG")
timeout 200 python3 scripts/torch_reference.py --shapes "$shapes" --dtypes bf16,fp16,fp32 \
  --variants naive,naive_inplace,sdpa_math,sdpa_efficient,sdpa_flash,sdpa_cudnn --causal 1 --samples 100 \
  > "$WORK/python.jsonl" 2> "$WORK/python.err"
echo "python exit $? ($(elapsed))"
python3 proofs/nvbench/python_crosscheck.py "$WORK/head.db" "$WORK/python.jsonl" > "$OUT/python.md" 2>&1 || failed=1
tail -1 "$OUT/python.md"

backup "$WORK/head.db" "$OUT/head.db"
[ -f "$WORK/base.db" ] && backup "$WORK/base.db" "$OUT/base.db"
tar -C "$WORK" -czf "$OUT/logs.tar.gz" --exclude='*.db*' .
echo "done in $(elapsed)"
exit $failed
