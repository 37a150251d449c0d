#!/usr/bin/env bash
# Device call at the final code: every GPU test program once, briefly, then fast GPU tests.
set -u
start=$(date +%s)
mkdir -p $OUT/l
./scripts/setup.sh > $OUT/l/setup.log 2>&1; echo "setup rc=$? at $(( $(date +%s) - start )) s"
nvidia-smi --query-gpu=uuid,driver_version --format=csv > $OUT/l/gpus.txt 2>&1
cmake --build build -j16 --target bare_memcpy host_state_probe link_load managed_probe pageable_probe placement_probe seed_overlap variance_probe > $OUT/l/build_probes.log 2>&1; echo "probes build rc=$?"
b=build/tests
run() { local name=$1; shift; timeout 60 $b/$name "$@" > $OUT/l/$name.out 2> $OUT/l/$name.err; echo "$name rc=$? $(head -c 160 $OUT/l/$name.out | head -1)"; }
run bare_memcpy h2d 1048576 20
run host_state_probe 1 0.25
run link_load 1
run managed_probe 3 0 1
run pageable_probe 1
run placement_probe 1 2
run seed_overlap 16777216 1,4 2
run variance_probe 1
echo "probes done at $(( $(date +%s) - start )) s"
(cd build && timeout 120 ctest -V -R '^(gpu_fixtures|gpu_round_order|gpu_fast_cpu|gpu_pageable_cpu|gpu_probe|seed_compare)$' > $OUT/l/ctest_p8.log 2>&1); echo "tests rc=$? at $(( $(date +%s) - start )) s"
grep -E "Test +#" $OUT/l/ctest_p8.log
tar czf $OUT/logs_p8.tgz -C $OUT l && rm -rf $OUT/l
