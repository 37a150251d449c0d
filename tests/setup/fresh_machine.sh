#!/usr/bin/env bash
# What a new user meets on a fresh machine: a fresh clone of this repository's HEAD, a python3 with no
# third-party packages first on PATH, a toolkit whose include folder has no nvml.h; then scripts/setup.sh
# must build a gpu_bench that lists exactly the cases REFERENCE (the main build's gpu_bench) lists.
# Needs the CUDA toolkit and the package registries (apt's and PyPI), as setup.sh does on a fresh machine.
#
# Passes: 1. a bare virtual environment's python3 (setup.sh installs the tools' packages into it and fetches
#            NVML's header from PyPI, since the toolkit's include folder is replaced by an empty one);
#         2. the same clone again with the system's externally managed python3 (PEP 668), where one exists:
#            setup.sh must make the .venv beside the repository;
#         3. failures: each must end setup.sh non-zero with exactly one line naming its step.
# Builds for one CUDA architecture and without the tests, to stay quick.
# Usage: fresh_machine.sh REFERENCE_GPU_BENCH
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
reference=$(realpath "${1:?usage: fresh_machine.sh REFERENCE_GPU_BENCH (gpu_bench from the main build)}")

say() { echo "fresh_machine: $*"; }
fail() { echo "fresh_machine: FAIL: $*" >&2; exit 1; }
[ -x "$reference" ] || fail "$reference is not an executable gpu_bench"

tmp=$(mktemp -d) || fail "mktemp could not make a scratch folder (TMPDIR ${TMPDIR:-/tmp})"
trap 'rm -rf "$tmp"' EXIT
clone=$tmp/clone
unset BUILD_DIR CMAKE_ARGS GPU_BENCH_WERROR GPU_BENCH_NVML_INCLUDE GPU_BENCH_CUDA_INCLUDE VIRTUAL_ENV PYTHONPATH PYTHONHOME
export CMAKE_ARGS="-DCMAKE_CUDA_ARCHITECTURES=90 -DGPU_BENCH_TESTS=OFF"
mkdir "$tmp/include-without-nvml"
export GPU_BENCH_CUDA_INCLUDE=$tmp/include-without-nvml

# Runs setup.sh in the clone with PYTHON_DIR first on PATH; fails the test, with setup's own words, unless it
# built with no warning.
run_setup() {  # PASS PYTHON_DIR
  local rc=0 started=$SECONDS
  PATH="$2:$PATH" "$clone/scripts/setup.sh" >"$tmp/setup.out" 2>"$tmp/setup.err" || rc=$?
  if [ "$rc" -ne 0 ]; then
    if [ -s "$tmp/setup.err" ]; then
      fail "$1: setup.sh exited with $rc; it said:"$'\n'"$(cat "$tmp/setup.err")"
    fi
    fail "$1: setup.sh exited with $rc and printed nothing on stderr"
  fi
  if grep -q '^setup: warning:' "$tmp/setup.err"; then
    fail "$1: setup.sh warned, though everything can be installed here:"$'\n'"$(grep '^setup: warning:' "$tmp/setup.err")"
  fi
  say "$1: setup.sh took $((SECONDS - started)) s"
}

# The python recorded in build/python must be EXPECTED and hold every requirement of the tools (their test
# extra too, not the deploy extra, which only test.sh's set-up installs) and pyflakes.
check_python() {  # PASS EXPECTED
  local recorded
  recorded=$(cat "$clone/build/python" 2>/dev/null) || fail "$1: setup.sh wrote no build/python"
  [ "$(realpath -s "$recorded")" = "$(realpath -s "$2")" ] || fail "$1: build/python is $recorded, expected $2"
  "$recorded" - "$clone/tools" <<'EOF' || fail "$1: the python setup.sh chose lacks what the tools need"
import importlib.metadata as md, re, sys
try:
    dist = md.distribution("gpu-bench-tools")
except md.PackageNotFoundError:
    sys.exit("gpu-bench-tools is not installed")
names = ["pyflakes"]
for requirement in dist.requires or []:
    # The deploy extra is the tests' only (setup.sh installs it with GPU_BENCH_SETUP_TESTS=1).
    if re.search(r"extra\s*==\s*[\"']deploy[\"']", requirement):
        continue
    names.append(re.match(r"[A-Za-z0-9._-]+", requirement).group(0))
missing = []
for name in names:
    try:
        md.version(name)
    except md.PackageNotFoundError:
        missing.append(name)
if missing:
    sys.exit("missing: " + ", ".join(missing))
import gpu_bench_tools
if not gpu_bench_tools.__file__.startswith(sys.argv[1]):
    sys.exit(f"gpu_bench_tools comes from {gpu_bench_tools.__file__}, not {sys.argv[1]}")
EOF
}

# NVML's header must come from the wheel, not from the toolkit that GPU_BENCH_CUDA_INCLUDE hides.
check_nvml() {  # PASS
  local found
  found=$(sed -n 's/^GPU_BENCH_NVML_INCLUDE:[A-Z]*=//p' "$clone/build/CMakeCache.txt")
  case $found in
    "$clone"/.whl/*) ;;
    *) fail "$1: CMake used nvml.h from '$found', not from NVIDIA's wheel under $clone/.whl" ;;
  esac
}

check_cases() {  # PASS
  "$reference" --benchmark_list_tests >"$tmp/reference.txt" 2>&1 || fail "$reference --benchmark_list_tests failed"
  [ -x "$clone/build/gpu_bench" ] || fail "$1: setup.sh made no build/gpu_bench"
  "$clone/build/gpu_bench" --benchmark_list_tests >"$tmp/fresh.txt" 2>&1 ||
    fail "$1: build/gpu_bench --benchmark_list_tests failed:"$'\n'"$(head -n 20 "$tmp/fresh.txt")"
  [ -s "$tmp/reference.txt" ] || fail "$reference lists no cases"
  diff -u "$tmp/reference.txt" "$tmp/fresh.txt" >"$tmp/cases.diff" ||
    fail "$1: the fresh build lists other cases than $reference:"$'\n'"$(head -n 40 "$tmp/cases.diff")"
  say "$1: build/gpu_bench lists the same $(wc -l <"$tmp/reference.txt") cases as $reference"
}

check_clean_tree() {  # PASS
  local status
  status=$(git -C "$clone" status --porcelain)
  [ -z "$status" ] || fail "$1: setup.sh left files git reports:"$'\n'"$status"
}

# Exactly one line on stderr, starting "setup: STEP failed:", and a non-zero exit.
expect_one_line_failure() {  # WHAT STEP [ENV=VALUE...]
  local what=$1 step=$2 rc=0; shift 2
  env "$@" "$clone/scripts/setup.sh" >/dev/null 2>"$tmp/fail.err" || rc=$?
  [ "$rc" -ne 0 ] || fail "$what: setup.sh exited with 0"
  local lines
  lines=$(wc -l <"$tmp/fail.err")
  if [ "$lines" -ne 1 ] || ! grep -q "^setup: $step failed: ..*" "$tmp/fail.err"; then
    fail "$what: expected one line 'setup: $step failed: ...', got $lines:"$'\n'"$(head -n 20 "$tmp/fail.err")"
  fi
  say "$what: $(cat "$tmp/fail.err")"
}

say "commit $(git -C "$repo" rev-parse --short=12 HEAD), cloned into $clone"
git clone -q "$repo" "$clone" || fail "git could not clone $repo into $clone"
if [ -n "$(git -C "$repo" status --porcelain --untracked-files=no)" ]; then
  say "note: $repo has uncommitted changes; the clone, like a new user's, has only the commit"
fi

# 1. A bare python3 first on PATH.
python3 -m venv "$tmp/bare-python" || fail "python3 -m venv failed (Debian: install python3-venv)"
"$tmp/bare-python/bin/python3" -c 'import numpy' 2>/dev/null && fail "the bare virtual environment sees numpy"
run_setup "bare python3" "$tmp/bare-python/bin"
check_python "bare python3" "$tmp/bare-python/bin/python3"
check_nvml "bare python3"
check_cases "bare python3"
check_clean_tree "bare python3"

# 2. An externally managed python3 (Debian's and Ubuntu's own) first on PATH.
externally_managed() {  # PYTHON
  [ -x "$1" ] && "$1" -c 'import os, sys, sysconfig; sys.exit(not os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")))' 2>/dev/null
}
managed=""
for candidate in /usr/bin/python3 /usr/local/bin/python3; do
  if externally_managed "$candidate"; then managed=$candidate; break; fi
done
if [ -n "$managed" ]; then
  mkdir "$tmp/managed-python"
  ln -s "$managed" "$tmp/managed-python/python3"
  run_setup "externally managed python3" "$tmp/managed-python"
  check_python "externally managed python3" "$clone/.venv/bin/python"
  check_cases "externally managed python3"
  check_clean_tree "externally managed python3"
else
  say "no externally managed python3 here: pass 2 not run"
fi

# 3. Failures say one line.
mkdir "$tmp/broken-nvcc"
printf '#!/bin/sh\nexit 3\n' >"$tmp/broken-nvcc/nvcc"
chmod +x "$tmp/broken-nvcc/nvcc"
expect_one_line_failure "an nvcc that fails" "CUDA toolkit" PATH="$tmp/broken-nvcc:$PATH"
expect_one_line_failure "GPU_BENCH_NVML_INCLUDE without nvml.h" "NVML header" \
  PATH="$tmp/bare-python/bin:$PATH" GPU_BENCH_NVML_INCLUDE="$tmp/include-without-nvml"
rc=0
env PATH="$tmp/bare-python/bin:$PATH" BUILD_DIR="$tmp/bad-build" CMAKE_ARGS=-DCMAKE_CUDA_ARCHITECTURES=no_such_arch \
  "$clone/scripts/setup.sh" >/dev/null 2>"$tmp/fail.err" || rc=$?
[ "$rc" -ne 0 ] || fail "a CMake error: setup.sh exited with 0"
grep -q '^setup: configure failed: ' <(head -n 1 "$tmp/fail.err") ||
  fail "a CMake error: the first line is not 'setup: configure failed: ...':"$'\n'"$(head -n 5 "$tmp/fail.err")"
say "a CMake error: $(head -n 1 "$tmp/fail.err")"
say "passed"
