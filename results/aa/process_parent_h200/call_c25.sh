#!/usr/bin/env bash
# Do a run's rounds share a state through the process that starts them? Alternating on one quiet GPU: a run at
# --rounds=5 (rounds 1 to 4 children of one parent, the last in it), then five runs at --rounds=1 back to back
# (each its own process). Both groups span about as long; the spread within each is what tells.
set -u
start=$(date +%s)
mkdir -p $OUT/r/l
./scripts/setup.sh > $OUT/r/l/setup.log 2>&1; echo "setup rc=$? at $(( $(date +%s) - start )) s"
nvidia-smi --query-gpu=index,uuid,driver_version --format=csv > $OUT/r/gpus.txt 2>&1; cat $OUT/r/gpus.txt; cat .git_revision
nproc >> $OUT/r/gpus.txt; uptime >> $OUT/r/gpus.txt
F='^(Transfer/.*mem:(pageable|managed_prefetch)/bytes:([0-9]{1,7}|[1-5][0-9]{7}|6[0-7][0-9]{6})/|Transfer/dir:(h2d|d2h)/mem:pinned/bytes:(1048576|16777216|67108864)/|Events/|HostBlocking/.*bytes:([0-9]{1,7}|[1-5][0-9]{7}|6[0-7][0-9]{6})/|SyncPlacement/|Launch/)'
run() {  # name rounds
  local s=$(date +%s)
  timeout 90 build/gpu_bench --rounds=$2 --benchmark_filter="$F" --progress=off \
    --benchmark_out=$OUT/r/$1.json --benchmark_out_format=json > $OUT/r/l/$1.log 2>&1
  echo "$1 rc=$? in $(( $(date +%s) - s )) s at $(( $(date +%s) - start )) s"
}
for p in 1 2 3; do
  [ $(( $(date +%s) - start )) -gt ${BUDGET:-330} ] && { echo "budget reached before pair $p"; break; }
  run five_$p 5
  for k in 1 2 3 4 5; do run one_${p}_$k 1; done
  tar czf $OUT/c25.tgz -C $OUT r
done
tar czf $OUT/c25.tgz -C $OUT r && rm -rf $OUT/r
