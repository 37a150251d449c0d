#!/usr/bin/env bash
# Device call: the managed prefetches with their refill off the held CPU (this tree) against 3b2136e (refill
# on it), one-round processes at a default round's budget, alternating, four each; then every GPU test.
set -u
start=$(date +%s)
mkdir -p $OUT/r/l
./scripts/setup.sh > $OUT/r/l/setup.log 2>&1; echo "setup rc=$? at $(( $(date +%s) - start )) s"
mkdir -p /tmp/old && git archive 3b2136e | tar -x -C /tmp/old
(cd /tmp/old && BUILD_DIR=/tmp/old/build ./scripts/setup.sh > $OUT/r/l/setup_old.log 2>&1); echo "old setup rc=$? at $(( $(date +%s) - start )) s"
nvidia-smi --query-gpu=uuid,driver_version --format=csv > $OUT/r/l/gpus.txt 2>&1
F='^Transfer/dir:(h2d|d2h|bidir)/mem:managed_prefetch/'
for r in 1 2 3 4; do
  for v in old new; do
    b=build/gpu_bench; [ $v = old ] && b=/tmp/old/build/gpu_bench
    $b --benchmark_filter="$F" --rounds=1 --max_time_per_case=0.1 \
      --benchmark_out=$OUT/r/prefetch_${v}_$r.json --benchmark_out_format=json > /dev/null 2> $OUT/r/l/prefetch_${v}_$r.err
    echo "$v run $r rc=$? at $(( $(date +%s) - start )) s"
  done
done
t=$(( 585 - ($(date +%s) - start) ))
(cd build && timeout $t ctest -V -R '^gpu_' > $OUT/r/l/ctest_gpu.log 2>&1); echo "gpu tests rc=$? at $(( $(date +%s) - start )) s"
grep -E "tests passed|Passed|Failed|\*\*\*|Not Run|Skipped" $OUT/r/l/ctest_gpu.log | tail -30
gzip -9 $OUT/r/*.json
tar czf $OUT/p15.tgz -C $OUT r && rm -rf $OUT/r
