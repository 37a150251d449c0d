#!/usr/bin/env bash
# On a GPU machine: build, run the tests, then the measurements an issue asks for. JSON results and logs land
# in OUTDIR; logs are packed into OUTDIR/logs_TAG.tgz (a device machine brings back only a few files).
# usage: scripts/gpu_evidence.sh OUTDIR [STEP...]
#   steps: build tests smoke default bare gate axes families overlap timeline multi sanitize (default: build tests)
# Environment: BUILD_DIR (default build), TAG (a suffix for file names, default the GPU's name).
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:?usage: gpu_evidence.sh OUTDIR [STEP...]}
shift
mkdir -p "$out/logs"
logs=$out/logs
trap 'tar czf "$out/logs_${tag:-run}.tgz" -C "$out" logs && rm -rf "$out/logs"' EXIT
steps=${*:-build tests}
build=${BUILD_DIR:-$root/build}
tag=${TAG:-$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 | head -1 | tr ' ' '_')}
gpus=$(nvidia-smi -L | grep -c '^GPU ')
bench() { "$build/gpu_bench" --progress=on "$@"; }
for step in $steps; do
  t0=$(date +%s)
  case $step in
    build) { nvidia-smi; nvidia-smi -q -d CLOCK,PERFORMANCE | head -60; } >"$logs/nvidia-smi.txt" 2>&1
           # The README's set-up, as a user's machine runs it, with warnings as errors.
           GPU_BENCH_WERROR=ON BUILD_DIR=$build "$root/scripts/setup.sh" >"$logs/setup.log" 2>&1 ||
             { tail -40 "$logs/setup.log"; exit 1; }
           cp "$build/build.log" "$logs/build.log" 2>/dev/null ;;
    tests) (cd "$build" && ctest --output-on-failure) >"$logs/ctest.log" 2>&1; echo "ctest rc=$?"
           grep -E "tests passed|Passed|Failed|Skipped|\*\*\*" "$logs/ctest.log" | tail -20 ;;
    smoke) # every family's smoke cases at 64 KiB, every sample checked
           "$build/gpu_bench" --families | while IFS=$'\t' read -r name scope filter; do echo "$filter"; done |
             paste -sd'|' >"$logs/smoke_filter.txt"
           bench --sizes=64K --verify=each --max_time_per_case=0.05 --benchmark_filter="$(cat "$logs/smoke_filter.txt")" \
             --benchmark_out="$out/smoke_$tag.json" --benchmark_out_format=json >"$logs/smoke.log" 2>&1
           echo "smoke rc=$?"; grep -E "ERROR|error_message|failed|warning" "$logs/smoke.log" | head ;;
    default) bench --samples=on --benchmark_out="$out/default_$tag.json" --benchmark_out_format=json \
               >"$logs/default_$tag.out" 2>"$out/default_${tag}_stderr.log"
             echo "default rc=$?"; tail -3 "$out/default_${tag}_stderr.log" ;;
    bare) python3 "$root/scripts/bare_compare.py" "$out/default_$tag.json" "$build/tests/bare_memcpy" \
            "$out/bare_compare_$tag.json" >"$logs/bare.log" 2>&1; echo "bare rc=$?"; cat "$logs/bare.log" ;;
    gate) bench --preset=gate --benchmark_out="$out/gate_$tag.json" --benchmark_out_format=json \
            >"$logs/gate.out" 2>&1; echo "gate rc=$?"; tail -4 "$logs/gate.out" ;;
    axes) # copy engine against SMs at 256 MiB, batched copies, and copies of 4 and 8 GiB
          bench --benchmark_filter='^(Transfer/dir:(h2d|d2h|bidir|d2d)/mem:(pinned|registered|mapped|device)/(engine:(ce|sm)/)?(cache:cold/)?bytes:268435456/|Batch/api:(loop|batch|kernel)/copies:(1|64|1024)/bytes:(4|4096|65536)/)' \
            --benchmark_out="$out/axes_$tag.json" --benchmark_out_format=json >"$logs/axes.log" 2>&1
          echo "axes rc=$?"; grep -E "error_message|skipped|ERROR" "$logs/axes.log" | head -5
          bench --sizes=4G,8G --benchmark_filter='^Transfer/dir:(h2d|d2h)/mem:pinned/bytes:' \
            --benchmark_out="$out/large_$tag.json" --benchmark_out_format=json >"$logs/large.log" 2>&1
          echo "large rc=$?"; tail -3 "$logs/large.log" ;;
    families) bench --benchmark_filter='^(SyncPlacement|Streams|Events|Launch|SmallCopy|Alloc)/' \
                --benchmark_repetitions=5 --benchmark_out="$out/families_reps5_$tag.json" --benchmark_out_format=json \
                >"$logs/families.log" 2>&1; echo "families rc=$?" ;;
    overlap) bench --benchmark_filter='^(Overlap|HostBlocking)/' --benchmark_out="$out/overlap_$tag.json" \
               --benchmark_out_format=json >"$logs/overlap.log" 2>&1; echo "overlap rc=$?" ;;
    timeline) bench --timeline="$out/timeline_$tag.json" \
                --benchmark_filter='^Overlap/schedule:(serial|depth_first|breadth_first)/mem:pinned/streams:(1|8)/bytes:536870912/work:(1|64)/sync:end/' \
                >"$logs/timeline.log" 2>&1; echo "timeline rc=$?" ;;
    multi) bench --device=all --benchmark_filter='^(Peer|PeerPattern|PeerLatency|AllHost)/' --benchmark_repetitions=5 \
             --benchmark_out="$out/peer_${tag}x$gpus.json" --benchmark_out_format=json >"$logs/multi.log" 2>&1
           echo "multi rc=$?" ;;
    sanitize) "$root/scripts/sanitize.sh" "$out"; echo "sanitize rc=$?" ;;
    *) echo "unknown step $step" ;;
  esac
  echo "$step: $(( $(date +%s) - t0 )) s"
done
