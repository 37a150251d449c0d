#!/usr/bin/env bash
# gpu_pageable_cpu and gpu_fast_cpu three times each on another H200's host, with the host's CPU facts.
set -u
start=$(date +%s)
mkdir -p $OUT/r/l
./scripts/setup.sh > $OUT/r/l/setup.log 2>&1; echo "setup rc=$? at $(( $(date +%s) - start )) s"
nvidia-smi --query-gpu=uuid,driver_version --format=csv > $OUT/r/gpus.txt 2>&1; cat $OUT/r/gpus.txt
(lscpu; grep MHz /proc/cpuinfo) > $OUT/r/cpu.txt 2>&1
for k in 1 2 3; do
  (cd build && timeout 60 ctest -V -R '^gpu_(pageable_cpu|fast_cpu)$' > $OUT/r/l/ctest_$k.log 2>&1); echo "tests $k rc=$? at $(( $(date +%s) - start )) s"
  grep -E "rounds over|Passed|Failed" $OUT/r/l/ctest_$k.log | grep -v "^ *[0-9]*: .*: rounds" | cut -c1-160
done
tar czf $OUT/c21.tgz -C $OUT r && rm -rf $OUT/r
