#!/usr/bin/env bash
# A default run on GPU 0 (progress lines kept), then the GPU tests named by TESTS (a ctest -R regex).
set -u
start=$(date +%s)
mkdir -p $OUT/r/l
if [ ! -x build/gpu_bench ] || [ "${SETUP:-1}" = 1 ]; then
  ./scripts/setup.sh > $OUT/r/l/setup.log 2>&1; echo "setup rc=$? at $(( $(date +%s) - start )) s"
else
  cmake --build build -j16 > $OUT/r/l/build.log 2>&1; echo "build rc=$? at $(( $(date +%s) - start )) s"
fi
nvidia-smi --query-gpu=index,uuid,driver_version,pci.bus_id --format=csv > $OUT/r/gpus.txt 2>&1; nvidia-smi topo -m >> $OUT/r/gpus.txt 2>&1; cat $OUT/r/gpus.txt; cat .git_revision
git rev-parse HEAD > $OUT/r/head.txt 2>&1; git status --short | head >> $OUT/r/head.txt; cat $OUT/r/head.txt
s=$(date +%s)
timeout ${RUN_S:-360} build/gpu_bench --benchmark_out=$OUT/r/${NAME:-default_1}.json --benchmark_out_format=json \
  > $OUT/r/l/${NAME:-default_1}.out 2> $OUT/r/l/${NAME:-default_1}.err
echo "default run rc=$? in $(( $(date +%s) - s )) s at $(( $(date +%s) - start )) s"
grep -E "took|left|warning|error" $OUT/r/l/${NAME:-default_1}.err | head -30
tar czf $OUT/c22.tgz -C $OUT r
left=$(( ${TOTAL:-590} - ($(date +%s) - start) ))
(cd build && timeout $left ctest -V -R "${TESTS:-^gpu_}" > $OUT/r/l/ctest_${NAME:-default_1}.log 2>&1); echo "tests rc=$? at $(( $(date +%s) - start )) s"
grep -E "tests passed|\*\*\*|Not Run|Skipped|tests failed|Passed|Failed" $OUT/r/l/ctest_${NAME:-default_1}.log | tail -16
tar czf $OUT/c22.tgz -C $OUT r && rm -rf $OUT/r
