#!/usr/bin/env bash
# Sets up and builds gpu_bench, then runs it. With no arguments it runs the whole default matrix and
# writes gpu_bench.json; any arguments go to gpu_bench as they are (see build/gpu_bench --help).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$root/build}
"$root/scripts/setup.sh" >&2
# One line on where set-up put the tools' commands (gpu-bench-compare, ...) and how to run them by name;
# none where this checkout's tools are not installed (set-up has said why).
"$(cat "$build/python" 2>/dev/null || echo python3)" - "$root/tools" >&2 2>/dev/null <<'PY' || true
import importlib.metadata as md
import os
import sys

import gpu_bench_tools

dist = md.distribution("gpu-bench-tools")
if not os.path.realpath(gpu_bench_tools.__file__).startswith(os.path.realpath(sys.argv[1]) + os.sep):
    raise SystemExit
script = next(f for f in dist.files or () if f.name == "gpu-bench-compare")
folder = os.path.normpath(os.path.dirname(dist.locate_file(script)))
on_path = any(os.path.realpath(p) == os.path.realpath(folder) for p in os.environ.get("PATH", "").split(os.pathsep) if p)
how = "on PATH" if on_path else f"to run them by name: export PATH=\"{folder}:$PATH\""
print(f"run: the tools' commands (gpu-bench-compare, gpu-bench-report, ...) are in {folder}; {how}")
PY
if [ $# -eq 0 ]; then
  set -- --benchmark_out=gpu_bench.json --benchmark_out_format=json
fi
exec "$build/gpu_bench" "$@"
