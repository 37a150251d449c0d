"""Shared fixtures: synthetic gpu_bench files written once per session, and the real results if any."""

from __future__ import annotations

import copy
import json
import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
TOOLS = HERE.parent
REPO = TOOLS.parent
sys.path.insert(0, str(HERE))
if str(TOOLS) not in sys.path:
    sys.path.insert(0, str(TOOLS))

import synth  # noqa: E402
from hypothesis import configuration as _hypothesis_configuration  # noqa: E402

# Keep hypothesis' example database and caches in tools/, wherever pytest is started from.
_hypothesis_configuration.set_hypothesis_home_dir(str(TOOLS / ".hypothesis"))

# Cases the slowed run makes slower: pinned host-to-device copies lose 10% of their bandwidth,
# device-to-host small copies take 1.4x as long.
SLOW = {"Transfer/dir:h2d/mem:pinned": 0.9, "SmallCopy/dir:d2h": 1 / 1.4}
# The multi-GPU machine whose GPU 0 and GPU 1 talk over a PCIe switch instead of NVLink.
SLOW_LINK = {(0, 1): "pcie_switch"}


def pytest_configure(config):
    config.addinivalue_line("markers", "floors: the test uses the between-run floors shipped with the tools")
    # .ci/run runs these alone, after the sanitizer build it runs beside the other tests: a busy sibling CPU
    # inflated the comparison's CPU time from 1.5 to 1.8 s to 2.07 s.
    config.addinivalue_line("markers", "cpu_time: the test holds a tool to a budget of its own CPU time")


@pytest.fixture(autouse=True)
def _no_floors_unless_asked(request, tmp_path_factory, monkeypatch):
    """Most tests judge the within-run statistics on synthetic files of one round; the shipped floors (which
    widen every one-round verdict) are tested where a test is marked `floors`."""
    if request.node.get_closest_marker("floors"):
        return
    from gpu_bench_tools.stats import floors

    empty = tmp_path_factory.getbasetemp() / "no_floors.toml"
    if not empty.exists():
        empty.write_text("[floor_pct]\n")
    monkeypatch.setattr(floors, "default_path", lambda: empty)


@pytest.fixture(scope="session")
def data(tmp_path_factory):
    d = tmp_path_factory.mktemp("data")
    files = {}

    def put(name, doc):
        files[name] = synth.write(d / f"{name}.json", doc)

    base = synth.make_run(seed=1)
    put("base", base)
    put("copy", copy.deepcopy(base))
    put("night2", synth.make_run(seed=2))
    put("slow", synth.make_run(seed=2, slow=SLOW))
    put("h200", synth.make_run(gpu="H200", driver="570.86.15", seed=3))
    put("single", synth.make_run(seed=4, reps=1))
    put("single_slow", synth.make_run(seed=5, reps=1, slow=SLOW))
    put("gb171", synth.make_run(seed=6, gb_version="1.7.1"))
    put("plain", synth.make_run(seed=7, schema=None))
    put("timeline", synth.make_timeline())
    # Multi-GPU runs (gpu_bench --device=all): two nights of one 4-GPU machine, the same machine with the
    # link between GPU 0 and GPU 1 on a PCIe switch instead of NVLink, and a 2-GPU machine in two shapes.
    put("multi4", synth.make_multi_run(gpus=4, seed=11))
    put("multi4_night2", synth.make_multi_run(gpus=4, seed=12))
    put("multi4_slow_link", synth.make_multi_run(gpus=4, seed=13, links=SLOW_LINK))
    put("multi2", synth.make_multi_run(gpus=2, seed=14, host="node-p"))
    put("multi2_pcie", synth.make_multi_run(gpus=2, seed=15, link="pcie_switch", host="node-q"))
    fewer = copy.deepcopy(base)
    fewer["benchmarks"] = [e for e in fewer["benchmarks"] if "bytes:1024/" not in e["name"]]
    put("fewer", fewer)
    return files


_UNPACKED: dict[str, Path] = {}


def aa_set(name: str) -> Path:
    """The folder of committed A/A set `name`: results/aa/NAME, or NAME.tar.xz unpacked once into a temporary
    folder (superseded sets are kept as archives, results/README.md)."""
    folder = REPO / "results" / "aa" / name
    if folder.is_dir():
        return folder
    if name not in _UNPACKED:
        import tarfile
        import tempfile

        into = Path(tempfile.mkdtemp(prefix="aa_set_"))
        with tarfile.open(REPO / "results" / "aa" / f"{name}.tar.xz") as archive:
            # Our own archives; the data filter where this python has it (3.11.4 on).
            archive.extractall(into, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
        _UNPACKED[name] = into / name
    return _UNPACKED[name]


def real_results() -> list[str]:
    return sorted(str(p) for p in (REPO / "results").glob("*.json"))


def is_trace(path: str) -> bool:
    try:
        doc = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return False
    return isinstance(doc, dict) and "traceEvents" in doc


@pytest.fixture
def no_colour(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    return None


def run_cli(main, argv, capsys):
    """Run a CLI's main in-process; return (status, stdout, stderr)."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def subprocess_env():
    env = dict(os.environ)
    env["PYTHONPATH"] = str(TOOLS) + os.pathsep + env.get("PYTHONPATH", "")
    return env


# ---------------------------------------------------------------------------------------------
# PostgreSQL: one throwaway server per test session (tests/pgserver.py), a fresh database per test.
# Where no server is installed these tests skip, saying so; CI sets GPU_BENCH_TEST_POSTGRES=require, and
# there a missing server fails them instead.


def _postgres_missing() -> str | None:
    import pgserver

    if pgserver.find_bindir() is None:
        return "no PostgreSQL server installed (Debian: apt-get install postgresql; or set GPU_BENCH_PG_BINDIR)"
    import importlib.util

    if importlib.util.find_spec("psycopg") is None:
        return "no PostgreSQL driver (pip install './tools[fleet]')"
    return None


@pytest.fixture(scope="session")
def pg_server():
    import pgserver

    why = _postgres_missing()
    if why:
        if os.environ.get("GPU_BENCH_TEST_POSTGRES") == "require":
            pytest.fail(f"GPU_BENCH_TEST_POSTGRES=require, but {why}")
        pytest.skip(why)
    server = pgserver.Server(pgserver.find_bindir())
    try:
        server.start()
        yield server
    finally:
        server.stop()


@pytest.fixture
def pg_url(pg_server, request):
    """A URL (with the password) of a new, empty database owned by an ordinary role."""
    import re

    name = "t_" + re.sub(r"[^a-z0-9]+", "_", request.node.name.lower())[:40] + f"_{os.getpid()}_{id(request) % 10**6}"
    return pg_server.url(pg_server.new_database(name))
