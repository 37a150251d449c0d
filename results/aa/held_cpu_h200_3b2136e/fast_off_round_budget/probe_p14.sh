#!/usr/bin/env bash
# Device call: does holding the fast CPU help the pageable copies and managed prefetches of every size, or
# only the small ones? One-round processes of those cases at a default round's budget (0.1 s), the fast
# CPU held (--cpu=fast, the default) and not (--cpu=off), alternating, five each, on GPU 0.
set -u
start=$(date +%s)
mkdir -p $OUT/l
./scripts/setup.sh > $OUT/l/setup.log 2>&1; echo "setup rc=$? at $(( $(date +%s) - start )) s"
nvidia-smi --query-gpu=uuid,driver_version --format=csv > $OUT/l/gpus.txt 2>&1
F='^Transfer/dir:(h2d|d2h|bidir)/mem:(managed_prefetch|pageable)/'
for r in 1 2 3 4 5; do
  for c in fast off; do
    build/gpu_bench --benchmark_filter="$F" --rounds=1 --max_time_per_case=0.1 --cpu=$c \
      --benchmark_out=$OUT/cpu_${c}_$r.json --benchmark_out_format=json > /dev/null 2> $OUT/l/cpu_${c}_$r.err
    echo "cpu $c run $r rc=$? at $(( $(date +%s) - start )) s"
  done
done
gzip -9 $OUT/*.json
tar czf $OUT/logs_p14.tgz -C $OUT l && rm -rf $OUT/l
