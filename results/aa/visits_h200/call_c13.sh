#!/usr/bin/env bash
# Device call for the visits branch: set up, every GPU test, then Transfer's pageable copies alone in
# filtered default runs (rounds as the default) with Events and HostBlocking, --visits=1 and --visits=4 alternating, RUNS each, on GPU 0.
# One archive comes back. Run from a checkout of the visits branch.
set -u
start=$(date +%s)
mkdir -p $OUT/r/l
./scripts/setup.sh > $OUT/r/l/setup.log 2>&1; echo "setup rc=$? at $(( $(date +%s) - start )) s"
nvidia-smi --query-gpu=uuid,driver_version --format=csv > $OUT/r/gpus.txt 2>&1; cat $OUT/r/gpus.txt
if [ -z "${SKIP_TESTS:-}" ]; then
  (cd build && timeout ${TEST_S:-300} ctest -V -R '^gpu_' > $OUT/r/l/ctest.log 2>&1); echo "tests rc=$? at $(( $(date +%s) - start )) s"
  grep -E "tests passed|Passed|Failed|\*\*\*|Not Run|Skipped" $OUT/r/l/ctest.log | tail -30
fi
for p in $(seq 1 ${RUNS:-3}); do
  for v in 1 4; do
    [ $(( $(date +%s) - start )) -gt ${BUDGET:-470} ] && { echo "budget reached before visits $v run $p"; break 2; }
    build/gpu_bench --visits=$v --benchmark_filter='^(Transfer/.*mem:pageable|Events/|HostBlocking/)' --progress=off \
      --benchmark_out=$OUT/r/pageable_v${v}_$p.json --benchmark_out_format=json > $OUT/r/l/v${v}_$p.log 2>&1
    echo "visits $v run $p rc=$? at $(( $(date +%s) - start )) s"
    tar czf $OUT/c13.tgz -C $OUT r
  done
done
tar czf $OUT/c13.tgz -C $OUT r && rm -rf $OUT/r
