#!/usr/bin/env bash
# The machine's floor for pageable copies: a bare cudaMemcpy from malloc'd memory (tests/gpu/bare_memcpy.cu) and
# gpu_bench's own one-round processes of the same six cases, alternating, one process per reading, on one GPU.
# What the bare program's processes spread is the machine's; no harness of that many processes does better.
set -u
start=$(date +%s)
mkdir -p $OUT/r/l
./scripts/setup.sh > $OUT/r/l/setup.log 2>&1; echo "setup rc=$? at $(( $(date +%s) - start )) s"
nvidia-smi --query-gpu=index,uuid,driver_version --format=csv > $OUT/r/gpus.txt 2>&1; cat $OUT/r/gpus.txt; cat .git_revision
nproc >> $OUT/r/gpus.txt; uptime >> $OUT/r/gpus.txt
BARE=$(find build -name bare_memcpy -type f -perm -u+x | head -1); echo "bare: $BARE"
F='^Transfer/dir:(h2d|d2h)/mem:pageable/bytes:(1048576|16777216|268435456)/'
t0=$(date +%s)
i=0
while [ $(( $(date +%s) - t0 )) -lt ${BUDGET:-270} ]; do
  i=$((i + 1))
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
tar czf $OUT/c27.tgz -C $OUT r && rm -rf $OUT/r
