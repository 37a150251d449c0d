#!/usr/bin/env bash
# Filtered A/A of the host-driven cheap cases: arm A (default) against arm B ($B), alternating, RUNS each, GPU 0.
set -u
start=$(date +%s)
mkdir -p $OUT/r/l
./scripts/setup.sh > $OUT/r/l/setup.log 2>&1; echo "setup rc=$? at $(( $(date +%s) - start )) s"
nvidia-smi --query-gpu=uuid,driver_version --format=csv > $OUT/r/gpus.txt 2>&1; cat $OUT/r/gpus.txt
git rev-parse HEAD > $OUT/r/head.txt 2>&1; git status --short | head >> $OUT/r/head.txt
if [ -n "${TESTS:-}" ]; then
  (cd build && timeout ${TEST_S:-300} ctest -V -R "$TESTS" > $OUT/r/l/ctest.log 2>&1); echo "tests rc=$? at $(( $(date +%s) - start )) s"
  grep -E "tests passed|Passed|Failed|\*\*\*|Not Run|Skipped" $OUT/r/l/ctest.log | tail -30
fi
for p in $(seq 1 ${RUNS:-3}); do
  for arm in a b; do
    [ $(( $(date +%s) - start )) -gt ${BUDGET:-500} ] && { echo "budget reached before arm $arm run $p"; break 2; }
    if [ $arm = a ]; then args="${A:-}"; else args="${B:-}"; fi
    s=$(date +%s)
    build/gpu_bench $args --benchmark_filter="${FILTER:-^(Transfer/.*mem:pageable|Events/|HostBlocking/|SyncPlacement/|Launch/)}" --progress=off \
      --benchmark_out=$OUT/r/${arm}_$p.json --benchmark_out_format=json > $OUT/r/l/${arm}_$p.log 2>&1
    echo "arm $arm ($args) run $p rc=$? in $(( $(date +%s) - s )) s at $(( $(date +%s) - start )) s"
    tar czf $OUT/c15.tgz -C $OUT r
  done
done
tar czf $OUT/c15.tgz -C $OUT r && rm -rf $OUT/r
