#!/usr/bin/env bash
# One call on the two-GPU machine (kind nvidia-h200-x2): the multi-GPU
# benchmark of docs/benchmarks.md. The same sweep (configs/scale_out.yaml) on
# one GPU, then on both with --gpus 0,1, then as two shards (one per GPU, at
# the same time) merged; compared case by case, and the study shape's cases
# checked against PyTorch's Python profiler and CUDA events on each GPU.
# Builds first unless build/attnsweep is there (a warm machine keeps it).
#   device: run(command="bash proofs/scale-out/device_scale_out.sh", carry=[".devdeps"], kind="nvidia-h200-x2")
# shellcheck source=../../scripts/device_prologue.sh source-path=SCRIPTDIR
source "$(dirname "$0")/../../scripts/device_prologue.sh"
CONFIG="${SCALE_CONFIG:-configs/scale_out.yaml}"
machine_facts index,name,uuid,driver_version,clocks.max.sm,power.limit 2>&1 | tee "$OUT/machine.txt"
if [ ! -x build/attnsweep ] || [ "${REBUILD:-0}" = 1 ]; then
  # container/build.sh's default: every target.
  BUILD_TARGET="${BUILD_TARGET:-}" device_build "$OUT/build.log" none || { tail -30 "$OUT/build.log"; exit 1; }
fi
now() { date +%s.%N; }
rm -rf /tmp/one.db* /tmp/two.db* /tmp/shard*.db* /tmp/merged.db*
build/attnsweep plan "$CONFIG" --device cuda | tail -2

# The one-GPU baseline is --gpus 0: the same worker, the same longest-first
# order, so both runs meet the power cap at the same cases (a one-GPU dry run
# measured the in-process run and --gpus 0 at 43.4 and 42.8 s for 112 cases).
echo "== one GPU (--gpus 0)"
t0=$(now); build/attnsweep run "$CONFIG" --gpus 0 --db /tmp/one.db > "$OUT/one.txt" 2> "$OUT/one.log"
echo "exit $?"; t1=$(now)
# On a one-GPU machine (a dry run of this script) the "two-GPU" run is --gpus 0
# (the pool's own cost) and the shards run one after the other on GPU 0.
gpus=$(nvidia-smi -L | wc -l)
if [ "$gpus" -ge 2 ]; then POOL=0,1; else POOL=0; fi
echo "== --gpus $POOL"
build/attnsweep run "$CONFIG" --gpus $POOL --db /tmp/two.db > "$OUT/two.txt" 2> "$OUT/two.log"
echo "exit $?"; t2=$(now)
echo "== two shards, one per GPU (one after the other on one GPU), merged"
for k in 0 1; do
  gpu=$(( gpus >= 2 ? k : 0 ))
  CUDA_VISIBLE_DEVICES=$gpu build/attnsweep run "$CONFIG" --shard $k/2 --sweep-id x2 --db /tmp/shard$k.db > /dev/null 2> /tmp/shard$k.log &
  [ "$gpus" -ge 2 ] || wait
done
wait; t3=$(now)
build/attnsweep merge /tmp/merged.db /tmp/shard0.db /tmp/shard1.db; echo "merge exit $?"
echo "== Python reference on each GPU (study shape)"
for gpu in $(seq 0 $(( gpus >= 2 ? 1 : 0 ))); do
  CUDA_VISIBLE_DEVICES=$gpu python3 scripts/torch_reference.py --dtype bf16 > "/tmp/python_gpu$gpu.jsonl" 2> "/tmp/python_gpu$gpu.err" &
done
wait
cat /tmp/python_gpu*.jsonl > "$OUT/python.jsonl"
python_args=(cuda:0=/tmp/python_gpu0.jsonl); [ "$gpus" -ge 2 ] && python_args+=(cuda:1=/tmp/python_gpu1.jsonl)
python3 proofs/scale-out/scale_out_report.py /tmp/one.db "$(python3 -c "print($t1 - $t0)")" /tmp/two.db "$(python3 -c "print($t2 - $t1)")" \
  "$OUT/machine.txt" --python "${python_args[@]}" \
  --merged /tmp/merged.db "$(python3 -c "print($t3 - $t2)")" > "$OUT/scale_out.md"
cat "$OUT/scale_out.md"
backup /tmp/two.db "$OUT/two.db"
