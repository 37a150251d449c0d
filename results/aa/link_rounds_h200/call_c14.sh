#!/usr/bin/env bash
# Filtered A/A: the host-driven cheap cases (pageable copies, Events, HostBlocking, SyncPlacement, Launch) at
# --link_rounds=5 (default) and 10, alternating, RUNS each, on GPU 0. One archive comes back.
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
  for v in ${LR:-5 10}; do
    [ $(( $(date +%s) - start )) -gt ${BUDGET:-500} ] && { echo "budget reached before link_rounds $v run $p"; break 2; }
    s=$(date +%s)
    build/gpu_bench --link_rounds=$v --benchmark_filter="${FILTER:-^(Transfer/.*mem:pageable|Events/|HostBlocking/|SyncPlacement/|Launch/)}" --progress=off \
      --benchmark_out=$OUT/r/lr${v}_$p.json --benchmark_out_format=json > $OUT/r/l/lr${v}_$p.log 2>&1
    echo "link_rounds $v run $p rc=$? in $(( $(date +%s) - s )) s at $(( $(date +%s) - start )) s"
    tar czf $OUT/c14.tgz -C $OUT r
  done
done
tar czf $OUT/c14.tgz -C $OUT r && rm -rf $OUT/r
