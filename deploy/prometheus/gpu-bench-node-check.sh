#!/usr/bin/env bash
# The check a fleet runs on a GPU node before jobs and every night: gpu_bench's gate preset on every GPU,
# the verdict (first line at most 80 characters; exit 0 pass, 1 degraded, 2 errored, as NHC and Node
# Problem Detector's custom plugins read it) and the figures for node_exporter's textfile collector.
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

work=$(mktemp -d "${TMPDIR:-/tmp}/gpu-bench-check.XXXXXX") || { echo "ERRORED: cannot make a temporary folder"; exit 2; }
trap 'rm -rf "$work"' EXIT
results=$work/results.json
# gpu_bench exits non-zero when a case failed and still writes the file; with no GPU it writes none.
"$gpu_bench" --preset="$preset" --device="$device" --benchmark_out="$results" --benchmark_out_format=json \
  >"$work/gpu_bench.log" 2>&1
ran=$?
if [ ! -s "$results" ]; then
  why=$(grep -v '^[[:space:]]*$' "$work/gpu_bench.log" | tail -n 1)
  line="ERRORED: gpu_bench wrote no results (exit $ran): ${why:-no output}"
  echo "${line:0:80}"
  cat "$work/gpu_bench.log"
  exit 2
fi
if [ -n "$textfile_dir" ]; then
  gpu-bench-export --format prometheus --out "$textfile_dir" "${expect[@]}" "$results" >/dev/null ||
    echo "gpu-bench-node-check: the textfile in $textfile_dir was not updated (the line above says why)" >&2
fi
gpu-bench-gate "${expect[@]}" "$results"
