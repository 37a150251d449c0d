#!/usr/bin/env bash
# Installs whatever gpu_bench needs and is missing (Debian/Ubuntu packages, Python packages), then
# configures and builds it into build/. Needs only the CUDA toolkit to be there already.
# Environment: BUILD_DIR (default build), GPU_BENCH_WERROR (ON/OFF, default OFF), CMAKE_ARGS (extra).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$root/build}
say() { echo "setup: $*" >&2; }

if ! command -v nvcc >/dev/null 2>&1; then
  for d in /usr/local/cuda/bin /usr/local/cuda-*/bin; do
    if [ -x "$d/nvcc" ]; then export PATH="$d:$PATH"; break; fi
  done
fi
command -v nvcc >/dev/null 2>&1 || { say "the CUDA toolkit (nvcc) is not installed; install it first"; exit 1; }

have_header() { for d in /usr/include /usr/local/include; do [ -e "$d/$1" ] && return 0; done; return 1; }
required=() optional=()
command -v cmake >/dev/null 2>&1 || required+=(cmake)
command -v g++ >/dev/null 2>&1 || required+=(g++)
command -v make >/dev/null 2>&1 || required+=(make)
command -v git >/dev/null 2>&1 || required+=(git)
command -v python3 >/dev/null 2>&1 || required+=(python3 python3-venv python3-pip)
have_header benchmark/benchmark.h || required+=(libbenchmark-dev)
have_header nlohmann/json.hpp || required+=(nlohmann-json3-dev)
have_header gtest/gtest.h || optional+=(libgtest-dev)
have_header numaif.h || optional+=(libnuma-dev)

apt_install() {
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  command -v apt-get >/dev/null 2>&1 || return 1
  $sudo apt-get update -qq >/dev/null 2>&1 || return 1
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >/dev/null
}
if [ ${#required[@]} -gt 0 ] || [ ${#optional[@]} -gt 0 ]; then
  say "installing ${required[*]} ${optional[*]}"
  if ! apt_install "${required[@]}" "${optional[@]}"; then
    [ ${#required[@]} -eq 0 ] || { say "could not install ${required[*]}; install them and run again"; exit 1; }
    say "warning: could not install ${optional[*]}: without libgtest-dev the unit tests are not built, without libnuma-dev host memory is not bound to the GPU's NUMA node"
  fi
fi

# Python: use python3 as it is when it has what the tools need, else a virtual environment beside the repo.
py=python3
pydeps="numpy scipy matplotlib pytest hypothesis pyflakes"
if ! $py -c 'import numpy, scipy, matplotlib, pytest, hypothesis, pyflakes' >/dev/null 2>&1; then
  if ! $py -m pip install -q $pydeps >/dev/null 2>&1; then
    if [ ! -x "$root/.venv/bin/python" ]; then
      $py -m venv --system-site-packages "$root/.venv" 2>/dev/null || { apt_install python3-venv && $py -m venv --system-site-packages "$root/.venv"; }
    fi
    if "$root/.venv/bin/python" -m pip install -q $pydeps >/dev/null 2>&1; then
      py="$root/.venv/bin/python"
    else
      # Offline (as GPU machines often are): build anyway; the Python tools' tests will say what is missing.
      say "warning: could not install the Python packages ($pydeps); the C++ builds, the tools may not run"
    fi
  fi
fi
if [ -f "$root/tools/pyproject.toml" ]; then
  # Offline machines (no build isolation possible) use the setuptools already installed.
  { $py -m pip install -q --no-deps -e "$root/tools" >/dev/null 2>&1 ||
    $py -m pip install -q --no-deps --no-build-isolation -e "$root/tools" >/dev/null 2>&1; } ||
    say "warning: could not install the tools' console scripts; run them as '$py -m gpu_bench_tools.<tool>'"
fi

# NVML's header: the toolkit's when it has one, else NVIDIA's nvidia-nvml-dev package from PyPI (headers
# only; the library itself is the driver's, loaded at run time).
nvml_args=()
cuda_inc=$(dirname "$(command -v nvcc)")/../include
if [ ! -f "$cuda_inc/nvml.h" ] && ! ls "$cuda_inc"/../targets/*/include/nvml.h >/dev/null 2>&1; then
  find_nvml() { $py -c 'import glob, nvidia; print(next(iter(sorted(p for d in nvidia.__path__ for p in glob.glob(d + "/*/include/nvml.h") + glob.glob(d + "/nvml/include/nvml.h"))), ""))' 2>/dev/null; }
  nvml_h=$(find_nvml)
  if [ -z "$nvml_h" ]; then $py -m pip install -q nvidia-nvml-dev >/dev/null 2>&1 || true; nvml_h=$(find_nvml); fi
  if [ -n "$nvml_h" ]; then nvml_args=(-DGPU_BENCH_NVML_INCLUDE="$(dirname "$nvml_h")"); else say "warning: no nvml.h: NVML facts will read unavailable"; fi
fi

cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DGPU_BENCH_WERROR="${GPU_BENCH_WERROR:-OFF}" \
  -DPython3_EXECUTABLE="$(command -v $py || echo $py)" "${nvml_args[@]}" ${CMAKE_ARGS:-} >"$build.configure.log" 2>&1 ||
  { cat "$build.configure.log" >&2; exit 1; }
cmake --build "$build" -j "$(nproc)"
echo "$py" >"$build/python"
