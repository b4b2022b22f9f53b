#!/usr/bin/env bash
# Issue 25's device proof of the serving masks, in one call (about 7 minutes on an H200):
#  1. build, then the GPU tests of DEVICE_TESTS (default GpuServing|GpuValidity);
#  2. PROOF_CONFIG (default proofs/serving/serving_proof.yaml: bottom-right causal and a 4096-key
#     window, decoding and chunked prefill, every built-in variant; serving_varlen_proof.yaml:
#     variable-length batches and paged caches with FA3) swept, then measured again from Python with
#     PyTorch's own masks, torch.profiler and CUDA events (scripts/serving_reference.py: counts
#     equal, medians of 200 us or more within 3%); FA3 from the fa3-fwd wheel in .devwheels when there;
#  3. SERVING_CONFIG (default configs/serving.yaml) swept for what time is left (SERVING_TIMEOUT
#     seconds, 0 skips it; SIGINT stores what it has), with its report.
#   device: run(command="bash proofs/serving/device_serving.sh", carry=[".devdeps", ".devwheels"], timeout_s=600)
# $OUT brings back at most 8 files; this writes: machine.txt, serving-proof.md, proof.db.gz,
# serving.txt (the sweep's summary), serving.db.gz and serving-report.html, logs.tgz.
# shellcheck source=../../scripts/device_prologue.sh source-path=SCRIPTDIR
source "$(dirname "$0")/../../scripts/device_prologue.sh"
proof_work serving-work logs.tgz '*.db*'
machine_facts name,driver_version,clocks.max.sm,memory.total,power.limit 2>&1 | tee "$OUT/machine.txt"

echo "== 1. build and the GPU tests ($(elapsed))"
tests="${DEVICE_TESTS:-GpuServing|GpuValidity}"
# The GPU tests run from their binary, not ctest: a gtest filter of the pattern.
BUILD_TARGET="attnsweep attnsweep_cli_tests" device_build "$WORK/build.log" none
stop_unless_built "$WORK/build.log" 2
# Each pattern a prefix: gtest's filter has the wildcards * and ?, and '.' is itself (a
# "Suite.Prefix.*" filter never matched "Suite.PrefixAndMore").
filter="$(echo "$tests" | sed 's/|/*:/g')*"
build/attnsweep_cli_tests --gtest_filter="$filter" > "$WORK/gpu_tests.log" 2>&1
tests_status=$?
echo "GPU tests ($filter) exit $tests_status"
grep -E "^\[ *(OK|FAILED|PASSED|SKIPPED) \]|Failure" "$WORK/gpu_tests.log" | head -20
sed -n '/GpuServing.BottomRight/,/\[ *OK\|FAILED/p' "$WORK/gpu_tests.log" | grep -v "^\[" | head -40

echo "== 2. the proof sweep and Python ($(elapsed))"
fa3=()
if ls .devwheels/fa3_fwd-*.whl > /dev/null 2>&1; then
  unpack_fa3
  fa3=(--fa3 fa3=.devwheels/fa3)
fi
proof_config="${PROOF_CONFIG:-proofs/serving/serving_proof.yaml}"
timeout -s INT "${PROOF_TIMEOUT:-120}" build/attnsweep run "$proof_config" --db "$WORK/proof.db" \
  > "$WORK/proof.txt" 2> "$WORK/proof.log"
echo "attnsweep exit $?"
cat "$WORK/proof.txt" | head -60; tail -3 "$WORK/proof.log"
timeout "${PY_TIMEOUT:-200}" python3 scripts/serving_reference.py "$WORK/proof.db" --out "$WORK/python.jsonl" "${fa3[@]}" \
  > "$OUT/serving-proof.md" 2> "$WORK/python.err"
proof=$?
echo "serving_reference.py exit $proof"
cat "$OUT/serving-proof.md"; tail -5 "$WORK/python.err"
backup "$WORK/proof.db" "$WORK/proof-copy.db"
gzip -c "$WORK/proof-copy.db" > "$OUT/proof.db.gz"

serving_config="${SERVING_CONFIG:-configs/serving.yaml}"
echo "== 3. $serving_config ($(elapsed))"
if [ "${SERVING_TIMEOUT:-150}" != 0 ]; then
  timeout -s INT "${SERVING_TIMEOUT:-150}" build/attnsweep run "$serving_config" --db "$WORK/serving.db" \
    > "$OUT/serving.txt" 2> "$WORK/serving.log"
  echo "attnsweep exit $?"
fi
tail -3 "$WORK/serving.log"
if [ -s "$WORK/serving.db" ]; then
  backup "$WORK/serving.db" "$WORK/serving-copy.db"
  python3 - "$WORK/proof-copy.db" "$WORK/serving-copy.db" <<'PY'
import sqlite3, sys
# One file back: the serving sweep with the proof run attached as a second database file would be
# two; the proof's cases go into serving.db.gz's table proof_cases instead.
db = sqlite3.connect(sys.argv[2])
db.execute("ATTACH DATABASE ? AS proof", (sys.argv[1],))
db.execute("CREATE TABLE proof_cases AS SELECT * FROM proof.results")
db.commit()
PY
  gzip -c "$WORK/serving-copy.db" > "$OUT/serving.db.gz"
  build/attnsweep report "$WORK/serving.db" -o "$OUT/serving-report.html" > /dev/null 2>> "$WORK/serving.log"
  python3 - "$WORK/serving.db" <<'PY'
import sys
sys.path.insert(0, "scripts")
from results_db import open_read_only
db = open_read_only(sys.argv[1])
print(db.execute("SELECT count(*), sum(status = 'ok'), sum(status = 'unsupported'), sum(status NOT IN ('ok', 'unsupported')) FROM cases").fetchone())
for row in db.execute("SELECT variant, mask, count(*), sum(status = 'ok'), round(avg(CASE WHEN status = 'ok' THEN tokens_per_s END)), "
                      "group_concat(DISTINCT substr(error_message, 1, 90)) FROM results GROUP BY variant, mask ORDER BY variant, mask"):
    print(row)
PY
fi
echo "== done in $(elapsed): build $status, GPU tests $tests_status, proof $proof"
[ "$status" = 0 ] && [ "$tests_status" = 0 ] && [ "$proof" = 0 ] || exit 1
