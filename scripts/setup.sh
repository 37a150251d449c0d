#!/usr/bin/env bash
# Installs whatever gpu_bench needs and is missing (Debian/Ubuntu packages, the Python tools' packages, NVML's
# header), then configures and builds it into build/. Needs only the CUDA toolkit to be there already.
# What it installs, the environment it reads and every line it prints: docs/setup.md.
set -euo pipefail

say() { echo "setup: $*" >&2; }
warn() { say "warning: $*"; }

# Each step names itself and what to do when it fails, so that any failure, foreseen or not, ends with the
# one line "setup: STEP failed: WHAT TO DO" on stderr. fail() must run in this shell, never in $(...).
step_name="scratch folder"
step_advice="make TMPDIR (default /tmp) a folder you can write and run again"
reported=false
step() { step_name=$1; step_advice=$2; }
fail() { say "$step_name failed: $*"; reported=true; exit 1; }
scratch=""
on_exit() {
  local rc=$?
  [ -z "$scratch" ] || rm -rf "$scratch"
  if [ "$rc" -ne 0 ] && ! $reported; then say "$step_name failed: $step_advice"; fi
}
trap on_exit EXIT
trap 'say "$step_name interrupted"; reported=true; exit 130' INT
trap 'say "$step_name interrupted"; reported=true; exit 143' TERM
scratch=$(mktemp -d 2>/dev/null)

step "build folder" "set BUILD_DIR to a folder path this user can make and run again"
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(realpath -m "${BUILD_DIR:-$root/build}")

# A one-line reason from a command's LOG: its last error line (pip's ERROR: or a build's error:, apt's E:), else
# its last line.
last_line() {
  local line
  line=$(grep -E '^[[:space:]]*(ERROR|E|error):' "$1" | grep -v -e subprocess-exited-with-error \
    -e metadata-generation-failed | tail -n 1 || true)
  [ -n "$line" ] || line=$(grep -v '^[[:space:]]*$' "$1" | tail -n 1 || true)
  echo "${line#"${line%%[![:space:]]*}"}"
}

# --- CUDA toolkit -------------------------------------------------------------------------------------------
step "CUDA toolkit" "install the CUDA toolkit, or put the folder holding nvcc on PATH, and run again"
if ! command -v nvcc >/dev/null 2>&1; then
  for d in /usr/local/cuda/bin /usr/local/cuda-*/bin; do
    if [ -x "$d/nvcc" ]; then export PATH="$d:$PATH"; break; fi
  done
fi
command -v nvcc >/dev/null 2>&1 ||
  fail "no nvcc on PATH or in /usr/local/cuda*/bin; install the CUDA toolkit, or put the folder holding nvcc on PATH, and run again"
cuda_root=$(dirname "$(dirname "$(realpath "$(command -v nvcc)")")")
cuda_major=$(nvcc --version | sed -n 's/.*release \([0-9][0-9]*\)\..*/\1/p')

# --- system packages ----------------------------------------------------------------------------------------
step "system packages" "install cmake, g++, make, git, python3, libbenchmark-dev and nlohmann-json3-dev and run again"
apt_log=$scratch/apt.log
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
can_apt() { command -v apt-get >/dev/null 2>&1 && { [ "$(id -u)" -eq 0 ] || command -v sudo >/dev/null 2>&1; }; }
apt_updated=false
apt_install() {
  if ! $apt_updated; then
    as_root apt-get update -qq >"$apt_log" 2>&1 || return 1
    apt_updated=true
  fi
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >"$apt_log" 2>&1
}
have_header() { for d in /usr/include /usr/local/include; do [ -e "$d/$1" ] && return 0; done; return 1; }

required=()
command -v cmake >/dev/null 2>&1 || required+=(cmake)
command -v g++ >/dev/null 2>&1 || required+=(g++)
command -v make >/dev/null 2>&1 || required+=(make)
command -v git >/dev/null 2>&1 || required+=(git)
command -v python3 >/dev/null 2>&1 || required+=(python3 python3-venv python3-pip)
have_header benchmark/benchmark.h || required+=(libbenchmark-dev)
have_header nlohmann/json.hpp || required+=(nlohmann-json3-dev)
if [ ${#required[@]} -gt 0 ]; then
  can_apt || fail "${required[*]} missing, and apt-get cannot be run here (no apt-get, or not root and no sudo); install them and run again"
  say "installing ${required[*]} (apt-get)"
  apt_install "${required[@]}" ||
    fail "apt-get could not install ${required[*]} ($(last_line "$apt_log")); install them and run again"
fi

# Optional packages: gpu_bench builds without them, with less.
install_optional() {  # HEADER PACKAGE WHAT-IS-LOST
  have_header "$1" && return 0
  if ! can_apt; then
    warn "$2 is not installed, and apt-get cannot be run here (no apt-get, or not root and no sudo): $3"
    return 0
  fi
  say "installing $2 (apt-get)"
  apt_install "$2" || warn "apt-get could not install $2 ($(last_line "$apt_log")): $3"
}
install_optional gtest/gtest.h libgtest-dev "the unit and GPU fixture tests are not built"
install_optional numaif.h libnuma-dev "host memory is not bound to the GPU's NUMA node"

# The services the tools' tests start for real, on 127.0.0.1 and Unix sockets only: Prometheus,
# node_exporter and the Pushgateway (with certificates made by openssl), a throwaway PostgreSQL server, and
# a one-node Slurm (munge, slurmctld, slurmd; sudo for the drain's one privileged step); and clang-format,
# which .ci/run checks the C++ with.
# Only test.sh asks for them (GPU_BENCH_SETUP_TESTS=1). Where one cannot be installed its tests skip,
# naming it; with GPU_BENCH_TEST_SERVICES=require (CI) set-up stops instead.
if [ "${GPU_BENCH_SETUP_TESTS:-0}" = 1 ]; then
  test_packages=(prometheus prometheus-node-exporter prometheus-pushgateway openssl postgresql
                 munge slurmctld slurmd slurm-client sudo clang-format)
  step "test services" "install ${test_packages[*]} (Debian packages) and run again"
  installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -qx 'install ok installed'; }
  missing=()
  for p in "${test_packages[@]}"; do installed "$p" || missing+=("$p"); done
  if [ ${#missing[@]} -gt 0 ]; then
    why=""
    if ! can_apt; then
      why="apt-get cannot be run here (no apt-get, or not root and no sudo)"
    else
      say "installing ${missing[*]} for the tools' service tests (apt-get)"
      apt_install --no-install-recommends "${missing[@]}" || why="apt-get could not install them ($(last_line "$apt_log"))"
    fi
    if [ -n "$why" ]; then
      [ "${GPU_BENCH_TEST_SERVICES:-}" != require ] || fail "${missing[*]} missing and $why"
      warn "${missing[*]} missing and $why: the tests that start those services skip"
    fi
  fi
fi

step "CMake version" "install CMake 3.25 or newer (e.g. python3 -m pip install cmake) and run again"
cmake_version=$(cmake --version | sed -n '1s/[^0-9]*\([0-9][0-9.]*\).*/\1/p')
[ "$(printf '%s\n' 3.25 "$cmake_version" | sort -V | head -n 1)" = 3.25 ] ||
  fail "CMake $cmake_version is older than the 3.25 gpu_bench needs; install a newer one (e.g. python3 -m pip install cmake) and run again"

# --- Python packages ----------------------------------------------------------------------------------------
# The tools' own dependencies come from tools/pyproject.toml (with its test extra, and for the tests its
# deploy extra); pyflakes is test.sh's.
# From a folder of wheels where GPU_BENCH_WHEELS names one (no index asked). Otherwise offline first, which is
# enough where everything is there already, then from the package index if it answers. A python that refuses
# packages (PEP 668) or has no pip gets a virtual environment beside the repository, seeing the system's
# packages. Whatever is still missing is said in one line.
step "Python packages" "install python3 with pip (Debian/Ubuntu: python3-pip python3-venv) and run again"
pip_log=$scratch/pip.log
wheels=${GPU_BENCH_WHEELS:-}
if [ -n "$wheels" ]; then
  compgen -G "$wheels/*.whl" >/dev/null ||
    fail "GPU_BENCH_WHEELS=$wheels is not a folder holding wheels (.whl); make one with scripts/wheels.sh where a package index answers (docs/setup.md), or unset it, and run again"
  wheels=$(realpath "$wheels")
fi
# Whether the package index answers, asked once, through pip with its own settings (PIP_INDEX_URL, pip.conf,
# proxies) but no retries and a short timeout: where none answers, pip's own retries take minutes.
index=unasked
index_answers() {  # PYTHON
  if [ "$index" = unasked ]; then
    index=silent
    "$1" -m pip index versions pip -vv --retries 0 --timeout 5 >"$scratch/index.log" 2>&1 && index=answers
  fi
  [ "$index" = answers ]
}
# Why it did not: the address pip asked and the error, e.g. "http://host/simple/pip/: [Errno 111] Connection
# refused".
index_silence() {
  local line url why
  line=$(grep -m 1 '^Could not fetch URL ' "$scratch/index.log" || true)
  [ -n "$line" ] || { last_line "$scratch/index.log"; return; }
  url=${line#Could not fetch URL }
  url=${url%%: *}
  why=$(grep -o -e '\[Errno [-0-9]*\] [^'"'"'")]*' -e 'timed out' -e 'SSLError' <<<"$line" | tail -n 1 || true)
  echo "$url: ${why:-no answer}"
}
refuses_packages() { grep -q -e externally-managed-environment -e 'No module named pip' "$pip_log"; }
pip_install() {  # PYTHON ARGS...
  local python=$1; shift
  "$python" -m pip install -q --no-index --no-build-isolation "$@" >"$pip_log" 2>&1 && return 0
  ! refuses_packages && index_answers "$python" && "$python" -m pip install -q "$@" >"$pip_log" 2>&1
}
# The deploy extra (kubernetes-validate, about 108 MB) only for the tests, whose deploy tests use it.
extras=test
[ "${GPU_BENCH_SETUP_TESTS:-0}" = 1 ] && extras=test,deploy
# A folder of wheels is the set to install, resolved where it was made: each wheel goes in as it is, with no
# resolution against this python's packages (a folder made for a node that has most packages holds only the
# others), then the tools from this checkout; unmet_requirements then says which of the tools' own
# requirements are still missing.
install_tools() {  # PYTHON
  if [ -n "$wheels" ]; then
    "$1" -m pip install -q --no-index --no-deps "$wheels"/*.whl >"$pip_log" 2>&1 &&
      "$1" -m pip install -q --no-index --no-deps --no-build-isolation -e "$root/tools" >"$pip_log" 2>&1
  else
    pip_install "$1" -e "$root/tools[$extras]"
  fi
}
# The tools' requirements (tools/pyproject.toml, with the extras set-up installs) and pyflakes that PYTHON
# does not hold at a version they accept, separated by commas; nothing when it holds them all.
unmet_requirements() {  # PYTHON
  "$1" - "$root/tools/pyproject.toml" "$extras" 2>/dev/null <<'PY' || echo "the packages tools/pyproject.toml names, pyflakes"
import importlib.metadata as md
import sys
try:
    import tomllib
except ImportError:  # Python 3.10: pip's own copy of it
    from pip._vendor import tomli as tomllib
try:
    from packaging.requirements import Requirement
except ImportError:
    from pip._vendor.packaging.requirements import Requirement

pyproject, extras = sys.argv[1], sys.argv[2].split(",")
with open(pyproject, "rb") as f:
    project = tomllib.load(f)["project"]
wanted = [(text, "") for text in project["dependencies"] + ["pyflakes"]]
wanted += [(text, e) for e in extras for text in project.get("optional-dependencies", {}).get(e, [])]


def met(req):
    try:
        version = md.version(req.name)
    except md.PackageNotFoundError:
        return False
    if not req.specifier.contains(version, prereleases=True):
        return False
    for extra in req.extras:  # psycopg[binary]: what its binary extra requires too
        for text in md.requires(req.name) or []:
            r = Requirement(text)
            if r.marker and r.marker.evaluate({"extra": extra}) and not met(r):
                return False
    return True


missing = []
for text, extra in wanted:
    req = Requirement(text)
    if (req.marker is None or req.marker.evaluate({"extra": extra})) and not met(req):
        missing.append(text + (f" ({extra} extra)" if extra else ""))
print(", ".join(missing))
PY
}
# Where PYTHON's gpu-bench-tools come from and where their metadata lies, one a line (the project folder of an
# editable install, else the site folder; then its .dist-info); nothing where it has none.
tools_origin() {  # PYTHON
  "$1" - 2>/dev/null <<'PY' || true
import importlib.metadata as md
import json
import os
import urllib.parse
try:
    dist = md.distribution("gpu-bench-tools")
except md.PackageNotFoundError:
    raise SystemExit
url = json.loads(dist.read_text("direct_url.json") or "{}").get("url", "")
origin = urllib.parse.unquote(urllib.parse.urlparse(url).path) if url.startswith("file:") else str(dist.locate_file(""))
print(os.path.realpath(origin))
print(os.path.realpath(getattr(dist, "_path", "")))
PY
}
# Installs the tools into PYTHON and says so in one line where that replaced another checkout's in the same
# place: their commands then run this checkout's code. One that PYTHON only sees from outside its environment
# (a virtual environment's system site) is left as it was, and so is not said to be replaced.
install_tools_here() {  # PYTHON
  local before after
  before=$(tools_origin "$1")
  install_tools "$1" || return 1
  after=$(tools_origin "$1")
  if [ -n "$before" ] && [ "${before%%$'\n'*}" != "$(realpath "$root/tools")" ] && [ "${before#*$'\n'}" = "${after#*$'\n'}" ]; then
    say "replaced the gpu-bench-tools that $1 had from ${before%%$'\n'*} with this checkout's ($root/tools): its gpu-bench-* commands now run this checkout's code"
  fi
}
venv=$root/.venv
make_venv() {
  [ -x "$venv/bin/python" ] && return 0
  if ! "$system_python" -m venv --system-site-packages "$venv" >"$pip_log" 2>&1; then
    rm -rf "$venv"
    can_apt && apt_install python3-venv || return 1
    "$system_python" -m venv --system-site-packages "$venv" >"$pip_log" 2>&1 || { rm -rf "$venv"; return 1; }
  fi
  echo "*" >"$venv/.gitignore"  # keeps the environment out of git status
}

system_python=$(command -v python3)
py=$system_python
tools_installed=false
if install_tools_here "$py"; then
  tools_installed=true
elif refuses_packages; then
  if make_venv; then
    py=$venv/bin/python
    install_tools_here "$py" && tools_installed=true
  fi
fi
# The interpreter itself, not a launcher such as pyenv's shim, which may pick another one later.
py=$("$py" -c 'import sys; print(sys.executable)')
if [ -z "$wheels" ] && ! "$py" -c 'import pyflakes' >/dev/null 2>&1; then
  pip_install "$py" pyflakes || true
fi
missing=$(unmet_requirements "$py")
# An install that failed this time may have left one of this checkout from an earlier run, which still works.
$tools_installed || "$py" -c 'import gpu_bench_tools, sys; sys.exit(not gpu_bench_tools.__file__.startswith(sys.argv[1]))' \
  "$root/tools/" >/dev/null 2>&1 || missing="the tools themselves (tools/)${missing:+, $missing}"
if [ -n "$missing" ]; then
  lost="the C++ build goes on; the Python tools, their tests and test.sh's check of the Python files may not run"
  if [ -n "$wheels" ]; then
    why=""
    $tools_installed || why=" (pip: $(last_line "$pip_log"))"
    warn "from GPU_BENCH_WHEELS=$wheels, $py still lacks $missing$why: $lost; add their wheels (scripts/wheels.sh, docs/setup.md) and run again"
  elif [ "$index" = silent ]; then
    warn "no package index answers ($(index_silence)), so $py lacks $missing: $lost; to install them offline, make a folder of wheels with scripts/wheels.sh where an index answers and run again with GPU_BENCH_WHEELS=DIR (docs/setup.md)"
  else
    warn "could not install $missing into $py ($(last_line "$pip_log")): $lost"
  fi
fi

# --- NVML header --------------------------------------------------------------------------------------------
# The toolkit's when it has one, else NVIDIA's nvidia-nvml-dev wheel from PyPI (headers only: the library is
# the driver's, loaded at run time), else none. CMake is always told the choice, so that its own search
# through the toolkit's hints cannot find a header GPU_BENCH_CUDA_INCLUDE was set to hide.
step "NVML header" "set GPU_BENCH_NVML_INCLUDE to a folder holding nvml.h, or to none, and run again"
nvml_wheel_dir=$root/.whl/nvml-cuda$cuda_major
nvml_wheel_spec() {
  if [ "${cuda_major:-0}" -ge 13 ]; then echo "nvidia-nvml-dev==$cuda_major.*"; else echo "nvidia-nvml-dev-cu$cuda_major"; fi
}
fetch_nvml_wheel() {
  [ -f "$nvml_wheel_dir/nvml.h" ] && return 0
  [ -n "$cuda_major" ] || { echo "nvcc --version names no release" >"$pip_log"; return 1; }
  index_answers "$py" || { echo "no package index answers: $(index_silence)" >"$pip_log"; return 1; }
  rm -rf "$scratch/wheel" && mkdir -p "$scratch/wheel" "$nvml_wheel_dir"
  "$py" -m pip download -q --no-deps --only-binary=:all: -d "$scratch/wheel" "$(nvml_wheel_spec)" >"$pip_log" 2>&1 || return 1
  "$py" - "$scratch/wheel" "$nvml_wheel_dir" >"$pip_log" 2>&1 <<'EOF'
import glob, os, sys, zipfile
wheel_dir, out_dir = sys.argv[1:]
for wheel in glob.glob(os.path.join(wheel_dir, "*.whl")):
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            if name.endswith("/include/nvml.h"):
                with open(os.path.join(out_dir, "nvml.h"), "wb") as f:
                    f.write(z.read(name))
                sys.exit(0)
sys.exit("the wheel holds no include/nvml.h")
EOF
}
# The toolkit's include folders (or GPU_BENCH_CUDA_INCLUDE instead), then the system's, one a line.
nvml_search_dirs() {
  if [ -n "${GPU_BENCH_CUDA_INCLUDE:-}" ]; then
    echo "$GPU_BENCH_CUDA_INCLUDE"
  else
    echo "$cuda_root/include"
    ls -d "$cuda_root"/targets/*/include 2>/dev/null || true
  fi
  echo /usr/include
  echo /usr/local/include
}
find_nvml_dir() {  # sets nvml_dir
  local d
  while read -r d; do
    if [ -f "$d/nvml.h" ]; then nvml_dir=$(realpath "$d"); return 0; fi
  done < <(nvml_search_dirs)
  if fetch_nvml_wheel; then nvml_dir=$nvml_wheel_dir; return 0; fi
  warn "no nvml.h in the toolkit, and NVIDIA's nvidia-nvml-dev wheel could not be fetched ($(last_line "$pip_log")): the NVML facts read unavailable"
  nvml_dir=none
}
case ${GPU_BENCH_NVML_INCLUDE:-} in
  "") find_nvml_dir ;;
  none) nvml_dir=none ;;
  *) [ -f "$GPU_BENCH_NVML_INCLUDE/nvml.h" ] ||
       fail "GPU_BENCH_NVML_INCLUDE=$GPU_BENCH_NVML_INCLUDE holds no nvml.h; point it at a folder that does, or set it to none, and run again"
     nvml_dir=$(realpath "$GPU_BENCH_NVML_INCLUDE") ;;
esac

# --- configure and build ------------------------------------------------------------------------------------
step "configure" "read $build.configure.log, fix what it names and run again"
configure_log=$build.configure.log
mkdir -p "$(dirname "$build")" 2>/dev/null ||
  fail "cannot create $(dirname "$build"); set BUILD_DIR to a folder you can write and run again"
# CMAKE_ARGS is split on spaces, as documented.
# shellcheck disable=SC2086
if ! cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DGPU_BENCH_WERROR="${GPU_BENCH_WERROR:-OFF}" \
     -DPython3_EXECUTABLE="$py" -DGPU_BENCH_NVML_INCLUDE="$nvml_dir" ${CMAKE_ARGS:-} >"$configure_log" 2>&1; then
  say "configure failed: CMake could not configure $build; fix what its log below names (kept in $configure_log) and run again"
  reported=true
  cat "$configure_log" >&2
  exit 1
fi

step "build" "read $build/build.log, fix what it names and run again"
build_log=$build/build.log
say "building $build (log: $build_log)"
if ! cmake --build "$build" -j "$(nproc)" >"$build_log" 2>&1; then
  say "build failed: the compiler or linker stopped; fix what its log below names (kept in $build_log) and run again"
  reported=true
  cat "$build_log" >&2
  exit 1
fi
[ -x "$build/gpu_bench" ] || fail "the build made no $build/gpu_bench; read $build_log and run again"
echo "$py" >"$build/python"
