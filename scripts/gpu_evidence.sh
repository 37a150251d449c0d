#!/usr/bin/env bash
# On a GPU machine: build, run the tests, then the measurements an issue asks for. JSON results and logs land
# in OUTDIR; logs are packed into OUTDIR/logs_TAG.tgz (a device machine brings back only a few files).
# usage: scripts/gpu_evidence.sh OUTDIR [STEP...]
#   steps: build tests loaded planted offline log smoke default bare gate axes families overlap timeline multi
#          sanitize
#   (default: build tests)
#   loaded   the GPU tests again beside tests/gpu/link_load, which loads the host link in bursts: a sound
#            build must fail none of them (a test too noisy to judge skips, naming why)
#   planted  a second build with the planted defect (docs/testing.md), its rate tests on a quiet machine and
#            beside link_load: each run must fail; the step exits non-zero where one passes
#   offline  set-up where no package index answers (docs/setup.md): setup.sh with no wheels (it builds and says
#            in one line what it could not install), then with GPU_BENCH_WHEELS=$OFFLINE_WHEELS (default
#            .wheels: the wheels the machine lacks, carried along), then the gate preset, gpu-bench-gate and
#            gpu-bench-export on its file
#   log      the README's run as a nightly job makes it, `./scripts/run.sh > run.out 2> run.err`: how many
#            times run.err holds Google Benchmark's context (once) and its progress lines
# Environment: BUILD_DIR (default build), TAG (a suffix for file names, default the GPU's name), PLANTED_TESTS
# (the tests the planted defect must fail, a ctest -R pattern; default gpu_bare_parity|gpu_overlap).
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:?usage: gpu_evidence.sh OUTDIR [STEP...]}
shift
mkdir -p "$out/logs"
logs=$out/logs
steps=${*:-build tests}
build=${BUILD_DIR:-$root/build}
tag=${TAG:-$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 | head -1 | tr ' ' '_')}
gpus=$(nvidia-smi -L | grep -c '^GPU ')
bench() { "$build/gpu_bench" --progress=on "$@"; }
load_pid=""
start_load() { "$build/tests/link_load" 1200 >"$logs/link_load_$1.json" 2>&1 & load_pid=$!; }
stop_load() { kill "$load_pid" 2>/dev/null; wait "$load_pid" 2>/dev/null; load_pid=""; }
# ctest in build folder $1 with the rest as its arguments, its whole log (skipped tests' reasons included)
# kept as $logs/LOGNAME; prints the summary and each skip's reason.
ctest_logged() {
  local dir=$1 name=$2 rc
  shift 2
  (cd "$dir" && ctest --output-on-failure "$@") >"$logs/$name.log" 2>&1
  rc=$?
  cp "$dir/Testing/Temporary/LastTest.log" "$logs/${name}_all.log" 2>/dev/null
  echo "$name: ctest rc=$rc"
  grep -E "tests passed|\*\*\*|Failed|Not Run" "$logs/$name.log" | tail -12
  grep -h "^skipped:" "$logs/${name}_all.log" 2>/dev/null
  return $rc
}
trap 'stop_load; tar czf "$out/logs_${tag:-run}.tgz" -C "$out" logs && rm -rf "$out/logs"' EXIT
for step in $steps; do
  t0=$(date +%s)
  case $step in
    build) { nvidia-smi; nvidia-smi -q -d CLOCK,PERFORMANCE | head -60; } >"$logs/nvidia-smi.txt" 2>&1
           # The README's set-up, as a user's machine runs it, with warnings as errors.
           GPU_BENCH_WERROR=ON BUILD_DIR=$build "$root/scripts/setup.sh" >"$logs/setup.log" 2>&1 ||
             { tail -40 "$logs/setup.log"; exit 1; }
           cp "$build/build.log" "$logs/build.log" 2>/dev/null ;;
    tests) ctest_logged "$build" ctest ;;
    loaded) start_load gpu_tests; ctest_logged "$build" ctest_loaded -L gpu; stop_load
            echo "link_load: $(cat "$logs/link_load_gpu_tests.json")" ;;
    planted) planted_build=$build-planted
             BUILD_DIR=$planted_build CMAKE_ARGS="${CMAKE_ARGS:-} -DGPU_BENCH_PLANTED_DEFECTS=ON" \
               "$root/scripts/setup.sh" >"$logs/setup_planted.log" 2>&1 || { tail -5 "$logs/setup_planted.log"; exit 1; }
             caught=0
             for machine in quiet loaded; do
               [ "$machine" = loaded ] && start_load planted
               GPU_BENCH_PLANT=extra_copy ctest_logged "$planted_build" "ctest_planted_$machine" \
                 -R "${PLANTED_TESTS:-gpu_bare_parity|gpu_overlap}" && echo "planted defect NOT caught ($machine)" ||
                 caught=$((caught + 1))
               stop_load
             done
             echo "planted defect caught on $caught of 2 machines' runs"; [ "$caught" = 2 ] || exit 1 ;;
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
    offline) wheels=${OFFLINE_WHEELS:-$root/.wheels}
             started=$SECONDS
             env -u GPU_BENCH_WHEELS BUILD_DIR="$build" "$root/scripts/setup.sh" >"$logs/offline_no_wheels.log" 2>&1
             echo "setup.sh, no wheels: rc=$? in $((SECONDS - started)) s; its lines:"; grep '^setup:' "$logs/offline_no_wheels.log"
             echo "wheels carried: $(ls "$wheels" 2>/dev/null | tr '\n' ' ')($(du -sh "$wheels" 2>/dev/null | cut -f1))"
             started=$SECONDS
             GPU_BENCH_WHEELS=$wheels BUILD_DIR="$build" "$root/scripts/setup.sh" >"$logs/offline_wheels.log" 2>&1
             echo "setup.sh, GPU_BENCH_WHEELS: rc=$? in $((SECONDS - started)) s; its lines:"; grep '^setup:' "$logs/offline_wheels.log"
             bin=$(dirname "$(cat "$build/python")")
             "$build/gpu_bench" --preset=gate --benchmark_out="$out/gate_offline_$tag.json" --benchmark_out_format=json \
               >"$logs/offline_gate.out" 2>&1; echo "gate preset rc=$?"
             "$bin/gpu-bench-gate" "$out/gate_offline_$tag.json"; echo "gpu-bench-gate rc=$?"
             mkdir -p "$logs/textfile"
             "$bin/gpu-bench-export" --format prometheus --out "$logs/textfile" "$out/gate_offline_$tag.json"
             echo "gpu-bench-export rc=$?: $(cat "$logs"/textfile/*.prom 2>/dev/null | grep -vc '^#') samples" ;;
    log) # run.sh from a folder of its own, as a nightly job runs it; its set-up's lines are in run.err too
         mkdir -p "$out/log_run"
         (cd "$out/log_run" && "$root/scripts/run.sh" >"$logs/run_$tag.out" 2>"$out/run_$tag.err")
         echo "run.sh rc=$?; run.err: $(wc -l <"$out/run_$tag.err") lines, Google Benchmark's context" \
           "$(grep -c '^Run on (' "$out/run_$tag.err") time(s), $(grep -c '^gpu_bench: \[' "$out/run_$tag.err") progress lines"
         grep -v '^gpu_bench: \[' "$out/run_$tag.err" | grep '^gpu_bench:\|^setup:'; grep '^gpu_bench: \[' "$out/run_$tag.err" | tail -n 4
         mv "$out/log_run/gpu_bench.json" "$out/default_log_$tag.json" 2>/dev/null; rm -rf "$out/log_run" ;;
    *) echo "unknown step $step" ;;
  esac
  echo "$step: $(( $(date +%s) - t0 )) s"
done
