#!/usr/bin/env bash
# On a GPU machine: build, run every test, then the measurements an issue asks for. JSON results land in
# OUTDIR; every log goes into OUTDIR/logs.tgz (the device tool brings back only a few files).
# usage: scripts/gpu_evidence.sh OUTDIR [STEP...]
#   steps: tests matrix matrix5 parity overlap timeline families cv multi sanitize (default: all)
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:?usage: gpu_evidence.sh OUTDIR [STEP...]}
shift
mkdir -p "$out/logs"
results=$out
out=$out/logs
trap 'tar czf "$results/logs.tgz" -C "$results" logs && rm -rf "$results/logs"' EXIT
steps=${*:-tests matrix matrix5 parity overlap timeline families cv multi sanitize}
build=${BUILD_DIR:-$root/build}
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 | head -1 | tr ' ' '_')
gpus=$(nvidia-smi -L | grep -c '^GPU ')
{ nvidia-smi; nvidia-smi -q -d CLOCK,PERFORMANCE | head -60; } >"$out/nvidia-smi.txt" 2>&1
t0=$(date +%s)
GPU_BENCH_WERROR=ON "$root/scripts/setup.sh" >"$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
echo "build: $(( $(date +%s) - t0 )) s"
for step in $steps; do
  t0=$(date +%s)
  case $step in
    tests) (cd "$build" && ctest --output-on-failure) >"$out/ctest.log" 2>&1; echo "ctest rc=$?"; tail -15 "$out/ctest.log" ;;
    matrix) "$build/gpu_bench" --benchmark_filter='^Transfer/' --benchmark_out="$results/transfer_$gpu.json" \
              --benchmark_out_format=json >"$out/matrix.log" 2>&1; echo "matrix rc=$?"; grep -E "ERROR|failed" "$out/matrix.log" | head ;;
    matrix5) "$build/gpu_bench" --benchmark_filter='^Transfer/' --benchmark_repetitions=5 \
              --benchmark_out="$results/transfer_reps5_$gpu.json" --benchmark_out_format=json >"$out/matrix5.log" 2>&1
             echo "matrix5 rc=$?" ;;
    parity) python3 "$root/tests/gpu/bare_parity.py" "$build/gpu_bench" "$build/tests/bare_memcpy" "$results/parity_$gpu.json" \
              >"$out/parity.log" 2>&1; echo "parity rc=$?"; tail -8 "$out/parity.log" ;;
    overlap) "$build/gpu_bench" --benchmark_filter='^(Overlap|HostBlocking)/' --benchmark_repetitions=${OVERLAP_REPS:-3} \
              --benchmark_out="$results/overlap_reps${OVERLAP_REPS:-3}_$gpu.json" --benchmark_out_format=json >"$out/overlap.log" 2>&1
             echo "overlap rc=$?"; grep -E "ERROR|failed" "$out/overlap.log" | head ;;
    timeline) "$build/gpu_bench" --timeline="$results/timeline_$gpu.json" \
              --benchmark_filter='^Overlap/schedule:(serial|depth_first|breadth_first)/mem:pinned/streams:(1|8)/bytes:536870912/work:(1|64)/sync:end/' \
              >"$out/timeline.log" 2>&1; echo "timeline rc=$?" ;;
    families) "$build/gpu_bench" --benchmark_filter='^(SyncPlacement|Streams|Events|Launch|SmallCopy|Alloc)/' \
              --benchmark_repetitions=5 --benchmark_out="$results/families_reps5_$gpu.json" --benchmark_out_format=json \
              >"$out/families.log" 2>&1; echo "families rc=$?"; grep -E "ERROR|failed" "$out/families.log" | head ;;
    cv) "$build/gpu_bench" --benchmark_filter='^Transfer/' --sizes=1M,4M,16M,64M,256M,1G --benchmark_repetitions=5 \
              --benchmark_out="$results/transfer_cv_$gpu.json" --benchmark_out_format=json >"$out/cv.log" 2>&1
        echo "cv rc=$?" ;;
    # Peer, PeerLatency and AllHost over every GPU, 5 repetitions. On 4 GPUs: 12 ordered pairs x on/off x
    # 3 sizes oneway + 6 pairs x on/off x 3 sizes bidir = 108 Peer, 24 PeerLatency, 2 AllHost: 134 cases, about
    # 20 s a repetition where the pairs share NVLink (the 1 MiB and 4 B copies with peer access run ~10^4
    # iterations of ~25 us wall each), so about 2 minutes. Then the bare loop for every ordered pair.
    multi) "$build/gpu_bench" --device=all --benchmark_filter='^(Peer|PeerLatency|AllHost)/' --benchmark_repetitions=5 \
              --benchmark_out="$results/peer_${gpu}x$gpus.json" --benchmark_out_format=json >"$out/multi.log" 2>&1
           echo "multi rc=$?"; grep -E "ERROR|failed" "$out/multi.log" | head
           for s in $(seq 0 $((gpus - 1))); do for d in $(seq 0 $((gpus - 1))); do
             [ "$s" = "$d" ] || "$build/tests/bare_peer" "$s" "$d" $((256 << 20)) 20 >>"$out/bare_peer.log" 2>&1
           done; done ;;
    sanitize) "$root/scripts/sanitize.sh" "$results"; echo "sanitize rc=$?" ;;
    *) echo "unknown step $step" ;;
  esac
  echo "$step: $(( $(date +%s) - t0 )) s"
done
