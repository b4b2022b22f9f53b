#!/usr/bin/env bash
# Why the counter pass's DRAM written bytes exceed Nsight Compute's (issue 39; docs/measurement.md,
# "Counters"): on an H100 about 18 MB per pass more with kernel replay, whether L2 was overwritten
# (memset) or read before the pass, and about 22 MB more with user replay and a read. One call:
#  1. build attnsweep;
#  2. sweep sdpa_cudnn and sdpa_flash at the study's shape and a decode step with counters, for each
#     replay (ATTNSWEEP_COUNTER_REPLAY kernel, user) and each way of emptying L2 before the pass
#     (ATTNSWEEP_COUNTER_L2 read, memset, memset_read, none): written and read MB per case;
#  3. Nsight Compute on the same passes with its cache control on (all: L2 flushed and invalidated
#     before each kernel) and off (none): how much of a pass's writes are earlier dirty lines.
#   device: run(command="bash proofs/counters/counters_l2_device.sh", carry=[".devdeps"], timeout_s=420)
# $OUT: machine.txt, l2.md (both tables), l2.tgz (databases, CSVs, logs).
# shellcheck source=../../scripts/device_prologue.sh source-path=SCRIPTDIR
source "$(dirname "$0")/../../scripts/device_prologue.sh"
proof_work counters-l2 l2.tgz
machine_facts name,driver_version,memory.total,power.limit 2>&1 | tee "$OUT/machine.txt"
device_build "$WORK/build.log" none
stop_unless_built "$WORK/build.log" 2
REPORT="$OUT/l2.md"
cat > "$WORK/l2.yaml" <<'YAML'
name: counters-l2
seed: 0
variants: [sdpa_flash, sdpa_cudnn]
dtypes: [bf16]
causal: bottom_right
shapes:
  - {batch: 8, heads: 16, seq_len: 1024, head_dim: 64}
  - {batch: 8, heads: 32, kv_heads: 8, seq_len_q: 1, seq_len_kv: 16384, head_dim: 128}
measure: {warmup: 3, profiled_forwards: 2, min_samples: 10, max_samples: 50, max_case_seconds: 0.5,
          counters: [dram_bytes]}
YAML
echo "## attnsweep's counter pass, by replay and L2 preparation (MB read / written per pass)" | tee "$REPORT"
echo "| replay | L2 before | flash 1024 | cuDNN 1024 | flash decode | cuDNN decode | pass s (sum) |" | tee -a "$REPORT"
echo "|---|---|---|---|---|---|---|" | tee -a "$REPORT"
for replay in kernel user; do
  for l2 in read memset memset_read none; do
    db="$WORK/$replay-$l2.db"
    ATTNSWEEP_COUNTER_REPLAY=$replay ATTNSWEEP_COUNTER_L2=$l2 timeout -s INT 60 build/attnsweep -q run "$WORK/l2.yaml" \
      --device cuda --db "$db" > "$WORK/$replay-$l2.txt" 2>&1 || echo "exit $? for $replay $l2"
    python3 - "$db" "$replay" "$l2" <<'PY' | tee -a "$REPORT"
import sys
sys.path.insert(0, "scripts")
from results_db import open_read_only
db = open_read_only(sys.argv[1])
cells = {}
for variant, sq, rd, wr, why in db.execute("SELECT variant, seq_len_q, dram_read_bytes, dram_write_bytes, counters_why_not FROM cases"):
    cells[(variant, sq)] = f"{rd / 1e6:.2f} / {wr / 1e6:.2f}" if rd is not None else (why or "-")[:40]
total = db.execute("SELECT round(sum(counter_seconds), 1) FROM cases").fetchone()[0]
order = [("sdpa_flash", 1024), ("sdpa_cudnn", 1024), ("sdpa_flash", 1), ("sdpa_cudnn", 1)]
print(f"| {sys.argv[2]} | {sys.argv[3]} | " + " | ".join(cells.get(k, "-") for k in order) + f" | {total} |")
PY
  done
done

echo "== Nsight Compute, cache control all and none ($(elapsed))" | tee -a "$REPORT"
NCU="$(command -v ncu || echo /usr/local/cuda/bin/ncu)"
echo "| variant | shape | cache control | kernel | read MB | written MB |" | tee -a "$REPORT"
echo "|---|---|---|---|---|---|" | tee -a "$REPORT"
for variant in sdpa_cudnn sdpa_flash; do
  for shape in 8x16x1024x64 8x32/8x1:16384x128; do
    for control in all none; do
      label="${variant}__${shape//\//-}__$control"
      timeout 60 "$NCU" --cache-control "$control" --profile-from-start off --metrics dram__bytes_read.sum,dram__bytes_write.sum \
        --csv --page raw --print-units base python3 proofs/counters/counters_reference.py --variant "$variant" --shape "$shape" --causal 1 \
        > "$WORK/$label.csv" 2> "$WORK/$label.err" || echo "ncu $label exit $? $(tail -1 "$WORK/$label.err")"
      python3 - "$WORK/$label.csv" "$variant" "$shape" "$control" <<'PY' | tee -a "$REPORT"
import csv, sys
rows = [r for r in csv.reader(l for l in open(sys.argv[1]) if l.startswith('"'))]
if not rows:
    print(f"| {sys.argv[2]} | {sys.argv[3]} | {sys.argv[4]} | no rows | | |")
    sys.exit()
head = rows[0]
name, rd, wr = head.index("Kernel Name"), head.index("dram__bytes_read.sum"), head.index("dram__bytes_write.sum")
for r in rows[1:]:
    try:
        mb = [float(r[i].replace(",", "")) / 1e6 for i in (rd, wr)]
        print(f"| {sys.argv[2]} | {sys.argv[3]} | {sys.argv[4]} | {r[name][:50]} | {mb[0]:.2f} | {mb[1]:.2f} |")
    except ValueError:
        pass
PY
    done
  done
done
echo "== done in $(elapsed)" | tee -a "$REPORT"
