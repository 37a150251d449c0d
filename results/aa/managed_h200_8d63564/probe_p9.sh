#!/usr/bin/env bash
# Device call: is the managed step the context's or the process's? managed_probe in six processes of four
# contexts each (cudaDeviceReset between), two buffers on streams of their own.
set -u
start=$(date +%s)
mkdir -p $OUT/l
./scripts/setup.sh > $OUT/l/setup.log 2>&1; echo "setup rc=$? at $(( $(date +%s) - start )) s"
nvidia-smi --query-gpu=uuid,driver_version --format=csv > $OUT/l/gpus.txt 2>&1
cmake --build build -j16 --target managed_probe > $OUT/l/build_probe.log 2>&1; echo "probe build rc=$?"
for p in 1 2 3 4 5 6; do
  build/tests/managed_probe 15 0 2 4 > $OUT/l/ctx_$p.jsonl 2> $OUT/l/ctx_$p.err; echo "ctx $p rc=$? at $(( $(date +%s) - start )) s"
done
tar czf $OUT/logs_p9.tgz -C $OUT l && rm -rf $OUT/l
