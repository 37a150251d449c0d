#!/usr/bin/env bash
# Device call: the bare managed probe in several processes, free and with the whole process on one CPU,
# beside gpu_bench's managed copies of 4 B to 1 MiB in one-round processes; then GPU tests.
set -u
start=$(date +%s)
left() { echo $(( ${1} - ($(date +%s) - start) )); }
mkdir -p $OUT/l
./scripts/setup.sh > $OUT/l/setup.log 2>&1; echo "setup rc=$? at $(( $(date +%s) - start )) s"
nvidia-smi -L > $OUT/l/gpus.txt 2>&1; nvidia-smi --query-gpu=uuid,driver_version --format=csv >> $OUT/l/gpus.txt 2>&1
cmake --build build -j16 --target managed_probe > $OUT/l/build_probe.log 2>&1; echo "probe build rc=$?"
for p in 1 2 3 4 5 6; do
  build/tests/managed_probe 21 0 4 > $OUT/l/bare_free_$p.jsonl 2> $OUT/l/bare_free_$p.err; echo "bare free $p rc=$?"
  taskset -c 3 build/tests/managed_probe 21 0 4 > $OUT/l/bare_cpu3_$p.jsonl 2> $OUT/l/bare_cpu3_$p.err; echo "bare cpu3 $p rc=$?"
  build/gpu_bench --device=0 --benchmark_filter='^Transfer/dir:(h2d|d2h)/mem:managed_prefetch/bytes:(4|65536|1048576)/' \
    --rounds=1 --link_rounds=1 --benchmark_out=$OUT/l/gb_$p.json --benchmark_out_format=json > /dev/null 2> $OUT/l/gb_$p.err
  echo "gpu_bench $p rc=$? at $(( $(date +%s) - start )) s"
done
t=$(left ${BUDGET:-480})
if [ "$t" -gt 30 ] && [ -n "${TESTS:-}" ]; then
  (cd build && timeout $t ctest -V -R "${TESTS}" > $OUT/l/ctest_p6.log 2>&1); echo "tests rc=$? at $(( $(date +%s) - start )) s"
  grep -E "tests passed|Passed|Failed|\*\*\*|Not Run|Skipped|FAIL" $OUT/l/ctest_p6.log | tail -14
fi
tar czf $OUT/logs_p6.tgz -C $OUT l && rm -rf $OUT/l
ls -la $OUT
