#!/usr/bin/env bash
# Two checkouts set up into one python, as on a machine that had the tools from another checkout:
# 1. the first checkout's set-up, in a virtual environment that also sees PYTHON's own tools (its system site),
#    installs its tools there and says nothing: the tools outside that environment are left as they were;
# 2. the second checkout's set-up says in one line that its tools replaced the first's in that python;
# 3. its run.sh says in one line where the tools' commands are and how to run them by name, before
#    gpu_bench's own words (a stand-in that finds no GPU, after a stand-in set-up).
# Runs on copies of the scripts and the tools in a scratch folder, and stops each set-up at the configure
# step (an unknown CMake generator), so no build is made. The tools' editable install needs a setuptools
# that builds wheels: this python's, or one from the package index; where neither can, it says so and skips.
# Usage: other_checkout.sh PYTHON (a python3 that holds every package the tools need, as the main build's does)
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
full_python=${1:?usage: other_checkout.sh PYTHON}

say() { echo "other_checkout: $*"; }
fail() { echo "other_checkout: FAIL: $*" >&2; exit 1; }

tmp=$(mktemp -d) || fail "mktemp could not make a scratch folder (TMPDIR ${TMPDIR:-/tmp})"
trap 'rm -rf "$tmp"' EXIT
unset BUILD_DIR GPU_BENCH_WERROR GPU_BENCH_SETUP_TESTS GPU_BENCH_TEST_SERVICES GPU_BENCH_WHEELS \
  GPU_BENCH_CUDA_INCLUDE VIRTUAL_ENV PYTHONPATH PYTHONHOME
export GPU_BENCH_NVML_INCLUDE=none CMAKE_ARGS=-GNo_such_generator PIP_DISABLE_PIP_VERSION_CHECK=1

checkout() {  # NAME: a copy of the scripts and the tools
  mkdir -p "$tmp/$1/scripts" "$tmp/$1/tools"
  cp "$repo/scripts/setup.sh" "$repo/scripts/run.sh" "$tmp/$1/scripts/"
  cp -r "$repo/tools/pyproject.toml" "$repo/tools/README.md" "$repo/tools/gpu_bench_tools" "$tmp/$1/tools/"
}
# Runs NAME's set-up with the test's python first on PATH; it must reach the configure step, which fails on
# purpose, after the lines of stderr left in $tmp/setup.err.
setup_to_configure() {  # NAME
  local rc=0
  env PATH="$tmp/full/bin:$PATH" BUILD_DIR="$tmp/$1-build" "$tmp/$1/scripts/setup.sh" >/dev/null \
    2>"$tmp/setup.all" || rc=$?
  grep -q '^setup: configure failed: ' "$tmp/setup.all" ||
    fail "$1: setup.sh did not go on to the configure step (exit $rc); it said:"$'\n'"$(cat "$tmp/setup.all")"
  sed '/^setup: configure failed: /,$d' "$tmp/setup.all" >"$tmp/setup.err"
}

"$full_python" -m venv --system-site-packages "$tmp/full" || fail "python -m venv failed"
# Where that python is a virtual environment itself (a GPU machine's /opt/torch/.venv), --system-site-packages
# reaches its base interpreter's packages, not its own: its own are added by a .pth file.
own=$("$full_python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
"$tmp/full/bin/python3" -c 'import sysconfig, sys; open(sysconfig.get_paths()["purelib"] + "/full_python.pth", "w").write(sys.argv[1] + "\n")' "$own"
checkout first
checkout second

# 1.
setup_to_configure first
if grep -q "the tools themselves (tools/)" "$tmp/setup.err"; then
  say "skipped: $full_python's setuptools cannot build the tools' editable wheel, and no package index brings one: $(cat "$tmp/setup.err")"
  exit 0
fi
[ ! -s "$tmp/setup.err" ] || fail "first checkout: set-up said:"$'\n'"$(cat "$tmp/setup.err")"
"$tmp/full/bin/python3" -c 'import gpu_bench_tools, sys
sys.exit(not gpu_bench_tools.__file__.startswith(sys.argv[1]))' "$tmp/first/tools" ||
  fail "first checkout: gpu_bench_tools does not come from $tmp/first/tools"
say "first checkout: installed, no line"

# 2.
setup_to_configure second
[ "$(cat "$tmp/setup.err")" = "setup: replaced the gpu-bench-tools that $tmp/full/bin/python3 had from $tmp/first/tools with this checkout's ($tmp/second/tools): its gpu-bench-* commands now run this checkout's code" ] ||
  fail "second checkout: set-up said:"$'\n'"$(cat "$tmp/setup.err")"
say "second checkout: $(cat "$tmp/setup.err")"

# 3.
printf '#!/bin/sh\n' >"$tmp/second/scripts/setup.sh"
mkdir -p "$tmp/second-build"
echo "$tmp/full/bin/python3" >"$tmp/second-build/python"
printf '#!/bin/sh\necho "gpu_bench: no GPU is visible" >&2\nexit 1\n' >"$tmp/second-build/gpu_bench"
chmod +x "$tmp/second-build/gpu_bench"
for path in "$tmp/full/bin:$PATH" "/usr/bin:/bin"; do
  rc=0
  env PATH="$path" BUILD_DIR="$tmp/second-build" "$tmp/second/scripts/run.sh" >/dev/null 2>"$tmp/run.err" || rc=$?
  where="run: the tools' commands (gpu-bench-compare, gpu-bench-report, ...) are in $tmp/full/bin; on PATH"
  [ "$path" != /usr/bin:/bin ] || where="${where%; on PATH}; to run them by name: export PATH=\"$tmp/full/bin:\$PATH\""
  [ "$rc" = 1 ] && [ "$(cat "$tmp/run.err")" = "$where"$'\n'"gpu_bench: no GPU is visible" ] ||
    fail "run.sh with PATH=$path: exit $rc, said:"$'\n'"$(cat "$tmp/run.err")"
  say "run.sh: $(head -n 1 "$tmp/run.err")"
done
say "passed"
