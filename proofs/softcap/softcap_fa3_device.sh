#!/usr/bin/env bash
# Issue 36, soft-capping fused: after the built program exists (proofs/training/device_training.sh with
# CONFIG=configs/softcap.yaml builds it and checks the built-in variants against PyTorch in Python),
# sweep proofs/softcap/softcap_fa3.yaml (FA3 from the fa3-fwd wheel with its softcap argument mapped, naive,
# sdpa_flash) and measure FA3 again from Python (scripts/fa3_reference.py, without and with the cap:
# torch.profiler counts, CUDA events, float64 error of the capped attention) in the same call.
#   scripts/fetch_fa3.sh (here, once), then on the device, after device_training.sh:
#   run(command="CONFIG=configs/softcap.yaml bash proofs/training/device_training.sh; bash proofs/softcap/softcap_fa3_device.sh",
#       carry=[".devdeps", ".devwheels"])
# Writes softcap-fa3.md and softcap-fa3.db.gz to $OUT.
# shellcheck source=../../scripts/device_prologue.sh source-path=SCRIPTDIR
source "$(dirname "$0")/../../scripts/device_prologue.sh"
proof_work softcap-fa3
need_built proofs/training/device_training.sh
unpack_fa3
echo "== proofs/softcap/softcap_fa3.yaml"
start=$(date +%s)
build/attnsweep run proofs/softcap/softcap_fa3.yaml --db "$WORK/fa3.db" > "$WORK/run.txt" 2> "$WORK/run.err"
echo "attnsweep exit $? in $(( $(date +%s) - start )) s"; tail -3 "$WORK/run.err"
echo "== FA3 from Python, without and with the cap"
shapes=1x16/8x4096x256,1x32/16x4096x128
for cap in 0 50; do
  python3 scripts/fa3_reference.py .devwheels/fa3 --shapes "$shapes" --causal 1 --softcap "$cap" --samples 100 \
    >> "$WORK/fa3_python.jsonl" 2>> "$WORK/fa3_python.err"
  echo "python (softcap $cap) exit $?"
done
tail -2 "$WORK/fa3_python.err"
python3 scripts/op_library_report.py "$WORK/fa3.db" "$WORK/fa3_python.jsonl" > "$OUT/softcap-fa3.md"
cat "$OUT/softcap-fa3.md"
backup "$WORK/fa3.db" "$WORK/fa3-whole.db" && gzip -c "$WORK/fa3-whole.db" > "$OUT/softcap-fa3.db.gz"
