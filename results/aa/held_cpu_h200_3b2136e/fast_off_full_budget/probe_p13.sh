#!/usr/bin/env bash
# Device call: what do the managed and pageable copies' rounds cost with the fast CPU held (the default)
# and without it (--cpu=off)? One-round processes of those cases alone, alternating, on GPU 0.
set -u
start=$(date +%s)
mkdir -p $OUT/l
./scripts/setup.sh > $OUT/l/setup.log 2>&1; echo "setup rc=$? at $(( $(date +%s) - start )) s"
nvidia-smi --query-gpu=uuid,driver_version --format=csv > $OUT/l/gpus.txt 2>&1
F='^Transfer/dir:(h2d|d2h|bidir)/mem:(managed_prefetch|managed_fault|pageable)/'
for r in 1 2 3; do
  for c in fast off; do
    build/gpu_bench --benchmark_filter="$F" --rounds=1 --cpu=$c --benchmark_out=$OUT/mp_${c}_$r.json \
      --benchmark_out_format=json > /dev/null 2> $OUT/l/mp_${c}_$r.err; echo "cpu $c run $r rc=$? at $(( $(date +%s) - start )) s"
  done
done
gzip -9 $OUT/*.json
tar czf $OUT/logs_p13.tgz -C $OUT l && rm -rf $OUT/l
