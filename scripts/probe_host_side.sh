#!/usr/bin/env bash
# On a GPU machine: is the CPU the measuring thread runs on a source of the host-side cases' run-to-run
# variance? One-round processes of the cases the host drives (SyncPlacement, Events, Launch, SmallCopy,
# HostBlocking, Alloc and Batch at small sizes, pageable and managed copies), each a default round's share of
# the budget, alternating between --cpu=off and the thread pinned to each of a few CPUs. `gpu-bench-aa
# processes` (or any reader of round medians) then compares the spread between processes of one condition.
# usage: scripts/probe_host_side.sh BUILD_DIR OUTDIR [REPEATS] [CPUS...]
set -euo pipefail
build=${1:?usage: probe_host_side.sh BUILD_DIR OUTDIR [REPEATS] [CPUS...]}
out=${2:?usage: probe_host_side.sh BUILD_DIR OUTDIR [REPEATS] [CPUS...]}
repeats=${3:-2}
shift $(( $# >= 3 ? 3 : $# ))
cpus=("${@:-off}")
mkdir -p "$out"
# shellcheck source=scripts/host_side_cases.sh
. "$(dirname "${BASH_SOURCE[0]}")/host_side_cases.sh"
for r in $(seq 1 "$repeats"); do
  for c in "${cpus[@]}"; do
    f=$out/cpu_${c}_rep${r}.json
    start=$(date +%s.%N)
    "$build/gpu_bench" --cpu="$c" --rounds=1 --max_time_per_case=0.1667 --progress=off \
      --benchmark_filter="$host_side_filter" --benchmark_out="$f" --benchmark_out_format=json >/dev/null 2>"$out/cpu_${c}_rep${r}.err" ||
      echo "probe: cpu=$c rep $r failed: $(tail -1 "$out/cpu_${c}_rep${r}.err")" >&2
    echo "probe: cpu=$c rep $r $(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN{printf "%.1f s", e-s}')" >&2
  done
done
