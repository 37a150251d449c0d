#!/usr/bin/env bash
# The check a fleet runs on a GPU node before jobs and every night: gpu_bench's gate preset on every GPU,
# the verdict (first line at most 80 characters; exit 0 pass, 1 degraded, 2 errored, as NHC and Node
# Problem Detector's custom plugins read it; 4 when the check could not judge the node: a command missing,
# no results, a result the gate cannot read) and the figures for node_exporter's textfile collector. A figure
# beyond its expectation is measured once more by the gate, with the same gpu_bench, before the node is called
# degraded; the export after it reads that measurement too, so both give one verdict.
#
# Environment: GPU_BENCH (the binary; default gpu_bench on PATH), GPU_BENCH_PRESET (gate), GPU_BENCH_DEVICE
# (all), GPU_BENCH_TEXTFILE_DIR (Debian's node_exporter reads /var/lib/prometheus/node-exporter; empty:
# export nothing), GPU_BENCH_EXPECT (an expectations file; default: the one shipped with the tools).
# The export's own problems go to stderr and never change the verdict: a textfile that stops being
# written shows as a stale gpu_bench_last_success_timestamp_seconds (alert GpuBenchStale).
set -uo pipefail
gpu_bench=${GPU_BENCH:-gpu_bench}
preset=${GPU_BENCH_PRESET:-gate}
device=${GPU_BENCH_DEVICE:-all}
textfile_dir=${GPU_BENCH_TEXTFILE_DIR-/var/lib/prometheus/node-exporter}
expect=()
[ -n "${GPU_BENCH_EXPECT:-}" ] && expect=(--expect "$GPU_BENCH_EXPECT")

work=$(mktemp -d "${TMPDIR:-/tmp}/gpu-bench-check.XXXXXX") || { echo "ERRORED: cannot make a temporary folder"; exit 4; }
trap 'rm -rf "$work"' EXIT
results=$work/results.json
# The check could not judge the node: its first line, the textfile saying so (gpu_bench_check_errored 1), exit 4.
check_errored() {
  echo "${1:0:80}"
  if [ -n "$textfile_dir" ]; then
    gpu-bench-export --format prometheus --out "$textfile_dir" --preset "$preset" --check-errored "${1#ERRORED: }" \
      >/dev/null || echo "gpu-bench-node-check: the textfile in $textfile_dir was not updated (the line above says why)" >&2
  fi
  exit 4
}
# gpu_bench exits non-zero when a case failed and still writes the file; with no GPU it writes none.
"$gpu_bench" --preset="$preset" --device="$device" --benchmark_out="$results" --benchmark_out_format=json \
  >"$work/gpu_bench.log" 2>&1
ran=$?
if [ ! -s "$results" ]; then
  why=$(grep -v '^[[:space:]]*$' "$work/gpu_bench.log" | tail -n 1)
  cat "$work/gpu_bench.log" >&2
  check_errored "ERRORED: gpu_bench wrote no results (exit $ran): ${why:-no output}"
fi
gpu-bench-gate --gpu-bench "$gpu_bench" "${expect[@]}" "$results" >"$work/verdict" 2>"$work/gate-errors"
status=$?
# 0, 1 and 2 with a first line are the gate's verdict on the run; anything else is the check's own failure
# (the gate's one line, or bash's "command not found", is on stderr).
if [ "$status" -gt 2 ] || ! grep -q -v '^[[:space:]]*$' "$work/verdict"; then
  cat "$work/gate-errors" >&2
  why=$(grep -v '^[[:space:]]*$' "$work/gate-errors" | tail -n 1)
  check_errored "ERRORED: ${why#gpu-bench-gate: error: }"
fi
cat "$work/gate-errors" >&2  # what the gate could not do (measure again) without changing its verdict
if [ -n "$textfile_dir" ]; then
  gpu-bench-export --format prometheus --out "$textfile_dir" "${expect[@]}" "$results" >/dev/null ||
    echo "gpu-bench-node-check: the textfile in $textfile_dir was not updated (the line above says why)" >&2
fi
cat "$work/verdict"
exit "$status"
