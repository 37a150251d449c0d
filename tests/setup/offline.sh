#!/usr/bin/env bash
# scripts/setup.sh where no package index answers (PIP_INDEX_URL at a closed port on 127.0.0.1), with a
# python3 that holds none of the tools' packages first on PATH: it must find that out at once, say in one
# line what it could not install and how to install it offline, and go on to the C++ steps; with
# GPU_BENCH_WHEELS it installs from that folder of wheels, or says in one line what the folder lacks.
# Runs on a copy of the set-up script and the tools in a scratch folder, and stops each set-up at the
# configure step (an unknown CMake generator), so no build is made.
# Usage: offline.sh PYTHON (a python3 that holds every package the tools need, as the main build's does)
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
full_python=${1:?usage: offline.sh PYTHON}

say() { echo "offline: $*"; }
fail() { echo "offline: FAIL: $*" >&2; exit 1; }

tmp=$(mktemp -d) || fail "mktemp could not make a scratch folder (TMPDIR ${TMPDIR:-/tmp})"
trap 'rm -rf "$tmp"' EXIT
root=$tmp/root
mkdir -p "$root/scripts" "$root/tools"
cp "$repo/scripts/setup.sh" "$root/scripts/"
cp -r "$repo/tools/pyproject.toml" "$repo/tools/README.md" "$repo/tools/gpu_bench_tools" "$root/tools/"

# Nothing of this machine's pip settings or of the test run's set-up.
while read -r name; do unset "$name"; done < <(env | sed -n 's/^\(PIP_[A-Z_]*\)=.*/\1/p')
unset BUILD_DIR CMAKE_ARGS GPU_BENCH_WERROR GPU_BENCH_SETUP_TESTS GPU_BENCH_TEST_SERVICES GPU_BENCH_WHEELS \
  GPU_BENCH_CUDA_INCLUDE VIRTUAL_ENV PYTHONPATH PYTHONHOME
port=$("$full_python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
export PIP_INDEX_URL=http://127.0.0.1:$port/simple PIP_CONFIG_FILE=/dev/null PIP_DISABLE_PIP_VERSION_CHECK=1
export NO_PROXY=127.0.0.1 no_proxy=127.0.0.1 GPU_BENCH_NVML_INCLUDE=none CMAKE_ARGS=-GNo_such_generator
export BUILD_DIR=$tmp/build

python3 -m venv "$tmp/bare" || fail "python3 -m venv failed (Debian: install python3-venv)"
"$tmp/bare/bin/python3" -c 'import numpy' 2>/dev/null && fail "the bare virtual environment sees numpy"

# Runs the set-up with PYTHON_DIR first on PATH; it must reach the configure step, which fails on purpose,
# after the lines of stderr in $tmp/setup.err before it.
setup_to_configure() {  # WHAT PYTHON_DIR [ENV=VALUE...]
  local what=$1 dir=$2 rc=0 started=$SECONDS; shift 2
  env PATH="$dir:$PATH" "$@" "$root/scripts/setup.sh" >/dev/null 2>"$tmp/setup.all" || rc=$?
  took=$((SECONDS - started))
  grep -q '^setup: configure failed: ' "$tmp/setup.all" ||
    fail "$what: setup.sh did not go on to the configure step (exit $rc); it said:"$'\n'"$(cat "$tmp/setup.all")"
  sed '/^setup: configure failed: /,$d' "$tmp/setup.all" >"$tmp/setup.err"
}
one_warning() {  # WHAT: the one line before the configure step, a warning
  local lines
  lines=$(grep -c . "$tmp/setup.err" || true)
  [ "$lines" = 1 ] && grep -q '^setup: warning: ' "$tmp/setup.err" ||
    fail "$1: expected one warning line before the configure step, got $lines:"$'\n'"$(cat "$tmp/setup.err")"
}
says() {  # WHAT TEXT...: the warning holds each TEXT
  local what=$1 text; shift
  for text in "$@"; do
    grep -qF -- "$text" "$tmp/setup.err" || fail "$what: the line does not say '$text':"$'\n'"$(cat "$tmp/setup.err")"
  done
}

# 1. No index, no wheels: one line, naming what is missing and GPU_BENCH_WHEELS, found out quickly.
setup_to_configure "no index" "$tmp/bare/bin"
one_warning "no index"
says "no index" "no package index answers" "SQLAlchemy" "pyflakes" "GPU_BENCH_WHEELS=DIR" \
  "scripts/wheels.sh" "docs/setup.md"
[ "$took" -lt 60 ] || fail "no index: set-up took $took s to reach the configure step"
say "no index ($took s): $(cat "$tmp/setup.err")"

# A folder of wheels: here one small wheel of a package of its own (the tools' dependencies cannot be fetched
# in a test), installed as it is.
mkdir "$tmp/wheels"
"$full_python" - "$tmp/wheels" <<'PY' || fail "could not make a wheel"
import base64, hashlib, os, sys, zipfile
name, version = "gpu_bench_offline_probe", "1.0"
info = f"{name}-{version}.dist-info"
files = {f"{name}/__init__.py": "",
         f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
         f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: offline.sh\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
record = "".join(f"{path},sha256={base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b'=').decode()},"
                 f"{len(text.encode())}\n" for path, text in files.items()) + f"{info}/RECORD,,\n"
with zipfile.ZipFile(os.path.join(sys.argv[1], f"{name}-{version}-py3-none-any.whl"), "w") as z:
    for path, text in {**files, f"{info}/RECORD": record}.items():
        z.writestr(path, text)
PY

# 2. A folder of wheels that lacks the tools' dependencies: its wheel goes in, and one line names the rest.
setup_to_configure "a folder without the dependencies" "$tmp/bare/bin" GPU_BENCH_WHEELS="$tmp/wheels"
one_warning "a folder without the dependencies"
says "a folder without the dependencies" "GPU_BENCH_WHEELS=$tmp/wheels" "numpy" "pyflakes" \
  "scripts/wheels.sh"
grep -q "no package index" "$tmp/setup.err" && fail "a folder of wheels: the line speaks of the index"
"$tmp/bare/bin/python3" -c 'import gpu_bench_offline_probe' ||
  fail "a folder without the dependencies: its wheel was not installed"
say "a folder without the dependencies: $(cat "$tmp/setup.err")"

# 3. The same folder, into a python that holds the rest: no line, and the tools come from this copy. The
# tools' editable install needs a setuptools that builds wheels (70.1 and later, or the wheel package); where
# this python's cannot and no index can bring one, the line must name the tools alone, nothing they need.
# Only where this python holds the rest: a machine whose python lacks some of the tools' dependencies (and
# has no index or wheels to bring them) cannot show it, and says so.
lacking=$("$full_python" - <<'PY'
import importlib.util
need = ("numpy", "scipy", "matplotlib", "prometheus_client", "sqlalchemy", "pyflakes", "pytest", "hypothesis", "psycopg")
print(" ".join(m for m in need if importlib.util.find_spec(m) is None))
PY
)
if [ -n "$lacking" ]; then
  say "a folder of wheels into a python that holds the rest: not shown here, $full_python lacks $lacking"
else
  "$full_python" -m venv --system-site-packages "$tmp/full" || fail "python -m venv failed"
  # Where that python is a virtual environment itself (a GPU machine's /opt/torch/.venv), --system-site-packages
  # reaches its base interpreter's packages, not its own: its own are added by a .pth file.
  own=$("$full_python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  "$tmp/full/bin/python3" -c 'import sysconfig, sys; open(sysconfig.get_paths()["purelib"] + "/full_python.pth", "w").write(sys.argv[1] + "\n")' "$own"
  setup_to_configure "a folder of wheels" "$tmp/full/bin" GPU_BENCH_WHEELS="$tmp/wheels"
  "$tmp/full/bin/python3" -c 'import gpu_bench_offline_probe' || fail "a folder of wheels: its wheel was not installed"
  if "$tmp/full/bin/python3" -c 'import setuptools.command.bdist_wheel' 2>/dev/null ||
     "$tmp/full/bin/python3" -c 'import wheel' 2>/dev/null; then
    [ ! -s "$tmp/setup.err" ] || fail "a folder of wheels: set-up said:"$'\n'"$(cat "$tmp/setup.err")"
    "$tmp/full/bin/python3" -c 'import gpu_bench_tools, sys
sys.exit(not gpu_bench_tools.__file__.startswith(sys.argv[1]))' "$root/tools" ||
      fail "a folder of wheels: gpu_bench_tools does not come from $root/tools"
    "$tmp/full/bin/gpu-bench-gate" --help >/dev/null || fail "a folder of wheels: gpu-bench-gate --help failed"
    say "a folder of wheels: installed, no line"
  else
    one_warning "a folder of wheels"
    grep -q "still lacks the tools themselves (tools/) (pip: " "$tmp/setup.err" ||
      fail "a folder of wheels: the line names more than the tools:"$'\n'"$(cat "$tmp/setup.err")"
    say "a folder of wheels: this setuptools cannot build the tools' editable wheel offline; the line names the tools alone"
  fi
fi

# 4. GPU_BENCH_WHEELS naming no folder of wheels: one failure line, before any build step.
rc=0
env PATH="$tmp/bare/bin:$PATH" GPU_BENCH_WHEELS="$tmp/no-such-folder" "$root/scripts/setup.sh" >/dev/null \
  2>"$tmp/fail.err" || rc=$?
[ "$rc" -ne 0 ] && [ "$(wc -l <"$tmp/fail.err")" -eq 1 ] &&
  grep -q "^setup: Python packages failed: GPU_BENCH_WHEELS=$tmp/no-such-folder is not a folder holding wheels" "$tmp/fail.err" ||
  fail "a GPU_BENCH_WHEELS without wheels: exit $rc, said:"$'\n'"$(cat "$tmp/fail.err")"
say "no folder: $(cat "$tmp/fail.err")"
say "passed"
