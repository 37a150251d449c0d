#!/usr/bin/env bash
# Device call: managed copies gated (as now) against ungated (the start event recorded on an idle stream, the
# prefetch called at once), one-round processes alternating on GPU 0, sizes up to 64 MiB; then GPU tests.
set -u
start=$(date +%s)
left() { echo $(( ${1} - ($(date +%s) - start) )); }
mkdir -p $OUT/l
./scripts/setup.sh > $OUT/l/setup.log 2>&1; echo "setup rc=$? at $(( $(date +%s) - start )) s"
nvidia-smi -L > $OUT/l/gpus.txt 2>&1; nvidia-smi --query-gpu=uuid,driver_version --format=csv >> $OUT/l/gpus.txt 2>&1
cp build/gpu_bench /tmp/gpu_bench_gated
sed -i 's/const bool gated = !enqueue_may_block(c.mem);/const bool gated = !enqueue_may_block(c.mem) \&\& !is_managed(c.mem);/' benchmarks/shared/copy_case.cpp
grep -n "const bool gated" benchmarks/shared/copy_case.cpp
cmake --build build -j16 --target gpu_bench > $OUT/l/build_ungated.log 2>&1; echo "ungated build rc=$? at $(( $(date +%s) - start )) s"
cp build/gpu_bench /tmp/gpu_bench_ungated
f='^Transfer/dir:(h2d|d2h|bidir)/mem:managed.*/bytes:[0-9]{1,8}/'
for p in 1 2 3 4; do
  for v in G:off U:off U:fast; do
    b=${v%%:*}; c=${v##*:}; bin=/tmp/gpu_bench_gated; [ $b = U ] && bin=/tmp/gpu_bench_ungated
    s=$(date +%s%N)
    $bin --device=0 --benchmark_filter="$f" --rounds=1 --link_rounds=1 --cpu=$c \
      --benchmark_out=$OUT/l/man_${b}${c}_$p.json --benchmark_out_format=json > /dev/null 2> $OUT/l/man_${b}${c}_$p.err
    echo "man $b $c $p rc=$? wall_ms $(( ($(date +%s%N) - s) / 1000000 )) at $(( $(date +%s) - start )) s"
  done
done
git checkout benchmarks/shared/copy_case.cpp
t=$(left ${BUDGET:-480})
if [ "$t" -gt 30 ] && [ -n "${TESTS:-}" ]; then
  cmake --build build -j16 --target gpu_bench > /dev/null 2>&1
  (cd build && timeout $t ctest -V -R "${TESTS}" > $OUT/l/ctest_p5.log 2>&1); echo "tests rc=$? at $(( $(date +%s) - start )) s"
  grep -E "tests passed|Passed|Failed|\*\*\*|Not Run|Skipped|FAIL" $OUT/l/ctest_p5.log | tail -14
fi
tar czf $OUT/logs_p5.tgz -C $OUT l && rm -rf $OUT/l
ls -la $OUT
