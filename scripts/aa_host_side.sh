#!/usr/bin/env bash
# On a GPU machine: default runs of the cases the host drives, RUNS of each variant named, alternating, so
# that A/A pairs of each can be set side by side (docs/methodology.md, "Host-driven cases and the CPU's
# state"). A variant is a --cpu policy (auto, off, a CPU number: files host_side_cpu_POLICY_runR.json) or a
# gpu_bench flag such as --rounds=5 (files host_side_rounds5_runR.json). Default: auto and off.
# usage: scripts/aa_host_side.sh BUILD_DIR OUTDIR [RUNS] [VARIANT...]
set -euo pipefail
build=${1:?usage: aa_host_side.sh BUILD_DIR OUTDIR [RUNS] [VARIANT...]}
out=${2:?usage: aa_host_side.sh BUILD_DIR OUTDIR [RUNS] [VARIANT...]}
runs=${3:-3}
shift $(($# >= 3 ? 3 : $#))
variants=("${@:-auto}")
[ $# -gt 0 ] || variants=(auto off)
mkdir -p "$out"
# shellcheck source=scripts/host_side_cases.sh
. "$(dirname "${BASH_SOURCE[0]}")/host_side_cases.sh"
# GPU_BENCH_PROBE_FILTER runs other cases the same way (the small copies' probe in docs/notes).
host_side_filter=${GPU_BENCH_PROBE_FILTER:-$host_side_filter}
for r in $(seq 1 "$runs"); do
  for v in "${variants[@]}"; do
    case $v in
      --*) flag=$v; name=$(echo "${v#--}" | tr -d '=') ;;
      *) flag=--cpu=$v; name=cpu_$v ;;
    esac
    start=$(date +%s.%N)
    "$build/gpu_bench" "$flag" --progress=off --benchmark_filter="$host_side_filter" \
      --benchmark_out="$out/host_side_${name}_run${r}.json" --benchmark_out_format=json >/dev/null \
      2>"$out/host_side_${name}_run${r}.err" || echo "aa: $flag run $r failed: $(tail -1 "$out/host_side_${name}_run${r}.err")" >&2
    echo "aa: $flag run $r $(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN{printf "%.1f s", e-s}')" >&2
  done
done
