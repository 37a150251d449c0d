#!/usr/bin/env bash
# Device call: what the cases before a host-driven case in its process do to it, and a managed fault
# copy after a 1 GiB prefetch, in one-round processes on GPU 0.
set -u
start=$(date +%s)
mkdir -p $OUT/l
./scripts/setup.sh > $OUT/l/setup.log 2>&1; echo "setup rc=$? at $(( $(date +%s) - start )) s"
nvidia-smi -L > $OUT/l/gpus.txt 2>&1; nvidia-smi --query-gpu=uuid,driver_version --format=csv >> $OUT/l/gpus.txt 2>&1
tail -3 $OUT/l/setup.log
host='Events|HostBlocking|Launch|SmallCopy|SyncPlacement'
for p in 1 2 3; do
  for v in L A B; do
    case $v in L) f="^($host)/";; A) f="^(Alloc|$host)/";; B) f="^(Batch|$host)/";; esac
    s=$(date +%s%N)
    build/gpu_bench --device=0 --benchmark_filter="$f" --rounds=1 --benchmark_out=$OUT/l/pre_${v}_$p.json --benchmark_out_format=json > /dev/null 2> $OUT/l/pre_${v}_$p.err
    echo "pre $v $p rc=$? wall_ms $(( ($(date +%s%N) - s) / 1000000 )) at $(( $(date +%s) - start )) s"
  done
  for v in F P Q; do
    case $v in
      F) f='^Transfer/dir:h2d/mem:managed_fault/bytes:4/';;
      P) f='^Transfer/dir:h2d/mem:(managed_prefetch/bytes:1073741824|managed_fault/bytes:4)/';;
      Q) f='^Transfer/dir:h2d/mem:(managed_prefetch/bytes:67108864|managed_fault/bytes:4)/';;
    esac
    build/gpu_bench --device=0 --benchmark_filter="$f" --rounds=1 --benchmark_out=$OUT/l/man_${v}_$p.json --benchmark_out_format=json > /dev/null 2> $OUT/l/man_${v}_$p.err
    echo "man $v $p rc=$? at $(( $(date +%s) - start )) s"
  done
done
tar czf $OUT/logs_p3.tgz -C $OUT l && rm -rf $OUT/l
ls -la $OUT
