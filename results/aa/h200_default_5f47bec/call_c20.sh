#!/usr/bin/env bash
# Final tests: the GPU tests changed this session, then gpu_latency once more while time allows.
set -u
start=$(date +%s)
mkdir -p $OUT/r/l
./scripts/setup.sh > $OUT/r/l/setup.log 2>&1; echo "setup rc=$? at $(( $(date +%s) - start )) s"
nvidia-smi --query-gpu=uuid,driver_version --format=csv > $OUT/r/gpus.txt 2>&1; cat $OUT/r/gpus.txt
git rev-parse HEAD > $OUT/r/head.txt 2>&1; git status --short | head >> $OUT/r/head.txt
(cd build && timeout 300 ctest -V -R "$TESTS" > $OUT/r/l/ctest.log 2>&1); echo "tests rc=$? at $(( $(date +%s) - start )) s"
grep -E "^ *[0-9]+/[0-9]+ Test|tests passed|tests failed|measuring again|too noisy" $OUT/r/l/ctest.log | tail -20
tar czf $OUT/c20.tgz -C $OUT r
if [ $(( $(date +%s) - start )) -lt ${LATEST:-300} ]; then
  (cd build && timeout 150 ctest -V -R '^gpu_latency$' > $OUT/r/l/ctest_latency_2.log 2>&1); echo "latency again rc=$? at $(( $(date +%s) - start )) s"
  grep -E "33554432|Passed|Failed|Skipped" $OUT/r/l/ctest_latency_2.log | cut -c1-220 | tail -8
fi
tar czf $OUT/c20.tgz -C $OUT r && rm -rf $OUT/r
