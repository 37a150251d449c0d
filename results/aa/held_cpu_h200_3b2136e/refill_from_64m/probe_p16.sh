#!/usr/bin/env bash
# Device call: the GPU tests that touch the held CPU and the managed copies, gpu_pageable_cpu three times;
# then two one-round processes of the managed prefetches of 16 MiB and more.
set -u
start=$(date +%s)
mkdir -p $OUT/r/l
./scripts/setup.sh > $OUT/r/l/setup.log 2>&1; echo "setup rc=$? at $(( $(date +%s) - start )) s"
nvidia-smi --query-gpu=uuid,driver_version --format=csv > $OUT/r/l/gpus.txt 2>&1
for i in 1 2 3; do
  (cd build && ctest -V -R '^gpu_pageable_cpu$' > $OUT/r/l/ctest_pageable_cpu_$i.log 2>&1); echo "gpu_pageable_cpu $i rc=$?"
  grep -E "FAIL|rounds over|ok" $OUT/r/l/ctest_pageable_cpu_$i.log | tail -3
done
(cd build && ctest -V -R '^gpu_(fast_cpu|managed_rounds|fixtures)$' > $OUT/r/l/ctest_held.log 2>&1); echo "held tests rc=$?"
grep -E "tests passed|Passed|Failed" $OUT/r/l/ctest_held.log | tail -5
F='^Transfer/dir:(h2d|d2h|bidir)/mem:managed_prefetch/bytes:(16777216|67108864|268435456|1073741824)/'
for r in 1 2; do
  build/gpu_bench --benchmark_filter="$F" --rounds=1 --max_time_per_case=0.1 \
    --benchmark_out=$OUT/r/prefetch_large_$r.json --benchmark_out_format=json > /dev/null 2> $OUT/r/l/prefetch_large_$r.err
  echo "large run $r rc=$? at $(( $(date +%s) - start )) s"
done
gzip -9 $OUT/r/*.json
tar czf $OUT/p16.tgz -C $OUT r && rm -rf $OUT/r
