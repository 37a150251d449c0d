#!/usr/bin/env bash
# Final call: set up, every GPU test, then (time allowing) one filtered run at --benchmark_min_time=0.25.
set -u
start=$(date +%s)
mkdir -p $OUT/r/l
./scripts/setup.sh > $OUT/r/l/setup.log 2>&1; echo "setup rc=$? at $(( $(date +%s) - start )) s"
nvidia-smi --query-gpu=uuid,driver_version --format=csv > $OUT/r/gpus.txt 2>&1; cat $OUT/r/gpus.txt
git rev-parse HEAD > $OUT/r/head.txt 2>&1; git status --short | head >> $OUT/r/head.txt; cat $OUT/r/head.txt
(cd build && timeout ${TEST_S:-300} ctest -V -R '^gpu_' > $OUT/r/l/ctest.log 2>&1); echo "tests rc=$? at $(( $(date +%s) - start )) s"
grep -E "tests passed|\*\*\*|Not Run|Skipped|tests failed" $OUT/r/l/ctest.log | tail -12
tar czf $OUT/c16.tgz -C $OUT r
if [ $(( $(date +%s) - start )) -lt ${LATEST:-330} ]; then
  s=$(date +%s)
  timeout ${RUN_S:-90} build/gpu_bench --benchmark_min_time=0.25 \
    --benchmark_filter='^(Transfer/.*mem:pageable|Events/|HostBlocking/|SyncPlacement/|Launch/)' --progress=off \
    --benchmark_out=$OUT/r/min_time_1.json --benchmark_out_format=json > $OUT/r/l/min_time_1.log 2>&1
  echo "min_time run rc=$? in $(( $(date +%s) - s )) s at $(( $(date +%s) - start )) s"
fi
tar czf $OUT/c16.tgz -C $OUT r && rm -rf $OUT/r
