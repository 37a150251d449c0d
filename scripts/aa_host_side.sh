#!/usr/bin/env bash
# On a GPU machine: default runs (three rounds each) of the cases the host drives, RUNS of each --cpu policy
# named (default: auto and off, alternating), so that A/A pairs of each can be set side by side
# (docs/methodology.md, "Host-driven cases and the CPU's state").
# usage: scripts/aa_host_side.sh BUILD_DIR OUTDIR [RUNS] [POLICY...]
set -euo pipefail
build=${1:?usage: aa_host_side.sh BUILD_DIR OUTDIR [RUNS] [POLICY...]}
out=${2:?usage: aa_host_side.sh BUILD_DIR OUTDIR [RUNS] [POLICY...]}
runs=${3:-3}
shift $(($# >= 3 ? 3 : $#))
policies=("${@:-auto}")
[ $# -gt 0 ] || policies=(auto off)
mkdir -p "$out"
filter='^(SyncPlacement|Events|Launch|SmallCopy)/|^Alloc/.*bytes:1048576/|^HostBlocking/.*bytes:(65536|1048576)/|^Batch/.*copies:(1|64)/|^Transfer/dir:(h2d|d2h)/mem:(pageable|managed_prefetch|managed_fault)/bytes:(1048576|16777216|268435456)/'
for r in $(seq 1 "$runs"); do
  for c in "${policies[@]}"; do
    start=$(date +%s.%N)
    "$build/gpu_bench" --cpu="$c" --progress=off --benchmark_filter="$filter" \
      --benchmark_out="$out/host_side_cpu_${c}_run${r}.json" --benchmark_out_format=json >/dev/null \
      2>"$out/host_side_cpu_${c}_run${r}.err" || echo "aa: cpu=$c run $r failed: $(tail -1 "$out/host_side_cpu_${c}_run${r}.err")" >&2
    echo "aa: cpu=$c run $r $(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN{printf "%.1f s", e-s}')" >&2
  done
done
