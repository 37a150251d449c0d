"""The same checks on every real result in results/ (tests appear as soon as such files exist)."""

import importlib
import itertools
import re
import time

import pytest

from conftest import is_trace, real_results, run_cli
from gpu_bench_tools.cli import compare as cli_compare
from gpu_bench_tools.history import series
from gpu_bench_tools import plot
from gpu_bench_tools.compare.verdicts import compare
from gpu_bench_tools.reading.load import load_file, load_timeline

REAL = real_results()
BENCH = [p for p in REAL if not is_trace(p)]
TRACES = [p for p in REAL if is_trace(p)]
AXIS = re.compile(r"^[a-z][a-z0-9_]*$")
VALUE = re.compile(r"^([a-z0-9][a-z0-9_]*|[0-9]+)$")


def ids(paths):
    return [p.rsplit("/", 1)[-1] for p in paths]


if BENCH:

    @pytest.mark.parametrize("path", BENCH, ids=ids(BENCH))
    def test_real_file_follows_the_contract(path):
        f = load_file(path)
        assert f.schema == "1"
        for key in ("gpu.name", "driver.version", "gpu_bench.version", "benchmark.version", "runtime.version"):
            assert key in f.context, key
        assert all(isinstance(v, str) for k, v in f.context.items() if "." in k and k.split(".")[0] in (
            "gpu", "driver", "runtime", "host", "gpu_bench", "benchmark"))
        assert f.ok_cases(), "no case has a figure"
        for c in f.cases.values():
            assert c.family[:1].isupper(), c.key
            for k, v in c.name.axes:
                assert AXIS.match(k) and VALUE.match(v), (c.key, k, v)
            if c.ok and f.descriptor(c.family).headline == "gbps":
                g = c.center("gbps")
                assert g is not None and 0 < g < 20000, (c.key, g)
                b = c.axis_int("bytes")
                if b and c.samples and c.axis("dir") in ("h2d", "d2h"):  # gbps is bytes / manual time, GB = 1e9 B
                    t_s = c.center("time") * {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[c.time_unit]
                    assert g == pytest.approx(b / t_s / 1e9, rel=0.25), c.key

    @pytest.mark.parametrize("path", BENCH, ids=ids(BENCH))
    def test_real_file_compared_with_itself_is_all_same(path, capsys):
        code, out, err = run_cli(cli_compare.main, ["--one-round", path, path, "--fail-on-regression", "0"], capsys)
        assert code == 0, err
        res = compare([load_file(path), load_file(path)])
        assert res.rows and {r.versus[1].verdict for r in res.rows} <= {"same", "error"}

    @pytest.mark.parametrize("path", BENCH, ids=ids(BENCH))
    def test_real_file_plots(path, tmp_path):
        made = plot.make_plots([load_file(path)], tmp_path, formats=("png",), one_per_kind=True, dpi=60)
        assert made and all(p.points > 0 for p in made)

    @pytest.mark.parametrize("path", BENCH, ids=ids(BENCH))
    def test_real_file_ingests_once(path, tmp_path):
        db = tmp_path / "h.sqlite"
        assert len(series.ingest(db, [path]).added) == 1
        again = series.ingest(db, [path])
        assert not again.added and again.already == [path]


if len(BENCH) >= 2:
    PAIRS = list(itertools.combinations(BENCH, 2))

    @pytest.mark.parametrize("a,b", PAIRS, ids=[f"{x}-vs-{y}" for x, y in zip(ids([p[0] for p in PAIRS]),
                                                                            ids([p[1] for p in PAIRS]))])
    def test_real_pair_compares_quickly(a, b, capsys):
        importlib.import_module("scipy.stats")  # the interpreter's one-off import, not the comparison

        t0 = time.perf_counter()
        code, out, err = run_cli(cli_compare.main, ["--one-round", a, b], capsys)
        assert code == 0, err
        assert time.perf_counter() - t0 < 2.0


if TRACES:

    @pytest.mark.parametrize("path", TRACES, ids=ids(TRACES))
    def test_real_timeline_draws(path, tmp_path):
        made = plot.make_plots([load_timeline(path)], tmp_path, formats=("png",), dpi=60)
        assert made and all(p.kind == "timeline" for p in made)
