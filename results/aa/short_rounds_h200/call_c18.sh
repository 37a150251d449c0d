#!/usr/bin/env bash
# c17's A/A (host-driven cases under 256 MiB alone at --rounds=5 and 15), then one default run with progress lines.
set -u
start=$(date +%s)
mkdir -p $OUT/r/l
./scripts/setup.sh > $OUT/r/l/setup.log 2>&1; echo "setup rc=$? at $(( $(date +%s) - start )) s"
nvidia-smi --query-gpu=uuid,driver_version --format=csv > $OUT/r/gpus.txt 2>&1; cat $OUT/r/gpus.txt
git rev-parse HEAD > $OUT/r/head.txt 2>&1; git status --short | head >> $OUT/r/head.txt
F='^(Transfer/.*mem:pageable/bytes:([0-9]{1,7}|[1-5][0-9]{7}|6[0-7][0-9]{6})/|Events/|HostBlocking/.*bytes:([0-9]{1,7}|[1-5][0-9]{7}|6[0-7][0-9]{6})/|SyncPlacement/|Launch/)'
for p in $(seq 1 ${RUNS:-3}); do
  for r in 5 15; do
    [ $(( $(date +%s) - start )) -gt ${BUDGET:-280} ] && { echo "budget reached before rounds $r run $p"; break 2; }
    s=$(date +%s)
    timeout ${RUN_S:-90} build/gpu_bench --rounds=$r --benchmark_filter="$F" --progress=off \
      --benchmark_out=$OUT/r/r${r}_$p.json --benchmark_out_format=json > $OUT/r/l/r${r}_$p.log 2>&1
    echo "rounds $r run $p rc=$? in $(( $(date +%s) - s )) s at $(( $(date +%s) - start )) s"
    tar czf $OUT/c18.tgz -C $OUT r
  done
done
left=$(( ${TOTAL:-585} - ($(date +%s) - start) ))
s=$(date +%s)
timeout $left build/gpu_bench --benchmark_out=$OUT/r/default.json --benchmark_out_format=json \
  > $OUT/r/l/default.out 2> $OUT/r/l/default.err
echo "default run rc=$? in $(( $(date +%s) - s )) s (limit $left s)"
grep -E "round .* took|left" $OUT/r/l/default.err | head -20
tar czf $OUT/c18.tgz -C $OUT r && rm -rf $OUT/r
