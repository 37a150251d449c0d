#!/usr/bin/env bash
# Device call: what moves PeerLatency's staged 4 B copy (peer access off)? One-round processes on GPU 0 and 1,
# the thread where gpu_bench puts it, then the whole process held on one CPU by taskset; pinned 4 B copies
# beside it as a control.
set -u
start=$(date +%s)
mkdir -p $OUT/l
./scripts/setup.sh > $OUT/l/setup.log 2>&1; echo "setup rc=$? at $(( $(date +%s) - start )) s"
nvidia-smi --query-gpu=uuid,driver_version --format=csv > $OUT/l/gpus.txt 2>&1
f='^PeerLatency/src:0/dst:1/|^SmallCopy/dir:(h2d|d2h)/mem:pinned/bytes:4/'
for p in 1 2 3 4 5 6; do
  build/gpu_bench --benchmark_filter="$f" --rounds=1 --samples=on --benchmark_out=$OUT/l/free_$p.json \
    --benchmark_out_format=json > /dev/null 2> $OUT/l/free_$p.err; echo "free $p rc=$? at $(( $(date +%s) - start )) s"
done
for c in 2 6 10 14 18 22; do
  taskset -c $c build/gpu_bench --benchmark_filter="$f" --rounds=1 --samples=on --benchmark_out=$OUT/l/one_cpu_$c.json \
    --benchmark_out_format=json > /dev/null 2> $OUT/l/one_cpu_$c.err; echo "one cpu $c rc=$? at $(( $(date +%s) - start )) s"
done
tar czf $OUT/logs_p10.tgz -C $OUT l && rm -rf $OUT/l
