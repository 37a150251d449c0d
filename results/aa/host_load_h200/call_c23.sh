#!/usr/bin/env bash
# The GPU tests at this tree, then the host-driven cases under 256 MiB alone (--rounds=5), on a quiet host and
# with HOGS busy loops on other CPUs, alternating: whether gpu_bench.round_host sees the load, and what it moves.
set -u
start=$(date +%s)
mkdir -p $OUT/r/l
./scripts/setup.sh > $OUT/r/l/setup.log 2>&1; echo "setup rc=$? at $(( $(date +%s) - start )) s"
nvidia-smi --query-gpu=index,uuid,driver_version --format=csv > $OUT/r/gpus.txt 2>&1; cat $OUT/r/gpus.txt; cat .git_revision
nproc >> $OUT/r/gpus.txt
(cd build && timeout ${TESTS_S:-300} ctest -V -R "${TESTS:-^gpu_}" > $OUT/r/l/ctest.log 2>&1); echo "tests rc=$? at $(( $(date +%s) - start )) s"
grep -E "^ *[0-9]+/[0-9]+ Test|tests passed|tests failed|round_host|measuring again|too noisy" $OUT/r/l/ctest.log | cut -c1-200 | tail -24
tar czf $OUT/c23.tgz -C $OUT r
F='^(Transfer/.*mem:pageable/bytes:([0-9]{1,7}|[1-5][0-9]{7}|6[0-7][0-9]{6})/|Events/|HostBlocking/.*bytes:([0-9]{1,7}|[1-5][0-9]{7}|6[0-7][0-9]{6})/|SyncPlacement/|Launch/)'
for p in 1 2 3; do
  for load in 0 ${HOGS:-8}; do
    [ $(( $(date +%s) - start )) -gt ${BUDGET:-530} ] && { echo "budget reached before run $p with $load hogs"; break 2; }
    pids=""
    for h in $(seq 1 $load); do (while :; do :; done) & pids="$pids $!"; done
    s=$(date +%s)
    timeout ${RUN_S:-60} build/gpu_bench --rounds=5 --benchmark_filter="$F" --progress=off \
      --benchmark_out=$OUT/r/hogs${load}_$p.json --benchmark_out_format=json > $OUT/r/l/hogs${load}_$p.log 2>&1
    echo "hogs $load run $p rc=$? in $(( $(date +%s) - s )) s at $(( $(date +%s) - start )) s"
    [ -n "$pids" ] && kill $pids 2>/dev/null; wait 2>/dev/null
    grep -o '"gpu_bench.round_host": "[^"]*"' $OUT/r/hogs${load}_$p.json | cut -c1-200
    tar czf $OUT/c23.tgz -C $OUT r
  done
done
tar czf $OUT/c23.tgz -C $OUT r && rm -rf $OUT/r
