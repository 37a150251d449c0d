#!/usr/bin/env bash
# Device call: set up, a default run on GPU 0 (TAG names it), the renew probe if PROBE is set (six processes of
# four passes), then GPU tests matching TESTS within BUDGET s of the call's start. One archive comes back.
set -u
start=$(date +%s)
left() { echo $(( ${1} - ($(date +%s) - start) )); }
tag=${TAG:-run1}
mkdir -p $OUT/r/l
./scripts/setup.sh > $OUT/r/l/setup_${tag}.log 2>&1; echo "setup rc=$? at $(( $(date +%s) - start )) s"
nvidia-smi -L > $OUT/r/gpus_${tag}.txt 2>&1; nvidia-smi --query-gpu=uuid,driver_version --format=csv >> $OUT/r/gpus_${tag}.txt 2>&1
cat $OUT/r/gpus_${tag}.txt
if [ -z "${SKIP_RUN:-}" ]; then
  /usr/bin/time -v build/gpu_bench --benchmark_out=$OUT/r/default_${tag}.json --benchmark_out_format=json \
    > $OUT/r/l/${tag}_stdout.log 2> $OUT/r/l/${tag}_stderr.log
  echo "default rc=$? at $(( $(date +%s) - start )) s"
  grep -E "Elapsed|Maximum resident" $OUT/r/l/${tag}_stderr.log
  gzip -9 $OUT/r/default_${tag}.json
fi
if [ -n "${PROBE:-}" ]; then
  for p in 1 2 3 4 5 6; do
    build/tests/pageable_probe 4 0 renew > $OUT/r/renew_$p.jsonl 2> $OUT/r/l/renew_$p.err
    echo "probe process $p rc=$? at $(( $(date +%s) - start )) s"
  done
fi
t=$(left ${BUDGET:-560})
if [ "$t" -gt 30 ] && [ -n "${TESTS:-}" ]; then
  (cd build && timeout $t ctest -V -R "${TESTS}" > $OUT/r/l/ctest_${tag}.log 2>&1); echo "tests rc=$? at $(( $(date +%s) - start )) s"
  grep -E "tests passed|Passed|Failed|\*\*\*|Not Run|Skipped|FAIL" $OUT/r/l/ctest_${tag}.log | tail -30
fi
tar czf $OUT/c12_${tag}.tgz -C $OUT r && rm -rf $OUT/r
