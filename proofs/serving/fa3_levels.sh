#!/usr/bin/env bash
# Runs proofs/serving/fa3_levels.yaml once per measuring setting and prints, per case, the medians of each
# block of 50 eager samples and of the graph replays, then Python's (scripts/sample_blocks.py).
#   device: run(command="bash proofs/serving/fa3_levels.sh", carry=[".devdeps", ".devwheels"])
# shellcheck source=../../scripts/device_prologue.sh source-path=SCRIPTDIR
source "$(dirname "$0")/../../scripts/device_prologue.sh"
unpack_fa3
# The variant configs live beside fa3_levels.yaml (its op library path is relative to it): gone on any exit.
trap 'rm -f bench/.fa3_levels_*.yaml' EXIT
[ -x build/attnsweep ] || device_build "$OUT/build.log" none || exit 2
blocks() {
  python3 - "$1" <<'PY'
import statistics, sys
sys.path.insert(0, "scripts")
from results_db import open_read_only
db = open_read_only(sys.argv[1])
for case_id, variant, median in db.execute("SELECT case_id, variant, gpu_time_us_median FROM cases ORDER BY case_id"):
    for mode in ("eager", "graph"):
        t = [r[0] for r in db.execute("SELECT gpu_time_us FROM samples WHERE case_id = ? AND mode = ? ORDER BY sample_index", (case_id, mode))]
        if t:
            b = [statistics.median(t[i:i + 50]) for i in range(0, len(t), 50)]
            print(f"  {variant:10} {mode:5} n={len(t):3} median {statistics.median(t):6.1f} blocks {' '.join(f'{x:.0f}' for x in b)}")
PY
}
settings=("regime: burst" "regime: sustained" "hide_launch_latency: false" "cuda_graph: false" "l2_flush: false")
for i in "${!settings[@]}"; do
  s="${settings[$i]}"; cfg="bench/.fa3_levels_$i.yaml"
  if [ "$s" = "regime: burst" ] || [ "$s" = "regime: sustained" ]; then
    sed "s/^  regime: burst/  $s/" proofs/serving/fa3_levels.yaml > "$cfg"
  else
    sed "s/^  regime: burst/  regime: burst\n  $s/" proofs/serving/fa3_levels.yaml | sed 's/\\n/\n/' > "$cfg"
  fi
  build/attnsweep run "$cfg" --db "/tmp/fa3_levels_$i.db" -q > /dev/null 2> "$OUT/run_$i.err"
  echo "== $s (exit $?)"
  blocks "/tmp/fa3_levels_$i.db"
done
echo "== Python, 8 blocks of 50 (scripts/sample_blocks.py)"
python3 scripts/sample_blocks.py /tmp/fa3_levels_0.db --plan-index 0 1 --fa3 fa3=.devwheels/fa3 2> /dev/null | tail -2
