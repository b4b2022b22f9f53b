#!/usr/bin/env bash
# The measurement benchmark (docs/benchmarks.md), in one call on the GPU machine,
# after container/build.sh:  bash bench/run_benchmarks.sh  (results in $OUT).
#   1. fidelity: configs/bench.yaml against tests/gpu/torch_reference.py (same protocol, same call)
#   2. kernel counts against torch.profiler in Python
#   3. sweep cost against bench/study_like.py (the study's way)
#   4. stability: the same sweep three times
set -uo pipefail
OUT="${OUT:-$PWD/bench-out}"
mkdir -p "$OUT"
cd "$(dirname "$0")/.."
SHAPES="8x16x1024x64,16x16x512x64,4x32x2048x128,1x16x4096x128"
VARIANTS="naive,naive_inplace,sdpa_math,sdpa_efficient,sdpa_flash,sdpa_cudnn"
seconds=()
for i in 1 2 3; do
  rm -f /tmp/bench$i.db*
  start=$(date +%s%N)
  timeout 100 build/attnsweep run configs/bench.yaml --db /tmp/bench$i.db > /tmp/bench$i.txt 2> /tmp/bench$i.log
  echo "attnsweep run $i exit $? in $(( ($(date +%s%N) - start) / 1000000 )) ms"
  seconds+=("$(( ($(date +%s%N) - start) / 1000000 ))e-3")
  python3 -c "import sqlite3,sys; d=sqlite3.connect(sys.argv[2]); sqlite3.connect(sys.argv[1]).backup(d); d.close()" /tmp/bench$i.db "$OUT/bench$i.db"
done
tail -20 /tmp/bench1.txt
timeout 120 python3 tests/gpu/torch_reference.py --shapes "$SHAPES" --dtypes bf16,fp16,fp32 --variants "$VARIANTS" \
  --protocol v2 --samples 200 > "$OUT/python.jsonl" 2> /tmp/python.err
echo "python reference exit $?"
start=$(date +%s%N)
timeout 120 python3 bench/study_like.py --shapes "$SHAPES" --dtypes bf16,fp16,fp32 --variants "$VARIANTS" > "$OUT/study_like.jsonl" 2> /tmp/study.err
echo "study-like exit $?"
study="$(( ($(date +%s%N) - start) / 1000000 ))e-3"
echo "{\"attnsweep_seconds\": [${seconds[0]}, ${seconds[1]}, ${seconds[2]}], \"study_like_seconds\": $study}" > "$OUT/costs.json"
cat "$OUT/costs.json"
python3 bench/report.py "$OUT" > "$OUT/benchmarks.md"
echo "report exit $?"
cp /tmp/bench1.log "$OUT/bench1.log"
