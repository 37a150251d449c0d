#!/usr/bin/env bash
# Sets up and builds gpu_bench, then runs every test: unit and CLI tests, GPU tests (skipped, not failed,
# where no GPU is visible) and the Python tools' tests.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$root/build}
"$root/scripts/setup.sh"
status=0
# The GPU tests' scripts run only where there is a GPU: a name error in one must still fail here.
(cd "$root" && "$(cat "$build/python")" -m pyflakes tests tools scripts) || status=1
(cd "$build" && ctest --output-on-failure "$@") || status=1
if [ -d "$root/tools/tests" ]; then
  (cd "$root" && "$(cat "$build/python")" -m pytest tools/tests -q -p no:cacheprovider) || status=1
fi
exit $status
