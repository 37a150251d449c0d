#!/usr/bin/env bash
# Device call: the bare managed probe, with the host clock around the evented prefetch too, in six processes.
set -u
start=$(date +%s)
mkdir -p $OUT/l
./scripts/setup.sh > $OUT/l/setup.log 2>&1; echo "setup rc=$? at $(( $(date +%s) - start )) s"
nvidia-smi -L > $OUT/l/gpus.txt 2>&1; nvidia-smi --query-gpu=uuid,driver_version --format=csv >> $OUT/l/gpus.txt 2>&1
cmake --build build -j16 --target managed_probe > $OUT/l/build_probe.log 2>&1; echo "probe build rc=$?"
for p in 1 2 3 4 5 6; do
  build/tests/managed_probe 21 0 2 > $OUT/l/bare_free_$p.jsonl 2> $OUT/l/bare_free_$p.err; echo "bare free $p rc=$? at $(( $(date +%s) - start )) s"
done
tar czf $OUT/logs_p7.tgz -C $OUT l && rm -rf $OUT/l
