#!/usr/bin/env bash
# Sets up and builds gpu_bench, then runs it. With no arguments it runs the whole default matrix and
# writes gpu_bench.json; any arguments go to gpu_bench as they are (see build/gpu_bench --help).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/setup.sh" >&2
if [ $# -eq 0 ]; then
  set -- --benchmark_out=gpu_bench.json --benchmark_out_format=json
fi
exec "${BUILD_DIR:-$root/build}/gpu_bench" "$@"
