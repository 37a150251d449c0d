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
# shellcheck source=scripts/host_side_cases.sh
. "$(dirname "${BASH_SOURCE[0]}")/host_side_cases.sh"
for r in $(seq 1 "$runs"); do
  for c in "${policies[@]}"; do
    start=$(date +%s.%N)
    "$build/gpu_bench" --cpu="$c" --progress=off --benchmark_filter="$host_side_filter" \
      --benchmark_out="$out/host_side_cpu_${c}_run${r}.json" --benchmark_out_format=json >/dev/null \
      2>"$out/host_side_cpu_${c}_run${r}.err" || echo "aa: cpu=$c run $r failed: $(tail -1 "$out/host_side_cpu_${c}_run${r}.err")" >&2
    echo "aa: cpu=$c run $r $(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN{printf "%.1f s", e-s}')" >&2
  done
done
