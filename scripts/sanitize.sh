#!/usr/bin/env bash
# On a GPU machine: a quick run of every family under compute-sanitizer's memcheck, racecheck, initcheck
# and synccheck. Logs go to OUTDIR/sanitize_<tool>.log; the last line of each says how many errors it
# found. Exits non-zero if any tool found one.
# usage: scripts/sanitize.sh OUTDIR [TOOL...]
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:?usage: sanitize.sh OUTDIR [TOOL...]}
shift
tools=${*:-memcheck racecheck initcheck synccheck}
build=${BUILD_DIR:-$root/build}
mkdir -p "$out"
cs=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
[ -n "$cs" ] || { echo "sanitize: compute-sanitizer not found"; exit 1; }
# Small sizes and one or two points per axis: every family and every code path, not every case.
# One Overlap case: under initcheck its calibration (about a hundred 16 MiB copies and kernels) alone took
# minutes on an H100, and every Overlap case runs the same code.
filter='^(Transfer/|HostBlocking/|Overlap/schedule:depth_first/.*bytes:16777216/|SyncPlacement/|Streams/op:(normalize|small_kernels|large_kernels)/streams:2/|Streams/kind:|Events/|Launch/.*kernels:10/|SmallCopy/.*mem:(pinned|pageable)/|Alloc/|Peer/src:0/dst:1/|PeerLatency/src:0/dst:1/|AllHost/)'
# The tools run side by side, each in its own process on the same GPU: the sanitizers are host-bound, and
# the timings they distort are not what this run is for. Each gets at most SANITIZE_TOOL_SECONDS (default
# 420), so one slow tool cannot starve the others.
limit=${SANITIZE_TOOL_SECONDS:-420}
run_tool() {
  local tool=$1 t0 rc summary
  t0=$(date +%s)
  timeout --signal=INT "$limit" "$cs" --tool "$tool" --error-exitcode 99 --print-limit 20 \
    "$build/gpu_bench" --benchmark_filter="$filter" --sizes=4,64K --benchmark_min_time=0.001 \
    --gate_timeout_ms=600000 >"$out/sanitize_$tool.log" 2>&1
  rc=$?
  summary=$(grep -E "ERROR SUMMARY|LEAK SUMMARY|RACECHECK SUMMARY" "$out/sanitize_$tool.log" | tail -1)
  [ "$rc" -eq 124 ] && summary="timed out after $limit s"
  echo "$tool: exit $rc, ${summary:-no summary line}, $(( $(date +%s) - t0 )) s" >"$out/sanitize_$tool.status"
  return "$rc"
}
pids=()
for tool in $tools; do
  run_tool "$tool" &
  pids+=($!)
done
status=0
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
for tool in $tools; do cat "$out/sanitize_$tool.status"; rm -f "$out/sanitize_$tool.status"; done
exit $status
