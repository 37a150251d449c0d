#!/usr/bin/env bash
# On a GPU machine: build, run the tests, then the measurements an issue asks for. JSON results and logs land
# in OUTDIR; logs are packed into OUTDIR/logs_TAG.tgz (a device machine brings back only a few files).
# usage: scripts/gpu_evidence.sh OUTDIR [STEP...]
#   steps: build tests loaded planted offline log again drift broad seed planted_bound smoke default bare gate
#          axes families overlap timeline multi sanitize
#   (default: build tests)
#   loaded   the GPU tests again beside tests/gpu/link_load, which loads the host link in bursts: a sound
#            build must fail none of them (a test too noisy to judge skips, naming why)
#   planted  a second build with the planted defect (docs/testing.md), its rate tests on a quiet machine and
#            beside link_load: each run must fail; the step exits non-zero where one passes
#   multi    on a node of two GPUs or more (docs/multi_gpu.md, "References"), in parts (MULTI_PARTS, default all):
#            facts    nvidia-smi topo -m and nvlink -s, and gpu_bench's NVLink facts checked against them
#                     (tests/gpu/peer_check.py --facts; gpu_peer checks them too, against nvidia-smi live)
#            patterns PeerPattern beside tests/gpu/bare_all_to_all, NCCL's all-to-all through torch
#                     (tests/gpu/nccl_all_to_all.py) and nvbandwidth's one_to_all / all_to_one / pair copies
#            latency  Latency/mem:peer of every ordered pair at 1 and 2 MiB stride between NVB_LATENCY_RUNS
#                     (default 3) runs of nvbandwidth's device_to_device_latency_sm, judged within 3%
#            hostbidir_reads  AllHost/dir:bidir and every ordered pair's Peer reads (access:read, copy engines and
#                     SMs) at 256 MiB beside nvbandwidth's host_to_all / all_to_host bidirectional and
#                     device_to_device_memcpy_read_{ce,sm} (-b 256), judged within 3%
#                     (tests/gpu/hostbidir_reads_references.py); not in the default parts
#            peer     the gpu_peer test GPU_PEER_RUNS (default 5) times
#            default  a default --device=all run, its wall time
#            startup  a process's start on the first 1, 2, 3, 4 and 8 GPUs (as many as there are): S(G) three times,
#                     one small case's gpu_bench.start_s three times, and what each child round's process of
#                     two three-round runs of it cost beyond the case, and AllHost's four cases in each process of
#                     two three-round runs (multi_TAGxG_startup.log)
#            nvbandwidth is built from .ref/ (.ref/build.sh: see docs/multi_gpu.md) where it is there, else left
#            out and the latency judgement skipped. Files: multi_TAGxG_{patterns,latency,hostbidir_reads}.json
#            (gpu_bench), multi_TAGxG_references.json and _summary.txt (tests/gpu/peer_references.py),
#            multi_TAGxG_hostbidir_reads_summary.txt, default_TAGxG.json
#   offline  set-up where no package index answers (docs/setup.md): setup.sh with no wheels (it builds and says
#            in one line what it could not install), then with GPU_BENCH_WHEELS=$OFFLINE_WHEELS (default
#            .wheels: the wheels the machine lacks, carried along), then the gate preset, gpu-bench-gate and
#            gpu-bench-export on its file
#   log      the README's run as a nightly job makes it, `./scripts/run.sh > run.out 2> run.err`: how many
#            times run.err holds Google Benchmark's context (once) and its progress lines; its default run's
#            JSON, gzip-compressed, is the first of an A/A pair
#   again    a second default run, the A/A pair's other (default_again_TAG.json.gz)
#   drift    one-round processes of the large copies over the host link (bidirectional pinned and registered
#            64 MiB to 1 GiB, one-way pinned 1 GiB), back to back for DRIFT_S (default 480) seconds, packed as
#            drift_TAG.tar.xz: `gpu-bench-aa drift` (with --window) reads how the link moved over those minutes
#            (docs/methodology.md, "The host link over minutes")
#   broad    BROAD_RUNS (default 6) runs of gpu-bench-aa's broad subset (gpu-bench-aa run --broad), packed
#            as broad_TAG.tgz: the nights gpu-bench-history replay checks
#   seed     Overlap's speedups beside the seed demo's (scripts/seed_compare.py), on this call's default run
#   planted_bound  a build with the planted defects, whose gpu_overlap must fail under
#            GPU_BENCH_PLANT=overlap_bound (the bound without its link line)
# Environment: BUILD_DIR (default build), TAG (a suffix for file names, default the GPU's name), PLANTED_TESTS
# (the tests the planted defect must fail, a ctest -R pattern; default gpu_bare_parity|gpu_overlap),
# MULTI_PARTS, NVB_LATENCY_RUNS, GPU_PEER_RUNS (the multi step's), DRIFT_S (the drift step's).
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
nvb=""
# nvbandwidth from the ignored .ref/ (docs/multi_gpu.md), built before anything is measured (a compiler beside
# a measurement would hold the host's CPUs); nvb stays "" where .ref/ is absent or the build fails.
build_nvbandwidth() {
  [ -z "$nvb" ] || return 0
  if [ ! -x "$root/.ref/build.sh" ]; then
    echo "nvbandwidth: no .ref/build.sh: left out (docs/multi_gpu.md says how to prepare .ref/)"
  elif "$root/.ref/build.sh" "$build/nvbandwidth" >"$logs/nvbandwidth_build.log" 2>&1 &&
       [ -x "$build/nvbandwidth/nvbandwidth" ]; then
    nvb=$build/nvbandwidth/nvbandwidth
  else
    echo "nvbandwidth: did not build: $(tail -3 "$logs/nvbandwidth_build.log")"
  fi
}
# nvbandwidth -j with the rest as its arguments into $logs/$1.json.
nvbandwidth_json() {
  local name=$1
  shift
  [ -n "$nvb" ] && "$nvb" -j "$@" >"$logs/$name.json" 2>"$logs/$name.err"
}
multi_step() {
  local parts=${MULTI_PARTS:-facts startup patterns latency default peer} part t base=$out/multi_${tag}x$gpus
  local peer_runs=${GPU_PEER_RUNS:-5} nvb_runs=${NVB_LATENCY_RUNS:-3} passed=0 failed=0 skipped=0 wall=nan
  # What is left of MULTI_BUDGET_S (default 540) decides whether the default run (up to 330 s) and each gpu_peer
  # run (up to 60 s) start, so that the step ends, and its logs are packed, within a device's 10 minutes.
  local deadline=$(( $(date +%s) + ${MULTI_BUDGET_S:-540} ))
  local -a judge=()
  [ "$gpus" -ge 2 ] || { echo "multi: $gpus GPU(s); the step needs two or more"; return 1; }
  case " $parts " in *" patterns "* | *" latency "* | *" hostbidir_reads "*) build_nvbandwidth ;; esac
  for part in $parts; do
    t=$(date +%s)
    case $part in
      facts) nvidia-smi topo -m >"$logs/topo.txt" 2>&1; nvidia-smi nvlink -s >"$logs/nvlink_s.txt" 2>&1
             # The NVLink facts gpu_bench reads from NVML (the context of one small case on every GPU),
             # checked against those two answers of nvidia-smi's: tests/gpu/peer_check.py --facts.
             bench --device=all --rounds=1 --benchmark_filter='^Transfer/dir:h2d/mem:pinned/bytes:1048576/' \
               --benchmark_out="$logs/facts_run.json" --benchmark_out_format=json >"$logs/facts_run.log" 2>&1
             python3 "$root/tests/gpu/peer_check.py" --facts "$logs/facts_run.json" "$logs/topo.txt" \
               "$logs/nvlink_s.txt" >"$logs/nvlink_facts.log" 2>&1
             echo "facts: peer_check.py --facts rc=$?: $(tail -1 "$logs/nvlink_facts.log")" ;;
      patterns) # --full adds each pattern released at one instant (release:together) beside the default.
                bench --device=all --full \
                  --benchmark_filter='^(PeerPattern/|Peer/src:0/dst:1/peer_access:on/dir:(oneway|bidir)/(engine:sm/)?bytes:268435456/)' \
                  --benchmark_out="${base}_patterns.json" --benchmark_out_format=json >"$logs/patterns.log" 2>&1
                echo "patterns: gpu_bench rc=$?"
                # Each pattern as gpu_bench samples it (one copy per pair between events) and five back to back.
                : >"$logs/bare_all_to_all.jsonl"
                for p in all_pairs one_to_all all_to_one; do
                  for it in 1 5; do
                    "$build/tests/bare_all_to_all" 268435456 "$it" 9 sm,ce,ce_by_gpu "$p" >>"$logs/bare_all_to_all.jsonl" \
                      2>>"$logs/bare_all_to_all.err"
                    echo "patterns: bare_all_to_all $p x$it rc=$?"
                  done
                done
                NCCL_NVLS_ENABLE=0 python3 "$root/tests/gpu/nccl_all_to_all.py" 268435456 >"$logs/nccl_all_to_all.jsonl" \
                  2>"$logs/nccl_all_to_all.err"
                echo "patterns: nccl_all_to_all rc=$? ($(grep -h '^skipped' "$logs/nccl_all_to_all.jsonl"))"
                nvbandwidth_json nvb_patterns -b 256 -t device_to_device_memcpy_write_ce \
                  device_to_device_bidirectional_memcpy_write_ce one_to_all_write_ce all_to_one_write_ce \
                  device_to_device_memcpy_write_sm one_to_all_write_sm all_to_one_write_sm
                echo "patterns: nvbandwidth rc=$?"
                judge+=(--patterns "${base}_patterns.json" --bare "$logs/bare_all_to_all.jsonl"
                        --nccl "$logs/nccl_all_to_all.jsonl" --nvb-patterns "$logs/nvb_patterns.json") ;;
      latency) # Every ordered pair (--full), at 1 MiB and nvbandwidth's own 2 MiB, between its runs.
               nvbandwidth_json nvb_latency_1 -t device_to_device_latency_sm
               bench --device=all --full --sizes=1M,2M --benchmark_filter='^Latency/mem:peer/peer:[0-9]+/pattern:stride/' \
                 --benchmark_out="${base}_latency.json" --benchmark_out_format=json >"$logs/latency.log" 2>&1
               echo "latency: gpu_bench rc=$?"
               for k in $(seq 2 "$nvb_runs"); do nvbandwidth_json "nvb_latency_$k" -t device_to_device_latency_sm; done
               judge+=(--latency "${base}_latency.json" --nvb-latency)
               for k in $(seq 1 "$nvb_runs"); do
                 [ -s "$logs/nvb_latency_$k.json" ] && judge+=("$logs/nvb_latency_$k.json")
               done ;;
      hostbidir_reads) # Every ordered pair's reads (--full) at nvbandwidth's size, then nvbandwidth, then the judge.
               bench --device=all --full --sizes=256M \
                 --benchmark_filter='^(AllHost/dir:bidir/|Peer/src:[0-9]+/dst:[0-9]+/peer_access:on/dir:oneway/access:read/)' \
                 --benchmark_out="${base}_hostbidir_reads.json" --benchmark_out_format=json >"$logs/hostbidir_reads.log" 2>&1
               echo "hostbidir_reads: gpu_bench rc=$?"
               nvbandwidth_json nvb_hostbidir_reads -b 256 -t host_to_all_bidirectional_memcpy_ce \
                 all_to_host_bidirectional_memcpy_ce device_to_device_memcpy_read_ce device_to_device_memcpy_read_sm
               echo "hostbidir_reads: nvbandwidth rc=$?"
               (cd "$root/tests/gpu" && python3 hostbidir_reads_references.py --run "${base}_hostbidir_reads.json" \
                 --nvb "$logs/nvb_hostbidir_reads.json" --out "$logs/hostbidir_reads_references.json" \
                 --summary "${base}_hostbidir_reads_summary.txt")
               echo "hostbidir_reads: judge rc=$? (0: within 3%; 1: beyond, or a case missing; 77: no nvbandwidth)" ;;
      peer) for k in $(seq 1 "$peer_runs"); do
              [ $(( deadline - $(date +%s) )) -ge 60 ] || { echo "peer: out of MULTI_BUDGET_S after $((k - 1)) runs"; break; }
              if (cd "$build" && ctest --output-on-failure -R '^gpu_peer$') >"$logs/gpu_peer_$k.log" 2>&1; then
                if grep -q "Skipped\|No tests were found" "$logs/gpu_peer_$k.log"; then skipped=$((skipped + 1))
                else passed=$((passed + 1)); fi
              else failed=$((failed + 1)); fi
              cp "$build/Testing/Temporary/LastTest.log" "$logs/gpu_peer_${k}_all.log" 2>/dev/null
            done
            echo "peer: gpu_peer $peer_runs runs: $passed passed, $failed failed, $skipped skipped"
            judge+=(--gpu-peer "$passed,$failed,$skipped") ;;
      default) local t0 t1
               [ $(( deadline - $(date +%s) )) -ge 330 ] || { echo "default: out of MULTI_BUDGET_S: not run"; continue; }
               t0=$(date +%s.%N)
               bench --device=all --benchmark_out="$out/default_${tag}x$gpus.json" --benchmark_out_format=json \
                 >"$logs/default_${tag}x$gpus.out" 2>"$logs/default_${tag}x${gpus}_stderr.log"
               echo "default: rc=$?"
               t1=$(date +%s.%N)
               wall=$(python3 -c "print(f'{$t1 - $t0:.1f}')")
               echo "default: wall $wall s"; tail -2 "$logs/default_${tag}x${gpus}_stderr.log"
               judge+=(--default "$out/default_${tag}x$gpus.json" --default-wall "$wall") ;;
      startup) # A process's start and end on the first G GPUs (G = 1, 2, 3, 4, 8, as many as there are):
               # S(G), three that select no case (each exits 1 saying so) with no other process on the GPUs;
               # three of one small case, whose gpu_bench.start_s says where the start went; and two runs of
               # that case in three rounds, whose round_processes give what each child round's process costs
               # beyond its case while the run's own process holds the GPUs, as in every default run
               # (docs/multi_gpu.md, "What a node of N GPUs costs")
               local g k visible one='^Transfer/dir:h2d/mem:pinned/bytes:1048576/'
               for g in 1 2 3 4 8; do
                 [ "$g" -le "$gpus" ] || break
                 visible=$(seq -s, 0 $((g - 1)))
                 for k in 1 2 3; do
                   CUDA_VISIBLE_DEVICES=$visible /usr/bin/time -f "S G=$g run $k: %e s" "$build/gpu_bench" --rounds=1 \
                     --progress=off --benchmark_filter='^none$' >/dev/null 2>>"$logs/startup_raw.log"
                 done
                 for k in 1 2 3; do
                   CUDA_VISIBLE_DEVICES=$visible /usr/bin/time -o "$logs/startup_time.txt" -f "%e" "$build/gpu_bench" \
                     --rounds=1 --progress=off --benchmark_filter="$one" --benchmark_out="$logs/startup_one.json" \
                     --benchmark_out_format=json >/dev/null 2>&1
                   python3 - "$logs/startup_one.json" "$g" "$k" "$(cat "$logs/startup_time.txt")" >>"$logs/startup_raw.log" 2>&1 <<'PY'
import json, sys
path, g, k, wall = sys.argv[1:]
c = json.load(open(path))["context"]
print(f"S_one G={g} run {k}: {wall} s, elapsed_s {float(c['gpu_bench.elapsed_s']):.2f}, "
      f"start_s {c.get('gpu_bench.start_s', 'not written')}")
PY
                 done
                 # Each child round's process, of the small case and of AllHost's four cases (the one family
                 # whose set-up grows with G in every round's process; link-bound, so five rounds): its cases'
                 # wall_s and the rest, two three-round runs of each.
                 for what in one allhost; do
                   for k in 1 2; do
                     CUDA_VISIBLE_DEVICES=$visible "$build/gpu_bench" --rounds=3 --progress=off \
                       --benchmark_filter="$([ "$what" = one ] && echo "$one" || echo '^AllHost/dir:(h2d|d2h)/')" \
                       --benchmark_out="$logs/startup_rounds.json" --benchmark_out_format=json >/dev/null 2>&1
                     python3 - "$logs/startup_rounds.json" "$what" "$g" "$k" >>"$logs/startup_raw.log" 2>&1 <<'PY'
import json, sys
path, what, g, k = sys.argv[1:]
d = json.load(open(path))
procs = []
for p in d["context"].get("gpu_bench.round_processes", "").split():
    label, figures = p.split("=")
    wall, cases = map(float, figures.split("/")[:2])
    procs.append(f"{label} {cases:.2f}+{wall - cases:.2f}")
last = sum(float(b.get("wall_s", 0)) for b in d["benchmarks"])
print(f"child G={g} {what} run {k}: each child process's cases' wall_s + the rest, s: {', '.join(procs)}; "
      f"the last round's cases {last:.2f}")
PY
                   done
                 done
               done
               grep -v "no case matches\|non-zero status" "$logs/startup_raw.log" | tee "${base}_startup.log" ;;
      *) echo "multi: unknown part $part" ;;
    esac
    echo "multi $part: $(( $(date +%s) - t )) s"
  done
  # The tables and the judgement: Latency/mem:peer within 3% of nvbandwidth (exit 1 beyond, 77 too noisy or
  # without nvbandwidth), the rest shown beside.
  if [ ${#judge[@]} -gt 0 ]; then
    (cd "$root/tests/gpu" && python3 peer_references.py --gpus "$gpus" "${judge[@]}" --out "${base}_references.json" \
      --summary "${base}_summary.txt")
    echo "multi: references rc=$? (0: within 3%; 1: beyond, or a figure missing; 77: too noisy, or no nvbandwidth)"
  fi
}
trap 'stop_load; tar czf "$out/logs_${tag:-run}.tgz" -C "$out" logs && rm -rf "$out/logs"' EXIT
for step in $steps; do
  t0=$(date +%s)
  case $step in
    build) { nvidia-smi; nvidia-smi -q -d CLOCK,PERFORMANCE | head -60; } >"$logs/nvidia-smi.txt" 2>&1
           # The README's set-up, as a user's machine runs it, with warnings as errors.
           GPU_BENCH_WERROR=ON BUILD_DIR=$build "$root/scripts/setup.sh" >"$logs/setup.log" 2>&1 ||
             { tail -40 "$logs/setup.log"; exit 1; }
           cp "$build/build.log" "$logs/build.log" 2>/dev/null
           build_nvbandwidth ;;
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
    multi) multi_step ;;
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
         mv "$out/log_run/gpu_bench.json" "$out/default_log_$tag.json" 2>/dev/null && gzip -f "$out/default_log_$tag.json"
         rm -rf "$out/log_run" ;;
    again) # a second default run right after the log step's: the A/A pair gpu-bench-aa report judges
           "$build/gpu_bench" --progress=on --benchmark_out="$out/default_again_$tag.json" --benchmark_out_format=json \
             >"$logs/default_again_$tag.out" 2>"$logs/default_again_$tag.err"
           echo "again rc=$?"; tail -n 2 "$logs/default_again_$tag.err"; gzip -f "$out/default_again_$tag.json" ;;
    drift) series=$out/drift_$tag; mkdir -p "$series"; end=$(($(date +%s) + ${DRIFT_S:-480})); n=0
           link='^Transfer/dir:(bidir/mem:(pinned|registered)/bytes:(67108864|268435456|1073741824)|(h2d|d2h)/mem:pinned/bytes:1073741824)/'
           while [ "$(date +%s)" -lt "$end" ]; do
             n=$((n + 1))
             "$build/gpu_bench" --rounds=1 --link_rounds=1 --progress=off --benchmark_filter="$link" \
               --benchmark_out="$series/run_$(printf %03d $n).json" --benchmark_out_format=json \
               >/dev/null 2>>"$series/stderr.log" || echo "drift: process $n exited $?"
           done
           echo "drift: $n processes"; tar -C "$out" -cJf "$out/drift_$tag.tar.xz" "drift_$tag" && rm -rf "$series" ;;
    broad) # BROAD_RUNS (default 6) A/A runs of gpu-bench-aa's broad subset, for the history check's replay
           # (docs/tools.md); packed into one archive, as a device machine brings back only a few files
           (cd "$root/tools" && PYTHONPATH=. python3 -c "import sys; from gpu_bench_tools.cli.aa import main; sys.exit(main())" \
              run --broad --runs "${BROAD_RUNS:-6}" --exe "$build/gpu_bench" --out "$out/broad_$tag" -- --progress=off) \
             >"$logs/broad_$tag.log" 2>&1
           echo "broad rc=$?"; tail -n "${BROAD_RUNS:-6}" "$logs/broad_$tag.log"
           tar czf "$out/broad_$tag.tgz" -C "$out" "broad_$tag" && rm -rf "${out:?}/broad_$tag" ;;
    seed) # Overlap's speedups beside the seed demo's, on this call's default run (the log step's, else again's)
          for f in "$out/default_log_$tag.json.gz" "$out/default_again_$tag.json.gz"; do [ -f "$f" ] && break; done
          gunzip -c "$f" >"$logs/seed_input.json"
          (cd "$root" && python3 scripts/seed_compare.py "$logs/seed_input.json" "$build/tests/seed_overlap" \
            "$out/seed_compare_$tag.json") >"$logs/seed_compare.log" 2>&1
          echo "seed rc=$?"; tail -n 8 "$logs/seed_compare.log"; rm -f "$logs/seed_input.json" ;;
    planted_bound) # gpu_overlap must fail where the bound leaves out its link line (docs/testing.md)
          planted_build=$build-planted
          cache() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt"; }
          { cmake -S "$root" -B "$planted_build" -DCMAKE_BUILD_TYPE=Release -DGPU_BENCH_PLANTED_DEFECTS=ON \
              -DGPU_BENCH_NVML_INCLUDE="$(cache GPU_BENCH_NVML_INCLUDE)" -DPython3_EXECUTABLE="$(cache Python3_EXECUTABLE)" &&
              cmake --build "$planted_build" -j "$(nproc)" --target gpu_bench; } >"$logs/setup_planted_bound.log" 2>&1 ||
            { tail -20 "$logs/setup_planted_bound.log"; exit 1; }
          GPU_BENCH_PLANT=overlap_bound ctest_logged "$planted_build" ctest_planted_bound -R '^gpu_overlap$' &&
            echo "planted bound NOT caught" || echo "planted bound caught: gpu_overlap failed as it must" ;;
    *) echo "unknown step $step" ;;
  esac
  echo "$step: $(( $(date +%s) - t0 )) s"
done
