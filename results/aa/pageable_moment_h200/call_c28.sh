#!/usr/bin/env bash
# What is the host's moment that moves pageable copies? Each iteration: every CPU's memcpy rate and clock read
# (tests/gpu/cpu_state_probe.cpp, one pass), then six bare pageable copies (one process each), then gpu_bench's
# one-round process of the same six cases. Then the GPU tests with the time left.
set -u
start=$(date +%s)
mkdir -p $OUT/r/l
./scripts/setup.sh > $OUT/r/l/setup.log 2>&1; echo "setup rc=$? at $(( $(date +%s) - start )) s"
nvidia-smi --query-gpu=index,uuid,driver_version --format=csv > $OUT/r/gpus.txt 2>&1; cat $OUT/r/gpus.txt; cat .git_revision
nproc >> $OUT/r/gpus.txt; uptime >> $OUT/r/gpus.txt
g++ -O2 -std=c++17 -o /tmp/csp tests/gpu/cpu_state_probe.cpp || echo "cpu_state_probe did not build"
BARE=$(find build -name bare_memcpy -type f -perm -u+x | head -1); echo "bare: $BARE"
F='^Transfer/dir:(h2d|d2h)/mem:pageable/bytes:(1048576|16777216|268435456)/'
t0=$(date +%s)
i=0
while [ $(( $(date +%s) - t0 )) -lt ${BUDGET:-190} ]; do
  i=$((i + 1))
  /tmp/csp 0.1 1 | sed "s/^{/{\"iteration\": $i, /" >> $OUT/r/cpu.jsonl
  for dir in h2d d2h; do
    for b in 1048576:101 16777216:41 268435456:11; do
      printf '{"iteration": %d, "t_s": %d, "reading": ' $i $(( $(date +%s) - t0 )) >> $OUT/r/bare.jsonl
      $BARE $dir ${b%%:*} ${b##*:} 0 pageable | tr -d '\n' >> $OUT/r/bare.jsonl; echo "}" >> $OUT/r/bare.jsonl
    done
  done
  echo "{\"iteration\": $i, \"t_s\": $(( $(date +%s) - t0 ))}" > $OUT/r/gb_$i.meta
  timeout 60 build/gpu_bench --rounds=1 --benchmark_filter="$F" --progress=off \
    --benchmark_out=$OUT/r/gb_$i.json --benchmark_out_format=json > $OUT/r/l/gb_$i.log 2>&1 || echo "gpu_bench $i rc=$?"
done
echo "$i iterations at $(( $(date +%s) - start )) s"
tar czf $OUT/c28.tgz -C $OUT r
left=$(( ${TOTAL:-560} - ($(date +%s) - start) ))
(cd build && timeout $left ctest -V -R '^gpu_' > $OUT/r/l/ctest_gpu.log 2>&1); echo "tests rc=$? at $(( $(date +%s) - start )) s"
grep -E "tests passed|\*\*\*|Not Run|Skipped|tests failed|Passed|Failed" $OUT/r/l/ctest_gpu.log | tail -30
tar czf $OUT/c28.tgz -C $OUT r && rm -rf $OUT/r
