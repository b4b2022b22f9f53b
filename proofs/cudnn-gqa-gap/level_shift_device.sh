#!/usr/bin/env bash
# Issue 36's open gap, second step (proofs/cudnn-gqa-gap/cudnn_gqa_gap.sh found it: the same cuDNN kernel, grid and
# block on both sides; attnsweep's fastest samples equal Python's median; within attnsweep's case the
# time moves from ~886 to ~960 us after 25-45 samples with the SM clock read at 1980 MHz). One long
# series per side with nvidia-smi sampling every 50 ms beside it: Python (proofs/cudnn-gqa-gap/level_shift.py, 1500
# samples), attnsweep (proofs/cudnn-gqa-gap/level_shift.yaml, 1500 samples, sustained), Python with no hold (3000 back to
# back), attnsweep in the burst regime (proofs/cudnn-gqa-gap/level_shift_burst.yaml, 300 samples). If Python's series moves
# too, the level is the GPU's state (power, heat), not attnsweep's protocol.
#   device: run(command="bash proofs/cudnn-gqa-gap/level_shift_device.sh", carry=[".devdeps"])
# $OUT: shift.md (block medians of 100 samples per phase, with the GPU's power, clocks and heat in
# each block's wall window), shift.tgz (the series, the trace, the database).
# shellcheck source=../../scripts/device_prologue.sh source-path=SCRIPTDIR
source "$(dirname "$0")/../../scripts/device_prologue.sh"
proof_work level-shift shift.tgz
machine_facts name,driver_version,clocks.max.sm,power.limit | tee "$OUT/shift-machine.txt"
build_unless_built "$WORK/build.log"
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,temperature.memory,clocks_event_reasons.active \
  --format=csv,noheader,nounits -lms 50 > "$WORK/smi.csv" 2>&1 &
smi=$!
sleep 1
echo "== python 1 ($(elapsed))"
timeout 60 python3 proofs/cudnn-gqa-gap/level_shift.py --out "$WORK/python1.txt"; echo "exit $?"
echo "== attnsweep ($(elapsed))"
timeout 90 build/attnsweep run proofs/cudnn-gqa-gap/level_shift.yaml --db "$WORK/attnsweep.db" > "$WORK/attnsweep.txt" 2>&1; echo "exit $?"
echo "== python 2, no hold: back to back as attnsweep's sustained samples ($(elapsed))"
timeout 60 python3 proofs/cudnn-gqa-gap/level_shift.py --hold 0 --samples 3000 --out "$WORK/python2.txt"; echo "exit $?"
echo "== attnsweep, burst regime ($(elapsed))"
timeout 120 build/attnsweep run proofs/cudnn-gqa-gap/level_shift_burst.yaml --db "$WORK/burst.db" > "$WORK/burst.txt" 2>&1; echo "exit $?"
sleep 1
kill "$smi" 2> /dev/null
python3 proofs/cudnn-gqa-gap/level_shift_summary.py "$WORK" | tee "$OUT/shift.md"
echo "== done ($(elapsed))"
