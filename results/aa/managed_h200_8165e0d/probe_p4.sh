#!/usr/bin/env bash
# Device call: managed copies held in the CPU's fast state (--cpu=fast) against unheld (--cpu=off), one-round
# processes alternating on GPU 0; then GPU tests in the time left.
set -u
start=$(date +%s)
left() { echo $(( ${1} - ($(date +%s) - start) )); }
mkdir -p $OUT/l
./scripts/setup.sh > $OUT/l/setup.log 2>&1; echo "setup rc=$? at $(( $(date +%s) - start )) s"
nvidia-smi -L > $OUT/l/gpus.txt 2>&1; nvidia-smi --query-gpu=uuid,driver_version --format=csv >> $OUT/l/gpus.txt 2>&1
nproc >> $OUT/l/gpus.txt
for p in 1 2 3 4; do
  for v in fast off; do
    s=$(date +%s%N)
    build/gpu_bench --device=0 --benchmark_filter='^Transfer/dir:(h2d|d2h|bidir)/mem:managed' --rounds=1 --link_rounds=1 --cpu=$v \
      --benchmark_out=$OUT/l/man_${v}_$p.json --benchmark_out_format=json > /dev/null 2> $OUT/l/man_${v}_$p.err
    echo "man $v $p rc=$? wall_ms $(( ($(date +%s%N) - s) / 1000000 )) at $(( $(date +%s) - start )) s"
  done
done
t=$(left ${BUDGET:-480})
if [ "$t" -gt 30 ]; then
  (cd build && timeout $t ctest -V -R "${TESTS:-^(gpu_fast_cpu)$}" > $OUT/l/ctest_p4.log 2>&1); echo "tests rc=$? at $(( $(date +%s) - start )) s"
  grep -E "tests passed|Passed|Failed|\*\*\*|Not Run|Skipped|FAIL" $OUT/l/ctest_p4.log | tail -14
fi
tar czf $OUT/logs_p4.tgz -C $OUT l && rm -rf $OUT/l
ls -la $OUT
