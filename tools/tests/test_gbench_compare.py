"""Our JSON also loads in Google Benchmark's own tools/compare.py, where that is installed."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import is_trace, real_results


def find_compare_py():
    candidates = [os.environ.get("GBENCH_COMPARE_PY"), shutil.which("compare.py"),
                  "/usr/share/benchmark/compare.py", "/usr/local/share/benchmark/compare.py"]
    for c in candidates:
        if c and Path(c).is_file() and (Path(c).parent / "gbench").is_dir():
            return Path(c)
    return None


COMPARE_PY = find_compare_py()
pytestmark = pytest.mark.skipif(COMPARE_PY is None, reason="Google Benchmark's compare.py is not installed "
                                "(Debian: apt-get install libbenchmark-tools; or set GBENCH_COMPARE_PY)")


def gbench_compare(a, b):
    return subprocess.run([sys.executable, str(COMPARE_PY), "--no-color", "benchmarks", str(a), str(b)],
                          capture_output=True, text=True, cwd=COMPARE_PY.parent, timeout=120)


@pytest.mark.parametrize("pair", [("base", "slow"), ("gb171", "base"), ("single", "single_slow")])
def test_synthetic_files_load_in_compare_py(data, pair):
    p = gbench_compare(data[pair[0]], data[pair[1]])
    assert p.returncode == 0, p.stderr[-3000:]
    assert "Transfer/dir:h2d/mem:pinned/bytes:1024/manual_time" in p.stdout
    assert "SyncPlacement/op:add/sync:events/manual_time" in p.stdout
    if pair == ("base", "slow"):
        assert "U Test, Repetitions: 5 vs 5" in p.stdout  # repetitions are seen as such
        # compare.py sees the same slowdown: time of pinned host-to-device copies up by about 11%.
        line = next(ln for ln in p.stdout.splitlines()
                    if ln.startswith("Transfer/dir:h2d/mem:pinned/bytes:268435456/manual_time_median "))
        assert float(line.split()[1]) == pytest.approx(1 / 0.9 - 1, abs=0.02)


REAL = [p for p in real_results() if not is_trace(p)]
if REAL:

    @pytest.mark.parametrize("path", REAL, ids=[p.rsplit("/", 1)[-1] for p in REAL])
    def test_real_file_loads_in_compare_py(path):
        p = gbench_compare(path, path)
        assert p.returncode == 0, p.stderr[-3000:]
