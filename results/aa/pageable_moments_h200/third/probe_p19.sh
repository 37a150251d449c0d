#!/usr/bin/env bash
# Device call: what the held fast state leaves between moments of one process. pageable_probe in renew mode
# (thread free) and held mode (thread held as --cpu=fast holds it), alternating, four processes each of four
# passes, on GPU 0; then gpu_pageable_cpu three times. One archive comes back.
set -u
start=$(date +%s)
mkdir -p $OUT/r/l
./scripts/setup.sh > $OUT/r/l/setup.log 2>&1; echo "setup rc=$? at $(( $(date +%s) - start )) s"
nvidia-smi --query-gpu=uuid,driver_version --format=csv > $OUT/r/gpus.txt 2>&1; cat $OUT/r/gpus.txt
for p in 1 2 3 4; do
  for mode in held renew; do
    build/tests/pageable_probe 4 0 $mode > $OUT/r/${mode}_$p.jsonl 2> $OUT/r/l/${mode}_$p.err
    echo "$mode process $p rc=$? at $(( $(date +%s) - start )) s"
  done
done
for i in 1 2 3; do
  (cd build && ctest -V -R '^gpu_pageable_cpu$' > $OUT/r/l/ctest_pageable_cpu_$i.log 2>&1); echo "gpu_pageable_cpu $i rc=$?"
  grep -E "rounds over|Passed|Failed" $OUT/r/l/ctest_pageable_cpu_$i.log | tail -2
done
tar czf $OUT/p19.tgz -C $OUT r && rm -rf $OUT/r
