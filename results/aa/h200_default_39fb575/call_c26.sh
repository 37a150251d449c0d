#!/usr/bin/env bash
# The one GPU test the calls before did not run: gpu_latency.
set -u
start=$(date +%s)
mkdir -p $OUT/r
./scripts/setup.sh > $OUT/r/setup.log 2>&1; echo "setup rc=$? at $(( $(date +%s) - start )) s"
nvidia-smi --query-gpu=index,uuid,driver_version --format=csv,noheader; cat .git_revision
(cd build && timeout 150 ctest -V -R '^gpu_latency$' > $OUT/r/ctest_latency.log 2>&1); echo "tests rc=$? at $(( $(date +%s) - start )) s"
grep -E "Test +#|skip|SKIP|FAIL|ok:|apart" $OUT/r/ctest_latency.log | cut -c1-220 | tail -12
gzip $OUT/r/ctest_latency.log
