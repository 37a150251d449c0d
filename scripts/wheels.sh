#!/usr/bin/env bash
# Makes a folder of wheels for scripts/setup.sh to install the Python tools from where no package index
# answers (GPU_BENCH_WHEELS=DIR, docs/setup.md). Run it where an index answers.
# usage: scripts/wheels.sh DIR [PIP_DOWNLOAD_OPTION...] [-- NAME...]
#   Builds the tools' own wheel into DIR, then downloads into DIR every wheel the tools need (their test extra
#   and pyflakes included, and setuptools, which installs the tools from the checkout), for this machine's
#   python, or for the one the options name: --python-version 3.12 --platform manylinux2014_x86_64 ...
#   With NAME... after --, only those packages, each without its own dependencies: for a machine that has
#   the rest already (setup.sh installs each wheel as it is, then says which of the tools' requirements are
#   still missing).
set -euo pipefail
say() { echo "wheels: $*" >&2; }
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dir=${1:?usage: scripts/wheels.sh DIR [PIP_DOWNLOAD_OPTION...] [-- NAME...]}
shift
options=()
names=()
while [ $# -gt 0 ]; do
  if [ "$1" = -- ]; then shift; names=("$@"); break; fi
  options+=("$1"); shift
done
py=${PYTHON:-python3}
mkdir -p "$dir" || { say "cannot make $dir"; exit 1; }
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# The tools' wheel is pure Python: one for every python and platform.
"$py" -m pip wheel -q --no-deps -w "$dir" "$root/tools" >"$log" 2>&1 ||
  { say "pip could not build the tools' wheel: $(grep -E '^(ERROR|error):' "$log" | tail -n 1)"; exit 1; }
if [ ${#names[@]} -gt 0 ]; then
  set -- --no-deps "${names[@]}"
else
  set -- --find-links "$dir" 'gpu-bench-tools[test]' pyflakes 'setuptools>=70.1'
fi
"$py" -m pip download -q --only-binary=:all: -d "$dir" "${options[@]}" "$@" >"$log" 2>&1 ||
  { say "pip download failed: $(grep -E '^ERROR:' "$log" | tail -n 1)"; exit 1; }
say "$dir: $(find "$dir" -maxdepth 1 -name '*.whl' | wc -l) wheels, $(du -sh "$dir" | cut -f1)"
