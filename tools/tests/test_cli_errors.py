"""Every command line refuses bad input with one line on stderr and exit status 2, never a traceback."""

import subprocess
import sys

import pytest

from conftest import subprocess_env
from gpu_bench_tools.cli import compare as cli_compare, history as cli_history, plot as cli_plot, report as cli_report

BAD = {
    "missing": None,
    "directory": "DIR",
    "empty": b"",
    "not_json": b"this is not json {",
    "truncated": b'{"context": {"gpu_bench.schema": "1"}, "benchmarks": [{"name": "Transfer/dir:h2d',
    "not_gbench": b'{"hello": "world"}',
    "schema": b'{"context": {"gpu_bench.schema": "7"}, "benchmarks": [{"name": "a", "real_time": 1}]}',
    "no_benchmarks": b'{"context": {"gpu_bench.schema": "1"}, "benchmarks": []}',
}
EXPECT = {
    "missing": "no such file", "directory": "is a directory", "empty": "empty file", "not_json": "not JSON",
    "truncated": "truncated JSON", "not_gbench": "not Google Benchmark output", "schema": "gpu_bench.schema '7'",
    "no_benchmarks": "no benchmarks",
}


def bad_file(tmp_path, kind):
    p = tmp_path / f"{kind}.json"
    content = BAD[kind]
    if content == "DIR":
        p.mkdir()
    elif content is not None:
        p.write_bytes(content)
    return str(p)


def commands(good, bad, tmp_path):
    return {
        "compare": (cli_compare.main, [good, bad]),
        "plot": (cli_plot.main, [good, bad, "--out", str(tmp_path / "plots")]),
        "report": (cli_report.main, [bad, "--out", str(tmp_path / "r.html")]),
        "history": (cli_history.main, ["--db", str(tmp_path / "h.sqlite"), "ingest", good, bad]),
    }


@pytest.mark.parametrize("tool", ["compare", "plot", "report", "history"])
@pytest.mark.parametrize("kind", sorted(BAD))
def test_bad_input_is_one_line_and_status_2(tool, kind, tmp_path, data, capsys):
    bad = bad_file(tmp_path, kind)
    main, argv = commands(data["base"], bad, tmp_path)[tool]
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert EXPECT[kind] in lines[0] and "Traceback" not in err
    assert lines[0].startswith(f"gpu-bench-{tool}: error: ")
    assert not (tmp_path / "r.html").exists()
    if tool == "history":
        assert not (tmp_path / "h.sqlite").exists()  # nothing was written before every file was checked


def test_usage_errors_exit_2(capsys, tmp_path, data):
    assert cli_compare.main([data["base"]]) == 2  # one file: nothing to compare with
    assert cli_compare.main(["--format", "xml", data["base"], data["base"]]) == 2
    assert cli_plot.main([data["base"]]) == 2  # --out is required
    assert cli_history.main(["frobnicate"]) == 2
    assert cli_compare.main(["--help"]) == 0
    capsys.readouterr()


@pytest.mark.parametrize("argv,says", [
    (["{base}"], "give at least two files to compare, the first the baseline; got 1"),
    (["--per-side", "2", "{base}", "{base}", "{base}"],
     "--per-side 2 takes 2 files a side, so a multiple of 2, at least 4 (the first 2 are the baseline); got 3"),
])
def test_compare_says_how_many_files_it_needs(argv, says, capsys, data):
    assert cli_compare.main([a.format(base=data["base"]) for a in argv]) == 2
    err = capsys.readouterr().err
    assert err == f"gpu-bench-compare: error: {says}\n"


def test_a_real_process_prints_no_traceback(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"context": {}, "benchmarks": [')
    for module in ("cli.compare", "cli.plot", "cli.report", "cli.history"):
        args = {"cli.compare": [str(bad), str(bad)], "cli.plot": [str(bad), "--out", str(tmp_path)],
                "cli.report": [str(bad), "--out", str(tmp_path / "r.html")],
                "cli.history": ["--db", str(tmp_path / "h.sqlite"), "ingest", str(bad)]}[module]
        p = subprocess.run([sys.executable, "-m", f"gpu_bench_tools.{module}", *args], capture_output=True, text=True,
                           env=subprocess_env(), timeout=60)
        assert p.returncode == 2, (module, p.stderr)
        assert p.stderr.count("\n") == 1 and "truncated JSON" in p.stderr and "Traceback" not in p.stderr


def test_heavy_libraries_load_only_when_needed():
    code = ("import sys, gpu_bench_tools.reading.load, gpu_bench_tools.compare.verdicts, gpu_bench_tools.history.series, "
            "gpu_bench_tools.report.page, gpu_bench_tools.plot, gpu_bench_tools.cli.compare, gpu_bench_tools.cli.plot, "
            "gpu_bench_tools.cli.report, gpu_bench_tools.cli.history\n"
            "heavy = [m for m in ('matplotlib', 'scipy', 'numpy') if m in sys.modules]\n"
            "print(heavy); sys.exit(1 if heavy else 0)")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=subprocess_env(), timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr
