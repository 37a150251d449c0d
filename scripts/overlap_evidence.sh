#!/usr/bin/env bash
# On a GPU machine: the evidence for Overlap's bound (docs/families.md, Overlap). Builds gpu_bench as the
# README does (warnings as errors) and a second gpu_bench with the planted defects (docs/testing.md), then:
#   gpu_overlap on the real build, which must pass, and on the planted one under
#     GPU_BENCH_PLANT=overlap_bound (a bound without its link line), which must fail;
#   the default Overlap cases in three rounds with --timeline (each case's pipeline, chained stage and
#     bidirectional stage), and what the bound's checks say of them;
#   the seed demo's speedups beside Overlap's at 4, 8, 16 and 32 streams (scripts/seed_compare.py).
# JSON and the timeline land in OUTDIR, every log packed into OUTDIR/logs_TAG.tgz. Exits non-zero where
# any of those steps says so.
# usage: scripts/overlap_evidence.sh OUTDIR
# Environment: BUILD_DIR (default build; the planted build goes to BUILD_DIR-planted), TAG (a suffix for
# file names, default the GPU's name).
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:?usage: overlap_evidence.sh OUTDIR}
mkdir -p "$out/logs"
logs=$out/logs
build=$(realpath -m "${BUILD_DIR:-$root/build}")
planted=$build-planted
tag=${TAG:-$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 | head -1 | tr ' ' '_')}
trap 'tar czf "$out/logs_$tag.tgz" -C "$out" logs && rm -rf "$out/logs"' EXIT
t0=$(date +%s)
took() { echo "$1: $(($(date +%s) - t0)) s"; }
status=0
fail() { echo "FAILED: $*"; status=1; }

nvidia-smi >"$logs/nvidia-smi.txt" 2>&1
GPU_BENCH_WERROR=ON BUILD_DIR=$build "$root/scripts/setup.sh" >"$logs/setup.log" 2>&1 ||
  { tail -40 "$logs/setup.log"; exit 1; }
cache() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt"; }
{ cmake -S "$root" -B "$planted" -DCMAKE_BUILD_TYPE=Release -DGPU_BENCH_PLANTED_DEFECTS=ON \
    -DGPU_BENCH_NVML_INCLUDE="$(cache GPU_BENCH_NVML_INCLUDE)" -DPython3_EXECUTABLE="$(cache Python3_EXECUTABLE)" &&
    cmake --build "$planted" -j "$(nproc)" --target gpu_bench; } >"$logs/setup_planted.log" 2>&1 ||
  { tail -20 "$logs/setup_planted.log"; exit 1; }
took build

# gpu_overlap in build folder $1, logged as $logs/$2.log: prints the test's own lines (what it checked, what
# failed, what was too noisy, the tightness figures) and returns 0 where it passed, 77 where it skipped
# (too noisy to judge, or no GPU: CTest counts that as passed), else 1.
gpu_overlap() {
  (cd "$1" && ctest -R '^gpu_overlap$' --output-on-failure) >"$logs/$2.log" 2>&1
  local rc=$?
  grep -E "^(FAIL|MISSED|too noisy|skipped|tightness|measuring again|ok: Overlap|[0-9]+ check)" \
    "$logs/$2.log" | cut -c1-220 | tail -16
  grep -q "\*\*\*Skipped" "$logs/$2.log" && return 77
  [ "$rc" = 0 ] && return 0
  return 1
}
gpu_overlap "$build" gpu_overlap
rc=$?
echo "gpu_overlap, real build: $rc (0 passed, 77 skipped, 1 failed; must be 0)"
[ "$rc" = 0 ] || fail "gpu_overlap on the real build"
cp "$build/tests/gpu_overlap.json" "$out/gpu_overlap_$tag.json" 2>/dev/null
took gpu_overlap
GPU_BENCH_PLANT=overlap_bound gpu_overlap "$planted" gpu_overlap_planted
rc=$?
echo "gpu_overlap, planted bound without its link line: $rc (must be 1)"
[ "$rc" = 1 ] || fail "gpu_overlap did not fail the planted bound"
took planted

bench() { "$build/gpu_bench" --progress=on "$@"; }
bench --benchmark_filter='^Overlap/' --rounds=3 --timeline="$out/timeline_$tag.json" \
  --benchmark_out="$out/overlap_default_$tag.json" --benchmark_out_format=json >"$logs/overlap_default.log" 2>&1 ||
  fail "the default Overlap run"
# Every case's efficiency, interval, binding line and speedup into the log; the checks' verdict here.
"$(cache Python3_EXECUTABLE)" - "$out/overlap_default_$tag.json" "$root/tests/gpu" "$logs/overlap_default_table.txt" \
  >"$logs/overlap_default_checks.log" 2>&1 <<'PY'
import json, sys
sys.path.insert(0, sys.argv[2])
import gpu_common as g, overlap_check as oc
with open(sys.argv[1]) as f:
    ok = {b["name"].replace("/manual_time", ""): b for b in g.iteration_runs(json.load(f))
          if b["name"].startswith("Overlap/") and not b.get("error_occurred")}
c = g.Checker()
with open(sys.argv[3], "w") as table:
    for n, b in sorted(ok.items()):
        s = oc.chunks(oc.axes(n)[1])
        lines = oc.bound_lines(b, s)
        print(f"{n}: efficiency {b['efficiency']:.4f} ({b['efficiency_lo']:.4f} to {b['efficiency_hi']:.4f}), "
              f"line {max(lines, key=lines.get)}, speedup {b['speedup']:.3f}", file=table)
        oc.check_bound(c, n, b, s)
        oc.check_holds(c, n, b)
oc.check_tight(c, ok)
print(f"{len(ok)} cases; largest efficiency {max(b['efficiency'] for b in ok.values()):.4f}, largest efficiency_lo "
      f"{max(b['efficiency_lo'] for b in ok.values()):.4f}")
sys.exit(c.finish("every default Overlap case's bound holds and is the documented one"))
PY
rc=$?
cut -c1-220 "$logs/overlap_default_checks.log" | tail -14
[ "$rc" = 0 ] || fail "the default Overlap cases' bound (checks exit $rc)"
took "default Overlap"

(cd "$root" && "$(cache Python3_EXECUTABLE)" scripts/seed_compare.py "$out/overlap_default_$tag.json" \
  "$build/tests/seed_overlap" "$out/seed_compare_$tag.json") 2>&1 | tee "$logs/seed_compare.log"
[ "${PIPESTATUS[0]}" = 0 ] || fail "an Overlap speedup below the seed demo's"
took seed
exit $status
