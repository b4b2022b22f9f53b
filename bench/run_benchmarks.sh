#!/usr/bin/env bash
# The measurement benchmark (docs/benchmarks.md), in one call on the GPU machine,
# after container/build.sh:  bash bench/run_benchmarks.sh  (results in $OUT).
#   1. fidelity: configs/bench.yaml against scripts/torch_reference.py (same protocol, same call)
#   2. kernel counts against torch.profiler in Python
#   3. sweep cost against bench/study_like.py (the study's way, twice as the study did it and
#      twice held to the same 1% noise target); also attnsweep twice without its extras (no
#      CUDA-graph timing, no accuracy check), like for like
#   4. stability: the same sweep three times
#   5. case order: the same sweep three times more with measure.case_order: shuffled
#   6. what one timed sample costs, step by step (build/attnsweep_sample_cost)
# Everything lands in a work folder, the report is written there, and $OUT gets
# benchmarks.md plus one archive of the rest ($OUT brings back at most 8 files).
OUT_DEFAULT=bench-out
# shellcheck source=../scripts/device_prologue.sh source-path=SCRIPTDIR
source "$(dirname "$0")/../scripts/device_prologue.sh"
WORK="${WORK:-/tmp/attnsweep-bench}"
rm -rf "$WORK" && mkdir -p "$WORK"
SHAPES="8x16x1024x64,16x16x512x64,4x32x2048x128,1x16x4096x128"
VARIANTS="naive,naive_inplace,sdpa_math,sdpa_efficient,sdpa_flash,sdpa_cudnn"

machine_facts name,driver_version,clocks.max.sm,memory.total > "$WORK/machine.txt" 2>&1
cat "$WORK/machine.txt"

# Variants of configs/bench.yaml: the same cases, other settings (appended to its measure block).
with_settings() { sed "s/^measure:\$/measure:\n$1/" configs/bench.yaml > "$2"; }
with_settings "  case_order: shuffled" "$WORK/bench_shuffled.yaml"
with_settings "  accuracy_check: false\n  cuda_graph: false" "$WORK/bench_lean.yaml"

ms_since() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
# sweep NAME CONFIG: one attnsweep process, timed from start to exit (database committed).
now() { date +%H:%M:%S.%3N; }
sweep() {
  rm -f "/tmp/$1.db"*
  local start; start=$(date +%s%N)
  # The log's own lines carry milliseconds; these two mark the process's ends
  # so that report.py can split the time spent outside the cases.
  echo "[$(now)] process start" > "$WORK/$1.log"
  timeout 300 build/attnsweep run "$2" --db "/tmp/$1.db" > "$WORK/$1.txt" 2>> "$WORK/$1.log"
  local status=$?
  local ms; ms=$(ms_since "$start")
  echo "[$(now)] process exit $status" >> "$WORK/$1.log"
  echo "attnsweep $1 exit $status in $ms ms" >&2
  backup "/tmp/$1.db" "$WORK/$1.db"
  echo "${ms}e-3"
}
plan=(); shuffled=()
for i in 1 2 3; do
  plan+=("$(sweep "bench$i" configs/bench.yaml)")
  shuffled+=("$(sweep "shuffled$i" "$WORK/bench_shuffled.yaml")")
done
lean=()
for i in 1 2; do lean+=("$(sweep "lean$i" "$WORK/bench_lean.yaml")"); done
cp "$WORK/lean1.db" "$WORK/lean.db"; cp "$WORK/lean1.log" "$WORK/lean.log"
tail -20 "$WORK/bench1.txt"

timeout 240 python3 scripts/torch_reference.py --shapes "$SHAPES" --dtypes bf16,fp16,fp32 --variants "$VARIANTS" \
  --protocol v2 --samples 200 > "$WORK/python.jsonl" 2> "$WORK/python.err"
echo "python reference exit $?"
# The study's way, twice each (the first Python process on a machine pays for cold caches):
# once as the study ran it (one profiling session per case), once held to attnsweep's
# noise target (the session repeated per case until its samples' relative stdev is at
# most 1% or stops moving, at most 20 sessions per case).
study=(); study_noise=()
for i in 1 2; do
  start=$(date +%s%N)
  timeout 120 python3 bench/study_like.py --shapes "$SHAPES" --dtypes bf16,fp16,fp32 --variants "$VARIANTS" \
    > "$WORK/study_like$i.jsonl" 2> "$WORK/study$i.err"
  echo "study-like $i exit $?"
  study+=("$(ms_since "$start")e-3")
  start=$(date +%s%N)
  timeout 200 python3 bench/study_like.py --shapes "$SHAPES" --dtypes bf16,fp16,fp32 --variants "$VARIANTS" \
    --target-noise 0.01 --max-sessions 20 > "$WORK/study_like_noise$i.jsonl" 2> "$WORK/study_noise$i.err"
  echo "study-like to 1% noise $i exit $?"
  study_noise+=("$(ms_since "$start")e-3")
done
cp "$WORK/study_like1.jsonl" "$WORK/study_like.jsonl"
cp "$WORK/study_like_noise1.jsonl" "$WORK/study_like_noise.jsonl"

if [ -x build/attnsweep_sample_cost ]; then
  timeout 120 build/attnsweep_sample_cost 500 sdpa_cudnn 16x16x512x64 bf16 > "$WORK/sample_cost.jsonl" 2> "$WORK/sample_cost.err"
  timeout 120 build/attnsweep_sample_cost 200 sdpa_efficient 4x32x2048x128 bf16 >> "$WORK/sample_cost.jsonl" 2>> "$WORK/sample_cost.err"
  echo "sample_cost exit $?"
fi

join() { local IFS=,; echo "$*"; }
echo "{\"attnsweep_seconds\": [$(join "${plan[@]}")], \"shuffled_seconds\": [$(join "${shuffled[@]}")]," \
     "\"lean_seconds\": [$(join "${lean[@]}")], \"study_like_seconds\": [$(join "${study[@]}")]," \
     "\"study_like_noise_seconds\": [$(join "${study_noise[@]}")]}" > "$WORK/costs.json"
cat "$WORK/costs.json"
python3 bench/report.py "$WORK" > "$WORK/benchmarks.md"
echo "report exit $?"
cp "$WORK/benchmarks.md" "$OUT/benchmarks.md"
tar -C "$WORK" -czf "$OUT/bench-results.tar.gz" .
