#!/usr/bin/env bash
# Sets up and builds gpu_bench, then runs every test: unit and CLI tests, GPU tests (skipped, not failed,
# where no GPU is visible) and the Python tools' tests.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$root/build}
GPU_BENCH_SETUP_TESTS=1 "$root/scripts/setup.sh"
py=$(cat "$build/python")
failed=()
# The GPU tests' scripts run only where there is a GPU: a name error in one must still fail here.
if "$py" -c 'import pyflakes' >/dev/null 2>&1; then
  (cd "$root" && "$py" -m pyflakes tests tools scripts) || failed+=(pyflakes)
else
  echo "test: warning: pyflakes is not installed in $py (setup.sh said why): the Python files were not checked" >&2
fi
(cd "$build" && ctest --output-on-failure "$@") || failed+=(ctest)
if [ -d "$root/tools/tests" ]; then
  (cd "$root" && "$py" -m pytest tools/tests -q -p no:cacheprovider) || failed+=("the tools' tests (pytest)")
fi
if [ ${#failed[@]} -gt 0 ]; then
  printf -v list '%s, ' "${failed[@]}"
  echo "test: failed: ${list%, } (their output is above)" >&2
  exit 1
fi
