#!/usr/bin/env bash
# One call on the two-GPU machine (kind nvidia-h200-x2) for a change that
# reshapes how cases are run and stored (issue 34): build, the GPU tests, the
# study sweep in process, with --isolate and with --gpus 0,1, each checked
# against the others case by case (status, kernel counts, backend, numerics),
# and the in-process sweep against PyTorch's Python profiler and CUDA events.
#   device: run(command="bash proofs/renovation/device_renovation.sh", carry=[".devdeps"], kind="nvidia-h200-x2")
# shellcheck source=../../scripts/device_prologue.sh source-path=SCRIPTDIR
source "$(dirname "$0")/../../scripts/device_prologue.sh"
CONFIG="${CONFIG:-configs/blog.yaml}"
machine_facts index,name,uuid,driver_version,clocks.max.sm,power.limit 2>&1 | tee "$OUT/machine.txt"

echo "== build and GPU tests ($(elapsed))"
device_build "$OUT/build_test.log" "${DEVICE_TESTS:-Gpu}" "Failed|FAILED"
stop_unless_built "$OUT/build_test.log" 1

rm -rf /tmp/inproc.db* /tmp/isolate.db* /tmp/pool.db*
gpus=$(nvidia-smi -L | wc -l)
pool=0; [ "$gpus" -ge 2 ] && pool=0,1
for mode in inproc isolate pool; do
  case $mode in
    inproc) args=() ;;
    isolate) args=(--isolate) ;;
    pool) args=(--gpus "$pool") ;;
  esac
  start=$(date +%s)
  build/attnsweep run "$CONFIG" --db /tmp/$mode.db "${args[@]}" > "$OUT/$mode.txt" 2> "$OUT/$mode.log"
  echo "== $mode sweep (${args[*]:-in process}): exit $? in $(seconds_since "$start") s"
  tail -3 "$OUT/$mode.log"
done
head -40 "$OUT/inproc.txt"

echo "== the three sweeps case by case"
python3 - /tmp/inproc.db /tmp/isolate.db /tmp/pool.db <<'PY'
import sys
sys.path.insert(0, "scripts")
from results_db import open_read_only
keys = "variant, batch, heads, kv_heads, seq_len_q, seq_len_kv, head_dim, dtype, mask, pass"
facts = "status, kernels_per_forward, memcpy_per_forward, memset_per_forward, sdpa_backend, numerics, gpu_time_us_median"
runs = []
for path in sys.argv[1:]:
    db = open_read_only(path)
    runs.append({tuple(r[:10]): r[10:] for r in db.execute(f"SELECT {keys}, {facts} FROM results")})
base, differ = runs[0], 0
for name, other in zip(["isolate", "pool"], runs[1:]):
    same = within = timed = 0
    for key, facts_a in base.items():
        facts_b = other.get(key)
        if facts_b is None or facts_a[:6] != facts_b[:6]:
            differ += 1
            print(f"{name}: differs at {key}: {facts_a[:6]} vs {facts_b and facts_b[:6]}")
            continue
        same += 1
        if facts_a[6] and facts_b[6] and facts_a[6] >= 200:
            timed += 1
            within += abs(facts_b[6] / facts_a[6] - 1) <= 0.03
    print(f"{name}: {same}/{len(base)} cases with equal status, counts, backend and numerics; "
          f"medians >= 200 us within 3% of in-process: {within}/{timed}")
print("differences:", differ)
sys.exit(1 if differ else 0)
PY
echo "case-by-case exit $?"

echo "== independent measurement (torch.profiler + CUDA events in Python) ($(elapsed))"
python3 scripts/torch_reference.py --dtype bf16 > "$OUT/python_blog.jsonl" 2> "$OUT/python_blog.err"
echo "python exit $?"
python3 scripts/blog_report.py /tmp/inproc.db "$OUT/python_blog.jsonl" "$OUT/machine.txt" > "$OUT/h200-blog.md"
cat "$OUT/h200-blog.md"
backup /tmp/inproc.db "$OUT/inproc.db"
backup /tmp/pool.db "$OUT/pool.db"
echo "done in $(elapsed)"
exit $status
