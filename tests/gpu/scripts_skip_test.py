#!/usr/bin/env python3
"""Host-only test that every GPU test script reaches gpu_bench: run where gpu_bench finds no GPU (a stand-in
that says so, as gpu_bench does, and exits 77 as the bare programs do), each script must exit with CTest's
skip code 77. A script that exits 0 without running anything would pass on a GPU machine while testing
nothing. Reads the scripts and their arguments from tests/CMakeLists.txt's gpu_python_test lines.

usage: scripts_skip_test.py
"""
import os
import re
import stat
import subprocess
import sys
import tempfile

from gpu_common import SKIP

HERE = os.path.dirname(os.path.abspath(__file__))
CMAKE_LISTS = os.path.join(HERE, os.pardir, "CMakeLists.txt")
STAND_IN = "#!/bin/sh\necho 'gpu_bench: no CUDA GPU is visible' >&2\nexit 77\n"


def gpu_tests():
    """(name, script, its arguments after gpu_bench's) of each gpu_python_test line."""
    with open(CMAKE_LISTS) as f:
        for m in re.finditer(r"^gpu_python_test\((\S+) (\S+) \d+((?: \S+)*)\)$", f.read(), re.M):
            yield m.group(1), m.group(2), m.group(3).split()


def main():
    tests = list(gpu_tests())
    if len(tests) < 10:
        print(f"FAIL: found {len(tests)} gpu_python_test lines in {CMAKE_LISTS}, expected the GPU tests")
        return 1
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        exe = os.path.join(tmp, "gpu_bench")
        with open(exe, "w") as f:
            f.write(STAND_IN)
        os.chmod(exe, stat.S_IRWXU)
        for name, script, extra in tests:
            # A built program's argument gets the stand-in; an output path, one in the folder.
            args = [exe, *(exe if a.startswith("$<TARGET_FILE:") else os.path.join(tmp, f"{name}_{k}.json")
                           for k, a in enumerate(extra))]
            r = subprocess.run([sys.executable, os.path.join(HERE, script), *args], capture_output=True, text=True,
                               timeout=120, cwd=tmp)
            print(f"{name}: exit {r.returncode}")
            if r.returncode != SKIP:
                failures.append(f"{name} ({script}) exited {r.returncode} where no GPU is visible, not {SKIP}: "
                                f"{(r.stdout + r.stderr).strip()[-300:]}")
    for f in failures:
        print(f"FAIL: {f}")
    if not failures:
        print(f"ok: all {len(tests)} GPU test scripts skip where no GPU is visible")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
